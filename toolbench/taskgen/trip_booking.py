"""Trip Booking world (route schedules and hotels) and task sets.

120 test tasks (40 per booking type: trip tickets, hotels, both) and 11 demonstrations. Every
task is built from the database so that its search finds at least one option for each part.
``train`` (1,000) uses the same eight sentence frames with more phrasings and date formats;
``unseen`` (100) is written in a grammar of its own (``trip_booking_unseen``). Every record names
its frame in ``template``.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import math
from collections.abc import Iterator
from dataclasses import fields
from functools import cache
from typing import Any

from toolbench.core.geo import distance_km
from toolbench.core.program import parse_program
from toolbench.envs.trip_booking import SHARED_SETTERS
from toolbench.mock_services.trip_booking import CONSTRUCTORS, FUNCTIONS, ROOM_TYPES, TravelDB, TripBookingAPI
from toolbench.mock_services.trip_booking.travel import City, Room, Route, load_cities
from toolbench.taskgen import (
    SHIPPED_SEED,
    SHIPPED_SIZES,
    Files,
    aligner,
    fresh,
    generator,
    jsonl,
    rng_for,
    split_maker,
    spread,
)
from toolbench.taskgen import trip_booking_unseen as says

OPERATORS = {
    "flight": [("Skyway Air", "SW"), ("Pioneer Airlines", "PA"), ("Bluejay Air", "BJ")],
    "train": [("Continental Rail", "CR"), ("Coastline Rail", "CL")],
    "bus": [("Greyline Bus", "GL"), ("RoadStar Coach", "RS")],
    "cruise": [("Harborlight Cruises", "HC"), ("Tidewater Cruise Line", "TW")],
}
HOTEL_NAMES = [
    "Grand Hotel",
    "Harbor View Inn",
    "Maple Suites",
    "Riverside Lodge",
    "Summit Plaza",
    "Parkside Inn",
    "Union Station Hotel",
    "Copper Key Hotel",
    "Sunset Motor Lodge",
    "The Ambassador",
    "Oak & Ivy Inn",
    "Skyline Tower Hotel",
    "Cedar Court",
    "The Lantern House",
    "Bayfront Suites",
]
STAR_PRICE = {2: 70, 3: 105, 4: 165, 5: 290}
ROOM_FACTOR = {"Double": 0.9, "Queen Bed": 1.0, "King Bed": 1.15, "Luxury": 1.8}
BIG_CITIES = {
    "New York",
    "Boston",
    "Washington",
    "San Francisco",
    "Los Angeles",
    "Seattle",
    "Chicago",
    "Miami",
    "Honolulu",
    "San Diego",
}
FIRST_DAY, LAST_DAY = dt.date(2024, 3, 1), dt.date(2024, 11, 30)
#: Trip Booking has no activities, products or tools to hold out: ``unseen`` holds out its templates.
HELD_OUT_KEYS: tuple[str, ...] = ()
#: Train and unseen records carry ``difficulty``: how many criteria of its own the task sets.
HAS_DIFFICULTY = True
BOOKING_KINDS = ("trip tickets", "hotels", "both")


# ------------------------------------------------------------------------------ world
def _services(a: City, b: City, km: float) -> list[str]:
    modes = []
    if a.airport and b.airport and km > 250:
        modes.append("flight")
    if a.rail and b.rail and km < 1500 and "pacific" not in (a.region, b.region):
        modes.append("train")
    if km < 1100 and "pacific" not in (a.region, b.region):
        modes.append("bus")
    oceans = {"east": "atlantic", "south": "atlantic", "west": "pacific", "pacific": "pacific"}
    if a.port and b.port and oceans.get(a.region) == oceans.get(b.region) and km > 150:
        modes.append("cruise")
    return modes


def generate_routes(cities: tuple[City, ...]) -> list[Route]:
    rng = rng_for("trip_booking", "routes")
    routes: list[Route] = []
    for a in cities:
        for b in cities:
            if a is b:
                continue
            km = distance_km(a.lat, a.lon, b.lat, b.lon)
            for mode in _services(a, b, km):
                daily = {
                    "flight": rng.randint(1, 3),
                    "train": rng.randint(1, 3),
                    "bus": rng.randint(1, 3),
                    "cruise": 1,
                }[mode]
                for _ in range(daily):
                    operator, code = rng.choice(OPERATORS[mode])
                    if mode == "cruise":  # one sailing a week
                        sail = rng.randrange(7)
                        weekdays = "".join("1" if day == sail else "0" for day in range(7))
                    else:
                        weekdays = "1111111"
                    minutes = {
                        "flight": 40 + km / 750 * 60,
                        "train": km / 90 * 60,
                        "bus": km / 70 * 60,
                        "cruise": km / 30 * 60,
                    }[mode]
                    price = {
                        "flight": 49 + 0.08 * km,
                        "train": 15 + 0.11 * km,
                        "bus": 8 + 0.05 * km,
                        "cruise": 180 + 0.15 * km,
                    }[mode] * rng.uniform(0.85, 1.2)
                    capacity = {
                        "flight": rng.randrange(120, 221, 10),
                        "train": rng.randrange(200, 401, 20),
                        "bus": rng.randrange(45, 61, 5),
                        "cruise": rng.randrange(800, 3001, 100),
                    }[mode]
                    routes.append(
                        Route(
                            id=f"R{len(routes) + 1:05d}",
                            mode=mode,
                            operator=operator,
                            number=f"{code} {rng.randint(100, 9899)}",
                            origin=a.name,
                            destination=b.name,
                            departure=f"{rng.randint(5, 21):02d}:{rng.randrange(0, 60, 5):02d}",
                            duration_min=int(round(minutes / 5) * 5) or 5,
                            base_price=round(price, 2),
                            capacity=capacity,
                            weekdays=weekdays,
                        )
                    )
    return routes


def generate_rooms(cities: tuple[City, ...]) -> list[Room]:
    rng = rng_for("trip_booking", "hotels")
    rooms: list[Room] = []
    for city in cities:
        city_factor = 1.4 if city.name in BIG_CITIES else 1.0
        for index, name in enumerate(rng.sample(HOTEL_NAMES, rng.randint(3, 7))):
            stars = rng.choice([2, 3, 3, 4, 4, 5])
            offered = [t for t in ROOM_TYPES if t != "Luxury" or stars >= 4]
            hotel_id = f"{city.name[:3].upper()}{index + 1:02d}-{len(rooms) + 1:04d}"
            for room_type in rng.sample(offered, rng.randint(2, len(offered))):
                price = STAR_PRICE[stars] * city_factor * ROOM_FACTOR[room_type] * rng.uniform(0.85, 1.2)
                rooms.append(
                    Room(
                        hotel_id,
                        f"{name} {city.name}",
                        city.name,
                        stars,
                        room_type,
                        round(price, 2),
                        rng.randint(6, 40),
                    )
                )
    return rooms


def _csv(rows: list[Any]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([f.name for f in fields(rows[0])])
    for row in rows:
        writer.writerow([getattr(row, f.name) for f in fields(row)])
    return buffer.getvalue()


# ------------------------------------------------------------------------------ tasks
def _date_text(rng: Any, day: dt.date, variety: bool = False) -> str:
    formats = [
        f"{day:%Y/%m/%d}",
        f"{day:%B} {day.day}, {day.year}",
        f"{day:%b} {day.day}, {day.year}",
        f"{day.month}/{day.day}/{day.year}",
    ]
    # train's extra format: ISO dates (test and demo keep their draws: the list only grows for train)
    return rng.choice(formats + ([f"{day:%Y-%m-%d}"] if variety else []))


def _date_code(day: dt.date) -> str:
    return f"Date({day.month}, {day.day}, {day.year})"


def _chosen(rng: Any, kind: str, frames: list[str]) -> tuple[str, str]:
    """One of the seen ``frames`` and its template id ("tb-hotels-2")."""
    frame = rng.choice(frames)
    return frame, f"tb-{kind}-{frames.index(frame)}"


class _TaskMaker:
    """Writes tasks in the seen templates; ``variety`` (train) adds phrasings of the same criteria."""

    def __init__(self, split: str, db: TravelDB, rng: Any = None, variety: bool = False):
        self.rng = rng or rng_for("trip_booking", "tasks", split)
        self.db = db
        self.split = split
        self.variety = variety

    def when(self, day: dt.date) -> str:
        return _date_text(self.rng, day, self.variety)

    def day(self) -> dt.date:
        return FIRST_DAY + dt.timedelta(days=self.rng.randrange((LAST_DAY - FIRST_DAY).days))

    def place(self, variable: str, city: str, setter: str) -> list[str]:
        """A location setter, through a variable or inline, as the benchmark's programs vary."""
        if self.rng.random() < 0.5:
            return [f'{variable} = Loc("{city}")', f"API.{setter}({variable})"]
        return [f'API.{setter}(Loc("{city}"))']

    def date(self, variable: str, day: dt.date, setter: str) -> list[str]:
        if self.rng.random() < 0.5:
            return [f"{variable} = {_date_code(day)}", f"API.{setter}({variable})"]
        return [f"API.{setter}({_date_code(day)})"]

    def trip(self, want_return: bool) -> dict[str, Any] | None:
        rng = self.rng
        mode = rng.choice(["flight", "flight", "train", "bus", "cruise"])  # flights dominate the schedule
        route = rng.choice([r for r in self.db.routes if r.mode == mode])
        day = self.day()
        while not route.runs_on(day):  # cruises sail once a week
            day += dt.timedelta(days=1)
        adults, children = rng.randint(1, 5), rng.choice([0, 0, 1, 2, 3])
        options = [
            d
            for d in self.db.departures(route.origin, route.destination, route.mode, day)
            if d.seats >= adults + children
        ]
        if not options:
            return None
        back = day + dt.timedelta(days=rng.randint(2, 12))
        cheapest = options[0].price  # a price limit must leave an option on every leg
        if want_return:
            reverse = [
                r
                for r in self.db.routes
                if (r.origin, r.destination, r.mode) == (route.destination, route.origin, route.mode)
            ]
            for _ in range(7):  # the next day a ship or train sails back
                if any(r.runs_on(back) for r in reverse):
                    break
                back += dt.timedelta(days=1)
            returns = [
                d
                for d in self.db.departures(route.destination, route.origin, route.mode, back)
                if d.seats >= adults + children
            ]
            if not returns:
                return None
            cheapest = max(cheapest, returns[0].price)
        return {
            "route": route,
            "day": day,
            "back": back if want_return else None,
            "adults": adults,
            "children": children,
            "cheapest": cheapest,
        }

    def stay(
        self, city: str | None = None, checkin: dt.date | None = None, nights: int | None = None
    ) -> dict[str, Any] | None:
        rng = self.rng
        city = city or rng.choice(self.db.cities).name
        checkin = checkin or self.day()
        nights = nights or rng.randint(1, 7)
        rooms = rng.choice([1, 1, 1, 2, 3])
        stays = [s for s in self.db.stays(city, checkin, checkin + dt.timedelta(days=nights)) if s.rooms_left >= rooms]
        if not stays:
            return None
        pick = rng.choice(stays)
        return {
            "city": city,
            "checkin": checkin,
            "checkout": checkin + dt.timedelta(days=nights),
            "nights": nights,
            "rooms": rooms,
            "room_type": pick.room.room_type if rng.random() < 0.5 else None,
            "price": pick.nightly_price,
        }

    def trip_tickets(self) -> tuple[str, list[str], str] | None:
        rng = self.rng
        t = self.trip(want_return=rng.random() < 0.35)
        if t is None:
            return None
        r, mode = t["route"], t["route"].mode
        lines = ['API.select_booking_type("trip tickets")', f'API.select_transportation("{mode}")']
        people = [f"{t['adults']} adult{'s' if t['adults'] > 1 else ''}"]
        setters = [f"API.set_num_adults({t['adults']})"]
        if t["children"]:
            people.append(f"{t['children']} child{'ren' if t['children'] > 1 else ''}")
            setters.append(f"API.set_num_children({t['children']})")
        lines += setters + self.place("location_from", r.origin, "set_origin")
        lines += self.place("location_to", r.destination, "set_destination")
        lines += self.date("departure_date", t["day"], "set_departure_date")
        when = f"on {self.when(t['day'])}"
        if t["back"]:
            lines += self.date("return_date", t["back"], "set_return_date")
            when += f", coming back on {self.when(t['back'])}"
        budget = ""
        if rng.random() < 0.4:
            limit = int(math.ceil(t["cheapest"] * rng.uniform(1.0, 1.5) / 10) * 10)
            lines.append(f"API.set_max_ticket_price({limit})")
            budgets = [f" My budget is up to ${limit} per ticket.", f" Tickets must cost at most ${limit}."]
            budget = rng.choice(budgets + ([f" No ticket over ${limit}, please."] if self.variety else []))
        lines.append("API.search()")
        vehicle = {"flight": "flight", "train": "train", "bus": "bus", "cruise": "cruise"}[mode]
        trip_kind = "round-trip " if t["back"] else ""
        frame, template = _chosen(
            rng,
            "tickets",
            [
                f"Find {trip_kind}{vehicle} tickets for {' and '.join(people)} from {r.origin} to "
                f"{r.destination} {when}.",
                f"I need to get from {r.origin} to {r.destination} by {vehicle} {when}; book {trip_kind}tickets "
                f"for {' and '.join(people)}.",
                f"Could you look up {trip_kind}{vehicle} tickets from {r.origin} to {r.destination} {when} for "
                f"{' and '.join(people)}?",
            ],
        )
        return frame + budget, lines, template

    def hotel_lines(self, s: dict[str, Any], include_location: bool = True) -> tuple[list[str], str]:
        rng = self.rng
        lines = self.place("hotel_location", s["city"], "set_hotel_location") if include_location else []
        lines += self.date("checkin_date", s["checkin"], "set_checkin_date")
        lines += self.date("checkout_date", s["checkout"], "set_checkout_date")
        extras = []
        if s["rooms"] > 1 or rng.random() < 0.3:
            lines.append(f"API.set_num_rooms({s['rooms']})")
            extras.append(f"{s['rooms']} room{'s' if s['rooms'] > 1 else ''}")
        if s["room_type"]:
            lines.append(f'API.select_room_type("{s["room_type"]}")')
            extras.append(f"{s['room_type'].lower()} room{'s' if s['rooms'] > 1 else ''}")
        if rng.random() < 0.4:
            limit = int(math.ceil(s["price"] * rng.uniform(1.0, 1.4) / 10) * 10)
            lines.append(f"API.set_max_room_price({limit})")
            extras.append(
                rng.choice([f"at most ${limit} a night", f"up to ${limit} per night"])
                if self.variety
                else f"at most ${limit} a night"
            )
        return lines, ", ".join(extras)

    def hotels(self) -> tuple[str, list[str], str] | None:
        rng = self.rng
        s = self.stay()
        if s is None:
            return None
        lines, extras = self.hotel_lines(s)
        lines = ['API.select_booking_type("hotels")', *lines, "API.search()"]
        stay = f"checking in on {self.when(s['checkin'])} and out on {self.when(s['checkout'])}"
        prompt, template = _chosen(
            rng,
            "hotels",
            [
                f"Book a hotel in {s['city']}, {stay}" + (f": {extras}." if extras else "."),
                f"I'm visiting {s['city']} and need a place to stay, {stay}" + (f" ({extras})." if extras else "."),
                f"Search hotels in {s['city']} {stay}" + (f", {extras}." if extras else "."),
            ],
        )
        return prompt, lines, template

    def both(self) -> tuple[str, list[str], str] | None:
        rng = self.rng
        t = self.trip(want_return=True)
        if t is None:
            return None
        r = t["route"]
        s = self.stay(r.destination, t["day"], (t["back"] - t["day"]).days)
        if s is None:
            return None
        lines = ['API.select_booking_type("both")', f'API.select_transportation("{r.mode}")']
        lines += self.place("location_from", r.origin, "set_origin")
        lines += self.place("location_to", r.destination, "set_destination")
        lines.append(f"API.set_num_adults({t['adults']})")
        people = f"{t['adults']} adult{'s' if t['adults'] > 1 else ''}"
        if t["children"]:
            lines.append(f"API.set_num_children({t['children']})")
            people += f" and {t['children']} child{'ren' if t['children'] > 1 else ''}"
        hotel, extras = self.hotel_lines(s)
        lines += hotel + ["API.search()"]
        prompt, template = _chosen(
            rng,
            "both",
            [
                f"I live in {r.origin} and am planning a trip to {r.destination}. I need round-trip {r.mode} "
                f"tickets for {people} and a hotel there"
                + (f" ({extras})" if extras else "")
                + f". I'll leave and check in on "
                f"{self.when(s['checkin'])}, and check out and return on {self.when(s['checkout'])}.",
                f"Plan my {r.mode} trip from {r.origin} to {r.destination} for {people}, with a hotel in "
                f"{r.destination}"
                + (f" ({extras})" if extras else "")
                + f": setting off and checking in on {self.when(s['checkin'])}, checking out and going home "
                f"on {self.when(s['checkout'])}.",
            ],
        )
        return prompt, lines, template


