"""The shape of an AppBench task set per kind (SS, SM, MS, MM): prompt length, calls, apps, the
arguments a plan takes from earlier calls, and how many gold plans run on the apps' back-ends.

``shape(records)`` reads records in AppBench's shape (``{"input" or "prompt", "output"}``), ours or
AppBench's own ``test_ss/sm/ms/mm.json``; ``originals(folder)`` reads the latter where a user has them.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolbench.core.tasks import fixture_file
from toolbench.mock_services.apps.backend import Apps
from toolbench.mock_services.apps.extend import grown_world, run_gold_plan
from toolbench.mock_services.apps.model import World
from toolbench.mock_services.apps.plan import PlanError, Ref
from toolbench.mock_services.apps.records import gold_calls

KINDS = ("SS", "SM", "MS", "MM")
# A kind's prompt length and dependent arguments are "like the original" within this share of its mean.
TOLERANCE = 0.2


@dataclass(frozen=True)
class Shape:
    """Means per task of one kind of one task set."""

    tasks: int
    words: float  # words in the instruction
    words_range: tuple[int, int]
    calls: float
    apps: float  # distinct apps
    arguments: float  # every argument of every call
    dependent: float  # arguments whose value an earlier call returns (a reference)
    executed: int  # gold plans whose every call ran


def shape(records: Iterable[Mapping[str, Any]], world: World | None = None) -> Shape:
    """The shape of records of one kind; gold plans run on ``world`` (ours when None)."""
    apps = Apps(world)
    words, calls, distinct, arguments, dependent, executed = [], [], [], [], [], 0
    for record in records:
        prompt = str(record.get("input") or record.get("prompt") or "")
        words.append(len(prompt.split()))
        try:
            plan = gold_calls(record["output"])
        except PlanError:
            plan = []
        calls.append(len(plan))
        distinct.append(len({call.app for call in plan}))
        arguments.append(sum(len(call.args) for call in plan))
        dependent.append(sum(isinstance(value, Ref) for call in plan for value in call.args.values()))
        executed += bool(plan) and run_gold_plan(apps, plan) is None
    if not words:
        return Shape(0, 0.0, (0, 0), 0.0, 0.0, 0.0, 0.0, 0)
    mean = statistics.fmean
    return Shape(
        len(words),
        mean(words),
        (min(words), max(words)),
        mean(calls),
        mean(distinct),
        mean(arguments),
        mean(dependent),
        executed,
    )


def by_kind(records: Iterable[Mapping[str, Any]], world: World | None = None) -> dict[str, Shape]:
    """``shape`` of each kind of our records (their ``category``)."""
    records = list(records)
    return {kind: shape([r for r in records if r.get("category") == kind], world) for kind in KINDS}


def read_originals(folder: str | Path) -> dict[str, list[dict[str, Any]]]:
    """AppBench's ``test_<kind>.json`` records in ``folder``, per kind; ``OSError`` or ``ValueError`` when
    a file is missing or is not a JSON list."""
    found = {}
    for kind in KINDS:
        path = Path(folder) / f"test_{kind.lower()}.json"
        records = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(records, list) or not all(isinstance(r, dict) and "output" in r for r in records):
            raise ValueError(f"{path}: not AppBench's records (a JSON list of {{'input', 'output'}})")
        found[kind] = records
    return found


def originals(folder: str | Path) -> dict[str, Shape]:
    """The shape of AppBench's own test records, each file's plans run on our world grown for that file
    (as ``AppBenchEnv(task_file=...)`` plays them)."""
    shapes = {}
    for kind, records in read_originals(folder).items():
        world = grown_world([r["output"] for r in records])
        shapes[kind] = shape(records, world)
    return shapes


def near(ours: float, theirs: float) -> bool:
    """Whether our mean is within ``TOLERANCE`` of the original's (both zero counts as near)."""
    return abs(ours - theirs) <= TOLERANCE * theirs if theirs else ours == 0


def our_records(split: str) -> list[dict[str, Any]]:
    """Our shipped records of a split (``test``, ``train``, ``demo``)."""
    text = fixture_file("appbench", f"{split}.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


COLUMNS = ("kind", "tasks", "words/prompt", "words (range)", "calls", "apps", "arguments", "dependent", "executed")


def _cells(kind: str, a: Shape, b: Shape | None) -> list[str]:
    """One row: ours, or ours | the original's (``~``: within 20% of the original's mean, ``!``: not)."""

    def pair(ours: float, theirs: float | None, digits: int, judged: bool = False) -> str:
        if theirs is None:
            return f"{ours:.{digits}f}"
        mark = (" ~" if near(ours, theirs) else " !") if judged else ""
        return f"{ours:.{digits}f} | {theirs:.{digits}f}{mark}"

    def share(x: Shape) -> str:
        return f"{x.executed}/{x.tasks}"

    return [
        kind,
        f"{a.tasks} | {b.tasks}" if b else str(a.tasks),
        pair(a.words, b and b.words, 1, judged=True),
        "-".join(map(str, a.words_range)) + (" | " + "-".join(map(str, b.words_range)) if b else ""),
        pair(a.calls, b and b.calls, 2),
        pair(a.apps, b and b.apps, 2),
        pair(a.arguments, b and b.arguments, 2),
        pair(a.dependent, b and b.dependent, 2, judged=True),
        share(a) + (f" | {share(b)} ({100 * b.executed / max(b.tasks, 1):.1f}%)" if b else ""),
    ]


def table(ours: Mapping[str, Shape], theirs: Mapping[str, Shape] | None, ours_name: str, theirs_name: str) -> str:
    """Ours and the originals side by side, one row per kind, means per task."""
    rows = [list(COLUMNS)] + [_cells(kind, ours[kind], theirs[kind] if theirs else None) for kind in KINDS]
    widths = [max(len(row[n]) for row in rows) for n in range(len(COLUMNS))]
    head = f"AppBench task shape per kind, means per task: ours ({ours_name})"
    lines = [head + (f" | original ({theirs_name})" if theirs else "")]
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    if theirs is not None:
        lines.append(
            "~: our mean is within 20% of the original's, !: it is not. dependent: arguments an earlier call "
            "returns. executed: gold plans whose every call ran (the originals' on our world grown for their file)."
        )
    return "\n".join(lines)
