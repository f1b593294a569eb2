"""ToolBench's API -> function schema rules, checked on our examples and on the
released answer files (../shared/refdata/toolllm)."""

from __future__ import annotations

import json
import os

import pytest

from toolbench.mock_services.rapidapi.functions import (
    MAX_OBSERVATION,
    api_function,
    change_name,
    finish_function,
    function_name,
    observation,
    standardize,
)


@pytest.mark.parametrize(
    ("raw", "standard"),
    [
        ("Weather Forecast 14 Days", "weather_forecast_14_days"),
        ("  --Get/User's Profile!! ", "get_user_s_profile"),
        ("3D Models", "get_3d_models"),
        ("a^b", "a^b"),
        ("天气 API", "天气_api"),
    ],
)
def test_standardize(raw, standard):
    assert standardize(raw) == standard


def test_names_of_functions():
    assert change_name("from") == "is_from" and change_name("to") == "to"
    assert function_name("Get Forecast", "Open Weather") == "get_forecast_for_open_weather"
    long = function_name("A very long API name that goes on and on", "An even longer tool name for testing cuts")
    assert len(long) == 64 and long.endswith("_for_an_even_longer_tool_name_for_testing_cuts")


def test_an_api_becomes_a_schema():
    api = {
        "name": "Search Recipes",
        "description": "Search Recipes by keyword",
        "required_parameters": [{"name": "query", "type": "STRING", "description": "words", "default": "pasta"}],
        "optional_parameters": [
            {"name": "limit", "type": "NUMBER", "description": "", "default": ""},
            {"name": "from", "type": "DATE (YYYY-MM-DD)", "description": "", "default": "2023-01-01"},
        ],
    }
    function = api_function(api, "Cook Book")["function"]
    assert function["name"] == "search_recipes_for_cook_book"
    assert "search_recipes_for_cook_book by keyword" in function["description"]
    parameters = function["parameters"]
    assert parameters["required"] == ["query"] and parameters["optional"] == ["limit", "is_from"]
    assert parameters["properties"]["query"] == {"type": "string", "description": "words", "example_value": "pasta"}
    assert (
        parameters["properties"]["limit"]["type"] == "integer"
        and "example_value" not in parameters["properties"]["limit"]
    )
    assert parameters["properties"]["is_from"]["type"] == "string"
    assert finish_function()["function"]["parameters"]["properties"]["return_type"]["enum"] == [
        "give_answer",
        "give_up_and_restart",
    ]


def test_observations_are_cut_at_1024_characters():
    assert observation("", {"a": 1}) == '{"error": "", "response": {"a": 1}}'
    long = observation("", "x" * 5000)
    assert len(long) == MAX_OBSERVATION + 3 and long.endswith("...")


def test_the_released_answers_function_names_and_parameters(refdata):
    base = refdata / "toolllm" / "StableToolBench"
    queries = {}
    for path in (base / "solvable_queries" / "test_instruction").glob("*.json"):
        for query in json.loads(path.read_text()):
            queries[(path.stem, query["query_id"])] = query
    answers = sorted((base / "data_example" / "answer").rglob("*.json"))
    names = parameters = total = 0
    for path in answers:
        query = queries.get((path.parent.name, int(os.path.basename(path).split("_")[0])))
        if query is None:
            continue
        theirs = {f["name"]: f["parameters"] for f in json.loads(path.read_text())["answer_generation"]["function"]}
        for api in query["api_list"]:
            ours = api_function({**api, "name": api["api_name"]}, api["tool_name"])["function"]
            total += 1
            names += ours["name"] in theirs
            if ours["name"] not in theirs:
                continue
            plain = {
                k: {kk: vv for kk, vv in v.items() if kk != "description"}
                for k, v in theirs[ours["name"]]["properties"].items()
            }
            mine = {
                k: {kk: vv for kk, vv in v.items() if kk != "description"}
                for k, v in ours["parameters"]["properties"].items()
            }
            parameters += (
                plain == mine and [r for r in theirs[ours["name"]]["required"] if r] == ours["parameters"]["required"]
            )
    # Two calls of one API differ: the server's copy of that tool lists no parameter, the query's lists one.
    assert total == 46 and names == 46 and parameters >= 44
