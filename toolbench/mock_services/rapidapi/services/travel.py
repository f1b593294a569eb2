"""Travel: shipping quotes and parcel tracking; flights, airports and a city's airports."""

from __future__ import annotations

from typing import Any

from toolbench.core.geo import distance_km
from toolbench.mock_services.rapidapi.hub import Api, Context
from toolbench.mock_services.rapidapi.services.shared import N, S, api, bounded, city_named, day_offset, p, row
from toolbench.mock_services.rapidapi.world import FORECAST_DAYS


def logistics_service(style: int) -> list[Api]:
    def quote(ctx: Context, a: dict[str, Any]) -> Any:
        one, two = city_named(ctx.world, a["origin"]), city_named(ctx.world, a["destination"])
        weight = bounded(a["weight_kg"], 0.01, 1000, "weight_kg")
        km = distance_km(one["lat"], one["lon"], two["lat"], two["lon"])
        return {
            "origin": one["name"],
            "destination": two["name"],
            "weight_kg": weight,
            "price_usd": round(5 + weight * 1.2 + km * 0.004, 2),
            "days": 1 + int(km // 1500),
        }

    def track(ctx: Context, a: dict[str, Any]) -> Any:
        parcel = row(ctx.world, "parcels", a["tracking_number"].strip().upper(), "tracking number")
        return {
            "tracking_number": parcel["id"],
            "carrier": parcel["carrier"],
            "status": parcel["status"],
            "origin": parcel["origin"],
            "destination": parcel["destination"],
            "shipped": parcel["shipped"],
        }

    return [
        api(
            "logistics.quote",
            ("Shipping Quote", "getShippingRate", "rate"),
            style,
            "GET",
            "/rates",
            "Price and days to ship a parcel between cities.",
            quote,
            (p("origin", S, "city", "Berlin"), p("destination", S, "city", "Paris"), p("weight_kg", N, "kg", 2)),
        ),
        api(
            "logistics.track",
            ("Track Parcel", "trackShipment", "track"),
            style,
            "GET",
            "/track",
            "Where a parcel is.",
            track,
            (p("tracking_number", S, "tracking number", "TRK0007919"),),
        ),
    ]


def flights_service(style: int) -> list[Api]:
    def search(ctx: Context, a: dict[str, Any]) -> Any:
        origin = row(ctx.world, "airports", a["origin"], "airport")["id"]
        destination = row(ctx.world, "airports", a["destination"], "airport")["id"]
        day_offset(a["date"], 0, FORECAST_DAYS - 1)
        found = [
            f
            for f in ctx.world.rows("flights")
            if (f["origin"], f["destination"], f["date"]) == (origin, destination, a["date"])
        ]
        return {"origin": origin, "destination": destination, "date": a["date"], "flights": found}

    def airport(ctx: Context, a: dict[str, Any]) -> Any:
        found = row(ctx.world, "airports", a["code"], "airport")
        routes = sorted({f["destination"] for f in ctx.world.rows("flights") if f["origin"] == found["id"]})
        return {**found, "destinations": routes}

    def city_airports(ctx: Context, a: dict[str, Any]) -> Any:
        city = city_named(ctx.world, a["city"])
        return {"city": city["name"], "airports": [x for x in ctx.world.rows("airports") if x["city_id"] == city["id"]]}

    return [
        api(
            "flights.search",
            ("Search Flights", "searchFlights", "flights"),
            style,
            "GET",
            "/flights",
            "Flights between two airports on a day of the coming week.",
            search,
            (
                p("origin", S, "IATA code", "NEK"),
                p("destination", S, "IATA code", "MEY"),
                p("date", "DATE", "YYYY-MM-DD", "2026-03-02"),
            ),
        ),
        api(
            "flights.airport",
            ("Airport Info", "getAirport", "airport"),
            style,
            "GET",
            "/airports/{code}",
            "An airport and where it flies to.",
            airport,
            (p("code", S, "IATA code", "NEK"),),
        ),
        api(
            "flights.city",
            ("City Airports", "getAirportsByCity", "city airports"),
            style,
            "GET",
            "/airports",
            "A city's airports.",
            city_airports,
            (p("city", S, "city name", "London"),),
        ),
    ]
