"""The API retriever: NDCG with binary relevance, BM25 over the hub's API documents, the env's
retriever setting and ``toolbench retrieve``."""

from __future__ import annotations

import math

import gymnasium as gym
import pytest

import toolbench  # noqa: F401
from toolbench.cli import main
from toolbench.eval.retrieval import BM25Retriever, corpus, document, evaluate, ndcg


def test_ndcg_with_binary_relevance():
    a, b, c = ("t", "a"), ("t", "b"), ("t", "c")
    assert ndcg([a, b, c], [a], 1) == 1.0 and ndcg([b, a, c], [a], 1) == 0.0
    assert ndcg([b, a, c], [a], 5) == pytest.approx(1 / math.log2(3))
    assert ndcg([a, c, b], [a, b], 5) == pytest.approx((1 + 1 / 2) / (1 + 1 / math.log2(3)))
    assert ndcg([a], [], 5) == 0.0


def test_documents_are_written_as_toolbench_writes_them_and_bm25_finds_named_apis():
    keys, texts = corpus()
    assert len(keys) == len(set(keys)) >= 1000
    assert '"category_name": "Weather"' in next(t for k, t in zip(keys, texts, strict=True) if k[0] == "WeatherNow")
    retriever = BM25Retriever()
    assert retriever.search("current weather WeatherNow", 1) == [("WeatherNow", "Current Weather")]
    assert document({"tool_name": "x"}).startswith('{"category_name": null, "tool_name": "x"')


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


def test_the_dense_retriever_beats_bm25_on_average_and_serves_the_env():
    from toolbench.eval.retrieval import retriever

    env = gym.make("toolbench/RapidAPI-v0", split="test").unwrapped
    bm25, dense = (evaluate(retriever(name), env.tasks)["average"] for name in ("bm25", "dense"))
    assert dense["ndcg@1"] > bm25["ndcg@1"] and dense["ndcg@5"] > bm25["ndcg@5"]
    retrieved = gym.make("toolbench/RapidAPI-v0", split="G3_instruction", retriever="dense").unwrapped
    retrieved.reset(options={"task_id": retrieved.tasks[0].id})
    assert len(retrieved.tools()) == 6
