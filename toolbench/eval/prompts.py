"""ToolBench-style prompts: the API docs and demonstrations most relevant to the task, then the task.

As in the original harness, docs and demonstrations are retrieved with BM25 (the ``rank_bm25``
package) against the task text, so long API references fit a model's context.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rank_bm25 import BM25Okapi

from toolbench.core.tasks import Task

SEPARATOR = "-------------"


def tokenize(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_]+", text.lower())


def split_api_docs(docs: str) -> list[str]:
    """The documentation of each function: blocks that start with a ``# `` comment line."""
    blocks: list[list[str]] = []
    for line in docs.strip().splitlines():
        if line.startswith("# ") or not blocks:
            blocks.append([])
        blocks[-1].append(line)
    return ["\n".join(block).strip() for block in blocks if "".join(block).strip()]


def _top_k(corpus: Sequence[str], query: str, k: int) -> list[int]:
    """Indexes of the k best BM25 matches, in their original order (stable for equal scores)."""
    if k >= len(corpus):
        return list(range(len(corpus)))
    scores = BM25Okapi([tokenize(text) or ["_"] for text in corpus]).get_scores(tokenize(query) or ["_"])
    best = sorted(range(len(corpus)), key=lambda i: (-scores[i], i))[:k]
    return sorted(best)


def format_demo(task: Task) -> str:
    return f"Task: {task.prompt}\nAction:\n{task.references[0] if task.references else ''}"


class PromptBuilder:
    """Builds the prompt for one task from the env's API docs and demonstration tasks."""

    def __init__(self, api_docs: str, demos: Sequence[Task], top_k_api: int = 10, top_k_example: int = 3):
        self.functions = split_api_docs(api_docs)
        self.demos = list(demos)
        self.top_k_api = top_k_api
        self.top_k_example = top_k_example

    def build(self, query: str) -> str:
        parts = []
        if self.functions:
            chosen = [self.functions[i] for i in _top_k(self.functions, query, self.top_k_api)]
            parts.append("Here is the API you can use:\n\n" + "\n\n".join(chosen))
        if self.demos and self.top_k_example > 0:
            texts = [format_demo(task) for task in self.demos]
            chosen = [texts[i] for i in _top_k([t.prompt for t in self.demos], query, self.top_k_example)]
            parts.append("Here are some solved examples:\n\n" + "\n\n".join(chosen))
        parts.append(f"Task: {query}\nAction:\n")
        return f"\n{SEPARATOR}\n".join(parts)
