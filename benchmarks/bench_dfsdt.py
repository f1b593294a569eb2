"""DFSDT's overhead per model call: node expansions per second against a scripted model that
answers at once (no network, no model time), next to the floor of the same env steps played
without a search.

The scripted model plays each task's reference calls on the first branch, gives up at its end,
and gives the reference answer on the second branch, so every search backtracks once, restoring
the env's state. Target: under 2 ms of the suite's own work per model call.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from toolbench.agents.toolllm import ToolLLMAgent

TASKS = 200


@dataclass
class Reply:
    content: str
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


class ScriptedModel:
    """Answers from the task's reference path; counts its calls."""

    def __init__(self, actions: list[str]) -> None:
        self.actions, self.calls = actions, 0

    def complete(self, messages: list[dict[str, Any]], tools: Any = None, **_: Any) -> Reply:
        self.calls += 1
        done = sum(1 for m in messages if m["role"] == "assistant")
        second_try = any("not your first try" in str(m.get("content")) for m in messages)
        if done < len(self.actions) - 1:
            action = json.loads(self.actions[done])
        elif second_try:
            action = json.loads(self.actions[-1])
        else:
            action = {"name": "Finish", "arguments": {"return_type": "give_up_and_restart"}}
        call = {"id": f"c{self.calls}", "type": "function",
                "function": {"name": action["name"], "arguments": json.dumps(action["arguments"])}}  # fmt: skip
        return Reply("", [call])


def expansions() -> dict[str, Any]:
    env = gym.make("toolbench/RapidAPI-v0", split="test").unwrapped
    tasks = [t for t in env.tasks if t.get("solvable")][:TASKS]
    calls, solved = 0, 0
    started = time.perf_counter()
    for task in tasks:
        model = ScriptedModel(env.oracle_actions(task))
        agent = ToolLLMAgent("scripted", "dfsdt", client=model)
        actions, _ = agent.solve(env, task)
        calls += model.calls
        solved += bool(actions) and json.loads(actions[-1])[-1]["name"] == "Finish"
    search_s = time.perf_counter() - started
    started = time.perf_counter()
    steps = 0
    for task in tasks:  # the floor: the reference steps alone
        env.reset(options={"task_id": task.id})
        for action in env.oracle_actions(task):
            env.step(action)
            steps += 1
    floor_s = time.perf_counter() - started
    return {
        "tasks": len(tasks),
        "solved": solved,
        "model_calls": calls,
        "expansions_per_s": round(calls / search_s),
        "overhead_ms_per_call": round(1000 * search_s / calls, 3),
        "env_steps_alone_ms": round(1000 * floor_s / steps, 3),
    }


def main() -> dict[str, Any]:
    measured = expansions()
    print(
        f"DFSDT: {measured['expansions_per_s']} node expansions/s, {measured['overhead_ms_per_call']} ms of the "
        f"suite's work per model call (target under 2 ms; an env step alone: {measured['env_steps_alone_ms']} ms); "
        f"{measured['solved']}/{measured['tasks']} searches ended in an answer after backtracking"
    )
    return measured


if __name__ == "__main__":
    main()
