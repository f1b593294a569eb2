"""``toolbench complexity``: ToolBench's API-selection complexity score (Xu et al. 2023, appendix D).

The score measures how unlikely it is to get a test's API calls by editing a demonstration's at
random: drop each of the example's calls with probability 1/2, then insert each missing call with
probability 1/|D| (D: the task's API options, see ``api_calls``). With calls as multisets (a
function called twice counts twice):

- equation 1: p(t | e, D) = (1/2)^|e| * (1/|D|)^|t \\ e|
- equation 2: d(t, e) = log 1/p(t | e, D) = |e| log 2 + |t \\ e| log |D|
- equation 3: S(T, X, D) = mean over tests t of the min over examples e of d(t, e)

The logarithm is base 2 (``LOG_BASE``), so a distance is in bits. That is the base that fits
Table 9: the alignment data covers every API option of OpenWeather and the Cat API (appendix
C.1), so a single-call test has an example that is exactly its own call and scores |e| log 2 =
log 2. Table 9 reports 1.1 and 1.0 for them: log2 2 = 1, while ln 2 = 0.69 and log10 2 = 0.30
would put both well below the printed values.

D.2.1's per-task rules: WebShop scores 0 by definition (its two actions are in every example),
and Tabletop's examples are cut into single-step samples (one per instruction comment); when a
Tabletop test file has no reference programs, those steps are the tests too, as the paper did.

Also the reversed-F1 score (equations 4 and 5), S_rF1 = mean over t of min over e of
(1 - F1(t, e)) * 100 with F1 over the call multisets, and Spearman's correlation of both scores
with a run's error rates over Table 12's five tasks.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from toolbench.catalog import TaskSpec, find_task
from toolbench.core.curl_env import CurlProgramEnv
from toolbench.core.tasks import Task, read_task_file
from toolbench.eval.api_calls import ApiSpace, api_space
from toolbench.eval.tables import text_table

Calls = Counter[Hashable]

LOG_BASE = 2

#: ToolBench's Table 9: the complexity score of each task's test set given its alignment data.
PAPER_TABLE9: dict[str, float] = {
    "OpenWeather": 1.1,
    "CatAPI": 1.0,
    "HomeSearch": 6.4,
    "TripBooking": 10.1,
    "GoogleSheets": 12.1,
    "VirtualHome": 12.3,
    "WebShop": 0.0,
    "Tabletop": 4.6,
}
#: The eight ToolBench tasks, in Table 9's order.
TOOLBENCH_TASKS = tuple(PAPER_TABLE9)
#: Table 12: Spearman's correlation of (complexity, r-F1) with error rate, per model, over these tasks.
PAPER_TABLE12: dict[str, tuple[float, float]] = {
    "GPT-4": (0.2, -0.3),
    "LLaMA": (1.0, 0.7),
    "CodeGen": (1.0, 0.7),
    "StarCoder": (0.7, 0.3),
}
TABLE12_TASKS = ("OpenWeather", "CatAPI", "HomeSearch", "TripBooking", "VirtualHome")
#: D.2.1: tasks scored 0 by definition, and tasks whose examples are cut into single steps.
ZERO_BY_DEFINITION = frozenset({"WebShop"})
SINGLE_STEP_TASKS = frozenset({"Tabletop"})


def derivation_probability(test: Calls, example: Calls, api_size: int) -> Fraction:
    """Equation 1, exactly: (1/2)^|e| (1/|D|)^|t \\ e|."""
    missing = sum((test - example).values())
    return Fraction(1, 2 ** sum(example.values())) * Fraction(1, api_size**missing)


def distance(test: Calls, example: Calls, api_size: int, base: float = LOG_BASE) -> float:
    """Equation 2, d = log 1/p, summed term by term (p itself can underflow a float)."""
    missing = sum((test - example).values())
    size_term = missing * math.log(api_size, base) if missing else 0.0
    return sum(example.values()) * math.log(2, base) + size_term


def reversed_f1_distance(test: Calls, example: Calls) -> float:
    """Equation 4: (1 - F1) * 100, precision over the example's calls, recall over the test's."""
    total = sum(test.values()) + sum(example.values())
    shared = sum((test & example).values())
    return (1 - (2 * shared / total if total else 1.0)) * 100


def _mean_of_min(tests: Sequence[Calls], examples: Sequence[Calls], measure: Callable[[Calls, Calls], float]) -> float:
    if not examples:
        raise ValueError("no examples to derive the tests from")
    distinct = list({frozenset(e.items()): e for e in examples}.values())
    if not tests:
        return 0.0
    return sum(min(measure(t, e) for e in distinct) for t in tests) / len(tests)


def complexity_score(tests: Sequence[Calls], examples: Sequence[Calls], api_size: int, base: float = LOG_BASE) -> float:
    """Equation 3: the mean over tests of the distance to the closest example."""
    return _mean_of_min(tests, examples, lambda t, e: distance(t, e, api_size, base))


def reversed_f1_score(tests: Sequence[Calls], examples: Sequence[Calls]) -> float:
    """Equation 5: the mean over tests of the reversed-F1 distance to the closest example."""
    return _mean_of_min(tests, examples, reversed_f1_distance)


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rank correlation (ties get their mean rank); nan when a side is constant."""

    def ranks(values: Sequence[float]) -> list[float]:
        order = sorted(range(len(values)), key=values.__getitem__)
        result = [0.0] * len(values)
        start = 0
        while start < len(order):
            end = start
            while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
                end += 1
            for position in range(start, end + 1):
                result[order[position]] = (start + end) / 2
            start = end + 1
        return result

    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    covariance = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    spread = math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    return covariance / spread if spread else math.nan


