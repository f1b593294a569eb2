"""Deterministic weather and air quality as pure functions of place and time.

Nothing here is a forecast of real weather: it is a plausible climate (warmer near the equator,
seasons flipped between hemispheres, a daily cycle peaking mid-afternoon) plus stable noise keyed
on a 0.1-degree grid cell and the hour, so every call for the same place and time, in any
process, gives the same numbers.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from functools import lru_cache

from toolbench.core.seeding import stable_uniform
from toolbench.mock_services.openweather.conditions import CONDITIONS, Condition
from toolbench.mock_services.openweather.world import City, World

HOUR = 3600
DAY = 86400


@lru_cache(maxsize=1 << 16)
def _uniform(*key: object) -> float:
    """``stable_uniform``, memoised: forecasts ask for the same keys many times over."""
    return stable_uniform(*key)


def _noise(*key: object) -> float:
    """Stable noise in [-1, 1)."""
    return 2.0 * _uniform(*key) - 1.0


def _cell(lat: float, lon: float) -> tuple[float, float]:
    # + 0.0 turns -0.0 into 0.0: the two are one cache key, so they must be one place (else the
    # weather at lat=-0.0 would depend on which of the two was asked first)
    return round(lat, 1) + 0.0, round(lon, 1) + 0.0


def _smooth(key: tuple[object, ...], t: int, period: int) -> float:
    """Noise in [-1, 1) that varies smoothly over time with the given period (seconds)."""
    step, frac = divmod(t, period)
    a, b = _noise(*key, step), _noise(*key, step + 1)
    weight = (1 - math.cos(math.pi * frac / period)) / 2
    return a + (b - a) * weight


@dataclass(frozen=True)
class Weather:
    """Weather at one place and time, in metric units (°C, m/s, hPa, mm)."""

    dt: int
    temp: float
    feels_like: float
    temp_min: float
    temp_max: float
    pressure: int
    humidity: int
    sea_level: int
    grnd_level: int
    wind_speed: float
    wind_deg: int
    wind_gust: float | None
    clouds: int
    visibility: int
    condition: Condition
    rain_1h: float | None
    snow_1h: float | None
    pop: float
    is_day: bool


def cloud_condition(clouds: int) -> Condition:
    """The cloud-cover condition (800-804) for a cloudiness percentage."""
    code = 800 if clouds < 11 else 801 if clouds < 25 else 802 if clouds < 51 else 803 if clouds < 85 else 804
    return CONDITIONS[code]


def sun_times(lat: float, lon: float, t: int, utc_offset: int) -> tuple[int, int]:
    """Sunrise and sunset (unix seconds) of the local day containing ``t``."""
    local_day_start = (t + utc_offset) // DAY * DAY - utc_offset
    day_of_year = dt.datetime.fromtimestamp(local_day_start + utc_offset, dt.timezone.utc).timetuple().tm_yday
    declination = math.radians(23.44) * math.sin(2 * math.pi * (284 + day_of_year) / 365.0)
    solar_noon = local_day_start + utc_offset + int((12.0 - lon / 15.0) * HOUR)
    cos_hour_angle = -math.tan(math.radians(lat)) * math.tan(declination)
    if cos_hour_angle <= -1:  # polar day
        return local_day_start, local_day_start + DAY - 1
    if cos_hour_angle >= 1:  # polar night
        return solar_noon, solar_noon
    half_day = math.degrees(math.acos(cos_hour_angle)) / 15.0 * HOUR
    return int(solar_noon - half_day), int(solar_noon + half_day)


def temperature_at(lat: float, lon: float, t: int) -> float:
    cell = _cell(lat, lon)
    day_of_year = dt.datetime.fromtimestamp(t, dt.timezone.utc).timetuple().tm_yday
    abs_lat = abs(lat)
    annual_mean = 27.5 - 0.0045 * lat * lat - 0.1 * abs_lat - (12.0 if lat < -60 else 0.0)
    season = math.cos(2 * math.pi * (day_of_year - 196) / 365.25) * (1 if lat >= 0 else -1)
    solar_hour = ((t % DAY) / HOUR + lon / 15.0) % 24
    daily = 4.5 * math.cos(2 * math.pi * (solar_hour - 15.0) / 24.0)
    anomaly = 4.0 * _smooth((cell, "temp"), t, DAY)
    return annual_mean + 0.28 * abs_lat * season + daily + anomaly


#: Weathers and air qualities kept: a forecast asks for 40 of them, and the same places and hours
#: come back in every episode of a task.
CACHED_POINTS = 4096


@lru_cache(maxsize=CACHED_POINTS)
def weather_at(world: World, lat: float, lon: float, t: int, utc_offset: int | None = None) -> Weather:
    """Weather at a place and time; pass ``utc_offset`` when already known (saves a city lookup)."""
    cell = _cell(lat, lon)
    block = t // (3 * HOUR)
    temp = temperature_at(lat, lon, t)
    spread = 0.4 + 1.2 * _uniform(cell, "spread", block)
    humidity = int(min(100, max(12, 62 + 28 * _smooth((cell, "humidity"), t, 6 * HOUR) - 1.2 * (temp - 15) / 2)))
    pressure = int(round(1013 + 14 * _smooth((cell, "pressure"), t, DAY)))
    clouds = int(min(100, max(0, round(50 + 60 * _smooth((cell, "clouds"), t, 6 * HOUR)))))
    wind_speed = round(0.5 + 8.5 * _uniform(cell, "wind", block) ** 1.5, 2)
    wind_deg = int(360 * _uniform(cell, "wind_deg", t // DAY)) % 360
    gust = round(wind_speed * (1.3 + 0.5 * _uniform(cell, "gust", block)), 2) if wind_speed > 4 else None

    wet_draw = _uniform(cell, "precip", block)
    intensity = _uniform(cell, "intensity", block)
    wet = humidity >= 65 and clouds >= 60 and wet_draw < 0.5
    rain = snow = None
    visibility = 10000
    if wet:
        if temp <= 0:
            code = 600 if intensity < 0.5 else (601 if intensity < 0.85 else 602)
            snow = round(0.1 + 3.0 * intensity, 2)
            visibility = int(6000 - 4000 * intensity)
        elif temp <= 2:
            code, rain = 611, round(0.2 + intensity, 2)
            visibility = 5000
        elif temp >= 22 and wet_draw < 0.08:
            code = (200, 201, 211)[int(intensity * 3) % 3]
            rain = round(1.0 + 6.0 * intensity, 2)
            visibility = 7000
        elif wet_draw < 0.15:
            code, rain = (300 if intensity < 0.6 else 301), round(0.1 + 0.4 * intensity, 2)
            visibility = 9000
        else:
            code = 500 if intensity < 0.55 else (501 if intensity < 0.8 else (520 if intensity < 0.9 else 502))
            volume = {500: 0.2 + 0.8 * intensity, 501: 1.0 + 3.0 * intensity, 520: 0.5, 502: 4.0 + 6.0 * intensity}
            rain = round(volume[code], 2)
            visibility = 8000
    elif humidity >= 92 and wind_speed < 3:
        code = 741 if intensity < 0.5 else 701
        visibility = int(300 + 2700 * intensity)
    elif humidity < 35 and _uniform(cell, "haze", block) < 0.15:
        code, visibility = 721, 5000
    else:
        code = cloud_condition(clouds).code

    offset = world.utc_offset(lat, lon) if utc_offset is None else utc_offset
    sunrise, sunset = sun_times(lat, lon, t, offset)
    if temp < 10 and wind_speed > 1.34:  # wind chill (Environment Canada formula)
        v = (wind_speed * 3.6) ** 0.16
        feels_like = 13.12 + 0.6215 * temp - 11.37 * v + 0.3965 * temp * v
    elif temp > 26 and humidity > 40:  # a simple humid heat adjustment
        feels_like = temp + 0.08 * (humidity - 40) * (temp - 26) / 4
    else:
        feels_like = temp - 0.2 * wind_speed
    pop = round(0.55 + 0.45 * intensity, 2) if wet else round(0.3 * _uniform(cell, "pop", block) * clouds / 100, 2)
    return Weather(
        dt=t,
        temp=round(temp, 2),
        feels_like=round(feels_like, 2),
        temp_min=round(temp - spread, 2),
        temp_max=round(temp + spread, 2),
        pressure=pressure,
        humidity=humidity,
        sea_level=pressure,
        grnd_level=pressure - int(12 * _uniform(cell, "elevation")),
        wind_speed=wind_speed,
        wind_deg=wind_deg,
        wind_gust=gust,
        clouds=clouds,
        visibility=visibility,
        condition=CONDITIONS[code],
        rain_1h=rain,
        snow_1h=snow,
        pop=pop,
        is_day=sunrise <= t < sunset,
    )


# The real service's index: the level is the worst over these pollutants (upper bounds, μg/m³).
AQI_BANDS = {
    "so2": (20, 80, 250, 350),
    "no2": (40, 70, 150, 200),
    "pm10": (20, 50, 100, 200),
    "pm2_5": (10, 25, 50, 75),
    "o3": (60, 100, 140, 180),
    "co": (4400, 9400, 12400, 15400),
}


def air_quality_index(components: dict[str, float]) -> int:
    return max(1 + sum(components[name] >= bound for bound in bounds) for name, bounds in AQI_BANDS.items())


def air_quality_at(world: World, lat: float, lon: float, t: int) -> tuple[int, dict[str, float]]:
    """(aqi 1-5, pollutant concentrations in μg/m³) at a place and hour."""
    return air_quality_series(world, lat, lon, [t])[0]


def air_quality_series(world: World, lat: float, lon: float, times: list[int]) -> list[tuple[int, dict[str, float]]]:
    """Air quality at one place for several hours (the nearby city is looked up once)."""
    city = world.nearest(lat, lon, within_km=80.0)
    return [(aqi, dict(components)) for aqi, components in (_air_quality(lat, lon, t, city) for t in times)]


@lru_cache(maxsize=CACHED_POINTS)
def _air_quality(lat: float, lon: float, t: int, city: City | None) -> tuple[int, dict[str, float]]:
    # kept: callers get copies of the components
    cell = _cell(lat, lon)
    hour = t // HOUR
    urban = math.log10(city.population + 1) / 7.0 if city is not None else 0.05
    rush = 1 + 0.5 * math.cos(2 * math.pi * ((((t % DAY) / HOUR + lon / 15.0) % 24) - 8.5) / 12.0)

    def level(name: str, base: float, scale: float) -> float:
        draw = 0.5 + 0.5 * _smooth((cell, "air", name), t, 6 * HOUR)
        return round(base + scale * urban * rush * draw * (1 + 0.3 * _noise(cell, name, hour)), 2)

    pm2_5 = level("pm2_5", 0.5, 45.0)
    components = {
        "co": level("co", 180.0, 900.0),
        "no": level("no", 0.0, 25.0),
        "no2": level("no2", 0.3, 70.0),
        "o3": round(20 + 90 * (0.5 + 0.5 * _smooth((cell, "air", "o3"), t, 6 * HOUR)), 2),
        "so2": level("so2", 0.1, 25.0),
        "pm2_5": pm2_5,
        "pm10": round(pm2_5 * (1.2 + 0.8 * _uniform(cell, "pm10", hour)), 2),
        "nh3": level("nh3", 0.1, 8.0),
    }
    return air_quality_index(components), components
