"""Seeded fuzzing of every env and of the served fakes. Half the episodes are played with actions
generated from the env's own grammar (``tests.fuzz_actions``: its tools, API names and world, with
hostile arguments), the other half with one reference action, mutated (cut, spliced with hostile
text, reversed, repeated, shuffled). An action must never raise, never be an internal error, never
get a 5xx from a fake, and must not leave state behind: a reference episode played between them
gives exactly what it gave before any of them, and a seeded reset shows what a fresh env shows.
The served fakes get broken HTTP requests (``tests.fuzz_http``): no 5xx, and they keep serving.

``python -m tests.fuzzing 10000`` (``make fuzz``) is the long run: per env and mode it reports
exceptions, internal errors, 5xx answers, leaks, the process's memory growth after a warm-up and
the slowest action, then per served app 2,000 requests' 5xx, unanswered requests and statuses.
``python -m tests.fuzzing 10000 WebShop AppBench`` fuzzes those envs only, and no served app.
``tests/core/test_fuzz_references.py`` and ``tests/core/test_fuzz_served.py`` run a slice of both
in ``make test`` (next to ``tests/core/test_fuzz.py``, which mutates characters and tries edge cases).
"""

from __future__ import annotations

import gc
import json
import os
import random
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

import toolbench
from tests.episodes import play
from tests.fuzz_actions import generator_for
from tests.fuzz_http import fuzz_served
from toolbench.core.env import ACTION_MAX_LENGTH
from toolbench.core.program import SHORT_PROGRAM_CHARS
from toolbench.mock_services import SERVICES

HOSTILE = ("\x00", "\ud800", "9" * 30, "(" * 200, "'", '"', "\\", "\n" * 50, "[[[[", "}", "é", "💥", "-1e309", "NaN")
#: Each action runs a program: fewer, and never repeated 30 times.
CODE_TASKS = tuple(spec.name for spec in toolbench.TASKS if spec.runs_code)


def mutate(r: random.Random, text: str, repeat: int = 30) -> str:
    if not text:
        return r.choice(HOSTILE)
    kind, at = r.randrange(5), r.randrange(len(text) + 1)
    if kind == 0:
        return text[:at]
    if kind == 1:
        return text[:at] + r.choice(HOSTILE) + text[at:]
    if kind == 2:
        return text[:at] + text[at:][::-1]
    if kind == 3:
        return text * r.randint(2, repeat)
    return "".join(r.choice(text) for _ in range(min(len(text), 300)))


