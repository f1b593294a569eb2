"""Retrievers by name (``bm25``, ``dense``), as the RapidAPI env's ``retriever=`` setting and
``toolbench retrieve`` choose them; the dense one is trained on RapidAPI's ``train`` split.

The ``train`` split is read from its fixture here, as the env reads it (a record's query and its
relevant APIs), because the env is built on the retrievers and not the other way round.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from functools import cache
from typing import Any

from toolbench.core.tasks import Task, fixture_file, read_records
from toolbench.retrieval.bm25 import BM25Retriever
from toolbench.retrieval.documents import corpus


def training_pairs(tasks: Iterable[Any]) -> list[tuple[str, dict[str, Any]]]:
    """(query, relevant API record) for every relevant API of ``tasks`` that the hub has."""
    records = dict(zip(*corpus(), strict=True))
    return [(task.prompt, records[tuple(pair)]) for task in tasks for pair in task.get("relevant APIs") or []
            if tuple(pair) in records]  # fmt: skip


@cache
def train_tasks() -> tuple[Task, ...]:
    """RapidAPI's ``train`` split: each record's query (its first, when it has several) and record."""
    tasks = []
    for n, record in enumerate(read_records(fixture_file("rapidapi", "train.jsonl"))):
        query = record.get("query", record.get("prompt"))
        if isinstance(query, list):
            query = query[0] if query else ""
        extra = {k: v for k, v in record.items() if k not in ("id", "category", "completion")}
        task_id = str(record.get("id", f"rapidapi-train-{n}"))
        tasks.append(
            Task(task_id, str(query or ""), tuple(record.get("completion") or ()), record.get("category"), extra)
        )
    return tuple(tasks)


def make_retriever(
    name: str,
    keys: Sequence[Hashable],
    records: Sequence[dict[str, Any]],
    more_pairs: Sequence[tuple[str, dict[str, Any]]] = (),
) -> Any:
    """A retriever by name over ``records``: ``bm25``, or ``dense`` (trained on RapidAPI's ``train``
    and ``more_pairs``, (query, relevant API record) pairs of the user's own)."""
    if name == "bm25":
        return BM25Retriever(keys, records)
    if name == "dense":
        from toolbench.retrieval.dense import DenseRetriever

        return DenseRetriever(keys, records, [*training_pairs(train_tasks()), *more_pairs])
    raise ValueError(f"unknown retriever {name!r}: bm25 or dense")


@cache
def retriever(name: str) -> Any:
    """A retriever over the hub by name, built once per process: ``bm25`` or ``dense``."""
    return make_retriever(name, *corpus())
