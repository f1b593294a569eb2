"""The dense retriever's stored projection: loaded where the training would read exactly what it was
trained on, and (slow) what training again gives, array for array and byte for byte."""

from __future__ import annotations

import numpy as np
import pytest

from toolbench.retrieval.dense import STORED, DenseRetriever
from toolbench.retrieval.documents import corpus
from toolbench.retrieval.factory import make_retriever, train_tasks, training_pairs
from toolbench.taskgen.dense_retriever import write_stored

QUERY = "How many words are in this text, and what is a synonym of 'music'?"


def no_training(*args, **kwargs):
    raise AssertionError("trained instead of loading the stored projection")


def small(stored, **settings):
    keys, records = corpus()
    return DenseRetriever(keys[:300], records[:300], training_pairs(train_tasks()[:150]), dim=32, stored=stored,
                          **{"epochs": 1, **settings})  # fmt: skip


def test_a_stored_projection_is_loaded_only_for_the_training_it_came_from(tmp_path, monkeypatch):
    path = tmp_path / "dense.npz"
    trained = small(None)
    assert trained.save_learned(path) == path
    with monkeypatch.context() as patch:
        patch.setattr(DenseRetriever, "_train", no_training)
        loaded = small(path)
    assert loaded.training_digest == trained.training_digest
    assert np.array_equal(loaded.scores(QUERY), trained.scores(QUERY))
    other = small(path, epochs=2)  # other settings: another digest, so it trains
    assert other.training_digest != trained.training_digest
    assert not np.array_equal(other.scores(QUERY), trained.scores(QUERY))
    assert np.array_equal(small(tmp_path / "missing.npz").scores(QUERY), trained.scores(QUERY))


def test_the_hubs_retriever_loads_the_shipped_projection(monkeypatch):
    assert STORED.is_file(), "make fixtures writes it"
    monkeypatch.setattr(DenseRetriever, "_train", no_training)
    retriever = make_retriever("dense", *corpus())
    with np.load(STORED) as stored:
        assert str(stored["digest"]) == retriever.training_digest


@pytest.mark.slow
def test_training_again_gives_the_shipped_projection(tmp_path):
    retrained = write_stored(tmp_path / "retrained.npz")
    with np.load(STORED) as shipped, np.load(retrained) as fresh:
        assert set(shipped.files) == set(fresh.files) == {"digest", "rows", "values"}
        for name in shipped.files:  # the zip around them holds its write time: compare the arrays
            assert shipped[name].dtype == fresh[name].dtype, name
            assert shipped[name].tobytes() == fresh[name].tobytes(), name
