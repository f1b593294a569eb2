"""A world grown to hold what a task set's users name: cities, restaurants, events, films, stylists...

AppBench's own records were written from SGD dialogues about hundreds of real places; our world has
20 cities and names of its own. ``world_for(outputs)`` is our world plus, for each place or thing a
record's gold plan states as a literal (what the user said: ``#city='Fresno'``,
``#restaurant_name='Triptych'``, ``#event_name='Toto'``), an entity of that name that the plan's
calls find: a new city gets everything a city has (restaurants, houses, cars, events, cinemas,
homes, weather); a named restaurant, event, showing or stylist is added where the call looks for
it; a search with filters gets one entity that passes them. Only the plans' calls are read: their
literals, and their references as our world answers them (an address, a car name), never the values
a record says its calls returned (``used_api``). The same world serves every record of the set, and
what it holds is what the users say, so no task learns an answer from it.

The world is grown in rounds: every gold plan is run call by call on the apps; a call the world
cannot answer adds what it lacks, and the next round runs again (a call after a repaired one may
then need something). What no world can fix (an argument the API does not take, a return date
before the departure, a ride for more seats than the ride type carries) is left as it is.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping
from datetime import date
from functools import partial
from typing import Any

from toolbench.mock_services.apps.backend import EVENT_ALIASES, AppError, Apps, check_args
from toolbench.mock_services.apps.generator import (
    _FIRST,
    _LANDMARKS,
    _LAST,
    _STREET_KINDS,
    _STREETS,
    _TEAM_MASCOTS,
    build_world,
    flights_between,
    populate,
    rng,
    route_between,
)
from toolbench.mock_services.apps.model import (
    DAYS,
    Attraction,
    Car,
    City,
    Departure,
    Event,
    Film,
    House,
    PickupLocation,
    Property,
    Restaurant,
    Showing,
    Song,
    Stylist,
    Theater,
    Therapist,
    World,
    distance_km,
    fold,
)
from toolbench.mock_services.apps.plan import Call, PlanError, Ref
from toolbench.mock_services.apps.records import gold_calls

ROUNDS = 6
# The arguments that name a city (or, for flights, an airport or its city), per API.
CITY_ARGUMENTS = {
    "searchhouse": ("where_to",), "bookhouse": ("where_to",), "getcarsavailable": ("city",),
    "findbus": ("from_city", "to_city"), "buybusticket": ("from_city", "to_city"),
    "findtrains": ("from", "to"), "gettraintickets": ("from", "to"),
    "findevents": ("city",), "buyeventtickets": ("city",),
    "searchonewayflight": ("origin_airport", "destination_airport"),
    "searchroundtripflights": ("origin_airport", "destination_airport"),
    "findhomebyarea": ("area",), "buymovietickets": ("location",), "findmovies": ("location",),
    "gettimesformovie": ("location",), "findrestaurants": ("location",), "reserverestaurant": ("location",),
    "find_stylist_provider": ("city",), "find_therapist_provider": ("city",), "findattractions": ("location",),
    "getweather": ("city",),
}  # fmt: skip


class _Grower:
    """The world's tables as lists, grown by the fixes and frozen into a ``World``."""

    def __init__(self, world: World) -> None:
        self.rows: dict[str, list] = {f.name: list(getattr(world, f.name)) for f in dataclasses.fields(world)}
        self.world = world
        self.used = {
            "providers": {x.name for x in (*world.stylists, *world.therapists)},
            "homes": {p.name for p in world.properties},
        }
        self.changed = False
        # Sports events in a new city are against the teams of our own cities.
        self.rivals = {c.name: f"{c.name} {mascot}" for c, mascot in zip(world.cities, _TEAM_MASCOTS, strict=False)}

    def freeze(self) -> World:
        self.world = World(**{name: tuple(rows) for name, rows in self.rows.items()})
        self.changed = False
        return self.world

    def add(self, table: str, row: Any) -> None:
        self.rows[table].append(row)
        self.changed = True

    def replace(self, table: str, old: Any, new: Any) -> None:
        rows = self.rows[table]
        rows[rows.index(old)] = new
        self.changed = True

    # -- helpers ------------------------------------------------------------------------------------------

    def city(self, text: str) -> City:
        """The city a name stands for, added (with everything a city has) when the world has none."""
        known = self.world.city(text) or next((c for c in self.rows["cities"] if fold(c.name) == fold(text)), None)
        if known is not None:
            return known
        r = rng("city", text)
        lat, lon = round(r.uniform(25, 55), 1), round(r.uniform(-123, 20), 1)
        city = City(
            name=text, state="", country="", region="Elsewhere", airport_code="",
            airport_name=f"{text} {r.choice(_LANDMARKS)} Airport", aliases=(),
            phone_prefix=f"{r.randint(200, 989)}-555-",
            lat=lat, lon=lon, march_high=r.randint(45, 75), wet_chance=r.randint(10, 50),
            bus_station=f"{r.choice(_LANDMARKS)} Bus Terminal", train_station=f"{r.choice(_LANDMARKS)} Rail Station",
        )  # fmt: skip
        self.rows["cities"].append(city)
        team = f"{text} {r.choice(_TEAM_MASCOTS)}"
        for table, rows in populate(city, team, self.rivals, self.world.films, self.used).items():
            self.rows[table] += rows
        self.changed = True
        return city

    def address(self, *parts: object) -> str:
        r = rng("grown-address", *parts)
        return f"{r.randint(10, 2999)} {r.choice(_STREETS)} {r.choice(_STREET_KINDS)}"

    def phone(self, *parts: object) -> str:
        return f"555-{rng('grown-phone', *parts).randint(1000, 9999)}"

    def person(self, *parts: object) -> str:
        r = rng("grown-person", *parts)
        return f"{r.choice(_FIRST)} {r.choice(_LAST)}"

    def film(self, title: str, in_cinemas: bool, genre: str | None = None, **more: Any) -> Film:
        """The film of a title (added when missing)."""
        known = next((f for f in self.rows["films"] if fold(f.title) == fold(title)), None)
        if known is not None:
            return known
        r = rng("grown-film", title)
        film = Film(
            title=title,
            genre=genre or r.choice(("Drama", "Comedy", "Action", "Thriller")),
            director=more.get("director") or self.person("director", title),
            cast=tuple(more.get("cast") or (self.person("cast", title, n) for n in range(3))),
            percent_rating=r.randint(45, 98),
            in_cinemas=in_cinemas,
            subtitles=("English", *more.get("subtitles", ())),
        )
        self.add("films", film)
        return film

    def theater(self, name: str | None, city: City) -> Theater:
        known = next((t for t in self.rows["theaters"] if t.city == city.name and _named(t.name, name)), None)
        if known is not None:
            return known
        theater = Theater(name or f"{city.name} Cinema", city.name, self.address("theater", name, city.name))
        self.add("theaters", theater)
        return theater

    def route(self, mode: str, a: City, b: City) -> Any:
        known = next(
            (r for r in self.rows["routes"] if (r.mode, r.from_city, r.to_city) == (mode, a.name, b.name)), None
        )
        if known is not None:
            return known
        hours = max(1.0, round(distance_km(a, b) / 80 * 4) / 4)
        for origin, destination in ((a, b), (b, a)):
            self.add("routes", route_between(mode, origin, destination, hours))
        return self.rows["routes"][-2]


