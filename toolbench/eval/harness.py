"""The evaluation harness: play an agent on every task of a split and aggregate the scores.

Episodes are handed to ``on_episode`` as they finish (the run folder appends them to
``trajectories.jsonl`` at once), so a run that stops keeps what it did and ``--resume`` skips it.
A ``RunStopped`` from the agent (its model endpoint failed too often in a row) stops the run;
``evaluate`` raises ``RunInterrupted`` carrying the episodes finished so far.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

from toolbench.agents import AgentError, RunStopped, make_agent
from toolbench.agents.llm import ModelSettings
from toolbench.catalog import TaskSpec, find_task
from toolbench.core.env import ToolEnv
from toolbench.core.tasks import Task, read_task_file

AGENT_ERROR_PREFIX = "agent error: "  # an episode's error when the agent, not the env, failed
_INFO_KEYS_KEPT_OUT = ("task_id", "success", "score", "executable", "error")


@dataclass
class EpisodeResult:
    task: str
    task_id: str
    category: str | None
    success: bool
    score: float
    executable: bool
    error: str | None
    metrics: dict[str, float]
    steps: int
    actions: list[str] = field(default_factory=list)
    observations: list[str] = field(default_factory=list)
    mode: str = ""
    split: str = ""
    prompt: str = ""
    references: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)  # the final info's other task fields (mismatches, reason)
    agent_log: dict[str, Any] = field(default_factory=dict)  # messages, model calls, usage, settings
    frames: str | None = None  # a PNG strip of the episode's camera frames, relative to the run folder
    seconds: float = field(default=0.0, compare=False)  # wall time: the one field that varies between runs

    @property
    def agent_failed(self) -> bool:
        return (self.error or "").startswith(AGENT_ERROR_PREFIX)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EpisodeResult:
        names = cls.__dataclass_fields__
        return cls(**{key: value for key, value in data.items() if key in names})


class RunInterrupted(Exception):
    """The run stopped before every episode was played; ``episodes`` are those it finished."""

    def __init__(self, message: str, report: dict[str, Any], episodes: list[EpisodeResult]) -> None:
        super().__init__(message)
        self.report = report
        self.episodes = episodes


def _json_safe(value: Any) -> Any:
    return json.loads(json.dumps(value, ensure_ascii=False, default=repr))


def make_env(spec: TaskSpec, split: str, mode: str | None, task_file: str | None = None) -> ToolEnv:
    kwargs: dict[str, Any] = {"mode": mode, "disable_env_checker": True}
    if task_file:
        kwargs["task_file"] = task_file
    else:
        kwargs["split"] = split
    env = gym.make(spec.env_id, **kwargs)
    return env.unwrapped  # the harness drives the raw env; checkers add nothing here


def _save_frames(env: ToolEnv, task: Task, frames_dir: Path) -> str | None:
    """The episode's frames as one downscaled PNG strip (for ``toolbench view``)."""
    frames = getattr(env, "frames", None)
    if not frames:
        return None
    import numpy as np
    from PIL import Image

    small = [np.asarray(f, dtype=np.uint8) for f in frames[:12]]
    folder = frames_dir / env.task_name
    folder.mkdir(parents=True, exist_ok=True)
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in task.id) + ".png"
    Image.fromarray(np.concatenate(small, axis=1)).save(folder / name, optimize=True)
    return f"{frames_dir.name}/{env.task_name}/{name}"


