"""The shop's search engine: BM25 over the text WebShop indexes, ranked as Lucene ranks it.

WebShop indexes each product as ``title, description, first bullet point, options`` in lower case
(``"size: 16gb, 32gb, and color: black"`` for the options) with pyserini, whose default searcher is
Lucene's BM25 (k1 0.9, b 0.4) behind Anserini's English analyzer (Porter stemming, Lucene's stop
words). We rank with ``bm25s`` (its ``lucene`` variant, the same formula) and ``PyStemmer``'s Porter
stemmer, both from PyPI with no Java: a query over 100,000 products takes milliseconds. Only
products that share a term with the query are hits (as in Lucene), at most 50, best first; ties
in asin order (Anserini breaks ties by document id).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import bm25s
import numpy as np
import Stemmer
from bm25s.tokenization import Tokenizer

from toolbench.mock_services.webshop.catalog import Product

K1, B = 0.9, 0.4
SEARCH_RETURN_N = 50
#: Lucene's English stop words (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET).
STOP_WORDS = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if",
    "in", "into", "is", "it", "no", "not", "of", "on", "or", "such", "that",
    "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with",
]  # fmt: skip
#: Tokens as Lucene's standard tokenizer cuts them for this text: numbers keep their decimal point or
#: comma ("1.7", "80.00"), words their inner apostrophe, one-character tokens stay ("8" of "size 8").
_TOKEN = re.compile(r"\d+(?:[.,]\d+)+|\w+(?:['\u2019]\w+)*")


def lucene_tokens(text: str) -> list[str]:
    """The tokens of ``text``, with English possessives dropped ("women's" -> "women") as Anserini's
    analyzer drops them before stop words and stemming."""
    return [t[:-2] if t.endswith(("'s", "\u2019s")) else t for t in _TOKEN.findall(text)]


def document_text(product: Product) -> str:
    """What WebShop indexes of a product, as its index builder joins it."""
    option_text = ", and ".join(f"{name}: {', '.join(values)}" for name, values in product.options.items())
    first_bullet = product.bullet_points[0] if product.bullet_points else ""
    return " ".join([product.title, product.description, first_bullet, option_text]).lower()


class SearchEngine:
    """A BM25 index of ``products``; ``search`` returns product indexes, best first."""

    def __init__(self, products: Sequence[Product]) -> None:
        self.size = len(products)
        self._tokenizer = Tokenizer(splitter=lucene_tokens, stopwords=STOP_WORDS, stemmer=Stemmer.Stemmer("porter"))
        corpus = self._tokenizer.tokenize(
            [document_text(p) for p in products], update_vocab=True, show_progress=False, return_as="tuple"
        )
        self._index = bm25s.BM25(k1=K1, b=B, method="lucene")
        self._index.index(corpus, show_progress=False)
        # Anserini breaks score ties by document id (the asin): each product's place in asin order.
        self._asin_rank = np.argsort(np.argsort(np.array([p.asin for p in products], dtype=object), kind="stable"))

    def search(self, query: str, k: int = SEARCH_RETURN_N) -> list[int]:
        """Indexes of the (at most ``k``) products that best match ``query``; none when no term matches."""
        if not self.size:
            return []
        ids = self._tokenizer.tokenize([query.lower()], update_vocab=False, show_progress=False, return_as="ids")[0]
        if not ids:
            return []
        scores = self._index.get_scores(ids)
        matching = np.flatnonzero(scores > 0)
        if not len(matching):
            return []
        if 0 < k < len(matching):  # only hits scoring at least the k-th best can place: sort those, not every hit
            kth_best = np.partition(scores[matching], len(matching) - k)[len(matching) - k]
            matching = matching[scores[matching] >= kth_best]
        order = matching[np.lexsort((self._asin_rank[matching], -scores[matching]))]  # best first, ties by asin
        return [int(i) for i in order[:k]]
