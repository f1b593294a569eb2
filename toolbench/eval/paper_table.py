"""``toolbench paper-table``: a run's numbers beside ToolBench's Table 11 for the prompt setting the run used.

Table 11 (Xu et al. 2023, appendix C.4) gives, per prompt setting and model, each task's main metric
as mean(standard deviation) over three runs; it is stored in ``fixtures/papers/toolbench_table11.json``
with the reading of each column (which of our metrics it corresponds to, and why). The paper measured
its own task sets with live services, so its numbers stand beside a run's for scale, never as a
target: every paper column says so. A run's number is shown with the episodes it is over and with a
note wherever it does not rest on a whole, cleanly played test split (a partial or stopped run, failed
agent calls, episodes without the metric, another split or mode).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from toolbench.core.tasks import fixture_file
from toolbench.eval.harness import EpisodeResult
from toolbench.eval.runs import read_run
from toolbench.eval.tables import text_table

PAPER_MARK = "paper: original tasks, live services; not comparable one-to-one"
#: The prompt setting a run of a model agent used when run.json names none (the suite's default).
DEFAULT_PROMPT = "fewshot"
PAPER_SHOTS = 3  # the paper's few-shot settings show three demonstrations
REPORT_COLUMNS = ("success_rate", "score", "executable_rate")  # over every episode; a task's metrics may not be


@dataclass(frozen=True)
class PaperColumn:
    """A column of Table 11: the task it reports, the paper's metric and ours that corresponds."""

    column: str
    task: str
    paper_metric: str
    metric: str
    mode: str  # how the paper's harness played the task: one program, or step by step


@dataclass(frozen=True)
class PaperSetting:
    """A block of Table 11: one setting's rows, model -> one (mean, std) or None ("-") per column."""

    setting: str
    paper_label: str
    rows: dict[str, list[tuple[float, float] | None]]


@dataclass(frozen=True)
class Table11:
    source: str
    measured_on: str
    notes: tuple[str, ...]
    columns: tuple[PaperColumn, ...]
    settings: dict[str, PaperSetting]

    def setting(self, name: str) -> PaperSetting:
        if name not in self.settings:
            raise ValueError(f"Table 11 has no setting {name!r}; it has {', '.join(self.settings)}")
        return self.settings[name]

    def models(self, setting: str, model: str | None = None) -> list[str]:
        """The models of ``setting``'s rows, or the one named by ``model`` (any case)."""
        names = list(self.setting(setting).rows)
        if model is None:
            return names
        chosen = [name for name in names if name.lower() == model.lower()]
        if not chosen:
            raise ValueError(f"Table 11's {setting!r} rows have no model {model!r}; they have {', '.join(names)}")
        return chosen


def load_table11(path: str | Path | None = None) -> Table11:
    """Table 11 from its data file (the shipped one by default)."""
    data = json.loads(Path(path or fixture_file("papers", "toolbench_table11.json")).read_text(encoding="utf-8"))
    columns = tuple(PaperColumn(**column) for column in data["columns"])
    settings = {}
    for block in data["settings"]:
        rows = {}
        for model, cells in block["rows"].items():
            if len(cells) != len(columns):
                raise ValueError(f"Table 11, {block['setting']} {model}: {len(cells)} cells for {len(columns)} columns")
            rows[model] = [tuple(cell) if cell is not None else None for cell in cells]
        settings[block["setting"]] = PaperSetting(block["setting"], block["paper_label"], rows)
    return Table11(data["source"], data["measured_on"], tuple(data["notes"]), columns, settings)


# ----------------------------------------------------------------------------- a run's side
@dataclass(frozen=True)
class RunCell:
    """A run's value of one column's metric (as a fraction), the episodes it is over, and what
    the reader must know before trusting it."""

    value: float | None
    n: int
    notes: tuple[str, ...] = ()

    def text(self) -> str:
        shown = f"{100 * self.value:.1f}" if self.value is not None else "-"
        return f"{shown} n={self.n}"


