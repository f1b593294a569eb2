"""Playing episodes: one episode in an env (``run_episode``), and a job of episodes as a worker
plays it (``Job``, ``run_job``), here or in a pool of processes (``LocalPlayers``).

The harness plans a run and hands its jobs to players: ``LocalPlayers`` here, or the Ray backend's
actors, which play the same ``Job``s with the same ``run_job``. A worker keeps its envs and its
agent from one job to the next (``worker_envs``, ``worker_agents``).
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import gymnasium as gym

from toolbench.agents import AgentError, RunStopped, make_agent
from toolbench.agents.base import EpisodeLimits
from toolbench.agents.client import LimitReached
from toolbench.agents.llm import ModelSettings
from toolbench.catalog import TaskSpec, find_task
from toolbench.core.env import ToolEnv, VerdictKept
from toolbench.core.seeding import stable_hash
from toolbench.core.tasks import Task
from toolbench.eval.episodes import AGENT_ERROR_PREFIX, EpisodeResult

_INFO_KEYS_KEPT_OUT = ("task_id", "success", "score", "executable", "error")


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
class Job:
    """A chunk of one task's episodes with the run's settings: what a worker process or a Ray actor plays."""

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
worker_envs: dict[tuple[Any, ...], ToolEnv] = {}
worker_agents: dict[tuple[str, int, ModelSettings | None, tuple[str, str] | None], Any] = {}


def build_agent(agent: str, seed: int, settings: ModelSettings | None, llm_cache: tuple[str, str] | None = None) -> Any:
    """``make_agent``, with the model-reply cache (folder, mode) when the run has one."""
    if llm_cache is None:
        return make_agent(agent, seed=seed, settings=settings)
    from toolbench.agents.reply_cache import ReplyCache

    return make_agent(agent, seed=seed, settings=settings, cache=ReplyCache(*llm_cache))


def run_job(job: Job) -> tuple[list[EpisodeResult], str | None]:
    """Play a job's episodes (in a worker process); returns them and, if the agent stopped the run, why."""
    env_key = (job.task_name, job.split, job.mode, job.task_file, job.diagnostics, job.options)
    if env_key not in worker_envs:
        spec = find_task(job.task_name)
        worker_envs[env_key] = make_env(spec, job.split, job.mode, job.task_file, job.diagnostics, job.options)
    agent_key = (job.agent, job.seed, job.settings, job.llm_cache)
    if agent_key not in worker_agents:
        worker_agents[agent_key] = build_agent(job.agent, job.seed, job.settings, job.llm_cache)
    env, agent = worker_envs[env_key], worker_agents[agent_key]
    frames_dir = Path(job.frames_dir) if job.frames_dir else None
    results = []
    try:
        for task_id, trial in job.episodes:
            results.append(run_episode(env, agent, task_id, frames_dir, trial, job.limits))
    except RunStopped as exc:
        return results, str(exc)
    return results, None


def chunked_jobs(template: Job, spec: TaskSpec, mode: str, todo: list[tuple[str, int]], workers: int) -> list[Job]:
    """``todo``'s episodes as jobs for ``workers`` workers, in order. Scripted agents' episodes take
    milliseconds: small chunks keep workers busy to the end. A model agent's take seconds: one per
    job, so each is saved as it finishes."""
    size = 1 if template.settings is not None else max(1, math.ceil(len(todo) / (workers * 4)))
    return [
        replace(template, task_name=spec.name, mode=mode, episodes=tuple(todo[i : i + size]))
        for i in range(0, len(todo), size)
    ]


class LocalPlayers:
    """Plays episodes in this process (one env per task, one agent for the run) or in a pool."""

    def __init__(self, job: Job, workers: int) -> None:
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
    ) -> str | None:
        """Play ``todo`` ((task id, trial) pairs), handing results to ``keep`` as they come;
        returns why the run stopped, or None."""
        if not todo:
            return None
        if self.pool is None:
            return self._play_here(spec, mode, todo, keep)
        jobs = chunked_jobs(self.template, spec, mode, todo, self.workers)
        stopped = None
        pending: set[Future] = {self.pool.submit(run_job, job) for job in jobs}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                if future.cancelled():
                    continue
                batch, why = future.result()
                keep(batch)
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
                keep([episode])
        finally:
            env.close()
        return None

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
