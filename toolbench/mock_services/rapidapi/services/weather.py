"""Weather: current conditions, forecasts, past days and the nearest station, from the world's cities."""

from __future__ import annotations

from typing import Any

from toolbench.core.geo import distance_km
from toolbench.mock_services.rapidapi.hub import Api, ApiError, Context
from toolbench.mock_services.rapidapi.services.shared import N, S, api, bounded, city_named, day_offset, p
from toolbench.mock_services.rapidapi.world import FORECAST_DAYS, HISTORY_DAYS, weather


def weather_service(style: int) -> list[Api]:
    def current(ctx: Context, a: dict[str, Any]) -> Any:
        city = city_named(ctx.world, a["city"])
        return {
            "location": {"name": city["name"], "country": city["country"], "lat": city["lat"], "lon": city["lon"]},
            "current": weather(city, 0),
        }

    def forecast(ctx: Context, a: dict[str, Any]) -> Any:
        city = city_named(ctx.world, a["city"])
        days = int(bounded(a.get("days", 3), 1, FORECAST_DAYS, "days"))
        return {
            "location": {"name": city["name"], "country": city["country"]},
            "forecast": [weather(city, n) for n in range(days)],
        }

    def history(ctx: Context, a: dict[str, Any]) -> Any:
        city = city_named(ctx.world, a["city"])
        offset = day_offset(a["date"], -HISTORY_DAYS, -1)
        return {"location": {"name": city["name"]}, "day": weather(city, offset)}

    def by_coordinates(ctx: Context, a: dict[str, Any]) -> Any:
        lat, lon = bounded(a["lat"], -90, 90, "lat"), bounded(a["lon"], -180, 180, "lon")
        city = min(ctx.world.rows("cities"), key=lambda c: distance_km(lat, lon, c["lat"], c["lon"]))
        if distance_km(lat, lon, city["lat"], city["lon"]) > 150:
            raise ApiError(404, "No weather station within 150 km of these coordinates")
        return {"station": city["name"], "current": weather(city, 0)}

    city = p("city", S, "city name, such as London", "London")
    return [
        api(
            "weather.current",
            ("Current Weather", "getCurrentWeather", "current"),
            style,
            "GET",
            "/current",
            "The weather now in a city.",
            current,
            (city,),
        ),
        api(
            "weather.forecast",
            ("Daily Forecast", "getForecast", "forecast"),
            style,
            "GET",
            "/forecast",
            "Daily forecast for up to 7 days from today.",
            forecast,
            (city,),
            (p("days", N, "1 to 7", 3),),
        ),
        api(
            "weather.history",
            ("Historical Weather", "getHistory", "history"),
            style,
            "GET",
            "/history",
            "The weather of one of the last 30 days.",
            history,
            (city, p("date", "DATE", "YYYY-MM-DD", "2026-02-20")),
        ),
        api(
            "weather.coords",
            ("Weather By Coordinates", "getWeatherByLatLon", "point"),
            style,
            "GET",
            "/point",
            "The weather now at the station nearest a point.",
            by_coordinates,
            (p("lat", N, "latitude", 51.5), p("lon", N, "longitude", -0.13)),
        ),
    ]
