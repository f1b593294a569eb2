"""ToolLLM's API retriever and its evaluation: NDCG@1 and @5 of the relevant APIs, per test set.

The corpus is every API of the RapidAPI hub, each written as a document the way ToolBench's
retriever data writes one: category, tool name, API name, description, required and optional
parameters, and the response's shape. A query's relevant APIs are its record's ``relevant APIs``.
NDCG uses binary relevance over the whole corpus: DCG@k = sum of 1/log2(rank + 1) over the
relevant APIs in the top k, divided by the DCG of a perfect ranking.

``BM25Retriever`` ranks with ``bm25s`` (Lucene's BM25 over Porter-stemmed words, the library the
WebShop search uses too). ``DenseRetriever`` is a small dual encoder trained on the ``train`` split
with in-batch negatives (numpy; seconds on a CPU).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
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
    """An API's document, written as ToolBench's retriever data writes it (a JSON of its fields)."""
    fields = ("category_name", "tool_name", "api_name", "api_description", "required_parameters",
              "optional_parameters", "template_response")  # fmt: skip
    return json.dumps({name: record.get(name) for name in fields}, ensure_ascii=False)


@cache
def corpus() -> tuple[tuple[Key, ...], tuple[str, ...]]:
    """Every hub API's key and document."""
    keys, texts = [], []
    for tool in hub().tools:
        for api in tool.apis:
            record = api_record(tool, api)
            keys.append((tool.name, api.name))
            texts.append(document(record))
    return tuple(keys), tuple(texts)


