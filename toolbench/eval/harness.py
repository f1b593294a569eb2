"""The evaluation harness: play an agent on every task of a split and aggregate the scores."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
from tqdm import tqdm

from toolbench.agents import AgentError, make_agent
from toolbench.catalog import TaskSpec, find_task
from toolbench.core.env import ToolEnv


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


AGENT_ERROR_PREFIX = "agent error: "  # an episode's error when the agent, not the env, failed


def make_env(spec: TaskSpec, split: str, mode: str | None) -> ToolEnv:
    env = gym.make(spec.env_id, split=split, mode=mode, disable_env_checker=True)
    return env.unwrapped  # the harness drives the raw env; checkers add nothing here


def run_episode(env: ToolEnv, agent: Any, task_id: str) -> EpisodeResult:
    observation, info = env.reset(options={"task_id": task_id})
    task = env.task
    assert task is not None
    actions, observations = [], []
    agent.begin(env, task, observation, info)
    info = {"success": False, "score": 0.0, "executable": False, "error": None}
    while True:
        try:
            action = agent.act(observation, info)
        except AgentError as exc:
            info = {"success": False, "score": 0.0, "executable": False, "error": f"{AGENT_ERROR_PREFIX}{exc}"}
            break
        observation, _, terminated, truncated, info = env.step(action)
        actions.append(action)
        observations.append(observation)
        if terminated or truncated:
            break
    metrics = {name: float(info.get(name, 0.0)) for name in env.metric_names}
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
    )


def _run_chunk(args: tuple[str, str, str | None, str, int, list[str]]) -> list[EpisodeResult]:
    task_name, split, mode, agent_spec, seed, task_ids = args
    env = make_env(find_task(task_name), split, mode)
    agent = make_agent(agent_spec, seed=seed)
    return [run_episode(env, agent, task_id) for task_id in task_ids]


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
    return summary


def supports(spec: TaskSpec, split: str, mode: str | None) -> bool:
    """Whether a task has this split and mode (``None``: its default mode)."""
    env_class = spec.env_class()
    return split in env_class.splits and (mode is None or mode in env_class.modes)


def evaluate(
    agent: str,
    tasks: Iterable[str],
    split: str = "test",
    mode: str | None = None,
    limit: int | None = None,
    workers: int = 1,
    seed: int = 0,
    progress: bool = True,
) -> tuple[dict[str, Any], list[EpisodeResult]]:
    """Run ``agent`` on each task's split; returns the JSON report and every episode's result."""
    make_agent(agent, seed=seed)  # fail fast on a bad agent name
    report: dict[str, Any] = {"agent": agent, "split": split, "tasks": {}}
    episodes: list[EpisodeResult] = []
    for task_name in tasks:
        spec = find_task(task_name)
        env_class = spec.env_class()
        if not supports(spec, split, mode):
            raise ValueError(
                f"{spec.name} has splits {list(env_class.splits)} and modes {list(env_class.modes)}; "
                f"asked for split {split!r}, mode {mode!r}"
            )
        task_mode = mode or env_class.modes[0]
        ids = [task.id for task in env_class.load_split(split)][:limit]
        results: list[EpisodeResult] = []
        bar = tqdm(total=len(ids), desc=spec.name, disable=not progress, leave=False)
        if workers > 1:
            size = max(1, math.ceil(len(ids) / (workers * 4)))  # small chunks keep workers busy to the end
            jobs = [(spec.name, split, task_mode, agent, seed, ids[i : i + size]) for i in range(0, len(ids), size)]
            with ProcessPoolExecutor(max_workers=workers) as pool:
                for chunk_results in pool.map(_run_chunk, jobs):
                    results.extend(chunk_results)
                    bar.update(len(chunk_results))
        else:
            env, runner = make_env(spec, split, task_mode), make_agent(agent, seed=seed)
            for task_id in ids:
                results.append(run_episode(env, runner, task_id))
                bar.update(1)
        bar.close()
        report["tasks"][spec.name] = summarize(results, task_mode)
        episodes.extend(results)
    return report, episodes


def format_table(report: dict[str, Any]) -> str:
    """The report as a plain-text table, one row per task."""
    metric_names = sorted(
        {key for row in report["tasks"].values() for key in row}
        - {"n", "mode", "success_rate", "score", "executable_rate"}
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


def write_outputs(out: str | os.PathLike[str], report: dict[str, Any], episodes: Sequence[EpisodeResult]) -> None:
    """``trajectories.jsonl`` (one line per episode), ``summary.json`` and ``summary.txt``."""
    directory = Path(out)
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / "trajectories.jsonl", "w", encoding="utf-8") as handle:
        for episode in episodes:
            handle.write(
                json.dumps({"agent": report["agent"], "split": report["split"], **asdict(episode)}, ensure_ascii=False)
                + "\n"
            )
    (directory / "summary.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    (directory / "summary.txt").write_text(format_table(report) + "\n", encoding="utf-8")