def longest_actions(reference: str, limit: int = ACTION_MAX_LENGTH) -> list[str]:
    """Hostile actions of the action space's full length: the reference repeated, and shapes that
    make readers work hard (open quotes and brackets, escapes, newlines, nesting, huge numbers, runs
    of blanks). Each also cut to the longest program the line reader of ``core.program`` reads."""
    shapes = [
        reference * (limit // max(1, len(reference)) + 1),
        reference + "\n" * limit,
        "curl -X GET '" + "\n" * limit,
        "curl -X POST 'https://x/' -d '" + "[" * limit,
        "curl " + "-H 'a: b' " * limit,
        "curl 'https://x/?" + "a=%ff&" * limit,
        'API.set_location("' + "\\" * limit,
        "API.search(" + "(" * limit,
        "x = " + "-" * limit + "1",
        "x = [" + "1," * limit,
        "print(" + "9" * limit + ")",
        '{"name": "search", "arguments": {"q": "' + "\\u00e9" * limit,
        '[{"name": "f"}' + ', {"name": "f"}' * limit,
        "'" * limit,
        '"' * limit,
        "#" * limit,
        "\\\n" * limit,
        "é猫\u2028" * limit,
        reference + " " * limit,
        "x" + "\t" * limit,
        "API.search(1" + " " * limit,
    ]
    return [shape[:limit] for shape in shapes] + [shape[:SHORT_PROGRAM_CHARS] for shape in shapes]


SERVER_ERROR = re.compile(r"\bHTTP 5\d\d\b|Internal Server Error")
LEAK_CHECKS = 20  # reference episodes played between the mutated ones, spread over the run


@dataclass
class Report:
    env_id: str
    mode: str
    actions: int = 0
    failures: list[str] = field(default_factory=list)  # exceptions, internal errors, 5xx and leaks, each said
    exceptions: int = 0
    internal_errors: int = 0
    server_errors: int = 0
    leaks: int = 0
    slowest_s: float = 0.0
    slowest_action: str = ""
    slowest_longest_s: float = 0.0  # of the longest_actions, each as long as the action space allows
    memory_growth_mb: float | None = None  # resident memory after the mutated actions minus after a tenth of them
    reference_still_works: bool = True


def resident_mb() -> float | None:
    """This process's resident memory (Linux), after a garbage collection."""
    gc.collect()
    statm = Path("/proc/self/statm")
    if not statm.exists():
        return None
    return int(statm.read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _episode(env: Any, task: Any) -> str:
    """A reference episode, as text: what a leak would change."""
    env.reset(options={"task_id": task.id})
    steps = []
    for action in env.oracle_actions(task):
        observation, reward, terminated, truncated, info = env.step(action)
        steps.append([observation, reward, terminated, truncated, info])
        if terminated or truncated:
            break
    return json.dumps(steps, sort_keys=True, default=repr)


def _difference(before: str, after: str) -> str:
    """Where two texts part, shown around that point."""
    at = next((i for i, (a, b) in enumerate(zip(before, after)) if a != b), min(len(before), len(after)))
    return f"{before[max(0, at - 60) : at + 100]!r} became {after[max(0, at - 60) : at + 100]!r}"


def _reset_text(env: Any, seed: int) -> str:
    """What a seeded reset shows, as text: a leak into the next episode would change it."""
    return json.dumps(env.reset(seed=seed), sort_keys=True, default=repr)


def _take(env: Any, action: str, report: Report) -> tuple[float, str, bool, dict[str, Any]] | None:
    """Take ``action``: how long the step took, its observation, whether the episode ended and its
    info, or None when it raised (counted in ``report``: nothing may escape an env)."""
    started = time.perf_counter()
    try:
        observation, _, terminated, truncated, info = env.step(action)
    except Exception as exc:  # noqa: BLE001  (the point: nothing may escape)
        report.exceptions += 1
        report.failures.append(f"raised {type(exc).__name__}: {str(exc)[:200]} <- {action[:80]!r}")
        return None
    return time.perf_counter() - started, observation, terminated or truncated, info


def _step(env: Any, task: Any, action: str, report: Report) -> tuple[float, str, bool, dict[str, Any]] | None:
    """Reset on ``task``, then take ``action``."""
    env.reset(options={"task_id": task.id})
    return _take(env, action, report)


def _check(report: Report, action: str, observation: str, info: dict[str, Any]) -> None:
    error = info.get("error") or ""
    if error.startswith("internal error"):
        report.internal_errors += 1
        report.failures.append(f"{error[:200]} <- {action[:80]!r}")
    statuses = info.get("http_status") or []
    if any(status >= 500 for status in statuses) or SERVER_ERROR.search(error + observation[:2000]):
        report.server_errors += 1
        report.failures.append(f"5xx: {(error or observation)[:200]} <- {action[:80]!r}")


def fuzz(
    env_id: str,
    mode: str,
    count: int,
    seed: str = "fuzz",
    long_actions: bool = False,
    generated: float = 0.5,
    memory: bool = True,
) -> Report:
    """``count`` actions on ``env_id`` in ``mode``: a share ``generated`` of the episodes are played
    with actions made from the env's grammar (``tests.fuzz_actions``, several steps in interactive
    mode), the others are one mutated reference action each. ``memory`` measures the resident memory's
    growth (each measure a full garbage collection: most of a second in a test worker's large heap)."""
    env = gym.make(env_id, mode=mode).unwrapped
    untouched = gym.make(env_id, mode=mode).unwrapped  # only ever reset: what a fresh env shows
    report = Report(env_id, mode)
    r = random.Random(f"{seed}/{env_id}/{mode}")
    repeat = 2 if any(name in env_id for name in CODE_TASKS) else 30
    grammar = generator_for(env, mode)
    reference_task = env.tasks[0]
    _episode(env, reference_task)  # warms a code env's worker: its first request may miss the deadline under load
    baseline = _episode(env, reference_task)
    checks = {count * (i + 1) // LEAK_CHECKS for i in range(LEAK_CHECKS)}
    warm = None
    try:
        while report.actions < count:
            task = env.tasks[r.randrange(len(env.tasks))]
            _, info = env.reset(options={"task_id": task.id})
            if r.random() < generated:
                actions = grammar.episode(r, info)[: count - report.actions]
            else:
                actions = [mutate(r, r.choice(env.oracle_actions(task) or [""]), repeat)]
            for action in actions:
                stepped = _take(env, action, report)
                report.actions += 1
                index = report.actions
                if stepped is not None:
                    elapsed, observation, ended, info = stepped
                    if elapsed > report.slowest_s:
                        report.slowest_s, report.slowest_action = elapsed, action[:80]
                    _check(report, action, observation, info)
                if memory and index == max(1, count // 10):
                    warm = resident_mb()
                if index in checks:
                    replayed = _episode(env, reference_task)
                    if replayed != baseline:
                        report.leaks += 1
                        report.failures.append(
                            f"leak: the reference episode changed after {index} actions: {_difference(baseline, replayed)}"
                        )
                    elif _reset_text(env, index) != _reset_text(untouched, index):
                        report.leaks += 1
                        report.failures.append(f"leak: a seeded reset differs from a fresh env's after {index} actions")
                    break  # the episode was replaced by the checks
                if stepped is None or stepped[2]:
                    break
        end = (
            resident_mb() if memory else None
        )  # the growth over the fuzzed actions (the longest ones below are a separate check)
        for action in longest_actions(env.oracle_actions(reference_task)[0]) if long_actions else []:
            stepped = _step(env, reference_task, action, report)
            if stepped is not None:
                report.slowest_longest_s = max(report.slowest_longest_s, stepped[0])
        if long_actions and _episode(env, reference_task) != baseline:
            report.leaks += 1
            report.failures.append("leak: the reference episode changed after the longest actions")
        *_, info = play(env, reference_task.id, env.oracle_actions(reference_task))
        report.reference_still_works = bool(info["success"])
        if warm is not None and end is not None:
            report.memory_growth_mb = round(end - warm, 1)
    finally:
        env.close()
        untouched.close()
    return report


SERVED_REQUESTS = 2000  # per served fake, in the long run


def main(count: int, requests: int = SERVED_REQUESTS, tasks: tuple[str, ...] = ()) -> int:
    """Fuzz every env and mode (or only ``tasks``' envs, and then no served app) and print the table."""
    unknown = set(tasks) - {spec.name for spec in toolbench.TASKS}
    if unknown:
        raise SystemExit(f"unknown task(s): {', '.join(sorted(unknown))}")
    failed = False
    print(f"{'env':12} {'mode':11} {'actions':>7} {'exc':>4} {'int':>4} {'5xx':>4} {'leaks':>5} {'memory':>9}  "
          "slowest action; slowest of the longest actions")  # fmt: skip
    for spec in toolbench.TASKS:
        if tasks and spec.name not in tasks:
            continue
        for mode in spec.modes:
            n = count // 10 if spec.name in CODE_TASKS else count
            report = fuzz(spec.env_id, mode, n, long_actions=True)
            failed |= bool(report.failures) or not report.reference_still_works
            growth = "-" if report.memory_growth_mb is None else f"{report.memory_growth_mb:+.1f} MB"
            print(f"{spec.name:12} {mode:11} {report.actions:7} {report.exceptions:4} {report.internal_errors:4} "
                  f"{report.server_errors:4} {report.leaks:5} {growth:>9}  {report.slowest_s:.3f} s "
                  f"({report.slowest_action[:30]!r}); {report.slowest_longest_s:.3f} s"
                  f"{'' if report.reference_still_works else '  REFERENCE FAILS'}", flush=True)  # fmt: skip
            for failure in report.failures[:5]:
                print(f"    {failure}")
    if tasks:
        return 1 if failed else 0
    print(
        f"\n{'served app':12} {'requests':>8} {'5xx':>4} {'unanswered':>10} {'stopped':>7}  slowest request; statuses"
    )
    for service in SERVICES:
        served = fuzz_served(service, requests)
        failed |= bool(served.failures)
        statuses = " ".join(f"{status or 'none'}:{n}" for status, n in sorted(served.statuses.items()))
        print(f"{service:12} {served.requests:8} {served.server_errors:4} {served.unanswered:10} "
              f"{served.health_failures:7}  {served.slowest_s:.3f} s; {statuses}", flush=True)  # fmt: skip
        for failure in served.failures[:5]:
            print(f"    {failure[:300]}")
    return 1 if failed else 0


if __name__ == "__main__":
    # python -m tests.fuzzing [COUNT [TASK ...]]
    raise SystemExit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000, tasks=tuple(sys.argv[2:])))
