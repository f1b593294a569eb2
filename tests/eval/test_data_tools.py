"""toolbench data align: alignment samples (ToolBench appendix C)."""

import json

import pytest

import toolbench
from tests.episodes import play
from toolbench.cli import main
from toolbench.core.tasks import tasks_from_records
from toolbench.taskgen import load_aligners
from toolbench.taskgen.align import FROM_DEMONSTRATIONS, TABLE9, default_samples


@pytest.mark.parametrize("spec", toolbench.TASKS, ids=lambda spec: spec.name)
def test_alignment_goals_are_playable_and_never_test_tasks(spec, tmp_path):
    records = load_aligners()[spec.fixture_slug](6, "check")
    env = spec.env_class()(tasks=tasks_from_records(records, "align"))
    # Tasks whose samples are their demonstrations (appendix C.1) hold out the test split; the others
    # hold out every split, so no generated goal restates a demonstration either.
    splits = ("test",) if spec.name in FROM_DEMONSTRATIONS else spec.splits
    held_out = {t.prompt for split in splits for t in toolbench.load_tasks(spec.name, split)}
    out = tmp_path / "align.jsonl"
    assert main(["data", "align", "--task", spec.name, "--samples", "30", "--out", str(out)]) == 0
    samples = [json.loads(line) for line in out.read_text().splitlines()]
    goals = [goal for sample in samples for goal in sample["goals"]]
    actions = {action for sample in samples for action in sample["actions"]}
    held_out_actions = {r for split in splits for t in toolbench.load_tasks(spec.name, split) for r in t.references}
    assert len(goals) == 90 and not set(goals) & held_out and not actions & held_out_actions
    for task in env.tasks:
        *_, info = play(env, task.id, env.oracle_actions(task))
        assert info["success"], (task.prompt, info["error"])
    env.close()


def test_data_align_writes_all_shot_samples(tmp_path, capsys):
    out = tmp_path / "align.jsonl"
    assert main(["data", "align", "--task", "TripBooking", "--samples", "40", "--shots", "4", "--out", str(out)]) == 0
    samples = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(samples) == 40 and len({s["id"] for s in samples}) == 40
    first = samples[0]
    assert len(first["goals"]) == len(first["actions"]) == 4
    text = first["text"]
    assert text.startswith("# ") and "API.set_origin(" in text.split("-------------")[0]  # the docs come first
    assert text.count("Task: ") == 4 and text.count("Action:\n") == 4
    goals = [g for s in samples for g in s["goals"]]
    assert len(set(goals)) == len(goals)
    again = tmp_path / "again.jsonl"
    assert main(["data", "align", "--task", "TripBooking", "--samples", "40", "--shots", "4", "--out", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()  # deterministic
    other = tmp_path / "other.jsonl"
    assert (
        main(
            [
                "data",
                "align",
                "--task",
                "TripBooking",
                "--samples",
                "40",
                "--shots",
                "4",
                "--seed",
                "1",
                "--out",
                str(other),
            ]
        )
        == 0
    )
    assert other.read_bytes() != out.read_bytes()


def test_data_align_refuses_what_it_cannot_do(tmp_path, capsys):
    assert main(["data", "align", "--task", "Nowhere", "--out", str(tmp_path / "x.jsonl")]) == 2
    assert main(["data", "align", "--task", "HomeSearch", "--out", str(tmp_path / "no" / "x.jsonl")]) == 2
    assert "toolbench data align" in capsys.readouterr().err


def test_data_align_defaults_to_table9_counts(tmp_path, capsys):
    assert {task: default_samples(task) for task in TABLE9} == {
        "OpenWeather": 1800, "CatAPI": 1800, "HomeSearch": 1800, "TripBooking": 1800,
        "GoogleSheets": 118, "VirtualHome": 512, "WebShop": 1800, "Tabletop": 74,
    }  # fmt: skip
    assert default_samples("AppBench") == 1000  # not in Table 9
    out = tmp_path / "tabletop.jsonl"
    assert main(["data", "align", "--task", "Tabletop", "--out", str(out)]) == 0
    samples = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(samples) == 74
    printed = capsys.readouterr().out
    assert "wrote 74 alignment samples" in printed and "(Table 9: 4.6)" in printed
    demos = {t.prompt: t.references[0] for split in ("demo", "train") for t in toolbench.load_tasks("Tabletop", split)}
    for sample in samples:
        assert len(set(sample["goals"])) == 3 and all(demos[g] == a for g, a in zip(sample["goals"], sample["actions"]))
        # All-shot (Figure 6): every action is marked for the loss, at its place in the text.
        assert [sample["text"][start:end] for start, end in sample["action_spans"]] == sample["actions"]
    # No example repeats before every usable one is used (the pool holds more than 74 x 3 places),
    # none is a test's answer; same seed, same bytes.
    tests = {t.references[0] for t in toolbench.load_tasks("Tabletop", "test")}
    goals = [g for s in samples for g in s["goals"]]
    assert len(set(goals)) == len(goals) == 74 * 3 and not {demos[g] for g in goals} & tests
    again = tmp_path / "again.jsonl"
    assert main(["data", "align", "--task", "Tabletop", "--out", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()


def test_data_split_grows_a_training_set_a_run_can_play(tmp_path, capsys):
    out = tmp_path / "more.jsonl"
    assert main(["data", "split", "--task", "TripBooking", "--size", "30", "--seed", "5", "--out", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 30 and all(r["template"] and isinstance(r["difficulty"], int) for r in records)
    shipped = {t.prompt for split in ("test", "demo", "unseen") for t in toolbench.load_tasks("TripBooking", split)}
    assert not shipped & {r["prompt"] for r in records}
    capsys.readouterr()
    assert (
        main(["eval", "--agent", "oracle", "--task", "TripBooking", "--task-file", str(out), "--json", "--quiet"]) == 0
    )
    assert json.loads(capsys.readouterr().out)["tasks"]["TripBooking"]["success_rate"] == 1.0
    assert main(["data", "split", "--task", "Nope", "--out", str(out)]) == 2


def test_data_split_says_when_a_generator_runs_out_of_distinct_tasks(tmp_path, capsys):
    # Sheets' unseen operations on their four worksheets hold fewer than 1,500 distinct tasks.
    out = tmp_path / "many.jsonl"
    assert (
        main(["data", "split", "--task", "GoogleSheets", "--split", "unseen", "--size", "1500", "--out", str(out)]) == 2
    )
    assert "distinct unseen tasks of the 1500 asked for" in capsys.readouterr().err and not out.exists()


def test_fresh_gives_up_on_a_stream_that_runs_dry():
    import itertools

    from toolbench.taskgen import fresh

    stream = ((f"the same prompt {n % 3}", n) for n in itertools.count())
    assert [c[1] for c in fresh(stream, 3, [], batch=4)] == [0, 1, 2]
    with pytest.raises(ValueError, match="new tasks of the 5 asked for"):
        fresh(((f"the same prompt {n % 3}", n) for n in itertools.count()), 5, [], batch=4)
