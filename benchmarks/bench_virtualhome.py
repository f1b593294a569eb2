"""VirtualHome against its floor, in both modes: oracle episodes per second over the test split
(warm: every task played once first), the floor measured in the same run on the same tasks, and
the ratio (how many times its floor an episode costs; the target is at most 2).

The floor is the work any evaluator of the same answers must do, with nothing of the env around it:

- ``program``: parse the program (ToolBench's cleaning and executable check), run its calls in the
  simulator's state machine from the task's start until one fails, check the task's goals (of the
  alternative met most), and score the LCS against the task's references (cleaned once beforehand,
  as any evaluator would keep them).
- ``interactive``: the same per step: clean and check the one line, apply it to the state (which
  also gives the message saying what happened or which precondition failed, the least an agent must
  be told), and at ``Agent.Done()`` check the goals and score the LCS. No description of the scene
  is built: it is the env's own addition to the observation.

In both, an episode's start is a copy of the task's start state prepared beforehand (``World.copy``),
the cheapest way to begin from it. The floor is thus stricter than ToolBench's scoring alone (parse
and LCS, no home), which the earlier version of this script compared against: running the program
in the home is work the task defines, not the env's overhead.

Env and floor passes alternate (9 of each), timed in CPU time; the rates are the median passes' and
the ratio the median of each env pass's ratio to the floor pass beside it (``profile_env.versus_floor``).

``python benchmarks/bench_virtualhome.py [--passes N]``
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import gymnasium as gym
from profile_env import play_all, versus_floor

from toolbench.envs.virtualhome import FINISH, VirtualHomeEnv
from toolbench.mock_services.virtualhome import World, build_home, clean_lines, parse_program, start_world
from toolbench.mock_services.virtualhome.original import goal_sets
from toolbench.mock_services.virtualhome.program import best_lcs, ground

PASSES = 9


def _score(world: World, lines: list[str], goal_options: list[list[str]], references: list[list[str]]) -> float:
    """The end of an episode: the goals of the alternative met most, and the best LCS."""
    best_met = 0
    for goals in goal_options:
        best_met = max(best_met, sum(world.holds(goal) for goal in goals))
    return best_lcs(lines, references) + best_met


def _floor(env: VirtualHomeEnv, mode: str) -> Callable[[], None]:
    check = env.check
    episodes = []
    for task in env.tasks:
        start = start_world(build_home(int(task.get("home", 0))), task.get("start", ()), task.get("rules", "ours"))
        references = [[line for line in clean_lines(ref, check) if line] for ref in task.references]
        episodes.append((start, env.oracle_actions(task), goal_sets(task), references))

    def program() -> None:
        for start, (text,), goal_options, references in episodes:
            world = start.copy()
            calls = parse_program(text, check)
            for call in calls:
                if not call.executable or not world.do(call.action or "", call.args).ok:
                    break
            _score(world, [call.line for call in calls if call.line], goal_options, references)

    def interactive() -> None:
        for start, actions, goal_options, references in episodes:
            world = start.copy()
            lines = []
            for text in actions:
                (line,) = clean_lines(text, check)
                if line == FINISH:
                    _score(world, lines, goal_options, references)
                    break
                call = ground(line, check)
                lines.append(call.line)
                if call.executable:
                    world.do(call.action or "", call.args)

    return program if mode == "program" else interactive


def env_versus_floor(mode: str, passes: int = PASSES) -> dict[str, float]:
    env = gym.make("toolbench/VirtualHome-v0", mode=mode).unwrapped
    tasks = env.tasks
    actions = {task.id: env.oracle_actions(task) for task in tasks}
    return versus_floor(lambda: play_all(env, tasks, actions), _floor(env, mode), len(tasks), passes)


def main(passes: int = PASSES) -> dict[str, Any]:
    results = {}
    for mode in VirtualHomeEnv.modes:
        result = results[mode] = env_versus_floor(mode, passes)
        print(
            f"VirtualHome {mode:<11} {result['episodes_per_s']:>9,.0f} episodes/s, floor "
            f"{result['floor_per_s']:>9,.0f}/s: {result['cost_over_floor']:.2f}x its floor (target at most 2)"
        )
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=PASSES)
    main(parser.parse_args().passes)