def single_steps(program: str) -> list[str]:
    """A Tabletop program cut at its instruction comments: one sample per ``# ...`` line and the
    code under it (code before the first comment is a step of its own)."""
    steps: list[list[str]] = [[]]
    for line in program.splitlines():
        if line.startswith("#") and any(s.strip() for s in steps[-1]):
            steps.append([])
        steps[-1].append(line)
    return ["\n".join(step) for step in steps if any(s.strip() and not s.startswith("#") for s in step)]


def task_api(spec: TaskSpec, api_size: int | None = None) -> ApiSpace:
    env = spec.env_class()()
    try:
        return api_space(env.api_docs(), api_size, curl=isinstance(env, CurlProgramEnv))
    finally:
        env.close()


def _programs(tasks: Iterable[Task]) -> list[str]:
    """Each task's first reference program (tasks without one are left out)."""
    return [task.references[0] for task in tasks if task.references]


def _example_programs(task: str, programs: Iterable[str]) -> list[str]:
    programs = list(programs)
    return [step for p in programs for step in single_steps(p)] if task in SINGLE_STEP_TASKS else programs


def scores(task: str, space: ApiSpace, tests: Sequence[str], examples: Sequence[str]) -> tuple[float, float]:
    """(equation 3, equation 5) for test and example programs of ``task``."""
    if task in ZERO_BY_DEFINITION:
        return 0.0, 0.0
    if space.size < 1:
        raise ValueError(f"{task}: its API docs name no function to count calls of")
    example_programs = _example_programs(task, examples)
    if not tests and task in SINGLE_STEP_TASKS:
        tests = example_programs
    if not tests:
        raise ValueError(f"{task}: no test has a reference program to score")
    test_calls = [space.calls(p) for p in tests]
    example_calls = [space.calls(p) for p in example_programs]
    return complexity_score(test_calls, example_calls, space.size), reversed_f1_score(test_calls, example_calls)


@dataclass(frozen=True)
class TaskComplexity:
    task: str
    api_options: int  # |D|
    tests: int
    examples: int
    score: float  # equation 3, demo split -> test split
    reversed_f1: float  # equation 5, the same sets
    aligned: float | None  # equation 3 with the default alignment data's goals as the examples
    aligned_examples: int | None
    paper: float | None  # Table 9


def alignment_score(spec: TaskSpec, actions: Sequence[str]) -> float:
    """Equation 3 for ``spec``'s test split, with alignment actions as the examples."""
    return scores(spec.name, task_api(spec), _programs(spec.env_class().load_split("test")), actions)[0]


def task_complexity(spec: TaskSpec, with_alignment: bool = True) -> TaskComplexity:
    from toolbench.taskgen.align import alignment_samples, default_samples

    space = task_api(spec)
    env_class = spec.env_class()
    tests, demos = _programs(env_class.load_split("test")), _programs(env_class.load_split("demo"))
    score, rf1 = scores(spec.name, space, tests, demos)
    aligned = aligned_count = None
    if with_alignment:
        actions = [a for s in alignment_samples(spec.name, default_samples(spec.name)) for a in s["actions"]]
        aligned, aligned_count = scores(spec.name, space, tests, actions)[0], len(actions)
    return TaskComplexity(
        task=spec.name,
        api_options=space.size,
        tests=len(tests),
        examples=len(_example_programs(spec.name, demos)),
        score=score,
        reversed_f1=rf1,
        aligned=aligned,
        aligned_examples=aligned_count,
        paper=PAPER_TABLE9.get(spec.name),
    )


