"""Calculators: days between dates, weekdays, units, primes and slugs; BMI, calories burned and nutrition."""

from __future__ import annotations

import math
import re
from datetime import date
from typing import Any

from toolbench.mock_services.rapidapi.domains import DOMAINS, search_rows
from toolbench.mock_services.rapidapi.hub import Api, ApiError, Context
from toolbench.mock_services.rapidapi.services.shared import N, S, api, bounded, p

LENGTH = {"m": 1.0, "km": 1000.0, "cm": 0.01, "mi": 1609.344, "ft": 0.3048, "in": 0.0254}
MASS = {"kg": 1.0, "g": 0.001, "lb": 0.45359237, "oz": 0.028349523125}
MET = {"walking": 3.5, "running": 9.8, "cycling": 7.5, "swimming": 6.0, "yoga": 2.5}


def _convert_units(value: float, source: str, target: str) -> float:
    for table in (LENGTH, MASS):
        if source in table and target in table:
            return value * table[source] / table[target]
    temps = {"c": lambda v: v, "f": lambda v: (v - 32) * 5 / 9, "k": lambda v: v - 273.15}
    back = {"c": lambda v: v, "f": lambda v: v * 9 / 5 + 32, "k": lambda v: v + 273.15}
    if source in temps and target in back:
        return back[target](temps[source](value))
    raise ApiError(400, f"Cannot convert '{source[:20]}' to '{target[:20]}'")


def utils_service(style: int) -> list[Api]:
    def between(ctx: Context, a: dict[str, Any]) -> Any:
        days = (date.fromisoformat(a["end"]) - date.fromisoformat(a["start"])).days
        return {"start": a["start"], "end": a["end"], "days": days, "weeks": round(days / 7, 2)}

    def weekday(ctx: Context, a: dict[str, Any]) -> Any:
        return {"date": a["date"], "weekday": date.fromisoformat(a["date"]).strftime("%A")}

    def units(ctx: Context, a: dict[str, Any]) -> Any:
        value = bounded(a["value"], -1e12, 1e12, "value")
        result = _convert_units(value, a["from"].strip().lower(), a["to"].strip().lower())
        return {"value": value, "from": a["from"], "to": a["to"], "result": round(result, 4)}

    def prime(ctx: Context, a: dict[str, Any]) -> Any:
        number = int(bounded(a["number"], 0, 10**10, "number"))
        divisor = next((d for d in range(2, math.isqrt(number) + 1) if number % d == 0), None)
        return {"number": number, "is_prime": number > 1 and divisor is None, "smallest_divisor": divisor}

    def slug(ctx: Context, a: dict[str, Any]) -> Any:
        return {"slug": re.sub(r"[^a-z0-9]+", "-", a["text"].lower()).strip("-")}

    return [
        api(
            "utils.between",
            ("Days Between", "daysBetween", "date diff"),
            style,
            "GET",
            "/days-between",
            "Days from one date to another.",
            between,
            (p("start", "DATE", "YYYY-MM-DD", "2026-01-01"), p("end", "DATE", "YYYY-MM-DD", "2026-03-02")),
        ),
        api(
            "utils.weekday",
            ("Day Of Week", "getWeekday", "weekday"),
            style,
            "GET",
            "/weekday",
            "The weekday of a date.",
            weekday,
            (p("date", "DATE", "YYYY-MM-DD", "2026-03-02"),),
        ),
        api(
            "utils.units",
            ("Convert Units", "convertUnits", "units"),
            style,
            "GET",
            "/units",
            "Length (m, km, cm, mi, ft, in), mass (kg, g, lb, oz) or temperature (c, f, k).",
            units,
            (p("value", N, "the value", 10), p("from", S, "unit", "km"), p("to", S, "unit", "mi")),
        ),
        api(
            "utils.prime",
            ("Is Prime", "checkPrime", "prime"),
            style,
            "GET",
            "/prime",
            "Whether a number (up to 10^10) is prime.",
            prime,
            (p("number", N, "the number", 97),),
        ),
        api(
            "utils.slug",
            ("Slugify", "makeSlug", "slug"),
            style,
            "GET",
            "/slug",
            "A URL slug of a text.",
            slug,
            (p("text", S, "the text", "Hello World"),),
        ),
    ]


def health_service(style: int) -> list[Api]:
    def bmi(ctx: Context, a: dict[str, Any]) -> Any:
        weight = bounded(a["weight_kg"], 2, 500, "weight_kg")
        height = bounded(a["height_cm"], 40, 260, "height_cm") / 100
        value = round(weight / height**2, 1)
        label = "underweight" if value < 18.5 else "normal" if value < 25 else "overweight" if value < 30 else "obese"
        return {"bmi": value, "category": label}

    def burned(ctx: Context, a: dict[str, Any]) -> Any:
        minutes = bounded(a["minutes"], 1, 1440, "minutes")
        weight = bounded(a["weight_kg"], 2, 500, "weight_kg")
        calories = MET[a["activity"]] * 3.5 * weight / 200 * minutes
        return {"activity": a["activity"], "minutes": minutes, "calories": round(calories, 1)}

    def nutrition(ctx: Context, a: dict[str, Any]) -> Any:
        found = search_rows(ctx.world, DOMAINS["foods"], a["food"])
        if not found:
            raise ApiError(404, f"No food matching '{a['food'][:80]}'")
        grams = bounded(a.get("grams", 100), 1, 5000, "grams")
        food = found[0]
        scale = grams / 100
        return {
            "food": food["name"],
            "grams": grams,
            "calories": round(food["calories"] * scale, 1),
            "protein_g": round(food["protein_g"] * scale, 1),
            "fat_g": round(food["fat_g"] * scale, 1),
            "carbs_g": round(food["carbs_g"] * scale, 1),
        }

    return [
        api(
            "health.bmi",
            ("BMI Calculator", "calculateBmi", "bmi"),
            style,
            "GET",
            "/bmi",
            "Body mass index.",
            bmi,
            (p("weight_kg", N, "weight in kg", 70), p("height_cm", N, "height in cm", 175)),
        ),
        api(
            "health.burned",
            ("Calories Burned", "getCaloriesBurned", "burn"),
            style,
            "GET",
            "/burned",
            "Calories an activity burns.",
            burned,
            (
                p("activity", "ENUM", ", ".join(MET), "running", tuple(MET)),
                p("minutes", N, "minutes", 30),
                p("weight_kg", N, "weight in kg", 70),
            ),
        ),
        api(
            "health.nutrition",
            ("Nutrition Facts", "getNutrition", "nutrition"),
            style,
            "GET",
            "/nutrition",
            "Calories and macronutrients of an amount of a food.",
            nutrition,
            (p("food", S, "food name", "banana"),),
            (p("grams", N, "grams", 100),),
        ),
    ]
