"""``toolbench gate RUN --baseline RUN``: is the new run worse than the baseline? An exit code for CI.

The runs are paired task by task over the ``(task, task_id)`` keys both played; with trials, a
task's value on each side is the mean of the metric over its trials (the two sides may have played
different numbers). The question is one-sided: H0 "new - baseline >= -max_drop" against "the new run
is worse by more than max_drop", at level ``1 - confidence``. One rule decides in every case: a
regression is established when a level-``1 - confidence`` one-sided test rejects H0.

- A binary metric (every value 0 or 1), one trial per task on each side, ``max_drop == 0``: the exact
  McNemar test, a one-sided binomial test on the discordant tasks (under H0 a task the runs disagree
  on is as likely a loss as a win): regression when its p-value is below ``1 - confidence``.
- Anything else (a tolerance ``max_drop > 0``, per-task means over trials, a continuous metric): a
  seeded paired bootstrap of the mean difference (10,000 resamples of task pairs; the percentile's
  distance from the mean widened by sqrt(n / (n - 1)), the sample variance's correction) gives the
  one-sided upper ``confidence`` bound of new - baseline: regression when it is below ``-max_drop``.

The difference's bootstrap bound is reported in both cases, for scale. Errored episodes (the
endpoint, the infrastructure: no verdict on the agent's work) are left out of the metric by default
and counted beside it; ``count_errors`` scores them as failures instead. Either way a run whose share
of errored episodes exceeds ``max_error_rate`` is not compared.

Power: the smallest drop the test catches 80% of the time at this sample size and confidence, by the
normal approximation ``(z_conf + z_0.8) * sd / sqrt(N)`` with ``sd`` the paired differences' std
(plus ``max_drop``, the drop already tolerated). For a binary metric with one trial ``sd^2`` is the
discordance rate, and at least the drop itself (a drop of d needs a share d of tasks lost), which
keeps a comparison of two identical runs from promising to see any drop. A warning is printed when
that drop exceeds ``min_detectable``.

Exit codes: 0 no regression established, 1 regression established, 2 cannot compare (different
task sets or task-set digests, different scorer versions, fewer than ``min_tasks`` paired tasks, too
many errored episodes, the metric missing).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

from toolbench.eval.episodes import EpisodeResult
from toolbench.eval.intervals import interval
from toolbench.eval.runs import RunFolderError, read_run

RESAMPLES = 10_000
SEED = 0
POWER = 0.8
_CELLS = 1_000_000  # indices drawn at once: 8 MB, whatever the number of tasks
_ALIASES = {"success_rate": "success"}  # compare's and the summaries' name for it
_EXAMPLES = 3  # task ids named in a message about differing task sets

EXIT_OK, EXIT_REGRESSION, EXIT_CANNOT_COMPARE = 0, 1, 2


@dataclass
class GateResult:
    """The gate's verdict, its exit code and the numbers behind it (``None`` where the runs were not compared)."""

    exit_code: int
    verdict: str
    new_label: str
    baseline_label: str
    metric: str
    confidence: float
    max_drop: float
    min_detectable: float
    reasons: list[str] = field(default_factory=list)  # why the runs cannot be compared
    episodes: dict[str, int] = field(default_factory=dict)  # per side
    errors: dict[str, int] = field(default_factory=dict)  # errored episodes per side
    errors_policy: str = ""
    trials: dict[str, list[int]] = field(default_factory=dict)  # per side: fewest and most trials of a task
    paired_tasks: int = 0
    baseline_value: float | None = None
    baseline_interval: tuple[float, float] | None = None  # 95%: Wilson's for a rate, else a bootstrap over tasks
    new_value: float | None = None
    new_interval: tuple[float, float] | None = None
    difference: float | None = None  # new - baseline, over the paired tasks
    bound: float | None = None  # the one-sided upper ``confidence`` bound of the difference (paired bootstrap)
    test: str = ""
    p_value: float | None = None  # the exact test's; the bootstrap decides by its bound
    losses: int | None = None  # binary, one trial: tasks the baseline solved and the new run did not
    wins: int | None = None  # ... and the other way round
    detectable: float | None = None  # the drop caught with 80% power
    power_warning: str | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)

    def report_text(self) -> str:
        """One screen: the runs, what was paired, the values, the test, the power, the verdict."""
        sides = ("baseline", "new")
        lines = [
            f"toolbench gate: {self.new_label} against the baseline {self.baseline_label}",
            f"metric: {self.metric}; paired tasks: {self.paired_tasks}; trials per task: "
            + ", ".join(f"{side} {_span(self.trials[side])}" for side in sides if side in self.trials),
        ]
        if self.episodes:
            counts = ", ".join(f"{side} {self.errors.get(side, 0)} of {self.episodes[side]}" for side in sides)
            lines.append(f"errored episodes: {counts} ({self.errors_policy})")
        lines += [f"cannot compare: {reason}" for reason in self.reasons]
        if self.difference is not None and self.bound is not None:
            level = f"{self.confidence:.0%}"
            lines += [
                _value_line("baseline", self.baseline_value, self.baseline_interval),
                _value_line("new", self.new_value, self.new_interval) + "  (95% intervals)",
                f"new - baseline: {self.difference:+.3f}, one-sided {level} upper bound {self.bound:+.3f} "
                f"(paired bootstrap); drop allowed: {self.max_drop:.3f}",
            ]
            test = f"test: {self.test}"
            if self.losses is not None:
                test += f"; {self.losses} tasks lost, {self.wins} won"
            if self.p_value is not None:
                test += f"; p = {self.p_value:.3g}, a regression when below {1 - self.confidence:.3g}"
            else:
                test += f"; a regression when the bound is below {-self.max_drop:+.3f}"
            lines.append(test)
            if self.detectable is not None:
                lines.append(
                    f"power: with {self.paired_tasks} paired tasks at {level} confidence it catches a drop of about "
                    f"{self.detectable:.3f} 80% of the time"
                )
            if self.power_warning:
                lines.append(f"warning: {self.power_warning}")
        lines.append(f"verdict: {self.verdict} (exit {self.exit_code})")
        return "\n".join(lines)


