"""The Trip Booking API: ``Loc``/``Date`` values and a state machine that collects criteria.

Functions, rules and criteria keys follow ToolBench: ``select_booking_type`` first; location
setters take a ``Loc`` and date setters a ``Date``; ``search()`` sets the ticket and room
minimum prices to 0 when unset, checks what the booking type requires (trip tickets: means of
transportation, origin, destination, departure date; hotels: hotel location, check-in and
check-out; both: all of those), and for "both" lets departure default to check-in, return to
check-out and the number of rooms to 1.
"""

from __future__ import annotations

import copy
import datetime as dt
import reprlib
from dataclasses import dataclass
from typing import Any

from toolbench.core.program import RuleError
from toolbench.mock_services.trip_booking.travel import MODES, ROOM_TYPES, Departure, Stay, TravelDB, load_travel_db

FUNCTIONS = (
    "select_booking_type",
    "select_transportation",
    "set_origin",
    "set_destination",
    "set_min_ticket_price",
    "set_max_ticket_price",
    "set_num_adults",
    "set_num_children",
    "set_departure_date",
    "set_return_date",
    "set_hotel_location",
    "set_checkin_date",
    "set_checkout_date",
    "set_num_rooms",
    "select_room_type",
    "set_min_room_price",
    "set_max_room_price",
    "search",
)
BOOKING_TYPES = ("hotels", "trip tickets", "both")
FIRST_YEAR, LAST_YEAR = 1900, 2100
RESULTS_SHOWN = 5


#: What ``search()`` fills in for criteria left unset, as ToolBench's API does (rooms: for hotels).
SEARCH_DEFAULTS = {"min_price_ticket": 0, "min_price_room": 0, "num_rooms": 1}


@dataclass(frozen=True)
class Loc:
    """A place, as programs write it: ``Loc("Denver")``."""

    location: str

    def __post_init__(self) -> None:
        if not isinstance(self.location, str) or not self.location.strip():
            raise ValueError(f"Loc expects a place name, got {reprlib.repr(self.location)}")

    def __repr__(self) -> str:
        return f"Loc({reprlib.repr(self.location)})"


@dataclass(frozen=True)
class Date:
    """A calendar date, as programs write it: ``Date(month, day, year)``."""

    month: int
    day: int
    year: int

    def __post_init__(self) -> None:
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (self.month, self.day, self.year)):
            raise ValueError(
                f"Date expects whole numbers Date(month, day, year), got "
                f"Date({reprlib.repr(self.month)}, {reprlib.repr(self.day)}, {reprlib.repr(self.year)})"
            )
        if not FIRST_YEAR <= self.year <= LAST_YEAR:
            raise ValueError(f"Date years run from {FIRST_YEAR} to {LAST_YEAR}, got {self.year}")
        try:
            dt.date(self.year, self.month, self.day)
        except (ValueError, OverflowError) as exc:  # OverflowError: a month or day beyond a C long
            shown = ", ".join(reprlib.repr(v) for v in (self.month, self.day, self.year))
            raise ValueError(f"Date({shown}) is not a real date: {exc}") from None

    @property
    def text(self) -> str:
        """The benchmark's form of a date in the criteria: ``"8-25-2023"``."""
        return f"{self.month}-{self.day}-{self.year}"

    def __repr__(self) -> str:
        return f"Date({self.month}, {self.day}, {self.year})"


CONSTRUCTORS = {"Loc": Loc, "Date": Date}


def parse_date_text(text: str) -> dt.date:
    month, day, year = (int(part) for part in text.split("-"))
    return dt.date(year, month, day)


def _count(function: str, value: Any, what: str) -> int:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise RuleError(f"{function} expects a whole number of {what} (0 or more), got {reprlib.repr(value)}")
    return value


def _price(function: str, value: Any) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise RuleError(f"{function} expects a price in dollars (a number, 0 or more), got {reprlib.repr(value)}")
    return value


