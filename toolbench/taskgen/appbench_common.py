"""What AppBench's seen templates (``appbench``) and its unseen grammar (``appbench_unseen``) share.

The apps' world as a draw reads it (cities, rows by city, timetables), the plan being drawn
(``Builder``, ``Ctx``), what the unseen split holds out of every seen one (``held_out``), the checks
every draw passes before it is kept (it runs on a fresh ``Apps()``, resolves as meant, no reference
can be matched by a wrong stated value, the category's shape holds) and the record it becomes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from itertools import combinations
from typing import Any

from toolbench.mock_services.apps.backend import AppError, Apps
from toolbench.mock_services.apps.model import TODAY, World, fold
from toolbench.mock_services.apps.plan import Call, Ref, format_call, parse_plan, resolve
from toolbench.mock_services.apps.registry import by_app
from toolbench.taskgen import SHIPPED_SEED

CATEGORIES = ("SS", "SM", "MS", "MM")
MAX_ATTEMPTS = 400  # redraws of one record before giving up (a bug, never hit in practice)
# Shape limits per category: calls, apps, largest connected component (AppBench's "sequential
# scale"), number of components (its "parallel scale").
LIMITS = {
    "SS": {"calls": (1, 1), "apps": (1, 1), "seq": 1, "para": 1},
    "SM": {"calls": (2, 4), "apps": (1, 1), "seq": 4, "para": 1},
    "MS": {"calls": (2, 4), "apps": (2, 4), "seq": 4, "para": 4},
    "MM": {"calls": (3, 7), "apps": (2, 4), "seq": 8, "para": 3},
}

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class Redraw(Exception):
    """A draw that cannot be used (no fitting value in the world); the record is drawn again."""


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# ---------------------------------------------------------------------------------------------------------------
# The plan being drawn, and the world it draws from
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class Builder:
    """The calls of one draw, with references tied to the calls meant to provide them, and the
    values the instruction states (every literal of the plan), by argument name, first kept."""

    calls: list[Call] = field(default_factory=list)
    said: dict[str, str] = field(default_factory=dict)

    def add(self, app: str, api: str, args: dict[str, str | Ref]) -> int:
        returns = by_app()[app][api].returns
        for name, value in args.items():
            if not isinstance(value, Ref):
                self.said.setdefault(name, value)
        self.calls.append(Call(app, api, returns, dict(args)))
        return len(self.calls) - 1

    def ref(self, index: int, name: str) -> Ref:
        assert name in self.calls[index].returns, (self.calls[index].api, name)
        return Ref(name, index)


@dataclass
class Ctx:
    """One draw: its random stream, its plan, and what its units share (city, day, party size)."""

    r: random.Random
    b: Builder
    city: str = ""
    day: date = TODAY
    people: int = 2
    city_ref: Ref | None = None  # the city as a value an earlier call returned (a trip's destination)
    city_said: bool = False  # the instruction already names the city

    def loc(self) -> str | Ref:
        return self.city_ref if self.city_ref is not None else self.city

    def where(self) -> str:
        """How a clause names the shared city: " in Boston", or " there" once it has been named."""
        if self.city_said and self.r.random() < 0.5:
            options = [" there", f" in {self.city}"] + ([" at my destination"] if self.city_ref is not None else [])
            return self.r.choice(options)
        self.city_said = True
        return f" in {self.city}"


def world() -> World:
    return Apps.world


@cache
def _by_city(table: str) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for row in getattr(world(), table):
        found.setdefault(row.city, []).append(row)
    return found


def of_city(table: str, city: str) -> list[Any]:
    rows = _by_city(table).get(city, [])
    if not rows:
        raise Redraw(f"no {table} in {city}")
    return rows


@cache
def _routes(mode: str) -> tuple[Any, ...]:
    return tuple(route for route in world().routes if route.mode == mode)


def cities() -> list[str]:
    return [c.name for c in world().cities]


# ---------------------------------------------------------------------------------------------------------------
# What the unseen split holds out of every seen one (test, demo, train, alignment)
# ---------------------------------------------------------------------------------------------------------------

#: Pairs of apps no seen task uses together (none of the seen test and demo tasks does): an unseen
#: task with several apps holds at least one.
HELD_OUT_PAIRS = tuple(
    frozenset(pair)
    for pair in (
        ("Buses", "Trains"), ("Events", "Flights"), ("Events", "Media"), ("Events", "Music"), ("Flights", "Homes"),
        ("Flights", "Hotels"), ("Flights", "Travel"), ("Flights", "Weather"), ("Hotels", "Media"),
        ("Hotels", "Music"), ("Media", "Services"), ("Payment", "Travel"),
    )
)  # fmt: skip
#: Chains of one app's calls no seen task makes (the unseen SM tasks').
HELD_OUT_CHAINS = frozenset(
    {
        "Travel:findattractions>findattractions",
        "Payment:makepayment>requestpayment",
        "Payment:requestpayment>requestpayment",
        "Music:lookupmusic>lookupmusic",
        "Music:lookupmusic>lookupmusic>playmedia",
        "Events:findevents>findevents",
        "Events:findevents>findevents>buyeventtickets",
        "Movies:reviewmovies>findmovies",
        "Movies:reviewmovies>findmovies>gettimesformovie",
        "Homes:findhomebyarea>findhomebyarea",
        "Homes:findhomebyarea>findhomebyarea>schedulevisit",
    }
)


def _any_two(*names: str) -> tuple[frozenset[str], ...]:
    return tuple(frozenset(pair) for pair in combinations(names, 2))


#: Arguments no seen call gives together (or at all): a call that has one of these sets is held out.
HELD_OUT_FILTERS: dict[str, tuple[frozenset[str], ...]] = {
    "Restaurants.findrestaurants": _any_two("price_range", "has_vegetarian_options", "has_seating_outdoors"),
    "Travel.findattractions": _any_two("free_entry", "category", "good_for_kids"),
    "Hotels.searchhouse": _any_two("has_laundry_service", "rating"),
    "Homes.findhomebyarea": _any_two("has_garage", "in_unit_laundry"),
    "Movies.findmovies": (frozenset({"theater_name"}), *_any_two("genre", "show_type")),
    "Music.lookupmusic": _any_two("artist", "album", "genre", "year"),
    "Movies.reviewmovies": _any_two("directed_by", "genre", "cast"),
    "Trains.findtrains": (frozenset({"class"}),),
    "Buses.findbus": (frozenset({"category"}),),
    "Movies.gettimesformovie": (frozenset({"show_type"}),),
    "Music.playmedia": (frozenset({"album"}),),
}


# ---------------------------------------------------------------------------------------------------------------
# Checks and the record
# ---------------------------------------------------------------------------------------------------------------


def combination(category: str, calls: list[Call]) -> str:
    """What a task combines, as one string (``HELD_OUT_KEYS``)."""
    if category == "SS":
        (call,) = calls
        return f"{call.app}.{call.api}({','.join(sorted(call.args))})"
    apps = sorted({call.app for call in calls})
    if len(apps) == 1:
        return f"{apps[0]}:" + ">".join(call.api for call in calls)
    return "+".join(apps)


def held_out(category: str, calls: list[Call]) -> bool:
    """Whether a plan combines what only unseen tasks may: a held-out pair of apps, chain or set of filters."""
    apps = {call.app for call in calls}
    if any(pair <= apps for pair in HELD_OUT_PAIRS):
        return True
    if len(apps) == 1 and len(calls) > 1 and combination(category, calls) in HELD_OUT_CHAINS:
        return True
    return any(
        filters <= call.args.keys() for call in calls for filters in HELD_OUT_FILTERS.get(f"{call.app}.{call.api}", ())
    )


def api_result(call: Call) -> str:
    """A call as AppBench's ``api_results`` writes it: the returned names, then the call."""
    return format_call(call).split(": [", 1)[1][:-1]


