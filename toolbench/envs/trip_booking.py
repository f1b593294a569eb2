"""toolbench/TripBooking-v0: book trip tickets and hotels through the ToolBench booking API."""

from __future__ import annotations

import copy
import re
from collections.abc import Collection
from typing import Any

from toolbench.core.call_env import OwnCriteriaEnv
from toolbench.core.functions import FunctionSpec, Param
from toolbench.mock_services.trip_booking import CONSTRUCTORS, MODES, ROOM_TYPES, Date, Loc, TripBookingAPI
from toolbench.mock_services.trip_booking.api import BOOKING_TYPES, SEARCH_DEFAULTS


def _number(name: str, description: str, kind: str = "int") -> FunctionSpec:
    return FunctionSpec(name, description, (Param("value", kind),))


FUNCTIONS = (
    FunctionSpec(
        "select_booking_type",
        "Choose what to book: 'hotels', 'trip tickets' or 'both'. This must be the first call.",
        (Param("booking_type", "str", enum=BOOKING_TYPES),),
    ),
    FunctionSpec(
        "select_transportation",
        "Choose the means of transportation: " + ", ".join(MODES) + ".",
        (Param("transportation_type", "str", enum=MODES),),
    ),
    FunctionSpec("set_origin", "Set where the trip starts, given a Loc object.", (Param("value", "Loc"),)),
    FunctionSpec("set_destination", "Set where the trip goes, given a Loc object.", (Param("value", "Loc"),)),
    _number("set_min_ticket_price", "Set the lowest ticket price in dollars.", "float"),
    _number("set_max_ticket_price", "Set the highest ticket price in dollars.", "float"),
    _number("set_num_adults", "Set the number of adult tickets."),
    _number("set_num_children", "Set the number of child tickets."),
    FunctionSpec("set_departure_date", "Set the day the trip starts, given a Date object.", (Param("value", "Date"),)),
    FunctionSpec("set_return_date", "Set the day of the trip back, given a Date object.", (Param("value", "Date"),)),
    FunctionSpec(
        "set_hotel_location", "Set the city to find a hotel in, given a Loc object.", (Param("value", "Loc"),)
    ),
    FunctionSpec("set_checkin_date", "Set the hotel check-in day, given a Date object.", (Param("value", "Date"),)),
    FunctionSpec("set_checkout_date", "Set the hotel check-out day, given a Date object.", (Param("value", "Date"),)),
    _number("set_num_rooms", "Set the number of hotel rooms."),
    FunctionSpec(
        "select_room_type",
        "Choose the room type: " + ", ".join(ROOM_TYPES) + ".",
        (Param("room_type", "str", enum=ROOM_TYPES),),
    ),
    _number("set_min_room_price", "Set the lowest nightly room price in dollars.", "float"),
    _number("set_max_room_price", "Set the highest nightly room price in dollars.", "float"),
    FunctionSpec(
        "search",
        "Submit the criteria and get the matching trips and hotel rooms. For trip tickets it "
        "needs the transportation, origin, destination and departure date; for hotels the hotel location, "
        "check-in and check-out dates; for both, all of these (departure and return default to check-in "
        "and check-out).",
    ),
)

DOC_PREAMBLE = """# A place: Loc("Denver"). Location setters take a Loc.
Loc(location: str)

# A date: Date(month, day, year), e.g. Date(8, 25, 2023). Date setters take a Date.
Date(month: int, day: int, year: int)

"""


#: What ``search()`` requires of each booking type, after the booking type itself: every task of
#: the type sets them, each with its own value.
SHARED_SETTERS = {
    "trip tickets": ("select_transportation", "set_origin", "set_destination", "set_departure_date"),
    "hotels": ("set_hotel_location", "set_checkin_date", "set_checkout_date"),
    "both": (
        "select_transportation",
        "set_origin",
        "set_destination",
        "set_hotel_location",
        "set_checkin_date",
        "set_checkout_date",
    ),
}
_BOOKING_TYPE = re.compile(r"select_booking_type\(\s*(?:booking_type\s*=\s*)?['\"]([^'\"]+)['\"]")


#: A date in a JSON tool call, as the tools offer it: ISO text, one string a model writes as it
#: reads dates and that a Python type hint (``str``) states, so trainers that read tool schemas off
#: signatures (TRL) show the same schema. The object ``{"month", "day", "year"}`` is still taken.
DATE_SCHEMA: dict[str, Any] = {
    "type": "string",
    "description": 'a date as "YYYY-MM-DD", e.g. "2023-08-25"; in Python programs write Date(month, day, year)',
}
_ISO_DATE = re.compile(r"\s*(\d{4})-(\d{1,2})-(\d{1,2})\s*")


