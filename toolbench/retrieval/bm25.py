"""ToolLLM's sparse API retriever: ``BM25Retriever`` ranks with ``bm25s`` (Lucene's BM25 over
Porter-stemmed words, the library the WebShop search uses too)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import bm25s
import numpy as np
import Stemmer
from bm25s.tokenization import Tokenizer

from toolbench.retrieval.documents import STOP_WORDS, corpus, document_text, ranked, words


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