def run_episode(env: ToolEnv, agent: Any, task_id: str, frames_dir: Path | None = None) -> EpisodeResult:
    """Play one episode; an ``AgentError`` ends it scored 0 (``RunStopped`` propagates)."""
    started = time.monotonic()
    if frames_dir is not None and hasattr(env, "record_frames"):
        env.record_frames = True
    observation, info = env.reset(options={"task_id": task_id})
    task = env.task
    assert task is not None
    actions, observations = [], []
    agent.begin(env, task, observation, info)
    info = {"success": False, "score": 0.0, "executable": False, "error": None}
    while True:
        try:
            action = agent.act(observation, info)
        except RunStopped:
            raise
        except AgentError as exc:
            info = {"success": False, "score": 0.0, "executable": False, "error": f"{AGENT_ERROR_PREFIX}{exc}"}
            break
        observation, _, terminated, truncated, info = env.step(action)
        actions.append(action)
        observations.append(observation)
        if terminated or truncated:
            break
    metrics = {name: float(info.get(name, 0.0)) for name in env.metric_names}
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
        frames=_save_frames(env, task, frames_dir) if frames_dir is not None else None,
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
    task_ids: tuple[str, ...]


def _run_job(job: _Job) -> tuple[list[EpisodeResult], str | None]:
    """Play a job's episodes; returns them and, if the agent stopped the run, why."""
    env = make_env(find_task(job.task_name), job.split, job.mode, job.task_file)
    agent = make_agent(job.agent, seed=job.seed, settings=job.settings)
    frames_dir = Path(job.frames_dir) if job.frames_dir else None
    results = []
    try:
        for task_id in job.task_ids:
            results.append(run_episode(env, agent, task_id, frames_dir))
    except RunStopped as exc:
        return results, str(exc)
    finally:
        env.close()
    return results, None


def summarize(results: Sequence[EpisodeResult], mode: str) -> dict[str, Any]:
    n = len(results)
    summary: dict[str, Any] = {
        "n": n,
        "mode": mode,
        "success_rate": sum(r.success for r in results) / n if n else 0.0,
        "score": sum(r.score for r in results) / n if n else 0.0,
        "executable_rate": sum(r.executable for r in results) / n if n else 0.0,
    }
    for name in results[0].metrics if results else []:
        summary[name] = sum(r.metrics[name] for r in results) / n
    usage = [r.agent_log.get("usage") for r in results if r.agent_log.get("usage")]
    if usage:
        summary["total_tokens"] = sum(u.get("total_tokens", 0) for u in usage)
    return summary


def supports(spec: TaskSpec, split: str, mode: str | None) -> bool:
    """Whether a task has this split and mode (``None``: its default mode)."""
    return split in spec.splits and (mode is None or mode in spec.modes)


def task_ids_for(spec: TaskSpec, split: str, task_file: str | None, limit: int | None) -> list[str]:
    """The ids a run plays, in order."""
    env_class = spec.env_class()
    tasks = (
        read_task_file(task_file, id_prefix=f"{env_class.fixture_slug}:{Path(task_file).stem}")
        if task_file
        else env_class.load_split(split)
    )
    return [task.id for task in tasks][:limit]


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
    workers: int = 1,
    seed: int = 0,
    progress: bool | str | None = False,
    settings: ModelSettings | None = None,
    task_file: str | None = None,
    finished: Sequence[EpisodeResult] = (),
    on_episode: Callable[[EpisodeResult], None] | None = None,
    frames_dir: str | Path | None = None,
) -> tuple[dict[str, Any], list[EpisodeResult]]:
    """Run ``agent`` on each task's split; returns the JSON report and every episode's result.

    ``finished`` are episodes of an earlier run of the same settings (``--resume``): they count in
    the report and are not played again. ``progress``: ``"bar"``, ``"lines"``, True (a bar on a
    terminal, else lines) or False."""
    make_agent(agent, seed=seed, settings=settings)  # fail fast on a bad agent name
    if progress is True:
        progress = "bar" if sys.stderr.isatty() else "lines"
    meter = Progress(progress or None)
    report: dict[str, Any] = {"agent": agent, "split": Path(task_file).stem if task_file else split, "tasks": {}}
    episodes: list[EpisodeResult] = []
    earlier = {(e.task, e.task_id): e for e in finished}
    for task_name in tasks:
        spec = find_task(task_name)
        if not task_file and not supports(spec, split, mode):
            raise ValueError(
                f"{spec.name} has splits {list(spec.splits)} and modes {list(spec.modes)}; "
                f"asked for split {split!r}, mode {mode!r}"
            )
        if mode is not None and mode not in spec.modes:
            raise ValueError(f"{spec.name} has modes {list(spec.modes)}, not {mode!r}")
        task_mode = mode or spec.modes[0]
        ids = task_ids_for(spec, split, task_file, limit)
        results = {i: earlier[(spec.name, i)] for i in ids if (spec.name, i) in earlier}
        todo = [i for i in ids if i not in results]
        meter.start(spec.name, len(ids), len(results))
        stopped = _play(
            spec,
            split,
            task_mode,
            agent,
            seed,
            settings,
            task_file,
            frames_dir,
            todo,
            workers,
            results,
            on_episode,
            meter,
        )
        ordered = [results[i] for i in ids if i in results]
        episodes.extend(ordered)
        report["tasks"][spec.name] = summarize(ordered, task_mode)
        if stopped:
            raise RunInterrupted(stopped, report, episodes)
        meter.finish(report["tasks"][spec.name])
    return report, episodes


