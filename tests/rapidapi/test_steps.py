"""ToolBench's reading of calls: routing by name ending, and the Finish call's outcomes."""

from __future__ import annotations

from toolbench.mock_services.rapidapi.steps import (
    FINAL_ANSWER,
    GAVE_UP,
    INPUT_ERROR,
    no_such_function,
    read_finish,
    route,
)

FUNCTIONS = ["get_forecast_for_open_weather", "forecast_for_open_weather", "search_for_cook_book"]


def test_routing_takes_the_first_function_ending_with_the_name():
    assert route("search_for_cook_book", FUNCTIONS) == "search_for_cook_book"
    assert route("forecast_for_open_weather", FUNCTIONS) == "get_forecast_for_open_weather"  # ToolBench's endswith
    assert route("cook_book", FUNCTIONS) == "search_for_cook_book"
    assert route("nothing", FUNCTIONS) is None and route("", FUNCTIONS) is None
    assert no_such_function("nothing") == {"error": "No such function name: nothing", "response": ""}


def test_finish_outcomes():
    assert read_finish('{"return_type": "give_answer", "final_answer": "It is 21 C."}').answer == "It is 21 C."
    assert read_finish('{"return_type": "give_up_and_restart"}').status == GAVE_UP
    assert read_finish('{"return_type": "give_answer"}').status == INPUT_ERROR
    assert read_finish('{"final_answer": "x"}').status == INPUT_ERROR
    assert read_finish("[1, 2]").status == INPUT_ERROR
    multiline = '{"return_type": "give_answer", "final_answer": "line one\nline two"}'  # a raw newline: strict=False
    assert read_finish(multiline).answer == "line one\nline two"
    broken = '{"return_type": "give_answer", "final_answer": "Paris has 2.1 million people" '  # no closing brace
    assert read_finish(broken).status == FINAL_ANSWER  # not JSON: the fields are found in the text
    assert read_finish(broken).answer == 'Paris has 2.1 million people" '  # ToolBench keeps the whole tail
    quoted = '{"return_type": "give_answer", "final_answer": "see "The Tide" (give_up_and_restart is not it)"}'
    assert read_finish(quoted).status == FINAL_ANSWER and '"The Tide"' in read_finish(quoted).answer
    assert read_finish('{"return_type": "give_answer", "final_answer": 42}').answer == "42"
    assert read_finish("[" * 10_000).status == INPUT_ERROR
