"""AppBench's app back-ends: the 33 APIs answered from the world, with per-episode bookings.

``Apps.call(app, api, args)`` takes arguments as AppBench writes them, all strings (``'2'``,
``'True'``, ``'2019-03-08'``, ``'13:30'``), and returns the registry's returned arguments of that
API as strings. The rules, in order:

- permission: an API is called through the app that owns it (``findmovies``: Media or Movies);
- validation: every required argument, no unknown one, each value of its type; optional arguments
  left out take the registry's default (``dontcare``: no filter);
- a query filters the world (case-insensitive, spaces collapsed) and returns the first match, in
  the world's order; nothing matching is an ``AppError`` that names the filters;
- a booking checks that what it books exists and is free (sold-out showings and events, full
  restaurant slots, taken appointments, cars and houses already let) and records it in the
  episode's state, which ``snapshot`` / ``restore`` / ``reset`` manage.

Counts in a result are totals: ``price`` of a bus, flight or cinema booking is for all the
passengers or tickets; ``price_per_ticket`` and ``price_per_day`` are per unit. A house's
``total_price`` in ``searchhouse`` (which takes no dates) is the price of one night.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable
from datetime import date
from typing import Any

from toolbench.mock_services.apps.generator import build_world, rng
from toolbench.mock_services.apps.model import (
    BUS_CATEGORIES,
    DEVICES,
    EVENT_TYPES,
    HOME_INTENTS,
    LAST_DAY,
    RIDE_TYPES,
    SEATING_CLASSES,
    SHOW_TYPES,
    THERAPIST_TYPES,
    TODAY,
    TRAIN_CLASSES,
    City,
    World,
    fare_factor,
    fold,
)
from toolbench.mock_services.apps.registry import ANY, APP_DESCRIPTIONS, Api, by_app, owners

MAX_PARTY = 10  # tickets, passengers, guests, diners in one booking
MAX_RIDE_SEATS = {"Pool": 4, "Regular": 4, "Luxury": 6}  # SGD RideSharing_2: 1-4 seats of any ride type
SEATING_FACTOR = {"Economy": 1.0, "Premium Economy": 1.6, "Business": 3.0}
TRAIN_CLASS_FACTOR = {"Value": 1.0, "Flexible": 1.4, "Business": 2.2}
TRIP_PROTECTION_FEE = 9  # per adult
LUGGAGE_FEE = 10  # per bus booking
# Everyday words for the three event types (the world's own names are Music, Sports, Theater).
EVENT_ALIASES = {"concert": "Music", "concerts": "Music", "sport": "Sports", "game": "Sports", "match": "Sports",
                 "theatre": "Theater", "play": "Theater", "show": "Theater"}  # fmt: skip

# Argument names of AppBench's records that come from a sibling SGD service of the same API
# (SGD Buses_2 and Events_1 against Buses_3 and Events_3): the name we use, or None for a
# preference no bus of ours varies by (a fare type). An alias given with the name we use is
# dropped: it says the same thing in the sibling's words.
SGD_ALIASES: dict[str, dict[str, str | None]] = {
    "findbus": {"origin": "from_city", "destination": "to_city", "group_size": "num_passengers", "fare_type": None},
    "findevents": {"category": "event_type"},
}

Values = dict[str, Any]


class AppError(ValueError):
    """A call the apps refuse; the message says why."""


# ---------------------------------------------------------------------------------------------------------------
# Argument checking and result rendering
# ---------------------------------------------------------------------------------------------------------------

# ASCII digits only: "٣" is a digit to Python's \d, not to a booking form.
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TIME = re.compile(r"([0-9]{1,2}):([0-9]{2})")


def convert(name: str, kind: str, text: str) -> Any:
    """A value of an argument's type from its text; ``AppError`` if it is not one."""
    if kind == "str":
        if not text:
            raise AppError(f"{name} is empty")
        return text
    if len(text) > 32:  # no number, date or time is this long (and int() refuses 4,300 digits)
        raise AppError(f"{name}={text[:20]!r}... is too long for a {kind}")
    if kind == "int" and _INT.fullmatch(text):
        return int(text)
    if kind == "float" and _FLOAT.fullmatch(text):
        return float(text)
    if kind == "bool" and text.lower() in ("true", "false"):
        return text.lower() == "true"
    if kind == "date" and _DATE.fullmatch(text):
        try:
            day = date.fromisoformat(text)
        except ValueError:
            raise AppError(f"{name}={text!r} is not a real date") from None
        if not TODAY <= day <= LAST_DAY:
            raise AppError(f"{name}={text!r}: the apps take dates from {TODAY} (today) to {LAST_DAY}")
        return day
    if kind == "time" and (match := _TIME.fullmatch(text)):
        hours, minutes = int(match.group(1)), int(match.group(2))
        if hours < 24 and minutes < 60:
            return f"{hours:02d}:{minutes:02d}"
    shapes = {
        "int": "a whole number such as '2'",
        "float": "a number such as '45.5'",
        "bool": "'True' or 'False'",
        "date": "a date as YYYY-MM-DD",
        "time": "a time as HH:MM",
    }
    raise AppError(f"{name}={text!r} is not {shapes[kind]}")


