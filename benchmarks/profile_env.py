"""Profile oracle episodes of one env and mode: where an episode's time goes.

``python benchmarks/profile_env.py HomeSearch program [--passes 5] [--top 25] [--sort tottime]``

Every task of the test split is played once to warm the caches (references scored, searches
kept), then ``--passes`` more times under cProfile; the top functions are printed.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from collections.abc import Callable

import gymnasium as gym

import toolbench


def play_all(env: gym.Env, tasks: list, actions: dict) -> None:
    """One episode per task, with ``actions[task.id]`` (the benchmarks' oracle pass)."""
    for task in tasks:
        env.reset(options={"task_id": task.id})
        for action in actions[task.id]:
            if any(env.step(action)[2:4]):
                break


def versus_floor(play: Callable[[], None], floor: Callable[[], None], episodes: int, passes: int) -> dict[str, float]:
    """Episodes per second of ``play`` and of ``floor`` (each plays ``episodes``) in alternating
    passes, each side keeping its best, and how many times its floor an episode costs."""
    play()  # warm: references scored, caches filled, as in any longer run
    floor()
    play_rates, floor_rates = [], []
    for _ in range(passes):
        play_rates.append(_rate(play, episodes))
        floor_rates.append(_rate(floor, episodes))
    play_rate, floor_rate = max(play_rates), max(floor_rates)
    return {
        "episodes_per_s": round(play_rate, 1),
        "floor_per_s": round(floor_rate, 1),
        "cost_over_floor": round(floor_rate / play_rate, 2),
    }


def _rate(run: Callable[[], None], count: int) -> float:
    start = time.perf_counter()
    run()
    return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task", help="a task name, e.g. HomeSearch")
    parser.add_argument("mode", nargs="?", help="program or interactive (default: the task's first mode)")
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--sort", default="tottime", choices=("tottime", "cumulative", "ncalls"))
    args = parser.parse_args()
    spec = toolbench.find_task(args.task)
    env = gym.make(spec.env_id, mode=args.mode or spec.modes[0])
    tasks = env.unwrapped.tasks
    actions = {task.id: env.unwrapped.oracle_actions(task) for task in tasks}
    play_all(env, tasks, actions)
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(args.passes):
        play_all(env, tasks, actions)
    profile.disable()
    print(f"{spec.name} {env.unwrapped.mode}: {args.passes} x {len(tasks)} episodes")
    pstats.Stats(profile).sort_stats(args.sort).print_stats(args.top)


if __name__ == "__main__":
    main()
