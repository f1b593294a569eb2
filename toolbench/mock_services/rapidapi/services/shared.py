"""The helpers every service builds on: parameter and API constructors, lookups in the world, bounds
checks, and the session records the stateful services keep (bounded by ``MAX_RECORDS``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any

from toolbench.mock_services.rapidapi.hub import Api, ApiError, Context, Param
from toolbench.mock_services.rapidapi.world import TODAY, World

S = "STRING"
N = "NUMBER"


def p(name: str, kind: str, description: str, default: Any = "", choices: tuple[str, ...] = ()) -> Param:
    return Param(name, kind, description, default, choices)


def api(
    key: str,
    names: tuple[str, str, str],
    style: int,
    method: str,
    path: str,
    description: str,
    handler: Callable[[Context, dict[str, Any]], Any],
    required: tuple[Param, ...] = (),
    optional: tuple[Param, ...] = (),
) -> Api:
    prefix = ("", "/v1", "/api")[style % 3]
    return Api(names[style % 3], method, prefix + path, description, handler, required, optional, key)


def city_named(world: World, name: str) -> dict[str, Any]:
    """A city by name (case-insensitive, ", Country" allowed after it), or a 404."""
    wanted = name.split(",")[0].strip().lower()
    for city in world.rows("cities"):
        if city["name"].lower() == wanted:
            return city
    raise ApiError(404, f"City '{name[:80]}' not found")


def row(world: World, table: str, key: Any, what: str) -> dict[str, Any]:
    found = world.get(
        table, str(key).strip().upper() if table in ("stocks", "currencies", "countries", "airports", "coins") else key
    )
    if found is None:
        raise ApiError(404, f"Unknown {what} '{str(key)[:80]}'")
    return found


def bounded(value: float, low: float, high: float, name: str) -> float:
    if not low <= value <= high:
        raise ApiError(400, f"Invalid value for parameter '{name}': must be between {low:g} and {high:g}")
    return value


def day_offset(text: str, low: int, high: int, name: str = "date") -> int:
    offset = (date.fromisoformat(text) - TODAY).days
    if not low <= offset <= high:
        first, last = TODAY.toordinal() + low, TODAY.toordinal() + high
        raise ApiError(400, f"'{name}' must be between {date.fromordinal(first)} and {date.fromordinal(last)}")
    return offset


MAX_RECORDS = 1000  # of each kind a session keeps (messages, payments, orders, ...): bounded memory
HISTORY_KEPT = 50  # point changes a user's history shows


def keep(ctx: Context, box: str, key: str, record: dict[str, Any]) -> None:
    """Store a record the session made, or refuse it (507) when the session holds too many."""
    records = ctx.state.setdefault(box, {})
    if key not in records and len(records) >= MAX_RECORDS:
        raise ApiError(507, f"This session holds {MAX_RECORDS} {box}; no more can be made")
    records[key] = record


def stored(ctx: Context, box: str, key: str, what: str) -> dict[str, Any]:
    found = ctx.state.get(box, {}).get(str(key).strip())
    if found is None:
        raise ApiError(404, f"No {what} with id '{str(key)[:80]}'")
    return found
