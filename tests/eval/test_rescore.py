"""``toolbench score``: a stored run scored again by today's envs, and exactly what changed said."""

import json
import os

import pytest

from toolbench.cli import main as toolbench_main
from toolbench.core.call_env import OwnCriteriaEnv
from toolbench.envs.home_search import HomeSearchEnv
from toolbench.eval import rescore as rescoring
from toolbench.eval.runs import read_run

from .conftest import write_task_file

CHANGED_IDS = {"home_search-test-0001", "home_search-test-0004", "home_search-test-0007"}
#: Of those, the task whose score the patched scorer moves and whose success it keeps.
SCORE_ONLY_ID = "home_search-test-0007"
#: A task whose observation the patched scorer rewords without touching its score.
REWORDED_ID = "home_search-test-0002"


def record(out, agent, task, *extra, versions=True):
    """A run of ``toolbench eval --out``; ``versions=False`` makes it a run from before run.json
    recorded the envs' scorer versions."""
    assert toolbench_main(["eval", "--agent", agent, "--task", task, "--quiet", "--out", str(out), *extra]) == 0
    run_file = out / "run.json"
    run = json.loads(run_file.read_text())
    run.pop("scorer_versions", None)
    run["settings"].pop("scorer_versions", None)
    if versions:
        run["settings"]["scorer_versions"] = {task: "1"}
    run_file.write_text(json.dumps(run))
    return out


def score(argv, capsys=None):
    """``toolbench score ARGV`` through the command line's own parser."""
    code = toolbench_main(["score", *(str(a) for a in argv)])
    return code, (capsys.readouterr() if capsys is not None else None)


def patch_scorer(monkeypatch, bump):
    """HomeSearch's scorer today: half the score on ``CHANGED_IDS``, and no success but on ``SCORE_ONLY_ID``."""
    original = OwnCriteriaEnv._scored

    def scored(self, observation):
        outcome = original(self, observation)
        if self.task.id in CHANGED_IDS:
            outcome.score /= 2
            outcome.success = outcome.success and self.task.id == SCORE_ONLY_ID
        if self.task.id == REWORDED_ID:
            outcome.observation += "\n(reworded)"
        return outcome

    monkeypatch.setattr(HomeSearchEnv, "_scored", scored)
    if bump:
        monkeypatch.setattr(HomeSearchEnv, "scorer_version", "2")


@pytest.mark.parametrize(
    ("agent", "task", "mode"),
    [("oracle", "HomeSearch", "interactive"), ("random", "CatAPI", "program"), ("oracle", "OpenWeather", "program")],
)
def test_an_unchanged_run_scores_the_same(tmp_path, capsys, agent, task, mode):
    run = record(tmp_path / "run", agent, task, "--mode", mode, "--limit", "10")
    code, printed = score([run], capsys)
    assert code == 0
    assert "10 episodes re-scored, 0 changed, 0 not re-scored" in printed.out
    old_run, old_report, old = read_run(run)
    new_run, new_report, new = read_run(tmp_path / "run-rescored")
    assert new == old and len(new) == 10  # every field but wall time, observations included
    assert new_report == old_report
    assert (tmp_path / "run-rescored" / "timings.jsonl").read_text() == (run / "timings.jsonl").read_text()
    assert new_run["settings"]["scorer_versions"] == {task: "1"}
    assert new_run["settings"]["task_sets"] == old_run["settings"]["task_sets"]
    assert new_run["rescored_from"]["path"] == str(run.resolve())
    assert new_run["rescored_from"]["scorer_versions"] == {task: "1"}
    assert new_run["rescored_from"]["git_commit"] == old_run["git_commit"]


@pytest.mark.parametrize(
    ("bump", "versions", "reason"),
    [
        (True, True, "scorer_version 1 -> 2"),
        (False, True, rescoring.NO_BUMP),
        (False, False, rescoring.NO_VERSION),
    ],
)
def test_exactly_the_episodes_whose_score_changed(tmp_path, monkeypatch, bump, versions, reason):
    oracle = record(tmp_path / "oracle", "oracle", "HomeSearch", "--limit", "10", versions=versions)
    # Random's episodes score 0 under both scorers: the patched scorer moves none of them.
    random = record(tmp_path / "random", "random", "HomeSearch", "--limit", "10", versions=versions)
    patch_scorer(monkeypatch, bump)
    report = rescoring.rescore(oracle, tmp_path / "new")
    assert {c.task_id for c in report.changes} == CHANGED_IDS
    for change in report.changes:
        success = change.task_id == SCORE_ONLY_ID
        assert (change.old_score, change.new_score, change.old_success, change.new_success) == (1.0, 0.5, True, success)
        assert change.reason == reason and not change.observations_changed
        assert change.metrics_changed == []
    assert (report.rescored, report.changed, report.not_rescored) == (10, 3, [])
    assert report.scores["HomeSearch"] == {"old": 1.0, "new": 0.85, "n": 10}
    assert f"{rescoring.OBSERVATIONS_NOTE} (1 episodes)" in report.notes["HomeSearch"]
    assert ("scorer_version 1 -> 2" in report.notes["HomeSearch"]) == (bump and versions)
    _, summary, episodes = read_run(tmp_path / "new")
    assert {e.task_id for e in episodes if e.score == 0.5} == CHANGED_IDS
    assert summary["tasks"]["HomeSearch"]["success_rate"] == pytest.approx(0.8)
    assert json.loads((tmp_path / "new" / "run.json").read_text())["settings"]["scorer_versions"] == {
        "HomeSearch": "2" if bump else "1"
    }

    unmoved = rescoring.rescore(random, tmp_path / "new-random")
    assert unmoved.changed == 0 and unmoved.rescored == 10


