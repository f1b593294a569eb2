"""The unseen OpenWeather questions: the nine call types in a grammar no demo, test or train task uses.

Seen questions name a place after "in" or "at", give coordinates as signed decimals, zip codes as
"zip code 12345", units by their API names (Celsius, imperial...), counts as digits and languages by
their English names. Here a place comes with another one of the same kind beside it (a city, a zip
code), coordinates are written with hemispheres (48°51'N 2°21'E, 13.9° S), counts in words or as
a span of hours, units and languages by other names, and forecasts without the seen words for them.
Every reference is built from the drawn values, never from the text.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote_plus

from toolbench.mock_services.openweather import City, World
from toolbench.taskgen.numbers import number_words
from toolbench.taskgen.openweather_values import COUNTRY_NAMES, Options, curl_for, place_of

UNIT_WORDS = {
    "metric": [" in centigrade", " with temperatures in degrees C", " (°C and metres per second)"],
    "imperial": [
        " in freedom units",
        " the American way (degrees F, miles per hour)",
        " in degrees F with wind in mph",
    ],
    "standard": [" in absolute temperatures", " in SI base units (K, m/s)"],
}
#: Languages by their own names.
LANGUAGE_WORDS = {
    "fr": "français",
    "zh_cn": "简体中文",
    "it": "italiano",
    "de": "Deutsch",
    "ru": "русский",
    "ja": "日本語",
    "nl": "Nederlands",
}
LANGUAGE_FRAMES = [" Descriptions in {language}, please.", " (My reader only handles {language}.)"]
MODE_FRAMES = {
    "xml": [" My script parses XML only.", " Send it back as an XML document."],
    "json": [" Plain JSON output is what my script expects."],
}
#: Points a scorer and the shared-parts policy use (``envs/openweather.py``): never a task's.
RESERVED_POINTS = {(-20.5, 75.5)}


def _hemisphere_text(rng: Any, lat: float, lon: float) -> tuple[str, int]:
    """Coordinates with hemispheres instead of signs, in one of four styles (``lat`` and ``lon`` are
    multiples of 0.05, so whole minutes say them exactly)."""
    ns, ew = ("N" if lat >= 0 else "S"), ("E" if lon >= 0 else "W")
    words = {"N": "north", "S": "south", "E": "east", "W": "west"}

    def dms(value: float) -> tuple[int, int]:
        minutes = round(abs(value) * 60)
        return minutes // 60, minutes % 60

    (lat_d, lat_m), (lon_d, lon_m) = dms(lat), dms(lon)
    styles = [
        f"{lat_d}°{lat_m:02d}'{ns} {lon_d}°{lon_m:02d}'{ew}",
        f"{abs(lat)}° {ns}, {abs(lon)}° {ew}",
        f"{lat_d} degrees {lat_m} minutes {words[ns]}, {lon_d} degrees {lon_m} minutes {words[ew]}",
        f"{abs(lon)}°{ew} by {abs(lat)}°{ns} (longitude first)",
    ]
    style = rng.randrange(len(styles))
    return styles[style], style


def _point(rng: Any) -> tuple[float, float]:
    """A point in multiples of 0.05 degrees with a southern or western part (signs matter)."""
    while True:
        lat, lon = round(rng.randint(-1600, 1600) * 0.05, 2), round(rng.randint(-3600, 3600) * 0.05, 2)
        if (lat < 0 or lon < 0) and (lat, lon) not in RESERVED_POINTS:
            return lat, lon


def _city_name(rng: Any, city: City, world: World) -> str:
    """A city as a question names it without the seen "Name, Region" form."""
    if city.country == "US":
        return rng.choice([f"{city.name} ({city.state_code})", f"{city.name} in the state of {city.state}"])
    if len(world.search(city.name)) == 1:
        return city.name
    return rng.choice(
        [f"the {city.name} in {COUNTRY_NAMES[city.country]}", f"{city.name} ({COUNTRY_NAMES[city.country]})"]
    )


def _other_city(rng: Any, city: City, cities: list[City]) -> City:
    while True:
        other = rng.choice(cities)
        if other.name != city.name:
            return other


class _UnseenOptions(Options):
    """The seen options' values, drawn the same way, worded in the unseen grammar."""

    def __init__(self, rng: Any, allow_cnt: bool):
        super().__init__(rng, allow_cnt)
        self.units_text = rng.choice(UNIT_WORDS[self.units]) if self.units else ""
        language = LANGUAGE_WORDS[self.lang] if self.lang else ""
        self.lang_text = rng.choice(LANGUAGE_FRAMES).format(language=language) if self.lang else ""
        self.mode_text = rng.choice(MODE_FRAMES[self.mode]) if self.mode else ""


