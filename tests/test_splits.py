"""Every env's ``train`` and ``unseen`` splits: their sizes, their generators, and what they share.

``unseen`` holds templates (and, where the env has them, activities, products, app combinations,
instruction types, tools or categories: its task set module's ``HELD_OUT_KEYS``) that no demo,
train or alignment task uses; ``train`` holds no test or unseen prompt, nor a near duplicate of one.
"""

import importlib

import pytest

from toolbench.catalog import TASKS
from toolbench.core.tasks import fixture_file, read_records
from toolbench.taskgen import SHIPPED_SIZES, load_aligners, load_split_makers, near_duplicates

SPECS = {spec.name: spec for spec in TASKS}


def records(spec, split):
    parts = dict(spec.composite).get(split, (split,))
    return [record for part in parts for record in read_records(fixture_file(spec.fixture_slug, f"{part}.jsonl"))]


def prompt(record):
    """A record's prompt (RapidAPI's records, as ToolLLM's, call it the query)."""
    return record.get("prompt", record.get("query"))


def module_of(spec):
    return importlib.import_module(f"toolbench.taskgen.{spec.fixture_slug}")


def values(record_list, key):
    """Every value of ``key`` in the records (a list value counts each of its items)."""
    found = set()
    for record in record_list:
        value = record.get(key)
        found.update(value if isinstance(value, list) else [value])
    return found - {None}


@pytest.mark.parametrize("name", SPECS)
def test_train_and_unseen_are_shipped_at_their_sizes(name):
    spec = SPECS[name]
    assert {"test", "demo", "train", "unseen"} <= set(spec.splits) and spec.splits == spec.env_class().splits
    for split, least in SHIPPED_SIZES.items():
        assert spec.count(split) >= least, split


@pytest.mark.parametrize("name", SPECS)
def test_every_record_names_its_template(name):
    spec = SPECS[name]
    for split in ("test", "demo", "train", "unseen"):
        missing = [r.get("id") for r in records(spec, split) if not isinstance(r.get("template"), str)]
        assert not missing, (split, missing[:5])


@pytest.mark.parametrize("name", SPECS)
def test_unseen_shares_no_template_or_held_out_value(name):
    """No demo, train or alignment task shares an unseen template or held-out value; no test task
    shares an unseen template either (RapidAPI's category test sets share its categories, as
    ToolLLM holds those out of training, not out of testing)."""
    spec = SPECS[name]
    unseen = records(spec, "unseen")
    others = {split: records(spec, split) for split in ("demo", "train")}
    aligner = load_aligners().get(spec.fixture_slug)
    if aligner is not None:
        others["align"] = aligner(300, "disjointness")
    for key in ("template", *getattr(module_of(spec), "HELD_OUT_KEYS", ())):
        held_out = values(unseen, key)
        assert held_out and all(key in r for r in unseen), key
        for split, other in others.items():
            assert all(key in r for r in other), (key, split)  # a check that cannot pass for want of the key
            assert not held_out & values(other, key), (key, split, sorted(held_out & values(other, key))[:5])
    assert not values(unseen, "template") & values(records(spec, "test"), "template")


def test_near_duplicates_are_one_value_apart_not_one_name_apart():
    springfield = "Find the coordinates of up to 3 places called Springfield."
    near = near_duplicates([springfield, "What is the weather in Lyon now?"], [springfield.replace("3", "4")])
    assert near == {0}
    assert near_duplicates(["What is the weather in Lyon now?"], ["What is the weather in Paris now?"]) == set()
    assert near_duplicates(["WHAT is the weather, in Paris now"], ["what is the weather in paris now?"]) == {0}


@pytest.mark.parametrize("name", SPECS)
def test_train_holds_no_test_or_unseen_prompt_nor_a_near_duplicate(name):
    spec = SPECS[name]
    train = [prompt(r) for r in records(spec, "train")]
    held = [prompt(r) for split in ("test", "unseen") for r in records(spec, split)]
    assert not near_duplicates(train, held)
    unseen = [prompt(r) for r in records(spec, "unseen")]
    assert not near_duplicates(unseen, [prompt(r) for split in ("test", "demo") for r in records(spec, split)])


@pytest.mark.parametrize("name", SPECS)
def test_a_trainer_can_ask_for_more(name):
    spec = SPECS[name]
    make = load_split_makers()[spec.fixture_slug]
    for split in ("train", "unseen"):
        first, again, other = make(split, 12, 7), make(split, 12, 7), make(split, 12, 8)
        assert len(first) == 12 and first == again and first != other
        assert all(isinstance(r.get("template"), str) for r in first)
        if getattr(module_of(spec), "HAS_DIFFICULTY", False):
            assert all(isinstance(r.get("difficulty"), int) for r in first)
    # A grown train split holds no held-out prompt either.
    grown = [prompt(r) for r in make("train", 200, 11)]
    held = [prompt(r) for split in ("test", "unseen") for r in records(spec, split)]
    assert not near_duplicates(grown, held)


@pytest.mark.parametrize("name", SPECS)
@pytest.mark.parametrize("split", ["train", "unseen"])
def test_the_oracle_solves_a_sample(name, split):
    import gymnasium as gym

    from tests.episodes import play

    spec = SPECS[name]
    for mode in spec.modes:
        env = gym.make(spec.env_id, split=split, mode=mode, disable_env_checker=True).unwrapped
        try:
            tasks = env.tasks
            for task in [tasks[i * len(tasks) // 4] for i in range(4)]:
                _, reward, terminated, truncated, info = play(env, task.id, env.oracle_actions(task))
                assert info.get("success") is True, (mode, task.id, reward, info)
        finally:
            env.close()
