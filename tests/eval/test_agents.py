import numpy as np
import pytest
from rank_bm25 import BM25Okapi

import toolbench
from toolbench.agents import make_agent
from toolbench.envs.openweather import API_DOCS
from toolbench.envs.sheets import API_DOCS as SHEETS_DOCS
from toolbench.envs.tabletop import API_DOCS as TABLETOP_DOCS
from toolbench.eval.harness import evaluate
from toolbench.prompting import Matcher, PromptBuilder, split_api_docs, tokenize

CASES = [(spec.name, mode) for spec in toolbench.TASKS for mode in spec.env_class().modes]


@pytest.mark.parametrize("task, mode", CASES)
def test_oracle_and_random_baselines(task, mode):
    limit = 30 if task == "Tabletop" else None  # the whole Tabletop split is played in tests/tabletop
    oracle, _ = evaluate("oracle", [task], mode=mode, limit=limit, progress=False)
    chance, _ = evaluate("random", [task], mode=mode, limit=limit, progress=False)
    assert oracle["tasks"][task]["success_rate"] == 1.0
    assert oracle["tasks"][task]["n"] == (limit or len(toolbench.load_tasks(task)))
    assert chance["tasks"][task]["success_rate"] <= 0.1
    assert chance["tasks"][task]["score"] < 0.5


def test_random_agent_is_seeded():
    a, _ = evaluate("random", ["OpenWeather"], limit=20, seed=1, progress=False)
    b, _ = evaluate("random", ["OpenWeather"], limit=20, seed=1, progress=False)
    c, _ = evaluate("random", ["OpenWeather"], limit=20, seed=2, progress=False)
    assert a == b and a != c


def test_workers_give_the_same_report():
    single, episodes = evaluate("random", ["CatAPI"], limit=30, progress=False)
    multi, episodes_multi = evaluate("random", ["CatAPI"], limit=30, workers=2, progress=False)
    assert single == multi and episodes == episodes_multi


def test_unknown_agent():
    with pytest.raises(ValueError):
        make_agent("gpt")


def test_split_api_docs_one_block_per_function():
    blocks = split_api_docs(API_DOCS)
    assert len(blocks) == 9 and all(block.startswith("# ") and "curl" in block for block in blocks)
    assert all("Parameters:" in block for block in blocks)  # a function's parameter list stays with it


def test_split_api_docs_keeps_a_whole_comment_block_with_its_function():
    blocks = split_api_docs(TABLETOP_DOCS)
    (parse_position,) = [b for b in blocks if "parse_position(text)" in b]
    assert (
        parse_position.startswith("# The xy of a place phrase")
        and "'0.2 m to the top of the red bowl'" in parse_position
    )
    (put,) = [b for b in blocks if "put_first_on_second(" in b]
    assert put.startswith("# Pick up the first") and "# A block put on a block" in put
    assert sum("get_corner_name" in b for b in blocks) == 1
    sheets = split_api_docs(SHEETS_DOCS)
    assert sheets[0].startswith("# The names your code can use") and "gspread 6 passes values first" in sheets[0]
    assert all(block.splitlines()[-1].strip() and not block.splitlines()[-1].startswith("#") for block in sheets[1:])


def test_prompt_retrieves_relevant_docs_and_demos():
    demos = toolbench.load_tasks("OpenWeather", "demo")
    builder = PromptBuilder(API_DOCS, demos, top_k_api=2, top_k_example=2)
    prompt = builder.build("How is the air pollution forecast at latitude 10, longitude 20?")
    assert "air_pollution/forecast" in prompt and "geo/1.0/direct" not in prompt
    assert prompt.count("Task: ") == 3 and prompt.rstrip().endswith("Action:")
    assert "air" in prompt.split("solved examples")[1].split("Task: ")[1].lower()  # the best match comes first


def test_matcher_scores_are_rank_bm25s_bit_for_bit_and_rank_ties_by_position():
    corpus = [task.prompt for task in toolbench.load_tasks("AppBench", "train")[:400]]
    corpus += ["", "the the the", corpus[0]]  # an empty text, a repeated word, a duplicate (a tie)
    reference = BM25Okapi([tokenize(text) or ["_"] for text in corpus])
    matcher = Matcher(corpus)
    queries = [task.prompt for task in toolbench.load_tasks("AppBench")[:20]]
    queries += ["", "book book a ride ride", "zzzunknownword", corpus[0], "the"]
    for query in queries:
        expected = reference.get_scores(tokenize(query) or ["_"])
        assert np.array_equal(matcher.scores(query), expected), query
        ranked = sorted(range(len(corpus)), key=lambda i: (-expected[i], i))
        assert matcher.top_k(query, 5) == ranked[:5]
    assert matcher.top_k(corpus[0], 2) == [0, len(corpus) - 1]  # the text and its duplicate, in their order
    assert Matcher([]).top_k("x", 3) == [] and matcher.top_k("x", 0) == []
