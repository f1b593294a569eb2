"""ToolLLM's API retriever and its evaluation: NDCG@1 and @5 of the relevant APIs, per test set.

The corpus is every API of the RapidAPI hub, as ToolBench's retriever data holds one (the
``api_list`` entry of a query record), or a ToolBench ``corpus.tsv`` (``retrieval_data``). Both
retrievers read an API as ToolBench's retriever reads it (``document_text``): category, tool name,
API name, description, required and optional parameters, and the response's shape. A query's
relevant APIs are its record's ``relevant APIs``. NDCG uses binary relevance over the whole corpus:
DCG@k = sum of 1/log2(rank + 1) over the relevant APIs in the top k, divided by the DCG of a perfect
ranking.

``BM25Retriever`` ranks with ``bm25s`` (Lucene's BM25 over Porter-stemmed words, the library the
WebShop search uses too). ``dense_retriever.DenseRetriever`` is a dual encoder trained on the
``train`` split with in-batch negatives.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Hashable, Iterable, Sequence
from functools import cache
from typing import Any

import bm25s
import numpy as np
import Stemmer
from bm25s.tokenization import Tokenizer

from toolbench.mock_services.rapidapi.catalog import api_record, hub

Key = tuple[str, str]  # (tool name, API name)
_WORD = re.compile(r"[a-z0-9]+")
STOP_WORDS = [
    "a",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "by",
    "for",
    "from",
    "in",
    "is",
    "it",
    "of",
    "on",
    "or",
    "the",
    "to",
    "with",
    "what",
    "which",
    "me",
    "my",
    "i",
    "you",
    "can",
    "could",
    "please",
    "tell",
]


def document(record: dict[str, Any]) -> str:
    """An API's ``corpus.tsv`` entry as ToolBench's preprocessing writes it: its record as JSON."""
    fields = ("category_name", "tool_name", "api_name", "api_description", "required_parameters",
              "optional_parameters", "method", "template_response")  # fmt: skip
    return json.dumps({name: record[name] for name in fields if name in record}, ensure_ascii=False)


def document_text(record: dict[str, Any]) -> str:
    """The text ToolBench's retriever encodes for an API: its names and description, then its
    parameters and response shape as JSON."""
    return (
        f"{record.get('category_name') or ''}, {record.get('tool_name') or ''}, {record.get('api_name') or ''}, "
        f"{record.get('api_description') or ''}, "
        f"required_params: {json.dumps(record.get('required_parameters', ''))}, "
        f"optional_params: {json.dumps(record.get('optional_parameters', ''))}, "
        f"return_schema: {json.dumps(record.get('template_response', ''))}"
    )


@cache
def corpus() -> tuple[tuple[Key, ...], tuple[dict[str, Any], ...]]:
    """Every hub API's key and record."""
    keys, records = [], []
    for tool in hub().tools:
        for api in tool.apis:
            keys.append((tool.name, api.name))
            records.append(api_record(tool, api))
    return tuple(keys), tuple(records)


def words(text: str) -> list[str]:
    """Lower-case words, camelCase and snake_case split (``getCurrentWeather`` -> get current weather)."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ")
    return _WORD.findall(spaced.lower())


def ranked(keys: Sequence[Hashable], scores: np.ndarray, k: int) -> list[Any]:
    """The ``k`` best-scored keys, best first (ties in corpus order)."""
    order = np.lexsort((np.arange(len(scores)), -scores))
    return [keys[i] for i in order[:k]]


class BM25Retriever:
    """BM25 over API documents: the hub's, or ``records`` named by ``keys``."""

    name = "bm25"

    def __init__(self, keys: Sequence[Hashable] | None = None, records: Sequence[dict[str, Any]] | None = None) -> None:
        if keys is None or records is None:
            keys, records = corpus()
        self.keys = list(keys)
        texts = [document_text(r) for r in records]
        self._tokenizer = Tokenizer(splitter=words, stopwords=STOP_WORDS, stemmer=Stemmer.Stemmer("porter"))
        tokens = self._tokenizer.tokenize(list(texts), update_vocab=True, show_progress=False, return_as="tuple")
        self._index = bm25s.BM25(method="lucene")
        self._index.index(tokens, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        ids = self._tokenizer.tokenize([query], update_vocab=False, show_progress=False, return_as="ids")[0]
        return self._index.get_scores(ids) if ids else np.zeros(len(self.keys))

    def search(self, query: str, k: int = 5) -> list[Any]:
        return ranked(self.keys, self.scores(query), k)


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


def training_pairs(tasks: Iterable[Any]) -> list[tuple[str, dict[str, Any]]]:
    """(query, relevant API record) for every relevant API of ``tasks`` that the hub has."""
    records = dict(zip(*corpus(), strict=True))
    return [(task.prompt, records[tuple(pair)]) for task in tasks for pair in task.get("relevant APIs") or []
            if tuple(pair) in records]  # fmt: skip


@cache
def train_tasks() -> tuple[Any, ...]:
    import gymnasium as gym

    import toolbench  # noqa: F401  (registers the env ids)

    return tuple(gym.make("toolbench/RapidAPI-v0", split="train").unwrapped.tasks)


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
        from toolbench.eval.dense_retriever import DenseRetriever

        return DenseRetriever(keys, records, [*training_pairs(train_tasks()), *more_pairs])
    raise ValueError(f"unknown retriever {name!r}: bm25 or dense")


@cache
def retriever(name: str) -> Any:
    """A retriever over the hub by name, built once per process: ``bm25`` or ``dense``."""
    return make_retriever(name, *corpus())
