"""``toolbench compare RUN_DIR...``: runs side by side, as the papers print them.

The table has tasks as columns and runs as rows (ToolBench's Table 2 shape) with one metric
(success rate by default); the PNG is a grouped bar chart of the same numbers (matplotlib).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolbench.eval.harness import summarize
from toolbench.eval.runs import read_run


def load_reports(paths: Sequence[str | Path]) -> list[tuple[str, dict[str, Any]]]:
    """(label, report) of each run folder; a run without a summary is summarized from its episodes."""
    reports = []
    for path in paths:
        folder = Path(path)
        run, report, episodes = read_run(folder)
        if not report.get("tasks"):
            by_task: dict[str, list[Any]] = {}
            for episode in episodes:
                by_task.setdefault(episode.task, []).append(episode)
            report = {"tasks": {name: summarize(items, items[0].mode) for name, items in by_task.items()}}
        agent = report.get("agent") or run.get("settings", {}).get("agent", "")
        reports.append((f"{folder.name} ({agent})" if agent else folder.name, report))
    return reports


def comparison(
    reports: Sequence[tuple[str, dict[str, Any]]], metric: str
) -> tuple[list[str], list[list[float | None]]]:
    """The tasks (columns, in first-seen order) and each run's values (``None`` where it has none)."""
    tasks: list[str] = []
    for _, report in reports:
        tasks.extend(name for name in report["tasks"] if name not in tasks)
    values = [[report["tasks"].get(task, {}).get(metric) for task in tasks] for _, report in reports]
    return tasks, values


def format_comparison(reports: Sequence[tuple[str, dict[str, Any]]], metric: str = "success_rate") -> str:
    tasks, values = comparison(reports, metric)
    header = ["run", *tasks, "average"]
    rows = [header]
    for (label, _), row in zip(reports, values):
        present = [v for v in row if v is not None]
        average = sum(present) / len(present) if present else None
        rows.append([label, *(f"{v:.3f}" if v is not None else "-" for v in [*row, average])])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [f"metric: {metric}"]
    for index, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
        if index == 0:
            lines.append("  ".join("-" * width for width in widths))
    return "\n".join(lines)


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
    axes.set_ylim(0, max(1.0, max((v or 0.0) for row in values for v in row) * 1.05))
    axes.legend(fontsize="small")
    axes.grid(axis="y", alpha=0.3)
    figure.tight_layout()
    path = Path(out)
    figure.savefig(path, metadata={"Software": None})
    plt.close(figure)
    return path
