"""AppBench's world, the data model: the records behind the 15 apps and the ``World`` that holds them.

The clock is fixed: today is 2019-03-01 and the world knows the days up to 2019-03-31 (``TODAY``,
``LAST_DAY``, ``DAYS``). The records are frozen dataclasses, one per kind of thing the apps find
or book (cities, restaurants, houses, cars, stylists, therapists, attractions, events, films and
showings, songs, homes, bus and train routes, flights, forecasts); the vocabularies of their
categorical fields are the constants below. Timetables (buses, trains, flights, cinema
programmes) are daily, with the dates that differ (sold-out departures and showings) stored as
exceptions, and a flight's fare moves with the day by a rule (``fare_factor``), which keeps the
world small. ``World`` looks names up the way the apps compare them (``fold``). Who fills a world
is ``generator``'s business: nothing here draws a random number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from datetime import date, timedelta
from functools import cache

TODAY = date(2019, 3, 1)
LAST_DAY = date(2019, 3, 31)
DAYS: tuple[date, ...] = tuple(TODAY + timedelta(days=n) for n in range((LAST_DAY - TODAY).days + 1))

CUISINES = (
    "American", "Chinese", "French", "Indian", "Italian", "Japanese",
    "Korean", "Mediterranean", "Mexican", "Thai", "Vietnamese",
)  # fmt: skip
PRICE_RANGES = ("cheap", "moderate", "pricey", "ultra high-end")
CAR_TYPES = ("Compact", "Standard", "Full-size", "SUV")
RIDE_TYPES = ("Pool", "Regular", "Luxury")
BUS_CATEGORIES = ("direct", "one-stop")
TRAIN_CLASSES = ("Value", "Flexible", "Business")
SEATING_CLASSES = ("Economy", "Premium Economy", "Business")
EVENT_TYPES = ("Music", "Sports", "Theater")
SHOW_TYPES = ("regular", "3d", "imax")
THERAPIST_TYPES = ("Psychologist", "Psychiatrist", "Family Counselor")
ATTRACTION_CATEGORIES = (
    "Museum", "Park", "Historical Landmark", "Theme Park", "Nature Preserve",
    "Shopping Area", "Place of Worship", "Sports Venue", "Tourist Attraction",
)  # fmt: skip
# Values SGD's schemas list for categorical slots of these APIs that the lists above lack
# (RentalCars_3 car_type, Travel_1 category). Every city has them too (``generator.populate``).
SGD_CAR_TYPES = ("Hatchback", "Sedan")
SGD_ATTRACTION_CATEGORIES = ("Performing Arts Venue",)
HOME_INTENTS = ("rent", "buy")
DEVICES = ("Living room", "Kitchen", "Bedroom", "Patio")
SUBTITLE_LANGUAGES = ("English", "Spanish", "French", "German", "Hindi", "Mandarin")
PAYMENT_METHODS = {"app balance": 850, "debit card": 2400, "credit card": 5000}  # starting balance / limit
AIRLINES = ("Skyward Airways", "Pacific Crest Air", "Northstar Airlines", "Bluejay Air", "Meridian Wings")

# ---------------------------------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class City:
    name: str
    state: str
    country: str
    region: str
    airport_code: str
    airport_name: str
    aliases: tuple[str, ...]
    phone_prefix: str
    lat: float
    lon: float
    march_high: int
    wet_chance: int
    bus_station: str
    train_station: str

    def names(self) -> tuple[str, ...]:
        """Every spelling that names this city: ``San Jose``, ``San Jose, CA``, aliases."""
        places = [part for part in (self.state, self.country) if part]
        return (self.name, *(f"{self.name}, {part}" for part in places), *self.aliases)


@dataclass(frozen=True)
class Restaurant:
    name: str
    city: str
    category: str
    price_range: str
    vegetarian: bool
    outdoor: bool
    phone: str
    rating: float
    address: str
    opens: str
    closes: str  # last table at half an hour before
    full_slots: tuple[tuple[str, str], ...]  # (date, time) the world marks as fully booked


@dataclass(frozen=True)
class House:
    city: str
    address: str
    phone: str
    rating: float
    max_adults: int
    laundry: bool
    nightly_price: int


@dataclass(frozen=True)
class PickupLocation:
    name: str
    city: str
    address: str
    opens: str
    closes: str


@dataclass(frozen=True)
class Car:
    name: str
    car_type: str
    location: str
    city: str
    price_per_day: int
    busy: tuple[tuple[str, str], ...]  # (first day, last day) already rented out in the world


@dataclass(frozen=True)
class Stylist:
    name: str
    city: str
    phone: str
    rating: float
    unisex: bool
    address: str
    booked: tuple[tuple[str, str], ...]  # (date, time) already taken


@dataclass(frozen=True)
class Therapist:
    name: str
    city: str
    kind: str
    phone: str
    address: str
    booked: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Attraction:
    name: str
    city: str
    category: str
    phone: str
    free_entry: bool
    good_for_kids: bool
    address: str


@dataclass(frozen=True)
class Venue:
    name: str
    city: str
    address: str
    event_type: str


@dataclass(frozen=True)
class Event:
    name: str
    event_type: str
    city: str
    venue: str
    venue_address: str
    date: str
    time: str
    price: int
    tickets_left: int  # 0: sold out


@dataclass(frozen=True)
class Film:
    title: str
    genre: str
    director: str
    cast: tuple[str, ...]
    percent_rating: int
    in_cinemas: bool
    subtitles: tuple[str, ...]  # streaming subtitle languages (English first)


@dataclass(frozen=True)
class Theater:
    name: str
    city: str
    address: str


@dataclass(frozen=True)
class Showing:
    """A daily showing in a cinema's programme; ``sold_out`` lists the dates it is full."""

    theater: str
    city: str
    movie: str
    show_type: str
    time: str
    price: int
    sold_out: tuple[str, ...]


