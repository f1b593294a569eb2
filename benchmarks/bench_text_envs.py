"""The text envs against their floor, and a 2-worker vector env against two independent processes.

**Episodes and floor.** For each text env and mode (every text env but VirtualHome, which has its own
benchmark): oracle episodes per second over the test split (warm: every reference seen once before),
next to the floor measured in the same run on the same tasks, and the ratio (how many times its floor
an episode costs; the target is at most 2). The floor is the work no env can avoid, without the env
around it:

- curl tasks (OpenWeather, The Cat API): the command split into words by ``shlex.split`` (what the
  original harness's shell does first) and its request, built beforehand, sent to the fake
  in-process (The Cat API's store restored to its start first, as every episode starts there);
- call tasks (Home Search, Trip Booking): the original harness's own way, ``exec`` of the program
  text with the API object and the value constructors in scope, on a fresh backend (compiling the
  text, building its values such as ``Date(8, 25, 2023)``, and the backend's calls); interactive mode
  does the same for each call;
- RapidAPI: each task's solution calls on the hub's handlers alone, each answer written as JSON, on
  a fresh session per task (``bench_rapidapi.hub_floor``);
- AppBench: each task's gold calls on the apps' back-ends alone, after a reset, their references
  already resolved (``bench_appbench.backend_floor``); the same for both modes;
- WebShop: each task's expert actions on the shop alone, with each page's text
  (``bench_webshop.shop_floor``); the same for both modes.

Env and floor passes alternate, and each keeps its best pass, so both see the same machine.

**Vector env.** ``gym.make_vec(..., vectorization_mode="async")`` with 2 workers, stepped with
oracle actions, next to two single-env processes run at the same time (this machine's own ceiling
for two workers), each for the same wall time; the ratio is vector / combined (target at least 0.9). The batched
vector env and its two processes are each measured ``ROUNDS`` times and keep their best.
Then ``toolbench.BatchedVectorEnv`` with 2 workers holding ``--batch`` envs in all (each worker
steps its share per round trip), next to two single-env processes again; once as is, and once
with each process kept on its own CPU (``pin_workers=True``, and the two processes pinned alike).
Google Sheets is measured too, for contrast: a step of a few milliseconds against the vector env's
fixed cost per step (a round trip through pipes and the merging of infos in the main process).

``python benchmarks/bench_text_envs.py [--seconds S] [--batch N] [--floors-only]``
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import shlex
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
from bench_appbench import backend_floor
from bench_rapidapi import hub_floor
from bench_webshop import shop_floor
from profile_env import play_all

import toolbench
from toolbench.core.curl import find_curl_command

TEXT_ENVS = ("OpenWeather", "CatAPI", "HomeSearch", "TripBooking")
#: Every text env measured beside its floor (VirtualHome has its own benchmark).
FLOOR_ENVS = (*TEXT_ENVS, "RapidAPI", "AppBench", "WebShop")
#: With a code task for contrast: its steps take milliseconds, far more than a vector env's round trip.
VECTOR_ENVS = (*TEXT_ENVS, "GoogleSheets")
PASSES = 5
#: Timed windows per batched-vector measurement, each side keeping its best: this machine's
#: throughput wanders by a tenth from one window to the next.
ROUNDS = 3


def _curl_floor(env: Any, tasks: list[Any]) -> Callable[[], None]:
    commands = [find_curl_command(task.references[0]) for task in tasks]
    requests = [env.parse_action(task.references[0]).request for task in tasks]
    router = env._episode_router()
    store = getattr(env, "_store", None)  # The Cat API: each episode starts from the same store
    initial = getattr(env, "_initial", None)

    def floor() -> None:
        for command, request in zip(commands, requests):
            shlex.split(command)
            if store is not None:
                store.restore(initial)
            router.send(request)

    return floor


def _call_floor(env: Any, tasks: list[Any]) -> Callable[[], None]:
    # Per episode: the texts the env is given (the program, or one call per step), run as the original
    # harness ran them: exec with the API object and the value constructors in scope. These are our
    # own references, so exec is safe here; the env itself never runs an action.
    episodes = [env.oracle_actions(task) for task in tasks]

    def floor() -> None:
        for texts in episodes:
            namespace = {"API": env.new_api(), **env.constructors}
            for text in texts:
                exec(text, namespace)

    return floor


def _floor(name: str, env: Any, tasks: list[Any]) -> Callable[[], None]:
    """One pass of ``name``'s floor over ``tasks`` (see the module's docstring)."""
    if name == "RapidAPI":
        return hub_floor(tasks)
    if name == "AppBench":
        return backend_floor(tasks)
    if name == "WebShop":
        return shop_floor(env, tasks)
    return _curl_floor(env, tasks) if hasattr(env, "parse_action") else _call_floor(env, tasks)


def _rate(run: Callable[[], None], count: int) -> float:
    start = time.perf_counter()
    run()
    return count / (time.perf_counter() - start)


def env_versus_floor(name: str, mode: str) -> dict[str, float]:
    env_id = f"toolbench/{name}-v0"
    env = gym.make(env_id, mode=mode).unwrapped
    tasks = env.tasks
    actions = {task.id: env.oracle_actions(task) for task in tasks}
    floor = _floor(name, env, tasks)
    play_all(env, tasks, actions)  # warm: references scored, caches filled, as in any longer run
    floor()
    env_rates, floor_rates = [], []
    for _ in range(PASSES):
        env_rates.append(_rate(lambda: play_all(env, tasks, actions), len(tasks)))
        floor_rates.append(_rate(floor, len(tasks)))
    env_rate, floor_rate = max(env_rates), max(floor_rates)
    return {
        "episodes_per_s": round(env_rate, 1),
        "floor_per_s": round(floor_rate, 1),
        "cost_over_floor": round(floor_rate / env_rate, 2),
    }


# ----------------------------------------------------------------------------- vector env
def _oracle_by_task(env_id: str, mode: str) -> dict[str, list[str]]:
    env = gym.make(env_id, mode=mode).unwrapped
    return {task.id: env.oracle_actions(task) for task in env.tasks}


def _single_process(
    env_id: str, mode: str, seconds: float, info_docs: bool, start: Any, out: Any, cpu: int | None = None
) -> None:
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})
    env = gym.make(env_id, mode=mode, info_docs=info_docs)
    oracle = _oracle_by_task(env_id, mode)
    start.wait()
    out.put(single_env_rate(env, oracle, seconds)[0])


def single_env_rate(env: Any, oracle: dict[str, list[str]], seconds: float, seed: int = 0) -> tuple[float, int]:
    """Oracle episodes per second of one env played in a loop for ``seconds``, reset with seeds from
    ``seed`` on; and the next seed, for another window."""
    episodes, began = 0, time.perf_counter()
    while time.perf_counter() - began < seconds:
        _, info = env.reset(seed=seed)
        seed += 1
        for action in oracle[info["task_id"]]:
            if any(env.step(action)[2:4]):
                break
        episodes += 1
    return episodes / (time.perf_counter() - began), seed


def two_processes(env_id: str, mode: str, seconds: float, info_docs: bool, pin: bool = False) -> float:
    """Combined episodes per second of two single-env processes running at the same time (with
    ``pin``, each kept on its own CPU, as ``pin_workers`` keeps a vector env's workers)."""
    start, out = mp.Event(), mp.Queue()
    cpus = sorted(os.sched_getaffinity(0)) if pin else []
    workers = [
        mp.Process(
            target=_single_process,
            args=(env_id, mode, seconds, info_docs, start, out, cpus[index % len(cpus)] if cpus else None),
        )
        for index in range(2)
    ]
    for worker in workers:
        worker.start()
    time.sleep(1.0)  # both have built their env
    start.set()
    rates = [out.get(timeout=seconds + 120) for _ in workers]
    for worker in workers:
        worker.join()
    return sum(rates)


def _vector_rates(envs: Any, oracle: dict[str, list[str]], seconds: float, windows: int) -> list[float]:
    """Oracle episodes per second of a vector env autoresetting in the same step, in each of
    ``windows`` consecutive windows of ``seconds``."""
    _, infos = envs.reset(seed=0)
    queues = [list(oracle[task_id]) for task_id in infos["task_id"]]
    rates = []
    for _ in range(windows):
        episodes, began = 0, time.perf_counter()
        while time.perf_counter() - began < seconds:
            _, _, terminated, truncated, infos = envs.step([queue.pop(0) for queue in queues])
            for index, ended in enumerate(terminated | truncated):
                if ended:
                    episodes += 1
                    queues[index] = list(oracle[infos["task_id"][index]])
        rates.append(episodes / (time.perf_counter() - began))
    return rates


def vector_env(env_id: str, mode: str, seconds: float, info_docs: bool) -> float:
    """Episodes per second of an async vector env with 2 workers, autoresetting in the same step."""
    envs = gym.make_vec(
        env_id,
        num_envs=2,
        vectorization_mode="async",
        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP},
        mode=mode,
        info_docs=info_docs,
    )
    try:
        return _vector_rates(envs, _oracle_by_task(env_id, mode), seconds, 1)[0]
    finally:
        envs.close()


