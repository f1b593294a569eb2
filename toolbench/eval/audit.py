"""``toolbench audit``: cheap policies on every env and mode, each held to a ceiling.

A number is only worth publishing if doing the task is the only way to earn it. The audit plays
the oracle (the top of the scale), the random agent (another task's reference) and every cheap
policy of ``agents/cheap.py`` that applies, on the test split of every env and mode, and holds
each policy's ``success_rate`` and ``score`` to a ceiling. Every ceiling other than the defaults says
why in its env class's ``audit_allowances``: what the benchmark's own metric pays for, and what the
paper says of it. The command exits 1 when a policy passes a ceiling; with ``--out`` each policy's
episodes are a run folder (``OUT/<mode>/<policy>``) that ``toolbench view`` shows.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from toolbench.agents.cheap import POLICIES
from toolbench.catalog import TASKS, TaskSpec, find_task
from toolbench.eval.harness import evaluate, plan_run, seen_template
from toolbench.eval.tables import text_table

#: No cheap policy may pass more than one task in ten: ``success`` is the criterion that cannot be
#: earned for free (DESIGN.md).
SUCCESS_CEILING = 0.10
#: Nor earn more partial credit than this on average, unless an allowance of the env class says why.
SCORE_CEILING = 0.15
BOUNDED = ("success_rate", "score")
#: Reported beside the bounded ones: the papers' weaker criteria and the partial-credit metrics.
REPORTED = ("paper_success", "f1", "lcs", "goal_rate", "cell_accuracy", "f1_app", "f1_api", "reward")


@dataclass(frozen=True)
class Allowance:
    """A ceiling other than the default for one policy on one task's split, and why: an env class's
    ``audit_allowances`` entry, with the task it is for."""

    policy: str
    task: str
    ceilings: dict[str, float]
    why: str
    split: str = "test"


def task_allowances(task: str) -> tuple[Allowance, ...]:
    """The allowances ``task``'s env class states (none for a task outside the catalog)."""
    try:
        spec = find_task(task)
    except KeyError:
        return ()
    return tuple(
        Allowance(entry.policy, spec.name, dict(entry.ceilings), entry.why, entry.split)
        for entry in spec.env_class().audit_allowances
    )


def allowances() -> tuple[Allowance, ...]:
    """Every catalog task's allowances, in the catalog's order."""
    return tuple(allowance for spec in TASKS for allowance in task_allowances(spec.name))


#: The splits the audit plays: ``test`` (the papers' setting, whose templates demos and train share)
#: and ``unseen`` (held-out templates, where copying and parsing must fail).
SPLITS = ("test", "unseen")
#: Policies only reported on ``test``: they copy the seen templates that test shares with demo and
#: train by design (ToolBench's alignment data is those templates); ``unseen`` bounds them.
REPORTED_ON_TEST = {
    "nearest_copy": "test shares its templates with demo and train (the papers' setting), so swapping the "
    "differing words into the closest seen answer reads most of it; unseen, which shares none, bounds it",
    "reward_search": "it plays the closest copies (as nearest_copy) and has no grade to choose among them by; "
    "unseen bounds it",
}


def ceiling(policy: str, task: str, metric: str, split: str = "test") -> float | None:
    """The ceiling of ``policy`` on ``task``'s ``split`` for ``metric`` (None: reported, not bounded)."""
    if split == "test" and policy in REPORTED_ON_TEST:
        return None
    for allowance in task_allowances(task):
        if (allowance.policy, allowance.split) == (policy, split) and metric in allowance.ceilings:
            return allowance.ceilings[metric]
    return {"success_rate": SUCCESS_CEILING, "score": SCORE_CEILING}.get(metric)


def why(policy: str, task: str, split: str = "test") -> str | None:
    if split == "test" and policy in REPORTED_ON_TEST:
        return REPORTED_ON_TEST[policy]
    return next((e.why for e in task_allowances(task) if (e.policy, e.split) == (policy, split)), None)


@dataclass
class AuditRow:
    """One policy on one task and mode: its numbers, ceilings and whether it stayed below them."""

    task: str
    mode: str
    policy: str
    n: int
    metrics: dict[str, float | None]
    ceilings: dict[str, float] = field(default_factory=dict)
    #: Played on a sample of the split: a ceiling then allows for sampling error (``margin``).
    sampled: bool = False
    split: str = "test"

    def margin(self, ceiling: float) -> float:
        """How far a sample's mean may pass ``ceiling`` by chance (one-sided 95%, a mean of values
        in [0, 1] whose true mean is the ceiling); 0 over the whole split."""
        return 1.645 * math.sqrt(ceiling * (1 - ceiling) / self.n) if self.sampled and self.n else 0.0

    @property
    def over(self) -> list[str]:
        """The bounded metrics above their ceiling."""
        return [
            name
            for name, top in self.ceilings.items()
            if (self.metrics.get(name) or 0.0) > top + self.margin(top) + 1e-9
        ]


