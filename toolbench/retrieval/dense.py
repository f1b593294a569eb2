"""A dense API retriever: a dual encoder trained with in-batch negatives, as ToolLLM trains its
Sentence-BERT retriever, sized for a CPU and written in numpy.

A text (a query, or an API's document) becomes a sparse vector of stemmed words and word pairs,
weighted by tf-idf and scaled to length 1, and then a dense vector of ``2 * dim`` numbers by two
projections of that vector:

- a *learned* projection, started from the corpus's latent semantic analysis (its ``dim`` top
  singular vectors) and trained on (query, relevant API) pairs with a softmax over each batch, where
  the other pairs' APIs are the negatives (Adam, a fixed seed);
- a *fixed* copy of the starting projection, so words the training never met (the names of tools
  no training query used) still match as words.

A query's score for an API is the dot product of their two vectors. The learned projection is
trained on documents without their tool and category names: trained with them, it learns which
tools the training queries used and prefers those tools' copies of an API to an unseen tool's, which
sinks every test set of unseen tools and categories. The names still count through the fixed part.
The same data and seed give the same model in any process.

Training takes about a minute, so the model ``retriever("dense")`` builds (the hub's APIs, RapidAPI's
``train`` split) is stored: ``make fixtures`` trains it and writes the learned projection to
``fixtures/rapidapi/dense_retriever.npz`` with a digest of everything the training reads (the
starting projection, the training texts' vectors, the settings). A retriever whose training would
read exactly that loads the stored projection instead of training; any other trains.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import Stemmer
from scipy import sparse

from toolbench.core.tasks import fixture_file
from toolbench.retrieval.documents import STOP_WORDS, document_text, ranked, words

#: The stored learned projection of the hub's retriever (``make fixtures`` writes it).
STORED = fixture_file("rapidapi", "dense_retriever.npz")
#: Raised when the stored file's layout or the training's meaning changes.
STORED_FORMAT = "1"


class DenseRetriever:
    """Ranks ``records`` (API records, ToolBench's ``api_list`` entries) for a query; ``keys`` name
    them. ``pairs`` are the training data: (query, a relevant API's record)."""

    name = "dense"

    def __init__(
        self,
        keys: Sequence[Hashable],
        records: Sequence[dict[str, Any]],
        pairs: Sequence[tuple[str, dict[str, Any]]],
        dim: int = 256,
        epochs: int = 4,
        batch: int = 64,
        rate: float = 0.001,
        temperature: float = 0.1,
        fixed_weight: float = 1.5,
        seed: int = 0,
        stored: Path | None = STORED,
    ) -> None:
        self.keys = list(keys)
        self._stem = Stemmer.Stemmer("porter").stemWord
        texts = [document_text(r) for r in records]
        train_texts = [document_text(r) for _, r in pairs]
        unnamed = [document_text({**r, "tool_name": "", "category_name": ""}) for _, r in pairs]
        queries = [query for query, _ in pairs]
        self._vocabulary: dict[str, int] = {}
        for text in [*texts, *train_texts, *queries]:
            for feature in self._features(text):
                self._vocabulary.setdefault(feature, len(self._vocabulary))
        basis = sorted(set(texts) | set(train_texts))  # what the idf and the starting projection describe
        counts = np.zeros(len(self._vocabulary))
        for text in basis:
            counts[sorted({self._vocabulary[f] for f in self._features(text)})] += 1
        self._idf = np.log(1 + len(basis) / (1 + counts))

        start = _top_singular_vectors(self._sparse(basis), dim)
        self._fixed = fixed_weight * start
        query_vectors, document_vectors = self._sparse(queries), self._sparse(unnamed)
        # Training moves only the rows of words its texts have: the rest stay the starting projection's.
        self._trained_rows = np.unique(np.concatenate([query_vectors.indices, document_vectors.indices]))
        self.training_digest = _digest(
            start, query_vectors, document_vectors, [document_text(r) for _, r in pairs],
            (fixed_weight, epochs, batch, rate, temperature, seed),
        )  # fmt: skip
        learned = _load_learned(stored, self.training_digest, start) if stored is not None else None
        if learned is None:
            learned = self._train(start, query_vectors, document_vectors, pairs, epochs, batch, rate, temperature, seed)
        self._learned = learned
        self._documents = self.encode_all(texts)

    def _features(self, text: str) -> list[str]:
        stems = [self._stem(w) for w in words(text) if w not in STOP_WORDS]
        return stems + [f"{a} {b}" for a, b in zip(stems, stems[1:], strict=False)]

    def _sparse(self, texts: Sequence[str]) -> sparse.csr_matrix:
        """Each text's tf-idf vector (sublinear tf), of length 1."""
        data: list[float] = []
        indices: list[int] = []
        pointers = [0]
        for text in texts:
            counts: dict[int, int] = {}
            for feature in self._features(text):
                if feature in self._vocabulary:
                    index = self._vocabulary[feature]
                    counts[index] = counts.get(index, 0) + 1
            found = sorted(counts)
            values = np.array([(1 + math.log(counts[i])) * self._idf[i] for i in found])
            norm = float(np.linalg.norm(values)) or 1.0
            indices += found
            data += list(values / norm)
            pointers.append(len(indices))
        return sparse.csr_matrix((data, indices, pointers), shape=(len(texts), len(self._vocabulary)))

    def _train(
        self,
        start: np.ndarray,
        queries: sparse.csr_matrix,
        documents: sparse.csr_matrix,
        pairs: Sequence[tuple[str, dict[str, Any]]],
        epochs: int,
        batch: int,
        rate: float,
        temperature: float,
        seed: int,
    ) -> np.ndarray:
        """The learned projection: a softmax over each batch's documents (in-batch negatives), with the
        fixed projection's score added, so the learned part learns what words alone miss."""
        weights = start.copy()
        fixed_queries = np.asarray(queries @ self._fixed)
        fixed_documents = np.asarray(documents @ self._fixed)
        ids: dict[str, int] = {}
        same = np.array([ids.setdefault(document_text(r), len(ids)) for _, r in pairs])  # which API each pair has
        rng = np.random.default_rng(seed)
        first, second, step = np.zeros_like(weights), np.zeros_like(weights), 0
        for _ in range(epochs):
            order = rng.permutation(len(pairs))
            for begin in range(0, len(order), batch):
                chosen = order[begin : begin + batch]
                xq, xd = queries[chosen], documents[chosen]
                q, d = np.asarray(xq @ weights), np.asarray(xd @ weights)
                scores = (q @ d.T + fixed_queries[chosen] @ fixed_documents[chosen].T) / temperature
                repeated = same[chosen][None, :] == same[chosen][:, None]
                scores[repeated & ~np.eye(len(chosen), dtype=bool)] = -np.inf  # the same API is no negative
                scores -= scores.max(axis=1, keepdims=True)
                probabilities = np.exp(scores)
                probabilities /= probabilities.sum(axis=1, keepdims=True)
                grad_scores = (probabilities - np.eye(len(chosen))) / len(chosen) / temperature
                # Only the rows of words in this batch have a gradient: update those (a sparse Adam).
                rows = np.unique(np.concatenate([xq.indices, xd.indices]))
                gradient = xq[:, rows].T @ (grad_scores @ d) + xd[:, rows].T @ (grad_scores.T @ q)
                step += 1
                first[rows] = 0.9 * first[rows] + 0.1 * gradient
                second[rows] = 0.999 * second[rows] + 0.001 * gradient**2
                corrected = (first[rows] / (1 - 0.9**step)) / (np.sqrt(second[rows] / (1 - 0.999**step)) + 1e-8)
                weights[rows] -= rate * corrected
        return weights

    def save_learned(self, path: Path = STORED) -> Path:
        """Store the learned projection (the rows training moves) with its training's digest."""
        rows = self._trained_rows
        with open(path, "wb") as handle:  # np.savez_compressed would add ".npz" to a name without it
            np.savez_compressed(handle, digest=np.array(self.training_digest), rows=rows, values=self._learned[rows])
        return path

    def encode_all(self, texts: Sequence[str]) -> np.ndarray:
        """The dense vectors of ``texts``, one row each."""
        x = self._sparse(texts)
        return np.hstack([np.asarray(x @ self._learned), np.asarray(x @ self._fixed)])

    def scores(self, query: str) -> np.ndarray:
        return self._documents @ self.encode_all([query])[0]

    def search(self, query: str, k: int = 5) -> list[Hashable]:
        return ranked(self.keys, self.scores(query), k)


def _digest(
    start: np.ndarray,
    queries: sparse.csr_matrix,
    documents: sparse.csr_matrix,
    pair_documents: Sequence[str],
    settings: tuple[float, ...],
) -> str:
    """A digest of everything ``DenseRetriever._train`` reads: equal digests, equal trained projections."""
    digest = hashlib.sha256(f"{STORED_FORMAT}|{start.shape}|{settings!r}|".encode())
    digest.update(np.ascontiguousarray(start, dtype=np.float64).tobytes())
    for matrix in (queries, documents):
        digest.update(repr(matrix.shape).encode())
        for part in (matrix.data, matrix.indices, matrix.indptr):
            digest.update(np.ascontiguousarray(part).tobytes())
    for text in pair_documents:  # which pairs share an API (no negatives of each other)
        digest.update(hashlib.sha256(text.encode()).digest())
    return digest.hexdigest()


def _load_learned(path: Path, digest: str, start: np.ndarray) -> np.ndarray | None:
    """The stored learned projection when it was trained on what ``digest`` describes, else None."""
    if not path.is_file():
        return None
    with np.load(path) as stored:
        if str(stored["digest"]) != digest:
            return None
        learned = start.copy()
        learned[stored["rows"]] = stored["values"]
    return learned


def _top_singular_vectors(matrix: sparse.csr_matrix, dim: int) -> np.ndarray:
    """The ``dim`` top right singular vectors of ``matrix`` as columns (latent semantic analysis),
    from the eigenvectors of its rows' Gram matrix, with each sign fixed so the result is the same
    on every run."""
    from scipy.linalg import eigh

    gram = (matrix @ matrix.T).toarray()
    size = len(gram)
    values, vectors = eigh(gram, subset_by_index=[max(0, size - dim), size - 1])
    top = np.argsort(-values, kind="stable")
    values, vectors = np.clip(values[top], 1e-12, None), vectors[:, top]
    vectors *= np.where(vectors[np.abs(vectors).argmax(axis=0), np.arange(len(top))] < 0, -1, 1)
    right = np.asarray(matrix.T @ vectors) / np.sqrt(values)
    if right.shape[1] < dim:  # a corpus smaller than dim: the rest of the space stays empty
        right = np.hstack([right, np.zeros((right.shape[0], dim - right.shape[1]))])
    return right
