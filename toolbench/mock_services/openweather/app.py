"""The OpenWeather fake: a Flask app answering the call types ToolBench uses.

Current weather and 5-day/3-hour forecast by ``q``, ``zip``, ``lat``/``lon`` (and ``id``), current
and forecast air pollution by ``lat``/``lon``, and direct geocoding. Optional ``units``, ``lang``,
``mode`` (json/xml) and ``cnt`` as the real API. Errors carry the real bodies and status codes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

from toolbench.mock_services.http import ResponseCache, json_response, new_app, parse_int, text_response
from toolbench.mock_services.openweather import formats
from toolbench.mock_services.openweather.conditions import LANGUAGES
from toolbench.mock_services.openweather.weather import air_quality_series, sun_times, weather_at
from toolbench.mock_services.openweather.world import City, World

HOST = "api.openweathermap.org"
#: The key the envs and ``toolbench serve openweather`` accept by default (32 hex digits, like a real one).
DEMO_API_KEY = "8c1a7e5f2b9d4c3e6a0f1b2c3d4e5f60"
INVALID_KEY_MESSAGE = "Invalid API key. Please see https://openweathermap.org/faq#error401 for more info."
FORECAST_STEPS = 40
AIR_FORECAST_HOURS = 96
GEOCODING_MAX = 5
NEARBY_CITY_KM = 50.0


class ApiError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


def create_app(world: World | None = None, api_keys: Iterable[str] = (DEMO_API_KEY,)) -> Flask:
    """An OpenWeather-compatible app over ``world`` that accepts the given ``appid`` keys."""
    world = world or World()
    keys = frozenset(api_keys)
    cities_by_id = {city.id: city for city in world.cities}
    app = new_app(__name__)

    def respond(body: Any, status: int = 200) -> Response:
        if isinstance(body, str):  # XML
            return text_response(body, status, "application/xml; charset=utf-8")
        return json_response(body, status)

    @app.errorhandler(ApiError)
    def api_error(error: ApiError) -> Response:
        xml_paths = ("/data/2.5/weather", "/data/2.5/forecast")
        if request.args.get("mode", "").lower() == "xml" and request.path in xml_paths:
            return respond(formats.error_xml(error.status, error.message), error.status)
        # The real service sends 401 with a numeric cod and the others with a string cod.
        cod: int | str = error.status if error.status == 401 else str(error.status)
        return respond({"cod": cod, "message": error.message}, error.status)

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> Response:
        return respond(
            {"cod": str(error.code), "message": (error.description or "").strip() or error.name}, error.code or 500
        )

    keyed_paths: set[str] = set()  # every API route; filled once the routes are defined

    @app.before_request
    def check_key() -> None:
        key = request.args.get("appid", request.args.get("APPID"))
        if request.path in keyed_paths and key not in keys:
            raise ApiError(401, INVALID_KEY_MESSAGE)

    def options() -> tuple[str, str, str]:
        units = request.args.get("units", "standard").lower()
        lang = request.args.get("lang", "en").lower().replace("-", "_")
        mode = request.args.get("mode", "json").lower()
        return (
            units if units in formats.UNITS else "standard",
            lang if lang in LANGUAGES else "en",
            "xml" if mode == "xml" else "json",
        )

    def coordinates() -> tuple[float, float]:
        if "lat" not in request.args or "lon" not in request.args:
            raise ApiError(400, "Nothing to geocode")
        lat = _number(request.args["lat"])
        if lat is None or not -90 <= lat <= 90:
            raise ApiError(400, "wrong latitude")
        lon = _number(request.args["lon"])
        if lon is None or not -180 <= lon <= 180:
            raise ApiError(400, "wrong longitude")
        return lat, lon

    def location() -> tuple[float, float, City | None]:
        args = request.args
        if "q" in args:
            if not args["q"].strip():
                raise ApiError(400, "Nothing to geocode")
            matches = world.search(args["q"])
            if not matches:
                raise ApiError(404, "city not found")
            return matches[0].lat, matches[0].lon, matches[0]
        if "zip" in args:
            city = world.by_zip(args["zip"])
            if city is None:
                raise ApiError(404, "city not found")
            return city.lat, city.lon, city
        if "id" in args:
            city = cities_by_id.get(parse_int(args["id"]))
            if city is None:
                raise ApiError(404, "city not found")
            return city.lat, city.lon, city
        lat, lon = coordinates()
        return lat, lon, world.nearest(lat, lon, NEARBY_CITY_KM)

    @app.get("/data/2.5/weather")
    def current_weather() -> Response:
        lat, lon, city = location()
        units, lang, mode = options()
        offset = city.utc_offset if city else world.utc_offset(lat, lon)
        w = weather_at(world, lat, lon, world.now, offset)
        sun = sun_times(lat, lon, world.now, offset)
        if mode == "xml":
            return respond(formats.current_xml(w, lat, lon, city, offset, sun, units, lang))
        return respond(formats.current_json(w, lat, lon, city, offset, sun, units, lang))

    @app.get("/data/2.5/forecast")
    def forecast() -> Response:
        lat, lon, city = location()
        units, lang, mode = options()
        count = FORECAST_STEPS
        if "cnt" in request.args:
            value = parse_int(request.args["cnt"])
            if value is None:
                raise ApiError(400, f"{request.args['cnt'].strip()} is not a number")
            count = min(FORECAST_STEPS, value)
            if count < 1:
                raise ApiError(400, "cnt can not be less than 1")
        offset = city.utc_offset if city else world.utc_offset(lat, lon)
        first = (world.now // 10800 + 1) * 10800
        entries = [weather_at(world, lat, lon, first + i * 10800, offset) for i in range(count)]
        sun = sun_times(lat, lon, world.now, offset)
        if mode == "xml":
            return respond(formats.forecast_xml(entries, lat, lon, city, offset, sun, units, lang))
        return respond(
            {
                "cod": "200",
                "message": 0,
                "cnt": count,
                "list": [formats.forecast_entry_json(w, units, lang) for w in entries],
                "city": formats.forecast_city_json(lat, lon, city, offset, sun),
            }
        )

    def air_pollution_body(hours: list[int]) -> dict[str, Any]:
        lat, lon = coordinates()
        series = air_quality_series(world, lat, lon, hours)
        items = [{"main": {"aqi": aqi}, "components": parts, "dt": t} for t, (aqi, parts) in zip(hours, series)]
        return {"coord": {"lon": round(lon, 4), "lat": round(lat, 4)}, "list": items}

    @app.get("/data/2.5/air_pollution")
    def air_pollution() -> Response:
        return respond(air_pollution_body([world.now // 3600 * 3600]))

    @app.get("/data/2.5/air_pollution/forecast")
    def air_pollution_forecast() -> Response:
        start = world.now // 3600 * 3600
        return respond(air_pollution_body([start + h * 3600 for h in range(AIR_FORECAST_HOURS)]))

    @app.get("/geo/1.0/direct")
    def direct_geocoding() -> Response:
        query = request.args.get("q", "")
        if not query.strip():
            raise ApiError(400, "Nothing to geocode")
        count = max(1, min(GEOCODING_MAX, parse_int(request.args.get("limit", "1")) or 1))
        return respond([formats.geocoding_json(city) for city in world.search(query)[:count]])

    keyed_paths.update(rule.rule for rule in app.url_map.iter_rules() if rule.endpoint != "static")
    # Every answer is a function of the path and the query (the world never changes): keep them.
    app.wsgi_app = ResponseCache(app.wsgi_app)  # type: ignore[method-assign]
    return app


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