def _value_line(side: str, value: float | None, bounds: tuple[float, float] | None) -> str:
    if value is None or bounds is None:
        return f"{side:<9} -"
    return f"{side:<9} {value:.3f} [{bounds[0]:.3f}, {bounds[1]:.3f}]"


def _span(bounds: Sequence[int]) -> str:
    return str(bounds[0]) if bounds[0] == bounds[1] else f"{bounds[0]} to {bounds[1]}"


def _recorded_value(episode: EpisodeResult, metric: str) -> float | None:
    if metric == "success":
        return float(episode.success)
    if metric == "score":
        return float(episode.score)
    value = episode.metrics.get(metric)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _metric_reader(metric: str, count_errors: bool) -> Callable[[EpisodeResult], float | None]:
    """An episode's value of the metric (``None``: it has none, or it errored and errors are left out)."""

    def read(episode: EpisodeResult) -> float | None:
        if episode.errored:
            # No verdict on the agent's work: nothing, or with count_errors a failure, whatever it recorded.
            return 0.0 if count_errors else None
        return _recorded_value(episode, metric)

    return read


def _latest(episodes: Sequence[EpisodeResult]) -> list[EpisodeResult]:
    """One episode per (task, task_id, trial): a resumed run's last line of it."""
    return list({(e.task, e.task_id, e.trial): e for e in episodes}.values())


def _examples(keys: set[tuple[str, str]]) -> str:
    named = ", ".join(f"{task}/{task_id}" for task, task_id in sorted(keys)[:_EXAMPLES])
    return named + (", ..." if len(keys) > _EXAMPLES else "")


def _recorded(run: Mapping[str, Any] | None, name: str) -> dict[str, Any]:
    """A per-task record of run.json (``task_sets``, ``scorer_versions``), at the top or in its settings."""
    if not run:
        return {}
    settings = run.get("settings") if isinstance(run.get("settings"), dict) else {}
    found = run.get(name, settings.get(name))
    return found if isinstance(found, dict) else {}