def batched_vector_env(env_id: str, mode: str, seconds: float, num_envs: int, pin: bool) -> float:
    """Episodes per second of ``toolbench.BatchedVectorEnv`` with 2 workers (``num_envs / 2`` envs
    each), autoresetting in the same step: the best of ``ROUNDS`` windows after a warm-up one (each
    of its envs fills its own caches, as the single env of each independent process does)."""
    envs = toolbench.BatchedVectorEnv(
        env_id, num_envs=num_envs, workers=2, autoreset_mode="SameStep", pin_workers=pin, mode=mode, info_docs=False
    )
    try:
        return max(_vector_rates(envs, _oracle_by_task(env_id, mode), seconds, 1 + ROUNDS)[1:])
    finally:
        envs.close()


def floor_table() -> dict[str, dict[str, float]]:
    """Every text env and mode beside its floor, printed as one table."""
    rows = {}
    print(f"{'env':12} {'mode':11} {'episodes/s':>11} {'floor/s':>9} {'cost/floor':>10}")
    for name in FLOOR_ENVS:
        for mode in toolbench.find_task(name).modes:
            row = env_versus_floor(name, mode)
            rows[f"{name}/{mode}"] = row
            print(
                f"{name:12} {mode:11} {row['episodes_per_s']:11.1f} {row['floor_per_s']:9.1f} "
                f"{row['cost_over_floor']:9.2f}x",
                flush=True,
            )
    return rows