class _UnseenMaker(_TaskMaker):
    """Writes tasks in the unseen grammar (``trip_booking_unseen``); every task has a criterion
    beyond the booking type's required ones, so reading only those never solves one."""

    def others(self, *names: str) -> tuple[str, str]:
        pool = [c.name for c in self.db.cities if c.name not in names]
        first, second = self.rng.sample(pool, 2)
        return first, second

    def today_for(self, day: dt.date) -> dt.date | None:
        """A "today" the request counts its first day from, in a third of the tasks."""
        if self.rng.random() < 0.35:
            return day - dt.timedelta(days=self.rng.choice([1, 2, 3, 4, 5, 6, 7, 14]))
        return None

    def stay_lines(self, s: dict[str, Any]) -> tuple[list[str], list[str]]:
        rng = self.rng
        lines = self.place("hotel_location", s["city"], "set_hotel_location")
        lines += self.date("checkin_date", s["checkin"], "set_checkin_date")
        lines += self.date("checkout_date", s["checkout"], "set_checkout_date")
        if s["rooms"] > 1:
            lines.append(f"API.set_num_rooms({s['rooms']})")
        if s["room_type"]:
            lines.append(f'API.select_room_type("{s["room_type"]}")')
        limit = None
        if rng.random() < 0.4 or (s["rooms"] == 1 and not s["room_type"]):
            limit = int(math.ceil(s["price"] * rng.uniform(1.0, 1.4) / 10) * 10)
            lines.append(f"API.set_max_room_price({limit})")
        return lines, says.room_extras(rng, s["rooms"], s["room_type"], limit)

    def trip_tickets(self) -> tuple[str, list[str], str] | None:
        rng = self.rng
        t = self.trip(want_return=rng.random() < 0.35)
        if t is None:
            return None
        r = t["route"]
        lines = ['API.select_booking_type("trip tickets")', f'API.select_transportation("{r.mode}")']
        lines.append(f"API.set_num_adults({t['adults']})")
        if t["children"]:
            lines.append(f"API.set_num_children({t['children']})")
        lines += self.place("location_from", r.origin, "set_origin")
        lines += self.place("location_to", r.destination, "set_destination")
        lines += self.date("departure_date", t["day"], "set_departure_date")
        today = self.today_for(t["day"])
        back = ""
        if t["back"]:
            lines += self.date("return_date", t["back"], "set_return_date")
            later = (t["back"] - t["day"]).days
            back = (
                f", coming back {says.number_words(later)} days later"
                if today or rng.random() < 0.5
                else f", with the trip home on {says.day_text(rng, t['back'])}"
            )
        budget = ""
        if rng.random() < 0.4:
            limit = int(math.ceil(t["cheapest"] * rng.uniform(1.0, 1.5) / 10) * 10)
            lines.append(f"API.set_max_ticket_price({limit})")
            budget = says.ticket_budget(rng, limit)
        lines.append("API.search()")
        who = says.people(rng, t["adults"], t["children"])
        how, way = says.mode_words(rng, r.mode), says.route(rng, r.origin, r.destination)
        noise = says.distractor(rng, *self.others(r.origin, r.destination))
        if today:
            when = says.relative(rng, today, t["day"])
            prompt = f"{says.today_note(today)} We are {who} and want to go {how} {way} {when}{back}.{budget} {noise}"
            return prompt, lines, "tb-u-t2"
        year, day = rng.choice(says.YEAR_NOTES), says.day_text(rng, t["day"])
        prompt, template = rng.choice(
            [
                (
                    f"{noise} {year} I'm booking for {who}: travelling {way} {how}, leaving {day}{back}.{budget}",
                    "tb-u-t0",
                ),
                (f"Tickets, {how}, {way}: {who}, {day}{back}. {year}{budget} {noise}", "tb-u-t1"),
            ]
        )
        return prompt, lines, template

    def hotels(self) -> tuple[str, list[str], str] | None:
        rng = self.rng
        s = self.stay()
        if s is None:
            return None
        hotel, extras = self.stay_lines(s)
        lines = ['API.select_booking_type("hotels")', *hotel, "API.search()"]
        nights = f"{says.number_words(s['nights'])} night" + ("s" if s["nights"] > 1 else "")
        wishes = says.listed(rng, extras)
        noise = says.distractor(rng, *self.others(s["city"]))
        today = self.today_for(s["checkin"])
        if today:
            when = says.relative(rng, today, s["checkin"])
            prompt = f"{says.today_note(today)} I get to {s['city']} {when} and stay {nights}; I want {wishes}. {noise}"
            return prompt, lines, "tb-u-h2"
        year = rng.choice(says.YEAR_NOTES)
        arrive, leave = says.day_text(rng, s["checkin"]), says.day_text(rng, s["checkout"])
        prompt, template = rng.choice(
            [
                (
                    f"{noise} {year} Reserve somewhere to sleep in {s['city']} from {arrive} for {nights}: {wishes}.",
                    "tb-u-h0",
                ),
                (
                    f"Where I'll sleep: {s['city']}. Arrival {arrive}, departure {leave}. {year} "
                    f"Wishes: {wishes}. {noise}",
                    "tb-u-h1",
                ),
            ]
        )
        return prompt, lines, template

    def both(self) -> tuple[str, list[str], str] | None:
        rng = self.rng
        t = self.trip(want_return=True)
        if t is None:
            return None
        r = t["route"]
        s = self.stay(r.destination, t["day"], (t["back"] - t["day"]).days)
        if s is None:
            return None
        lines = ['API.select_booking_type("both")', f'API.select_transportation("{r.mode}")']
        lines += self.place("location_from", r.origin, "set_origin")
        lines += self.place("location_to", r.destination, "set_destination")
        lines.append(f"API.set_num_adults({t['adults']})")
        if t["children"]:
            lines.append(f"API.set_num_children({t['children']})")
        hotel, extras = self.stay_lines(s)
        lines += hotel + ["API.search()"]
        who = says.people(rng, t["adults"], t["children"])
        how, way = says.mode_words(rng, r.mode), says.route(rng, r.origin, r.destination)
        wishes = f" ({says.listed(rng, extras)})" if extras else ""
        nights = f"{says.number_words(s['nights'])} night" + ("s" if s["nights"] > 1 else "")
        noise = says.distractor(rng, *self.others(r.origin, r.destination))
        today = self.today_for(s["checkin"])
        if today:
            when = says.relative(rng, today, s["checkin"])
            prompt = (
                f"{says.today_note(today)} {who.capitalize()} will go {how} {way} {when}, spend {nights} in a hotel "
                f"there{wishes}, then head home. {noise}"
            )
            return prompt, lines, "tb-u-b1"
        year = rng.choice(says.YEAR_NOTES)
        out, home = says.day_text(rng, s["checkin"]), says.day_text(rng, s["checkout"])
        prompt = (
            f"{noise} {year} Package trip for {who}: {how} {way}, out on {out} and back on {home}, with lodging at "
            f"the destination{wishes}."
        )
        return prompt, lines, "tb-u-b0"


