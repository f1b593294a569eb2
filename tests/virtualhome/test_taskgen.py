"""The shipped VirtualHome task sets (toolbench/taskgen/virtualhome.py): sizes, distinct activities,
references that run in the symbolic home and reach their goals, natural and varied programs."""

import json

import pytest

from toolbench.core.tasks import fixture_file
from toolbench.mock_services.virtualhome import World, build_home, parse_program
from toolbench.mock_services.virtualhome.objects import BODY_PARTS, ROOMS
from toolbench.taskgen import virtualhome

SPLITS = ("test", "demo", "train", "unseen")
NAVIGATION = {"WalkTo", "RunTo", "Find"}


@pytest.fixture(scope="module")
def records():
    return {
        split: [json.loads(line) for line in fixture_file("virtualhome", f"{split}.jsonl").read_text().splitlines()]
        for split in SPLITS
    }


def test_split_sizes(records):
    assert len(records["test"]) == 100
    assert all(1 <= len(r["completion"]) <= 3 for r in records["test"])
    assert len(records["demo"]) == 83
    assert 450 <= sum(len(r["completion"]) for r in records["demo"]) <= 550
    assert len(records["train"]) >= 1000
    assert all(1 <= len(r["completion"]) <= 2 for r in records["train"])
    assert len(records["unseen"]) >= 100
    assert all(1 <= len(r["completion"]) <= 3 for r in records["unseen"])


def test_record_shape(records):
    for split in SPLITS:
        for index, record in enumerate(records[split]):
            assert record["id"] == f"virtualhome-{split}-{index:04d}"
            grown = {"difficulty"} if split in ("train", "unseen") else set()
            assert set(record) == {
                "id",
                "category",
                "template",
                "prompt",
                "completion",
                "home",
                "start",
                "goals",
                *grown,
            }
            assert 0 <= record["home"] <= 4 and record["goals"] and record["prompt"]
            assert len(set(record["completion"])) == len(record["completion"])  # no duplicate solutions


def test_activities_are_distinct_across_splits(records):
    names = [r["prompt"] for split in SPLITS for r in records[split]]
    assert len(names) == len(set(names))
    programs = [p for split in SPLITS for r in records[split] for p in r["completion"]]
    assert len(programs) == len(set(programs))  # no solution is shared by two activities
    assert len({r["category"] for split in ("test", "demo") for r in records[split]}) >= 30


def test_every_reference_runs_and_reaches_the_goals(records):
    for split in SPLITS:
        for record in records[split]:
            start = World(build_home(record["home"]), record["start"])
            assert not [g for g in record["goals"] if start.holds(g)], record["id"]  # nothing is already done
            for program in record["completion"]:
                world = World(build_home(record["home"]), record["start"])
                for call in parse_program(program):
                    assert call.executable, (record["id"], call.line)
                    result = world.do(call.action, call.args)
                    assert result.ok, (record["id"], call.line, result.message)
                assert all(world.holds(goal) for goal in record["goals"]), record["id"]


def test_programs_follow_the_language_planner_patterns(records):
    """Every object is found or walked to before it is used (Grab right after finding it, mostly),
    and programs open with walking or finding, as people wrote them."""
    starts = 0
    total = 0
    for split in SPLITS:
        for record in records[split]:
            for program in record["completion"]:
                calls = parse_program(program)
                total += 1
                starts += calls[0].action in NAVIGATION
                bound = set()
                for call in calls:
                    if call.action in NAVIGATION:
                        bound.add(call.args[0])
                        continue
                    for arg in call.args:
                        assert arg in bound or arg in BODY_PARTS or arg in ROOMS, (record["id"], call.line)
                assert len(calls) <= 36
    assert starts / total > 0.95


def test_programs_vary(records):
    demo = records["demo"]
    assert sum(len(r["completion"]) >= 2 for r in demo) >= 0.9 * len(demo)
    varied = 0
    for record in demo:
        lines = [set(program.splitlines()) for program in record["completion"]]
        # two solutions differ in more than one line: other steps, not just another word
        varied += any(len(a ^ b) > 2 for a in lines for b in lines)
    assert varied >= 0.9 * len(demo)
    actions = {call.action for r in demo for p in r["completion"] for call in parse_program(p)}
    assert {"WalkTo", "RunTo", "Find", "TurnTo", "LookAt", "Open", "Close", "Grab", "PutIn", "Put"} <= actions


def clear_caches():
    for function in (
        virtualhome.splits,
        virtualhome.all_tasks,
        virtualhome._train_pool,
        virtualhome._held_out_activities,
        virtualhome._shipped_programs,
        virtualhome._shipped_unseen_prompts,
    ):
        function.cache_clear()


def test_generation_is_deterministic_and_matches_the_fixtures():
    clear_caches()
    first = virtualhome.generate()
    clear_caches()
    assert virtualhome.generate() == first
    for name, content in first.items():
        assert fixture_file("virtualhome", name).read_text(encoding="utf-8") == content, name


def test_alignment_records_are_training_activities(records):
    held_out = {r["prompt"] for split in ("test", "demo") for r in records[split]}
    fresh = virtualhome.alignment_records(40, "t")
    assert len(fresh) == 40
    assert not {r["prompt"] for r in fresh} & held_out
    assert all(r["completion"] and set(r) == set(records["train"][0]) for r in fresh)