def words(text: str) -> list[str]:
    """Lower-case words, camelCase and snake_case split (``getCurrentWeather`` -> get current weather)."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ")
    return _WORD.findall(spaced.lower())


def ranked(keys: Sequence[Key], scores: np.ndarray, k: int) -> list[Key]:
    """The ``k`` best-scored keys, best first (ties in corpus order)."""
    order = np.lexsort((np.arange(len(scores)), -scores))
    return [keys[i] for i in order[:k]]


class BM25Retriever:
    """BM25 over the hub's API documents."""

    name = "bm25"

    def __init__(self) -> None:
        self.keys, texts = corpus()
        self._tokenizer = Tokenizer(splitter=words, stopwords=STOP_WORDS, stemmer=Stemmer.Stemmer("porter"))
        tokens = self._tokenizer.tokenize(list(texts), update_vocab=True, show_progress=False, return_as="tuple")
        self._index = bm25s.BM25(method="lucene")
        self._index.index(tokens, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        ids = self._tokenizer.tokenize([query], update_vocab=False, show_progress=False, return_as="ids")[0]
        return self._index.get_scores(ids) if ids else np.zeros(len(self.keys))

    def search(self, query: str, k: int = 5) -> list[Key]:
        return ranked(self.keys, self.scores(query), k)


def ndcg(ranked: Sequence[Key], relevant: Iterable[Key], k: int) -> float:
    """NDCG@k with binary relevance."""
    wanted = set(relevant)
    if not wanted:
        return 0.0
    dcg = sum(1 / math.log2(rank + 2) for rank, key in enumerate(ranked[:k]) if key in wanted)
    ideal = sum(1 / math.log2(rank + 2) for rank in range(min(k, len(wanted))))
    return dcg / ideal


def evaluate(retriever: Any, tasks: Iterable[Any], ks: Sequence[int] = (1, 5)) -> dict[str, dict[str, float]]:
    """Mean NDCG@k per test set (a task's category) and over all tasks."""
    totals: dict[str, dict[str, list[float]]] = {}
    for task in tasks:
        relevant = [tuple(pair) for pair in task.get("relevant APIs") or []]
        ranked = retriever.search(task.prompt, max(ks))
        for group in (task.category or "all", "average"):
            for k in ks:
                totals.setdefault(group, {}).setdefault(f"ndcg@{k}", []).append(ndcg(ranked, relevant, k))
    return {group: {name: sum(v) / len(v) for name, v in metrics.items()} for group, metrics in totals.items()}


class DenseRetriever:
    """A small dual encoder trained on the ``train`` split's (query, relevant API) pairs with
    in-batch negatives, as ToolLLM trains its Sentence-BERT retriever, sized for a CPU.

    The encoder is a bag of stemmed words and word pairs (the words of the corpus and the training
    queries), projected to ``dim`` numbers by one learned matrix shared by queries and documents.
    It is trained with a softmax over each batch, where the other pairs' APIs are the negatives, and
    Adam, in numpy, from a fixed seed: the same data gives the same model in any process."""

    name = "dense"

    def __init__(
        self, train_tasks: Iterable[Any], dim: int = 64, epochs: int = 15, batch: int = 64, seed: int = 0
    ) -> None:
        from scipy import sparse

        self.keys, texts = corpus()
        self._stem = Stemmer.Stemmer("porter").stemWord
        pairs = [
            (task.prompt, self.keys.index(tuple(pair)))
            for task in train_tasks
            for pair in task.get("relevant APIs") or []
            if tuple(pair) in set(self.keys)
        ]
        vocabulary: dict[str, int] = {}
        for text in [*texts, *(query for query, _ in pairs)]:
            for feature in self._features(text):
                vocabulary.setdefault(feature, len(vocabulary))
        self._vocabulary = vocabulary

        def matrix(rows: Sequence[str]) -> Any:
            data, indices, pointers = [], [], [0]
            for text in rows:
                found = sorted({vocabulary[f] for f in self._features(text) if f in vocabulary})
                indices += found
                data += [1 / math.sqrt(max(1, len(found)))] * len(found)
                pointers.append(len(indices))
            return sparse.csr_matrix((data, indices, pointers), shape=(len(rows), len(vocabulary)))

        self._matrix = matrix
        documents = matrix(texts)
        queries = matrix([query for query, _ in pairs])
        positives = np.array([index for _, index in pairs])
        rng = np.random.default_rng(seed)
        weights = rng.normal(0, 0.1, (len(vocabulary), dim))
        first, second = np.zeros_like(weights), np.zeros_like(weights)
        step, rate, temperature = 0, 0.01, 0.1
        for _ in range(epochs):
            order = rng.permutation(len(pairs))
            for start in range(0, len(order), batch):
                chosen = order[start : start + batch]
                xq, xd = queries[chosen], documents[positives[chosen]]
                q, d = xq @ weights, xd @ weights
                scores = q @ d.T / temperature
                scores -= scores.max(axis=1, keepdims=True)
                probabilities = np.exp(scores)
                probabilities /= probabilities.sum(axis=1, keepdims=True)
                grad_scores = (probabilities - np.eye(len(chosen))) / len(chosen) / temperature
                gradient = xq.T @ (grad_scores @ d) + xd.T @ (grad_scores.T @ q)
                step += 1
                first = 0.9 * first + 0.1 * gradient
                second = 0.999 * second + 0.001 * gradient**2
                weights -= rate * (first / (1 - 0.9**step)) / (np.sqrt(second / (1 - 0.999**step)) + 1e-8)
        self._weights = weights
        self._documents = np.asarray(documents @ weights)

    def _features(self, text: str) -> list[str]:
        stems = [self._stem(w) for w in words(text) if w not in STOP_WORDS]
        return stems + [f"{a} {b}" for a, b in zip(stems, stems[1:], strict=False)]

    def scores(self, query: str) -> np.ndarray:
        return self._documents @ np.asarray(self._matrix([query]) @ self._weights)[0]

    def search(self, query: str, k: int = 5) -> list[Key]:
        return ranked(self.keys, self.scores(query), k)


@cache
def retriever(name: str) -> Any:
    """A retriever by name, built once per process: ``bm25``, or ``dense`` (trained on ``train``)."""
    if name == "bm25":
        return BM25Retriever()
    if name == "dense":
        import gymnasium as gym

        import toolbench  # noqa: F401  (registers the env ids)

        return DenseRetriever(gym.make("toolbench/RapidAPI-v0", split="train").unwrapped.tasks)
    raise ValueError(f"unknown retriever {name!r}: bm25 or dense")
