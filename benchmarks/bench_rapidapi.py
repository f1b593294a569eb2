"""RapidAPI: tool calls per second through ``toolbench/RapidAPI-v0`` on one core (route the name,
parse the arguments, check them, run the handler, write and cut ToolBench's observation), next to
the floor: the same calls made on the hub directly (``hub.call``), and the oracle's episodes.

Target: at least 5,000 calls per second in the env.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym

from toolbench.mock_services.rapidapi.catalog import hub
from toolbench.mock_services.rapidapi.hub import call

ROUNDS = 3


def hub_floor(tasks: list[Any]) -> Callable[[], None]:
    """One pass of the floor: each task's solution calls made on the hub's handlers alone (the tool
    looked up beforehand), on a fresh session per task, each answer written as JSON."""
    plain = [
        [(hub().tool(s["tool_name"]), s["api_name"], s["arguments"]) for s in task.get("solution")] for task in tasks
    ]

    def floor() -> None:
        for steps in plain:
            state: dict[str, Any] = {}
            for tool, name, arguments in steps:
                json.dumps(call(tool, tool.api(name), arguments, state.setdefault(tool.standard_name, {})))

    return floor


def calls() -> dict[str, Any]:
    env = gym.make("toolbench/RapidAPI-v0", split="test").unwrapped
    tasks = [(task, env.oracle_actions(task)) for task in env.tasks]
    count, episodes = 0, 0
    started = time.perf_counter()
    for _ in range(ROUNDS):
        for task, actions in tasks:
            env.reset(options={"task_id": task.id})
            for action in actions[:-1]:
                env.step(action)
                count += 1
    env_rate = count / (time.perf_counter() - started)
    started = time.perf_counter()
    for _ in range(ROUNDS):
        for task, actions in tasks:
            env.reset(options={"task_id": task.id})
            for action in actions:
                env.step(action)
            episodes += 1
    episode_rate = episodes / (time.perf_counter() - started)
    floor = hub_floor(env.tasks)
    started = time.perf_counter()
    for _ in range(ROUNDS):
        floor()
    floor_rate = count / (time.perf_counter() - started)
    return {
        "calls": count,
        "env_calls_per_s": round(env_rate),
        "hub_calls_only_per_s": round(floor_rate),
        "oracle_episodes_per_s": round(episode_rate),
    }


def main() -> dict[str, Any]:
    measured = calls()
    print(
        f"RapidAPI tool calls in the env: {measured['env_calls_per_s']}/s (the hub's handlers alone: "
        f"{measured['hub_calls_only_per_s']}/s; target 5,000); oracle episodes: {measured['oracle_episodes_per_s']}/s"
    )
    return measured


if __name__ == "__main__":
    main()