def difficulty(program: str) -> int:
    """The number of the task's own criteria calls (beyond the booking type's required ones)."""
    kind = next((k for k in BOOKING_KINDS if f'select_booking_type("{k}")' in program), "")
    shared = ("select_booking_type", "search", *SHARED_SETTERS.get(kind, ()))
    calls = [line[4:].split("(")[0] for line in program.splitlines() if line.startswith("API.")]
    return sum(1 for call in calls if call not in shared)


@cache
def travel_db() -> TravelDB:
    """The world, generated once per process."""
    cities = load_cities()
    return TravelDB(cities, tuple(generate_routes(cities)), tuple(generate_rooms(cities)))


def _candidates(split: str, seed: int, db: TravelDB) -> Iterator[tuple[str, list[str], str]]:
    """An endless stream of (prompt, program lines, template), the booking types in turn."""
    rng = rng_for("trip_booking", "split", split, seed)
    maker = _UnseenMaker(split, db, rng) if split == "unseen" else _TaskMaker(split, db, rng, variety=True)
    makers = (maker.trip_tickets, maker.hotels, maker.both)
    turn = 0
    while True:
        made = makers[turn % 3]()
        if made is not None:  # some random draws are sold out; draw again
            turn += 1
            yield made


@split_maker("trip_booking")
def make_split(split: str, size: int, seed: int) -> list[dict[str, Any]]:
    """``size`` train tasks (the seen templates, with more phrasings) or unseen tasks (the unseen
    grammar), none of them a test, demo or (for train) shipped unseen prompt or a near duplicate."""
    db = travel_db()
    held = [r["prompt"] for name, total in (("test", 120), ("demo", 11)) for r in generate_tasks(name, total, db)]
    if split == "train":
        held += [r["prompt"] for r in make_split("unseen", SHIPPED_SIZES["unseen"], SHIPPED_SEED)]
    chosen = fresh(_candidates(split, seed, db), size, held, batch=8)
    return [
        {
            "id": f"trip_booking-{split}-{index:04d}",
            "prompt": prompt,
            "completion": ["\n".join(lines)],
            "template": template,
            "difficulty": difficulty("\n".join(lines)),
        }
        for index, (prompt, lines, template) in enumerate(chosen)
    ]


