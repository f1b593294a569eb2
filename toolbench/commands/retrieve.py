"""``toolbench retrieve``: NDCG@1 and @5 of an API retriever on RapidAPI's test sets or on
ToolBench's retriever data.

The parser in ``toolbench.cli`` calls the ``cmd_*`` function; heavy modules load inside it.
"""

from __future__ import annotations

import argparse
import sys


def cmd_retrieve(args: argparse.Namespace) -> int:
    """``toolbench retrieve``: NDCG@1 and @5 of a retriever per test set."""
    from toolbench.eval.tables import text_table

    if args.queries or args.corpus:
        results = _retrieve_original(args)
        if results is None:
            return 2
        where = f"corpus: {args.corpus}"
    else:
        import gymnasium as gym

        from toolbench.retrieval.evaluation import evaluate
        from toolbench.retrieval.factory import retriever

        try:
            tasks = gym.make("toolbench/RapidAPI-v0", split=args.split).unwrapped.tasks
        except ValueError as exc:
            print(f"toolbench retrieve: {exc}", file=sys.stderr)
            return 2
        results = evaluate(retriever(args.retriever), tasks)
        where = f"split: {args.split}"
    rows = [(group, f"{100 * m['ndcg@1']:.1f}", f"{100 * m['ndcg@5']:.1f}") for group, m in sorted(results.items())]
    print(f"retriever: {args.retriever}   {where}")
    print("\n".join(text_table(("test set", "NDCG@1", "NDCG@5"), rows)))
    return 0


def _retrieve_original(args: argparse.Namespace) -> dict[str, dict[str, float]] | None:
    """NDCG per group on ToolBench's retriever data: a ``corpus.tsv`` and query files."""
    from toolbench.retrieval.data import read_corpus, read_queries
    from toolbench.retrieval.evaluation import evaluate_queries
    from toolbench.retrieval.factory import make_retriever

    if not (args.queries and args.corpus):
        print("toolbench retrieve: --queries and --corpus go together", file=sys.stderr)
        return None
    try:
        corpus = read_corpus(args.corpus)
        queries = [q for path in args.queries for q in read_queries(path, corpus, args.qrels)]
        training = [(query, corpus[docid]) for path in args.train_queries or []
                    for _, query, docids in read_queries(path, corpus) for docid in docids]  # fmt: skip
    except (OSError, ValueError, KeyError) as exc:
        print(f"toolbench retrieve: {exc}", file=sys.stderr)
        return None
    if not queries:
        print("toolbench retrieve: no query has a relevant API in the corpus", file=sys.stderr)
        return None
    return evaluate_queries(make_retriever(args.retriever, list(corpus), list(corpus.values()), training), queries)
