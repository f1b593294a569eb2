"""toolbench/HomeSearch-v0: set home-search criteria through a 15-function API, then search."""

from __future__ import annotations

import ast
from collections.abc import Collection, Mapping
from functools import cache
from typing import Any

from toolbench.core.call_env import CriteriaApiEnv
from toolbench.core.env import Outcome
from toolbench.core.functions import FunctionSpec, Param
from toolbench.core.program import ProgramError, RuleError, parse_program
from toolbench.core.scoring import deep_equal, dict_f1
from toolbench.core.tasks import Task
from toolbench.mock_services.home_search import (
    BUY_TYPES,
    RENT_TYPES,
    SEARCH_DEFAULTS,
    Home,
    HomeSearchAPI,
    load_listings,
)


def _setter(name: str, description: str, kind: str = "int") -> FunctionSpec:
    return FunctionSpec(name, description, (Param("value", kind),))


FUNCTIONS = (
    FunctionSpec(
        "set_location",
        "Set the city to search in. This must be the first call, before any other criterion.",
        (Param("value", "str", "city name"),),
    ),
    FunctionSpec(
        "set_buy_or_rent",
        "Choose between buying and renting: 'buy' or 'rent'. Call it right after "
        "set_location and before every other criterion.",
        (Param("value", "str", enum=("buy", "rent")),),
    ),
    FunctionSpec(
        "select_home_type",
        "Set the acceptable home types. To buy: "
        + ", ".join(t.title() for t in BUY_TYPES)
        + "; to rent: "
        + ", ".join(t.title() for t in RENT_TYPES)
        + ".",
        (Param("home_types", "List[str]", "one or more home types"),),
    ),
    _setter("set_min_price", "Set the lowest price in dollars (the monthly rent when renting)."),
    _setter("set_max_price", "Set the highest price in dollars (the monthly rent when renting)."),
    _setter("set_min_square_feet", "Set the smallest size in square feet."),
    _setter("set_max_square_feet", "Set the largest size in square feet."),
    _setter("set_num_beds", "Set the number of bedrooms (homes with at least this many are found)."),
    _setter("set_num_baths", "Set the number of bathrooms, in halves such as 2 or 2.5 (at least this many).", "float"),
    _setter("set_num_garages", "Set the number of garages (at least this many)."),
    _setter("set_num_swimming_pools", "Set the number of swimming pools (at least this many)."),
    _setter("set_num_balconies", "Set the number of balconies (at least this many)."),
    _setter("set_floor_number", "Set the floor the home is on (homes on exactly that floor)."),
    _setter("set_max_commute_time", "Set the longest acceptable commute, in minutes."),
    FunctionSpec("search", "Submit the criteria and get the matching homes. Call it after setting all criteria."),
)


#: What every task sets, each with its own value: the city, then buying or renting.
SHARED_SETTERS = ("set_location", "set_buy_or_rent")


@cache
def _listings() -> tuple[Home, ...]:
    return load_listings()


def cut_program(program: str, keep: Collection[str]) -> str:
    """``program`` with only its ``API.<name>(...)`` calls of the functions in ``keep`` and the
    assignments those calls read."""
    statements = ast.parse(program).body
    calls = [
        s
        for s in statements
        if isinstance(s, ast.Expr)
        and isinstance(s.value, ast.Call)
        and isinstance(s.value.func, ast.Attribute)
        and s.value.func.attr in keep
    ]
    read = {node.id for call in calls for node in ast.walk(call) if isinstance(node, ast.Name)}
    kept = [
        s
        for s in statements
        if s in calls
        or (isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id in read for t in s.targets))
    ]
    return "\n".join(ast.get_source_segment(program, s) or ast.unparse(s) for s in kept)