def test_a_task_set_change_is_named_and_a_removed_task_is_not_rescored(tmp_path):
    path = write_task_file(tmp_path / "mine.jsonl", "HomeSearch", 6)
    run = record(tmp_path / "run", "oracle", "HomeSearch", "--task-file", str(path))
    _, _, old = read_run(run)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[1]["completion"], records[3]["completion"] = records[3]["completion"], records[1]["completion"]
    del records[5]  # the last record: the others keep their ids
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    os.utime(path, ns=(0, 10**18))  # surely another file to the envs' store

    report = rescoring.rescore(run)
    assert {c.task_id for c in report.changes} == {old[1].task_id, old[3].task_id}
    for change in report.changes:
        assert change.reason.startswith("task set of HomeSearch changed (digest ")
        assert change.reason.endswith("this task's references changed")
        assert change.new_score < 1.0
    assert [(s.task_id, s.why) for s in report.not_rescored] == [(old[5].task_id, "task no longer in the split")]
    assert report.rescored == 5
    assert "5 episodes re-scored, 2 changed, 1 not re-scored (0 errors, 1 missing tasks)" in report.text()
    _, _, new = read_run(tmp_path / "run-rescored")
    assert new[5] == old[5]  # copied as it was


def test_errored_episodes_are_copied_and_a_recorded_limit_ends_the_replay(tmp_path):
    run = record(tmp_path / "run", "oracle", "HomeSearch", "--mode", "interactive", "--limit", "4")
    lines = [json.loads(line) for line in (run / "trajectories.jsonl").read_text().splitlines()]
    # Episode 0 ended on the endpoint (its oracle actions would score 1 if they were played again);
    # episode 1 reached a turn limit before its search, so it scored nothing.
    lines[0].update(status="error", error_kind="model", error="agent error: boom", score=0.0, success=False)
    limit = "limit reached: max_turns 3"
    lines[1]["actions"] = lines[1]["actions"][:3]
    lines[1]["observations"] = lines[1]["observations"][:3]
    lines[1].update(status="failure", error=limit, score=0.0, success=False, steps=3)
    lines[1]["metrics"] = dict.fromkeys(lines[1]["metrics"], 0.0)
    (run / "trajectories.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))

    report = rescoring.rescore(run)
    assert [(s.task_id, s.why) for s in report.not_rescored] == [(lines[0]["task_id"], "not re-scored: error")]
    assert report.changes == [] and report.rescored == 3
    _, _, old = read_run(run)
    _, _, new = read_run(tmp_path / "run-rescored")
    assert new[0] == old[0] and new[0].score == 0.0
    assert (new[1].error, new[1].status, new[1].score, new[1].steps) == (limit, "failure", 0.0, 3)
    assert new[1].observations == old[1].observations


def test_exit_codes_and_the_out_folder(tmp_path, monkeypatch, capsys):
    run = record(tmp_path / "run", "oracle", "HomeSearch", "--limit", "10")
    assert score([run, "--fail-on-change"], capsys)[0] == 0
    code, printed = score([run], capsys)
    assert code == 2 and "is not empty; add --overwrite" in printed.err
    assert score([run, "--overwrite", "--fail-on-change"], capsys)[0] == 0
    assert score([run, "--out", run], capsys)[0] == 2  # never over the run itself

    patch_scorer(monkeypatch, bump=True)
    code, printed = score([run, "--out", tmp_path / "a", "--json"], capsys)
    assert code == 0
    data = json.loads(printed.out)
    assert data["changed"] == 3 and {c["task_id"] for c in data["changes"]} == CHANGED_IDS
    assert data["changes"][0]["reason"] == "scorer_version 1 -> 2"
    assert score([run, "--out", tmp_path / "b", "--fail-on-change"], capsys)[0] == 1
    code, printed = score([run, "--out", tmp_path / "c"], capsys)
    assert code == 0 and "1.000 -> 0.500" in printed.out and "scorer_version 1 -> 2" in printed.out

    code, printed = score([tmp_path / "nowhere"], capsys)
    assert code == 2 and "not a toolbench run folder" in printed.err
    unknown = tmp_path / "unknown"
    unknown.mkdir()
    for name in ("run.json", "trajectories.jsonl"):
        text = (run / name).read_text()
        (unknown / name).write_text(text.replace('"HomeSearch"', '"Nowhere"'))
    code, printed = score([unknown], capsys)
    assert code == 2 and "unknown task 'Nowhere'" in printed.err
    assert not (tmp_path / "unknown-rescored").exists()


def test_a_run_of_some_task_ids_keeps_its_task_set(tmp_path):
    ids = "home_search-test-0003,home_search-test-0042,home_search-test-0077"
    run = record(tmp_path / "run", "random", "HomeSearch", "--task-ids", ids, "--trials", "2")
    report = rescoring.rescore(run)
    assert (report.rescored, report.changed, report.notes) == (6, 0, {})
    old_run, _, old = read_run(run)
    new_run, _, new = read_run(tmp_path / "run-rescored")
    assert new == old and {(e.task_id, e.trial) for e in new} == {(i, t) for i in ids.split(",") for t in (0, 1)}
    assert new_run["settings"]["task_sets"] == old_run["settings"]["task_sets"]


def test_a_task_file_that_is_gone(tmp_path, capsys):
    path = write_task_file(tmp_path / "mine.jsonl", "CatAPI", 3)
    run = record(tmp_path / "run", "oracle", "CatAPI", "--task-file", str(path))
    path.unlink()
    code, printed = score([run], capsys)
    assert code == 2 and "task file" in printed.err and "is gone" in printed.err
    assert not (tmp_path / "run-rescored").exists()