class TripBookingAPI:
    """Criteria are collected in ``criteria``; ``search()`` checks them and finds trips and rooms."""

    def __init__(self, db: TravelDB | None = None):
        self.db = db if db is not None else load_travel_db()
        self.criteria: dict[str, Any] = {}
        self.trips: list[Departure] | None = None
        self.returns: list[Departure] | None = None
        self.stays: list[Stay] | None = None

    def snapshot(self) -> dict[str, Any]:
        return {"criteria": copy.deepcopy(self.criteria)}

    def restore(self, snapshot: dict[str, Any]) -> None:
        self.criteria = copy.deepcopy(snapshot["criteria"])
        self.trips = self.returns = self.stays = None

    # ------------------------------------------------------------------ helpers
    def _set(self, key: str, value: Any) -> str:
        self.criteria[key] = value
        return f"OK: {key} = {reprlib.repr(value)}"

    def _started(self, function: str) -> None:
        if "booking_type" not in self.criteria:
            raise RuleError(f"{function} was called before select_booking_type: select the booking type first")

    def _place(self, function: str, value: Any) -> str:
        self._started(function)
        if not isinstance(value, Loc):
            raise RuleError(f'{function} expects a Loc object such as Loc("Denver"), got {reprlib.repr(value)}')
        return self.db.canonical_city(value.location) or value.location.strip()

    def _date(self, function: str, value: Any) -> str:
        self._started(function)
        if not isinstance(value, Date):
            raise RuleError(f"{function} expects a Date object such as Date(8, 25, 2023), got {reprlib.repr(value)}")
        return value.text

    # ------------------------------------------------------------------ the documented functions
    def select_booking_type(self, booking_type: str) -> str:
        if self.criteria:
            raise RuleError("select_booking_type must be the first call, before any other criterion")
        if not isinstance(booking_type, str) or booking_type.strip().lower() not in BOOKING_TYPES:
            raise RuleError(
                f"select_booking_type expects one of {', '.join(map(repr, BOOKING_TYPES))}, "
                f"got {reprlib.repr(booking_type)}"
            )
        return self._set("booking_type", booking_type.strip().lower())

    def select_transportation(self, transportation_type: str) -> str:
        self._started("select_transportation")
        if not isinstance(transportation_type, str) or transportation_type.strip().lower() not in MODES:
            raise RuleError(
                f"select_transportation expects one of {', '.join(MODES)}, got {reprlib.repr(transportation_type)}"
            )
        return self._set("means_of_transportation", transportation_type.strip().lower())

    def set_origin(self, value: Loc) -> str:
        return self._set("location_from", self._place("set_origin", value))

    def set_destination(self, value: Loc) -> str:
        return self._set("location_to", self._place("set_destination", value))

    def set_min_ticket_price(self, value: float) -> str:
        self._started("set_min_ticket_price")
        return self._set("min_price_ticket", _price("set_min_ticket_price", value))

    def set_max_ticket_price(self, value: float) -> str:
        self._started("set_max_ticket_price")
        return self._set("max_price_ticket", _price("set_max_ticket_price", value))

    def set_num_adults(self, value: int) -> str:
        self._started("set_num_adults")
        return self._set("num_adults", _count("set_num_adults", value, "adults"))

    def set_num_children(self, value: int) -> str:
        self._started("set_num_children")
        return self._set("num_children", _count("set_num_children", value, "children"))

    def set_departure_date(self, value: Date) -> str:
        return self._set("departure_date", self._date("set_departure_date", value))

    def set_return_date(self, value: Date) -> str:
        return self._set("return_date", self._date("set_return_date", value))

    def set_hotel_location(self, value: Loc) -> str:
        return self._set("location", self._place("set_hotel_location", value))

    def set_checkin_date(self, value: Date) -> str:
        return self._set("checkin_date", self._date("set_checkin_date", value))

    def set_checkout_date(self, value: Date) -> str:
        return self._set("checkout_date", self._date("set_checkout_date", value))

    def set_num_rooms(self, value: int) -> str:
        self._started("set_num_rooms")
        return self._set("num_rooms", _count("set_num_rooms", value, "rooms"))

    def select_room_type(self, room_type: str) -> str:
        self._started("select_room_type")
        canonical = {name.casefold(): name for name in ROOM_TYPES}
        if not isinstance(room_type, str) or room_type.strip().casefold() not in canonical:
            raise RuleError(f"select_room_type expects one of {', '.join(ROOM_TYPES)}, got {reprlib.repr(room_type)}")
        return self._set("room_type", canonical[room_type.strip().casefold()])

    def set_min_room_price(self, value: float) -> str:
        self._started("set_min_room_price")
        return self._set("min_price_room", _price("set_min_room_price", value))

    def set_max_room_price(self, value: float) -> str:
        self._started("set_max_room_price")
        return self._set("max_price_room", _price("set_max_room_price", value))

    def search(self) -> str:
        self._started("search")
        c = self.criteria
        c.setdefault("min_price_ticket", SEARCH_DEFAULTS["min_price_ticket"])
        c.setdefault("min_price_room", SEARCH_DEFAULTS["min_price_room"])
        kind = c["booking_type"]
        label = {"trip tickets": "trip tickets", "hotels": "hotels", "both": "'trip tickets and hotels'"}[kind]
        needs = {
            "means_of_transportation": ("the transportation", "select_transportation"),
            "location_from": ("the origin", "set_origin"),
            "location_to": ("the destination", "set_destination"),
            "departure_date": ("the departure date", "set_departure_date"),
            "location": ("the hotel location", "set_hotel_location"),
            "checkin_date": ("the check-in date", "set_checkin_date"),
            "checkout_date": ("the check-out date", "set_checkout_date"),
        }
        required = {
            "trip tickets": ["means_of_transportation", "location_from", "location_to", "departure_date"],
            "hotels": ["location", "checkin_date", "checkout_date"],
            "both": [
                "means_of_transportation",
                "location_from",
                "location_to",
                "location",
                "checkin_date",
                "checkout_date",
            ],
        }[kind]
        for key in required:
            if key not in c:
                what, function = needs[key]
                raise RuleError(f"search for {label} needs {what}: call {function} first")
        if kind == "both":
            c.setdefault("departure_date", c["checkin_date"])
            c.setdefault("return_date", c["checkout_date"])
        if kind in ("hotels", "both"):
            c.setdefault("num_rooms", SEARCH_DEFAULTS["num_rooms"])
        self._find()
        return self.describe()

    # ------------------------------------------------------------------ results
    def _find(self) -> None:
        c = self.criteria
        self.trips = self.returns = self.stays = None
        if c["booking_type"] in ("trip tickets", "both"):
            passengers = max(1, c.get("num_adults", 0) + c.get("num_children", 0))

            def fits(d: Departure) -> bool:
                return (
                    d.seats >= passengers
                    and d.price >= c["min_price_ticket"]
                    and d.price <= c.get("max_price_ticket", float("inf"))
                )

            mode = c["means_of_transportation"]
            out = parse_date_text(c["departure_date"])
            self.trips = [d for d in self.db.departures(c["location_from"], c["location_to"], mode, out) if fits(d)]
            if "return_date" in c:
                back = parse_date_text(c["return_date"])
                self.returns = [
                    d for d in self.db.departures(c["location_to"], c["location_from"], mode, back) if fits(d)
                ]
        if c["booking_type"] in ("hotels", "both"):
            checkin, checkout = parse_date_text(c["checkin_date"]), parse_date_text(c["checkout_date"])
            self.stays = [
                s
                for s in self.db.stays(c["location"], checkin, checkout)
                if s.rooms_left >= c["num_rooms"]
                and c.get("room_type", s.room.room_type) == s.room.room_type
                and c["min_price_room"] <= s.nightly_price <= c.get("max_price_room", float("inf"))
            ]

    def found_something(self) -> bool:
        """Whether every part of the last search found at least one option."""
        parts = [p for p in (self.trips, self.returns, self.stays) if p is not None]
        return bool(parts) and all(parts)

    def describe(self) -> str:
        lines = [f"Search criteria: {self.criteria}"]
        for title, items in (("Outbound", self.trips), ("Return", self.returns), ("Hotels", self.stays)):
            if items is None:
                continue
            lines.append(f"{title}: {len(items)} option{'s' if len(items) != 1 else ''}")
            lines += [f"- {item.describe()}" for item in items[:RESULTS_SHOWN]]
            if len(items) > RESULTS_SHOWN:
                lines.append(f"... and {len(items) - RESULTS_SHOWN} more")
        return "\n".join(lines)
