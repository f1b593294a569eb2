"""AppBench: program-mode oracle episodes per second on the test split (parse, check, run every call on
the apps' back-ends, score as a graph and by the paper's scorer), next to the floor: the answer read
line by line as AppBench's released parser reads it (its two regular expressions per line, the
arguments split at ", "), and the gold calls made on the back-ends directly, with their references
already filled in. As the other text envs' floors read the action (``shlex.split``, ``exec``'s
compile), this one reads it too; it neither checks nor scores.

Target: at least 2,000 episodes per second on one core.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym

from toolbench.mock_services.apps.backend import Apps
from toolbench.mock_services.apps.plan import Ref
from toolbench.mock_services.apps.records import gold_calls

ROUNDS = 3
# How AppBench's released parser reads an answer's line: "App: [call]", then "names = api(args)".
APP_LINE = re.compile(r"(\w+):\s*\n*(\[.*\])")
CALL = re.compile(r"(\w[\w\d_]*)\s*=\s*(\w[\w\d_]*)\(([^)]*)\)")


def read_answer(text: str) -> list[tuple[str, str, list[list[str]]]]:
    """Each line's app, API name and argument pairs, as the released parser splits them."""
    calls = []
    for line in text.splitlines():
        matched = APP_LINE.match(line)
        if matched is None:
            continue
        call = CALL.search(matched.group(2).replace("[", "").replace("]", ""))
        pairs = [piece.split("=", 1) for piece in call.group(3).split(", ")] if call else []
        calls.append((matched.group(1), call.group(2).lower() if call else "", pairs))
    return calls


def backend_floor(tasks: list[Any]) -> Callable[[], None]:
    """One pass of the floor: each task's answer read as the released parser reads it, and its gold
    calls made on the back-ends directly, after a reset, with their references to earlier results
    already resolved."""
    answers = [task.references[0] for task in tasks]
    plans = [gold_calls(task.get("output")) for task in tasks]
    apps = Apps()

    def floor() -> None:
        for answer, calls in zip(answers, plans):
            read_answer(answer)
            apps.reset()
            results: list[dict[str, str]] = []
            for call in calls:
                args = {k: results[v.source][v.name] if isinstance(v, Ref) else v for k, v in call.args.items()}
                results.append(apps.call(call.app, call.api, args))

    return floor


def episodes() -> dict[str, Any]:
    env = gym.make("toolbench/AppBench-v0").unwrapped
    tasks = env.tasks
    started = time.perf_counter()
    for _ in range(ROUNDS):
        for task in tasks:
            env.reset(options={"task_id": task.id})
            _, reward, *_ = env.step(task.references[0])
            assert reward == 1.0, task.id
    count = ROUNDS * len(tasks)
    env_rate = count / (time.perf_counter() - started)
    floor = backend_floor(tasks)
    started = time.perf_counter()
    for _ in range(ROUNDS):
        floor()
    floor_rate = count / (time.perf_counter() - started)
    return {"episodes": count, "env_per_s": round(env_rate), "calls_only_per_s": round(floor_rate)}


def main() -> dict[str, Any]:
    played = episodes()
    print(
        f"AppBench program oracle: {played['env_per_s']} episodes/s "
        f"(the back-end calls alone: {played['calls_only_per_s']}/s; target 2,000)"
    )
    return played


if __name__ == "__main__":
    main()
