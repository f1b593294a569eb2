"""ToolLLM's API retrievers over the RapidAPI hub and their evaluation.

- ``documents``: the hub's APIs as documents, and what both retrievers share;
- ``bm25``: ``BM25Retriever``; ``dense``: ``DenseRetriever``, a dual encoder trained in numpy;
- ``factory``: a retriever by name (``bm25``, ``dense``), as the RapidAPI env's ``retriever=`` takes it;
- ``evaluation``: NDCG@k per test set; ``data``: ToolBench's retriever data (``corpus.tsv``, queries, qrels).

The package needs only the core and the RapidAPI mock service, so the RapidAPI env can use it.
"""
