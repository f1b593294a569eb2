"""The API retriever: NDCG with binary relevance, BM25 and the dense dual encoder over the hub's API
documents, the env's retriever setting, ``toolbench retrieve`` and ToolBench's retriever data."""

from __future__ import annotations

import json
import math

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest

import toolbench  # noqa: F401
from toolbench.cli import main
from toolbench.retrieval import factory as retrieval
from toolbench.retrieval.bm25 import BM25Retriever
from toolbench.retrieval.data import build, read_corpus, read_queries
from toolbench.retrieval.dense import DenseRetriever
from toolbench.retrieval.documents import corpus, document, document_text
from toolbench.retrieval.evaluation import evaluate, evaluate_queries, ndcg
from toolbench.retrieval.factory import train_tasks, training_pairs


def test_ndcg_with_binary_relevance():
    a, b, c = ("t", "a"), ("t", "b"), ("t", "c")
    assert ndcg([a, b, c], [a], 1) == 1.0 and ndcg([b, a, c], [a], 1) == 0.0
    assert ndcg([b, a, c], [a], 5) == pytest.approx(1 / math.log2(3))
    assert ndcg([a, c, b], [a, b], 5) == pytest.approx((1 + 1 / 2) / (1 + 1 / math.log2(3)))
    assert ndcg([a], [], 5) == 0.0


def test_documents_are_written_as_toolbench_writes_them_and_bm25_finds_named_apis():
    keys, records = corpus()
    assert len(keys) == len(set(keys)) >= 1000
    weather = next(r for k, r in zip(keys, records, strict=True) if k[0] == "WeatherNow")
    assert '"category_name": "Weather"' in document(weather) and json.loads(document(weather)) == weather
    assert document_text(weather).startswith("Weather, WeatherNow, ")
    assert ", required_params: [" in document_text(weather) and ", return_schema: {" in document_text(weather)
    retriever = BM25Retriever()
    assert retriever.search("current weather WeatherNow", 1) == [("WeatherNow", "Current Weather")]
    assert document({"tool_name": "x"}) == '{"tool_name": "x"}'
    assert document_text({"tool_name": "x"}) == ', x, , , required_params: "", optional_params: "", return_schema: ""'


def test_ndcg_per_test_set_and_the_retriever_setting_of_the_env(capsys):
    env = gym.make("toolbench/RapidAPI-v0", split="test").unwrapped
    results = evaluate(BM25Retriever(), env.tasks)
    assert {"G1_instruction", "G3_instruction", "average"} <= set(results)
    assert all(0 < m["ndcg@1"] <= m["ndcg@5"] <= 1 for group, m in results.items() if group != "G1_tool")
    retrieved = gym.make("toolbench/RapidAPI-v0", split="G1_instruction", retriever="bm25", top_k=3).unwrapped
    task = retrieved.tasks[0]
    retrieved.reset(options={"task_id": task.id})
    assert len(retrieved.tools()) == 4  # the three retrieved APIs and Finish
    assert main(["retrieve"]) == 0 and "NDCG@5" in capsys.readouterr().out


def test_the_dense_retriever_beats_bm25_on_every_test_set_and_serves_the_env():
    from toolbench.retrieval.factory import retriever

    env = gym.make("toolbench/RapidAPI-v0", split="test").unwrapped
    bm25, dense = (evaluate(retriever(name), env.tasks) for name in ("bm25", "dense"))
    assert len(bm25) == 7  # the six test sets and their average
    for test_set, scores in bm25.items():
        for k in ("ndcg@1", "ndcg@5"):
            assert dense[test_set][k] >= scores[k], (test_set, k, dense[test_set][k], scores[k])
    retrieved = gym.make("toolbench/RapidAPI-v0", split="G3_instruction", retriever="dense").unwrapped
    retrieved.reset(options={"task_id": retrieved.tasks[0].id})
    assert len(retrieved.tools()) == 6


def test_the_dense_retriever_is_the_same_from_the_same_data_and_learns_from_it():
    keys, records = corpus()
    pairs = training_pairs(train_tasks()[:150])
    first, second = (DenseRetriever(keys[:300], records[:300], pairs, dim=32, epochs=2) for _ in range(2))
    query = "How many words are in this text, and what is a synonym of 'music'?"
    assert np.array_equal(first.scores(query), second.scores(query))
    untrained = DenseRetriever(keys[:300], records[:300], pairs, dim=32, epochs=0)
    assert not np.array_equal(first.scores(query), untrained.scores(query))
    assert first.encode_all([query]).shape == (1, 64)  # the learned and the fixed projection


def _query_file(path, queries):
    """A ToolBench query file: each query's api_list and the relevant ones among them."""
    records = []
    for n, (query, apis, relevant) in enumerate(queries):
        api_list = [
            {
                "category_name": "Data",
                "tool_name": tool,
                "api_name": api,
                "api_description": f"{api} of {tool}",
                "required_parameters": [],
                "optional_parameters": [],
                "method": "GET",
            }
            for tool, api in apis
        ]
        records.append({"api_list": api_list, "query": query, "relevant APIs": relevant, "query_id": 10 + n})
    path.write_text(json.dumps(records), encoding="utf-8")