def _named(have: str, wanted: str | None) -> bool:
    return wanted is None or fold(have) == fold(wanted)


def _day(value: date | None) -> str:
    return (value or DAYS[1]).isoformat()


# ---------------------------------------------------------------------------------------------------------------
# What each API needs of the world (``v``: the call's checked arguments; ``hint``: a city the record names)
# ---------------------------------------------------------------------------------------------------------------


def _houses(g: _Grower, v: dict[str, Any], hint: City) -> None:
    city = g.city(v["where_to"])
    n = len(g.rows["houses"])
    g.add(
        "houses",
        House(
            city=city.name,
            address=g.address("house", city.name, n),
            phone=g.phone("house", city.name, n),
            rating=min(5.0, max(4.5, v.get("rating") or 0)),
            max_adults=max(8, v.get("number_of_adults") or 0),
            laundry=v.get("has_laundry_service") is not False,
            nightly_price=rng("house", city.name, n).randrange(90, 300, 5),
        ),
    )


def _location(g: _Grower, name: str, city: City) -> PickupLocation:
    """A pickup location of that name (added when missing), open all day."""
    known = next((p for p in g.rows["pickup_locations"] if fold(p.name) == fold(name)), None)
    if known is None:
        known = PickupLocation(name, city.name, g.address("lot", name), "00:00", "23:59")
        g.add("pickup_locations", known)
    elif (known.opens, known.closes) != ("00:00", "23:59"):
        wider = dataclasses.replace(known, opens="00:00", closes="23:59")
        g.replace("pickup_locations", known, wider)
        known = wider
    return known