def run_setting(run: dict[str, Any]) -> tuple[str | None, list[str]]:
    """The prompt setting a run used (``None`` for an agent that is not prompted), and how it
    differs from the paper's version of that setting."""
    settings = run.get("settings") if isinstance(run.get("settings"), dict) else {}
    model = settings.get("model")
    if not isinstance(model, dict):
        return None, [f"the agent ({settings.get('agent', 'unknown')}) is not a prompted model"]
    prompt = model.get("prompt") or DEFAULT_PROMPT
    notes = []
    shots = model.get("top_k_example")
    if "fewshot" in prompt and shots not in (None, PAPER_SHOTS):
        notes.append(f"the run showed {shots} demonstrations per task; the paper's few-shot settings show 3")
    return prompt, notes


def size_of_test_split(task: str) -> int | None:
    """How many tasks the task's test split holds (None for a task without one)."""
    import toolbench

    try:
        return len(toolbench.load_tasks(task, "test"))
    except (KeyError, ValueError):
        return None


def run_cell(
    column: PaperColumn, report: dict[str, Any], episodes: list[EpisodeResult], run: dict[str, Any]
) -> RunCell | None:
    """The run's number for ``column`` (None when the run did not play its task)."""
    row = report.get("tasks", {}).get(column.task)
    if not isinstance(row, dict):
        return None
    played = list({e.task_id: e for e in episodes if e.task == column.task}.values())  # a resumed id: its last line
    n = len(played) or int(row.get("n") or 0)
    value = row.get(column.metric)
    value = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    settings = run.get("settings") if isinstance(run.get("settings"), dict) else {}
    split = report.get("split") or settings.get("split") or "test"
    notes = []
    if settings.get("task_file"):
        notes.append(f"tasks from {settings['task_file']}, not the test split")
    elif split != "test":
        notes.append(f"the {split!r} split, not the test split")
    else:
        size = size_of_test_split(column.task)
        if size is not None and n < size:
            notes.append(f"partial: {n} of the {size} test tasks")
    if report.get("stopped"):
        notes.append(f"the run stopped early ({report['stopped']})")
    failed = sum(e.agent_failed for e in played)
    if failed:
        notes.append(f"{failed} of {n} episodes ended with the agent failing (scored 0)")
    if value is None:
        notes.append(f"no episode has a {column.metric} value")
    elif played and column.metric not in REPORT_COLUMNS:
        valued = sum(e.metrics.get(column.metric) is not None for e in played)
        if valued < n:
            notes.append(f"{column.metric} is over the {valued} of {n} episodes that have it")
    if row.get("mode") and row["mode"] != column.mode:
        notes.append(f"played in {row['mode']} mode; the paper's harness plays it in {column.mode} mode")
    return RunCell(value, n, tuple(notes))


# ----------------------------------------------------------------------------- the comparison
@dataclass(frozen=True)
class Line:
    """One column of Table 11: the run's number (if any) and each shown model's."""

    column: PaperColumn
    run: RunCell | None
    paper: dict[str, tuple[float, float] | None]


@dataclass
class PaperComparison:
    setting: str
    paper_label: str
    models: list[str]
    lines: list[Line]
    run_path: str | None = None
    agent: str | None = None
    split: str | None = None
    about_setting: list[str] = field(default_factory=list)  # how the run's setting relates to the one shown
    not_in_table: list[str] = field(default_factory=list)  # tasks the run played that Table 11 has no column for

    def to_json(self, table: Table11) -> dict[str, Any]:
        return {
            "source": table.source,
            "measured_on": table.measured_on,
            "setting": self.setting,
            "paper_label": self.paper_label,
            "run": self.run_path,
            "agent": self.agent,
            "about_setting": self.about_setting,
            "not_in_table": self.not_in_table,
            "lines": [
                {
                    **asdict(line.column),
                    "run": asdict(line.run) if line.run else None,
                    "paper": {m: {"mean": c[0], "std": c[1]} if c else None for m, c in line.paper.items()},
                }
                for line in self.lines
            ],
        }


