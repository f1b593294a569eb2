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

from toolbench.eval.harness import EpisodeResult, skipped_text
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
    rows = ["<tr><th>task</th><th>mode</th><th>n</th><th>success</th><th>score</th><th>executable</th></tr>"]
    for name, row in report.get("tasks", {}).items():
        cells = [name, str(row.get("mode", "")), str(row["n"])]
        cells += [f"{row[key]:.3f}" for key in ("success_rate", "score", "executable_rate")]
        rows.append("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in cells) + "</tr>")
    return '<table class="results">' + "".join(rows) + "</table>"


def episode_block(folder: Path, index: int, episode: EpisodeResult) -> str:
    outcome = "success" if episode.success else "failure"
    metrics = ", ".join(f"{k} {_number(v)}" for k, v in episode.metrics.items())
    summary = html.escape(
        f"{episode.task} · {episode.task_id} · score {episode.score:.3f}"
        f"{' · ' + metrics if metrics else ''} · {episode.steps} step{'s' * (episode.steps != 1)}"
    )
    parts = [
        f'<details class="episode {outcome}" id="episode-{index}" data-task="{html.escape(episode.task)}" '
        f'data-outcome="{outcome}"><summary>{summary}</summary>',
        '<div class="meta">'
        + html.escape(f"mode {episode.mode or '?'} · executable {episode.executable}")
        + (html.escape(f" · error: {episode.error}") if episode.error else "")
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
        '<option value="success">success</option><option value="failure">failure</option></select> '
        f'<span id="shown">{len(episodes)}</span> of {len(episodes)} episodes</div>',
    ]
    body = [episode_block(folder, index, episode) for index, episode in enumerate(episodes)]
    return "\n".join([*header, *body, f"<script>{SCRIPT}</script></body></html>"]) + "\n"


def write_view(path: str | Path, out: str | Path | None = None) -> Path:
    """Write the run's page (default ``RUN_DIR/report.html``); returns its path."""
    target = Path(out) if out else Path(path) / "report.html"
    target.write_text(render_run(path), encoding="utf-8")
    return target
