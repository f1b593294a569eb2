"""``toolbench eval`` summaries break results down by seen and unseen template where both occur."""

import toolbench
from toolbench.eval.harness import EpisodeResult, format_table, seen_template, summarize


def episode(success, seen):
    return EpisodeResult("CatAPI", "t", None, success, float(success), True, None, {}, 1, seen_template=seen)


def test_a_run_over_seen_and_unseen_templates_reports_each():
    summary = summarize([episode(True, True), episode(True, True), episode(False, False)], "program")
    assert summary["by_template"] == {
        "seen": {"n": 2, "success_rate": 1.0, "score": 1.0},
        "unseen": {"n": 1, "success_rate": 0.0, "score": 0.0},
    }
    table = format_table({"agent": "x", "split": "test", "tasks": {"CatAPI": summary}})
    assert "  seen templates" in table and "  unseen templates" in table
    assert "by_template" not in summarize([episode(True, True)], "program")


def test_seen_means_a_demo_or_train_task_has_the_template():
    env_class = toolbench.find_task("CatAPI").env_class()
    unseen = toolbench.load_tasks("CatAPI", "unseen")
    assert not any(seen_template(env_class, task) for task in unseen)
    assert all(seen_template(env_class, task) for task in toolbench.load_tasks("CatAPI", "train")[:50])
