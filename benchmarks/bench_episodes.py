"""Oracle episodes per second for every env and mode: the first pass over the test split (cold:
references scored for the first time) and later passes (warm: reference results cached)."""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym
from profile_env import play_all

import toolbench


def episodes_per_second(env_id: str, mode: str, passes: int = 3) -> tuple[float, float]:
    env = gym.make(env_id, mode=mode)
    tasks = toolbench.load_tasks(env_id)
    actions = {task.id: env.unwrapped.oracle_actions(task) for task in tasks}  # the agent's work, not the env's
    rates = []
    for _ in range(passes):
        start = time.perf_counter()
        play_all(env, tasks, actions)
        rates.append(len(tasks) / (time.perf_counter() - start))
    return rates[0], max(rates[1:])


def main() -> dict[str, Any]:
    results: dict[str, Any] = {}
    for spec in toolbench.TASKS:
        for mode in spec.env_class().modes:
            # Tabletop has nothing to cache (each episode simulates): two passes are enough
            cold, warm = episodes_per_second(spec.env_id, mode, passes=2 if spec.name == "Tabletop" else 3)
            results[f"{spec.name}/{mode}"] = {
                "cold_episodes_per_s": round(cold, 1),
                "warm_episodes_per_s": round(warm, 1),
            }
            print(f"{spec.name:12s} {mode:11s} {cold:8.1f} episodes/s cold {warm:8.1f} warm")
    return results


if __name__ == "__main__":
    main()