def _car(g: _Grower, location: PickupLocation, car_type: str) -> None:
    n = len(g.rows["cars"])
    name = f"{rng('car', location.name, n).choice(_LANDMARKS)} {car_type} {n}"
    price = rng("car-price", n).randrange(35, 90)
    g.add("cars", Car(name, car_type, location.name, location.city, price, ()))


def _getcarsavailable(g: _Grower, v: dict[str, Any], hint: City) -> None:
    city = g.city(v["city"])
    _car(g, _location(g, f"{city.name} All-Day Rentals", city), v["car_type"] or "Standard")


def _reservecar(g: _Grower, v: dict[str, Any], hint: City) -> None:
    _car(g, _location(g, v["pickup_location"], hint), v["car_type"])


def _getride(g: _Grower, v: dict[str, Any], hint: City) -> None:
    if fold(v["destination"]) not in g.world.places():
        g.add("landmarks", (v["destination"], hint.name))


def _ground(
    mode: str, names: tuple[str, str], time_name: str | None, g: _Grower, v: dict[str, Any], hint: City
) -> None:
    """A bus or train route between the cities, with a free departure at the time (and category) asked."""
    a, b = g.city(v[names[0]]), g.city(v[names[1]])
    if a == b:
        return
    route = g.route(mode, a, b)
    time, category = (v.get(time_name) if time_name else None), v.get("category")
    day = v.get("departure_date") or v.get("date_of_journey")
    fits = [
        d
        for d in route.departures
        if (time is None or d.time == time) and (category is None or fold(d.category) == fold(category))
    ]
    free = [d for d in fits if _day(day) not in d.sold_out]
    if free:
        return
    model = route.departures[0]
    if fits:
        departures = tuple(dataclasses.replace(d, sold_out=()) if d in fits else d for d in route.departures)
    else:
        extra = Departure(time or "12:00", model.minutes, category or "direct", model.fare, ())
        departures = tuple(sorted((*route.departures, extra), key=lambda d: d.time))
    g.replace("routes", route, dataclasses.replace(route, departures=departures))


def _findevents(g: _Grower, v: dict[str, Any], hint: City) -> None:
    city = g.city(v["city"])
    _event(g, f"{city.name} {v['event_type'].title()} Night", v["event_type"], city, _day(v["date"]))


def _buyeventtickets(g: _Grower, v: dict[str, Any], hint: City) -> None:
    city = g.city(v["city"])
    known = [e for e in g.rows["events"] if e.city == city.name and fold(e.name) == fold(v["event_name"])]
    day = v["date"].isoformat()
    same_day = next((e for e in known if e.date == day), None)
    if same_day is not None:
        g.replace("events", same_day, dataclasses.replace(same_day, tickets_left=same_day.tickets_left + 50))
        return
    kind = known[0].event_type if known else "Music"
    _event(g, v["event_name"], kind, city, day)


def _event(g: _Grower, name: str, kind: str, city: City, day: str) -> None:
    kind = EVENT_ALIASES.get(fold(kind), kind.title())
    venue = next((x for x in g.rows["venues"] if x.city == city.name and x.event_type == kind), None)
    venue_name, venue_address = (
        (venue.name, venue.address) if venue else (f"{city.name} Hall", g.address("hall", city.name))
    )
    price = rng("event", name, city.name, day).randrange(30, 150, 5)
    g.add("events", Event(name, kind, city.name, venue_name, venue_address, day, "19:30", price, 200))


