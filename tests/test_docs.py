"""The README is a short front door, and the docs site says what the package does.

The README stays under 250 lines, starts with ``make demo`` and ``make test`` and links only to files
that exist; every env of the catalog has a docs page that shows a picture; the CLI reference is what
each command's ``--help`` prints; and ``mkdocs build --strict`` builds the site without a warning.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import toolbench

from .conftest import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


def load_hooks() -> ModuleType:
    """docs/hooks.py, the MkDocs hooks that write the CLI reference at build time."""
    spec = importlib.util.spec_from_file_location("toolbench_docs_hooks", DOCS / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def env_page(name: str) -> Path:
    return DOCS / "envs" / f"{name.lower()}.md"


def local_links(text: str) -> list[str]:
    """Links to files of the repository (no web addresses, no anchors within the page)."""
    return [target for target in LINK.findall(text) if not re.match(r"[a-z]+:", target) and not target.startswith("#")]


def test_readme_is_short_and_starts_with_make_demo_and_make_test():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < 250, f"README.md has {len(lines)} lines; the rest belongs in docs/"
    body = [line for line in lines[1:] if line.strip()]
    assert lines[0].startswith("# ") and body[0] == "```bash"
    assert body[1].startswith("make demo") and body[2].startswith("make test") and body[3] == "```"


def test_readme_links_point_to_files_that_exist():
    links = local_links(README.read_text(encoding="utf-8"))
    assert any(link.startswith("docs/") for link in links)
    missing = [link for link in links if not (ROOT / link.split("#", 1)[0]).exists()]
    assert not missing, f"README.md links to missing files: {missing}"


def test_readme_links_every_env_page():
    links = {link.split("#", 1)[0] for link in local_links(README.read_text(encoding="utf-8"))}
    for spec in toolbench.TASKS:
        assert env_page(spec.name).relative_to(ROOT).as_posix() in links, (
            f"the README's table has no link to {spec.name}'s page"
        )


@pytest.mark.parametrize("name", [spec.name for spec in toolbench.TASKS])
def test_every_env_has_a_page_with_a_picture(name):
    page = env_page(name)
    assert page.is_file(), f"{name} has no page {page.relative_to(ROOT)}"
    text = page.read_text(encoding="utf-8")
    assert f"toolbench/{name}-v0" in text and f"<!-- env-docstring: {name} -->" in text
    pictures = [(page.parent / target).resolve() for target in IMAGE.findall(text)]
    ours = [picture for picture in pictures if picture.parent == (DOCS / "images").resolve()]
    assert ours, f"{page.relative_to(ROOT)} shows no picture from docs/images/"
    for picture in ours:
        assert picture.is_file(), f"{page.relative_to(ROOT)} shows {picture.name}, which does not exist"
        assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert picture.stat().st_size < 300 * 1024, f"{picture.name} is over 300 KB"


def test_the_env_docstring_reference_names_the_catalog_class():
    hooks = load_hooks()
    for spec in toolbench.TASKS:
        module, _, name = spec.entry_point.partition(":")
        assert hooks.env_reference(spec.name).startswith(f"::: {module}.{name}\n")


def _commands(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command and sub-command of the parser, as the words after ``toolbench``."""
    found = [words]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _commands(sub, (*words, name))
    return found


HELP_SCRIPT = """
import contextlib, io, json, sys
from toolbench.cli import main
printed = {}
for words in json.loads(sys.argv[1]):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main([*words, "--help"])
        except SystemExit:
            pass
    printed[" ".join(["toolbench", *words])] = out.getvalue()
print(json.dumps(printed))
"""


def test_the_cli_reference_is_each_commands_help():
    from toolbench.cli import build_parser

    hooks = load_hooks()
    assert hooks.CLI_MARKER in (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    page = hooks.help_blocks(hooks.cli_markdown())
    commands = _commands(build_parser())
    assert {" ".join(["toolbench", *words]) for words in commands} == set(page)
    assert {"toolbench", "toolbench eval", "toolbench data align", "toolbench serve"} <= set(page)
    # What the command prints for --help, in a process of its own, at the width the page is written for
    env = {**os.environ, "COLUMNS": str(hooks.HELP_COLUMNS)}
    done = subprocess.run(
        [sys.executable, "-c", HELP_SCRIPT, json.dumps(commands)], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    for title, text in page.items():
        assert printed[title].startswith("usage: "), title
        assert text == printed[title].rstrip("\n"), f"the CLI reference's {title!r} differs from its --help"


def test_the_cli_reference_follows_a_changed_help(monkeypatch):
    hooks = load_hooks()
    parser = argparse.ArgumentParser(prog="toolbench")
    sub = parser.add_subparsers().add_parser("list", help="every env id")
    sub.add_argument("--flag", help="a flag that appeared")
    monkeypatch.setattr(hooks, "build_parser", lambda: parser)
    page = hooks.help_blocks(hooks.cli_markdown())
    assert set(page) == {"toolbench", "toolbench list"}
    assert "a flag that appeared" in page["toolbench list"]


def test_the_api_reference_has_a_page_per_package():
    hooks = load_hooks()
    packages = hooks.public_packages()
    on_disk = {path.parent.name for path in (ROOT / "toolbench").glob("*/__init__.py")} - {"fixtures"}
    assert set(packages) == {"toolbench", *(f"toolbench.{name}" for name in on_disk)}
    page = hooks.api_page("toolbench.integrations")
    assert "::: toolbench.integrations.session" in page
    assert re.search(r"\| `toolbench.integrations.trl` \|.*\| `trl` \|", page), "the TRL adapter is not marked"


@pytest.mark.slow
def test_the_site_builds_without_a_warning(tmp_path):
    missing = [name for name in ("mkdocs", "material", "mkdocstrings") if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"the docs extra is not installed ({', '.join(missing)}): pip install -e '.[docs]'")
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stderr
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "toolbench serve" in cli and "--max-sessions" in cli
    for spec in toolbench.TASKS:
        html = (site / "envs" / spec.name.lower() / "index.html").read_text(encoding="utf-8")
        assert f"images/{spec.name.lower()}.png" in html
        assert "Action Space" in html, f"{spec.name}'s page lacks its env's docstring"
        assert (site / "images" / f"{spec.name.lower()}.png").is_file()
    assert "ToolEnv" in (site / "reference" / "api" / "core" / "index.html").read_text(encoding="utf-8")
    assert (site / "examples" / "learning_curve.png").is_file()