def check_args(api: Api, args: dict[str, Any]) -> Values:
    """The typed arguments of a call: required ones present, no unknown ones, optional ones defaulted.
    An optional argument whose default is ``dontcare`` is None when it is left out or given as ``dontcare``."""
    given: dict[str, str] = {}
    for raw_name, raw_value in args.items():
        name = str(raw_name).strip().lstrip("#").strip().lower()
        if isinstance(raw_value, bool):
            raw_value = str(raw_value)
        if not isinstance(raw_value, (str, int, float)):
            raise AppError(f"{api.name}: {name} must be given as text, not {type(raw_value).__name__}")
        given[name] = " ".join(str(raw_value).split())
    for alias, name in SGD_ALIASES.get(api.name, {}).items():
        if alias in given:
            value = given.pop(alias)
            if name is not None and name not in given:
                given[name] = value
    kinds = api.arguments()
    unknown = sorted(set(given) - set(kinds))
    if unknown:
        raise AppError(f"{api.name} takes no argument {', '.join(unknown)}; its arguments are {', '.join(kinds)}")
    missing = [name for name, _ in api.required if name not in given]
    if missing:
        raise AppError(f"{api.name} needs {', '.join(missing)}")
    values: Values = {name: convert(name, kind, given[name]) for name, kind in api.required}
    for name, kind, default in api.optional:
        text = given.get(name, default)
        values[name] = None if default == ANY and fold(text) == ANY else convert(name, kind, text)
    return values


def money(amount: float) -> str:
    """An amount as AppBench writes prices: ``45`` or ``18.5``."""
    amount = round(float(amount), 2)
    return str(int(amount)) if amount.is_integer() else f"{amount:.2f}".rstrip("0")


def render(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float):
        return money(value)
    return str(value)


def _choice(name: str, value: str, options: Iterable[str]) -> str:
    """The canonical spelling of a value from a closed list."""
    options = tuple(options)
    for option in options:
        if fold(option) == fold(value):
            return option
    raise AppError(f"{name}={value!r} is not one of {', '.join(options)}")


def _count(name: str, value: int, high: int = MAX_PARTY, low: int = 1) -> int:
    if not low <= value <= high:
        raise AppError(f"{name}={value} must be between {low} and {high}")
    return value


def _same(a: str, b: str | None) -> bool:
    """Whether a world value passes a filter (None: no filter)."""
    return b is None or fold(a) == fold(b)


def _filters(values: Values) -> str:
    return ", ".join(f"{k}={render(v)!r}" for k, v in values.items() if v is not None)


def _stay(start: date, end: date, start_name: str, end_name: str) -> int:
    """Nights or days between two dates; the end must come after the start."""
    if end <= start:
        raise AppError(f"{end_name} ({end}) must be after {start_name} ({start})")
    return (end - start).days