def policies_for(spec: TaskSpec, mode: str) -> list[str]:
    """The agents the audit plays on a task and mode: oracle, random, then the cheap policies."""
    cheap = [name for name, policy in POLICIES.items() if policy().applies(spec.name, mode, spec.splits)]
    return ["oracle", "random", *cheap]


def agent_spec(policy: str) -> str:
    return policy if policy in ("oracle", "random") else f"cheap:{policy}"


def sample(
    tasks: Sequence[Any], size: int | None, stratum: Callable[[Any], tuple[Any, ...]] | None = None
) -> tuple[Any, ...]:
    """``size`` tasks, or all, in the split's order. ``stratum(task)`` is a tuple such as (seen
    template?, kind): its first part's groups (seen and unseen templates; AppBench's kinds; RapidAPI's
    groups) get shares of the sample in proportion to their sizes (largest remainder, at least one
    each while there is room), and within a group its kinds are taken in turn, each spread over its
    tasks."""
    if size is None or size >= len(tasks):
        return tuple(tasks)
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for task in tasks:
        groups.setdefault(stratum(task) if stratum else (), []).append(task)
    families: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
    for key in groups:
        families.setdefault(key[:1], []).append(key)
    counts = dict.fromkeys(groups, 0)
    for family, share in _shares({f: sum(len(groups[k]) for k in keys) for f, keys in families.items()}, size).items():
        left = share
        while left:
            live = [key for key in families[family] if counts[key] < len(groups[key])]
            for key in live[:left]:
                counts[key] += 1
            left -= min(left, len(live))
    chosen = {id(group[i * len(group) // counts[key]]) for key, group in groups.items() for i in range(counts[key])}
    return tuple(task for task in tasks if id(task) in chosen)


def _shares(sizes: dict[Any, int], size: int) -> dict[Any, int]:
    """``size`` split over groups of ``sizes`` in proportion (largest remainder, ties in order), at
    least one each while ``size`` allows, never more than a group holds."""
    total = sum(sizes.values())
    floor = min(1, size // len(sizes)) if sizes else 0
    exact = {key: max(floor, size * n / total) for key, n in sizes.items()}
    shares = {key: min(int(value), sizes[key]) for key, value in exact.items()}
    for key in sorted(exact, key=lambda k: -(exact[k] - int(exact[k]))):
        if sum(shares.values()) >= size:
            break
        if shares[key] < sizes[key]:
            shares[key] += 1
    while sum(shares.values()) > size:  # the floors of small groups took room from the largest
        largest = max(shares, key=lambda k: shares[k])
        shares[largest] -= 1
    return shares


def run_audit(
    tasks: Iterable[str] = (),
    modes: Sequence[str] | None = None,
    policies: Sequence[str] | None = None,
    limit: int | None = None,
    workers: int = 1,
    out: str | Path | None = None,
    progress: Callable[[AuditRow], None] | None = None,
    splits: Sequence[str] = SPLITS,
) -> list[AuditRow]:
    """Play the policies on the test and unseen splits of each task (all by default) in each mode;
    one row per task, mode, split and policy. ``limit``: a sample of that many tasks per env and
    split, stratified (``sample``), judged with a margin for sampling error. ``out``: a run folder
    per mode, split and policy."""
    unknown = sorted(set(policies or ()) - {"oracle", "random", *POLICIES})
    if unknown:
        raise ValueError(f"unknown policies {unknown}: the policies are random, {', '.join(POLICIES)}")
    specs = [find_task(name) for name in tasks] or list(TASKS)
    rows: list[AuditRow] = []
    for mode in modes or ("program", "interactive"):
        for split in splits:
            rows += _audit_split(specs, mode, split, policies, limit, workers, out, progress)
    tasks_order = [spec.name for spec in TASKS]
    policies_order = ["oracle", "random", *POLICIES]
    rows.sort(
        key=lambda r: (tasks_order.index(r.task), r.mode, SPLITS.index(r.split) if r.split in SPLITS else 9,
                       policies_order.index(r.policy))
    )  # fmt: skip
    return rows


def _audit_split(
    specs: Sequence[TaskSpec],
    mode: str,
    split: str,
    policies: Sequence[str] | None,
    limit: int | None,
    workers: int,
    out: str | Path | None,
    progress: Callable[[AuditRow], None] | None,
) -> list[AuditRow]:
    from toolbench.eval.runs import RunFolder, command_line

    plays: dict[str, list[str]] = {}
    for spec in specs:
        if mode in spec.modes and split in spec.splits:
            for policy in policies_for(spec, mode):
                if policies is None or policy in policies or policy == "oracle":
                    plays.setdefault(policy, []).append(spec.name)
    # Each task's split, read once per mode for every policy that plays it.
    whole = {planned.spec.name: planned for planned in plan_run("oracle", plays.get("oracle", []), split, mode)}
    # The same sample for every policy: a task's seen template and kind.
    sampled = {
        name: replace(
            planned, tasks=sample(planned.tasks, limit, functools.partial(_stratum, planned.spec.env_class()))
        )
        for name, planned in whole.items()
    }
    rows = []
    for policy, names in plays.items():
        folder = None
        if out is not None:
            settings = {"agent": agent_spec(policy), "tasks": names, "split": split, "mode": mode, "limit": limit}
            folder = RunFolder.open(Path(out) / mode / split / policy, settings, command_line(), overwrite=True)
        plan = [sampled[name] for name in names]
        report, _ = evaluate(
            agent_spec(policy),
            names,
            split=split,
            mode=mode,
            workers=workers,
            on_episode=folder.append if folder else None,
            diagnostics=folder is not None,
            plan=plan,
        )
        if folder:
            folder.write_summary(report)
        for name in names:
            summary = report["tasks"][name]
            bounded = {} if policy == "oracle" else {m: ceiling(policy, name, m, split) for m in BOUNDED}
            row = AuditRow(
                name,
                mode,
                policy,
                summary["n"],
                {m: summary.get(m) for m in (*BOUNDED, *REPORTED) if m in summary},
                {m: top for m, top in bounded.items() if top is not None},
                sampled=summary["n"] < len(whole[name].tasks),
                split=split,
            )
            rows.append(row)
            if progress is not None:
                progress(row)
    return rows


def _stratum(env_class: Any, task: Any) -> tuple[Any, ...]:
    """A task's stratum for sampling: whether its template is seen, then its category."""
    return (seen_template(env_class, task), task.category)


def format_audit(rows: Sequence[AuditRow]) -> str:
    """The audit as a table: each policy's bounded metrics with their ceilings, then the verdict."""
    reported = [m for m in REPORTED if any(r.metrics.get(m) is not None for r in rows)]
    header = [
        "task",
        "mode",
        "split",
        "policy",
        "n",
        "success",
        "(ceiling)",
        "score",
        "(ceiling)",
        *reported,
        "verdict",
    ]
    lines = []
    for row in rows:
        cells = [row.task, row.mode, row.split, row.policy, f"{row.n}{'*' if row.sampled else ''}"]
        for metric in BOUNDED:
            value, top = row.metrics.get(metric), row.ceilings.get(metric)
            cells += [f"{value:.3f}" if value is not None else "-", f"{top:.2f}" if top is not None else ""]
        cells += [f"{row.metrics[m]:.3f}" if row.metrics.get(m) is not None else "" for m in reported]
        cells.append("reference" if row.policy == "oracle" else ("OVER: " + ", ".join(row.over) if row.over else "ok"))
        lines.append(cells)
    over = [row for row in rows if row.over]
    verdict = (
        f"{len(over)} of {sum(r.policy != 'oracle' for r in rows)} policy runs passed a ceiling"
        if over
        else f"no cheap policy passed its ceiling ({sum(r.policy != 'oracle' for r in rows)} policy runs)"
    )
    reasons = sorted(
        {(r.policy, r.task, r.split, why(r.policy, r.task, r.split)) for r in rows if why(r.policy, r.task, r.split)}
    )
    notes = [f"- {policy} on {task} {split}: {text}" for policy, task, split, text in reasons]
    ceilings = f"Ceilings: success {SUCCESS_CEILING:.2f} and score {SCORE_CEILING:.2f} for every cheap policy, except:"
    sampled = (
        ["* a sample spread over the split: a ceiling allows for sampling error (one-sided 95%)"]
        if any(row.sampled for row in rows)
        else []
    )
    return "\n".join([*text_table(header, lines), *sampled, "", verdict, "", ceilings, *notes])


def audit_json(rows: Sequence[AuditRow]) -> dict[str, Any]:
    return {
        "rows": [{**asdict(row), "over": row.over} for row in rows],
        "over": [f"{r.task}/{r.mode}/{r.split}/{r.policy}: {', '.join(r.over)}" for r in rows if r.over],
        "ceilings": {"success_rate": SUCCESS_CEILING, "score": SCORE_CEILING},
        "allowances": [asdict(a) for a in allowances()],
    }


def write_report(rows: Sequence[AuditRow], out: str | Path) -> None:
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "audit.json").write_text(json.dumps(audit_json(rows), indent=2) + "\n", encoding="utf-8")
    (folder / "audit.txt").write_text(format_audit(rows) + "\n", encoding="utf-8")


__all__ = ["Allowance", "AuditRow", "allowances", "audit_json", "format_audit", "run_audit", "write_report"]
