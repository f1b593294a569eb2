"""The evaluation harness: play an agent on every task of a split and aggregate the scores.

Episodes are handed to ``on_episode`` as they finish (the run folder appends them to
``trajectories.jsonl`` at once), so a run that stops keeps what it did and ``--resume`` skips it.
A ``RunStopped`` from the agent (its model endpoint failed too often in a row) stops the run;
``evaluate`` raises ``RunInterrupted`` carrying the episodes finished so far.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import gymnasium as gym

from toolbench.agents import AgentError, RunStopped, make_agent
from toolbench.agents.base import EpisodeLimits
from toolbench.agents.client import LimitReached
from toolbench.agents.llm import ModelSettings
from toolbench.catalog import TASKS, TaskSpec, find_task
from toolbench.core.env import ToolEnv, VerdictKept
from toolbench.core.seeding import stable_hash
from toolbench.core.tasks import Task
from toolbench.eval.episodes import AGENT_ERROR_PREFIX, EpisodeKey, EpisodeResult, episode_key
from toolbench.eval.tables import text_table
from toolbench.eval.trials import format_trials, trial_stats

_INFO_KEYS_KEPT_OUT = ("task_id", "success", "score", "executable", "error")


class RunInterrupted(Exception):
    """The run stopped before every episode was played; ``episodes`` are those it finished."""

    def __init__(self, message: str, report: dict[str, Any], episodes: list[EpisodeResult]) -> None:
        super().__init__(message)
        self.report = report
        self.episodes = episodes


def _json_safe(value: Any) -> Any:
    return json.loads(json.dumps(value, ensure_ascii=False, default=repr))


def make_env(
    spec: TaskSpec,
    split: str,
    mode: str | None,
    task_file: str | None = None,
    diagnostics: bool = False,
    options: tuple[tuple[str, Any], ...] = (),
) -> ToolEnv:
    """The raw env of a run; ``options`` are the task's own ``gym.make`` arguments (AppBench's ``scorer``)."""
    kwargs: dict[str, Any] = {"mode": mode, "disable_env_checker": True, "diagnostics": diagnostics, **dict(options)}
    if task_file:
        kwargs["task_file"] = task_file
    else:
        kwargs["split"] = split
    env = gym.make(spec.env_id, **kwargs)
    return env.unwrapped  # the harness drives the raw env; checkers add nothing here


MAX_FRAMES = 12  # frames kept in an episode's strip: the first ones and always the final scene


def _save_frames(env: ToolEnv, task: Task, frames_dir: Path, trial: int = 0) -> str | None:
    """The episode's frames as one PNG strip (for ``toolbench view``)."""
    frames = getattr(env, "frames", None)
    if not frames:
        return None
    import numpy as np
    from PIL import Image

    kept = list(frames) if len(frames) <= MAX_FRAMES else [*frames[: MAX_FRAMES - 1], frames[-1]]
    folder = frames_dir / env.task_name
    folder.mkdir(parents=True, exist_ok=True)
    # The id made safe for a file name, plus a hash of it so that "a/b" and "a_b" stay apart.
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in task.id)[:100]
    name = f"{safe}-{stable_hash('frames', task.id) % 16**8:08x}" + (f"-trial{trial}" if trial else "") + ".png"
    Image.fromarray(np.concatenate([np.asarray(f, dtype=np.uint8) for f in kept], axis=1)).save(folder / name)
    return f"{frames_dir.name}/{env.task_name}/{name}"


@functools.cache
def _templates_of(env_class: type[ToolEnv], split: str) -> frozenset[str]:
    """The templates of a shipped split (none where an env declares the split but ships no file)."""
    try:
        tasks = env_class.load_split(split)
    except FileNotFoundError:
        return frozenset()
    return frozenset(t.get("template") for t in tasks if t.get("template"))


def seen_template(env_class: type[ToolEnv], task: Task) -> bool | None:
    """Whether a demo or train task has ``task``'s template (None: the task names none)."""
    template = task.get("template")
    if template is None:
        return None
    return any(template in _templates_of(env_class, split) for split in ("demo", "train") if split in env_class.splits)


#: The error of an episode the agent ended more than once, or reopened: scored as a failure.
REWRITTEN_PREFIX = "episode rewritten: "


def _rewritten(env: ToolEnv, task_id: str, verdicts: int, info: dict[str, Any]) -> str | None:
    """Why an episode the harness played is not the one it scores, or None: an episode is scored at
    its first end, so the env must have ended exactly one episode since the harness's reset (none
    when the agent failed first), on the harness's task."""
    ended = env.verdicts_given - verdicts
    if env.task is None or env.task.id != task_id:
        return "the agent reset the env to another task"
    if ended > 1 or (ended == 1 and str(info.get("error") or "").startswith(AGENT_ERROR_PREFIX)):
        return f"{ended} episode ends on this env since the harness's reset; an episode is scored at its first"
    return None


#: The error of an episode that reached one of its limits (turns, tokens, time, cost): a failure.
LIMIT_PREFIX = "limit reached: "
INFRASTRUCTURE_PREFIX = "infrastructure error: "