def main(seconds: float = 4.0, batch: int = 128) -> dict[str, Any]:
    results: dict[str, Any] = {"episodes_and_floor": floor_table(), "vector_env": {}}
    print(f"\n{'env (program)':22} {'make_vec 2 async':>17} {'2 processes':>12} {'ratio':>6}")
    for name in VECTOR_ENVS:
        for info_docs in (True, False) if name in TEXT_ENVS else (True,):
            env_id = f"toolbench/{name}-v0"
            vector = vector_env(env_id, "program", seconds, info_docs)
            combined = two_processes(env_id, "program", seconds, info_docs)
            label = f"{name}{'' if info_docs else ' info_docs=False'}"
            results["vector_env"][label] = {
                "make_vec_async_2_per_s": round(vector, 1),
                "two_processes_per_s": round(combined, 1),
                "ratio": round(vector / combined, 2),
            }
            print(f"{label:22} {vector:17.1f} {combined:12.1f} {vector / combined:6.2f}", flush=True)
    results["batched_vector_env"] = {}
    print(f"\n{'env (program)':22} {f'batched {batch} on 2':>17} {'2 processes':>12} {'ratio':>6}")
    for name in TEXT_ENVS:
        env_id = f"toolbench/{name}-v0"
        for pin in (False, True):
            batched = batched_vector_env(env_id, "program", seconds, batch, pin)
            combined = max(two_processes(env_id, "program", seconds, False, pin) for _ in range(ROUNDS))
            label = f"{name}{' pinned' if pin else ''}"
            results["batched_vector_env"][label] = {
                "num_envs": batch,
                "batched_2_workers_per_s": round(batched, 1),
                "two_processes_per_s": round(combined, 1),
                "ratio": round(batched / combined, 2),
            }
            print(f"{label:22} {batched:17.1f} {combined:12.1f} {batched / combined:6.2f}", flush=True)
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="wall time of each vector-env measurement")
    parser.add_argument("--batch", type=int, default=128, help="num_envs of the batched vector env (2 workers)")
    parser.add_argument("--floors-only", action="store_true", help="only the table of episodes beside their floor")
    arguments = parser.parse_args()
    if arguments.floors_only:
        floor_table()
    else:
        main(arguments.seconds, arguments.batch)
