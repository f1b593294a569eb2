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
from toolbench.mock_services.rapidapi.functions import FINISH
from toolbench.mock_services.rapidapi.hub import call
from toolbench.mock_services.rapidapi.passrule import MAX_ANSWER, Reading, says_cannot, states

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


def episode_floor(tasks: list[Any]) -> Callable[[], None]:
    """One pass of the episode floor: what any evaluator of the same episodes must do. Per task, each
    action's text read as JSON (and its arguments, where they are JSON text); each call run on the
    hub's handlers (the function's tool and API looked up beforehand, no routing, no checks of the
    call beyond the handler's own), on a fresh session per task, its answer written as JSON; and the
    final answer checked: its facts looked for as the pass rule reads them (``Reading``, ``states``),
    or for an unsolvable task whether it says the request cannot be done. Not the pass rule's guards
    (the calls an answer must rest on, pasted responses, lists of guesses) nor any bookkeeping: those
    are the env's, and what they cost is what the ratio shows."""
    episodes = []
    for task in tasks:
        apis = {}
        for step in task.get("solution") or []:
            tool = hub().tool(step["tool_name"])
            apis[step["function"]] = (tool, tool.api(step["api_name"]))
        facts = list(task.get("answer_facts") or [])
        episodes.append((list(task.references), apis, facts, bool(task.get("solvable", True))))

    def floor() -> None:
        for texts, apis, facts, solvable in episodes:
            state: dict[str, Any] = {}
            for text in texts:
                data = json.loads(text)
                arguments = data.get("arguments", {})
                if isinstance(arguments, str):
                    arguments = json.loads(arguments)
                if data["name"] == FINISH:
                    answer = arguments.get("final_answer") or ""
                    if solvable:
                        reading = Reading.of(answer[:MAX_ANSWER])
                        sum(states(reading, fact) for fact in facts)
                    else:
                        says_cannot(answer)
                    continue
                tool, api = apis[data["name"]]
                json.dumps(call(tool, api, arguments, state.setdefault(tool.standard_name, {})))

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
