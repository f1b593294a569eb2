"""VirtualHome: program-mode oracle episodes per second and interactive steps per second, on one
core, next to the floor: ToolBench's own scoring of the same programs (parse and LCS, no home).

Target: at least 2,000 program-mode episodes per second.
"""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym

from toolbench.mock_services.virtualhome import clean_lines, lcs_score, parse_program

ROUNDS = 5


def program_mode() -> dict[str, Any]:
    env = gym.make("toolbench/VirtualHome-v0").unwrapped
    tasks = env.tasks
    started = time.perf_counter()
    for _ in range(ROUNDS):
        for task in tasks:
            env.reset(options={"task_id": task.id})
            _, reward, *_ = env.step(task.references[0])
            assert reward == 1.0, task.id
    episodes = ROUNDS * len(tasks)
    env_rate = episodes / (time.perf_counter() - started)
    started = time.perf_counter()
    for _ in range(ROUNDS):
        for task in tasks:  # the floor: what ToolBench's evaluator does with the same answer
            predicted = [call.line for call in parse_program(task.references[0])]
            max(lcs_score(predicted, clean_lines(reference)) for reference in task.references)
    floor_rate = episodes / (time.perf_counter() - started)
    return {"episodes": episodes, "env_per_s": round(env_rate), "scoring_only_per_s": round(floor_rate)}


def interactive_mode() -> dict[str, Any]:
    env = gym.make("toolbench/VirtualHome-v0", mode="interactive").unwrapped
    steps = 0
    started = time.perf_counter()
    for task in env.tasks:
        env.reset(options={"task_id": task.id})
        for action in env.oracle_actions(task):
            steps += 1
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                break
    return {"steps": steps, "steps_per_s": round(steps / (time.perf_counter() - started))}


def main() -> dict[str, Any]:
    program = program_mode()
    print(
        f"VirtualHome program oracle: {program['env_per_s']} episodes/s "
        f"(ToolBench's scoring alone: {program['scoring_only_per_s']}/s; target 2,000)"
    )
    interactive = interactive_mode()
    print(f"VirtualHome interactive oracle: {interactive['steps_per_s']} steps/s over {interactive['steps']} steps")
    return {"program": program, "interactive": interactive}


if __name__ == "__main__":
    main()
