"""``toolbench score RUN``: a stored run's episodes scored again by today's envs and scorers.

Each episode's recorded actions are played again, in order, in a fresh env of today's code (the
run's task, split or task file, mode and env options), through the harness's own ``run_episode``,
so the new episode is built exactly as ``toolbench eval`` builds one. The model's messages are
history and are not played again: the new episode keeps the old one's trial, agent log, frames and
template, and takes today's observations, metrics, score, success and info.

Not played again, and copied as they are: episodes that ended in an error (the agent never gave
its actions), episodes whose agent rewrote them (reset the env or reopened its end: the recorded
actions are not the episode that was scored), and episodes whose task is no longer in the split.

What changed is said per episode (score, success or metrics), with why where it can be told: the
env's ``scorer_version`` moved since the run, or its task set's digest did; otherwise the scorer
changed without a version bump. When a replay's observations differ from the recorded ones, the
agent would have seen something else, so its later actions may not be what it would do today.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from toolbench.agents.client import LimitReached
from toolbench.catalog import TaskSpec, find_task
from toolbench.core.env import ToolEnv
from toolbench.core.tasks import Task
from toolbench.eval.episodes import AGENT_ERROR_PREFIX, EpisodeResult
from toolbench.eval.harness import LIMIT_PREFIX, REWRITTEN_PREFIX, make_env, plan_run, run_episode, summarize
from toolbench.eval.runs import (
    FRAMES,
    RUN_FILE,
    TIMINGS,
    RunFolder,
    RunFolderError,
    command_line,
    git_commit,
    read_run,
    task_set_digest,
    versions,
)
from toolbench.eval.tables import text_table

#: Run settings that are a task's own ``gym.make`` arguments (as ``toolbench eval`` passes them).
ENV_OPTION_SETTINGS = ("scorer", "cache_dir")
#: The count line's reasons for an episode that is copied, not played again.
NOT_RESCORED_ERROR = "not re-scored: error"
NOT_RESCORED_REWRITTEN = "not re-scored: its agent rewrote the episode"
NOT_RESCORED_MISSING = "task no longer in the split"
NO_BUMP = "scorer changed without a version bump"
NO_VERSION = "scorer changed (the run records no scorer_version to compare)"
OBSERVATIONS_NOTE = "observations changed: the agent's later actions may not be what it would do today"
RAN_OUT = "replay: the recorded actions ended before today's env ended the episode"
#: The new episode's fields that are the agent's side of the episode: history, kept from the run.
HISTORY_FIELDS = ("trial", "agent_log", "frames", "template", "seen_template", "attempts", "seconds")
_CLOSE = 1e-9  # scores and metrics are floats computed again: equal within rounding is unchanged


class RescoreError(ValueError):
    """The run cannot be scored again (not a run folder, an unknown task, a task file that is gone)."""


@dataclass
class EpisodeChange:
    """One episode whose score, success or metrics differ today, and why where that can be told."""

    task: str
    task_id: str
    trial: int
    old_score: float
    new_score: float
    old_success: bool
    new_success: bool
    old_metrics: dict[str, float | None]
    new_metrics: dict[str, float | None]
    reason: str
    observations_changed: bool = False

    @property
    def metrics_changed(self) -> list[str]:
        """The metrics whose values moved."""
        names = sorted(self.old_metrics.keys() | self.new_metrics.keys())
        return [n for n in names if not _same(self.old_metrics.get(n), self.new_metrics.get(n))]


@dataclass
class NotRescored:
    """An episode copied as it was, and why."""

    task: str
    task_id: str
    trial: int
    why: str


@dataclass
class RescoreReport:
    """What ``rescore`` did: the changed episodes, those it copied, and per-task notes."""

    run: str
    out: str
    rescored: int = 0
    changes: list[EpisodeChange] = field(default_factory=list)
    not_rescored: list[NotRescored] = field(default_factory=list)
    #: Per task: facts that are not a change of one episode (observations that moved, a version
    #: bump that moved no score, a task set whose digest moved).
    notes: dict[str, list[str]] = field(default_factory=dict)
    #: Per task: the run's and today's mean score over its re-scored episodes.
    scores: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def changed(self) -> int:
        return len(self.changes)

    def count_line(self) -> str:
        errors = sum(1 for s in self.not_rescored if s.why != NOT_RESCORED_MISSING)
        missing = len(self.not_rescored) - errors
        return (
            f"{self.rescored} episodes re-scored, {self.changed} changed, {len(self.not_rescored)} not re-scored "
            f"({errors} errors, {missing} missing tasks)"
        )

    def text(self) -> str:
        """The changes as a table, the notes per task and the count line."""
        lines = [f"re-scored {self.run} -> {self.out}"]
        for task, score in self.scores.items():
            lines.append(f"{task}: mean score {score['old']:.3f} -> {score['new']:.3f}")
        if self.changes:
            header = ["task", "task_id", "trial", "score", "success", "metrics changed", "why"]
            rows = [
                [
                    c.task,
                    c.task_id,
                    str(c.trial),
                    f"{c.old_score:.3f} -> {c.new_score:.3f}",
                    f"{c.old_success} -> {c.new_success}",
                    ", ".join(c.metrics_changed) or "-",
                    c.reason + (" (observations changed)" if c.observations_changed else ""),
                ]
                for c in self.changes
            ]
            lines.extend(text_table(header, rows))
        else:
            lines.append("no episode's score, success or metrics changed")
        for task, notes in self.notes.items():
            lines.extend(f"{task}: {note}" for note in notes)
        for skipped in self.not_rescored:
            lines.append(f"{skipped.task} {skipped.task_id} trial {skipped.trial}: {skipped.why}")
        lines.append(self.count_line())
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["changed"] = self.changed
        for change, item in zip(self.changes, data["changes"]):
            item["metrics_changed"] = change.metrics_changed
        return data


class ReplayAgent:
    """Plays an episode's recorded actions in order. When they run out before the env ends the
    episode, it stops the episode as a limit does: with the recorded limit when the episode ended
    on one (its turns, tokens, time or cost), else saying that the recording ended."""

    name = "replay"

    def __init__(self) -> None:
        self.trial = 0
        self.limits: Any = None
        self.ran_out = False
        self._actions: list[str] = []
        self._log: dict[str, Any] = {}
        self._end = RAN_OUT

    def load(self, episode: EpisodeResult) -> None:
        self._actions = list(episode.actions)
        self._log = dict(episode.agent_log)
        self.trial = episode.trial
        self.ran_out = False
        error = episode.error or ""
        # An env's own error ("no such function") says nothing of why the agent stopped acting.
        self._end = (
            error.removeprefix(AGENT_ERROR_PREFIX) if error.startswith((LIMIT_PREFIX, AGENT_ERROR_PREFIX)) else RAN_OUT
        )

    def begin(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> None:
        pass

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if self._actions:
            return self._actions.pop(0)
        self.ran_out = True
        raise LimitReached(self._end)

    def episode_log(self) -> dict[str, Any]:
        return dict(self._log)


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(float(a), float(b), rel_tol=0.0, abs_tol=_CLOSE)


def _changed(old: EpisodeResult, new: EpisodeResult) -> bool:
    if old.success != new.success or not _same(old.score, new.score):
        return True
    names = old.metrics.keys() | new.metrics.keys()
    return any(not _same(old.metrics.get(n), new.metrics.get(n)) for n in names)


def _settings_of(run: Mapping[str, Any]) -> dict[str, Any]:
    settings = run.get("settings")
    return dict(settings) if isinstance(settings, dict) else {}


def _recorded(run: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    """A ``{task: value}`` record of run.json, in its settings or at its top level (None: absent)."""
    for where in (_settings_of(run), run):
        value = where.get(key)
        if isinstance(value, dict):
            return value
    return None


@dataclass
class _TaskPlan:
    """How one task of the run is played today."""

    spec: TaskSpec
    env_class: type[ToolEnv]
    digest: str
    task_ids: frozenset[str]
    tasks: dict[str, Task]


class _Replayer:
    """The run's settings turned into today's envs, one per task and mode."""

    def __init__(self, run: Mapping[str, Any], episodes: Sequence[EpisodeResult]) -> None:
        settings = _settings_of(run)
        self.split = str(settings.get("split") or (episodes[0].split if episodes else "test"))
        self.mode = settings.get("mode")
        self.limit = settings.get("limit")
        picked = settings.get("task_ids")
        self.task_ids = frozenset(picked) if isinstance(picked, list) else None
        task_file = settings.get("task_file")
        self.task_file = str(Path(task_file).resolve()) if task_file else None
        if self.task_file and not Path(self.task_file).is_file():
            raise RescoreError(f"the run's task file {self.task_file!r} is gone")
        self.options = {k: settings[k] for k in ENV_OPTION_SETTINGS if settings.get(k) is not None}
        cache = self.options.get("cache_dir")
        if cache is not None and not Path(cache).is_dir():
            raise RescoreError(f"the run's response cache {cache!r} is gone")
        self.plans: dict[str, _TaskPlan] = {}
        self._envs: dict[tuple[str, str], ToolEnv] = {}

    def plan(self, name: str) -> _TaskPlan:
        if name not in self.plans:
            try:
                spec = find_task(name)
                env_class = spec.env_class()
                # Every task of the split or file, read as eval reads them today; the run's ids and
                # limit are applied here, as plan_run applies them, for a played id that is gone is
                # a missing task, not a run that cannot be scored.
                (planned,) = plan_run("oracle", [spec.name], self.split, self.mode, None, self.task_file)
            except (KeyError, ValueError, OSError) as exc:
                raise RescoreError(exc.args[0] if exc.args else str(exc)) from None
            tasks = {task.id: task for task in planned.tasks}
            played = [t for t in planned.tasks if self.task_ids is None or t.id in self.task_ids][: self.limit]
            self.plans[name] = _TaskPlan(spec, env_class, task_set_digest(played), frozenset(tasks), tasks)
        return self.plans[name]

    def env(self, name: str, mode: str) -> ToolEnv:
        key = (name, mode)
        if key not in self._envs:
            spec = self.plan(name).spec
            options = tuple(sorted((k, v) for k, v in self.options.items()))
            try:
                self._envs[key] = make_env(spec, self.split, mode or None, self.task_file, True, options)
            except (KeyError, ValueError, OSError) as exc:
                raise RescoreError(f"{name}: {exc.args[0] if exc.args else exc}") from None
        return self._envs[key]

    def close(self) -> None:
        for env in self._envs.values():
            env.close()


def _replay(replayer: _Replayer, agent: ReplayAgent, old: EpisodeResult) -> EpisodeResult:
    env = replayer.env(old.task, old.mode)
    agent.load(old)
    new = run_episode(env, agent, old.task_id, None, old.trial)
    if agent.ran_out:  # the replay's own stop, not an error of the agent's model or infrastructure
        new = replace(new, status="success" if new.success else "failure", error_kind=None)
    # The agent's side is history: what it said and when, its trial, its frames.
    kept = {name: getattr(old, name) for name in HISTORY_FIELDS if name in EpisodeResult.__dataclass_fields__}
    return replace(new, **kept)


def _record_change(old: EpisodeResult, today: Task) -> str:
    """Which part of one task's record moved since the run ("" if none)."""
    parts = [
        name
        for name, before, now in (
            ("prompt", old.prompt, today.prompt),
            ("references", list(old.references), list(today.references)),
        )
        if before != now
    ]
    return f": this task's {' and '.join(parts)} changed" if parts else ""


