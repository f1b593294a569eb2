"""``toolbench view RUN_DIR``: a run as one self-contained HTML file (no server, no network).

The page holds the results table, then every episode: the prompt, each action with its
observation, the score and metrics, the task's own findings (Google Sheets' cell mismatches,
Tabletop's reason and camera frames), and for model agents the messages and token usage. Two
selectors filter the episodes by task and by success; everything else is plain HTML.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any

from toolbench.eval.episodes import EpisodeResult
from toolbench.eval.harness import skipped_text
from toolbench.eval.runs import read_run

MAX_TEXT = 20_000  # characters of one prompt, action or observation shown

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
table.results { border-collapse: collapse; margin-bottom: 1.5em; }
table.results td, table.results th { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
table.results td:first-child, table.results th:first-child { text-align: left; }
.filters { margin: 1em 0; }
details.episode { border: 1px solid #ddd; border-radius: 4px; margin: 0.4em 0; padding: 0.3em 0.6em; }
details.episode.success > summary::before { content: "✔ "; color: #1a7f37; }
details.episode.failure > summary::before { content: "✘ "; color: #c62828; }
details.episode.error > summary::before { content: "⚠ "; color: #b26a00; }
summary { cursor: pointer; }
pre { background: #f6f8fa; padding: 0.5em; overflow-x: auto; white-space: pre-wrap; word-break: break-word; }
.label { font-weight: 600; margin-top: 0.6em; }
.frames img { max-width: 100%; border: 1px solid #ccc; }
.meta { color: #555; }
"""

SCRIPT = """
function applyFilters() {
  const task = document.getElementById('task-filter').value;
  const outcome = document.getElementById('outcome-filter').value;
  let shown = 0;
  for (const el of document.querySelectorAll('details.episode')) {
    const visible = (task === '' || el.dataset.task === task) &&
      (outcome === '' || el.dataset.outcome === outcome);
    el.style.display = visible ? '' : 'none';
    if (visible) shown += 1;
  }
  document.getElementById('shown').textContent = shown;
}
document.getElementById('task-filter').addEventListener('change', applyFilters);
document.getElementById('outcome-filter').addEventListener('change', applyFilters);
applyFilters();
"""


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
    if len(text) > MAX_TEXT:
        text = text[:MAX_TEXT] + f"\n... [{len(text) - MAX_TEXT} more characters]"
    return html.escape(text)


def _number(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) else str(value)


def _pre(label: str, value: Any) -> str:
    return f'<div class="label">{html.escape(label)}</div><pre>{_text(value)}</pre>'


def _image(folder: Path, relative: str | None) -> str:
    if not relative:
        return ""
    path = (folder / relative).resolve()
    if folder.resolve() not in path.parents or not path.is_file():
        return ""
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    image = f'<img alt="camera frames" src="data:image/png;base64,{data}">'
    return f'<div class="label">Camera frames</div><div class="frames">{image}</div>'


