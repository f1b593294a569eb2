"""Stock ``requests`` calls against the OpenWeather fake served on loopback get the real service's answers.

The facts checked here are the real ones: OpenWeather's city ids (GeoNames ids), US zip codes and
same-named places in other countries.
"""

import xml.etree.ElementTree as ET

import pytest
import requests

from toolbench.core.transport import ServedApp
from toolbench.mock_services.openweather import DEFAULT_NOW, DEMO_API_KEY, World, create_app
from toolbench.mock_services.openweather.weather import weather_at

KEY = DEMO_API_KEY


@pytest.fixture(scope="module")
def world():
    return World()


@pytest.fixture(scope="module")
def base_url(world):
    with ServedApp(create_app(world)) as served:
        yield served.url


def get(base_url: str, path: str, **params):
    return requests.get(base_url + path, params={**params, "appid": KEY}, timeout=10)


@pytest.mark.parametrize(
    "city_id, name, country",
    [
        (2643743, "London", "GB"),
        (5128581, "New York", "US"),
        (2988507, "Paris", "FR"),
        (2950159, "Berlin", "DE"),
        (1850147, "Tokyo", "JP"),
        (524901, "Moscow", "RU"),
        (6058560, "London", "CA"),
        (4298960, "London", "US"),
    ],
)
def test_real_city_ids(base_url, city_id, name, country):
    body = get(base_url, "/data/2.5/weather", id=city_id).json()
    assert (body["id"], body["name"], body["sys"]["country"]) == (city_id, name, country)
    forecast = get(base_url, "/data/2.5/forecast", id=city_id, cnt=1).json()
    assert forecast["city"]["id"] == city_id
    xml = ET.fromstring(get(base_url, "/data/2.5/forecast", id=city_id, cnt=1, mode="xml").text)
    assert xml.find("location/location").get("geobaseid") == str(city_id)


def test_a_city_name_gives_its_real_id(base_url):
    assert get(base_url, "/data/2.5/weather", q="London,GB").json()["id"] == 2643743
    assert get(base_url, "/data/2.5/weather", q="Portland,ME,US").json()["id"] == 4975802


@pytest.mark.parametrize(
    "name, state, zips",
    [
        ("New York", "NY", ["10001", "10002", "10025", "10451", "11201", "11375"]),
        ("Chicago", "IL", ["60601", "60614", "60622", "60657"]),
        ("Los Angeles", "CA", ["90012", "90026", "90028", "90045"]),
        ("Houston", "TX", ["77002", "77004", "77019", "77098"]),
        ("Boston", "MA", ["02108", "02115", "02116"]),
    ],
)
def test_every_main_zip_of_a_us_city_finds_it(base_url, world, name, state, zips):
    (city,) = world.search(f"{name},{state},US")
    for code in zips:
        body = get(base_url, "/data/2.5/weather", zip=code).json()
        assert (body["id"], body["name"]) == (city.id, name), code
        assert get(base_url, "/data/2.5/weather", zip=f"{code},us").json()["id"] == city.id
    assert get(base_url, "/data/2.5/forecast", zip=zips[-1]).json()["city"]["id"] == city.id


def test_a_zip_of_a_neighbouring_city_is_not_the_big_city(base_url):
    assert get(base_url, "/data/2.5/weather", zip="90210").status_code == 404  # Beverly Hills, not Los Angeles
    assert get(base_url, "/data/2.5/weather", zip="43017").json()["name"] == "Dublin"  # not Columbus


