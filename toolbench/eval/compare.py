"""``toolbench compare RUN_DIR...``: runs side by side, as the papers print them.

The table has tasks as columns and runs as rows (ToolBench's Table 2 shape) with one metric
(success rate by default); each cell is the value, its 95% confidence interval (``intervals``:
Wilson's for a rate, a seeded bootstrap for a mean) and the number of episodes it is over. The
average over tasks is given only where every run played as many episodes of each task: otherwise
the runs' averages rest on different work (other tasks of a split, or far fewer of them). The PNG
is a grouped bar chart of the same numbers, with the intervals as error bars (matplotlib).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolbench.eval.episodes import EpisodeResult, episode_key
from toolbench.eval.intervals import interval
from toolbench.eval.runs import read_run
from toolbench.eval.tables import text_table

#: Per-episode values of the report's own columns (a task's metrics are read from ``metrics``).
_EPISODE_VALUES: dict[str, Callable[[EpisodeResult], float]] = {
    "success_rate": lambda e: float(e.success),
    "executable_rate": lambda e: float(e.executable),
    "score": lambda e: e.score,
}


@dataclass(frozen=True)
class Run:
    """One run folder: its label, its report and its episodes (the last of each task id)."""

    label: str
    report: dict[str, Any]
    episodes: tuple[EpisodeResult, ...] = ()


@dataclass(frozen=True)
class Cell:
    """A run's value of the metric on one task, the episodes it is over, and its 95% interval
    (``None`` for a split-level metric, which has no per-episode values)."""

    value: float
    n: int
    low: float | None = None
    high: float | None = None
    trials: int = 1  # trials per task: then ``n`` counts tasks, and the interval resamples tasks

    def text(self) -> str:
        bounds = f" [{self.low:.3f}, {self.high:.3f}]" if self.low is not None and self.high is not None else ""
        return f"{self.value:.3f}{bounds} n={self.n}" + (f"x{self.trials}" if self.trials > 1 else "")


def load_reports(paths: Sequence[str | Path]) -> list[Run]:
    """Each run folder; a run without a summary is summarized from its episodes."""
    runs = []
    for path in paths:
        folder = Path(path)
        _, report, episodes = read_run(folder)
        agent = report.get("agent", "")
        label = f"{folder.name} ({agent})" if agent else folder.name
        # A resumed run appends the episodes it played again: the last line of an episode counts.
        latest = {episode_key(e): e for e in episodes}
        runs.append(Run(label + (", stopped early" if report.get("stopped") else ""), report, tuple(latest.values())))
    return runs


def _value(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _pass_metric(metric: str) -> tuple[str, str] | None:
    """``pass^K`` or ``pass@K`` as (the trial stats' key, K), else None."""
    for prefix, key in (("pass^", "pass_hat_k"), ("pass@", "pass_at_k")):
        if metric.startswith(prefix) and metric[len(prefix) :].isdigit():
            return key, metric[len(prefix) :]
    return None


def _cell(run: Run, task: str, metric: str) -> Cell | None:
    row = run.report["tasks"].get(task, {})
    passed = _pass_metric(metric)
    if passed is not None:  # tau-bench's pass^k or pass@k of a run with trials
        stats = row.get("trial_stats") or {}
        key, k = passed
        if k not in stats.get(key, {}):
            return None
        low, high = stats[f"{key}_interval"][k]
        return Cell(stats[key][k], stats["tasks"], low, high, stats["trials"]["max"])
    value = _value(row.get(metric))
    if value is None:
        return None
    episodes = [e for e in run.episodes if e.task == task]
    if metric in _EPISODE_VALUES:
        pairs = [(e.task_id, _EPISODE_VALUES[metric](e)) for e in episodes]
    else:
        pairs = [(e.task_id, float(e.metrics[metric])) for e in episodes if e.metrics.get(metric) is not None]
    if not pairs:  # a split-level metric (AppBench's micro F1), or a report without its episodes
        return Cell(value, int(row.get("n") or 0))
    by_task: dict[str, list[float]] = {}
    for task_id, v in pairs:
        by_task.setdefault(task_id, []).append(v)
    trials = max(len(v) for v in by_task.values())
    if trials == 1:
        return Cell(value, len(pairs), *interval([v for _, v in pairs]))
    # Trials of one task are not independent draws: the interval is over tasks, each its trials' mean.
    means = [sum(v) / len(v) for v in by_task.values()]
    return Cell(value, len(means), *interval(means), trials=trials)


def comparison(runs: Sequence[Run], metric: str) -> tuple[list[str], list[list[Cell | None]]]:
    """The tasks (columns, in first-seen order) and each run's cells (``None`` where it has none)."""
    tasks: list[str] = []
    for run in runs:
        tasks.extend(name for name in run.report["tasks"] if name not in tasks)
    return tasks, [[_cell(run, task, metric) for task in tasks] for run in runs]


def format_comparison(runs: Sequence[Run], metric: str = "success_rate", allow_unequal: bool = False) -> str:
    tasks, cells = comparison(runs, metric)
    # The average is over the tasks every run has, so that runs of different task sets compare fairly.
    shared = [i for i in range(len(tasks)) if all(row[i] is not None for row in cells)]
    unequal = [i for i in shared if len({row[i].n for row in cells if row[i] is not None}) > 1]
    averaged = bool(shared) and (allow_unequal or not unequal)
    rows = []
    for run, row in zip(runs, cells):
        rows.append([run.label, *(c.text() if c is not None else "-" for c in row)])
        if averaged:
            rows[-1].append(f"{sum(row[i].value for i in shared) / len(shared):.3f}")
    header = ["run", *tasks, *(["average"] if averaged else [])]
    lines = [
        f"metric: {metric} (95% intervals: Wilson's for rates, a bootstrap for means; n: episodes, "
        "or tasks x trials with trials, the interval then resampling tasks)",
        *text_table(header, rows),
    ]
    counts = "; ".join(f"{tasks[i]} " + " vs ".join(str(row[i].n) for row in cells if row[i]) for i in unequal)
    if unequal and not allow_unequal:
        lines.append(
            f"(no average: the runs played different numbers of episodes of {counts}, so their averages would "
            "not rest on the same work; --allow-unequal averages anyway)"
        )
    elif unequal:
        lines.append(f"(the average mixes runs of different numbers of episodes: {counts})")
    if averaged and len(shared) < len(tasks):
        lines.append(f"(average over the tasks every run has: {', '.join(tasks[i] for i in shared)})")
    elif not shared and len(runs) > 1:
        lines.append("(no average: no task is in every run)")
    return "\n".join(lines)


def check_metric(runs: Sequence[Run], metric: str) -> None:
    """Refuse a metric that no run has as a number (a typo would print a table of dashes)."""
    known = sorted(
        {k for run in runs for row in run.report["tasks"].values() for k, v in row.items() if _value(v) is not None}
        | {
            f"{sign}{k}"
            for run in runs
            for row in run.report["tasks"].values()
            for sign, key in (("pass^", "pass_hat_k"), ("pass@", "pass_at_k"))
            for k in (row.get("trial_stats") or {}).get(key, {})
        }
    )
    if metric not in known:
        raise ValueError(f"no run has the metric {metric!r}; the runs have {', '.join(known) or 'no episodes'}")


def plot_comparison(runs: Sequence[Run], out: str | Path, metric: str = "success_rate") -> Path:
    """A grouped bar chart: one group per task, one bar per run, its 95% interval as an error bar."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display is needed or wanted
    import matplotlib.pyplot as plt

    tasks, cells = comparison(runs, metric)
    figure, axes = plt.subplots(figsize=(max(6.0, 1.3 * len(tasks) + 2), 4.2), dpi=120)
    width = 0.8 / max(1, len(runs))
    for index, (run, row) in enumerate(zip(runs, cells)):
        positions = [t + (index - (len(runs) - 1) / 2) * width for t in range(len(tasks))]
        # A task the run lacks has no bar and no whisker (NaN draws nothing).
        heights = [c.value if c is not None else math.nan for c in row]
        # A mean can fall a little outside its bootstrap interval; the bar's whisker then has no length.
        below = [max(0.0, c.value - c.low) if c is not None and c.low is not None else math.nan for c in row]
        above = [max(0.0, c.high - c.value) if c is not None and c.high is not None else math.nan for c in row]
        axes.bar(positions, heights, width, label=run.label, yerr=[below, above], capsize=2)
    axes.set_xticks(range(len(tasks)), tasks, rotation=20, ha="right")
    axes.set_xlim(-0.6, len(tasks) - 0.4)
    axes.set_ylabel(f"{metric.replace('_', ' ')} (95% interval)")
    tops = [c.high if c.high is not None else c.value for row in cells for c in row if c is not None]
    axes.set_ylim(0, max([1.0, *(top * 1.1 for top in tops)]))
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.0, 1.0))  # beside the bars, not on them
    axes.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    path = Path(out)
    figure.savefig(path, metadata={"Software": None})
    plt.close(figure)
    return path
