"""The model agent's own cost, next to its floors.

- ``toolbench list`` in a fresh process, next to ``import toolbench`` and an empty interpreter;
- the openai:MODEL loop against a scripted endpoint on loopback (tests/eval/fake_llm.py): episodes
  per second and milliseconds per model call, next to the oracle on the same episodes (no model)
  and to bare HTTP round trips to the same endpoint (the SDK's floor);
- how long a run takes to stop when the endpoint is unreachable (the circuit breaker).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _fresh_best(codes: dict[str, str], repeats: int = 10) -> dict[str, float]:
    """Each snippet's best wall time in a fresh interpreter, the snippets run in turn (alternating
    passes, so a busy moment of a shared machine falls on all of them alike)."""
    best = dict.fromkeys(codes, float("inf"))
    for _ in range(repeats):
        for name, code in codes.items():
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, cwd=ROOT)
            best[name] = min(best[name], time.perf_counter() - started)
    return best


def cli_start() -> dict[str, float]:
    best = _fresh_best(
        {
            "toolbench_list_s": "from toolbench.cli import main; main(['list'])",
            "import_toolbench_s": "import toolbench",
            "empty_interpreter_s": "pass",
        }
    )
    results = {name: round(seconds, 3) for name, seconds in best.items()}
    results["import_toolbench_ratio"] = round(best["import_toolbench_s"] / best["empty_interpreter_s"], 2)
    return results


def agent_loop(episodes: int = 30) -> dict[str, float]:
    import os

    import requests

    from tests.eval.fake_llm import FakeModel, serve_fake_model
    from toolbench.agents.llm import ModelSettings, OpenAIChatAgent
    from toolbench.envs.home_search import HomeSearchEnv
    from toolbench.eval.harness import run_episode

    model = FakeModel()
    served = serve_fake_model(model)
    os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = f"{served.url}/v1", "sk-bench"
    try:
        env = HomeSearchEnv(mode="interactive")
        ids = [task.id for task in env.tasks[:episodes]]
        agent = OpenAIChatAgent("bench", settings=ModelSettings(max_retries=0))
        run_episode(env, agent, ids[0])  # warm: demonstrations played, prompt builder made
        before = len(model.requests)
        started = time.perf_counter()
        results = [run_episode(env, agent, task_id) for task_id in ids]
        model_seconds = time.perf_counter() - started
        calls = len(model.requests) - before
        assert all(r.success for r in results)

        from toolbench.agents import OracleAgent

        oracle = OracleAgent()
        started = time.perf_counter()
        for task_id in ids:
            run_episode(env, oracle, task_id)
        oracle_seconds = time.perf_counter() - started

        body = model.requests[-1]
        with requests.Session() as client:
            started = time.perf_counter()
            for _ in range(calls):
                client.post(f"{served.url}/v1/chat/completions", json=body).raise_for_status()
            http_seconds = time.perf_counter() - started
    finally:
        served.stop()
    return {
        "episodes": episodes,
        "model_calls": calls,
        "agent_episodes_per_s": round(episodes / model_seconds, 1),
        "oracle_episodes_per_s": round(episodes / oracle_seconds, 1),
        "agent_ms_per_call": round(1000 * model_seconds / calls, 2),
        "bare_http_ms_per_call": round(1000 * http_seconds / calls, 2),
    }


def breaker() -> dict[str, float]:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    times = {}
    for retries in (0, 2):
        started = time.perf_counter()
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "toolbench",
                "eval",
                "--agent",
                "openai:none",
                "--task",
                "OpenWeather",
                "--max-retries",
                str(retries),
                "--quiet",
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={"OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "PATH": "/usr/bin:/bin"},
        )
        assert result.returncode == 1 and "failed in a row" in result.stderr, result.stderr
        times[f"dead_endpoint_stop_s_retries_{retries}"] = round(time.perf_counter() - started, 2)
    return times


def main() -> dict[str, object]:
    results = {"cli": cli_start(), "agent_loop": agent_loop(), "breaker": breaker()}
    cli = results["cli"]
    print(
        f"toolbench list {cli['toolbench_list_s']:.3f} s   import toolbench {cli['import_toolbench_s']:.3f} s   "
        f"empty interpreter {cli['empty_interpreter_s']:.3f} s   import / empty {cli['import_toolbench_ratio']}x "
        "(target 3x; best of 10, alternating)"
    )
    loop = results["agent_loop"]
    print(
        f"openai agent {loop['agent_episodes_per_s']} episodes/s ({loop['agent_ms_per_call']} ms per model call)   "
        f"oracle {loop['oracle_episodes_per_s']} episodes/s   bare HTTP {loop['bare_http_ms_per_call']} ms per call"
    )
    print("dead endpoint: " + "   ".join(f"{k} {v} s" for k, v in results["breaker"].items()))
    return results


if __name__ == "__main__":
    main()
