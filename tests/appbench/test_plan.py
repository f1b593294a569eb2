"""AppBench plans parse into calls with references, never as code."""

from __future__ import annotations

import pytest

from toolbench.mock_services.apps.plan import MAX_CALLS, PlanError, Ref, format_call, parse_plan, resolve
from toolbench.mock_services.apps.registry import APP_DESCRIPTIONS, apis, by_app, owners

PLAN = """Restaurants: [restaurant_name, address = findrestaurants(#category='Korean', #location='San Jose')]
Restaurants: [success_flag = reserverestaurant(#restaurant_name=restaurant_name, #location='San Jose', #time='19:00')]
Rents: [ride_fare = getride(#destination=address, #number_of_seats='2', #ride_type='Pool')]"""


def test_a_plan_parses_into_calls_with_references_to_earlier_results():
    calls = resolve(parse_plan(PLAN))
    assert [(c.app, c.api) for c in calls] == [
        ("Restaurants", "findrestaurants"), ("Restaurants", "reserverestaurant"), ("Rents", "getride"),
    ]  # fmt: skip
    assert calls[0].returns == ("restaurant_name", "address")
    assert calls[1].args == {"restaurant_name": Ref("restaurant_name", 0), "location": "San Jose", "time": "19:00"}
    assert calls[2].args["destination"] == Ref("address", 0) and calls[2].args["number_of_seats"] == "2"
    assert parse_plan(format_call(calls[1]))[0].args == parse_plan(PLAN)[1].args


@pytest.mark.parametrize(
    ("line", "args"),
    [
        ("Restaurants: [n = reserverestaurant(#restaurant_name='Mcdonald's', #time='13:30')]",
         {"restaurant_name": "Mcdonald's", "time": "13:30"}),  # AppBench's own unescaped apostrophe
        ('Weather: [t = getweather(city="Paris, France")]', {"city": "Paris, France"}),
        ("Weather: getweather(#city='Oslo')", {"city": "Oslo"}),
        ("Payment: [a = makepayment(#amount=25, #private_visibility=True, #receiver='Ann')]",
         {"amount": "25", "private_visibility": "True", "receiver": "Ann"}),
    ],
)  # fmt: skip
def test_values_quoted_or_not(line, args):
    assert parse_plan(line)[0].args == args


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("import os\nos.system('rm -rf /')", "line 1: not a call"),
        ("Weather: [t = getweather(#city=__import__('os'))]", "unexpected"),
        ("Weather: [t = getweather(#city='Oslo)]", "no closing quote"),
        ("Weather: [t = getweather(#city='a', #city='b')]", "given twice"),
        ("Rents: [f = getride(#destination=address)]", "no earlier call returns"),
        ("Weather: [t = getweather(#city='x')]\n" * (MAX_CALLS + 1), "more than"),
        ("W: [a = b(#c='" + "x" * 3000 + "')]", "characters long"),
        ("\x00\x01", "NUL"),
    ],
)
def test_hostile_or_broken_plans_are_refused_with_a_reason(text, why):
    with pytest.raises(PlanError, match=why):
        resolve(parse_plan(text))


def test_a_reference_goes_to_the_nearest_earlier_call_and_never_a_later_one():
    text = """A: [x = one(#k='1')]
A: [x = two(#k=x)]
A: [y = three(#k=x)]"""
    calls = resolve(parse_plan(text))
    assert calls[1].args["k"] == Ref("x", 0) and calls[2].args["k"] == Ref("x", 1)
    with pytest.raises(PlanError):
        resolve(parse_plan("A: [y = one(#k=x)]\nA: [x = two(#k='1')]"))


def test_the_registry_has_appbenchs_15_apps_and_33_apis():
    assert list(by_app()) == list(APP_DESCRIPTIONS) and len(APP_DESCRIPTIONS) == 15
    assert len(apis()) == 33 and owners("findmovies") == ["Media", "Movies"] and owners("getride") == ["Rents"]
    for api in apis():
        assert api.required or api.optional or api.name in ("reviewmovies", "lookupmusic")
        assert set(dict(api.required)) | {name for name, _, _ in api.optional} == set(api.arguments())
        assert all(kind in ("str", "int", "float", "bool", "date", "time") for kind in api.arguments().values())