def _ended(error: str, status: str, kind: str | None = None) -> tuple[dict[str, Any], str, str | None]:
    return {"success": False, "score": 0.0, "executable": False, "error": error}, status, kind


def run_episode(
    env: ToolEnv,
    agent: Any,
    task_id: str,
    frames_dir: Path | None = None,
    trial: int = 0,
    limits: EpisodeLimits | None = None,
) -> EpisodeResult:
    """Play one episode (trial ``trial`` of the task) within ``limits``.

    It ends as a success, a failure (a limit reached included, with the limit as its error) or an
    error: an ``AgentError`` (the model endpoint, a cache miss) or any other exception of the agent
    or the env (``infrastructure``), never a silent 0. ``RunStopped`` and Ctrl-C propagate."""
    started = time.monotonic()
    limits = limits or EpisodeLimits()
    if frames_dir is not None and hasattr(env, "record_frames"):
        env.record_frames = True
    env.keep_verdicts = True  # a scored episode's verdict stands: no restore may reopen it
    observation, info = env.reset(options={"task_id": task_id})
    task = env.task
    assert task is not None
    verdicts = env.verdicts_given
    actions, observations = [], []
    status, kind = "", None
    with contextlib.suppress(AttributeError):  # what the harness tells every agent (Agent's docstring)
        agent.trial, agent.limits = trial, limits
    try:
        agent.begin(env, task, observation, info)
        info = {"success": False, "score": 0.0, "executable": False, "error": None}
        while True:
            if limits.timeout_s is not None and time.monotonic() - started > limits.timeout_s:
                raise LimitReached(f"{LIMIT_PREFIX}episode_timeout {limits.timeout_s:g} s (wall time of the episode)")
            action = agent.act(observation, info)
            observation, _, terminated, truncated, info = env.step(action)
            actions.append(action)
            observations.append(observation)
            if terminated or truncated:
                break
    except RunStopped:
        raise
    except LimitReached as exc:
        text = str(exc)
        info, status, kind = _ended(text if text.startswith(LIMIT_PREFIX) else LIMIT_PREFIX + text, "failure")
    except AgentError as exc:
        info, status, kind = _ended(f"{AGENT_ERROR_PREFIX}{exc}", "error", getattr(exc, "kind", "model"))
    except VerdictKept as exc:
        info, status, kind = _ended(f"{REWRITTEN_PREFIX}{exc}", "failure")
    except Exception as exc:  # noqa: BLE001 - an error of the agent's code or the env's: the episode has no verdict
        why = f"{INFRASTRUCTURE_PREFIX}{type(exc).__name__}: {exc}"[:2000]
        info, status, kind = _ended(why, "error", "infrastructure")
    if status != "error":
        rewritten = _rewritten(env, task_id, verdicts, info)
        if rewritten is not None:
            info, status, kind = _ended(f"{REWRITTEN_PREFIX}{rewritten}", "failure")
    if not status:
        status = "success" if info.get("success") else "failure"
    # A metric an env cannot compute here is None (RapidAPI's pass on an original query awaits a judge).
    metrics = {name: None if info.get(name) is None and name in info else float(info.get(name, 0.0))
               for name in env.metric_names}  # fmt: skip
    extra = {k: v for k, v in info.items() if k not in _INFO_KEYS_KEPT_OUT and k not in metrics}
    log = agent.episode_log() if hasattr(agent, "episode_log") else {}
    return EpisodeResult(
        task=env.task_name,
        task_id=task.id,
        category=task.category,
        success=bool(info["success"]),
        score=float(info["score"]),
        executable=bool(info["executable"]),
        error=info["error"],
        metrics=metrics,
        steps=len(actions),
        actions=actions,
        observations=observations,
        mode=env.mode,
        split=env.split,
        prompt=task.prompt,
        references=list(task.references),
        info=_json_safe(extra),
        agent_log=log,
        frames=_save_frames(env, task, frames_dir, trial) if frames_dir is not None else None,
        template=task.get("template"),
        seen_template=seen_template(type(env), task),
        trial=trial,
        status=status,
        error_kind=kind,
        seconds=round(time.monotonic() - started, 3),
    )


@dataclass(frozen=True)
class _Job:
    task_name: str
    split: str
    mode: str
    agent: str
    seed: int
    settings: ModelSettings | None
    task_file: str | None
    frames_dir: str | None
    episodes: tuple[tuple[str, int], ...]  # (task id, trial) of each episode to play
    diagnostics: bool = False
    options: tuple[tuple[str, Any], ...] = ()
    limits: EpisodeLimits | None = None
    llm_cache: tuple[str, str] | None = None  # the model-reply cache's folder and mode


# A worker process keeps its env and its agent from one job to the next: the agent's count of
# failed model calls in a row (its breaker) must not start again with every job.
_worker_envs: dict[tuple[Any, ...], ToolEnv] = {}
_worker_agents: dict[tuple[str, int, ModelSettings | None, tuple[str, str] | None], Any] = {}


