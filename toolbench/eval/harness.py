"""The evaluation harness: play an agent on every task of a split and aggregate the scores.

Episodes are handed to ``on_episode`` as they finish (the run folder appends them to
``trajectories.jsonl`` at once), so a run that stops keeps what it did and ``--resume`` skips it.
A ``RunStopped`` from the agent (its model endpoint failed too often in a row) stops the run;
``evaluate`` raises ``RunInterrupted`` carrying the episodes finished so far.
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolbench.agents import make_agent
from toolbench.agents.base import EpisodeLimits
from toolbench.agents.llm import ModelSettings
from toolbench.catalog import TASKS, TaskSpec, find_task
from toolbench.core.tasks import Task
from toolbench.eval.episodes import EpisodeKey, EpisodeResult, episode_key, error_kinds

# Playing an episode lives in ``jobs``; run_episode, make_env, seen_template and the error prefixes
# stay importable from the harness, where scripts and the other eval modules take them.
from toolbench.eval.jobs import INFRASTRUCTURE_PREFIX as INFRASTRUCTURE_PREFIX
from toolbench.eval.jobs import LIMIT_PREFIX, Job, LocalPlayers
from toolbench.eval.jobs import REWRITTEN_PREFIX as REWRITTEN_PREFIX
from toolbench.eval.jobs import make_env as make_env
from toolbench.eval.jobs import run_episode as run_episode
from toolbench.eval.jobs import seen_template as seen_template
from toolbench.eval.tables import text_table
from toolbench.eval.trials import format_trials, trial_stats


class RunInterrupted(Exception):
    """The run stopped before every episode was played; ``episodes`` are those it finished."""

    def __init__(self, message: str, report: dict[str, Any], episodes: list[EpisodeResult]) -> None:
        super().__init__(message)
        self.report = report
        self.episodes = episodes


def summarize(results: Sequence[EpisodeResult], mode: str) -> dict[str, Any]:
    n = len(results)
    summary: dict[str, Any] = {
        "n": n,
        "mode": mode,
        "success_rate": sum(r.success for r in results) / n if n else 0.0,
        "score": sum(r.score for r in results) / n if n else 0.0,
        "executable_rate": sum(r.executable for r in results) / n if n else 0.0,
        # Rates are over every episode; errored ones (no verdict on the agent) are counted here.
        "errors": sum(r.errored for r in results),
    }
    kinds = error_kinds(results)
    if kinds:
        summary["error_kinds"] = kinds
    limited = sum(r.status == "failure" and (r.error or "").startswith(LIMIT_PREFIX) for r in results)
    if limited:
        summary["limit_reached"] = limited
    for name in results[0].metrics if results else []:
        values = [r.metrics[name] for r in results if r.metrics.get(name) is not None]
        summary[name] = sum(values) / len(values) if values else None
    corpus = getattr(find_task(results[0].task).env_class(), "summarize_episodes", None) if results else None
    if corpus is not None:  # a task's split-level metrics (AppBench's micro F1 and its paper's table)
        summary.update(corpus([r.info for r in results]))
    seen = [r for r in results if r.seen_template is True]
    unseen = [r for r in results if r.seen_template is False]
    if seen and unseen:  # e.g. Tabletop's test: seen and unseen instruction types, as the paper reports them
        summary["by_template"] = {
            label: {"n": len(part), "success_rate": sum(r.success for r in part) / len(part),
                    "score": sum(r.score for r in part) / len(part)}
            for label, part in (("seen", seen), ("unseen", unseen))
        }  # fmt: skip
    usage = [r.agent_log.get("usage") for r in results if r.agent_log.get("usage")]
    if usage:
        summary["total_tokens"] = sum(u.get("total_tokens", 0) for u in usage)
    if any(r.trial for r in results):  # several trials of each task: tau-bench's pass^k and pass@k
        summary["trial_stats"] = trial_stats(results)
    return summary


def tasks_for_all(split: str, mode: str | None) -> tuple[list[str], dict[str, str]]:
    """The tasks ``--task all`` plays in this split and mode (``None``: each task's default), and
    why each of the others is skipped."""
    played, skipped = [], {}
    for spec in TASKS:
        if split not in spec.splits:
            skipped[spec.name] = f"no {split!r} split (it has {', '.join(spec.splits)})"
        elif mode is not None and mode not in spec.modes:
            skipped[spec.name] = f"no {mode!r} mode (it has {', '.join(spec.modes)})"
        else:
            played.append(spec.name)
    return played, skipped


@dataclass(frozen=True)
class PlannedTask:
    """One task of a run: its spec, the mode it is played in, and its tasks in order."""

    spec: TaskSpec
    mode: str
    tasks: tuple[Task, ...]


def plan_run(
    agent: str,
    tasks: Iterable[str],
    split: str = "test",
    mode: str | None = None,
    limit: int | None = None,
    task_file: str | None = None,
    settings: ModelSettings | None = None,
    seed: int = 0,
    task_ids: Sequence[str] | None = None,
) -> list[PlannedTask]:
    """What a run will play, checked before anything is played or written (raises ValueError or
    KeyError naming what is wrong). ``task_ids`` keeps those tasks only (each must be found)."""
    make_agent(agent, seed=seed, settings=settings)  # a bad agent name
    plan = []
    picked = set(task_ids) if task_ids is not None else None
    for task_name in tasks:
        spec = find_task(task_name)
        if mode is not None and mode not in spec.modes:
            raise ValueError(f"{spec.name} has modes {list(spec.modes)}, not {mode!r}")
        if not task_file and split not in spec.splits:
            raise ValueError(f"{spec.name} has splits {list(spec.splits)}, not {split!r}")
        env_class = spec.env_class()
        # As the env reads them: the task's own file formats, records checked and completed (ids and all).
        if task_file:
            loaded = env_class.tasks_from_file(task_file)
        else:
            loaded = [env_class.complete_task(task) for task in env_class.load_split(split)]
        if picked is not None:
            loaded = [task for task in loaded if task.id in picked]
        plan.append(PlannedTask(spec, mode or spec.modes[0], tuple(loaded[:limit])))
    if picked is not None:
        missing = sorted(picked - {task.id for planned in plan for task in planned.tasks})
        if missing:
            shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            raise ValueError(f"--task-ids: no task of this run has the id {shown}")
        plan = [planned for planned in plan if planned.tasks]
    return plan


class Progress:
    """A bar on a terminal; otherwise one line on stderr per finished task."""

    def __init__(self, style: str | None) -> None:
        self.style = style
        self._bar: Any = None

    def start(self, name: str, total: int, done: int) -> None:
        self._name, self._started = name, time.monotonic()
        if self.style == "bar":
            from tqdm import tqdm

            self._bar = tqdm(total=total, initial=done, desc=name, leave=False)

    def advance(self, count: int) -> None:
        if self._bar is not None:
            self._bar.update(count)

    def finish(self, summary: dict[str, Any]) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        if self.style is not None:
            print(
                f"{self._name}: {summary['n']} episodes, success {summary['success_rate']:.3f}, "
                f"score {summary['score']:.3f} ({time.monotonic() - self._started:.1f} s)",
                file=sys.stderr,
                flush=True,
            )


def evaluate(
    agent: str,
    tasks: Iterable[str],
    split: str = "test",
    mode: str | None = None,
    limit: int | None = None,
    workers: int | None = None,
    seed: int = 0,
    progress: bool | str | None = False,
    settings: ModelSettings | None = None,
    task_file: str | None = None,
    finished: Sequence[EpisodeResult] = (),
    on_episode: Callable[[EpisodeResult], None] | None = None,
    frames_dir: str | Path | None = None,
    diagnostics: bool = False,
    plan: Sequence[PlannedTask] | None = None,
    env_options: Mapping[str, Any] | None = None,
    skipped: Mapping[str, str] | None = None,
    backend: str = "local",
    ray_address: str | None = None,
    trials: int = 1,
    limits: EpisodeLimits | None = None,
    llm_cache: tuple[str, str] | None = None,
    retry_errors: int = 0,
    only: Iterable[EpisodeKey] | None = None,
) -> tuple[dict[str, Any], list[EpisodeResult]]:
    """Run ``agent`` on each task's split; returns the JSON report and every episode's result.
    ``diagnostics`` lets envs put expected values in their info (for run records, not for agents).
    ``plan`` is ``plan_run``'s for these arguments, when the caller has made it already.
    ``skipped`` (task: why, from ``tasks_for_all``) is kept in the report, so its table says which
    tasks a run of "all" left out.

    ``trials`` plays every task that many times (trial 0 to K-1: a model agent samples anew and
    keys its reply cache on the trial; the env is the same). ``limits`` bound each episode;
    ``llm_cache`` is the model-reply cache's (folder, mode). An episode that ends as an error is
    played again up to ``retry_errors`` times (the last attempt is kept). ``only`` restricts the
    run to these episodes (``--only errors`` of a resumed run).

    ``backend="local"`` plays in this process, or in ``workers`` processes (default 1);
    ``backend="ray"`` on ``workers`` Ray actors (default: one per CPU of the cluster), joining the
    running Ray or starting ``ray.init(address=ray_address)``. Both give the same report and episodes.

    ``finished`` are episodes of an earlier run of the same settings (``--resume``): they count in
    the report and are not played again. ``progress``: ``"bar"``, ``"lines"``, True (a bar on a
    terminal, else lines) or False. Raises ``RunInterrupted`` when the agent stops the run (its
    breaker) or on Ctrl-C, with the report of what was played."""
    if trials < 1:
        raise ValueError(f"trials must be at least 1, not {trials}")
    if plan is None:
        plan = plan_run(agent, tasks, split, mode, limit, task_file, settings, seed)
    if progress is True:
        progress = "bar" if sys.stderr.isatty() else "lines"
    meter = Progress(progress or None)
    report: dict[str, Any] = {"agent": agent, "split": Path(task_file).stem if task_file else split, "tasks": {}}
    if trials > 1:
        report["trials"] = trials
    if skipped:
        report["skipped"] = dict(skipped)
    episodes: list[EpisodeResult] = []
    earlier = {episode_key(e): e for e in finished}
    wanted = set(only) if only is not None else None
    # One agent (so one breaker) for the whole run, or one pool whose workers keep theirs.
    options = tuple(sorted((env_options or {}).items()))
    job = Job("", split, "", agent, seed, settings, task_file, str(frames_dir) if frames_dir else None, (),
               diagnostics, options, limits, llm_cache)  # fmt: skip
    players = _players(backend, job, workers, ray_address)
    try:
        for planned in plan:
            spec = planned.spec
            keys = [(task.id, trial) for task in planned.tasks for trial in range(trials)]
            results = {k: earlier[(spec.name, *k)] for k in keys if (spec.name, *k) in earlier}
            todo = [k for k in keys if k not in results and (wanted is None or (spec.name, *k) in wanted)]
            if wanted is not None:  # a rerun of some episodes: the others count only if they were played
                keys = [k for k in keys if k in results or k in todo]
            meter.start(spec.name, len(keys), len(results))

            def keep(
                batch: list[EpisodeResult], attempt: int = 1, results: dict[tuple[str, int], EpisodeResult] = results
            ) -> None:
                for result in batch:
                    result.attempts = attempt  # more than 1: a retry of an errored episode
                    results[(result.task_id, result.trial)] = result
                    if on_episode is not None:
                        on_episode(result)
                meter.advance(len(batch))

            try:
                stopped = players.play(spec, planned.mode, todo, keep)
                for attempt in range(2, retry_errors + 2):
                    again = [k for k in todo if results.get(k) is not None and results[k].errored]
                    if stopped or not again:
                        break
                    stopped = players.play(spec, planned.mode, again, functools.partial(keep, attempt=attempt))
            except KeyboardInterrupt:
                stopped = "interrupted (Ctrl-C)"
            ordered = [results[k] for k in keys if k in results]
            episodes.extend(ordered)
            report["tasks"][spec.name] = summarize(ordered, planned.mode)
            meter.finish(report["tasks"][spec.name])
            if stopped:
                report["stopped"] = stopped
                raise RunInterrupted(stopped, report, episodes)
    finally:
        players.close()
    return report, episodes


def _players(backend: str, job: Job, workers: int | None, ray_address: str | None) -> Any:
    """What plays the run's episodes: ``LocalPlayers`` here or in a process pool, or Ray actors.
    ``job`` holds the run's settings; each job adds its task, mode and episodes."""
    if backend == "local":
        return LocalPlayers(job, workers or 1)
    if backend != "ray":
        raise ValueError(f"backend {backend!r}: choose 'local' or 'ray'")
    from toolbench.eval.ray_backend import RayPlayers

    return RayPlayers(job, workers, ray_address)


#: Summary keys that are not per-task metric columns.
def format_table(report: dict[str, Any]) -> str:
    """The report as a plain-text table, one row per task: success, score and the one metric the
    task's paper reports (its env's ``headline_metric``). Every other metric stays in the report
    (``--json``, a run folder's ``summary.json``): side by side, ten tasks' metrics made 36 columns."""
    with_errors = any(row.get("errors") for row in report["tasks"].values())
    header = ["task", "mode", "n", *(["errors"] if with_errors else []), "success", "score", "paper metric", "value"]
    rows = []
    for name, row in report["tasks"].items():
        try:
            metric = find_task(name).env_class().headline_metric
        except KeyError:  # a run's task that the catalog no longer has
            metric = "success_rate"
        value = row.get(metric)
        rows.append(
            [
                name,
                row["mode"],
                str(row["n"]),
                *([str(row.get("errors", 0))] if with_errors else []),
                f"{row['success_rate']:.3f}",
                f"{row['score']:.3f}",
                metric,
                f"{value:.3f}" if isinstance(value, (int, float)) else "-",
            ]
        )
        for label, part in (row.get("by_template") or {}).items():
            rows.append([f"  {label} templates", "", str(part["n"]), *([""] if with_errors else []),
                         f"{part['success_rate']:.3f}", f"{part['score']:.3f}", "", ""])  # fmt: skip
    lines = [f"agent: {report['agent']}   split: {report['split']}", *text_table(header, rows)]
    lines.append("(every metric: --json, or summary.json in the --out folder)")
    if report.get("skipped"):
        lines.append(f"(skipped: {skipped_text(report['skipped'])})")
    with_trials = {name: row["trial_stats"] for name, row in report["tasks"].items() if row.get("trial_stats")}
    if with_trials:
        lines += ["", format_trials(with_trials), ""]
    errors = sum(row.get("errors", 0) for row in report["tasks"].values())
    if errors:
        lines.append(
            f"({errors} episodes ended in an error (no verdict: endpoint, cache miss, infrastructure); "
            "the rates count them as not passed)"
        )
    if report.get("stopped"):
        lines.append(f"(the run stopped early: {report['stopped']})")
    return "\n".join(lines)


def skipped_text(skipped: Mapping[str, str]) -> str:
    """``skipped`` (task: why) as one line of text."""
    return "; ".join(f"{name}: {why}" for name, why in skipped.items())
