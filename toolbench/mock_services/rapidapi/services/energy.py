"""Energy: electricity prices and carbon intensity by country, and a solar panel's yield in a city."""

from __future__ import annotations

import hashlib
from typing import Any

from toolbench.mock_services.rapidapi.hub import Api, Context
from toolbench.mock_services.rapidapi.services.shared import N, S, api, bounded, city_named, p, row
from toolbench.mock_services.rapidapi.world import TODAY


def energy_service(style: int) -> list[Api]:
    def price(ctx: Context, a: dict[str, Any]) -> Any:
        country = row(ctx.world, "countries", a["country"], "country")
        cents = 8 + int(hashlib.sha256(country["id"].encode()).digest()[0]) % 30
        return {"country": country["id"], "price_per_kwh_usd": cents / 100, "date": TODAY.isoformat()}

    def carbon(ctx: Context, a: dict[str, Any]) -> Any:
        country = row(ctx.world, "countries", a["country"], "country")
        grams = 50 + int.from_bytes(hashlib.sha256(("co2" + country["id"]).encode()).digest()[:2], "big") % 700
        return {"country": country["id"], "grams_co2_per_kwh": grams}

    def solar(ctx: Context, a: dict[str, Any]) -> Any:
        city = city_named(ctx.world, a["city"])
        kw = bounded(a["panel_kw"], 0.1, 1000, "panel_kw")
        sun_hours = round(6.5 - abs(city["lat"]) * 0.06, 2)
        return {
            "city": city["name"],
            "panel_kw": kw,
            "sun_hours": sun_hours,
            "kwh_per_day": round(kw * sun_hours * 0.8, 2),
        }

    country = p("country", S, "ISO country code", "DE")
    return [
        api(
            "energy.price",
            ("Electricity Price", "getPowerPrice", "price"),
            style,
            "GET",
            "/price",
            "Today's average electricity price in a country.",
            price,
            (country,),
        ),
        api(
            "energy.carbon",
            ("Carbon Intensity", "getCarbonIntensity", "carbon"),
            style,
            "GET",
            "/carbon",
            "Grams of CO2 per kWh of a country's grid.",
            carbon,
            (country,),
        ),
        api(
            "energy.solar",
            ("Solar Estimate", "estimateSolar", "solar"),
            style,
            "GET",
            "/solar",
            "Daily output of solar panels in a city.",
            solar,
            (p("city", S, "city name", "Madrid"), p("panel_kw", N, "installed kW", 5)),
        ),
    ]
