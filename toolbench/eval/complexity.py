"""``toolbench complexity``: how hard choosing the API calls of each task is, given its demonstrations.

ToolBench (Xu et al. 2023, appendix D, equations 1 to 3) scores each task's API-selection
complexity from its demonstration and test examples. The paper's appendix was not available when
this was written, so this module computes a measure built on the same inputs, defined here in full
so its numbers can be checked:

- the API is split into its documented functions (``split_api_docs``); N is their number;
- F(x) is the set of documented functions example x's first reference calls: an endpoint (method,
  path template and its required query parameters) for curl tasks, a called name for the others;
- a test example t needs k(t) = min over demonstrations d of |F(t) \\ F(d)| functions that even
  the closest demonstration does not show;
- its complexity is c(t) = log2 C(N, k(t)), the bits needed to pick those functions out of the
  N; a task's score is the mean of c(t) over its test split (0 when every test example is covered
  by one demonstration).

The paper's own values are printed beside ours where ``PAPER_VALUES`` holds them; it is empty
until the paper's Table 9 can be consulted.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

from toolbench.catalog import TASKS, TaskSpec
from toolbench.eval.prompts import split_api_docs
from toolbench.eval.tables import text_table

#: ToolBench's Table 9 complexity per task, when a source for it is available here (see the module doc).
PAPER_VALUES: dict[str, float] = {}

_URL = re.compile(r"""['"]?(https?://[^\s'"]+)""")
_METHOD = re.compile(r"(?:-X|--request)\s+['\"]?([A-Za-z]+)")
_CALLED = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_IGNORED_PARAMS = {"appid", "api_key"}


@dataclass(frozen=True)
class Endpoint:
    method: str
    path: re.Pattern[str]
    params: frozenset[str]


@dataclass(frozen=True)
class DocFunction:
    """One documented function: the endpoints or the names that identify a call of it."""

    text: str
    endpoints: tuple[Endpoint, ...]
    names: frozenset[str]


def _curl_parts(line: str) -> tuple[str, str, frozenset[str]] | None:
    url = _URL.search(line)
    if not url:
        return None
    method = _METHOD.search(line)
    verb = method.group(1).upper() if method else ("POST" if re.search(r"\s(-d|--data)\b", line) else "GET")
    parts = urlsplit(url.group(1))
    params = frozenset(name for name, _ in parse_qsl(parts.query, keep_blank_values=True)) - _IGNORED_PARAMS
    return verb, parts.path, params


def doc_function(block: str) -> DocFunction:
    endpoints, names = [], set()
    for line in block.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        curl = _curl_parts(stripped) if stripped.startswith("curl") else None
        if curl:
            verb, path, params = curl
            pattern = re.compile("^" + re.sub(r"\\\{[^}]*\\\}", "[^/]+", re.escape(path)) + "/?$")
            endpoints.append(Endpoint(verb, pattern, params))
        else:
            names.update(_CALLED.findall(stripped))
    return DocFunction(block, tuple(endpoints), frozenset(names))


def functions_used(functions: Sequence[DocFunction], program: str) -> frozenset[int]:
    """Indexes of the documented functions ``program`` calls."""
    used = set()
    for line in program.splitlines():
        curl = _curl_parts(line) if line.strip().startswith("curl") else None
        if curl:
            verb, path, params = curl
            matches = [
                (len(e.params), i)
                for i, f in enumerate(functions)
                for e in f.endpoints
                if e.method == verb and e.path.match(path) and e.params <= params
            ]
            if matches:
                used.add(max(matches)[1])
    code = "\n".join(line for line in program.splitlines() if not line.lstrip().startswith("#"))
    called = set(_CALLED.findall(code))
    used.update(i for i, f in enumerate(functions) if f.names & called)
    return frozenset(used)


@dataclass(frozen=True)
class Complexity:
    task: str
    functions: int
    test: int
    demos: int
    unseen: float  # mean k(t)
    score: float  # mean c(t), in bits
    paper: float | None


def task_complexity(spec: TaskSpec) -> Complexity:
    env_class = spec.env_class()
    env = env_class()
    functions = [doc_function(block) for block in split_api_docs(env.api_docs())]
    env.close()
    test, demos = env_class.load_split("test"), env_class.load_split("demo")
    demo_sets = [functions_used(functions, d.references[0]) for d in demos if d.references]
    unseen, bits = [], []
    for task in test:
        needed = functions_used(functions, task.references[0]) if task.references else frozenset()
        k = min((len(needed - shown) for shown in demo_sets), default=len(needed))
        unseen.append(k)
        bits.append(math.log2(math.comb(len(functions), k)) if functions else 0.0)
    return Complexity(
        task=spec.name,
        functions=len(functions),
        test=len(test),
        demos=len(demos),
        unseen=sum(unseen) / len(unseen) if unseen else 0.0,
        score=sum(bits) / len(bits) if bits else 0.0,
        paper=PAPER_VALUES.get(spec.name),
    )


def all_complexities() -> list[Complexity]:
    return [task_complexity(spec) for spec in TASKS]


def format_complexities(rows: Sequence[Complexity]) -> str:
    header = ["task", "API functions", "test", "demos", "unseen per test", "complexity (bits)", "paper"]
    lines = []
    for row in rows:
        lines.append(
            [
                row.task,
                str(row.functions),
                str(row.test),
                str(row.demos),
                f"{row.unseen:.2f}",
                f"{row.score:.2f}",
                f"{row.paper:.2f}" if row.paper is not None else "n/a",
            ]
        )
    out = text_table(header, lines)
    if not any(row.paper is not None for row in rows):
        out.append(
            "paper: ToolBench's Table 9 values are not available to this project (see toolbench/eval/complexity.py)"
        )
    return "\n".join(out)