def plan_text(calls: list[Call]) -> str:
    return "\n".join(format_call(call) for call in calls)


def run(calls: list[Call]) -> tuple[list[dict[str, str]], list[dict[str, str]]] | None:
    """The concrete arguments and the results of each call, run in order on fresh apps; None if a call fails."""
    apps = Apps()
    results: list[dict[str, str]] = []
    concrete: list[dict[str, str]] = []
    for call in calls:
        args = {k: results[v.source][v.name] if isinstance(v, Ref) else v for k, v in call.args.items()}  # type: ignore[index]
        try:
            results.append(apps.call(call.app, call.api, args))
        except AppError:
            return None
        concrete.append(args)
    return concrete, results


def refer_within_apps(calls: list[Call], results: list[dict[str, str]]) -> list[Call]:
    """The calls with each literal an earlier call of the same app returned under the same name (the
    nearest call returning that name, as a bare name resolves) written as a reference: AppBench's gold
    plans chain an app's calls this way (``gettraintickets(#from=from, #date_of_journey=date_of_journey,
    ...)`` after ``findtrains``)."""
    chained = []
    for index, call in enumerate(calls):
        args: dict[str, str | Ref] = {}
        for name, value in call.args.items():
            source = next((j for j in range(index - 1, -1, -1) if name in calls[j].returns), None)
            if (
                not isinstance(value, Ref)
                and source is not None
                and calls[source].app == call.app
                and fold(results[source][name]) == fold(value)
            ):
                value = Ref(name, source)
            args[name] = value
        chained.append(Call(call.app, call.api, call.returns, args, call.line))
    return chained


