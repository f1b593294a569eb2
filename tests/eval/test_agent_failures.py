"""How the model agent and the run folder behave when the model endpoint misbehaves."""

import json
import socket
import time

import gymnasium as gym
import pytest

import toolbench
from toolbench.agents.llm import ModelSettings, OpenAIChatAgent
from toolbench.cli import main
from toolbench.eval.harness import run_episode

from .conftest import write_task_file


def test_unreachable_endpoint_stops_quickly(monkeypatch, capsys, tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed at once: nothing listens there
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    started = time.monotonic()
    code = main(["eval", "--agent", "openai:tiny", "--task", "OpenWeather", "--max-retries", "0", "--out", str(tmp_path / "r"), "--quiet"])  # fmt: skip
    assert code == 1 and time.monotonic() - started < 30  # five refused connections, not 100 episodes of retries
    assert "failed in a row" in capsys.readouterr().err
    assert len((tmp_path / "r" / "trajectories.jsonl").read_text().splitlines()) == 4


def test_breaker_with_workers_stops_and_keeps_what_finished(model, tmp_path, capsys):
    model.good_replies_left = 6
    run = tmp_path / "run"
    command = ["eval", "--agent", "openai:tiny", "--task", "CatAPI", "--limit", "40", "--workers", "2", "--json", "--max-retries", "0", "--quiet"]  # fmt: skip
    assert main([*command, "--out", str(run)]) == 1
    assert "failed in a row" in capsys.readouterr().err
    episodes = [json.loads(line) for line in (run / "trajectories.jsonl").read_text().splitlines()]
    assert 6 <= len(episodes) < 40 and sum(not e["error"] for e in episodes) == 6
    assert json.loads((run / "summary.json").read_text())["tasks"]["CatAPI"]["n"] == len(episodes)
    model.good_replies_left = None
    assert main([*command, "--out", str(run), "--resume"]) == 0
    assert json.loads(capsys.readouterr().out)["tasks"]["CatAPI"]["success_rate"] == 1.0
    lines = (run / "trajectories.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["task_id"] for line in lines) == [t.id for t in toolbench.load_tasks("CatAPI")[:40]]


@pytest.mark.parametrize("behaviour", ["garbage", "refuse"])
def test_bad_replies_fail_the_episode_cleanly(model, behaviour, capsys):
    model.behaviour = behaviour
    code = main(["eval", "--agent", "openai:tiny", "--task", "CatAPI", "--limit", "7", "--max-retries", "0", "--quiet"])
    err = capsys.readouterr().err
    if behaviour == "garbage":  # every call fails: after five the breaker stops the run
        assert code == 1 and "5 model calls failed in a row" in err and "unexpected completion body" in err
    else:  # a 400 is about one request: its episode fails, the run goes on
        assert code == 1 and "7 of 7 episodes (100.0%) ended in an error" in err and "refused the request" in err
        assert len(model.requests) == 7


def test_api_key_is_sent_as_a_bearer_token(model):
    env = gym.make("toolbench/OpenWeather-v0").unwrapped
    run_episode(env, OpenAIChatAgent("tiny", settings=ModelSettings(max_retries=0)), env.tasks[0].id)
    assert model.headers[0]["Authorization"] == "Bearer sk-test"


def test_resume_refuses_an_edited_task_file(tmp_path, capsys):
    path = write_task_file(tmp_path / "mine.jsonl", "HomeSearch", 3)
    command = ["eval", "--agent", "oracle", "--task", "HomeSearch", "--task-file", str(path), "--out", str(tmp_path / "run"), "--quiet"]  # fmt: skip
    assert main(command) == 0
    write_task_file(path, "HomeSearch", 3, reverse=True)
    assert main([*command, "--resume"]) == 2
    assert "other settings (task_sets)" in capsys.readouterr().err


def test_a_refused_command_creates_no_run_folder(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["eval", "--agent", "oracle", "--task", "CatAPI", "--mode", "interactive", "--out", str(run)]) == 2
    assert not run.exists()
    assert main(["eval", "--agent", "oracle", "--task", "CatAPI", "--timeout", "5", "--out", str(run)]) == 2
    assert "apply to openai:MODEL agents" in capsys.readouterr().err and not run.exists()


def test_a_killed_runs_resume_skips_a_cut_line(tmp_path, capsys):
    run = tmp_path / "run"
    command = ["eval", "--agent", "random", "--task", "CatAPI", "--limit", "5", "--out", str(run), "--quiet", "--json"]
    assert main(command) == 0
    whole = json.loads(capsys.readouterr().out)
    lines = (run / "trajectories.jsonl").read_text().splitlines()
    (run / "trajectories.jsonl").write_text("\n".join(lines[:3]) + "\n" + lines[3][:40] + "\n[1, 2]\n")
    (run / "summary.json").unlink()
    assert main([*command, "--resume"]) == 0
    assert json.loads(capsys.readouterr().out) == whole
    assert len((run / "trajectories.jsonl").read_text().splitlines()) == 5