def compare_with_paper(
    table: Table11, run_dir: str | Path | None = None, setting: str | None = None, model: str | None = None
) -> PaperComparison:
    """A run's numbers beside Table 11's rows of its prompt setting (``setting`` chooses another;
    without a run, the paper's rows alone). ``model`` keeps one model's row."""
    run: dict[str, Any] = {}
    report: dict[str, Any] = {"tasks": {}}
    episodes: list[EpisodeResult] = []
    about: list[str] = []
    if run_dir is not None:
        run, report, episodes = read_run(run_dir)
        used, differences = run_setting(run)
        about.extend(differences)
        if setting is None:
            if used is None:
                setting = DEFAULT_PROMPT
                about.append(f"showing the paper's {DEFAULT_PROMPT!r} setting (--setting picks another)")
            else:
                setting = used
        elif used is not None and used != setting:
            about.append(f"the run used the {used!r} prompt setting; the paper's {setting!r} is shown as asked")
    setting = setting or DEFAULT_PROMPT
    block = table.setting(setting)
    if "alignment" in setting:
        about.append("the paper's alignment settings are models fine-tuned on its alignment data")
    models = table.models(setting, model)
    lines = []
    for index, column in enumerate(table.columns):
        cell = run_cell(column, report, episodes, run) if run_dir is not None else None
        if run_dir is not None and cell is None:
            continue  # the run did not play this task
        lines.append(Line(column, cell, {m: block.rows[m][index] for m in models}))
    covered = {column.task for column in table.columns}
    settings = run.get("settings") if isinstance(run.get("settings"), dict) else {}
    return PaperComparison(
        setting=setting,
        paper_label=block.paper_label,
        models=models,
        lines=lines,
        run_path=str(run_dir) if run_dir is not None else None,
        agent=report.get("agent") or settings.get("agent"),
        split=report.get("split") or settings.get("split"),
        about_setting=about,
        not_in_table=[task for task in report.get("tasks", {}) if task not in covered],
    )


def format_paper_comparison(comparison: PaperComparison, table: Table11) -> str:
    """The comparison as text: one row per Table 11 column, the run's notes as numbered footnotes."""
    with_run = comparison.run_path is not None
    header = ["task", "paper column", "paper metric", *(["run (ours, x100)"] if with_run else [])]
    header += [f"paper: {model}" for model in comparison.models]
    rows, footnotes = [], []
    for line in comparison.lines:
        row = [line.column.task, line.column.column, line.column.paper_metric]
        if with_run:
            cell = line.run
            text = f"{line.column.metric} {cell.text()}" if cell else "-"
            if cell and cell.notes:
                note = "; ".join(cell.notes)
                if note not in footnotes:  # both of a task's columns usually share their notes
                    footnotes.append(note)
                text += f" [{footnotes.index(note) + 1}]"
            row.append(text)
        row += [f"{c[0]:.1f}({c[1]:.1f})" if c else "-" for c in line.paper.values()]
        rows.append(row)
    lines = []
    if with_run:
        lines.append(f"run: {comparison.run_path} (agent {comparison.agent}, split {comparison.split})")
    lines.append(f"setting: {comparison.setting} (Table 11: {comparison.paper_label!r})")
    lines += [f"  {note}" for note in comparison.about_setting]
    lines += text_table(header, rows)
    lines += [f"[{number}] {note}" for number, note in enumerate(footnotes, start=1)]
    if with_run and not comparison.lines:
        lines.append("(the run played no task that Table 11 reports)")
    if comparison.not_in_table:
        lines.append(f"(not in Table 11: {', '.join(comparison.not_in_table)})")
    lines += [f"{PAPER_MARK}.", f"source: {table.source}."]
    return "\n".join(lines)
