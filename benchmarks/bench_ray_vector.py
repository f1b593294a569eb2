"""``RayVectorEnv`` beside ``BatchedVectorEnv`` and a single env, on this machine.

Oracle episodes per second (program mode: one step is one episode, autoreset in the same step) of:

- one env in this process, stepped in a loop (the floor a vector env must beat to be worth it);
- ``BatchedVectorEnv`` with 2 worker processes holding ``num_envs`` envs in all;
- ``RayVectorEnv`` with 2 actors holding ``num_envs`` envs in all, on a local Ray of 2 CPUs.

Each vector env keeps the best of ``ROUNDS`` windows after a warm-up window. The 2-env rows (one env
per worker) show each transport's fixed cost per step: a pipe round trip against a Ray call. Ray
cannot beat the pipes on one machine; it pays when the envs need more CPUs than one machine has, and
with enough envs per actor that a step's work hides its fixed cost.

``python benchmarks/bench_ray_vector.py [--seconds S]`` (needs the ``ray`` extra)
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import gymnasium as gym
from bench_vector_envs import ROUNDS, VectorPlayer, oracle_by_task, single_env_rate

import toolbench

ENVS = ("OpenWeather", "HomeSearch")
SIZES = (2, 128, 512)


def single_env(env_id: str, seconds: float) -> float:
    """Oracle episodes per second of one env in this process (after a warm-up window)."""
    env = gym.make(env_id, mode="program", info_docs=False)
    oracle = oracle_by_task(env_id, mode="program")
    rates, seed = [], 0
    for _ in range(1 + ROUNDS):
        rate, seed = single_env_rate(env, oracle, seconds, seed)
        rates.append(rate)
    env.close()
    return max(rates[1:])


def vector(kind: type, env_id: str, num_envs: int, seconds: float) -> float:
    envs = kind(env_id, num_envs=num_envs, workers=2, autoreset_mode="SameStep", mode="program", info_docs=False)
    try:
        player = VectorPlayer(envs, oracle_by_task(env_id, mode="program"))
        return max([player.rate(seconds) for _ in range(1 + ROUNDS)][1:])
    finally:
        envs.close()


def main(seconds: float = 3.0) -> dict[str, Any]:
    import ray

    started = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    results: dict[str, Any] = {"ray_version": ray.__version__, "ray_init_s": round(time.perf_counter() - started, 1)}
    print(f"ray {ray.__version__}: ray.init took {results['ray_init_s']} s")
    header = ("envs", 5), ("single env", 11), ("batched 2", 10), ("ray 2 actors", 13), ("ray/batched", 12)
    print(f"{'env (program)':14} " + " ".join(f"{name:>{width}}" for name, width in header))
    try:
        for name in ENVS:
            env_id = f"toolbench/{name}-v0"
            single = single_env(env_id, seconds)
            for size in SIZES:
                batched = vector(toolbench.BatchedVectorEnv, env_id, size, seconds)
                on_ray = vector(toolbench.RayVectorEnv, env_id, size, seconds)
                results[f"{name}/{size}"] = {
                    "single_env_per_s": round(single, 1),
                    "batched_2_workers_per_s": round(batched, 1),
                    "ray_2_actors_per_s": round(on_ray, 1),
                    "ray_over_batched": round(on_ray / batched, 2),
                }
                print(
                    f"{name:14} {size:5} {single:11.1f} {batched:10.1f} {on_ray:13.1f} {on_ray / batched:12.2f}",
                    flush=True,
                )
    finally:
        ray.shutdown()
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="wall time of each measured window")
    main(parser.parse_args().seconds)