def _flights(g: _Grower, v: dict[str, Any], hint: City) -> None:
    a, b = (g.city(v[name]) for name in ("origin_airport", "destination_airport"))
    if a == b:
        return
    made = flights_between(a, b)
    have = {(f.airline, f.origin, f.destination) for f in g.rows["flights"]}
    airline = v.get("airlines")
    for flight in made:
        if airline is not None:
            flight = dataclasses.replace(flight, airline=airline)
        if (flight.airline, flight.origin, flight.destination) not in have:
            have.add((flight.airline, flight.origin, flight.destination))
            g.add("flights", flight)


def _findhomebyarea(g: _Grower, v: dict[str, Any], hint: City) -> None:
    city = g.city(v["area"])
    _home(g, f"{city.name} {rng('home', city.name, len(g.rows['properties'])).choice(_LANDMARKS)} Residences", city, v)


def _schedulevisit(g: _Grower, v: dict[str, Any], hint: City) -> None:
    known = next((p for p in g.rows["properties"] if fold(p.name) == fold(v["property_name"])), None)
    if known is None:
        _home(g, v["property_name"], hint, {"intent": "rent", "number_of_beds": 2, "number_of_baths": 1})
    else:
        g.replace("properties", known, dataclasses.replace(known, closed_dates=()))


def _home(g: _Grower, name: str, city: City, v: Mapping[str, Any]) -> None:
    beds = v["number_of_beds"]
    price = 1500 + 900 * beds if v["intent"] == "rent" else 300_000 * beds
    g.add(
        "properties",
        Property(
            name=name, city=city.name, intent=v["intent"], beds=beds, baths=v["number_of_baths"],
            garage=bool(v.get("has_garage")), laundry=bool(v.get("in_unit_laundry")), price=price,
            address=g.address("home", name), phone=g.phone("home", name), closed_dates=(),
        ),
    )  # fmt: skip


def _media_findmovies(g: _Grower, v: dict[str, Any], hint: City) -> None:
    star = v.get("starring")
    title = f"{v['genre']} {rng('stream', v['genre'], star).choice(_LANDMARKS)} Story"
    g.film(title, False, v["genre"], cast=[star] if star else None)


def _playmovie(g: _Grower, v: dict[str, Any], hint: City) -> None:
    film = g.film(v["title"], False, subtitles=(v["subtitle_language"],))
    if film.in_cinemas or any(fold(s) == fold(v["subtitle_language"]) for s in film.subtitles):
        return
    g.replace("films", film, dataclasses.replace(film, subtitles=(*film.subtitles, v["subtitle_language"])))


def _showing(g: _Grower, city: City, film: Film, theater: str | None, show_type: str | None, time: str) -> None:
    hall = g.theater(theater, city)
    price = 12 + {"regular": 0, "3d": 3, "imax": 6}.get(show_type or "regular", 0)
    g.add("showings", Showing(hall.name, city.name, film.title, show_type or "regular", time, price, ()))


def _movies_findmovies(g: _Grower, v: dict[str, Any], hint: City) -> None:
    city = g.city(v["location"])
    genre = v["genre"]
    film = next((f for f in g.rows["films"] if f.in_cinemas and _named(f.genre, genre)), None)
    if film is None:
        film = g.film(f"{genre} {rng('cinema', genre).choice(_LANDMARKS)} Tale", True, genre)
    _showing(g, city, film, v["theater_name"], v["show_type"], "19:00")


def _gettimesformovie(g: _Grower, v: dict[str, Any], hint: City) -> None:
    city = g.city(v["location"])
    _showing(g, city, g.film(v["movie_name"], True), v["theater_name"], v["show_type"], "20:15")


def _buymovietickets(g: _Grower, v: dict[str, Any], hint: City) -> None:
    city = g.city(v["location"])
    _showing(g, city, g.film(v["movie_name"], True), None, v["show_type"], v["show_time"])


def _reviewmovies(g: _Grower, v: dict[str, Any], hint: City) -> None:
    title = f"{rng('review', v['directed_by'], v['genre'], v['cast']).choice(_LANDMARKS)} Chronicles"
    g.film(title, False, v["genre"], director=v["directed_by"], cast=[v["cast"]] if v["cast"] else None)


