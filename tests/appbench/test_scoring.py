"""Our AppBench scorer: multiset F1 and succ as the execution graph."""

from __future__ import annotations

import json

from toolbench.mock_services.apps.plan import PlanError, parse_plan, resolve
from toolbench.mock_services.apps.scoring import multiset_hits, score_plan

GOLD = """Restaurants: [restaurant_name, address = findrestaurants(#category='Korean', #location='San Jose')]
Weather: [temperature = getweather(#city='San Jose', #date='2019-03-08')]
Rents: [ride_fare = getride(#destination=address, #number_of_seats='2', #ride_type='Pool')]"""
SAID = {"category": "Korean", "location": "San Jose", "city": "San Jose", "number_of_seats": "2", "ride_type": "Pool"}


def score(text, gold=GOLD, said=SAID):
    return score_plan(resolve(parse_plan(text)), resolve(parse_plan(gold)), said)


def test_the_gold_plan_and_independent_calls_in_another_order_succeed():
    assert score(GOLD).succ and score(GOLD).f1_app == 1.0
    lines = GOLD.splitlines()
    assert score("\n".join([lines[1], lines[0], lines[2]])).succ  # the weather call is independent
    assert score("\n".join([lines[0], lines[2], lines[1]])).succ


def test_dependencies_must_agree():
    wrong_literal = GOLD.replace("#destination=address", "#destination='1 Main Street'")
    assert not score(wrong_literal).succ  # a literal where a returned value is needed, and not what the user said
    said = {**SAID, "destination": "1 Main Street"}  # unless the user stated it
    assert score(wrong_literal, said=said).succ


def test_wrong_apps_apis_and_arguments_fail():
    assert not score(GOLD.replace("Rents: [ride_fare = getride", "Travel: [ride_fare = getride")).succ
    assert not score(GOLD.replace("#ride_type='Pool'", "#ride_type='Luxury'")).succ
    assert not score(GOLD.replace(", #ride_type='Pool'", "")).succ
    assert not score("\n".join(GOLD.splitlines()[:2])).succ
    assert score(" ".join(GOLD.splitlines()[:1])).f1_app == 2 * (1 * 1 / 3) / (1 + 1 / 3)


def test_f1_counts_repeated_items_each_once():
    assert multiset_hits(["Trains", "Trains", "Hotels"], ["Trains", "Trains", "Weather"]) == 2
    assert multiset_hits(["Trains", "Trains"], ["Trains"]) == 1


def test_the_original_gold_plans_succeed_against_themselves(refdata):
    total = succeeded = 0
    for kind in ("ss", "sm", "ms", "mm"):
        path = refdata / "appbench" / "data" / "test" / f"test_{kind}.json"
        for record in json.loads(path.read_text()):
            output = record["output"]
            text = "\n".join(
                f"{app}: [{call}]" for app, call in zip(output["used_app"], output["api_results"], strict=False)
            )
            total += 1
            try:
                calls = resolve(parse_plan(text))
            except PlanError:
                continue
            result = score_plan(calls, calls, output["user_aware_arguments"])
            succeeded += result.succ and result.f1_app == 1.0 and result.f1_api == 1.0
    assert total == 801 and succeeded >= 797
