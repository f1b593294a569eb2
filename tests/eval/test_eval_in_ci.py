"""What makes an agent's evaluation fit for CI: trials (pass^k, pass@k), a model-reply cache that
replays a run offline byte for byte, errors told from failures (retried, rerun, gated), limits per
episode, and a subset of tasks. Against the scripted local endpoint of ``fake_llm``."""

import itertools
import json
from math import isclose

import pytest

import toolbench
from toolbench.cli import main
from toolbench.eval.harness import evaluate

EVAL = ["eval", "--agent", "openai:tiny", "--quiet", "--max-retries", "0", "--breaker", "1000"]


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_trials_give_tau_bench_pass_k_as_an_independent_count_does(model, tmp_path):
    model.fail_rate, run = 0.35, tmp_path / "run"
    assert main([*EVAL, "--task", "CatAPI", "--limit", "12", "--trials", "4", "--out", str(run)]) == 0
    episodes = lines(run / "trajectories.jsonl")
    assert sorted({e["trial"] for e in episodes}) == [0, 1, 2, 3] and len(episodes) == 48
    outcomes: dict[str, list[bool]] = {}
    for e in episodes:
        outcomes.setdefault(e["task_id"], []).append(e["success"])
    assert any(0 < sum(o) < 4 for o in outcomes.values())  # the trials do differ
    stats = json.loads((run / "summary.json").read_text())["tasks"]["CatAPI"]["trial_stats"]
    for k in range(1, 5):  # every k-subset of a task's trials, counted
        subsets = {t: list(itertools.combinations(o, k)) for t, o in outcomes.items()}
        hat = sum(sum(all(s) for s in subs) / len(subs) for subs in subsets.values()) / len(subsets)
        at = sum(sum(any(s) for s in subs) / len(subs) for subs in subsets.values()) / len(subsets)
        assert isclose(stats["pass_hat_k"][str(k)], hat) and isclose(stats["pass_at_k"][str(k)], at)
    assert "pass^k" in (run / "summary.txt").read_text()


def test_a_run_replayed_from_its_cache_is_the_same_bytes_and_calls_no_model(model, tmp_path):
    model.fail_rate = 0.3
    cache, first, second = tmp_path / "cache", tmp_path / "first", tmp_path / "second"
    common = [*EVAL, "--task", "HomeSearch", "--mode", "interactive", "--limit", "6", "--trials", "2"]
    assert main([*common, "--llm-cache", str(cache), "--out", str(first)]) == 0
    asked = len(model.requests)
    assert asked > 0 and list(cache.rglob("*.json"))
    model.behaviour = "fail"  # the endpoint is down (its address is part of the cache key, so it stays)
    replay = [*common, "--llm-cache", str(cache), "--llm-cache-mode", "replay"]
    assert main([*replay, "--out", str(second)]) == 0
    for name in ("trajectories.jsonl", "summary.json", "summary.txt"):
        assert (second / name).read_bytes() == (first / name).read_bytes(), name
    assert len(model.requests) == asked
    assert json.loads((second / "run.json").read_text())["llm_cache"]["mode"] == "replay"


def test_a_request_the_cache_lacks_is_a_cache_miss_error_not_a_network_call(model, tmp_path, capsys):
    cache = tmp_path / "cache"
    common = [*EVAL, "--task", "CatAPI", "--limit", "3", "--llm-cache", str(cache)]
    assert main([*common, "--out", str(tmp_path / "recorded")]) == 0
    asked = len(model.requests)
    capsys.readouterr()
    changed = tmp_path / "changed"  # another temperature is another request
    code = main([*common, "--llm-cache-mode", "replay", "--temperature", "0.5", "--out", str(changed)])
    assert code == 1 and len(model.requests) == asked
    episodes = lines(changed / "trajectories.jsonl")
    assert {(e["status"], e["error_kind"]) for e in episodes} == {("error", "cache_miss")}
    assert "3 of 3 episodes (100.0%) ended in an error (cache_miss 3" in capsys.readouterr().err
    assert json.loads((changed / "summary.json").read_text())["tasks"]["CatAPI"]["errors"] == 3


def test_errors_are_told_from_failures_retried_and_played_again_on_their_own(model, tmp_path, capsys):
    run = tmp_path / "run"
    command = [*EVAL, "--task", "CatAPI", "--limit", "10", "--out", str(run)]
    model.good_replies_left = 4  # CatAPI's program is one reply: four episodes, then the endpoint is down
    assert main([*command, "--max-error-rate", "0.5"]) == 1
    err = capsys.readouterr().err
    assert "6 of 10 episodes (60.0%) ended in an error (model 6" in err and "over --max-error-rate 0.5" in err
    summary = json.loads((run / "summary.json").read_text())["tasks"]["CatAPI"]
    assert summary["errors"] == 6 and summary["success_rate"] == 0.4  # over all ten, the errors beside it
    assert "6 episodes ended in an error" in (run / "summary.txt").read_text()

    model.good_replies_left = None
    asked = len(model.requests)
    assert main([*command, "--resume", "--only", "errors"]) == 0
    assert len(model.requests) - asked == 6  # the six errored episodes, and nothing else
    episodes = {e["task_id"]: e for e in lines(run / "trajectories.jsonl")}
    assert len(episodes) == 10 and all(e["status"] == "success" for e in episodes.values())

    asked = len(model.requests)
    assert main([*command, "--resume", "--only", "failures"]) == 0
    assert len(model.requests) == asked  # no failures to play again


