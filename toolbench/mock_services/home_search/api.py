"""The Home Search API: a state machine that collects search criteria, then searches the listings.

The 15 functions and their rules follow ToolBench: ``set_location`` first, ``set_buy_or_rent``
second, every other criterion after them; home types depend on buying or renting; ``search()``
fills ``min_price`` and ``min_square_feet`` with 0 when unset. The criteria dict uses the
benchmark's keys, since scoring compares it with the reference's.
"""

from __future__ import annotations

import copy
import reprlib
from typing import Any

from toolbench.core.program import RuleError
from toolbench.mock_services.home_search.listings import (
    BUY_TYPES,
    RENT_TYPES,
    Home,
    Listings,
    default_listings,
    load_listings,
)

FUNCTIONS = (
    "set_location",
    "set_buy_or_rent",
    "select_home_type",
    "set_min_price",
    "set_max_price",
    "set_min_square_feet",
    "set_max_square_feet",
    "set_num_beds",
    "set_num_baths",
    "set_num_garages",
    "set_num_swimming_pools",
    "set_num_balconies",
    "set_floor_number",
    "set_max_commute_time",
    "search",
)
RESULTS_SHOWN = 5


def _whole_number(function: str, value: Any, what: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise RuleError(f"{function} expects a whole number of {what}, got {reprlib.repr(value)}")
    if value < 0:
        raise RuleError(f"{function} expects a number of {what} of at least 0, got {value}")
    return value


#: What ``search()`` fills in for criteria left unset, as ToolBench's API does.
SEARCH_DEFAULTS = {"min_price": 0, "min_square_feet": 0}


class HomeSearchAPI:
    """Criteria are collected in ``criteria``; ``search()`` fills defaults and finds the homes."""

    def __init__(self, homes: tuple[Home, ...] | None = None):
        shipped = homes is None or homes is load_listings()
        self.listings = default_listings() if shipped else Listings(homes)
        self.homes = self.listings.homes
        self.criteria: dict[str, Any] = {}
        self.results: list[Home] | None = None

    # ------------------------------------------------------------------ state
    def snapshot(self) -> dict[str, Any]:
        return {
            "criteria": copy.deepcopy(self.criteria),
            "results": [home.id for home in self.results] if self.results is not None else None,
        }

    def restore(self, snapshot: dict[str, Any]) -> None:
        self.criteria = copy.deepcopy(snapshot["criteria"])
        by_id = self.listings.by_id
        self.results = [by_id[i] for i in snapshot["results"]] if snapshot["results"] is not None else None

    def _set(self, key: str, value: Any) -> str:
        self.criteria[key] = value
        return f"OK: {key} = {reprlib.repr(value)}"

    def _after_buy_or_rent(self, function: str) -> None:
        if "buy_or_rent" not in self.criteria:
            raise RuleError(
                f"{function} was called before set_buy_or_rent: set the location first, then buy or "
                "rent, then the other criteria"
            )

    # ------------------------------------------------------------------ the 15 functions
    def set_location(self, value: str) -> str:
        if self.criteria:
            raise RuleError("set_location must be the first call, before any other criterion")
        if not isinstance(value, str) or not value.strip():
            raise RuleError(f"set_location expects a city name, got {reprlib.repr(value)}")
        name = value.strip()
        city = self.listings.cities.get(name.casefold()) or self.listings.cities.get(
            name.split(",")[0].strip().casefold()
        )
        return self._set("location", city or name)

    def set_buy_or_rent(self, value: str) -> str:
        if "location" not in self.criteria:
            raise RuleError("set_buy_or_rent was called before set_location: set the location first")
        if len(self.criteria) != 1:
            raise RuleError("set_buy_or_rent must come right after set_location, before any other criterion")
        if not isinstance(value, str) or value.strip().lower() not in ("buy", "rent"):
            raise RuleError(f"set_buy_or_rent expects 'buy' or 'rent', got {reprlib.repr(value)}")
        return self._set("buy_or_rent", value.strip().lower())

    def select_home_type(self, home_types: list[str]) -> str:
        self._after_buy_or_rent("select_home_type")
        if not isinstance(home_types, (list, tuple)) or not home_types:
            raise RuleError(
                "select_home_type expects a list of home types such as ['House', 'Condo'], "
                f"got {reprlib.repr(home_types)}"
            )
        allowed = RENT_TYPES if self.criteria["buy_or_rent"] == "rent" else BUY_TYPES
        chosen = set()
        for home_type in home_types:
            name = home_type.strip().lower() if isinstance(home_type, str) else home_type
            if name not in allowed:
                mode = "renting" if self.criteria["buy_or_rent"] == "rent" else "buying"
                raise RuleError(
                    f"{reprlib.repr(home_type)} is not a home type for {mode}; choose from {', '.join(allowed)}"
                )
            chosen.add(name)
        return self._set("home_type", ",".join(sorted(chosen)))

    def set_min_price(self, value: int) -> str:
        self._after_buy_or_rent("set_min_price")
        return self._set("min_price", _whole_number("set_min_price", value, "dollars"))

    def set_max_price(self, value: int) -> str:
        self._after_buy_or_rent("set_max_price")
        return self._set("max_price", _whole_number("set_max_price", value, "dollars"))

    def set_min_square_feet(self, value: int) -> str:
        self._after_buy_or_rent("set_min_square_feet")
        return self._set("min_square_feet", _whole_number("set_min_square_feet", value, "square feet"))

    def set_max_square_feet(self, value: int) -> str:
        self._after_buy_or_rent("set_max_square_feet")
        return self._set("max_square_feet", _whole_number("set_max_square_feet", value, "square feet"))

    def set_num_beds(self, value: int) -> str:
        self._after_buy_or_rent("set_num_beds")
        return self._set("num_beds", _whole_number("set_num_beds", value, "bedrooms"))

    def set_num_baths(self, value: float) -> str:
        self._after_buy_or_rent("set_num_baths")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1000 or (value * 2) % 1:
            raise RuleError(f"set_num_baths expects a number of bathrooms such as 2 or 2.5, got {reprlib.repr(value)}")
        return self._set("num_baths", float(value))

    def set_num_garages(self, value: int) -> str:
        self._after_buy_or_rent("set_num_garages")
        return self._set("num_garages", _whole_number("set_num_garages", value, "garages"))

    def set_num_swimming_pools(self, value: int) -> str:
        self._after_buy_or_rent("set_num_swimming_pools")
        return self._set("num_swimming_pools", _whole_number("set_num_swimming_pools", value, "swimming pools"))

    def set_num_balconies(self, value: int) -> str:
        self._after_buy_or_rent("set_num_balconies")
        return self._set("num_balconies", _whole_number("set_num_balconies", value, "balconies"))

    def set_floor_number(self, value: int) -> str:
        self._after_buy_or_rent("set_floor_number")
        return self._set("floor_number", _whole_number("set_floor_number", value, "floors"))

    def set_max_commute_time(self, value: int) -> str:
        self._after_buy_or_rent("set_max_commute_time")
        return self._set("max_commute_time", _whole_number("set_max_commute_time", value, "minutes"))

    def search(self) -> str:
        for key, value in SEARCH_DEFAULTS.items():
            self.criteria.setdefault(key, value)
        self.results = self.listings.search(self.criteria)
        return describe_results(self.criteria, self.results)


def describe_results(criteria: dict[str, Any], results: list[Home]) -> str:
    lines = [f"Search criteria: {criteria}", f"Found {len(results)} home{'s' if len(results) != 1 else ''}."]
    for home in results[:RESULTS_SHOWN]:
        price = f"${home.price:,}" + ("/month" if home.buy_or_rent == "rent" else "")
        lines.append(
            f"- {home.id}: {home.home_type} in {home.city}, {home.state}, {price}, {home.beds} bed, "
            f"{home.baths:g} bath, {home.square_feet:,} sq ft, {home.garages} garage, {home.swimming_pools} pool, "
            f"{home.balconies} balcony, "
            f"floor {home.floor}, {home.commute_time} min commute"
        )
    if len(results) > RESULTS_SHOWN:
        lines.append(f"... and {len(results) - RESULTS_SHOWN} more")
    return "\n".join(lines)
