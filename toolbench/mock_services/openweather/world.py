"""The OpenWeather world: real cities, geocoding, and the clock.

Cities come from ``fixtures/openweather/cities.csv``: real names, coordinates, country codes,
approximate populations, time zones with their UTC offset at the world's clock, and, for US
cities, their zip codes (ZCTAs; the first is the central one). Ids are the real OpenWeather city
ids (GeoNames ids), so ``?id=2643743`` is London as on the real service. The names a place has in
other languages (``local_names`` in geocoding answers, and accepted in ``q``) come from
``fixtures/openweather/local_names.json``.
"""

from __future__ import annotations

import csv
import json
import unicodedata
from dataclasses import dataclass
from functools import cached_property

from toolbench.core.geo import distance_km
from toolbench.core.tasks import fixture_file

#: 2024-05-14 12:00:00 UTC: the fixed "now" of the default world.
DEFAULT_NOW = 1715688000

# Country spellings the real service accepts besides ISO 3166 alpha-2.
COUNTRY_ALIASES = {"UK": "GB"}


@dataclass(frozen=True)
class City:
    id: int
    name: str
    state: str
    state_code: str
    country: str
    lat: float
    lon: float
    population: int
    timezone: str
    utc_offset: int
    zips: tuple[str, ...] = ()
    #: (language code, name) pairs, sorted by language; a tuple so that a City stays hashable.
    local_names: tuple[tuple[str, str], ...] = ()

    @property
    def zip(self) -> str:
        """The central zip code ("" outside the US)."""
        return self.zips[0] if self.zips else ""


def fold(text: str) -> str:
    """Case- and accent-insensitive form of a place name."""
    decomposed = unicodedata.normalize("NFKD", text.strip().casefold())
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def load_local_names() -> dict[int, tuple[tuple[str, str], ...]]:
    with open(fixture_file("openweather", "local_names.json"), encoding="utf-8") as handle:
        raw: dict[str, dict[str, str]] = json.load(handle)
    return {int(city_id): tuple(sorted(names.items())) for city_id, names in raw.items()}


def load_cities() -> tuple[City, ...]:
    local_names = load_local_names()
    with open(fixture_file("openweather", "cities.csv"), encoding="utf-8", newline="") as handle:
        return tuple(
            City(
                id=int(row["id"]),
                name=row["name"],
                state=row["state"],
                state_code=row["state_code"],
                country=row["country"],
                lat=float(row["lat"]),
                lon=float(row["lon"]),
                population=int(row["population"]),
                timezone=row["timezone"],
                utc_offset=int(row["utc_offset"]),
                zips=tuple(row["zips"].split()),
                local_names=local_names.get(int(row["id"]), ()),
            )
            for row in csv.DictReader(handle)
        )


class World:
    """Cities and the fixed clock. Weather itself is computed in ``weather.py``."""

    def __init__(self, cities: tuple[City, ...] | None = None, now: int = DEFAULT_NOW):
        self.cities = cities if cities is not None else load_cities()
        self.now = now

    @cached_property
    def _by_name(self) -> dict[str, list[City]]:
        # A place is found by its English name and by its names in other languages ("Londres",
        # "München"), as the real service's q parameter and geocoder do.
        index: dict[str, list[City]] = {}
        for city in sorted(self.cities, key=lambda c: (-c.population, c.id)):
            for key in dict.fromkeys([fold(city.name), *(fold(name) for _, name in city.local_names)]):
                index.setdefault(key, []).append(city)
        return index

    @cached_property
    def _by_zip(self) -> dict[str, City]:
        return {code: city for city in self.cities for code in city.zips}

    def search(self, query: str) -> list[City]:
        """Cities matching ``"name[,state code][,country code]"``, most populous first."""
        parts = [part.strip() for part in query.split(",")]
        candidates = self._by_name.get(fold(parts[0]), [])
        if len(parts) == 1:
            return list(candidates)
        country = parts[-1].upper()
        country = COUNTRY_ALIASES.get(country, country)
        state = parts[1].upper() if len(parts) == 3 else None
        if len(parts) > 3:
            return []

        def state_matches(city: City) -> bool:
            return state is None or city.state_code == state or fold(city.state) == fold(parts[1])

        return [city for city in candidates if city.country == country and state_matches(city)]

    def by_zip(self, query: str) -> City | None:
        """The city of a ``"zip[,country code]"`` query (US when no country is given)."""
        code, _, country = query.partition(",")
        country = (country.strip() or "US").upper()
        city = self._by_zip.get(code.strip())
        return city if city is not None and city.country == country else None

    def nearest(self, lat: float, lon: float, within_km: float) -> City | None:
        best, best_km = None, within_km
        for city in self.cities:
            if abs(city.lat - lat) > within_km / 100.0:  # cheap pre-filter (1 degree > 100 km)
                continue
            km = distance_km(lat, lon, city.lat, city.lon)
            if km <= best_km:
                best, best_km = city, km
        return best

    def utc_offset(self, lat: float, lon: float) -> int:
        """Offset of the local time zone: the nearest city's within 300 km, else solar (15 degrees per hour)."""
        city = self.nearest(lat, lon, within_km=300.0)
        return city.utc_offset if city is not None else int(round(lon / 15.0)) * 3600