def _date_from_json(value: Any) -> Date:
    if isinstance(value, dict):
        return Date(value.get("month"), value.get("day"), value.get("year"))
    found = _ISO_DATE.fullmatch(value) if isinstance(value, str) else None
    if found:
        year, month, day = (int(part) for part in found.groups())
        return Date(month, day, year)
    raise ValueError('a date must be "YYYY-MM-DD" (or {"month": M, "day": D, "year": Y})')


class TripBookingEnv(OwnCriteriaEnv):
    """Book trip tickets and hotel rooms through the ToolBench Trip Booking API.

    ## Description
    The ToolBench Trip Booking task (Xu et al. 2023), a booking.com-like search: the agent turns a
    request ("round-trip train tickets from Denver to Omaha for 2 adults, leaving May 3") into
    ``API.`` calls, with ``Loc("...")`` places and ``Date(month, day, year)`` dates, then
    ``API.search()``. The booking type comes first; ``search()`` checks the criteria the booking type
    needs. Behind it is a database of 7,488 scheduled flights, trains, buses and cruises between
    52 US cities, with fares and seats by date, and 686 hotel room types with nightly prices and
    availability; every task's search finds at least one option.

    ## Action Space
    Text. ``mode="program"``: the whole program, parsed with ``ast`` (never executed): ``API.``
    calls, ``Loc``/``Date`` values, literals and assignments of those. ``mode="interactive"``: one
    call per step as Python, or a JSON tool call in which places are strings and dates are
    ``"2023-08-25"`` (schemas in ``info["tools"]``; ``{"month": 8, "day": 25, "year": 2023}`` is
    taken too).

    ## Observation Space
    Text: the request; then the call's confirmation, the broken rule, or the search results.

    ## Rewards
    ``info["f1"]`` is ToolBench's F1 between the criteria set (including ``search()``'s defaults:
    minimum prices 0, one room) and the best reference's. The reward, ``score``, is the F1 over the
    task's own criteria (travellers, rooms, room type, a return date, price limits), paid only when
    the booking type and what ``search()`` requires of it (transportation, origin, destination,
    departure; hotel location, check-in and check-out) are all right: those alone, which every task
    of the type sets, earn nothing (ToolBench's F1 pays them 0.87 on average), and a task with no
    criterion beyond them is all-or-nothing. It is paid at the end when ``search()`` ran and passed
    its check of the required criteria (criteria never submitted get their F1 in ``info`` and no
    reward); ``info`` has ``success`` (F1 = 1), ``score``, ``executable``, ``error``, ``precision``,
    ``recall``, ``f1``. A rule broken in a program (wrong first call, a missing required criterion,
    a string where a ``Loc`` is needed) makes it not executable: score 0.

    ## Starting State
    Empty criteria; a task from the split (``test``: 120, 40 per booking type; ``demo``: 11;
    ``train``: 1,000 in the seen sentence frames; ``unseen``: 100 in frames, phrasings and date
    formats of their own).

    ## Episode End
    ``program``: after one action. ``interactive``: at a successful ``search()`` or at ``max_steps``
    (default 30).

    ## Arguments
    ``gym.make("toolbench/TripBooking-v0", split="test", mode="program", render_mode=None,
    max_steps=None, task_file=None)``.
    """

    functions = FUNCTIONS
    constructors = CONSTRUCTORS
    free_criteria = SEARCH_DEFAULTS
    json_values = {"Loc": Loc, "Date": _date_from_json}
    generation_max_tokens = 300
    generation_top_k_api = 15

    def new_api(self) -> TripBookingAPI:
        return TripBookingAPI()

    def api_docs(self) -> str:
        return DOC_PREAMBLE + super().api_docs()

    def tools(self) -> list[dict[str, Any]]:
        """The functions' schemas, a date being ``DATE_SCHEMA``'s "YYYY-MM-DD" text."""
        tools = super().tools()
        for spec, tool in zip(self.functions, tools, strict=True):
            properties = tool["function"]["parameters"]["properties"]
            for param in spec.params:
                if param.kind == "Date":
                    properties[param.name] = copy.deepcopy(DATE_SCHEMA)
        return tools

    def shared_setters(self, reference: str) -> Collection[str]:
        found = _BOOKING_TYPE.search(reference)
        kind = found.group(1).strip().lower() if found else ""
        return ("select_booking_type", *SHARED_SETTERS.get(kind, ()))
