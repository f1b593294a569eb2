"""Response bodies in the real API's shapes: field names, nesting, units and the XML mode."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from typing import Any

from toolbench.core.seeding import stable_hash
from toolbench.mock_services.openweather.conditions import beaufort_name, compass_point
from toolbench.mock_services.openweather.weather import Weather, cloud_condition
from toolbench.mock_services.openweather.world import City

UNITS = ("standard", "metric", "imperial")
TEMPERATURE_UNIT = {"standard": "kelvin", "metric": "celsius", "imperial": "fahrenheit"}
SPEED_UNIT = {"standard": "m/s", "metric": "m/s", "imperial": "mph"}


def temperature(celsius: float, units: str) -> float:
    if units == "metric":
        return round(celsius, 2)
    if units == "imperial":
        return round(celsius * 9 / 5 + 32, 2)
    return round(celsius + 273.15, 2)


def speed(meters_per_second: float, units: str) -> float:
    return round(meters_per_second * 2.23694, 2) if units == "imperial" else meters_per_second


def iso(t: int) -> str:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


def icon(w: Weather) -> str:
    return w.condition.icon + ("d" if w.is_day else "n")


def weather_list(w: Weather, lang: str) -> list[dict[str, Any]]:
    c = w.condition
    return [{"id": c.code, "main": c.main, "description": c.description(lang), "icon": icon(w)}]


def wind(w: Weather, units: str) -> dict[str, Any]:
    body: dict[str, Any] = {"speed": speed(w.wind_speed, units), "deg": w.wind_deg}
    if w.wind_gust is not None:
        body["gust"] = speed(w.wind_gust, units)
    return body


def station_id(city: City | None) -> int:
    return 2000000 + stable_hash("station", city.id if city else 0) % 100000


# ------------------------------------------------------------------------------------- JSON
def current_json(
    w: Weather, lat: float, lon: float, city: City | None, offset: int, sun: tuple[int, int], units: str, lang: str
) -> dict[str, Any]:
    sys: dict[str, Any] = {"type": 2, "id": station_id(city)} if city else {}
    if city:
        sys["country"] = city.country
    sys.update({"sunrise": sun[0], "sunset": sun[1]})
    body: dict[str, Any] = {
        "coord": {"lon": round(lon, 4), "lat": round(lat, 4)},
        "weather": weather_list(w, lang),
        "base": "stations",
        "main": {
            "temp": temperature(w.temp, units),
            "feels_like": temperature(w.feels_like, units),
            "temp_min": temperature(w.temp_min, units),
            "temp_max": temperature(w.temp_max, units),
            "pressure": w.pressure,
            "humidity": w.humidity,
            "sea_level": w.sea_level,
            "grnd_level": w.grnd_level,
        },
        "visibility": w.visibility,
        "wind": wind(w, units),
    }
    if w.rain_1h is not None:
        body["rain"] = {"1h": w.rain_1h}
    if w.snow_1h is not None:
        body["snow"] = {"1h": w.snow_1h}
    body.update(
        {
            "clouds": {"all": w.clouds},
            "dt": w.dt,
            "sys": sys,
            "timezone": offset,
            "id": city.id if city else 0,
            "name": city.name if city else "",
            "cod": 200,
        }
    )
    return body


def forecast_entry_json(w: Weather, units: str, lang: str) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "dt": w.dt,
        "main": {
            "temp": temperature(w.temp, units),
            "feels_like": temperature(w.feels_like, units),
            "temp_min": temperature(w.temp_min, units),
            "temp_max": temperature(w.temp_max, units),
            "pressure": w.pressure,
            "sea_level": w.sea_level,
            "grnd_level": w.grnd_level,
            "humidity": w.humidity,
            "temp_kf": 0,
        },
        "weather": weather_list(w, lang),
        "clouds": {"all": w.clouds},
        "wind": wind(w, units),
        "visibility": w.visibility,
        "pop": w.pop,
    }
    # The forecast reports precipitation per 3 hours.
    if w.rain_1h is not None:
        entry["rain"] = {"3h": round(w.rain_1h * 3, 2)}
    if w.snow_1h is not None:
        entry["snow"] = {"3h": round(w.snow_1h * 3, 2)}
    entry["sys"] = {"pod": "d" if w.is_day else "n"}
    entry["dt_txt"] = dt.datetime.fromtimestamp(w.dt, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    return entry


def forecast_city_json(lat: float, lon: float, city: City | None, offset: int, sun: tuple[int, int]) -> dict[str, Any]:
    return {
        "id": city.id if city else 0,
        "name": city.name if city else "",
        "coord": {"lat": round(lat, 4), "lon": round(lon, 4)},
        "country": city.country if city else "",
        "population": city.population if city else 0,
        "timezone": offset,
        "sunrise": sun[0],
        "sunset": sun[1],
    }


def geocoding_json(city: City) -> dict[str, Any]:
    """A direct-geocoding match, with the real API's fields in its order (``local_names`` only when known)."""
    body: dict[str, Any] = {"name": city.name}
    if city.local_names:
        body["local_names"] = dict(city.local_names)
    body.update({"lat": city.lat, "lon": city.lon, "country": city.country})
    if city.state:
        body["state"] = city.state
    return body