def _music(g: _Grower, v: dict[str, Any], hint: City) -> None:
    r = rng("song", *(v.get(k) for k in ("track", "artist", "album", "genre", "year")))
    g.add(
        "songs",
        Song(
            track=v.get("track") or f"{r.choice(_LANDMARKS)} Nights",
            artist=v.get("artist") or f"The {r.choice(_LANDMARKS)} Band",
            album=v.get("album") or f"Songs from {r.choice(_LANDMARKS)}",
            genre=v.get("genre") or "Pop",
            year=v.get("year") or "2018",
        ),
    )


def _payment(g: _Grower, v: dict[str, Any], hint: City) -> None:
    if not any(fold(c) == fold(v["receiver"]) for c in g.rows["contacts"]):
        g.add("contacts", v["receiver"])


def _findrestaurants(g: _Grower, v: dict[str, Any], hint: City) -> None:
    city = g.city(v["location"])
    category = v["category"] or "American"
    name = f"{rng('restaurant', city.name, category).choice(_LANDMARKS)} {category} Kitchen"
    _restaurant(g, name, city, v, category)


def _reserverestaurant(g: _Grower, v: dict[str, Any], hint: City) -> None:
    city = g.city(v["location"])
    known = next(
        (p for p in g.rows["restaurants"] if p.city == city.name and fold(p.name) == fold(v["restaurant_name"])), None
    )
    if known is None:
        _restaurant(g, v["restaurant_name"], city, {}, "American")
    else:
        g.replace("restaurants", known, dataclasses.replace(known, opens="10:00", closes="23:59", full_slots=()))


def _restaurant(g: _Grower, name: str, city: City, v: Mapping[str, Any], category: str) -> None:
    r = rng("restaurant", name, city.name)
    g.add(
        "restaurants",
        Restaurant(
            name=name, city=city.name, category=category, price_range=v.get("price_range") or "moderate",
            vegetarian=v.get("has_vegetarian_options") is not False, outdoor=bool(v.get("has_seating_outdoors")),
            phone=g.phone("restaurant", name), rating=round(r.uniform(3.8, 4.8), 1),
            address=g.address("restaurant", name, city.name), opens="10:00", closes="23:59", full_slots=(),
        ),
    )  # fmt: skip


def _stylist(g: _Grower, v: dict[str, Any], hint: City) -> None:
    _provider(g, "stylists", v["stylist_name"], hint)


def _therapist(g: _Grower, v: dict[str, Any], hint: City) -> None:
    _provider(g, "therapists", v["therapist_name"], hint)


def _provider(g: _Grower, table: str, name: str, city: City) -> None:
    known = next((x for x in g.rows[table] if fold(x.name) == fold(name)), None)
    if known is not None:
        g.replace(table, known, dataclasses.replace(known, booked=()))
    elif table == "stylists":
        g.add(table, Stylist(name, city.name, g.phone(name), 4.5, True, g.address("stylist", name), ()))
    else:
        g.add(table, Therapist(name, city.name, "Psychologist", g.phone(name), g.address("therapist", name), ()))


def _findattractions(g: _Grower, v: dict[str, Any], hint: City) -> None:
    city = g.city(v["location"])
    category = v["category"] or "Tourist Attraction"
    name = f"{rng('attraction', city.name, category).choice(_LANDMARKS)} {category}"
    g.add(
        "attractions",
        Attraction(
            name=name, city=city.name, category=category, phone=g.phone("attraction", name),
            free_entry=v["free_entry"] is not False, good_for_kids=v["good_for_kids"] is not False,
            address=g.address("attraction", name),
        ),
    )  # fmt: skip


def _only_cities(g: _Grower, v: dict[str, Any], hint: City) -> None:
    """Searches every city answers (stylists, therapists, weather): the city is all they need."""


