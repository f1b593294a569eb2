"""The shipped fixtures are exactly what the generators in the repo produce."""

import inspect

import pytest

from toolbench.core.tasks import fixture_file
from toolbench.taskgen import MODULES, load_generators


@pytest.mark.parametrize("slug", MODULES)
def test_fixtures_are_reproducible(slug):
    generate = load_generators()[slug]
    # Tabletop's generator also verifies every reference in the simulator (minutes); that check is
    # the oracle test in tests/tabletop, so here it only re-samples.
    files = generate(verify=False) if "verify" in inspect.signature(generate).parameters else generate()
    for name, content in files.items():
        assert fixture_file(slug, name).read_text(encoding="utf-8") == content, name


def test_no_reference_data_file_is_copied(refdata):
    import hashlib

    def digests(folder):
        files = [p for p in folder.rglob("*") if p.is_file() and p.stat().st_size]
        return {hashlib.sha256(p.read_bytes()).hexdigest(): p for p in files}

    reference = digests(refdata)
    shipped = digests(fixture_file("openweather", "").parent)
    assert not [path for digest, path in shipped.items() if digest in reference]
