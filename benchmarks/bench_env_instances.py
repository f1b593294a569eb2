"""What an env instance costs: per task, the first instance's ``gym.make`` + first ``reset`` (time and
RSS growth), the marginal cost of instances 2..N (the median instance's make+reset time, the mean
RSS growth), and the RSS of N envs in one process, beside the
floors: an empty interpreter's RSS and the process's RSS after ``import gymnasium, toolbench``.

Each task runs in its own subprocess, so no task finds another's data already loaded. RSS is read
from ``/proc/self/statm``; the sandbox workers a code task starts are other processes, reported
apart (``workers_mb``).

Targets: every instance beyond the first costs < 1 MB and < 5 ms; 64 envs of a text task < 300 MB.
Tabletop's floor, printed beside it, is a PyBullet client per env.

    .venv/bin/python benchmarks/bench_env_instances.py                  # every task, 64 envs each
    .venv/bin/python benchmarks/bench_env_instances.py --count 16 --tasks RapidAPI AppBench
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import toolbench

ROOT = Path(__file__).resolve().parents[1]
PAGE = os.sysconf("SC_PAGE_SIZE")
ALL_TASKS = tuple(spec.name for spec in toolbench.TASKS)
PYBULLET_FLOOR = "pybullet"


def rss_mb(pid: str = "self") -> float:
    with open(f"/proc/{pid}/statm") as handle:
        return int(handle.read().split()[1]) * PAGE / 2**20


def children_rss_mb() -> float:
    """RSS of this process's descendants (the code tasks' sandbox workers)."""
    total, pending = 0.0, [str(os.getpid())]
    while pending:
        pid = pending.pop()
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as handle:
                kids = handle.read().split()
        except OSError:
            continue
        for kid in kids:
            try:
                total += rss_mb(kid)
            except OSError:
                continue
            pending.append(kid)
    return total


def measure(task: str, count: int) -> dict[str, Any]:
    """In this process: make ``count`` envs of ``task`` one after another (each reset once)."""
    empty_mb = rss_mb()
    import gymnasium as gym

    import toolbench  # noqa: F401

    import_mb = rss_mb()
    envs = []
    started = time.perf_counter()
    env = gym.make(f"toolbench/{task}-v0")
    env.reset(seed=0)
    first_s = time.perf_counter() - started
    first_mb = rss_mb() - import_mb
    envs.append(env)
    before_mb = rss_mb()
    times = []
    for seed in range(1, count):
        started = time.perf_counter()
        env = gym.make(f"toolbench/{task}-v0")
        env.reset(seed=seed)
        times.append(time.perf_counter() - started)
        envs.append(env)
    total_mb = rss_mb()
    workers_mb = children_rss_mb()
    for env in envs:
        env.close()
    return {
        "empty_interpreter_mb": round(empty_mb, 1),
        "after_import_mb": round(import_mb, 1),
        "first_ms": round(1000 * first_s, 1),
        "first_mb": round(first_mb, 2),
        # The median instance: on a shared machine a busy moment lands on a few instances, not all.
        "marginal_ms": round(1000 * statistics.median(times), 2) if times else 0.0,
        "marginal_mean_ms": round(1000 * statistics.fmean(times), 2) if times else 0.0,
        "marginal_mb": round((total_mb - before_mb) / max(count - 1, 1), 3),
        "envs": count,
        "total_mb": round(total_mb, 1),
        "workers_mb": round(workers_mb, 1),
    }


def pybullet_floor(count: int) -> dict[str, Any]:
    """Tabletop's floor: PyBullet DIRECT clients held open, each a physics server of its own (an env
    steps its own scene; two envs cannot share one)."""
    import pybullet

    clients = [pybullet.connect(pybullet.DIRECT)]
    before_mb = rss_mb()
    times = []
    for _ in range(1, count):
        started = time.perf_counter()
        clients.append(pybullet.connect(pybullet.DIRECT))
        times.append(time.perf_counter() - started)
    total_mb = rss_mb()
    for client in clients:
        pybullet.disconnect(physicsClientId=client)
    return {
        "marginal_ms": round(1000 * statistics.median(times), 2) if times else 0.0,
        "marginal_mb": round((total_mb - before_mb) / max(count - 1, 1), 3),
    }


def run_task(task: str, count: int) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", task, "--count", str(count)],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(count: int = 64, tasks: tuple[str, ...] = ALL_TASKS) -> dict[str, Any]:
    results = {}
    print(
        f"{'task':<13} {'first ms':>9} {'first MB':>9} {'next ms':>8} {'next MB':>8} "
        f"{f'{count} envs MB':>11} {'(import)':>9} {'(empty)':>8} {'workers MB':>10}"
    )
    for task in tasks:
        row = results[task] = run_task(task, count)
        print(
            f"{task:<13} {row['first_ms']:>9.1f} {row['first_mb']:>9.2f} {row['marginal_ms']:>8.2f} "
            f"{row['marginal_mb']:>8.3f} {row['total_mb']:>11.1f} {row['after_import_mb']:>9.1f} "
            f"{row['empty_interpreter_mb']:>8.1f} {row['workers_mb']:>10.1f}"
        )
        if task == "Tabletop":
            floor = results["pybullet_client_floor"] = run_task(PYBULLET_FLOOR, count)
            print(f"{'(a PyBullet client alone)':<33} {floor['marginal_ms']:>8.2f} {floor['marginal_mb']:>8.3f}")
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=64, help="envs per task (default 64)")
    parser.add_argument("--tasks", nargs="+", default=list(ALL_TASKS))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        floor = args.child == PYBULLET_FLOOR
        print(json.dumps(pybullet_floor(args.count) if floor else measure(args.child, args.count)))
    else:
        main(args.count, tuple(args.tasks))