def test_geocoding_returns_same_named_places_in_several_countries(base_url):
    response = get(base_url, "/geo/1.0/direct", q="London", limit=5)
    places = response.json()
    assert response.status_code == 200 and len(places) == 4  # every London the world knows
    assert [(p["country"], p["state"]) for p in places] == [
        ("GB", "England"),
        ("CA", "Ontario"),
        ("US", "Ohio"),
        ("US", "Kentucky"),
    ]
    for place in places:
        assert list(place) == ["name", "local_names", "lat", "lon", "country", "state"]
        assert place["name"] == "London" and place["local_names"]["en"] == "London"
    london = places[0]["local_names"]
    assert (london["fr"], london["de"], london["ru"], london["ja"], london["zh"]) == (
        "Londres",
        "London",
        "Лондон",
        "ロンドン",
        "伦敦",
    )
    assert get(base_url, "/geo/1.0/direct", q="London", limit=2).json() == places[:2]
    assert get(base_url, "/geo/1.0/direct", q="London,US", limit=5).json() == places[2:]


def test_local_names_carry_the_citys_own_language(base_url):
    (munich,) = get(base_url, "/geo/1.0/direct", q="Munich,DE").json()
    assert munich["local_names"]["de"] == "München" and munich["local_names"]["en"] == "Munich"
    (tokyo,) = get(base_url, "/geo/1.0/direct", q="Tokyo").json()
    assert tokyo["local_names"]["ja"] == "東京都"
    (cairo,) = get(base_url, "/geo/1.0/direct", q="Cairo").json()
    assert cairo["local_names"]["ar"] == "القاهرة"


def test_a_city_is_found_by_its_name_in_another_language(base_url):
    assert get(base_url, "/geo/1.0/direct", q="Londres").json()[0]["country"] == "GB"
    assert get(base_url, "/data/2.5/weather", q="München").json()["id"] == 2867714
    assert get(base_url, "/data/2.5/weather", q="Moskau,RU").json()["id"] == 524901


def _a_city_where(world, condition):
    return next(c for c in world.cities if condition(weather_at(world, c.lat, c.lon, world.now, c.utc_offset)))


def test_gusty_wind_has_a_gust(base_url, world):
    city = _a_city_where(world, lambda w: w.wind_gust is not None)
    wind = get(base_url, "/data/2.5/weather", id=city.id).json()["wind"]
    assert list(wind) == ["speed", "deg", "gust"] and wind["gust"] > wind["speed"]
    xml = ET.fromstring(get(base_url, "/data/2.5/weather", id=city.id, mode="xml").text)
    assert float(xml.find("wind/gusts").get("value")) == wind["gust"]
    calm = _a_city_where(world, lambda w: w.wind_gust is None)
    assert "gust" not in get(base_url, "/data/2.5/weather", id=calm.id).json()["wind"]


def test_rain_reports_its_volume(base_url, world):
    city = _a_city_where(world, lambda w: w.rain_1h is not None)
    body = get(base_url, "/data/2.5/weather", id=city.id).json()
    assert body["rain"]["1h"] > 0 and list(body).index("rain") == list(body).index("wind") + 1
    xml = ET.fromstring(get(base_url, "/data/2.5/weather", id=city.id, mode="xml").text)
    assert xml.find("precipitation").get("mode") == "rain"


def test_current_weather_has_the_documented_fields(base_url):
    body = get(base_url, "/data/2.5/weather", q="Zurich").json()
    assert {"coord", "weather", "base", "main", "visibility", "wind", "clouds", "dt", "sys", "timezone", "id"} <= set(
        body
    )
    assert list(body["sys"]) == ["type", "id", "country", "sunrise", "sunset"]
    assert body["dt"] == DEFAULT_NOW and body["timezone"] == 7200 and body["visibility"] <= 10000


def test_forecast_entries_have_the_documented_fields(base_url):
    body = get(base_url, "/data/2.5/forecast", q="Seattle,WA,US").json()
    for entry in body["list"]:
        assert {"dt", "main", "weather", "clouds", "wind", "visibility", "pop", "sys", "dt_txt"} <= set(entry)
        assert "temp_kf" in entry["main"] and "pod" in entry["sys"]
        for kind in ("rain", "snow"):
            assert kind not in entry or list(entry[kind]) == ["3h"]
    assert list(body["city"]) == ["id", "name", "coord", "country", "population", "timezone", "sunrise", "sunset"]
