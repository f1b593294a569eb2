"""pass^k and pass@k of a run that played each task several times (``--trials``), as tau-bench defines them.

For a task with ``n`` trials of which ``c`` succeeded, and ``k`` from 1 to ``n``:

- pass^k = C(c, k) / C(n, k): the chance that all of ``k`` trials drawn without replacement succeed
  (how reliably the agent solves the task);
- pass@k = 1 - C(n - c, k) / C(n, k): the chance that at least one of them does.

A run's value is the mean over its tasks. When tasks have different numbers of trials each task
uses its own ``n``, and ``k`` goes only up to the fewest trials any task has (the output says so).
Each value has a 95% interval from a seeded bootstrap over tasks (tasks are resampled, their trials
kept together), drawn exactly as ``intervals.bootstrap_mean`` draws them.

Errored episodes (``status == "error"``: the endpoint, a timeout, the infrastructure) are never
successes. By default they stay in a task's trials as failures, over the full denominator, with
their count beside the numbers; ``exclude_errors=True`` drops them from each task's trials instead
(a task left with no trial is then left out, and counted).

Resumed runs append episodes played again: the last line of a ``(task, task_id, trial)`` counts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolbench.eval.episodes import EpisodeResult, error_kinds
from toolbench.eval.intervals import _CHUNK, RESAMPLES, SEED
from toolbench.eval.tables import text_table


@dataclass(frozen=True)
class TaskTrials:
    """One task's trials: how many count (``n``), how many succeeded, how many errored, their scores."""

    env: str
    task_id: str
    category: str | None
    n: int
    successes: int
    errors: int
    scores: tuple[float, ...]

    @property
    def mixed(self) -> bool:
        return 0 < self.successes < self.n


def pass_hat_k(n: int, c: int, k: int) -> float:
    """tau-bench's pass^k of one task: all of ``k`` of its ``n`` trials (``c`` successes) succeed."""
    return math.comb(c, k) / math.comb(n, k)


def pass_at_k(n: int, c: int, k: int) -> float:
    """pass@k of one task: at least one of ``k`` of its ``n`` trials (``c`` successes) succeeds."""
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def bootstrap_rows(rows: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED) -> list[tuple[float, float]]:
    """The 95% percentile interval of each row's mean, all rows resampled with the same columns.

    The draws are ``intervals.bootstrap_mean``'s (same seed, same chunks), so a single row gets its
    interval; drawing once for every k keeps the tasks of a resample the same across k."""
    data = np.atleast_2d(np.asarray(rows, dtype=float))
    if data.shape[1] == 0:
        raise ValueError("a mean needs at least one value")
    rng = np.random.default_rng(seed)
    means = np.concatenate(
        [
            data[:, rng.integers(0, data.shape[1], size=(min(_CHUNK, resamples - start), data.shape[1]))].mean(axis=2)
            for start in range(0, resamples, _CHUNK)
        ],
        axis=1,
    )
    bounds = np.percentile(means, [2.5, 97.5], axis=1)
    return [(float(low), float(high)) for low, high in bounds.T]


def task_trials(
    episodes: Sequence[EpisodeResult],
    success: Callable[[EpisodeResult], Any] = lambda e: e.success,
    exclude_errors: bool = False,
) -> list[TaskTrials]:
    """Each task's trials, in first-seen order (tasks whose every trial errored are left out when
    ``exclude_errors``)."""
    latest = {(e.task, e.task_id, e.trial): e for e in episodes}
    grouped: dict[tuple[str, str], list[EpisodeResult]] = {}
    for (env, task_id, _), episode in latest.items():
        grouped.setdefault((env, task_id), []).append(episode)
    tasks = []
    for (env, task_id), trials in grouped.items():
        errors = sum(e.errored for e in trials)
        counted = [e for e in trials if not (exclude_errors and e.errored)]
        if not counted:
            continue
        tasks.append(
            TaskTrials(
                env=env,
                task_id=task_id,
                category=trials[0].category,
                n=len(counted),
                successes=sum(1 for e in counted if not e.errored and success(e)),
                errors=errors,
                scores=tuple(float(e.score) for e in counted),
            )
        )
    return tasks


def _pass_table(tasks: Sequence[TaskTrials], resamples: int, seed: int) -> dict[str, Any]:
    """pass^k and pass@k for k = 1 .. the fewest trials, with their intervals."""
    if not tasks:
        empty: dict[str, Any] = {"tasks": 0, "k_max": 0}
        return empty | {name: {} for name in ("pass_hat_k", "pass_hat_k_interval", "pass_at_k", "pass_at_k_interval")}
    k_max = min(t.n for t in tasks)
    ks = range(1, k_max + 1)
    hat = np.array([[pass_hat_k(t.n, t.successes, k) for t in tasks] for k in ks])
    at = np.array([[pass_at_k(t.n, t.successes, k) for t in tasks] for k in ks])
    # Both measures from the same resamples of tasks (the same seed): they move together, as they should.
    hat_bounds, at_bounds = bootstrap_rows(hat, resamples, seed), bootstrap_rows(at, resamples, seed)
    return {
        "tasks": len(tasks),
        "k_max": k_max,
        "pass_hat_k": {str(k): float(hat[k - 1].mean()) for k in ks},
        "pass_hat_k_interval": {str(k): list(hat_bounds[k - 1]) for k in ks},
        "pass_at_k": {str(k): float(at[k - 1].mean()) for k in ks},
        "pass_at_k_interval": {str(k): list(at_bounds[k - 1]) for k in ks},
    }