def _overlaps(a: tuple[str, str], b: tuple[str, str]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


# ---------------------------------------------------------------------------------------------------------------
# The apps
# ---------------------------------------------------------------------------------------------------------------


def fresh_state(world: World) -> dict[str, Any]:
    """An episode's state before any call: no bookings, full balances."""
    return {"bookings": [], "balances": {name: float(amount) for name, amount in world.payment_methods}}


class Apps:
    """The 15 apps over one world, and one episode's bookings."""

    world: World = build_world()

    def __init__(self, world: World | None = None) -> None:
        if world is not None:
            self.world = world
        self.state: dict[str, Any] = fresh_state(self.world)

    # -- episode state ----------------------------------------------------------------------------------------

    def reset(self) -> None:
        self.state = fresh_state(self.world)

    def snapshot(self) -> dict[str, Any]:
        """The episode's state as plain JSON-able data (a copy)."""
        return copy.deepcopy(self.state)

    def restore(self, state: dict[str, Any]) -> None:
        if not isinstance(state, dict) or set(state) != {"bookings", "balances"}:
            raise AppError("not a state of the apps (expected bookings and balances)")
        self.state = copy.deepcopy(state)

    @property
    def bookings(self) -> list[dict[str, str]]:
        return self.state["bookings"]

    def _booked(self, api: str, **match: str) -> list[dict[str, str]]:
        """The episode's bookings made with an API whose fields equal ``match`` (folded)."""
        return [
            b for b in self.bookings if b["api"] == api and all(fold(b.get(k, "")) == fold(v) for k, v in match.items())
        ]

    # -- dispatch ---------------------------------------------------------------------------------------------

    def spec(self, app: str, api: str) -> Api:
        """The registry entry of ``app.api``; ``AppError`` for an unknown app or API or a call through
        an app that does not own the API."""
        apps = {fold(name): name for name in APP_DESCRIPTIONS}
        app_name = apps.get(fold(app))
        if app_name is None:
            raise AppError(f"unknown app {app!r}; the apps are {', '.join(APP_DESCRIPTIONS)}")
        api_name = fold(api)
        found = by_app()[app_name].get(api_name)
        if found is None:
            holders = owners(api_name)
            if not holders:
                raise AppError(f"unknown API {api!r}")
            raise AppError(f"{api_name} belongs to {' and '.join(holders)}, not {app_name}")
        return found

    def call(self, app: str, api: str, args: dict[str, str]) -> dict[str, str]:
        """Run one call; its returned arguments as strings, or ``AppError``."""
        spec = self.spec(app, api)
        values = check_args(spec, args)
        handler: Callable[[Values], Values] = getattr(self, f"_{spec.app.lower()}_{spec.name}")
        result = handler(values)
        if set(result) != set(spec.returns):  # a bug here, never the caller's fault
            raise RuntimeError(f"{spec.key} returned {sorted(result)}, not {sorted(spec.returns)}")
        rendered = {name: render(result[name]) for name in spec.returns}
        if spec.transactional or spec.name == "buyeventtickets":
            self.bookings.append({"app": spec.app, "api": spec.name, **rendered})
        return rendered

    def _city(self, text: str | None, what: str) -> City:
        city = self.world.city(text or "")
        if city is None:
            raise AppError(f"{what}: the apps know no city called {text!r}")
        return city

    # -- Hotels -----------------------------------------------------------------------------------------------

    @staticmethod
    def _house(house: Any, city: City) -> Values:
        return {
            "where_to": city.name,
            "rating": f"{house.rating:.1f}",
            "address": house.address,
            "phone_number": house.phone,
            "has_laundry_service": house.laundry,
        }

    def _hotels_searchhouse(self, v: Values) -> Values:
        city = self._city(v["where_to"], "searchhouse")
        adults = v["number_of_adults"]
        if adults is not None:
            adults = _count("number_of_adults", adults)
        for house in self.world.houses:
            if (
                house.city == city.name
                and (v["has_laundry_service"] is None or house.laundry == v["has_laundry_service"])
                and (adults is None or house.max_adults >= adults)
                and (v["rating"] is None or house.rating >= v["rating"])
            ):
                return {
                    **self._house(house, city),
                    "number_of_adults": adults or house.max_adults,
                    "total_price": house.nightly_price,
                }
        raise AppError(f"searchhouse: no house matched {_filters(v)}")

    def _hotels_bookhouse(self, v: Values) -> Values:
        city = self._city(v["where_to"], "bookhouse")
        adults = _count("number_of_adults", v["number_of_adults"])
        nights = _stay(v["check_in_date"], v["check_out_date"], "check_in_date", "check_out_date")
        wanted = (v["check_in_date"].isoformat(), v["check_out_date"].isoformat())
        fits = [h for h in self.world.houses if h.city == city.name and h.max_adults >= adults]
        if not fits:
            raise AppError(f"bookhouse: no house in {city.name} sleeps {adults} adults")
        for house in fits:
            # Check-out day is free for the next guest: compare [in, out) stays.
            taken = any(
                wanted[0] < b["check_out_date"] and b["check_in_date"] < wanted[1]
                for b in self._booked("bookhouse", address=house.address, where_to=city.name)
            )
            if not taken:
                return {
                    **self._house(house, city),
                    "number_of_adults": adults,
                    "check_in_date": v["check_in_date"],
                    "check_out_date": v["check_out_date"],
                    "total_price": house.nightly_price * nights,
                }
        raise AppError(f"bookhouse: every house in {city.name} for {adults} adults is taken from {wanted[0]}")

    # -- Rents ------------------------------------------------------------------------------------------------

    def _car_free(self, car: Any, start: date, end: date) -> bool:
        period = (start.isoformat(), end.isoformat())
        if any(_overlaps(period, busy) for busy in car.busy):
            return False
        mine = self._booked("reservecar", pickup_location=car.location, car_name=car.name, car_type=car.car_type)
        return not any(_overlaps(period, (b["start_date"], b["end_date"])) for b in mine)

    def _open_at(self, location_name: str, time: str) -> bool:
        location = next(p for p in self.world.pickup_locations if p.name == location_name)
        return location.opens <= time <= location.closes

    def _rents_getcarsavailable(self, v: Values) -> Values:
        city = self._city(v["city"], "getcarsavailable")
        _stay(v["start_date"], v["end_date"], "start_date", "end_date")
        for car in self.world.cars:
            if (
                car.city == city.name
                and _same(car.car_type, v["car_type"])
                and self._open_at(car.location, v["pickup_time"])
                and self._car_free(car, v["start_date"], v["end_date"])
            ):
                return {
                    "car_type": car.car_type,
                    "car_name": car.name,
                    "pickup_location": car.location,
                    "start_date": v["start_date"],
                    "pickup_time": v["pickup_time"],
                    "city": city.name,
                    "end_date": v["end_date"],
                    "price_per_day": car.price_per_day,
                }
        raise AppError(f"getcarsavailable: no car is free for {_filters(v)}")

    def _rents_reservecar(self, v: Values) -> Values:
        location = next((p for p in self.world.pickup_locations if fold(p.name) == fold(v["pickup_location"])), None)
        if location is None:
            raise AppError(f"reservecar: there is no pickup location called {v['pickup_location']!r}")
        car_type = _choice("car_type", v["car_type"], self.world.car_types())
        _stay(v["start_date"], v["end_date"], "start_date", "end_date")
        if not location.opens <= v["pickup_time"] <= location.closes:
            raise AppError(f"reservecar: {location.name} is open {location.opens}-{location.closes}")
        cars = [c for c in self.world.cars if c.location == location.name and c.car_type == car_type]
        if not cars:
            raise AppError(f"reservecar: {location.name} has no {car_type} cars")
        car = next((c for c in cars if self._car_free(c, v["start_date"], v["end_date"])), None)
        if car is None:
            raise AppError(f"reservecar: every {car_type} car at {location.name} is rented out then")
        return {
            "car_type": car_type,
            "car_name": car.name,
            "pickup_location": location.name,
            "start_date": v["start_date"],
            "pickup_time": v["pickup_time"],
            "end_date": v["end_date"],
            "price_per_day": car.price_per_day,
            "add_insurance": v["add_insurance"],
        }

    def _rents_getride(self, v: Values) -> Values:
        ride_type = _choice("ride_type", v["ride_type"], RIDE_TYPES)
        seats = _count("number_of_seats", v["number_of_seats"], MAX_RIDE_SEATS[ride_type])
        if fold(v["destination"]) not in self.world.places():
            raise AppError(f"getride: no place called {v['destination']!r} is known (give an address or a place)")
        # Distance and traffic are a property of the destination; the ride type scales the fare.
        r = rng("ride", fold(v["destination"]))
        base, wait = r.uniform(8, 40), r.randint(2, 14)
        factor = {"Pool": 0.7, "Regular": 1.0, "Luxury": 1.9}[ride_type]
        return {
            "destination": v["destination"],
            "ride_type": ride_type,
            "ride_fare": round(base * factor + (seats - 1) * 1.5, 2),
            "wait_time": wait + (3 if ride_type == "Pool" else 0),
            "number_of_seats": seats,
        }

    # -- Buses and Trains -------------------------------------------------------------------------------------

    def _route(self, mode: str, origin: str, destination: str, api: str) -> Any:
        a, b = self._city(origin, api), self._city(destination, api)
        route = next((r for r in self.world.routes if (r.mode, r.from_city, r.to_city) == (mode, a.name, b.name)), None)
        if route is None:
            raise AppError(f"{api}: no {mode} runs from {a.name} to {b.name}")
        return route

    def _ride_out(self, route: Any, day: date, time: str | None, category: str | None, api: str) -> Any:
        """The first departure of a route on a day (at ``time`` if given) that is not sold out."""
        wanted = [
            d
            for d in route.departures
            if (time is None or d.time == time) and (category is None or d.category == category)
        ]
        if time is not None and not wanted:
            times = ", ".join(d.time for d in route.departures)
            raise AppError(
                f"{api}: nothing leaves {route.from_city} for {route.to_city} at {time} (departures: {times})"
            )
        free = [d for d in wanted if day.isoformat() not in d.sold_out]
        if not free:
            if wanted:
                raise AppError(
                    f"{api}: the {route.mode} from {route.from_city} to {route.to_city} is sold out on {day}"
                )
            raise AppError(f"{api}: no {category} {route.mode} from {route.from_city} to {route.to_city}")
        return free[0]

    def _bus(self, v: Values, time: str | None, api: str) -> Values:
        route = self._route("bus", v["from_city"], v["to_city"], api)
        passengers = _count("num_passengers", v["num_passengers"])
        category = None if v.get("category") is None else _choice("category", v["category"], BUS_CATEGORIES)
        departure = self._ride_out(route, v["departure_date"], time, category, api)
        return {
            "from_city": route.from_city,
            "to_city": route.to_city,
            "from_station": route.from_station,
            "to_station": route.to_station,
            "departure_date": v["departure_date"],
            "departure_time": departure.time,
            "price": departure.fare * passengers,
            "num_passengers": passengers,
            "category": departure.category,
        }

    def _buses_findbus(self, v: Values) -> Values:
        return self._bus(v, None, "findbus")

    def _buses_buybusticket(self, v: Values) -> Values:
        found = self._bus({**v, "category": None}, v["departure_time"], "buybusticket")
        luggage = v["additional_luggage"]
        return {**found, "price": found["price"] + (LUGGAGE_FEE if luggage else 0), "additional_luggage": luggage}

    def _train(self, v: Values, time: str | None, protection: bool, api: str) -> Values:
        route = self._route("train", v["from"], v["to"], api)
        adults = _count("number_of_adults", v["number_of_adults"])
        travel_class = _choice("class", v["class"], TRAIN_CLASSES)
        departure = self._ride_out(route, v["date_of_journey"], time, None, api)
        fare = round(departure.fare * TRAIN_CLASS_FACTOR[travel_class])
        return {
            "from": route.from_city,
            "to": route.to_city,
            "from_station": route.from_station,
            "to_station": route.to_station,
            "date_of_journey": v["date_of_journey"],
            "journey_start_time": departure.time,
            "total": (fare + (TRIP_PROTECTION_FEE if protection else 0)) * adults,
            "number_of_adults": adults,
            "class": travel_class,
            "trip_protection": protection,
        }

    def _trains_findtrains(self, v: Values) -> Values:
        return self._train(v, None, False, "findtrains")

    def _trains_gettraintickets(self, v: Values) -> Values:
        return self._train(v, v["journey_start_time"], v["trip_protection"], "gettraintickets")

    # -- Events -----------------------------------------------------------------------------------------------

    def _tickets_left(self, event: Any) -> int:
        sold = self._booked("buyeventtickets", event_name=event.name, city=event.city, date=event.date)
        return event.tickets_left - sum(int(b["number_of_tickets"]) for b in sold)

    @staticmethod
    def _event(event: Any) -> Values:
        return {
            "event_name": event.name,
            "date": event.date,
            "time": event.time,
            "price_per_ticket": event.price,
            "city": event.city,
            "venue": event.venue,
            "venue_address": event.venue_address,
        }

    def _events_findevents(self, v: Values) -> Values:
        city = self._city(v["city"], "findevents")
        event_type = _choice("event_type", EVENT_ALIASES.get(fold(v["event_type"]), v["event_type"]), EVENT_TYPES)
        day = None if v["date"] is None else v["date"].isoformat()
        for event in self.world.events:
            if (
                event.city == city.name
                and event.event_type == event_type
                and (day is None or event.date == day)
                and self._tickets_left(event) > 0  # sold-out events are not offered
            ):
                return {**self._event(event), "event_type": event_type}
        raise AppError(f"findevents: no event with tickets matched {_filters(v)}")

    def _events_buyeventtickets(self, v: Values) -> Values:
        city = self._city(v["city"], "buyeventtickets")
        count = _count("number_of_tickets", v["number_of_tickets"])
        named = [e for e in self.world.events if e.city == city.name and fold(e.name) == fold(v["event_name"])]
        if not named:
            raise AppError(f"buyeventtickets: there is no event {v['event_name']!r} in {city.name}")
        event = next((e for e in named if e.date == v["date"].isoformat()), None)
        if event is None:
            dates = ", ".join(e.date for e in named)
            raise AppError(f"buyeventtickets: {named[0].name} is not on {v['date']} (it is on {dates})")
        left = self._tickets_left(event)
        if left <= 0:
            raise AppError(f"buyeventtickets: {event.name} on {event.date} is sold out")
        if count > left:
            raise AppError(f"buyeventtickets: only {left} tickets are left for {event.name} on {event.date}")
        return {**self._event(event), "number_of_tickets": count}

    # -- Flights ----------------------------------------------------------------------------------------------

    def _legs(self, v: Values, origin: str, destination: str, api: str) -> list[Any]:
        a, b = self.world.airport(origin), self.world.airport(destination)
        for text, city in ((origin, a), (destination, b)):
            if city is None:
                raise AppError(f"{api}: no airport or city called {text!r}")
        assert a is not None and b is not None
        if a == b:
            raise AppError(f"{api}: origin and destination are both {a.name}")
        return [f for f in self.world.flights_from(a.name, b.name) if _same(f.airline, v["airlines"])]

    def _fare(self, flight: Any, day: date, seating: str, tickets: int) -> float:
        return round(flight.fare * fare_factor(day.isoformat(), flight) * SEATING_FACTOR[seating]) * tickets

    def _flight_common(self, v: Values) -> tuple[str, int]:
        seating = _choice("seating_class", v["seating_class"], SEATING_CLASSES)
        return seating, _count("number_of_tickets", v["number_of_tickets"])

    def _flights_searchonewayflight(self, v: Values) -> Values:
        seating, tickets = self._flight_common(v)
        legs = self._legs(v, v["origin_airport"], v["destination_airport"], "searchonewayflight")
        if not legs:
            raise AppError(f"searchonewayflight: no flight matched {_filters(v)}")
        out = legs[0]
        return {
            "number_of_tickets": tickets,
            "seating_class": seating,
            "origin_airport": self._airport_name(out.origin),
            "destination_airport": self._airport_name(out.destination),
            "departure_date": v["departure_date"],
            "is_nonstop": out.nonstop,
            "outbound_departure_time": out.departs,
            "outbound_arrival_time": out.arrives,
            "price": self._fare(out, v["departure_date"], seating, tickets),
            "airlines": out.airline,
        }

    def _flights_searchroundtripflights(self, v: Values) -> Values:
        seating, tickets = self._flight_common(v)
        if v["return_date"] < v["departure_date"]:
            raise AppError(f"return_date ({v['return_date']}) is before departure_date ({v['departure_date']})")
        outs = self._legs(v, v["origin_airport"], v["destination_airport"], "searchroundtripflights")
        backs = self._legs(v, v["destination_airport"], v["origin_airport"], "searchroundtripflights")
        for out in outs:
            back = next((f for f in backs if f.airline == out.airline), None)
            if back is None or (v["return_date"] == v["departure_date"] and back.departs <= out.arrives):
                continue
            price = self._fare(out, v["departure_date"], seating, tickets)
            price += self._fare(back, v["return_date"], seating, tickets)
            return {
                "number_of_tickets": tickets,
                "seating_class": seating,
                "origin_airport": self._airport_name(out.origin),
                "destination_airport": self._airport_name(out.destination),
                "departure_date": v["departure_date"],
                "return_date": v["return_date"],
                "is_nonstop": out.nonstop and back.nonstop,
                "outbound_departure_time": out.departs,
                "outbound_arrival_time": out.arrives,
                "inbound_departure_time": back.departs,
                "inbound_arrival_time": back.arrives,
                "price": price,
                "airlines": out.airline,
            }
        same_day = " (the flight back must leave after the flight out lands)" if outs and backs else ""
        if v["return_date"] != v["departure_date"]:
            same_day = ""
        raise AppError(f"searchroundtripflights: no return trip matched {_filters(v)}{same_day}")

    def _airport_name(self, city_name: str) -> str:
        return next(c.airport_name for c in self.world.cities if c.name == city_name)

    # -- Homes ------------------------------------------------------------------------------------------------

    @staticmethod
    def _home(home: Any) -> Values:
        return {
            "address": home.address,
            "property_name": home.name,
            "phone_number": home.phone,
            "has_garage": home.garage,
            "in_unit_laundry": home.laundry,
            "price": home.price,
            "number_of_beds": home.beds,
            "number_of_baths": home.baths,
        }

    def _homes_findhomebyarea(self, v: Values) -> Values:
        city = self._city(v["area"], "findhomebyarea")
        intent = _choice("intent", v["intent"], HOME_INTENTS)
        for home in self.world.properties:
            if (
                home.city == city.name
                and home.intent == intent
                and home.beds == v["number_of_beds"]
                and home.baths == v["number_of_baths"]
                and (v["has_garage"] is None or home.garage == v["has_garage"])
                and (v["in_unit_laundry"] is None or home.laundry == v["in_unit_laundry"])
            ):
                return {**self._home(home), "intent": intent, "area": city.name}
        raise AppError(f"findhomebyarea: no home matched {_filters(v)}")

    def _homes_schedulevisit(self, v: Values) -> Values:
        home = next((h for h in self.world.properties if fold(h.name) == fold(v["property_name"])), None)
        if home is None:
            raise AppError(f"schedulevisit: there is no property called {v['property_name']!r}")
        day = v["visit_date"].isoformat()
        if day in home.closed_dates:
            raise AppError(f"schedulevisit: {home.name} takes no visits on {day}")
        if self._booked("schedulevisit", property_name=home.name, visit_date=day):
            raise AppError(f"schedulevisit: a visit to {home.name} on {day} is already scheduled")
        return {**self._home(home), "visit_date": v["visit_date"]}

    # -- Media (streaming) ------------------------------------------------------------------------------------

    def _media_findmovies(self, v: Values) -> Values:
        for film in self.world.films:
            if (
                not film.in_cinemas
                and _same(film.genre, v["genre"])
                and (v["starring"] is None or any(_same(actor, v["starring"]) for actor in film.cast))
            ):
                star = film.cast[0] if v["starring"] is None else v["starring"]
                actor = next(a for a in film.cast if fold(a) == fold(star))
                return {"title": film.title, "genre": film.genre, "subtitle_language": "English", "starring": actor}
        raise AppError(f"findmovies: no movie to stream matched {_filters(v)}")

    def _media_playmovie(self, v: Values) -> Values:
        film = self.world.film(v["title"])
        if film is None or film.in_cinemas:
            raise AppError(f"playmovie: {v['title']!r} is not in the streaming catalogue")
        language = next((lang for lang in film.subtitles if fold(lang) == fold(v["subtitle_language"])), None)
        if language is None:
            raise AppError(f"playmovie: {film.title} has subtitles in {', '.join(film.subtitles)} only")
        return {"title": film.title, "genre": film.genre, "subtitle_language": language, "starring": film.cast[0]}

    # -- Movies (cinemas) -------------------------------------------------------------------------------------

    def _theater_address(self, name: str) -> str:
        return next(t.address for t in self.world.theaters if t.name == name)

    def _showing(self, showing: Any) -> Values:
        film = self.world.film(showing.movie)
        assert film is not None
        return {
            "price": showing.price,
            "show_type": showing.show_type,
            "theater_name": showing.theater,
            "genre": film.genre,
            "street_address": self._theater_address(showing.theater),
            "location": showing.city,
            "movie_name": film.title,
        }

    def _show_type(self, value: str | None) -> str | None:
        return None if value is None else _choice("show_type", value, SHOW_TYPES)

    def _movies_findmovies(self, v: Values) -> Values:
        city = self._city(v["location"], "findmovies")
        show_type = self._show_type(v["show_type"])
        for showing in self.world.showings:
            film = self.world.film(showing.movie)
            assert film is not None
            if (
                showing.city == city.name
                and _same(showing.theater, v["theater_name"])
                and _same(film.genre, v["genre"])
                and _same(showing.show_type, show_type)
            ):
                return self._showing(showing)
        raise AppError(f"findmovies: nothing showing matched {_filters(v)}")

    def _movies_gettimesformovie(self, v: Values) -> Values:
        city = self._city(v["location"], "gettimesformovie")
        show_type = self._show_type(v["show_type"])
        day = v["show_date"].isoformat()
        for showing in self.world.showings:
            if (
                showing.city == city.name
                and fold(showing.movie) == fold(v["movie_name"])
                and _same(showing.theater, v["theater_name"])
                and _same(showing.show_type, show_type)
                and day not in showing.sold_out
            ):
                return {**self._showing(showing), "show_time": showing.time, "show_date": v["show_date"]}
        raise AppError(f"gettimesformovie: no showing with seats matched {_filters(v)}")

    def _movies_buymovietickets(self, v: Values) -> Values:
        city = self._city(v["location"], "buymovietickets")
        show_type = self._show_type(v["show_type"])
        tickets = _count("number_of_tickets", v["number_of_tickets"])
        day = v["show_date"].isoformat()
        wanted = [
            s
            for s in self.world.showings
            if s.city == city.name
            and fold(s.movie) == fold(v["movie_name"])
            and s.show_type == show_type
            and s.time == v["show_time"]
        ]
        if not wanted:
            raise AppError(
                f"buymovietickets: {v['movie_name']!r} is not shown in {show_type} at {v['show_time']} in {city.name}"
            )
        showing = next((s for s in wanted if day not in s.sold_out), None)
        if showing is None:
            raise AppError(f"buymovietickets: the {v['show_time']} showing of {wanted[0].movie} on {day} is sold out")
        return {
            **self._showing(showing),
            "price": showing.price * tickets,
            "number_of_tickets": tickets,
            "show_time": showing.time,
            "show_date": v["show_date"],
        }

    def _movies_reviewmovies(self, v: Values) -> Values:
        for film in self.world.films:
            if (
                _same(film.director, v["directed_by"])
                and _same(film.genre, v["genre"])
                and (v["cast"] is None or any(_same(actor, v["cast"]) for actor in film.cast))
            ):
                actor = next(a for a in film.cast if v["cast"] is None or fold(a) == fold(v["cast"]))
                return {
                    "movie_title": film.title,
                    "genre": film.genre,
                    "percent_rating": film.percent_rating,
                    "cast": actor,
                    "directed_by": film.director,
                }
        raise AppError(f"reviewmovies: no movie matched {_filters(v)}")

    # -- Music ------------------------------------------------------------------------------------------------

    def _songs(self, v: Values) -> list[Any]:
        return [
            s
            for s in self.world.songs
            if _same(s.artist, v.get("artist"))
            and _same(s.album, v.get("album"))
            and _same(s.genre, v.get("genre"))
            and _same(s.year, v.get("year"))
            and _same(s.track, v.get("track"))
        ]

    @staticmethod
    def _song(song: Any) -> Values:
        return {"track": song.track, "artist": song.artist, "album": song.album, "genre": song.genre, "year": song.year}

    def _music_lookupmusic(self, v: Values) -> Values:
        found = self._songs(v)
        if not found:
            raise AppError(f"lookupmusic: no song matched {_filters(v)}")
        return self._song(found[0])

    def _music_playmedia(self, v: Values) -> Values:
        device = _choice("device", v["device"], DEVICES)
        found = self._songs(v)
        if not found:
            raise AppError(f"playmedia: no song matched {_filters({k: x for k, x in v.items() if k != 'device'})}")
        return {**self._song(found[0]), "device": device}

    # -- Payment ----------------------------------------------------------------------------------------------

    def _contact(self, name: str, api: str) -> str:
        found = next((c for c in self.world.contacts if fold(c) == fold(name)), None)
        if found is None:
            raise AppError(f"{api}: {name!r} is not among your contacts ({', '.join(self.world.contacts)})")
        return found

    @staticmethod
    def _amount(value: float, api: str) -> float:
        if not 0.01 <= value <= 10_000:
            raise AppError(f"{api}: amount={value} must be from 0.01 to 10000")
        return value

    def _payment_requestpayment(self, v: Values) -> Values:
        return {
            "amount": self._amount(v["amount"], "requestpayment"),
            "receiver": self._contact(v["receiver"], "requestpayment"),
            "private_visibility": v["private_visibility"],
        }

    def _payment_makepayment(self, v: Values) -> Values:
        amount = self._amount(v["amount"], "makepayment")
        receiver = self._contact(v["receiver"], "makepayment")
        method = _choice("payment_method", v["payment_method"], [m for m, _ in self.world.payment_methods])
        balance = self.state["balances"][method]
        if amount > balance:
            raise AppError(f"makepayment: {method} has only {money(balance)} left")
        self.state["balances"][method] = round(balance - amount, 2)
        return {
            "payment_method": method,
            "amount": amount,
            "receiver": receiver,
            "private_visibility": v["private_visibility"],
        }

    # -- Restaurants ------------------------------------------------------------------------------------------

    @staticmethod
    def _restaurant(place: Any) -> Values:
        return {
            "restaurant_name": place.name,
            "has_seating_outdoors": place.outdoor,
            "has_vegetarian_options": place.vegetarian,
            "phone_number": place.phone,
            "rating": f"{place.rating:.1f}",
            "address": place.address,
            "price_range": place.price_range,
            "location": place.city,
            "category": place.category,
        }

    def _restaurants_findrestaurants(self, v: Values) -> Values:
        city = self._city(v["location"], "findrestaurants")
        for place in self.world.restaurants:
            if (
                place.city == city.name
                and _same(place.category, v["category"])
                and _same(place.price_range, v["price_range"])
                and (v["has_vegetarian_options"] is None or place.vegetarian == v["has_vegetarian_options"])
                and (v["has_seating_outdoors"] is None or place.outdoor == v["has_seating_outdoors"])
            ):
                return self._restaurant(place)
        raise AppError(f"findrestaurants: no restaurant matched {_filters(v)}")

    def _restaurants_reserverestaurant(self, v: Values) -> Values:
        city = self._city(v["location"], "reserverestaurant")
        seats = _count("number_of_seats", v["number_of_seats"])
        place = next(
            (p for p in self.world.restaurants if p.city == city.name and fold(p.name) == fold(v["restaurant_name"])),
            None,
        )
        if place is None:
            raise AppError(f"reserverestaurant: there is no restaurant {v['restaurant_name']!r} in {city.name}")
        time, day = v["time"], v["date"].isoformat()
        last_table = _minus_half_hour(place.closes)
        if not place.opens <= time <= last_table:
            raise AppError(f"reserverestaurant: {place.name} takes tables from {place.opens} to {last_table}")
        if (day, time) in place.full_slots:
            raise AppError(f"reserverestaurant: {place.name} is fully booked on {day} at {time}")
        return {**self._restaurant(place), "date": v["date"], "time": time, "number_of_seats": seats}

    # -- Services ---------------------------------------------------------------------------------------------

    def _appointment(self, provider: Any, v: Values, api: str, key: str, hours: tuple[str, str]) -> None:
        day, time = v["appointment_date"].isoformat(), v["appointment_time"]
        if not hours[0] <= time <= hours[1]:
            raise AppError(f"{api}: {provider.name} sees people from {hours[0]} to {hours[1]}")
        if (day, time) in provider.booked or self._booked(
            api, **{key: provider.name, "appointment_date": day, "appointment_time": time}
        ):
            raise AppError(f"{api}: {provider.name} is already booked on {day} at {time}")

    @staticmethod
    def _stylist(s: Any) -> Values:
        return {
            "stylist_name": s.name,
            "phone_number": s.phone,
            "average_rating": f"{s.rating:.1f}",
            "is_unisex": s.unisex,
            "street_address": s.address,
        }

    def _services_find_stylist_provider(self, v: Values) -> Values:
        city = self._city(v["city"], "find_stylist_provider")
        for s in self.world.stylists:
            if s.city == city.name and (v["is_unisex"] is None or s.unisex == v["is_unisex"]):
                return {**self._stylist(s), "city": city.name}
        raise AppError(f"find_stylist_provider: no stylist matched {_filters(v)}")

    def _services_book_stylist_appointment(self, v: Values) -> Values:
        s = next((x for x in self.world.stylists if fold(x.name) == fold(v["stylist_name"])), None)
        if s is None:
            raise AppError(f"book_stylist_appointment: there is no stylist called {v['stylist_name']!r}")
        self._appointment(s, v, "book_stylist_appointment", "stylist_name", ("09:00", "17:30"))
        return {
            **self._stylist(s),
            "appointment_date": v["appointment_date"],
            "appointment_time": v["appointment_time"],
        }

    def _services_find_therapist_provider(self, v: Values) -> Values:
        city = self._city(v["city"], "find_therapist_provider")
        kind = _choice("type", v["type"], THERAPIST_TYPES)
        for t in self.world.therapists:
            if t.city == city.name and t.kind == kind:
                return {
                    "therapist_name": t.name,
                    "phone_number": t.phone,
                    "address": t.address,
                    "city": city.name,
                    "type": kind,
                }
        raise AppError(f"find_therapist_provider: no therapist matched {_filters(v)}")

    def _services_book_therapist_appointment(self, v: Values) -> Values:
        t = next((x for x in self.world.therapists if fold(x.name) == fold(v["therapist_name"])), None)
        if t is None:
            raise AppError(f"book_therapist_appointment: there is no therapist called {v['therapist_name']!r}")
        self._appointment(t, v, "book_therapist_appointment", "therapist_name", ("09:00", "17:30"))
        return {
            "therapist_name": t.name,
            "phone_number": t.phone,
            "address": t.address,
            "appointment_date": v["appointment_date"],
            "appointment_time": v["appointment_time"],
        }

    # -- Travel and Weather -----------------------------------------------------------------------------------

    def _travel_findattractions(self, v: Values) -> Values:
        city = self._city(v["location"], "findattractions")
        for a in self.world.attractions:
            if (
                a.city == city.name
                and _same(a.category, v["category"])
                and (v["free_entry"] is None or a.free_entry == v["free_entry"])
                and (v["good_for_kids"] is None or a.good_for_kids == v["good_for_kids"])
            ):
                return {
                    "location": city.name,
                    "attraction_name": a.name,
                    "category": a.category,
                    "phone_number": a.phone,
                    "free_entry": a.free_entry,
                    "good_for_kids": a.good_for_kids,
                }
        raise AppError(f"findattractions: no attraction matched {_filters(v)}")

    def _weather_getweather(self, v: Values) -> Values:
        city = self._city(v["city"], "getweather")
        day = v["date"].isoformat()
        f = next(f for f in self.world.forecasts if f.city == city.name and f.date == day)
        return {
            "precipitation": f.precipitation,
            "humidity": f.humidity,
            "wind": f.wind,
            "temperature": f.temperature,
            "city": city.name,
            "date": v["date"],
        }


def _minus_half_hour(time: str) -> str:
    hours, minutes = map(int, time.split(":"))
    total = hours * 60 + minutes - 30
    return f"{total // 60:02d}:{total % 60:02d}"


def world_summary() -> dict[str, Any]:
    """The world's vocabularies and counts (``Apps.world.summary()``)."""
    return Apps.world.summary()
