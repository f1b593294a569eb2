"""The OpenWeather world: real cities, geocoding, and the clock.

Cities come from ``fixtures/openweather/cities.csv`` (real names, coordinates, country codes,
approximate populations, time zones with their UTC offset at the world's clock, and a central zip
code for US cities). City ids are this project's own numbering, not OpenWeather's.
"""

from __future__ import annotations

import csv
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
    zip: str


def fold(text: str) -> str:
    """Case- and accent-insensitive form of a place name."""
    decomposed = unicodedata.normalize("NFKD", text.strip().casefold())
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def load_cities() -> tuple[City, ...]:
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
                zip=row["zip"],
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
        index: dict[str, list[City]] = {}
        for city in sorted(self.cities, key=lambda c: (-c.population, c.id)):
            index.setdefault(fold(city.name), []).append(city)
        return index

    @cached_property
    def _by_zip(self) -> dict[str, City]:
        return {city.zip: city for city in self.cities if city.zip}

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
