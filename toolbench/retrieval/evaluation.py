"""A retriever's evaluation: NDCG@1 and @5 of the relevant APIs, per test set.

A query's relevant APIs are its record's ``relevant APIs``. NDCG uses binary relevance over the
whole corpus: DCG@k = sum of 1/log2(rank + 1) over the relevant APIs in the top k, divided by the
DCG of a perfect ranking.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from typing import Any


def ndcg(ranked: Sequence[Hashable], relevant: Iterable[Hashable], k: int) -> float:
    """NDCG@k with binary relevance."""
    wanted = set(relevant)
    if not wanted:
        return 0.0
    dcg = sum(1 / math.log2(rank + 2) for rank, key in enumerate(ranked[:k]) if key in wanted)
    ideal = sum(1 / math.log2(rank + 2) for rank in range(min(k, len(wanted))))
    return dcg / ideal


def evaluate(retriever: Any, tasks: Iterable[Any], ks: Sequence[int] = (1, 5)) -> dict[str, dict[str, float]]:
    """Mean NDCG@k per test set (a task's category) and over all tasks."""
    return evaluate_queries(
        retriever,
        (
            (task.category or "all", task.prompt, [tuple(pair) for pair in task.get("relevant APIs") or []])
            for task in tasks
        ),
        ks,
    )


def evaluate_queries(
    retriever: Any, queries: Iterable[tuple[str, str, Iterable[Hashable]]], ks: Sequence[int] = (1, 5)
) -> dict[str, dict[str, float]]:
    """Mean NDCG@k per group and over all queries (``average``); ``queries`` are (group, query,
    the keys of its relevant APIs)."""
    totals: dict[str, dict[str, list[float]]] = {}
    for group, query, relevant in queries:
        found = retriever.search(query, max(ks))
        wanted = list(relevant)
        for name in (group, "average"):
            for k in ks:
                totals.setdefault(name, {}).setdefault(f"ndcg@{k}", []).append(ndcg(found, wanted, k))
    return {group: {name: sum(v) / len(v) for name, v in metrics.items()} for group, metrics in totals.items()}
