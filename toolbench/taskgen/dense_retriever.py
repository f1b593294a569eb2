"""``python -m toolbench.taskgen.dense_retriever``: train the hub's dense retriever on RapidAPI's
``train`` split and store its learned projection (``fixtures/rapidapi/dense_retriever.npz``), which
``retriever("dense")`` then loads instead of training for a minute. ``python -m toolbench.taskgen``
(``make fixtures``) runs it after writing RapidAPI's task sets, since it reads the ``train`` split.
"""

from __future__ import annotations

from pathlib import Path

from toolbench.retrieval.dense import STORED, DenseRetriever
from toolbench.retrieval.documents import corpus
from toolbench.retrieval.factory import train_tasks, training_pairs


def write_stored(path: Path = STORED) -> Path:
    """Train the retriever as ``retriever("dense")`` builds it, never loading a stored one, and store it."""
    train_tasks.cache_clear()  # the split as it is on disk now, were it just rewritten
    keys, records = corpus()
    trained = DenseRetriever(keys, records, training_pairs(train_tasks()), stored=None)
    return trained.save_learned(path)


if __name__ == "__main__":
    print(f"wrote {write_stored()}")