def _where(kind: str, rng: Any, world: World, cities: list[City], us_cities: list[City]) -> tuple[str, str, str, str]:
    """Where a weather question asks about: its text, the context sentence that names another place
    of the same kind (empty for coordinates), the query and the place style's name."""
    if kind.endswith("city"):
        city = rng.choice(cities)
        name, q = _city_name(rng, city, world), place_of(city, world)[1]
        other = _other_city(rng, city, cities)
        context = rng.choice(
            [
                f"My sister lives in {other.name}, but I'm asking about {name}.",
                f"Forget {other.name} for a second; I'm going to {name}.",
                f"I already looked up {other.name}. Next up is {name}.",
            ]
        )
        return "there", context, f"q={quote_plus(q, safe=',')}", "city"
    if kind.endswith("zip"):
        city, other = rng.sample(us_cities, 2)
        context = rng.choice(
            [
                f"We moved from ZIP {other.zip} to the ZIP {city.zip}-area last spring.",
                f"My office is at postal code {other.zip}; home is postal code {city.zip}, and home is what counts.",
                f"Ignore {other.zip} (that was my old place). The ZIP I'm at now is {city.zip}.",
            ]
        )
        return "there", context, f"zip={city.zip}", "zip"
    lat, lon = _point(rng)
    text, style = _hemisphere_text(rng, lat, lon)
    return f"at {text}", "", f"lat={lat}&lon={lon}", f"point{style}"


def _weather(kind: str, rng: Any, world: World, cities: list[City], us_cities: list[City]) -> tuple[str, str, str]:
    forecast = kind.startswith("forecast")
    options = _UnseenOptions(rng, allow_cnt=forecast)
    where, context, query, place_style = _where(kind, rng, world, cities, us_cities)
    units = options.units_text
    if forecast and options.cnt:
        frames = [
            f"Just the next {number_words(options.cnt)} three-hour slots {where}{units}, nothing more.",
            f"Cover the coming {3 * options.cnt} hours {where} in 3-hour chunks{units}.",
        ]
        family = "slots"
    elif forecast:
        frames = [
            f"Is it going to rain {where} later this week? Give me the outlook{units}.",
            f"How will the skies be {where} through the weekend{units}?",
            f"I'm planning a picnic {where} sometime in the days ahead; what should I expect{units}?",
        ]
        family = "ahead"
    else:
        frames = [
            f"What's it doing outside {where} at this very minute{units}?",
            f"Never mind the forecast: I want the live reading {where}{units}.",
            f"As we speak, how hot or cold is it {where}{units}?",
        ]
        family = "live"
    frame = rng.randrange(len(frames))
    question = frames[frame]
    prompt = f"{context} {question}" if context else question
    path = "/data/2.5/forecast" if forecast else "/data/2.5/weather"
    template = f"unseen/{kind}/{family}-{frame}/{place_style}"
    return prompt + options.tail(), curl_for(path, query + options.query()), template


def _air(kind: str, rng: Any) -> tuple[str, str, str]:
    lat, lon = _point(rng)
    where, style = _hemisphere_text(rng, lat, lon)
    if kind == "air_current":
        frames = [
            f"How breathable is the air at {where} as we speak?",
            f"Give me the live AQI reading and pollutant levels for {where}.",
        ]
        path = "/data/2.5/air_pollution"
    else:
        frames = [
            f"Will the air get smoggy at {where} over the next four days? Hour by hour, please.",
            f"I have asthma and will be at {where} this week: how polluted will it get, hour by hour?",
        ]
        path = "/data/2.5/air_pollution/forecast"
    frame = rng.randrange(len(frames))
    return frames[frame], curl_for(path, f"lat={lat}&lon={lon}"), f"unseen/{kind}/{frame}/point{style}"


def _geocoding(rng: Any, world: World, full_world: World, cities: list[City]) -> tuple[str, str, str]:
    if rng.random() < 0.5:
        # Names with three or more places (in the service's whole list), asking for fewer than all of
        # them and more than one, so neither the default limit nor the largest gets the answer.
        names = sorted({c.name for c in world.cities if len(full_world.search(c.name)) >= 3})
        name = rng.choice(names)
        k = rng.randint(2, min(5, len(full_world.search(name))) - 1)
        frames = [
            f"There's more than one {name} out there. Give me {number_words(k)} of them at most, with lat and lon.",
            f"Pin {number_words(k)} different places named {name} on a map for me (no more than that).",
        ]
        frame = rng.randrange(len(frames))
        query = f"q={quote_plus(name, safe=',')}&limit={k}"
        return frames[frame], curl_for("/geo/1.0/direct", query), f"unseen/geocoding/many-{frame}"
    city = rng.choice(cities)
    name, q = _city_name(rng, city, world), place_of(city, world)[1]
    other = _other_city(rng, city, cities)
    frames = [
        f"I keep mixing up {other.name} and {name}. Where on the globe is the second one, in lat/lon?",
        f"Not {other.name}: {name}. What are its map coordinates?",
    ]
    frame = rng.randrange(len(frames))
    query = f"q={quote_plus(q, safe=',')}&limit=1"
    return frames[frame], curl_for("/geo/1.0/direct", query), f"unseen/geocoding/one-{frame}"


def unseen_question(
    kind: str, rng: Any, world: World, full_world: World, cities: list[City], us_cities: list[City]
) -> tuple[str, str, str]:
    """A question of call type ``kind`` in the unseen grammar: its text, reference and template id."""
    if kind in ("air_current", "air_forecast"):
        return _air(kind, rng)
    if kind == "geocoding":
        return _geocoding(rng, world, full_world, cities)
    return _weather(kind, rng, world, cities, us_cities)