def _upper_bound(differences: np.ndarray, confidence: float, resamples: int, seed: int) -> float:
    """The one-sided upper ``confidence`` bound of the mean difference: a percentile of the means of
    seeded resamples of the task pairs (drawn in chunks, so memory stays flat), expanded for small n."""
    rng = np.random.default_rng(seed)
    size = differences.size
    chunk = max(1, _CELLS // size)
    means = np.concatenate(
        [
            differences[rng.integers(0, size, size=(min(chunk, resamples - start), size))].mean(axis=1)
            for start in range(0, resamples, chunk)
        ]
    )
    # The resamples' spread is that of n values around their own mean: widened by sqrt(n / (n - 1)) it
    # matches the sample variance's, which keeps the bound from being too tight on a few tasks.
    centre = float(differences.mean())
    return centre + math.sqrt(size / (size - 1)) * (float(np.percentile(means, 100 * confidence)) - centre)


def mcnemar_p(losses: int, wins: int) -> float:
    """The exact one-sided McNemar p-value of at least ``losses`` losses among the discordant pairs, when
    a loss and a win are equally likely: P(X >= losses), X ~ Binomial(losses + wins, 1/2)."""
    n = losses + wins
    if n == 0:
        return 1.0
    return sum(math.comb(n, i) for i in range(losses, n + 1)) / 2**n


def compare_episodes(
    new: Sequence[EpisodeResult],
    baseline: Sequence[EpisodeResult],
    metric: str = "success",
    max_drop: float = 0.0,
    confidence: float = 0.95,
    min_detectable: float = 0.05,
    min_tasks: int = 10,
    max_error_rate: float = 0.1,
    *,
    count_errors: bool = False,
    new_run: Mapping[str, Any] | None = None,
    baseline_run: Mapping[str, Any] | None = None,
    new_label: str = "new",
    baseline_label: str = "baseline",
    resamples: int = RESAMPLES,
    seed: int = SEED,
) -> GateResult:
    """The gate on two runs' episodes; ``new_run`` and ``baseline_run`` are their run.json (optional),
    whose task-set digests and scorer versions must agree where both record them."""
    if not 0 < confidence < 1:
        raise ValueError(f"--confidence must be between 0 and 1, not {confidence}")
    if max_drop < 0:
        raise ValueError(f"--max-drop must be 0 or more, not {max_drop}")
    if min_tasks < 2:
        raise ValueError(f"--min-tasks must be at least 2, not {min_tasks}")
    if not 0 <= max_error_rate <= 1:
        raise ValueError(f"--max-error-rate must be between 0 and 1, not {max_error_rate}")
    metric = _ALIASES.get(metric, metric)
    sides = {"new": _latest(new), "baseline": _latest(baseline)}
    result = GateResult(
        exit_code=EXIT_CANNOT_COMPARE,
        verdict="cannot compare",
        new_label=new_label,
        baseline_label=baseline_label,
        metric=metric,
        confidence=confidence,
        max_drop=max_drop,
        min_detectable=min_detectable,
        episodes={side: len(items) for side, items in sides.items()},
        errors={side: sum(e.errored for e in items) for side, items in sides.items()},
        errors_policy="scored as failures" if count_errors else "left out of the metric",
    )
    reasons = result.reasons
    read = _metric_reader(metric, count_errors)
    for side, items in sides.items():
        name = f"the {side} run" if side == "new" else "the baseline"
        if not items:
            reasons.append(f"{name} has no episodes")
            continue
        scored = [e for e in items if not e.errored]
        if metric not in ("success", "score") and scored and all(read(e) is None for e in scored):
            known = sorted({k for e in items for k, v in e.metrics.items() if v is not None})
            reasons.append(f"{name} has no metric {metric!r} (its episodes have: {', '.join(known) or 'none'})")
        rate = result.errors[side] / len(items)
        if rate > max_error_rate:
            reasons.append(
                f"{result.errors[side]} of {len(items)} episodes of {name} errored ({rate:.0%}), more than "
                f"--max-error-rate {max_error_rate:.0%}: its numbers rest on too little work"
            )
    keys = {side: {(e.task, e.task_id) for e in items} for side, items in sides.items()}
    only_new, only_baseline = keys["new"] - keys["baseline"], keys["baseline"] - keys["new"]
    if sides["new"] and sides["baseline"] and (only_new or only_baseline):
        parts = [f"{len(only_new)} only in the new run ({_examples(only_new)})"] if only_new else []
        parts += [f"{len(only_baseline)} only in the baseline ({_examples(only_baseline)})"] if only_baseline else []
        reasons.append("the runs played different tasks: " + "; ".join(parts))
    checks = (
        ("task_sets", "task set digests", "the same ids hold other tasks"),
        ("scorer_versions", "scorer versions", "the same actions may score differently"),
    )
    # A digest covers a run's whole task list: it can only tell runs apart that played the same ids.
    different_ids = {task for task, _ in only_new | only_baseline}
    for record, what, why in checks:
        mine, theirs = _recorded(new_run, record), _recorded(baseline_run, record)
        differ = sorted(
            task
            for task in mine.keys() & theirs.keys()
            if mine[task] != theirs[task] and not (record == "task_sets" and task in different_ids)
        )
        if differ:
            reasons.append(
                f"different {what} for {', '.join(differ)} ("
                + "; ".join(f"{t}: {theirs[t]} in the baseline, {mine[t]} in the new run" for t in differ)
                + f"): {why}"
            )

    values: dict[str, dict[tuple[str, str], list[float]]] = {"new": {}, "baseline": {}}
    for side, items in sides.items():
        for episode in items:
            value = read(episode)
            if value is not None:
                values[side].setdefault((episode.task, episode.task_id), []).append(value)
    paired = sorted(values["new"].keys() & values["baseline"].keys())
    result.paired_tasks = len(paired)
    for side in values:
        counts = [len(values[side][key]) for key in paired]
        result.trials[side] = [min(counts), max(counts)] if counts else [0, 0]
    if len(paired) < min_tasks:
        reasons.append(
            f"only {len(paired)} paired tasks with a value on both sides, fewer than --min-tasks {min_tasks}"
        )
    if reasons:
        return result

    new_means = np.array([np.mean(values["new"][key]) for key in paired])
    baseline_means = np.array([np.mean(values["baseline"][key]) for key in paired])
    differences = new_means - baseline_means
    n = len(paired)
    result.new_value, result.baseline_value = float(new_means.mean()), float(baseline_means.mean())
    result.new_interval, result.baseline_interval = interval(list(new_means)), interval(list(baseline_means))
    result.difference = float(differences.mean())
    result.bound = _upper_bound(differences, confidence, resamples, seed)
    alpha = 1 - confidence
    single = result.trials["new"] == [1, 1] and result.trials["baseline"] == [1, 1]
    binary = single and all(v in (0.0, 1.0) for v in (*new_means, *baseline_means))
    z = NormalDist().inv_cdf(confidence) + NormalDist().inv_cdf(POWER)
    if binary:
        result.losses, result.wins = int((differences < 0).sum()), int((differences > 0).sum())
        discordance = (result.losses + result.wins) / n
        # A drop d loses at least a share d of the tasks, so the differences' mean square is at least d.
        delta = max(z * math.sqrt(discordance / n), z * z / n)
    else:
        delta = z * float(differences.std(ddof=1)) / math.sqrt(n)
    if binary and max_drop == 0:
        result.test = "exact McNemar, one-sided (binomial on the tasks the runs disagree on)"
        result.p_value = mcnemar_p(result.losses or 0, result.wins or 0)
        regression = result.p_value < alpha
    else:
        why = "trials averaged per task" if not single else ("a drop allowed" if binary else "a continuous metric")
        result.test = f"paired bootstrap of the mean difference, {resamples:,} resamples of tasks ({why})"
        regression = result.bound < -max_drop
    result.detectable = max_drop + delta
    if result.detectable > min_detectable:
        result.power_warning = (
            f"this comparison cannot reliably detect a drop of {min_detectable:g}: with {n} paired tasks it "
            f"detects about {result.detectable:.2f}"
        )
    if regression:
        result.exit_code = EXIT_REGRESSION
        result.verdict = f"regression: the new run's {metric} is lower than the baseline's" + (
            f" by more than {max_drop:g}" if max_drop else ""
        )
    else:
        result.exit_code = EXIT_OK
        result.verdict = "no regression established"
    return result


def _label(path: Path, run: Mapping[str, Any]) -> str:
    settings = run.get("settings") if isinstance(run.get("settings"), dict) else {}
    agent = settings.get("agent")
    return f"{path.name} ({agent})" if agent else path.name


def gate(
    run: str | Path,
    baseline: str | Path,
    metric: str = "success",
    max_drop: float = 0.0,
    confidence: float = 0.95,
    min_detectable: float = 0.05,
    min_tasks: int = 10,
    max_error_rate: float = 0.1,
    count_errors: bool = False,
) -> GateResult:
    """The gate on two run folders (``toolbench eval --out``); raises RunFolderError for a folder that
    holds no run."""
    new_json, _, new_episodes = read_run(run)
    baseline_json, _, baseline_episodes = read_run(baseline)
    return compare_episodes(
        new_episodes,
        baseline_episodes,
        metric=metric,
        max_drop=max_drop,
        confidence=confidence,
        min_detectable=min_detectable,
        min_tasks=min_tasks,
        max_error_rate=max_error_rate,
        count_errors=count_errors,
        new_run=new_json,
        baseline_run=baseline_json,
        new_label=_label(Path(run), new_json),
        baseline_label=_label(Path(baseline), baseline_json),
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``toolbench gate`` command's arguments."""
    # not "run": the CLI keeps each command's function in args.run
    parser.add_argument("run_dir", metavar="RUN", help="the new run's folder (written by toolbench eval --out)")
    parser.add_argument("--baseline", required=True, help="the baseline run's folder")
    parser.add_argument("--metric", default="success", help="success (default), score, or a metric the episodes record")
    parser.add_argument(
        "--max-drop", type=float, default=0.0, help="the drop tolerated before it counts as a regression (default 0)"
    )
    parser.add_argument("--confidence", type=float, default=0.95, help="the one-sided test's confidence (default 0.95)")
    parser.add_argument(
        "--min-detectable",
        type=float,
        default=0.05,
        help="warn when the comparison cannot catch a drop this small 80%% of the time (default 0.05)",
    )
    parser.add_argument("--min-tasks", type=int, default=10, help="fewest paired tasks to compare at all (default 10)")
    parser.add_argument(
        "--max-error-rate",
        type=float,
        default=0.1,
        help="most errored episodes a run may have, as a share, to be compared (default 0.1)",
    )
    parser.add_argument(
        "--count-errors",
        action="store_true",
        help="score errored episodes as failures (default: leave them out of the metric, counted beside it)",
    )
    parser.add_argument("--json", action="store_true", help="print the result as a JSON object")


def main(args: argparse.Namespace) -> int:
    """``toolbench gate``: 0 no regression established, 1 regression, 2 cannot compare."""
    try:
        result = gate(
            args.run_dir,
            args.baseline,
            metric=args.metric,
            max_drop=args.max_drop,
            confidence=args.confidence,
            min_detectable=args.min_detectable,
            min_tasks=args.min_tasks,
            max_error_rate=args.max_error_rate,
            count_errors=args.count_errors,
        )
    except (RunFolderError, OSError, ValueError) as exc:
        print(f"toolbench gate: {exc}", file=sys.stderr)
        return EXIT_CANNOT_COMPARE
    print(result.to_json() if args.json else result.report_text())
    return result.exit_code