def _why(
    old: EpisodeResult,
    plan: _TaskPlan,
    old_version: str | None,
    new_version: str,
    old_digest: str | None,
) -> str:
    reasons = []
    if old_version is not None and str(old_version) != new_version:
        reasons.append(f"scorer_version {old_version} -> {new_version}")
    if old_digest is not None and old_digest != plan.digest:
        record = _record_change(old, plan.tasks[old.task_id])
        reasons.append(f"task set of {old.task} changed (digest {old_digest} -> {plan.digest}){record}")
    if reasons:
        return "; ".join(reasons)
    return NO_BUMP if old_version is not None else NO_VERSION


def _not_empty(path: Path) -> bool:
    return path.is_dir() and any(path.iterdir())


def rescore(run: str | Path, out: str | Path | None = None, overwrite: bool = False) -> RescoreReport:
    """Score the run in folder ``run`` again with today's envs and scorers, writing the new run to
    ``out`` (default ``RUN-rescored``); refuses a non-empty ``out`` unless ``overwrite``. Raises
    ``RescoreError`` when it cannot (not a run folder, an unknown task, a task file that is gone)."""
    source = Path(run)
    target = Path(out) if out is not None else source.with_name(source.name + "-rescored")
    try:
        old_run, old_report, episodes = read_run(source)
    except (RunFolderError, KeyError) as exc:  # KeyError: an episode of an unknown task, no summary
        raise RescoreError(exc.args[0] if exc.args else str(exc)) from None
    if not (source / RUN_FILE).is_file() or not old_run:
        raise RescoreError(f"{str(source)!r} holds no readable {RUN_FILE}: not a toolbench run folder")
    if target.exists() and target.resolve() == source.resolve():
        raise RescoreError("--out must be another folder than the run's own")
    if target.exists() and not target.is_dir():
        raise RescoreError(f"--out {str(target)!r} is a file, not a folder")
    if _not_empty(target) and not overwrite:
        raise RescoreError(f"--out {str(target)!r} is not empty; add --overwrite to replace it")

    old_versions = _recorded(old_run, "scorer_versions") or {}
    old_digests = _recorded(old_run, "task_sets") or {}
    replayer = _Replayer(old_run, episodes)
    report = RescoreReport(run=str(source), out=str(target))
    agent = ReplayAgent()
    new_episodes: list[EpisodeResult] = []
    observations_moved: dict[str, int] = {}
    try:
        for name in dict.fromkeys(e.task for e in episodes):
            replayer.plan(name)  # every task checked before anything is written
        for old in episodes:
            plan = replayer.plan(old.task)
            why_not = None
            if old.errored:
                why_not = NOT_RESCORED_ERROR
            elif (old.error or "").startswith(REWRITTEN_PREFIX):
                why_not = NOT_RESCORED_REWRITTEN
            elif old.task_id not in plan.task_ids:
                why_not = NOT_RESCORED_MISSING
            if why_not is not None:
                report.not_rescored.append(NotRescored(old.task, old.task_id, old.trial, why_not))
                new_episodes.append(old)
                continue
            new = _replay(replayer, agent, old)
            new_episodes.append(new)
            report.rescored += 1
            score = report.scores.setdefault(old.task, {"old": 0.0, "new": 0.0, "n": 0})
            score["old"] += old.score
            score["new"] += new.score
            score["n"] += 1
            moved = list(old.observations) != list(new.observations)
            if moved:
                observations_moved[old.task] = observations_moved.get(old.task, 0) + 1
            if _changed(old, new):
                version = old_versions.get(old.task)
                why = _why(old, plan, version, str(plan.env_class.scorer_version), old_digests.get(old.task))
                change = EpisodeChange(old.task, old.task_id, old.trial, old.score, new.score, old.success,
                                       new.success, dict(old.metrics), dict(new.metrics), why, moved)  # fmt: skip
                report.changes.append(change)
    finally:
        replayer.close()
    for score in report.scores.values():
        score["old"] /= score["n"]
        score["new"] /= score["n"]

    new_versions = {name: str(plan.env_class.scorer_version) for name, plan in replayer.plans.items()}
    new_digests = {name: plan.digest for name, plan in replayer.plans.items()}
    for name in replayer.plans:
        notes = []
        if observations_moved.get(name):
            notes.append(f"{OBSERVATIONS_NOTE} ({observations_moved[name]} episodes)")
        old_version = old_versions.get(name)
        if old_version is not None and str(old_version) != new_versions[name]:
            notes.append(f"scorer_version {old_version} -> {new_versions[name]}")
        if old_digests.get(name) is not None and old_digests[name] != new_digests[name]:
            notes.append(f"task set changed (digest {old_digests[name]} -> {new_digests[name]})")
        if notes:
            report.notes[name] = notes

    _write(source, target, old_run, old_report, new_episodes, new_versions, new_digests, overwrite)
    return report