def test_retriever_data_is_built_and_read_as_toolbench_writes_it(tmp_path, capsys, monkeypatch):
    queries = tmp_path / "queries"
    queries.mkdir()
    _query_file(queries / "G1_query.json", [
        ("Where is my parcel?", [("Parcels", "Track"), ("Parcels", "Rates")], [["Parcels", "Track"]]),
        ("What does shipping cost?", [("Parcels", "Track"), ("Parcels", "Rates")], [["Parcels", "Rates"]]),
        ("What is the weather?", [("Sky", "Forecast")], [["Sky", "Forecast"]]),
    ])  # fmt: skip
    (tmp_path / "ids.json").write_text('{"11": 0, "12": 0}', encoding="utf-8")
    assert main(["data", "retrieval", "--queries-dir", str(queries), "--out", str(tmp_path / "out"),
                 "--test-ids-dir", str(tmp_path)]) == 0  # fmt: skip
    assert "(3 APIs, 2 test queries, 1 training queries)" in capsys.readouterr().out
    folder = tmp_path / "out" / "G1"
    # ToolBench's training script reads them with pandas
    documents = pd.read_csv(folder / "corpus.tsv", sep="\t")
    assert list(documents.docid) == [1, 2, 3] and json.loads(documents.document_content[2])["tool_name"] == "Sky"
    assert pd.read_csv(folder / "test.query.txt", sep="\t", names=["qid", "query"]).values.tolist() == [
        [2, "What does shipping cost?"], [3, "What is the weather?"]]  # fmt: skip
    assert (folder / "qrels.test.tsv").read_text() == "2\t0\t2\t1\n3\t0\t3\t1\n"
    assert (folder / "qrels.train.tsv").read_text() == "1\t0\t1\t1\n"
    # and ours reads what pandas writes: a row per occurrence, as ToolBench's preprocessing writes them
    doubled = pd.concat([documents, documents.iloc[:1]])
    doubled.to_csv(tmp_path / "corpus.tsv", sep="\t", index=False)
    read = read_corpus(tmp_path / "corpus.tsv")
    assert sorted(read) == [1, 2, 3] and read[1]["api_name"] == "Track"
    assert read_queries(folder / "test.query.txt", read) == [
        ("G1", "What does shipping cost?", [2]),
        ("G1", "What is the weather?", [3]),
    ]
    assert read_queries(queries / "G1_query.json", read)[0] == ("G1_query", "Where is my parcel?", [1])
    assert main(["retrieve", "--corpus", str(folder / "corpus.tsv"), "--queries", str(folder / "test.query.txt")]) == 0
    out = capsys.readouterr().out
    assert "G1 " in out and "NDCG@5" in out
    # dense trains on RapidAPI's train split (here a part of it, for time) and the data's own training queries
    monkeypatch.setattr(retrieval, "train_tasks", lambda: train_tasks()[:100])
    args = ["retrieve", "--retriever", "dense", "--corpus", str(folder / "corpus.tsv")]
    assert (
        main([*args, "--queries", str(folder / "test.query.txt"), "--train-queries", str(folder / "train.query.txt")])
        == 0
    )
    assert "retriever: dense" in capsys.readouterr().out
    assert main(["retrieve", "--corpus", str(folder / "corpus.tsv")]) == 2


def test_retriever_data_from_stabletoolbench_test_sets(refdata, tmp_path):
    source = refdata / "toolllm" / "StableToolBench" / "solvable_queries" / "test_instruction"
    files = sorted(source.glob("G1_*.json"))
    folders = build(files, tmp_path)
    assert list(folders) == ["G1"]
    documents = read_corpus(folders["G1"] / "corpus.tsv")
    from_txt = read_queries(folders["G1"] / "test.query.txt", documents)
    from_json = [q for path in files for q in read_queries(path, documents)]
    records = [r for path in files for r in json.loads(path.read_text())]
    assert len(from_txt) == len({r["query"] for r in records}) == 474 and len(from_json) == len(records)
    assert {(q, tuple(sorted(d))) for _, q, d in from_txt} == {(q, tuple(sorted(d))) for _, q, d in from_json}
    for _, query, docids in from_json[:50]:
        record = next(r for r in records if r["query"] == query)
        assert sorted([documents[d]["tool_name"], documents[d]["api_name"]] for d in docids) == sorted(
            record["relevant APIs"]
        )
    results = evaluate_queries(BM25Retriever(list(documents), list(documents.values())), from_json)
    assert set(results) == {"G1_instruction", "G1_category", "G1_tool", "average"}
    assert all(0 < m["ndcg@1"] <= 1 for m in results.values())
