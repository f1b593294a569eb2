"""Profile oracle episodes of one env and mode: where an episode's time goes.

``python benchmarks/profile_env.py HomeSearch program [--passes 5] [--top 25] [--sort tottime]``

Every task of the test split is played once to warm the caches (references scored, searches
kept), then ``--passes`` more times under cProfile; the top functions are printed.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
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
    passes, and how many times its floor an episode costs. Each pass is timed in this process's CPU
    time (time the machine gives other work is not counted); the rates are the median passes', and
    the ratio is the median of each pass's ratio to the floor pass beside it, so a pass that other
    load slowed moves neither (a floor pass is short: keeping each side's best favoured the floor)."""
    play()  # warm: references scored, caches filled, as in any longer run
    floor()
    play_times, floor_times, ratios = [], [], []
    for _ in range(passes):
        play_times.append(_cpu_seconds(play))
        floor_times.append(_cpu_seconds(floor))
        ratios.append(play_times[-1] / floor_times[-1])
    return {
        "episodes_per_s": round(episodes / statistics.median(play_times), 1),
        "floor_per_s": round(episodes / statistics.median(floor_times), 1),
        "cost_over_floor": round(statistics.median(ratios), 2),
    }


def _cpu_seconds(run: Callable[[], None]) -> float:
    start = time.process_time()
    run()
    return time.process_time() - start


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