def all_complexities(tasks: Sequence[str] = TOOLBENCH_TASKS, with_alignment: bool = True) -> list[TaskComplexity]:
    return [task_complexity(find_task(name), with_alignment) for name in tasks]


def read_examples(path: str | Path) -> list[str]:
    """Example programs from a JSONL task file (first references) or from a folder of the original
    ``examples/*.txt`` files (a goal line, then an ``Action:`` or ``Actions:`` line, then the code)."""
    path = Path(path)
    if not path.is_dir():
        return _programs(read_task_file(path))
    programs = []
    for file in sorted(path.glob("*.txt")):
        lines = file.read_text(encoding="utf-8").splitlines()
        starts = [i for i, line in enumerate(lines) if line.strip().rstrip(":") in ("Action", "Actions")]
        if starts:
            programs.append("\n".join(lines[starts[0] + 1 :]).strip("\n"))
    return programs


def file_complexity(
    task: str, task_file: str | Path, examples: str | Path | None = None, api_size: int | None = None
) -> TaskComplexity:
    """Equations 3 and 5 on a test file in the original record shape (``prompt``, ``completion``),
    with the task's demo split or ``examples`` as X, and our API docs (or ``api_size``) for |D|."""
    spec = find_task(task)
    space = task_api(spec, api_size)
    tests = _programs(read_task_file(task_file))
    demos = read_examples(examples) if examples else _programs(spec.env_class().load_split("demo"))
    score, rf1 = scores(spec.name, space, tests, demos)
    example_count = len(_example_programs(spec.name, demos))
    return TaskComplexity(
        task=spec.name,
        api_options=space.size,
        tests=len(tests) or example_count,  # a Tabletop file without answers is scored on the example steps
        examples=example_count,
        score=score,
        reversed_f1=rf1,
        aligned=None,
        aligned_examples=None,
        paper=PAPER_TABLE9.get(spec.name),
    )


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def format_complexities(rows: Sequence[TaskComplexity]) -> str:
    header = ["task", "|D|", "tests", "examples", "ours: demo->test", "r-F1", "ours: alignment->test"]
    header.append("paper (Table 9)")
    lines = [
        [
            row.task,
            str(row.api_options),
            str(row.tests),
            str(row.examples),
            _number(row.score),
            _number(row.reversed_f1),
            _number(row.aligned),
            _number(row.paper),
        ]
        for row in rows
    ]
    return "\n".join(text_table(header, lines))


@dataclass(frozen=True)
class Correlation:
    run: str
    tasks: tuple[str, ...]
    complexity: float
    reversed_f1: float


def run_correlation(rows: Sequence[TaskComplexity], run: str | Path) -> Correlation:
    """Spearman's correlation of each score with the run's error rate (1 - success rate) over
    Table 12's five tasks that the run played."""
    from toolbench.eval.runs import read_run

    _, summary, _ = read_run(run)
    played = summary.get("tasks", {})
    by_task = {row.task: row for row in rows}
    tasks = tuple(t for t in TABLE12_TASKS if t in played and t in by_task)
    if len(tasks) < 3:
        wanted = ", ".join(TABLE12_TASKS)
        raise ValueError(f"{run}: a correlation needs at least 3 of {wanted}; the run has {len(tasks)}")
    errors = [1 - played[t]["success_rate"] for t in tasks]
    return Correlation(
        run=str(run),
        tasks=tasks,
        complexity=spearman([by_task[t].score for t in tasks], errors),
        reversed_f1=spearman([by_task[t].reversed_f1 for t in tasks], errors),
    )


def format_correlation(found: Correlation) -> str:
    paper = ", ".join(f"{model} {c} / {r}" for model, (c, r) in PAPER_TABLE12.items())
    return (
        f"Spearman with the error rates of {found.run} over {', '.join(found.tasks)}: "
        f"complexity {found.complexity:.2f}, r-F1 {found.reversed_f1:.2f} "
        f"(paper's Table 12, complexity / r-F1: {paper})"
    )


def complexities_json(rows: Sequence[TaskComplexity], correlations: Sequence[Correlation] = ()) -> dict[str, Any]:
    return {
        "log_base": LOG_BASE,
        "tasks": {row.task: asdict(row) for row in rows},
        "correlations": [asdict(c) for c in correlations],
    }
