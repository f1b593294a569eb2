"""Run folders (``toolbench eval --out DIR``): what a run did, written as it goes, readable later.

- ``run.json``: the command, the settings that define the run, toolbench's and its dependencies'
  versions, the Python version and the git commit of the toolbench source when there is one.
- ``trajectories.jsonl``: one line per finished episode, appended when the episode ends: actions,
  observations, the task's references, the env's metrics and final info, its trial and status, and
  for model agents the messages sent, raw completions, tool calls, token usage, latency and model
  settings. Nothing in it is measured by a clock of this run, so a run replayed from its model-reply
  cache writes the same bytes.
- ``timings.jsonl``: each episode's wall time (the one thing that varies between identical runs).
- ``summary.json`` / ``summary.txt``: the report, rewritten at the end (also of a stopped run).
- ``frames/``: PNG strips of camera frames, for tasks that render (Tabletop).

A folder that holds a run is refused unless ``--resume`` (the same settings: finished episodes are
kept and skipped; episodes that ended in an error are played again; ``--only errors`` or ``--only
failures`` plays those again and nothing else) or ``--overwrite``. An episode is identified by its
task, task id and trial; when a file holds it twice (a retried error), its last line counts.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from toolbench.eval.harness import EpisodeKey, EpisodeResult, episode_key, format_table, summarize

RUN_FILE = "run.json"
TRAJECTORIES = "trajectories.jsonl"
TIMINGS = "timings.jsonl"
SUMMARY_JSON = "summary.json"
SUMMARY_TEXT = "summary.txt"
FRAMES = "frames"
OUR_FILES = (RUN_FILE, TRAJECTORIES, TIMINGS, SUMMARY_JSON, SUMMARY_TEXT, "report.html")
DEPENDENCIES = (
    "gymnasium",
    "numpy",
    "pandas",
    "flask",
    "gspread",
    "pybullet",
    "openai",
    "rank-bm25",
    "RestrictedPython",
)


class RunFolderError(ValueError):
    """The folder cannot take this run (not empty, or holds a run with other settings)."""


def versions() -> dict[str, Any]:
    from toolbench import __version__

    found = {}
    for name in DEPENDENCIES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return {"toolbench": __version__, "python": platform.python_version(), "dependencies": found}


def git_commit() -> str | None:
    """The commit of the toolbench source tree, when it is a git checkout (an editable install)."""
    source = Path(__file__).resolve().parents[2]
    if not (source / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True
        )
        dirty = subprocess.run(
            ["git", "-C", str(source), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() + ("+changes" if dirty.stdout.strip() else "")


@dataclass
class RunFolder:
    """A run's folder, opened for a new run or to resume one."""

    path: Path
    settings: dict[str, Any]
    finished: list[EpisodeResult] = field(default_factory=list)
    rerun: set[EpisodeKey] | None = None  # with ``only``: the episodes to play again, and no others

    @classmethod
    def open(
        cls,
        path: str | Path,
        settings: dict[str, Any],
        command: list[str],
        resume: bool = False,
        overwrite: bool = False,
        about: dict[str, Any] | None = None,
        only: str | None = None,
    ) -> RunFolder:
        """Prepare ``path`` for a run with ``settings`` (refusing what would lose or mix results);
        ``about`` adds facts that do not define the run (the model endpoint, say). ``only``
        (``"errors"`` or ``"failures"``, with ``resume``) marks the episodes of that status to be
        played again (``rerun``) and keeps the others."""
        if only not in (None, "errors", "failures"):
            raise RunFolderError(f"--only {only!r}: choose errors or failures")
        if only and not resume:
            raise RunFolderError("--only needs --resume: it plays again some episodes of a run")
        folder = Path(path)
        if folder.exists() and not folder.is_dir():
            raise RunFolderError(f"--out {str(folder)!r} is a file, not a folder")
        busy = folder.is_dir() and any(folder.iterdir())
        finished: list[EpisodeResult] = []
        rerun = None
        if busy and resume:
            finished = cls._resumable(folder, settings, keep_errors=only is not None)
            if only:
                status = {"errors": "error", "failures": "failure"}[only]
                rerun = {episode_key(e) for e in finished if e.status == status}
                finished = [e for e in finished if e.status != status]
        elif only:
            raise RunFolderError(f"--only {only}: {str(folder)!r} holds no run to play again")
        elif busy and overwrite:
            for name in OUR_FILES:
                (folder / name).unlink(missing_ok=True)
            shutil.rmtree(folder / FRAMES, ignore_errors=True)
        elif busy:
            raise RunFolderError(
                f"--out {str(folder)!r} is not empty; add --resume to finish the run in it, "
                "or --overwrite to replace it"
            )
        folder.mkdir(parents=True, exist_ok=True)
        run = {"command": command, "settings": settings, **(about or {}), **versions(), "git_commit": git_commit()}
        if finished or (resume and (folder / RUN_FILE).exists()):
            earlier = json.loads((folder / RUN_FILE).read_text(encoding="utf-8"))
            run["resumed_from"] = {k: earlier.get(k) for k in ("command", "toolbench", "git_commit")}
        (folder / RUN_FILE).write_text(json.dumps(run, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        opened = cls(folder, settings, finished, rerun)
        # Keep only finished episodes (an agent that failed mid-episode gets another go), written
        # beside the old file and then moved over it, so an interrupt here loses nothing.
        partial = folder / (TRAJECTORIES + ".partial")
        with open(partial, "w", encoding="utf-8") as handle:
            handle.writelines(opened._line(episode) for episode in finished)
        os.replace(partial, folder / TRAJECTORIES)
        return opened

    @staticmethod
    def _resumable(folder: Path, settings: dict[str, Any], keep_errors: bool = False) -> list[EpisodeResult]:
        run_file = folder / RUN_FILE
        if not run_file.exists():
            raise RunFolderError(f"--resume: {str(folder)!r} holds no {RUN_FILE}, so it is not a toolbench run")
        try:
            earlier = json.loads(run_file.read_text(encoding="utf-8"))["settings"]
        except (ValueError, KeyError) as exc:
            raise RunFolderError(f"--resume: {run_file} is not readable ({exc})") from None
        if earlier != settings:
            changed = sorted(k for k in settings.keys() | earlier.keys() if settings.get(k) != earlier.get(k))
            raise RunFolderError(
                f"--resume: the run in {str(folder)!r} has other settings ({', '.join(changed)}); "
                "resume it with the same command, or use --overwrite"
            )
        episodes = _episodes(folder / TRAJECTORIES)
        return episodes if keep_errors else [e for e in episodes if not e.errored]

    @property
    def frames_dir(self) -> Path:
        return self.path / FRAMES

    def append(self, episode: EpisodeResult) -> None:
        with open(self.path / TRAJECTORIES, "a", encoding="utf-8") as handle:
            handle.write(self._line(episode))
        timing = {"task": episode.task, "task_id": episode.task_id, "trial": episode.trial, "seconds": episode.seconds}
        with open(self.path / TIMINGS, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(timing, ensure_ascii=False) + "\n")

    def _line(self, episode: EpisodeResult) -> str:
        data = {"agent": self.settings.get("agent"), **episode.to_json()}
        del data["seconds"]  # in timings.jsonl
        return json.dumps(data, ensure_ascii=False) + "\n"

    def write_summary(self, report: dict[str, Any]) -> None:
        (self.path / SUMMARY_JSON).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        (self.path / SUMMARY_TEXT).write_text(format_table(report) + "\n", encoding="utf-8")


def _episodes(path: Path) -> list[EpisodeResult]:
    """The readable episode lines of a trajectories file (a line cut short by a kill is skipped);
    of an episode written twice (a retried error), the last line, in the place of the first."""
    episodes: dict[EpisodeKey, EpisodeResult] = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                episode = EpisodeResult.from_json(json.loads(line))
            except (ValueError, TypeError, AttributeError):
                continue
            episodes[episode_key(episode)] = episode
    return list(episodes.values())


def _json_object(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def read_run(path: str | Path) -> tuple[dict[str, Any], dict[str, Any], list[EpisodeResult]]:
    """A run folder's ``run.json`` (or {}), its report and its episodes. The report is the saved
    summary when it is whole, else recomputed from the episodes (a run killed before its summary)."""
    folder = Path(path)
    if not (folder / TRAJECTORIES).exists():
        raise RunFolderError(f"{str(folder)!r} holds no {TRAJECTORIES}: not a toolbench run folder")
    run, summary = _json_object(folder / RUN_FILE), _json_object(folder / SUMMARY_JSON)
    episodes = _episodes(folder / TRAJECTORIES)
    if not _whole(summary):
        by_task: dict[str, list[EpisodeResult]] = {}
        for episode in episodes:
            by_task.setdefault(episode.task, []).append(episode)
        agent = run.get("settings", {}).get("agent", "") if isinstance(run.get("settings"), dict) else ""
        summary = {
            "agent": agent,
            "split": episodes[0].split if episodes else "",
            "tasks": {name: summarize(items, items[0].mode) for name, items in by_task.items()},
        }
    return run, summary, episodes


def _whole(summary: dict[str, Any]) -> bool:
    tasks = summary.get("tasks")
    if not isinstance(tasks, dict) or not tasks:
        return False
    numbers = ("n", "success_rate", "score", "executable_rate")
    return all(
        isinstance(row, dict) and all(isinstance(row.get(k), (int, float)) for k in numbers) for row in tasks.values()
    )


def task_set_digest(tasks: list[Any]) -> str:
    """A fingerprint of the tasks a run plays (ids, prompts, references): a resumed run must play
    the same ones, not tasks that took over the ids of edited records."""
    digest = hashlib.sha256()
    for task in tasks:
        digest.update(json.dumps([task.id, task.prompt, list(task.references)], ensure_ascii=False).encode())
    return digest.hexdigest()[:16]


def command_line() -> list[str]:
    return ["toolbench", *sys.argv[1:]]
