"""``toolbench eval --backend ray``: the same reports, episodes and run records as the local backend."""

from __future__ import annotations

import json

import pytest

import toolbench
from toolbench.cli import main
from toolbench.eval.harness import evaluate

from ..eval.conftest import model  # noqa: F401  (the scripted model endpoint)
from .conftest import RAY_GROUP

pytestmark = RAY_GROUP


def _records(run) -> tuple[dict, dict, dict]:
    """A run folder's summary, its episodes by (task, id) (their wall times are in timings.jsonl), and its settings."""
    episodes = {}
    for line in (run / "trajectories.jsonl").read_text().splitlines():
        episode = json.loads(line)
        assert "seconds" not in episode  # wall time, the one field that varies between runs, is kept apart
        episodes[episode["task"], episode["task_id"]] = episode
    run_file = json.loads((run / "run.json").read_text())
    return json.loads((run / "summary.json").read_text()), episodes, run_file


def test_the_same_report_and_episodes_as_the_local_backend(ray_instance):
    tasks = ["CatAPI", "HomeSearch"]
    local, local_episodes = evaluate("random", tasks, limit=20, seed=3)
    ray, ray_episodes = evaluate("random", tasks, limit=20, seed=3, backend="ray")  # two actors: one per CPU
    assert ray == local and ray_episodes == local_episodes  # EpisodeResult's equality leaves out wall time
    assert [e.task_id for e in ray_episodes] == [e.task_id for e in local_episodes]  # in the split's order
    _, other_seed = evaluate("random", ["CatAPI"], limit=20, seed=4, backend="ray")
    assert [e.actions for e in other_seed] != [e.actions for e in local_episodes[:20]]


@pytest.mark.parametrize("task", [spec.name for spec in toolbench.TASKS if spec.runs_code])
def test_run_folders_hold_the_same_records(ray_instance, tmp_path, capsys, task):
    # Tabletop's camera frames are written by the actors and sent back; Sheets runs code in the sandbox.
    command = ["eval", "--agent", "oracle", "--task", task, "--limit", "2", "--json", "--quiet"]
    assert main([*command, "--out", str(tmp_path / "local")]) == 0
    local_report = json.loads(capsys.readouterr().out)
    assert main([*command, "--backend", "ray", "--workers", "2", "--out", str(tmp_path / "ray")]) == 0
    assert json.loads(capsys.readouterr().out) == local_report
    local, ray = _records(tmp_path / "local"), _records(tmp_path / "ray")
    assert ray[0] == local[0] and ray[1] == local[1] and len(ray[1]) == 2
    assert ray[2]["settings"] == local[2]["settings"]
    assert ray[2]["backend"]["name"] == "ray" and local[2]["backend"] == {"name": "local", "workers": 1}
    frames = sorted(p.relative_to(tmp_path / "local") for p in (tmp_path / "local").rglob("*.png"))
    assert frames == sorted(p.relative_to(tmp_path / "ray") for p in (tmp_path / "ray").rglob("*.png"))
    assert bool(frames) == (task == "Tabletop")
    for name in frames:
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "ray" / name).read_bytes()


def test_the_breaker_stops_a_ray_run_and_the_local_backend_resumes_it(ray_instance, model, tmp_path, capsys):  # noqa: F811
    model.good_replies_left = 6  # the endpoint's settings reach the actors (a runtime_env)
    run = tmp_path / "run"
    command = ["eval", "--agent", "openai:tiny", "--task", "CatAPI", "--limit", "30", "--max-retries", "0", "--json", "--quiet", "--out", str(run)]  # fmt: skip
    assert main([*command, "--backend", "ray", "--workers", "2"]) == 1
    assert "failed in a row" in capsys.readouterr().err
    episodes = [json.loads(line) for line in (run / "trajectories.jsonl").read_text().splitlines()]
    assert 6 <= len(episodes) < 30 and sum(not e["error"] for e in episodes) == 6
    model.good_replies_left = None
    assert main([*command, "--resume"]) == 0  # the backend is not a setting: either one resumes the run
    assert json.loads(capsys.readouterr().out)["tasks"]["CatAPI"]["success_rate"] == 1.0


def test_more_workers_than_the_cluster_has_cpus_is_refused(ray_instance, capsys):
    assert main(["eval", "--agent", "oracle", "--task", "CatAPI", "--backend", "ray", "--workers", "3"]) == 2
    assert "the Ray cluster has 2 CPUs" in capsys.readouterr().err