def _write(
    source: Path,
    target: Path,
    old_run: dict[str, Any],
    old_report: dict[str, Any],
    episodes: list[EpisodeResult],
    new_versions: dict[str, str],
    new_digests: dict[str, str],
    overwrite: bool,
) -> None:
    """The new run folder: the old run.json with where it came from and today's versions and
    digests, every episode, the summary, and the old wall times and frames (episodes keep their
    frame paths)."""
    settings = _settings_of(old_run)
    settings["scorer_versions"] = new_versions
    settings["task_sets"] = {**(settings.get("task_sets") or {}), **new_digests}
    folder = RunFolder.open(target, settings, command_line(), overwrite=overwrite)
    new_run = {
        **old_run,
        "command": command_line(),
        "settings": settings,
        **versions(),
        "git_commit": git_commit(),
        "rescored_from": {
            "path": str(source.resolve()),
            "toolbench": old_run.get("toolbench"),
            "git_commit": old_run.get("git_commit"),
            "scorer_versions": _recorded(old_run, "scorer_versions"),
        },
    }
    new_run.pop("scorer_versions", None)  # kept once, in the settings
    (target / RUN_FILE).write_text(json.dumps(new_run, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for episode in episodes:
        folder.append(episode)
    if (source / TIMINGS).is_file():  # the agent's wall times are history too (episodes read back carry none)
        shutil.copyfile(source / TIMINGS, target / TIMINGS)
    if (source / FRAMES).is_dir() and any(e.frames for e in episodes):
        shutil.copytree(source / FRAMES, target / FRAMES, dirs_exist_ok=True)
    by_task: dict[str, list[EpisodeResult]] = {}
    for episode in episodes:
        by_task.setdefault(episode.task, []).append(episode)
    report: dict[str, Any] = {
        "agent": old_report.get("agent", settings.get("agent", "")),
        "split": old_report.get("split", episodes[0].split if episodes else ""),
        "tasks": {name: summarize(items, items[0].mode) for name, items in by_task.items()},
    }
    for key in ("skipped", "stopped"):
        if old_report.get(key):
            report[key] = old_report[key]
    folder.write_summary(report)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``toolbench score``'s arguments."""
    parser.add_argument("run_dir", metavar="RUN", help="a run folder (eval's --out)")
    parser.add_argument("--out", default=None, help="the new run folder (default: RUN-rescored)")
    parser.add_argument("--overwrite", action="store_true", help="replace a run in --out")
    parser.add_argument("--json", action="store_true", help="print the changes as JSON")
    parser.add_argument(
        "--fail-on-change",
        action="store_true",
        help="exit 1 when any episode's score, success or metrics changed (CI: notice a scorer change)",
    )


def main(args: argparse.Namespace) -> int:
    """Run ``toolbench score``: 0 re-scored, 1 changed with --fail-on-change, 2 cannot re-score."""
    try:
        report = rescore(args.run_dir, args.out, overwrite=args.overwrite)
    except (RescoreError, RunFolderError) as exc:
        print(f"toolbench score: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report.to_json(), ensure_ascii=False) if args.json else report.text())
    return 1 if args.fail_on_change and report.changed else 0
