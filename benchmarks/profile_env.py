"""Profile oracle episodes of one env and mode: where an episode's time goes.

``python benchmarks/profile_env.py HomeSearch program [--passes 5] [--top 25] [--sort tottime]``

Every task of the test split is played once to warm the caches (references scored, searches
kept), then ``--passes`` more times under cProfile; the top functions are printed.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats

import gymnasium as gym

import toolbench


def play_all(env: gym.Env, tasks: list, actions: dict) -> None:
    """One episode per task, with ``actions[task.id]`` (the benchmarks' oracle pass)."""
    for task in tasks:
        env.reset(options={"task_id": task.id})
        for action in actions[task.id]:
            if any(env.step(action)[2:4]):
                break


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