def components(calls: list[Call]) -> list[int]:
    """Sizes of the plan's connected components (calls linked by references)."""
    parent = list(range(len(calls)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, call in enumerate(calls):
        for value in call.args.values():
            if isinstance(value, Ref):
                parent[root(i)] = root(value.source)  # type: ignore[arg-type]
    sizes: dict[int, int] = {}
    for i in range(len(calls)):
        sizes[root(i)] = sizes.get(root(i), 0) + 1
    return sorted(sizes.values(), reverse=True)


def shape_ok(category: str, calls: list[Call]) -> bool:
    limits = LIMITS[category]
    apps = {call.app for call in calls}
    low, high = limits["calls"]
    if not low <= len(calls) <= high or not limits["apps"][0] <= len(apps) <= limits["apps"][1]:
        return False
    if category == "MS" and len(apps) != len(calls):
        return False
    if category == "MM" and len(apps) == len(calls):
        return False
    sizes = components(calls)
    return sizes[0] <= limits["seq"] and len(sizes) <= limits["para"]


def references_fair(calls: list[Call], concrete: list[dict[str, str]], said: dict[str, str]) -> bool:
    """Whether no reference could be answered by a stated value other than its own: the scorer takes
    a literal for a reference when it equals what the user said under that name."""
    for call, values in zip(calls, concrete, strict=True):
        for name, value in call.args.items():
            if isinstance(value, Ref):
                stated = said.get(name) if name in said else said.get(value.name)
                if stated is not None and fold(stated) != fold(values[name]):
                    return False
    return True


def resolves_as_meant(calls: list[Call]) -> bool:
    """The plan text, parsed and resolved, ties every reference to the call meant to provide it."""
    parsed = resolve(parse_plan(plan_text(calls)))
    return len(parsed) == len(calls) and all(
        (a.app, a.api, a.args) == (b.app, b.api, b.args) for a, b in zip(parsed, calls, strict=True)
    )


def seen_template(category: str, calls: list[Call]) -> str:
    """A seen record's template: its category and the units it was written from, which its APIs in
    plan order name (each unit has its own clauses; the seen grammar joins them)."""
    return f"{category}/" + ">".join(call.api for call in calls)


def record(
    record_id: str,
    category: str,
    prompt: str,
    calls: list[Call],
    concrete: list[dict[str, str]],
    said: dict[str, str],
    template: str | None = None,
) -> dict[str, Any]:
    middle = sorted({name for call in calls for name in call.returns})
    return {
        "id": record_id,
        "category": category,
        "template": template or seen_template(category, calls),
        "combination": combination(category, calls),
        "difficulty": len(calls),
        "prompt": prompt,
        "completion": [plan_text(calls)],
        "output": {
            "used_app": [call.app for call in calls],
            "used_api": [
                {call.api: dict(sorted(values.items()))} for call, values in zip(calls, concrete, strict=True)
            ],
            "result_arguments": [list(call.returns) for call in calls],
            "api_results": [api_result(call) for call in calls],
            "middle_arguments": middle,
            "user_aware_arguments": dict(said),
        },
    }


def split_id(split: str, seed: int, index: int) -> str:
    return f"appbench-{split}-{index:04d}" if seed == SHIPPED_SEED else f"appbench-{split}-s{seed}-{index:04d}"