def _play(
    spec: TaskSpec,
    split: str,
    mode: str,
    agent: str,
    seed: int,
    settings: ModelSettings | None,
    task_file: str | None,
    frames_dir: str | Path | None,
    todo: list[str],
    workers: int,
    results: dict[str, EpisodeResult],
    on_episode: Callable[[EpisodeResult], None] | None,
    meter: Progress,
) -> str | None:
    """Play ``todo`` into ``results``; returns why the run stopped, or None."""

    def job(ids: Sequence[str]) -> _Job:
        return _Job(
            spec.name,
            split,
            mode,
            agent,
            seed,
            settings,
            task_file,
            str(frames_dir) if frames_dir else None,
            tuple(ids),
        )

    def keep(batch: list[EpisodeResult]) -> None:
        for result in batch:
            results[result.task_id] = result
            if on_episode is not None:
                on_episode(result)
        meter.advance(len(batch))

    if not todo:
        return None
    if workers <= 1:
        env = make_env(spec, split, mode, task_file)
        runner = make_agent(agent, seed=seed, settings=settings)
        try:
            for task_id in todo:
                try:
                    keep([run_episode(env, runner, task_id, Path(frames_dir) if frames_dir else None)])
                except RunStopped as exc:
                    return str(exc)
        finally:
            env.close()
        return None
    size = max(1, math.ceil(len(todo) / (workers * 4)))  # small chunks keep workers busy to the end
    stopped = None
    with ProcessPoolExecutor(max_workers=workers) as pool:
        pending: set[Future] = {pool.submit(_run_job, job(todo[i : i + size])) for i in range(0, len(todo), size)}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                batch, why = future.result()
                keep(batch)
                if why and stopped is None:
                    stopped = why
                    for other in pending:
                        other.cancel()
    return stopped


def format_table(report: dict[str, Any]) -> str:
    """The report as a plain-text table, one row per task."""
    metric_names = sorted(
        {key for row in report["tasks"].values() for key in row}
        - {"n", "mode", "success_rate", "score", "executable_rate", "total_tokens"}
    )
    header = ["task", "mode", "n", "success", "score", "executable", *metric_names]
    rows = [header]
    for name, row in report["tasks"].items():
        rows.append(
            [
                name,
                row["mode"],
                str(row["n"]),
                f"{row['success_rate']:.3f}",
                f"{row['score']:.3f}",
                f"{row['executable_rate']:.3f}",
                *(f"{row[m]:.3f}" if m in row else "-" for m in metric_names),
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [f"agent: {report['agent']}   split: {report['split']}"]
    for index, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
        if index == 0:
            lines.append("  ".join("-" * width for width in widths))
    return "\n".join(lines)