def generate_tasks(split: str, total: int, db: TravelDB) -> list[dict[str, Any]]:
    maker = _TaskMaker(split, db)
    makers = {"trip tickets": maker.trip_tickets, "hotels": maker.hotels, "both": maker.both}
    records = []
    for index, kind in enumerate(spread(total, list(makers))):
        made = None
        while made is None:  # some random draws are sold out; draw again
            made = makers[kind]()
        prompt, lines, template = made
        records.append(
            {
                "id": f"trip_booking-{split}-{index:04d}",
                "prompt": prompt,
                "completion": ["\n".join(lines)],
                "template": template,
            }
        )
    return records


def check_references(records: list[dict[str, Any]], db: TravelDB) -> None:
    for record in records:
        api = TripBookingAPI(db)
        for call in parse_program(record["completion"][0], FUNCTIONS, CONSTRUCTORS):
            getattr(api, call.function)(*call.args, **call.kwargs)
        if not api.found_something():
            raise AssertionError(f"{record['id']}: the reference search finds nothing")


@aligner("trip_booking")
def alignment_records(count: int, seed: str) -> list[dict[str, Any]]:
    cities = load_cities()
    db = TravelDB(cities, tuple(generate_routes(cities)), tuple(generate_rooms(cities)))
    return generate_tasks(f"align-{seed}", count, db)


@generator("trip_booking")
def generate() -> Files:
    db = travel_db()
    files = {"routes.csv": _csv(list(db.routes)), "hotels.csv": _csv(list(db.rooms))}
    for split, total in (("test", 120), ("demo", 11)):
        records = generate_tasks(split, total, db)
        check_references(records, db)
        files[f"{split}.jsonl"] = jsonl(records)
    for split, size in SHIPPED_SIZES.items():
        records = make_split(split, size, SHIPPED_SEED)
        check_references(records, db)
        files[f"{split}.jsonl"] = jsonl(records)
    return files
