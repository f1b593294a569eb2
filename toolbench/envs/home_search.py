"""toolbench/HomeSearch-v0: set home-search criteria through a 15-function API, then search."""

from __future__ import annotations

from collections.abc import Collection
from functools import cache

from toolbench.core.call_env import OwnCriteriaEnv
from toolbench.core.functions import FunctionSpec, Param
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


#: What every task sets, each with its own value: the city, buying or renting, and the home types
#: (every task of every split names them, and a word list reads them off the prompt).
SHARED_SETTERS = ("set_location", "set_buy_or_rent", "select_home_type")


@cache
def _listings() -> tuple[Home, ...]:
    return load_listings()


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

    functions = FUNCTIONS
    free_criteria = SEARCH_DEFAULTS
    generation_max_tokens = 128
    generation_top_k_api = 15

    def new_api(self) -> HomeSearchAPI:
        return HomeSearchAPI(_listings())

    #: Wrong home types still find homes of the city: the types earn nothing, but the rest still pays.
    ungated_criteria = frozenset({"home_type"})

    def shared_setters(self, reference: str) -> Collection[str]:
        return SHARED_SETTERS