@dataclass(frozen=True)
class Song:
    track: str
    artist: str
    album: str
    genre: str
    year: str


@dataclass(frozen=True)
class Property:
    name: str
    city: str
    intent: str
    beds: int
    baths: int
    garage: bool
    laundry: bool
    price: int  # monthly rent or asking price
    address: str
    phone: str
    closed_dates: tuple[str, ...]  # days no visits are possible


@dataclass(frozen=True)
class Departure:
    time: str
    minutes: int
    category: str  # direct / one-stop (trains are all direct)
    fare: int  # one adult, cheapest class
    sold_out: tuple[str, ...]


@dataclass(frozen=True)
class Route:
    """A daily bus or train timetable from one city to another."""

    mode: str  # bus / train
    from_city: str
    to_city: str
    from_station: str
    to_station: str
    departures: tuple[Departure, ...]


@dataclass(frozen=True)
class Flight:
    airline: str
    origin: str  # city name
    destination: str
    departs: str
    arrives: str  # local time at the destination; may be the next day
    nonstop: bool
    fare: int  # one Economy ticket on a plain day


@dataclass(frozen=True)
class Forecast:
    city: str
    date: str
    temperature: int  # °F
    humidity: int  # %
    wind: int  # mph
    precipitation: int  # % chance


# ---------------------------------------------------------------------------------------------------------------
# The world
# ---------------------------------------------------------------------------------------------------------------


def fold(text: str) -> str:
    """A value as compared: case-folded, spaces collapsed and stripped."""
    return " ".join(str(text).split()).casefold()


