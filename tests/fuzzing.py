"""Seeded fuzzing of every env: each action is a task's reference action, mutated (cut, spliced with
hostile text, reversed, repeated, shuffled). An action must never raise, never be an internal error,
and must not leave state behind: the reference still succeeds after the fuzzing.

``python -m tests.fuzzing 10000`` (``make fuzz``) is the long run: per env and mode it reports
exceptions, internal errors, whether the reference still succeeds, and the slowest action.
``tests/core/test_fuzz_references.py`` runs a few dozen actions per env in ``make test`` (next to
``tests/core/test_fuzz.py``, which mutates characters and tries edge cases).
"""

from __future__ import annotations

import random
import sys
import time
from dataclasses import dataclass, field

import gymnasium as gym

import toolbench
from tests.episodes import play

HOSTILE = ("\x00", "\ud800", "9" * 30, "(" * 200, "'", '"', "\\", "\n" * 50, "[[[[", "}", "é", "💥", "-1e309", "NaN")
CODE_TASKS = ("GoogleSheets", "Tabletop")  # each action runs a program: fewer, and never repeated 30 times


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


@dataclass
class Report:
    env_id: str
    mode: str
    actions: int = 0
    failures: list[str] = field(default_factory=list)
    slowest_s: float = 0.0
    reference_still_works: bool = True


def fuzz(env_id: str, mode: str, count: int, seed: str = "fuzz") -> Report:
    env = gym.make(env_id, mode=mode).unwrapped
    report = Report(env_id, mode)
    r = random.Random(f"{seed}/{env_id}/{mode}")
    repeat = 2 if any(name in env_id for name in CODE_TASKS) else 30
    try:
        for _ in range(count):
            task = env.tasks[r.randrange(len(env.tasks))]
            env.reset(options={"task_id": task.id})
            action = mutate(r, r.choice(env.oracle_actions(task) or [""]), repeat)
            started = time.perf_counter()
            try:
                *_, info = env.step(action)
            except Exception as exc:  # noqa: BLE001  (the point: nothing may escape)
                report.failures.append(f"raised {type(exc).__name__}: {str(exc)[:200]} <- {action[:80]!r}")
                continue
            report.slowest_s = max(report.slowest_s, time.perf_counter() - started)
            report.actions += 1
            if (info.get("error") or "").startswith("internal error"):
                report.failures.append(f"{info['error'][:200]} <- {action[:80]!r}")
        task = env.tasks[0]
        *_, info = play(env, task.id, env.oracle_actions(task))
        report.reference_still_works = bool(info["success"])
    finally:
        env.close()
    return report


def main(count: int) -> int:
    failed = False
    for spec in toolbench.TASKS:
        for mode in spec.modes:
            n = count // 10 if spec.name in CODE_TASKS else count
            report = fuzz(spec.env_id, mode, n)
            failed |= bool(report.failures) or not report.reference_still_works
            print(f"{spec.name:12} {mode:11} {report.actions:6} actions  failures {len(report.failures):3}  "
                  f"reference ok {report.reference_still_works}  slowest {report.slowest_s:.3f} s", flush=True)  # fmt: skip
            for failure in report.failures[:5]:
                print(f"    {failure}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000))
