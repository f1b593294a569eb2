"""Vector envs on two workers beside two independent processes and beside one env in one process.

For every text env and mode, oracle episodes per second (autoreset in the same step, ``info_docs=False``):

- ``one env``: one env played in a loop in this process (nothing else running);
- ``2 procs``: two single-env processes playing at the same time, this machine's ceiling for two
  workers; ``2 procs pinned``: the same, each process kept on its own CPU;
- ``batched``: ``toolbench.BatchedVectorEnv`` with 2 workers holding ``--batch`` envs in all;
  ``batched pinned``: the same env with each worker kept on its own CPU, as ``pin_workers=True`` does;
- ``make_vec``: ``gym.make_vec(..., vectorization_mode="async")`` with 2 envs, one per worker.

The ratios are each vector env over the two processes measured the same way (pinned over pinned), and
the batched env over one env. All sides are measured in turn, window after window (``--seconds``
each, ``ROUNDS`` rounds), and each keeps its best window, so they all see the same machine. Every
side is warmed first: each env fills its own caches (scored references, parsed programs) in its
first episodes of each task, and a batched env holds ``--batch`` of them.

Then the CPU split (``cpu_split``): for OpenWeather program, HomeSearch interactive and AppBench program,
the batched env's CPU time per episode in the main process (inside ``step``: sending actions, reading and
unpickling answers, building Gymnasium's info arrays) beside its workers' and beside one env's in this
process, the workers' floor. CPU time, not wall time, so load on the machine moves it little.

``python benchmarks/bench_vector_envs.py [--seconds S] [--batch N] [--envs OpenWeather HomeSearch ...] [--cpu-split]``
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import gymnasium as gym

import toolbench

#: Every task whose actions run no code in the sandbox (a step of those takes a worker round trip).
VECTOR_ENVS = tuple(spec.name for spec in toolbench.TASKS if not spec.runs_code)
#: Rounds of windows; each side keeps its best window (throughput here wanders from one to the next).
ROUNDS = 3
#: The split played: the test split, or the demo split where the test split has hundreds of tasks
#: (every env of a batched env plays every task once to warm up).
SPLITS = {"RapidAPI": "demo", "AppBench": "demo"}
CPUS = sorted(os.sched_getaffinity(0))


def oracle_by_task(env_id: str, **kwargs: Any) -> dict[str, list[str]]:
    env = gym.make(env_id, **kwargs).unwrapped
    return {task.id: env.oracle_actions(task) for task in env.tasks}


def warm(envs: Any, oracle: dict[str, list[str]]) -> None:
    """Every env plays every task once: each fills its own caches (scored references, parsed
    programs) in its first episode of a task, as any long run does. ``envs`` is one env or a vector
    env autoresetting in the same step."""
    vector = isinstance(envs, gym.vector.VectorEnv)
    for task_id, actions in oracle.items():
        envs.reset(options={"task_id": task_id})
        for action in actions:
            ended = envs.step([action] * envs.num_envs if vector else action)[2:4]
            if not vector and any(ended):
                break


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


class VectorPlayer:
    """A vector env (autoreset in the same step) playing oracle episodes, window after window."""

    def __init__(self, envs: Any, oracle: dict[str, list[str]]) -> None:
        self.envs, self.oracle = envs, oracle
        self.start()

    def start(self) -> None:
        """New episodes in every env, from seed 0 on."""
        _, infos = self.envs.reset(seed=0)
        # Each env's coming actions, as an iterator: the player's own work per step stays small
        # beside the vector env's (it runs in the same process, between steps).
        self.queues = [iter(self.oracle[task_id]) for task_id in infos["task_id"]]

    def rate(self, seconds: float) -> float:
        began = time.perf_counter()
        episodes, _, _ = self.play(seconds)
        return episodes / (time.perf_counter() - began)

    def play(self, seconds: float) -> tuple[int, int, float]:
        """Steps for ``seconds``; the episodes ended, the steps taken and this process's CPU time in
        ``step`` (the vector env's own work here, without the player's)."""
        envs, oracle, queues = self.envs, self.oracle, self.queues
        episodes, steps, cpu, began = 0, 0, 0.0, time.perf_counter()
        while time.perf_counter() - began < seconds:
            actions = list(map(next, queues))
            step_began = time.process_time()
            _, _, terminated, truncated, infos = envs.step(actions)
            cpu += time.process_time() - step_began
            steps += 1
            ended = (terminated | truncated).nonzero()[0].tolist()
            if ended:
                task_ids = infos["task_id"]
                episodes += len(ended)
                for index in ended:
                    queues[index] = iter(oracle[task_ids[index]])
        return episodes, steps, cpu


def _independent(pipe: Connection, env_id: str, kwargs: dict[str, Any]) -> None:
    """One of the two independent processes: builds and warms its env, then plays a window per request."""
    env = gym.make(env_id, **kwargs)
    oracle = oracle_by_task(env_id, **kwargs)
    warm(env, oracle)
    seed = 0
    pipe.send("ready")
    while (request := pipe.recv()) is not None:
        seconds, cpus = request
        os.sched_setaffinity(0, cpus)
        rate, seed = single_env_rate(env, oracle, seconds, seed)
        pipe.send(rate)
    env.close()


class TwoProcesses:
    """Two independent single-env processes, started once, each window played by both at once."""

    def __init__(self, env_id: str, kwargs: dict[str, Any]) -> None:
        self.pipes, self.processes = [], []
        for _ in range(2):
            parent, child = mp.Pipe()
            process = mp.Process(target=_independent, args=(child, env_id, kwargs), daemon=True)
            process.start()
            self.pipes.append(parent)
            self.processes.append(process)
        for pipe in self.pipes:
            pipe.recv()

    def rate(self, seconds: float, pin: bool) -> float:
        for index, pipe in enumerate(self.pipes):
            pipe.send((seconds, {CPUS[index % len(CPUS)]} if pin else set(CPUS)))
        return sum(pipe.recv() for pipe in self.pipes)

    def close(self) -> None:
        for pipe, process in zip(self.pipes, self.processes):
            pipe.send(None)
            process.join(timeout=30)


def _cpu_seconds(process: Any) -> float:
    """User and system CPU time a child process has used so far (Linux's /proc)."""
    fields = Path(f"/proc/{process.pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pin_batched(envs: Any, pin: bool) -> None:
    """What ``pin_workers=True`` does at start (worker ``w`` on the ``w``-th CPU), switched on or off,
    so one warm batched env is measured both ways."""
    for worker, process in enumerate(envs._processes):
        os.sched_setaffinity(process.pid, {CPUS[worker % len(CPUS)]} if pin else set(CPUS))


def measure(name: str, mode: str, seconds: float, batch: int) -> dict[str, float]:
    env_id = f"toolbench/{name}-v0"
    kwargs = {"mode": mode, "info_docs": False, "split": SPLITS.get(name, "test")}
    oracle = oracle_by_task(env_id, **kwargs)
    one = gym.make(env_id, **kwargs)
    pair = TwoProcesses(env_id, kwargs)
    batched = toolbench.BatchedVectorEnv(env_id, num_envs=batch, workers=2, autoreset_mode="SameStep", **kwargs)
    same_step = {"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}
    async_envs = gym.make_vec(env_id, num_envs=2, vectorization_mode="async", vector_kwargs=same_step, **kwargs)
    try:
        batched_player = VectorPlayer(batched, oracle)
        cold = batched_player.rate(seconds)  # its envs' caches still empty
        for envs in (one, batched, async_envs):
            warm(envs, oracle)
        batched_player.start()
        async_player = VectorPlayer(async_envs, oracle)
        seed = 0

        cpu_per_episode = {"one_env": float("inf"), "batched": float("inf")}

        def one_env(window: float) -> float:
            nonlocal seed
            began = time.process_time()
            rate, seed = single_env_rate(one, oracle, window, seed)
            cpu_per_episode["one_env"] = min(cpu_per_episode["one_env"], (time.process_time() - began) / window / rate)
            return rate

        def batched_rate(window: float, pin: bool) -> float:
            _pin_batched(batched, pin)
            began = time.process_time() + sum(map(_cpu_seconds, batched._processes))
            rate = batched_player.rate(window)
            cpu = time.process_time() + sum(map(_cpu_seconds, batched._processes)) - began
            cpu_per_episode["batched"] = min(cpu_per_episode["batched"], cpu / window / rate)
            return rate

        sides: dict[str, Callable[[float], float]] = {
            "one_env": one_env,
            "two_processes": lambda window: pair.rate(window, False),
            "two_processes_pinned": lambda window: pair.rate(window, True),
            "batched": lambda window: batched_rate(window, False),
            "batched_pinned": lambda window: batched_rate(window, True),
            "make_vec_async": async_player.rate,
        }
        best = dict.fromkeys(sides, 0.0)
        for _ in range(ROUNDS):
            for key, side in sides.items():
                best[key] = max(best[key], side(seconds))
    finally:
        for closable in (one, batched, async_envs, pair):
            closable.close()
    best["batched_cold"] = cold
    row = {f"{key}_per_s": round(rate, 1) for key, rate in best.items()}
    row["batched_ratio"] = round(best["batched"] / best["two_processes"], 2)
    row["batched_pinned_ratio"] = round(best["batched_pinned"] / best["two_processes_pinned"], 2)
    row["batched_over_one_env"] = round(max(best["batched"], best["batched_pinned"]) / best["one_env"], 2)
    row["batched_cold_ratio"] = round(cold / best["two_processes"], 2)
    row["make_vec_async_ratio"] = round(best["make_vec_async"] / best["two_processes"], 2)
    # CPU time per episode, all of the batched env's processes against one env's: what the vector env
    # adds to each episode's work, whatever else the machine runs (waits are not CPU time).
    row["batched_cpu_per_episode_over_one_env"] = round(cpu_per_episode["batched"] / cpu_per_episode["one_env"], 2)
    return row


#: The CPU split's cases: a program-mode curl env, an interactive env (several steps an episode) and
#: a program-mode API-program env.
CPU_SPLIT_CASES = (("OpenWeather", "program"), ("HomeSearch", "interactive"), ("AppBench", "program"))
#: Wall time of each case of the CPU split, over all its rounds.
CPU_SPLIT_SECONDS = 3.0


def cpu_split(name: str, mode: str, seconds: float = 2.0, batch: int = 128) -> dict[str, float]:
    """Where a warm batched env's CPU time goes, per episode: the main process (sending actions,
    reading answers, building Gymnasium's info arrays) beside the workers (stepping the envs, building
    their slices' parts), and beside one env played in this process, the workers' floor. CPU time,
    not wall time: other load on the machine does not move it. Windows alternate between the batched
    env and the one env; each keeps its lowest."""
    env_id = f"toolbench/{name}-v0"
    kwargs = {"mode": mode, "info_docs": False, "split": SPLITS.get(name, "test")}
    oracle = oracle_by_task(env_id, **kwargs)
    one = gym.make(env_id, **kwargs)
    batched = toolbench.BatchedVectorEnv(env_id, num_envs=batch, workers=2, autoreset_mode="SameStep", **kwargs)
    best = {"main": float("inf"), "workers": float("inf"), "one_env": float("inf"), "main_per_step": float("inf")}
    try:
        for envs in (one, batched):
            warm(envs, oracle)
        player = VectorPlayer(batched, oracle)
        seed = 0
        for _ in range(ROUNDS):
            began = time.process_time()
            rate, seed = single_env_rate(one, oracle, seconds / ROUNDS, seed)
            best["one_env"] = min(best["one_env"], (time.process_time() - began) / (rate * seconds / ROUNDS))
            workers_began = sum(map(_cpu_seconds, batched._processes))
            episodes, steps, main = player.play(seconds / ROUNDS)
            workers = sum(map(_cpu_seconds, batched._processes)) - workers_began
            best["main"] = min(best["main"], main / episodes)
            best["main_per_step"] = min(best["main_per_step"], main / steps)
            best["workers"] = min(best["workers"], workers / episodes)
    finally:
        one.close()
        batched.close()
    row = {f"{key}_us_per_episode": round(value * 1e6, 1) for key, value in best.items() if key != "main_per_step"}
    row["main_us_per_step"] = round(best["main_per_step"] * 1e6, 1)
    row["main_share"] = round(best["main"] / (best["main"] + best["workers"]), 3)
    row["workers_over_one_env"] = round(best["workers"] / best["one_env"], 2)
    return row


def print_cpu_split(seconds: float, batch: int, cases: tuple[tuple[str, str], ...] = CPU_SPLIT_CASES) -> dict[str, Any]:
    """The CPU split's table, one row per case."""
    rows: dict[str, Any] = {}
    print(
        f"{'env':12} {'mode':11} {'main µs/ep':>10} {'workers µs/ep':>13} {'1 env µs/ep':>11} {'main µs/step':>12} "
        f"{'main share':>10}"
    )
    for name, mode in cases:
        row = rows[f"{name}/{mode}"] = cpu_split(name, mode, seconds, batch)
        print(
            f"{name:12} {mode:11} {row['main_us_per_episode']:10.1f} {row['workers_us_per_episode']:13.1f} "
            f"{row['one_env_us_per_episode']:11.1f} {row['main_us_per_step']:12.1f} {row['main_share']:10.3f}",
            flush=True,
        )
    return rows


def main(seconds: float = 0.75, batch: int = 128, names: tuple[str, ...] = VECTOR_ENVS) -> dict[str, Any]:
    """Each text env and mode's row, printed as one table; ratios are vector env over two processes."""
    rows: dict[str, Any] = {"num_envs": batch, "seconds": seconds}
    print(
        f"{'env':12} {'mode':11} {'1 env':>7} {'2 procs':>8} {'pinned':>8} {f'batch {batch}':>9} {'pinned':>8} "
        f"{'async 2':>8} {'cold':>7} | {'batch/2p':>8} {'pin/2p':>7} {'batch/1':>7} {'async/2p':>8} {'cold/2p':>7} "
        f"{'cpu/ep':>6}"
    )
    for name in names:
        for mode in toolbench.find_task(name).modes:
            row = measure(name, mode, seconds, batch)
            rows[f"{name}/{mode}"] = row
            print(
                f"{name:12} {mode:11} {row['one_env_per_s']:7.0f} {row['two_processes_per_s']:8.0f} "
                f"{row['two_processes_pinned_per_s']:8.0f} {row['batched_per_s']:9.0f} "
                f"{row['batched_pinned_per_s']:8.0f} {row['make_vec_async_per_s']:8.0f} "
                f"{row['batched_cold_per_s']:7.0f} | {row['batched_ratio']:8.2f} {row['batched_pinned_ratio']:7.2f} "
                f"{row['batched_over_one_env']:7.2f} {row['make_vec_async_ratio']:8.2f} "
                f"{row['batched_cold_ratio']:7.2f} {row['batched_cpu_per_episode_over_one_env']:6.2f}",
                flush=True,
            )
    rows["cpu_split"] = print_cpu_split(CPU_SPLIT_SECONDS, batch)
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.75, help="wall time of each measured window")
    parser.add_argument("--batch", type=int, default=128, help="num_envs of the batched vector env (2 workers)")
    parser.add_argument("--envs", nargs="+", default=list(VECTOR_ENVS), help="the envs to measure")
    parser.add_argument("--cpu-split", action="store_true", help="only the CPU split of the main process and workers")
    arguments = parser.parse_args()
    if arguments.cpu_split:
        print_cpu_split(CPU_SPLIT_SECONDS, arguments.batch)
    else:
        main(arguments.seconds, arguments.batch, tuple(arguments.envs))