FIXES = {
    "searchhouse": _houses, "bookhouse": _houses, "getcarsavailable": _getcarsavailable, "reservecar": _reservecar,
    "getride": _getride, "findbus": partial(_ground, "bus", ("from_city", "to_city"), None),
    "buybusticket": partial(_ground, "bus", ("from_city", "to_city"), "departure_time"),
    "findtrains": partial(_ground, "train", ("from", "to"), None),
    "gettraintickets": partial(_ground, "train", ("from", "to"), "journey_start_time"),
    "findevents": _findevents, "buyeventtickets": _buyeventtickets,
    "searchonewayflight": _flights, "searchroundtripflights": _flights,
    "findhomebyarea": _findhomebyarea, "schedulevisit": _schedulevisit,
    "playmovie": _playmovie, "buymovietickets": _buymovietickets, "gettimesformovie": _gettimesformovie,
    "reviewmovies": _reviewmovies, "playmedia": _music, "lookupmusic": _music,
    "requestpayment": _payment, "makepayment": _payment,
    "findrestaurants": _findrestaurants, "reserverestaurant": _reserverestaurant,
    "find_stylist_provider": _only_cities, "book_stylist_appointment": _stylist,
    "find_therapist_provider": _only_cities, "book_therapist_appointment": _therapist,
    "findattractions": _findattractions, "getweather": _only_cities,
}  # fmt: skip


def _fix_for(app: str, api: str) -> Any:
    if api == "findmovies":
        return _media_findmovies if app == "Media" else _movies_findmovies
    return FIXES[api]


@dataclasses.dataclass(frozen=True)
class Failure:
    """The first call of a gold plan the apps refused: its place, app, API, arguments and the error."""

    index: int
    app: str
    api: str
    args: dict[str, str]
    error: str


def run_gold_plan(apps: Apps, plan: Mapping[str, Any] | list[Call]) -> Failure | None:
    """Run a gold plan (a record's ``output`` or its parsed calls) on fresh bookings, references replaced
    by what earlier calls returned: None when every call ran, else the first failure."""
    apps.reset()
    results: list[dict[str, str]] = []
    for n, call in enumerate(gold_calls(plan) if isinstance(plan, Mapping) else plan):
        args: dict[str, str] = {}
        for name, value in call.args.items():
            if isinstance(value, Ref):
                if value.source is None or value.name not in results[value.source]:
                    return Failure(n, call.app, call.api, {}, f"#{name} needs {value.name}, which no call returned")
                value = results[value.source][value.name]
            args[name] = value
        try:
            results.append(apps.call(call.app, call.api, args))
        except AppError as exc:
            return Failure(n, call.app, call.api, args, str(exc))
    return None


def _hint(g: _Grower, plan: list[Call]) -> City:
    """The first city a plan states (for things named without one: a stylist, a car lot)."""
    for call in plan:
        for name in CITY_ARGUMENTS.get(call.api, ()):
            value = call.args.get(name)
            if isinstance(value, str) and value:
                return g.city(value)
    return g.world.cities[0]


def world_for(outputs: Iterable[Mapping[str, Any]], base: World | None = None) -> World:
    """``base`` (our world) grown until the records' gold plans find what their literals name."""
    plans = []
    for output in outputs:
        try:
            plans.append(gold_calls(output))
        except PlanError:
            continue  # a plan that does not parse names nothing the world could hold
    g = _Grower(base or build_world())
    pending = plans
    for _ in range(ROUNDS):
        apps = Apps(g.world)
        failed = []
        for plan in pending:
            failure = run_gold_plan(apps, plan)
            if failure is None or not failure.args:
                continue
            failed.append(plan)
            try:
                spec = apps.spec(failure.app, failure.api)
                values = check_args(spec, failure.args)
            except AppError:
                continue  # an app, API or argument no world can mend
            for name in CITY_ARGUMENTS.get(spec.name, ()):
                if isinstance(values.get(name), str):  # Media's findmovies takes no city
                    g.city(values[name])
            _fix_for(spec.app, spec.name)(g, values, _hint(g, plan))
        if not g.changed:
            break
        g.freeze()
        pending = failed  # what the world gains only adds matches: a plan that ran still runs
    return g.world


_GROWN: dict[str, World] = {}


def grown_world(outputs: list[Mapping[str, Any]]) -> World:
    """``world_for(outputs)``, kept per distinct list of records (a task file loaded twice is grown once)."""
    key = hashlib.sha256(json.dumps(outputs, sort_keys=True, default=str).encode()).hexdigest()
    if key not in _GROWN:
        _GROWN[key] = world_for(outputs)
    return _GROWN[key]