def build_agent(agent: str, seed: int, settings: ModelSettings | None, llm_cache: tuple[str, str] | None = None) -> Any:
    """``make_agent``, with the model-reply cache (folder, mode) when the run has one."""
    if llm_cache is None:
        return make_agent(agent, seed=seed, settings=settings)
    from toolbench.agents.reply_cache import ReplyCache

    return make_agent(agent, seed=seed, settings=settings, cache=ReplyCache(*llm_cache))


def _run_job(job: _Job) -> tuple[list[EpisodeResult], str | None]:
    """Play a job's episodes (in a worker process); returns them and, if the agent stopped the run, why."""
    env_key = (job.task_name, job.split, job.mode, job.task_file, job.diagnostics, job.options)
    if env_key not in _worker_envs:
        spec = find_task(job.task_name)
        _worker_envs[env_key] = make_env(spec, job.split, job.mode, job.task_file, job.diagnostics, job.options)
    agent_key = (job.agent, job.seed, job.settings, job.llm_cache)
    if agent_key not in _worker_agents:
        _worker_agents[agent_key] = build_agent(job.agent, job.seed, job.settings, job.llm_cache)
    env, agent = _worker_envs[env_key], _worker_agents[agent_key]
    frames_dir = Path(job.frames_dir) if job.frames_dir else None
    results = []
    try:
        for task_id, trial in job.episodes:
            results.append(run_episode(env, agent, task_id, frames_dir, trial, job.limits))
    except RunStopped as exc:
        return results, str(exc)
    return results, None


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
    kinds: dict[str, int] = {}
    for r in results:
        if r.errored:
            kinds[r.error_kind or "unknown"] = kinds.get(r.error_kind or "unknown", 0) + 1
    if kinds:
        summary["error_kinds"] = dict(sorted(kinds.items()))
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
    job = _Job("", split, "", agent, seed, settings, task_file, str(frames_dir) if frames_dir else None, (),
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

            def keep(batch: list[EpisodeResult], results: dict[tuple[str, int], EpisodeResult] = results) -> None:
                for result in batch:
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
                    stopped = players.play(spec, planned.mode, again, keep, attempt)
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


def _players(backend: str, job: _Job, workers: int | None, ray_address: str | None) -> Any:
    """What plays the run's episodes: ``_Players`` here or in a process pool, or Ray actors.
    ``job`` holds the run's settings; each job adds its task, mode and episodes."""
    if backend == "local":
        return _Players(job, workers or 1)
    if backend != "ray":
        raise ValueError(f"backend {backend!r}: choose 'local' or 'ray'")
    from toolbench.eval.ray_backend import RayPlayers

    return RayPlayers(job, workers, ray_address)


class _Players:
    """Plays episodes in this process (one env per task, one agent for the run) or in a pool."""

    def __init__(self, job: _Job, workers: int) -> None:
        self.template = job
        self.runner = build_agent(job.agent, job.seed, job.settings, job.llm_cache) if workers <= 1 else None
        self.pool = ProcessPoolExecutor(max_workers=workers) if workers > 1 else None
        self.workers = workers

    def play(
        self,
        spec: TaskSpec,
        mode: str,
        todo: list[tuple[str, int]],
        keep: Callable[[list[EpisodeResult]], None],
        attempt: int = 1,
    ) -> str | None:
        """Play ``todo`` ((task id, trial) pairs), handing results to ``keep`` as they come;
        returns why the run stopped, or None. ``attempt`` > 1 marks a retry of errored episodes."""
        if not todo:
            return None
        if self.pool is None:
            return self._play_here(spec, mode, todo, keep, attempt)
        # Scripted agents' episodes take milliseconds: small chunks keep workers busy to the end. A
        # model agent's take seconds: one per job, so each is saved as it finishes.
        model = self.template.settings is not None
        size = 1 if model else max(1, math.ceil(len(todo) / (self.workers * 4)))
        jobs = [
            replace(self.template, task_name=spec.name, mode=mode, episodes=tuple(todo[i : i + size]))
            for i in range(0, len(todo), size)
        ]
        stopped = None
        pending: set[Future] = {self.pool.submit(_run_job, job) for job in jobs}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                if future.cancelled():
                    continue
                batch, why = future.result()
                keep([_attempted(e, attempt) for e in batch])
                if why and stopped is None:
                    stopped = why
                    for other in pending:
                        other.cancel()  # those not started; running ones finish (or stop) and are kept
        return stopped

    def _play_here(
        self,
        spec: TaskSpec,
        mode: str,
        todo: list[tuple[str, int]],
        keep: Callable[[list[EpisodeResult]], None],
        attempt: int,
    ) -> str | None:
        job = self.template
        env = make_env(spec, job.split, mode, job.task_file, job.diagnostics, job.options)
        frames = Path(job.frames_dir) if job.frames_dir else None
        try:
            for task_id, trial in todo:
                try:
                    episode = run_episode(env, self.runner, task_id, frames, trial, job.limits)
                except RunStopped as exc:
                    return str(exc)
                keep([_attempted(episode, attempt)])
        finally:
            env.close()
        return None

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


def _attempted(episode: EpisodeResult, attempt: int) -> EpisodeResult:
    episode.attempts = attempt
    return episode


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
