"""``toolbench compare RUN_DIR...``: runs side by side, as the papers print them.

The table has tasks as columns and runs as rows (ToolBench's Table 2 shape) with one metric
(success rate by default); the PNG is a grouped bar chart of the same numbers (matplotlib).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolbench.eval.runs import read_run
from toolbench.eval.tables import text_table


def load_reports(paths: Sequence[str | Path]) -> list[tuple[str, dict[str, Any]]]:
    """(label, report) of each run folder; a run without a summary is summarized from its episodes."""
    reports = []
    for path in paths:
        folder = Path(path)
        _, report, _ = read_run(folder)
        agent = report.get("agent", "")
        label = f"{folder.name} ({agent})" if agent else folder.name
        reports.append((label + (", stopped early" if report.get("stopped") else ""), report))
    return reports


def comparison(
    reports: Sequence[tuple[str, dict[str, Any]]], metric: str
) -> tuple[list[str], list[list[float | None]]]:
    """The tasks (columns, in first-seen order) and each run's values (``None`` where it has none)."""
    tasks: list[str] = []
    for _, report in reports:
        tasks.extend(name for name in report["tasks"] if name not in tasks)
    values = [[_value(report["tasks"].get(task, {}).get(metric)) for task in tasks] for _, report in reports]
    return tasks, values


def _value(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def format_comparison(reports: Sequence[tuple[str, dict[str, Any]]], metric: str = "success_rate") -> str:
    tasks, values = comparison(reports, metric)
    # The average is over the tasks every run has, so that runs of different task sets compare fairly.
    shared = [i for i in range(len(tasks)) if all(row[i] is not None for row in values)]
    rows = []
    for (label, _), row in zip(reports, values):
        average = sum(row[i] for i in shared) / len(shared) if shared else None
        rows.append([label, *(f"{v:.3f}" if v is not None else "-" for v in [*row, average])])
    lines = [f"metric: {metric}", *text_table(["run", *tasks, "average"], rows)]
    if len(shared) < len(tasks):
        lines.append(f"(average over the tasks every run has: {', '.join(tasks[i] for i in shared) or 'none'})")
    return "\n".join(lines)


def check_metric(reports: Sequence[tuple[str, dict[str, Any]]], metric: str) -> None:
    """Refuse a metric that no run has as a number (a typo would print a table of dashes)."""
    known = sorted(
        {k for _, r in reports for row in r["tasks"].values() for k, v in row.items() if _value(v) is not None}
    )
    if metric not in known:
        raise ValueError(f"no run has the metric {metric!r}; the runs have {', '.join(known) or 'no episodes'}")


def plot_comparison(
    reports: Sequence[tuple[str, dict[str, Any]]], out: str | Path, metric: str = "success_rate"
) -> Path:
    """A grouped bar chart: one group per task, one bar per run."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display is needed or wanted
    import matplotlib.pyplot as plt

    tasks, values = comparison(reports, metric)
    figure, axes = plt.subplots(figsize=(max(6.0, 1.3 * len(tasks) + 2), 4.2), dpi=120)
    width = 0.8 / max(1, len(reports))
    for index, ((label, _), row) in enumerate(zip(reports, values)):
        positions = [t + (index - (len(reports) - 1) / 2) * width for t in range(len(tasks))]
        axes.bar(positions, [v if v is not None else 0.0 for v in row], width, label=label)
    axes.set_xticks(range(len(tasks)), tasks, rotation=20, ha="right")
    axes.set_ylabel(metric.replace("_", " "))
    axes.set_ylim(0, max([1.0, *((v or 0.0) * 1.05 for row in values for v in row)]))
    axes.legend(fontsize="small")
    axes.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    path = Path(out)
    figure.savefig(path, metadata={"Software": None})
    plt.close(figure)
    return path