@dataclass(frozen=True, eq=False)  # identity hash: the indexes below are cached per world
class World:
    cities: tuple[City, ...]
    restaurants: tuple[Restaurant, ...]
    houses: tuple[House, ...]
    pickup_locations: tuple[PickupLocation, ...]
    cars: tuple[Car, ...]
    stylists: tuple[Stylist, ...]
    therapists: tuple[Therapist, ...]
    attractions: tuple[Attraction, ...]
    venues: tuple[Venue, ...]
    events: tuple[Event, ...]
    films: tuple[Film, ...]
    theaters: tuple[Theater, ...]
    showings: tuple[Showing, ...]
    songs: tuple[Song, ...]
    properties: tuple[Property, ...]
    routes: tuple[Route, ...]
    flights: tuple[Flight, ...]
    forecasts: tuple[Forecast, ...]
    contacts: tuple[str, ...]
    payment_methods: tuple[tuple[str, int], ...]
    landmarks: tuple[tuple[str, str], ...] = ()  # (place, city): destinations known by name only

    def car_types(self) -> tuple[str, ...]:
        """The car types the lots hold, in first-seen order."""
        return tuple(dict.fromkeys(car.car_type for car in self.cars))

    def city(self, text: str) -> City | None:
        """The city a name, ``Name, ST`` or alias stands for, or None."""
        return _city_index(self).get(fold(text))

    def airport(self, text: str) -> City | None:
        """The city of an airport given by code, airport name or city name."""
        return _airport_index(self).get(fold(text)) or self.city(text)

    def places(self) -> frozenset[str]:
        """Every name and address a ride can go to (folded), with and without ``, City``."""
        return _places(self)

    def film(self, title: str) -> Film | None:
        index = _film_index(self)
        return index.get(title) or index.get(fold(title))

    def flights_from(self, origin: str, destination: str) -> tuple[Flight, ...]:
        """The flights from one city to another, in the world's order."""
        return _flight_index(self).get((origin, destination), ())

    def summary(self) -> dict[str, object]:
        """Counts and vocabularies, for task generators and docs."""
        return {
            "today": TODAY.isoformat(),
            "last_day": LAST_DAY.isoformat(),
            "cities": [c.name for c in self.cities],
            "cuisines": list(CUISINES),
            "price_ranges": list(PRICE_RANGES),
            "event_types": list(EVENT_TYPES),
            "car_types": list(self.car_types()),
            "ride_types": list(RIDE_TYPES),
            "bus_categories": list(BUS_CATEGORIES),
            "train_classes": list(TRAIN_CLASSES),
            "seating_classes": list(SEATING_CLASSES),
            "show_types": list(SHOW_TYPES),
            "therapist_types": list(THERAPIST_TYPES),
            "attraction_categories": [*ATTRACTION_CATEGORIES, *SGD_ATTRACTION_CATEGORIES],
            "film_genres": sorted({f.genre for f in self.films}),
            "music_genres": sorted({s.genre for s in self.songs}),
            "devices": list(DEVICES),
            "subtitle_languages": list(SUBTITLE_LANGUAGES),
            "airlines": list(AIRLINES),
            "contacts": list(self.contacts),
            "payment_methods": [name for name, _ in self.payment_methods],
            "bus_links": sorted({(r.from_city, r.to_city) for r in self.routes if r.mode == "bus"}),
            "train_links": sorted({(r.from_city, r.to_city) for r in self.routes if r.mode == "train"}),
            "counts": {f.name: len(getattr(self, f.name)) for f in fields(self) if f.name != "payment_methods"},
        }


@cache
def _city_index(world: World) -> dict[str, City]:
    return {fold(name): city for city in reversed(world.cities) for name in city.names()}  # the first city wins


@cache
def _film_index(world: World) -> dict[str, Film]:
    # By folded title, and by exact title for the showings' own spellings; the first film of a title wins.
    return {key: f for f in reversed(world.films) for key in (fold(f.title), f.title)}


@cache
def _flight_index(world: World) -> dict[tuple[str, str], tuple[Flight, ...]]:
    found: dict[tuple[str, str], list[Flight]] = {}
    for f in world.flights:
        found.setdefault((f.origin, f.destination), []).append(f)
    return {pair: tuple(flights) for pair, flights in found.items()}


@cache
def _airport_index(world: World) -> dict[str, City]:
    return {fold(name): c for c in reversed(world.cities) for name in (c.airport_code, c.airport_name) if name}


@cache
def _places(world: World) -> frozenset[str]:
    named: list[tuple[str, str]] = []  # (name or address, city)
    with_names = (world.restaurants, world.stylists, world.attractions, world.properties, world.pickup_locations,
                  world.venues, world.theaters)  # fmt: skip
    for group in with_names:
        named += [(x.name, x.city) for x in group]
    for group in (*with_names, world.houses, world.therapists):
        named += [(x.address, x.city) for x in group]
    for c in world.cities:
        named += [(c.airport_name, c.name), (c.bus_station, c.name), (c.train_station, c.name)]
    named += list(world.landmarks)
    return frozenset({fold(place) for place, _ in named} | {fold(f"{place}, {city}") for place, city in named})


def distance_km(a: City, b: City) -> float:
    p1, p2 = math.radians(a.lat), math.radians(b.lat)
    dp, dl = p2 - p1, math.radians(b.lon - a.lon)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371 * math.asin(math.sqrt(h))


def fare_factor(day: str, flight: Flight) -> float:
    """How a flight's fare moves with the day: weekends and the last days of the month cost more."""
    when = date.fromisoformat(day)
    weekend = 0.15 if when.weekday() >= 4 else 0.0
    wobble = ((when.day * 7 + len(flight.airline) + sum(map(ord, flight.departs))) % 5) * 0.04
    return 1.0 + weekend + wobble
