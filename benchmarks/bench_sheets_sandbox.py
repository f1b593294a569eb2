"""Google Sheets' oracle episodes per second beside the floor of running code in the clean worker,
and beside the code from before the sandbox's clean worker.

In one run (program mode, the 70 test tasks):

- ``env``: oracle episodes through the env, cold (the first pass in the process) and warm (the best
  later pass);
- ``empty run``: one empty sandbox run per episode (``pass`` through ``run_in_worker``: a ready
  child of the clean worker, the job sent, nothing run, the reply read), the least a step costs;
- ``fork and exit``: one child of the clean worker taken and ended per episode (its channel
  closed, its exit awaited), without a job;
- ``pre-sandbox``: the same episodes with the code before the clean worker (``git worktree add
  /tmp/pre-sandbox a16d781^``), played in a subprocess with this interpreter and the old checkout
  first on ``PYTHONPATH``, with that code's own floor (``run_code`` of ``pass``, a fork of the env's
  process). Skipped, with the reason, when the checkout is absent (``--pre-sandbox PATH``).

The env's passes and the floors' passes alternate and each keeps its best, so a machine busy with
other work slows all of them alike.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym

from toolbench.core.sandbox import run_in_worker
from toolbench.core.worker import WorkerServer
from toolbench.envs import CODE_ENV_MODULES

PRE_SANDBOX = "/tmp/pre-sandbox"
ENV_ID = "toolbench/GoogleSheets-v0"

# Played in the old checkout's process: its env's episodes (cold, then the best of the warm passes)
# and its floor, an empty run_code (a fork of the env's process), alternating with the warm passes.
_PRE_SANDBOX_SCRIPT = """
import json, sys, time
import gymnasium as gym
import toolbench
from toolbench.core.sandbox import run_code

passes = int(sys.argv[1])
env = gym.make("toolbench/GoogleSheets-v0").unwrapped
tasks = env.tasks

def env_pass():
    started = time.perf_counter()
    for task in tasks:
        env.reset(options={"task_id": task.id})
        assert env.step(task.references[0])[1] == 1.0, task.id
    return len(tasks) / (time.perf_counter() - started)

def floor_pass():
    started = time.perf_counter()
    for _ in tasks:
        assert run_code("pass", dict, lambda namespace: None).ok
    return len(tasks) / (time.perf_counter() - started)

cold, warm, floor = env_pass(), 0.0, 0.0
for _ in range(passes):
    warm, floor = max(warm, env_pass()), max(floor, floor_pass())
print(json.dumps({"module": toolbench.__file__, "cold": cold, "warm": warm, "floor": floor}))
"""


def _timed(step: Any, count: int) -> float:
    started = time.perf_counter()
    for _ in range(count):
        step()
    return count / (time.perf_counter() - started)


def empty_run() -> None:
    """The least a sandboxed step costs: a ready child gets a job with nothing to run and replies."""
    result = run_in_worker("pass", "toolbench.core.sandbox:no_names", "toolbench.core.sandbox:result_variable",
                           serve=lambda kind, payload: None)  # fmt: skip
    assert result.ok, result.error


def fork_and_exit() -> None:
    """A child of the clean worker taken and ended: its channel closed, its exit awaited."""
    child, channel = WorkerServer.get().fork()
    channel.close()  # the child reads the end of its channel and exits
    if child.pidfd is not None:
        select.select([child.pidfd], [], [], 10)  # readable once the child has exited
    child.kill()


def pre_sandbox(path: str, passes: int) -> dict[str, Any]:
    """The code before the clean worker, played in a subprocess; or why not."""
    if not (Path(path) / "toolbench" / "envs" / "sheets.py").is_file():
        return {"skipped": f"no checkout of the pre-sandbox code at {path} (git worktree add {path} a16d781^)"}
    environment = {**os.environ, "PYTHONPATH": path}
    done = subprocess.run([sys.executable, "-c", _PRE_SANDBOX_SCRIPT, str(passes)], cwd=path, env=environment,
                          capture_output=True, text=True, timeout=1800, check=False)  # fmt: skip
    if done.returncode != 0:
        return {"skipped": f"the pre-sandbox run failed: {done.stderr.strip().splitlines()[-1:]}"}
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    if not measured["module"].startswith(str(Path(path).resolve())):
        return {"skipped": f"the subprocess imported {measured['module']}, not the checkout at {path}"}
    return {key: round(measured[key], 1) for key in ("cold", "warm", "floor")}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pre-sandbox", default=PRE_SANDBOX, help="a checkout of a16d781^ (default %(default)s)")
    parser.add_argument("--passes", type=int, default=3, help="warm passes of each side (default %(default)s)")
    args = parser.parse_args(argv)
    env = gym.make(ENV_ID).unwrapped
    tasks = env.tasks
    WorkerServer.get(CODE_ENV_MODULES)  # the clean worker's start-up (once per process) is not an episode's

    def env_pass() -> float:
        started = time.perf_counter()
        for task in tasks:
            env.reset(options={"task_id": task.id})
            assert env.step(task.references[0])[1] == 1.0, task.id
        return len(tasks) / (time.perf_counter() - started)

    cold, warm, empty, forked = env_pass(), 0.0, 0.0, 0.0
    for _ in range(args.passes):
        warm = max(warm, env_pass())
        empty = max(empty, _timed(empty_run, len(tasks)))
        forked = max(forked, _timed(fork_and_exit, len(tasks)))
    env.close()
    old = pre_sandbox(args.pre_sandbox, args.passes)
    result: dict[str, Any] = {
        "episodes": len(tasks),
        "env_cold_per_s": round(cold, 1),
        "env_warm_per_s": round(warm, 1),
        "empty_run_per_s": round(empty, 1),
        "fork_and_exit_per_s": round(forked, 1),
        "warm_share_of_empty_run": round(warm / empty, 2),
        "pre_sandbox": old,
    }
    print(
        f"Sheets program oracle: {cold:.1f} episodes/s cold, {warm:.1f} warm; floor: empty sandbox run "
        f"{empty:.1f}/s, fork and exit of the worker's child {forked:.1f}/s "
        f"(warm is {warm / empty:.2f} of the empty run)"
    )
    if "skipped" in old:
        print(f"pre-sandbox: skipped: {old['skipped']}")
    else:
        result["speedup_cold"] = round(cold / old["cold"], 2)
        result["speedup_warm"] = round(warm / old["warm"], 2)
        print(
            f"pre-sandbox code: {old['cold']} episodes/s cold, {old['warm']} warm (its floor, an empty fork "
            f"of the env: {old['floor']}/s); now {result['speedup_cold']}x cold, {result['speedup_warm']}x warm"
        )
    return result


if __name__ == "__main__":
    main()