def _stats(
    tasks: Sequence[TaskTrials], episodes: Sequence[EpisodeResult], exclude_errors: bool, resamples: int, seed: int
) -> dict[str, Any]:
    envs = list(dict.fromkeys(t.env for t in tasks))
    counts = [t.n for t in tasks]
    table = _pass_table(tasks, resamples, seed)
    trials: dict[str, Any] = {
        "episodes": sum(counts),
        "min": min(counts, default=0),
        "max": max(counts, default=0),
        "counts": {str(n): counts.count(n) for n in sorted(set(counts))},
    }
    if trials["min"] != trials["max"]:
        trials["note"] = (
            f"tasks have {trials['min']} to {trials['max']} trials: each task's values use its own number of "
            f"trials, and k goes only up to {trials['min']}, the fewest"
        )
    played = list({(e.task, e.task_id, e.trial): e for e in episodes}.values())
    trials["played"] = len(played)  # counted episodes and, with exclude_errors, the errored ones dropped
    errored = [e for e in played if e.errored]
    errors = {
        "episodes": len(errored),
        "tasks": len({(e.task, e.task_id) for e in errored}),
        "by_kind": error_kinds(errored),
        "policy": "dropped from their tasks' trials" if exclude_errors else "counted as failures",
    }
    if exclude_errors:
        errors["tasks_left_out"] = len({(e.task, e.task_id) for e in played}) - len(tasks)
    by_category: dict[str, Any] = {}
    for category in dict.fromkeys(t.category for t in tasks if t.category is not None):
        by_category[str(category)] = _pass_table([t for t in tasks if t.category == category], resamples, seed)
    single_env = len(envs) <= 1
    per_task = {
        (t.task_id if single_env else f"{t.env}/{t.task_id}"): {
            "n": t.n,
            "successes": t.successes,
            "errors": t.errors,
            "score_std": float(np.std(t.scores)),
        }
        for t in tasks
    }
    mixed = sum(t.mixed for t in tasks)
    spread = {
        "mixed_tasks": mixed,
        "mixed_share": mixed / len(tasks) if tasks else 0.0,
        "mean_score_std": float(np.mean([np.std(t.scores) for t in tasks])) if tasks else 0.0,
    }
    return {
        "envs": envs,
        "trials": trials,
        "errors": errors,
        **table,
        "spread": spread,
        "by_category": by_category,
        "per_task": per_task,
    }


def trial_stats(
    episodes: Sequence[EpisodeResult],
    success: Callable[[EpisodeResult], Any] = lambda e: e.success,
    exclude_errors: bool = False,
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> dict[str, Any]:
    """pass^k and pass@k (with 95% intervals), errors, and the spread of outcomes over trials (JSON-safe).

    Keys: ``envs``; ``tasks`` (tasks with a counted trial); ``trials`` (counted episodes, ``played``:
    every episode, errored ones dropped included; min, max, counts of tasks per number of trials, and a
    ``note`` when they differ); ``errors`` (errored episodes, tasks with one, by kind, and the
    ``policy`` applied); ``k_max``; ``pass_hat_k`` and ``pass_at_k`` ({"k": value}) with
    ``pass_hat_k_interval`` and ``pass_at_k_interval`` ({"k": [low, high]}); ``spread`` (tasks with
    mixed outcomes, their share, the mean over tasks of the population std of the score over a
    task's trials); ``by_category`` (the tables per category, episodes without one skipped);
    ``per_task`` (n, successes, errors, score_std per task id, ``env/task_id`` when the episodes
    span several envs); and ``by_env`` (all of the above per env) when they do.

    ``exclude_errors=False`` (the default) counts an errored trial as a failure; ``True`` drops it
    from its task's trials.
    """
    tasks = task_trials(episodes, success, exclude_errors)
    options = (exclude_errors, resamples, seed)
    stats = _stats(tasks, episodes, *options)
    if len(stats["envs"]) > 1:
        stats["by_env"] = {
            env: _stats([t for t in tasks if t.env == env], [e for e in episodes if e.task == env], *options)
            for env in stats["envs"]
        }
    return stats


def _block(label: str, stats: dict[str, Any]) -> list[str]:
    trials, errors = stats["trials"], stats["errors"]
    shape = f"{trials['min']}" if trials["min"] == trials["max"] else f"{trials['min']} to {trials['max']}"
    head = f"{label}: {stats['tasks']} tasks x {shape} trials"
    if errors["episodes"]:
        head += f"; errored episodes: {errors['episodes']} of {trials['played']} ({errors['policy']})"
    lines = [head]
    if not stats["tasks"]:
        return [*lines, "(no task has a counted trial)"]

    def cell(name: str, k: str) -> str:
        low, high = stats[f"{name}_interval"][k]
        return f"{stats[name][k]:.3f} [{low:.3f}, {high:.3f}]"

    rows = [[k, cell("pass_hat_k", k), cell("pass_at_k", k)] for k in stats["pass_hat_k"]]
    lines += text_table(["k", "pass^k [95%]", "pass@k [95%]"], rows)
    if "note" in trials:
        lines.append(f"({trials['note']})")
    spread = stats["spread"]
    lines.append(
        f"mixed outcomes: {spread['mixed_share']:.0%} of tasks ({spread['mixed_tasks']} of {stats['tasks']}); "
        f"mean per-task std of score: {spread['mean_score_std']:.3f}"
    )
    return lines


def format_trials(stats: dict[str, Any]) -> str:
    """A plain-text table per env: k, pass^k and pass@k with their 95% intervals, then the spread.

    ``stats`` is ``trial_stats``'s result, or a mapping of env name to one."""
    if "pass_hat_k" not in stats:  # {env: stats}
        blocks = [_block(env, part) for env, part in stats.items()]
    elif "by_env" in stats:
        blocks = [_block(env, part) for env, part in stats["by_env"].items()]
    else:
        blocks = [_block(", ".join(stats["envs"]) or "run", stats)]
    return "\n\n".join("\n".join(block) for block in blocks)
