"""toolbench data align (alignment samples) and toolbench complexity."""

import json

import pytest

import toolbench
from tests.episodes import play
from toolbench.cli import main
from toolbench.core.tasks import tasks_from_records
from toolbench.eval.complexity import doc_function, functions_used, task_complexity
from toolbench.eval.prompts import split_api_docs
from toolbench.taskgen import load_aligners


@pytest.mark.parametrize("spec", toolbench.TASKS, ids=lambda spec: spec.name)
def test_alignment_goals_are_playable_and_never_test_tasks(spec, tmp_path):
    records = load_aligners()[spec.fixture_slug](6, "check")
    env = spec.env_class()(tasks=tasks_from_records(records, "align"))
    held_out = {t.prompt for split in spec.splits for t in toolbench.load_tasks(spec.name, split)}
    out = tmp_path / "align.jsonl"
    assert main(["data", "align", "--task", spec.name, "--samples", "30", "--out", str(out)]) == 0
    samples = [json.loads(line) for line in out.read_text().splitlines()]
    goals = [goal for sample in samples for goal in sample["goals"]]
    actions = {action for sample in samples for action in sample["actions"]}
    held_out_actions = {
        r for split in spec.splits for t in toolbench.load_tasks(spec.name, split) for r in t.references
    }
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


def test_functions_used_tells_endpoints_apart():
    from toolbench.envs.openweather import API_DOCS

    functions = [doc_function(block) for block in split_api_docs(API_DOCS)]
    by_city = functions_used(functions, "curl -X GET 'https://api.openweathermap.org/data/2.5/weather?q=Oslo&appid=k'")
    by_point = functions_used(
        functions, "curl 'https://api.openweathermap.org/data/2.5/weather?lat=1&lon=2&units=metric'"
    )
    assert len(by_city) == len(by_point) == 1 and by_city != by_point
    assert functions_used(functions, "curl 'https://example.com/nothing'") == frozenset()


def test_complexity_counts_functions_the_demos_do_not_show():
    home = task_complexity(toolbench.find_task("HomeSearch"))
    weather = task_complexity(toolbench.find_task("OpenWeather"))
    # Three Home Search setters appear only in test tasks, so some tests need a function no demo shows.
    assert home.functions == 15 and home.unseen > 0 and home.score > 0
    assert weather.unseen == 0 and weather.score == 0  # every call type has a demonstration


def test_complexity_command(capsys):
    assert main(["complexity"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split() for line in lines[2 : 2 + len(toolbench.TASKS)]}
    assert set(rows) == {spec.name for spec in toolbench.TASKS}
    assert rows["HomeSearch"][1:4] == ["15", "100", "10"] and rows["HomeSearch"][-1] == "n/a"
    assert main(["complexity", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows["HomeSearch"]["test"] == 100 and rows["HomeSearch"]["demos"] == 10