# -------------------------------------------------------------------------------------- XML
def _element(parent: ET.Element, tag: str, text: str | None = None, **attributes: Any) -> ET.Element:
    element = ET.SubElement(parent, tag, {key: str(value) for key, value in attributes.items()})
    if text is not None:
        element.text = text
    return element


def to_xml(root: ET.Element) -> str:
    body = ET.tostring(root, encoding="unicode", short_empty_elements=False)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body


def _wind_xml(parent: ET.Element, w: Weather, units: str) -> None:
    code, name = compass_point(w.wind_deg)
    node = _element(parent, "wind")
    _element(node, "speed", value=speed(w.wind_speed, units), unit=SPEED_UNIT[units], name=beaufort_name(w.wind_speed))
    if w.wind_gust is not None:
        _element(node, "gusts", value=speed(w.wind_gust, units))
    else:
        _element(node, "gusts")
    _element(node, "direction", value=w.wind_deg, code=code, name=name)


def current_xml(
    w: Weather, lat: float, lon: float, city: City | None, offset: int, sun: tuple[int, int], units: str, lang: str
) -> str:
    root = ET.Element("current")
    city_node = _element(root, "city", id=city.id if city else 0, name=city.name if city else "")
    _element(city_node, "coord", lon=round(lon, 4), lat=round(lat, 4))
    _element(city_node, "country", city.country if city else "")
    _element(city_node, "timezone", str(offset))
    _element(city_node, "sun", rise=iso(sun[0]), set=iso(sun[1]))
    unit = TEMPERATURE_UNIT[units]
    _element(
        root,
        "temperature",
        value=temperature(w.temp, units),
        min=temperature(w.temp_min, units),
        max=temperature(w.temp_max, units),
        unit=unit,
    )
    _element(root, "feels_like", value=temperature(w.feels_like, units), unit=unit)
    _element(root, "humidity", value=w.humidity, unit="%")
    _element(root, "pressure", value=w.pressure, unit="hPa")
    _wind_xml(root, w, units)
    _element(root, "clouds", value=w.clouds, name=cloud_condition(w.clouds).description(lang))
    _element(root, "visibility", value=w.visibility)
    if w.rain_1h is not None:
        _element(root, "precipitation", value=w.rain_1h, mode="rain", unit="1h")
    elif w.snow_1h is not None:
        _element(root, "precipitation", value=w.snow_1h, mode="snow", unit="1h")
    else:
        _element(root, "precipitation", mode="no")
    _element(root, "weather", number=w.condition.code, value=w.condition.description(lang), icon=icon(w))
    _element(root, "lastupdate", value=iso(w.dt))
    return to_xml(root)


def forecast_xml(
    entries: list[Weather],
    lat: float,
    lon: float,
    city: City | None,
    offset: int,
    sun: tuple[int, int],
    units: str,
    lang: str,
) -> str:
    root = ET.Element("weatherdata")
    location = _element(root, "location")
    _element(location, "name", city.name if city else "")
    _element(location, "type", "")
    _element(location, "country", city.country if city else "")
    _element(location, "timezone", str(offset))
    _element(
        location,
        "location",
        altitude=0,
        latitude=round(lat, 4),
        longitude=round(lon, 4),
        geobase="geonames",
        geobaseid=city.id if city else 0,
    )
    _element(root, "credit", "")
    meta = _element(root, "meta")
    _element(meta, "lastupdate", "")
    _element(meta, "calctime", "0")
    _element(meta, "nextupdate", "")
    _element(root, "sun", rise=iso(sun[0]), set=iso(sun[1]))
    forecast = _element(root, "forecast")
    unit = TEMPERATURE_UNIT[units]
    for w in entries:
        node = _element(forecast, "time", **{"from": iso(w.dt), "to": iso(w.dt + 3 * 3600)})
        _element(node, "symbol", number=w.condition.code, name=w.condition.description(lang), var=icon(w))
        if w.rain_1h is not None or w.snow_1h is not None:
            amount = w.rain_1h if w.rain_1h is not None else w.snow_1h
            _element(
                node,
                "precipitation",
                probability=w.pop,
                unit="3h",
                value=round((amount or 0) * 3, 2),
                type="rain" if w.rain_1h is not None else "snow",
            )
        else:
            _element(node, "precipitation", probability=w.pop)
        code, name = compass_point(w.wind_deg)
        _element(node, "windDirection", deg=w.wind_deg, code=code, name=name)
        _element(
            node, "windSpeed", mps=speed(w.wind_speed, units), unit=SPEED_UNIT[units], name=beaufort_name(w.wind_speed)
        )
        if w.wind_gust is not None:
            _element(node, "windGust", gust=speed(w.wind_gust, units), unit=SPEED_UNIT[units])
        _element(
            node,
            "temperature",
            unit=unit,
            value=temperature(w.temp, units),
            min=temperature(w.temp_min, units),
            max=temperature(w.temp_max, units),
        )
        _element(node, "feels_like", unit=unit, value=temperature(w.feels_like, units))
        _element(node, "pressure", unit="hPa", value=w.pressure)
        _element(node, "humidity", value=w.humidity, unit="%")
        _element(node, "clouds", value=cloud_condition(w.clouds).description(lang), all=w.clouds, unit="%")
        _element(node, "visibility", value=w.visibility)
    return to_xml(root)


def error_xml(code: int, message: str) -> str:
    root = ET.Element("ClientError")
    _element(root, "cod", str(code))
    _element(root, "message", message)
    return to_xml(root)
