"""The shipped fixtures are exactly what the generators in the repo produce."""

import inspect

import pytest

import toolbench
from toolbench.core.tasks import fixture_file
from toolbench.taskgen import generated_tasks, load_generators


@pytest.mark.parametrize("slug", [spec.fixture_slug for spec in generated_tasks()])
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


@pytest.mark.parametrize("task", [spec.name for spec in toolbench.TASKS if spec.name != "Tabletop"])
def test_no_demonstration_is_a_test_tasks_answer(task):
    """A model that copies its prompt's closest example must not be handed a test answer. (Tabletop
    is left out: two of its seen instruction types name no object, so their one program is both
    their demonstration and their answer; ``toolbench audit`` allows for that.)"""

    def answers(t):  # RapidAPI's references are one answer's actions; elsewhere each is an answer
        return {tuple(t.references)} if task == "RapidAPI" else set(t.references)

    tests = toolbench.load_tasks(task, "test")
    taken = {answer for t in tests for answer in answers(t)}
    prompts = {t.prompt for t in tests}
    demos = toolbench.load_tasks(task, "demo")
    assert not [d.id for d in demos if answers(d) & taken or d.prompt in prompts]


def test_no_appbench_training_task_has_a_test_plan():
    import toolbench

    plans = {t.references[0] for t in toolbench.load_tasks("AppBench", "test")}
    assert not [t.id for t in toolbench.load_tasks("AppBench", "train") if t.references[0] in plans]
