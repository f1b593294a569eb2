"""``toolbench eval``'s table: per task success, score and the one metric its paper reports; the
report itself keeps every metric."""

from __future__ import annotations

import toolbench
from toolbench.eval.harness import format_table


def _row(mode: str = "program", **metrics: float) -> dict:
    return {"n": 4, "mode": mode, "success_rate": 0.5, "score": 0.75, "executable_rate": 1.0, **metrics}


def test_each_task_shows_success_score_and_its_papers_metric_only():
    report = {
        "agent": "oracle",
        "split": "test",
        "tasks": {
            "VirtualHome": _row(lcs=0.625, goal_rate=0.9),
            "WebShop": _row("interactive", reward=0.8125, r_type=1.0, r_att=0.5, full_match=0.25),
            "CatAPI": _row(f1=0.3, precision=0.2, recall=0.1),
        },
    }
    lines = format_table(report).splitlines()
    header = lines[1].split()
    assert header == ["task", "mode", "n", "success", "score", "paper", "metric", "value"]
    rows = {line.split()[0]: line.split() for line in lines[3:6]}
    assert rows["VirtualHome"][-2:] == ["lcs", "0.625"]
    assert rows["WebShop"][-2:] == ["reward", "0.812"]
    assert rows["CatAPI"][-2:] == ["success_rate", "0.500"]
    text = "\n".join(lines)
    for hidden in ("goal_rate", "r_att", "precision", "executable", "full_match"):
        assert hidden not in text


def test_every_env_names_a_headline_metric_its_summary_has():
    for spec in toolbench.TASKS:
        env_class = spec.env_class()
        assert env_class.headline_metric in {"success_rate", *env_class.metric_names}, spec.name


def test_a_missing_metric_and_an_unknown_task_still_make_a_row():
    report = {"agent": "x", "split": "test", "tasks": {"RapidAPI": _row("interactive", passed=None), "Gone": _row()}}
    lines = format_table(report).splitlines()
    assert lines[3].split()[-2:] == ["passed", "-"]
    assert lines[4].split()[-2:] == ["success_rate", "0.500"]