class OwnCriteriaEnv(CriteriaApiEnv):
    """A criteria API env whose reward pays only for each task's own criteria.

    ToolBench's dict F1 (kept in ``info["f1"]``) also counts the criteria every task sets (the
    city and buy or rent; the booking type and the fields a search requires) and ``search()``'s
    defaults, so a program that sets only those earns half of it. The reward, ``score``, is the
    dict F1 over the criteria beyond the ones the task's shared-parts answer (``shared_parts_actions``)
    gets right, paid only when every one of those shared criteria is right too: a search in the
    wrong city or on the wrong day finds none of what was asked. A task whose criteria are all shared
    is all-or-nothing.
    """

    def shared_setters(self, reference: str) -> Collection[str]:
        """The functions of ``reference`` that every task of its kind calls (``search`` aside)."""
        raise NotImplementedError

    def shared_parts_actions(self, task: Task) -> list[str]:
        program = task.references[0]
        cut = cut_program(program, {*self.shared_setters(program), self.finish})
        return self.oracle_actions(Task(task.id, task.prompt, (cut,), task.category, task.extra))

    def _scored(self, observation: str) -> Outcome:
        outcome = super()._scored(observation)
        outcome.score = self.own_score(self.task, self._api.criteria) if self._searched else 0.0
        return outcome

    def own_score(self, task: Task, criteria: Mapping[str, Any]) -> float:
        """The dict F1 over ``task``'s own criteria, for the best reference; 0 where a shared one is wrong."""
        best = 0.0
        for index in range(len(task.references)):
            reference, shared = self._reference(task, index), self._shared_criteria(task, index)
            if reference is None or shared is None:
                continue
            if any(key not in criteria or not deep_equal(criteria[key], value) for key, value in shared.items()):
                continue
            own = {key: value for key, value in criteria.items() if key not in shared}
            best = max(best, dict_f1(own, {k: v for k, v in reference.items() if k not in shared}).f1)
        return best

    def _shared_criteria(self, task: Task, index: int) -> Mapping[str, Any] | None:
        """The criteria of reference ``index`` that its shared-parts program sets to the same values
        (with what ``search()`` fills in from them)."""
        cache_ = self._task_set.derived((type(self), "shared criteria"))
        key = (task.id, index)
        if key not in cache_:
            reference = self._reference(task, index)
            cache_[key] = None
            if reference is not None:
                api = self.new_api()
                program = task.references[index]
                try:
                    for call in parse_program(
                        cut_program(program, {*self.shared_setters(program), self.finish}),
                        self._specs,
                        self.constructors,
                    ):
                        getattr(api, call.function)(*call.args, **call.kwargs)
                except (ProgramError, RuleError, TypeError, SyntaxError):
                    api = None  # a user's reference the cut cannot run: nothing is held as shared
                got = api.criteria if api is not None else {}
                cache_[key] = {k: v for k, v in got.items() if k in reference and deep_equal(v, reference[k])}
        return cache_[key]


class HomeSearchEnv(OwnCriteriaEnv):
    """Find homes by setting search criteria through the ToolBench Home Search API.

    ## Description
    The ToolBench Home Search task (Xu et al. 2023), a Redfin-like search: the agent turns a
    request ("a townhouse or condo to buy in Boston, 1,000-1,750 sq ft, a balcony") into calls of a
    15-function API that each set one criterion, then ``API.search()``. The rules: location first,
    buy or rent second, home types valid for buying or renting. Behind ``search()`` is a database
    of 2,586 listings in 38 US cities; every task's search finds at least one home.

    ## Action Space
    Text (``UnicodeText``). ``mode="program"``: the whole program, e.g.
    ``API.set_location("Boston")\\nAPI.set_buy_or_rent("buy")\\n...\\nAPI.search()``; it is parsed
    with ``ast``, never executed: only ``API.<function>(...)`` calls with literal arguments and
    assignments of literals are accepted. ``mode="interactive"``: one call per step, as Python
    (``API.set_num_beds(3)``) or as a JSON tool call (``{"name": "set_num_beds", "arguments":
    {"value": 3}}``, schemas in ``info["tools"]``).

    ## Observation Space
    Text: the request after ``reset``; after a step, the call's confirmation, the rule it broke, or
    the search results.

    ## Rewards
    ``info`` has ToolBench's ``precision``, ``recall`` and ``f1`` between the criteria the agent
    set (with ``search()``'s defaults, ``min_price`` and ``min_square_feet`` 0) and those of the best
    reference, and ``success`` (F1 = 1 and executable, ToolBench's success). The reward, ``score``,
    paid when the episode ends for criteria a ``search()`` submitted, is the F1 over the task's own
    criteria: the city and buy or rent, which every task sets, and the defaults earn nothing, and a
    wrong city or buy or rent earns 0 (ToolBench's F1 pays the city and buy or rent alone 0.55 on
    average, the reward nothing). A program that breaks a rule is not executable and scores 0.

    ## Starting State
    Empty criteria; a task from the split (``test``: 100, ``demo``: 10; three setters, balconies,
    floor and commute time, appear only in test tasks; ``train``: 1,000 in the seen sentence frames;
    ``unseen``: 100 in frames, phrasings and value formats of their own) drawn by the seeded RNG or named by
    ``options={"task_id": ...}``.

    ## Episode End
    ``program``: after one action. ``interactive``: at ``search()`` (scored), or truncated at
    ``max_steps`` (default 30; the criteria so far are in ``info``, unpaid without a search).

    ## Arguments
    ``gym.make("toolbench/HomeSearch-v0", split="test", mode="program", render_mode=None,
    max_steps=None, task_file=None)``.
    """

    task_name = "HomeSearch"
    fixture_slug = "home_search"
    functions = FUNCTIONS
    free_criteria = SEARCH_DEFAULTS

    def new_api(self) -> HomeSearchAPI:
        return HomeSearchAPI(_listings())

    def shared_setters(self, reference: str) -> Collection[str]:
        return SHARED_SETTERS