def results_table(report: dict[str, Any]) -> str:
    """The report's rows (errored episodes counted beside the rates), then pass^k and pass@k of a
    run with trials."""
    head = ["task", "mode", "n", "errors", "success", "score", "executable"]
    rows = ["<tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"]
    trials = []
    for name, row in report.get("tasks", {}).items():
        cells = [name, str(row.get("mode", "")), str(row["n"]), str(row.get("errors", 0))]
        cells += [f"{row[key]:.3f}" for key in ("success_rate", "score", "executable_rate")]
        rows.append("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in cells) + "</tr>")
        if isinstance(row.get("trial_stats"), dict):
            trials.append(_trials_table(name, row["trial_stats"]))
    return '<table class="results">' + "".join(rows) + "</table>" + "".join(trials)


def _trials_table(name: str, stats: dict[str, Any]) -> str:
    """One env's pass^k and pass@k by k, with their 95% intervals, and how often trials disagree."""
    rows = ["<tr><th>k</th><th>pass^k [95%]</th><th>pass@k [95%]</th></tr>"]
    for k, value in stats.get("pass_hat_k", {}).items():
        cells = [k]
        for key, v in (("pass_hat_k", value), ("pass_at_k", stats["pass_at_k"][k])):
            low, high = stats[f"{key}_interval"][k]
            cells.append(f"{v:.3f} [{low:.3f}, {high:.3f}]")
        rows.append("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in cells) + "</tr>")
    spread = stats.get("spread", {})
    caption = (
        f"{name}: {stats.get('tasks', 0)} tasks, {stats.get('trials', {}).get('max', '?')} trials each; "
        f"trials disagree on {spread.get('mixed_tasks', 0)} tasks"
    )
    return f'<p class="meta">{html.escape(caption)}</p><table class="results">{"".join(rows)}</table>'


def _outcome(episode: EpisodeResult) -> str:
    return episode.status if episode.status in ("success", "failure", "error") else "failure"


def episode_block(folder: Path, index: int, episode: EpisodeResult) -> str:
    outcome = _outcome(episode)
    metrics = ", ".join(f"{k} {_number(v)}" for k, v in episode.metrics.items())
    trial = f" · trial {episode.trial}" if episode.trial else ""
    summary = html.escape(
        f"{episode.task} · {episode.task_id}{trial} · {outcome} · score {episode.score:.3f}"
        f"{' · ' + metrics if metrics else ''} · {episode.steps} step{'s' * (episode.steps != 1)}"
    )
    parts = [
        f'<details class="episode {outcome}" id="episode-{index}" data-task="{html.escape(episode.task)}" '
        f'data-outcome="{outcome}"><summary>{summary}</summary>',
        '<div class="meta">'
        + html.escape(f"mode {episode.mode or '?'} · executable {episode.executable}")
        + (html.escape(f" · error: {episode.error}") if episode.error else "")
        + (html.escape(f" · error kind: {episode.error_kind}") if episode.error_kind else "")
        + (html.escape(f" · played {episode.attempts} times") if episode.attempts > 1 else "")
        + "</div>",
        _pre("Prompt", episode.prompt),
    ]
    for number, action in enumerate(episode.actions, start=1):
        parts.append(_pre(f"Action {number}", action))
        if number <= len(episode.observations):
            parts.append(_pre(f"Observation {number}", episode.observations[number - 1]))
    for key, value in episode.info.items():
        if value not in (None, [], {}, ""):
            parts.append(_pre(key.replace("_", " ").capitalize(), value))
    parts.append(_image(folder, episode.frames))
    if episode.references:
        parts.append(_pre("Reference", episode.references[0]))
    log = episode.agent_log
    if log:
        calls, usage = log.get("model_calls", []), log.get("usage", {})
        tokens = usage.get("total_tokens", 0) if isinstance(usage, dict) else 0
        count = len(calls) if isinstance(calls, list) else 0
        parts.append('<div class="meta">' + html.escape(f"model calls {count} · tokens {tokens}") + "</div>")
        parts.append(f"<details><summary>Messages</summary>{_pre('Messages sent', log.get('messages', []))}</details>")
    parts.append("</details>")
    return "\n".join(parts)


def render_run(path: str | Path) -> str:
    """The HTML page of the run in folder ``path``."""
    folder = Path(path)
    run, report, episodes = read_run(folder)
    title = f"toolbench run: {report.get('agent') or run.get('settings', {}).get('agent', '')} · {folder.name}"
    tasks = sorted({episode.task for episode in episodes})
    options = "".join(f'<option value="{html.escape(t)}">{html.escape(t)}</option>' for t in tasks)
    command = " ".join(run.get("command", []))
    version = f" · toolbench {run.get('toolbench')}" if run else ""
    header = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="meta">{html.escape(command + version)}</p>',
        results_table(report),
        f'<p class="meta">{html.escape("The run stopped early: " + str(report["stopped"]))}</p>'
        if report.get("stopped")
        else "",
        f'<p class="meta">{html.escape("Skipped: " + skipped_text(report["skipped"]))}</p>'
        if isinstance(report.get("skipped"), dict)
        else "",
        '<div class="filters">Task <select id="task-filter"><option value="">all</option>'
        f'{options}</select> Outcome <select id="outcome-filter"><option value="">all</option>'
        '<option value="success">success</option><option value="failure">failure</option>'
        '<option value="error">error</option></select> '
        f'<span id="shown">{len(episodes)}</span> of {len(episodes)} episodes</div>',
    ]
    body = [episode_block(folder, index, episode) for index, episode in enumerate(episodes)]
    return "\n".join([*header, *body, f"<script>{SCRIPT}</script></body></html>"]) + "\n"


def write_view(path: str | Path, out: str | Path | None = None) -> Path:
    """Write the run's page (default ``RUN_DIR/report.html``); returns its path."""
    target = Path(out) if out else Path(path) / "report.html"
    target.write_text(render_run(path), encoding="utf-8")
    return target