def test_retry_errors_plays_an_errored_episode_again_and_keeps_the_last_attempt(model, tmp_path):
    model.good_replies_left = 2
    run = tmp_path / "run"

    def come_back(episode):  # the endpoint is back once the first attempt of every task has failed
        if episode.errored and episode.task_id == toolbench.load_tasks("CatAPI")[3].id:
            model.good_replies_left = None

    report, episodes = evaluate("openai:tiny", ["CatAPI"], limit=4, retry_errors=1, on_episode=come_back,
                                settings=_settings())  # fmt: skip
    assert [e.status for e in episodes] == ["success"] * 4
    assert [e.attempts for e in episodes] == [1, 1, 2, 2] and report["tasks"]["CatAPI"]["errors"] == 0
    assert not run.exists()


def _settings():
    from toolbench.agents.llm import ModelSettings

    return ModelSettings(max_retries=0, breaker=1000)


def test_task_ids_pick_the_tasks_and_an_unknown_id_is_a_usage_error(model, tmp_path, capsys):
    ids = [t.id for t in toolbench.load_tasks("CatAPI")[5:7]]
    run = tmp_path / "run"
    assert main(["eval", "--agent", "oracle", "--task", "CatAPI", "--task-ids", ",".join(ids), "--out", str(run), "--quiet"]) == 0  # fmt: skip
    assert [e["task_id"] for e in lines(run / "trajectories.jsonl")] == ids
    listed = tmp_path / "ids.txt"
    listed.write_text(ids[1] + "\n")
    capsys.readouterr()
    assert main(["eval", "--agent", "oracle", "--task", "CatAPI", "--task-ids", f"@{listed}", "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["tasks"]["CatAPI"]["n"] == 1
    assert main(["eval", "--agent", "oracle", "--task", "CatAPI", "--task-ids", "no-such-task"]) == 2
    assert "--task-ids: no task of this run has the id no-such-task" in capsys.readouterr().err


@pytest.mark.parametrize(
    "flags, reason",
    [
        (["--max-turns", "1"], "limit reached: max_turns 1"),
        (["--max-tokens-per-episode", "150"], "limit reached: max_tokens"),
        (["--episode-timeout", "0.3"], "limit reached: episode_timeout"),
    ],
)
def test_an_episode_over_a_limit_is_a_failure_with_its_reason(model, tmp_path, flags, reason):
    model.delay = 0.2 if "--episode-timeout" in flags else 0.0
    run = tmp_path / "run"
    command = [*EVAL, "--task", "HomeSearch", "--mode", "interactive", "--limit", "2", *flags, "--out", str(run)]
    assert main(command) == 0  # failures, not errors
    episodes = lines(run / "trajectories.jsonl")
    assert all(e["status"] == "failure" and e["error"].startswith(reason) for e in episodes), episodes[0]["error"]
    assert json.loads((run / "summary.json").read_text())["tasks"]["HomeSearch"]["limit_reached"] == 2
    assert json.loads((run / "run.json").read_text())["settings"]["limits"]


def test_a_crash_in_the_env_is_an_infrastructure_error_and_the_run_goes_on(monkeypatch):
    env_class = toolbench.find_task("CatAPI").env_class()
    broken = toolbench.load_tasks("CatAPI")[1].id
    step = env_class.step

    def failing_step(self, action):
        if self.task.id == broken:
            raise RuntimeError("the disk is full")
        return step(self, action)

    monkeypatch.setattr(env_class, "step", failing_step)
    report, episodes = evaluate("oracle", ["CatAPI"], limit=3)
    assert [e.status for e in episodes] == ["success", "error", "success"]
    assert episodes[1].error_kind == "infrastructure" and "RuntimeError: the disk is full" in episodes[1].error
    assert report["tasks"]["CatAPI"]["error_kinds"] == {"infrastructure": 1}


def test_compare_and_view_count_trials_and_show_pass_k(tmp_path, capsys):
    runs = []
    for agent in ("random", "oracle"):
        runs.append(tmp_path / agent)
        assert main(["eval", "--agent", agent, "--task", "CatAPI", "--limit", "5", "--trials", "3", "--out", str(runs[-1]), "--quiet"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["compare", *map(str, runs), "--plot", str(tmp_path / "c.png")]) == 0
    table = capsys.readouterr().out
    assert "1.000 [0.566, 1.000] n=5x3" in table  # five tasks' means: the interval is over tasks, not 15 episodes
    assert main(["compare", *map(str, runs), "--metric", "pass^3", "--plot", str(tmp_path / "c.png")]) == 0
    assert "n=5x3" in capsys.readouterr().out
    assert main(["compare", *map(str, runs), "--metric", "pass^4", "--plot", str(tmp_path / "c.png")]) == 2
    assert main(["view", str(runs[1])]) == 0
    page = (runs[1] / "report.html").read_text()
    assert "trial 2" in page and "pass^k [95%]" in page and '<option value="error">' in page
