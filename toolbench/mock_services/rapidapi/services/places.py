"""Places: geocoding and its reverse, distances, what lies near a point, and time zones."""

from __future__ import annotations

from typing import Any

from toolbench.core.geo import distance_km
from toolbench.mock_services.rapidapi.hub import Api, Context
from toolbench.mock_services.rapidapi.services.shared import N, S, api, bounded, city_named, p
from toolbench.mock_services.rapidapi.world import TODAY


def geo_service(style: int) -> list[Api]:
    def geocode(ctx: Context, a: dict[str, Any]) -> Any:
        city = city_named(ctx.world, a["address"])
        return {
            "city": city["name"],
            "city_id": city["id"],
            "country": city["country"],
            "lat": city["lat"],
            "lon": city["lon"],
        }

    def reverse(ctx: Context, a: dict[str, Any]) -> Any:
        lat, lon = bounded(a["lat"], -90, 90, "lat"), bounded(a["lon"], -180, 180, "lon")
        city = min(ctx.world.rows("cities"), key=lambda c: distance_km(lat, lon, c["lat"], c["lon"]))
        return {
            "nearest_city": city["name"],
            "city_id": city["id"],
            "country": city["country"],
            "distance_km": round(distance_km(lat, lon, city["lat"], city["lon"]), 1),
        }

    def distance(ctx: Context, a: dict[str, Any]) -> Any:
        one, two = city_named(ctx.world, a["from_city"]), city_named(ctx.world, a["to_city"])
        km = distance_km(one["lat"], one["lon"], two["lat"], two["lon"])
        return {
            "from": one["name"],
            "to": two["name"],
            "distance_km": round(km, 1),
            "distance_miles": round(km / 1.609344, 1),
        }

    def nearby(ctx: Context, a: dict[str, Any]) -> Any:
        lat, lon = bounded(a["lat"], -90, 90, "lat"), bounded(a["lon"], -180, 180, "lon")
        radius = bounded(a.get("radius_km", 500), 1, 5000, "radius_km")
        found = sorted(
            (round(distance_km(lat, lon, c["lat"], c["lon"]), 1), c["name"], c["id"]) for c in ctx.world.rows("cities")
        )
        return {"cities": [{"name": n, "id": i, "distance_km": d} for d, n, i in found if d <= radius][:20]}

    def timezone(ctx: Context, a: dict[str, Any]) -> Any:
        city = city_named(ctx.world, a["city"])
        offset = city["utc_offset"]
        minutes = int(12 * 60 + offset * 60) % (24 * 60)  # the hub's clock: 12:00 UTC today
        sign = "+" if offset >= 0 else "-"
        hours, rest = divmod(abs(offset) * 60, 60)
        return {
            "city": city["name"],
            "utc_offset": f"{sign}{int(hours):02d}:{int(rest):02d}",
            "local_time": f"{TODAY.isoformat()} {minutes // 60:02d}:{minutes % 60:02d}",
        }

    return [
        api(
            "geo.geocode",
            ("Geocode City", "geocodeAddress", "place lookup"),  # no name ends another's (ToolBench routes by suffix)
            style,
            "GET",
            "/geocode",
            "Coordinates of a city.",
            geocode,
            (p("address", S, "city name", "Paris"),),
        ),
        api(
            "geo.reverse",
            ("Reverse Geocode", "reverseGeocode", "reverse"),
            style,
            "GET",
            "/reverse",
            "The nearest city to a point.",
            reverse,
            (p("lat", N, "latitude", 48.86), p("lon", N, "longitude", 2.35)),
        ),
        api(
            "geo.distance",
            ("City Distance", "getDistance", "distance"),
            style,
            "GET",
            "/distance",
            "Great-circle distance between two cities.",
            distance,
            (p("from_city", S, "city name", "Paris"), p("to_city", S, "city name", "Berlin")),
        ),
        api(
            "geo.nearby",
            ("Cities Near Point", "getNearbyCities", "nearby"),
            style,
            "GET",
            "/nearby",
            "Cities within a radius of a point, nearest first.",
            nearby,
            (p("lat", N, "latitude", 48.86), p("lon", N, "longitude", 2.35)),
            (p("radius_km", N, "1 to 5000", 500),),
        ),
        api(
            "geo.timezone",
            ("City Time Zone", "getTimezone", "timezone"),
            style,
            "GET",
            "/timezone",
            "A city's UTC offset and local time.",
            timezone,
            (p("city", S, "city name", "Tokyo"),),
        ),
    ]
