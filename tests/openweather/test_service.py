"""The OpenWeather fake speaks the real API's protocol."""

import datetime as dt
import xml.etree.ElementTree as ET

import pytest

from toolbench.core.transport import HttpRequest, Router
from toolbench.mock_services.openweather import DEFAULT_NOW, DEMO_API_KEY, HOST, World, create_app
from toolbench.mock_services.openweather.conditions import CONDITIONS, LANGUAGES
from toolbench.mock_services.openweather.weather import weather_at

KEY = DEMO_API_KEY


@pytest.fixture(scope="module")
def world():
    return World()


@pytest.fixture(scope="module")
def get(world):
    router = Router({HOST: create_app(world)})

    def get(path: str, key: str | None = KEY):
        separator = "&" if "?" in path else "?"
        url = f"https://{HOST}{path}" + (f"{separator}appid={key}" if key else "")
        return router.send(HttpRequest("GET", url))

    return get


def test_world_has_real_cities_with_us_zips(world):
    assert len(world.cities) >= 200
    us = [c for c in world.cities if c.country == "US"]
    assert len(us) >= 50 and all(c.zip and len(c.zip) == 5 for c in us)
    london = world.search("London")[0]
    assert (london.country, round(london.lat), round(london.lon)) == ("GB", 52, 0)
    assert world.search("london,uk")[0] is london  # the real service's "uk" alias
    assert world.search("Springfield,IL,US")[0].state == "Illinois"
    assert world.search("sao paulo")[0].name == "São Paulo"
    assert world.by_zip("10001").name == "New York"
    assert world.by_zip("10001,GB") is None


def test_utc_offsets_match_the_time_zone_database(world):
    zoneinfo = pytest.importorskip("zoneinfo")
    now = dt.datetime.fromtimestamp(DEFAULT_NOW, dt.timezone.utc)
    for city in world.cities:
        try:
            zone = zoneinfo.ZoneInfo(city.timezone)
        except zoneinfo.ZoneInfoNotFoundError:
            pytest.skip("this machine has no time zone database")
        assert now.astimezone(zone).utcoffset().total_seconds() == city.utc_offset, city


def test_current_weather_by_city_has_the_real_fields(get):
    response = get("/data/2.5/weather?q=Paris,FR")
    body = response.json()
    assert response.status == 200 and response.header("content-type").startswith("application/json")
    assert list(body) == [
        "coord",
        "weather",
        "base",
        "main",
        "visibility",
        "wind",
        *([k for k in ("rain", "snow") if k in body]),
        "clouds",
        "dt",
        "sys",
        "timezone",
        "id",
        "name",
        "cod",
    ]
    assert body["name"] == "Paris" and body["sys"]["country"] == "FR" and body["cod"] == 200
    assert set(body["main"]) == {
        "temp",
        "feels_like",
        "temp_min",
        "temp_max",
        "pressure",
        "humidity",
        "sea_level",
        "grnd_level",
    }
    assert body["weather"][0]["id"] in CONDITIONS and body["dt"] == DEFAULT_NOW
    assert body["sys"]["sunrise"] < DEFAULT_NOW < body["sys"]["sunset"]  # midday in May
    assert body["timezone"] == 7200


def test_the_same_place_answers_the_same_by_name_zip_and_coordinates(get, world):
    city = world.by_zip("60601")
    by_name = get("/data/2.5/weather?q=Chicago,IL,US").json()
    by_zip = get("/data/2.5/weather?zip=60601").json()
    by_coords = get(f"/data/2.5/weather?lat={city.lat}&lon={city.lon}").json()
    assert by_name == by_zip == by_coords


def test_units(get):
    standard = get("/data/2.5/weather?q=Tokyo").json()
    metric = get("/data/2.5/weather?q=Tokyo&units=metric").json()
    imperial = get("/data/2.5/weather?q=Tokyo&units=imperial").json()
    assert standard == get("/data/2.5/weather?q=Tokyo&units=standard").json()
    assert abs(standard["main"]["temp"] - 273.15 - metric["main"]["temp"]) < 0.011
    assert abs(metric["main"]["temp"] * 9 / 5 + 32 - imperial["main"]["temp"]) < 0.011
    assert abs(metric["wind"]["speed"] * 2.23694 - imperial["wind"]["speed"]) < 0.011
    assert get("/data/2.5/weather?q=Tokyo&units=bogus").json() == standard  # unknown units: standard


def test_languages_translate_descriptions(get):
    descriptions = {
        lang: get(f"/data/2.5/weather?q=Oslo&lang={lang}").json()["weather"][0]["description"] for lang in LANGUAGES
    }
    assert len(set(descriptions.values())) >= 7
    assert get("/data/2.5/weather?q=Oslo&lang=xx").json()["weather"][0]["description"] == descriptions["en"]
    for condition in CONDITIONS.values():
        assert set(condition.descriptions) == set(LANGUAGES)


def test_xml_mode(get):
    response = get("/data/2.5/weather?q=Berlin&mode=xml&units=metric")
    root = ET.fromstring(response.body)
    assert response.header("content-type").startswith("application/xml")
    assert root.tag == "current" and root.find("city").get("name") == "Berlin"
    assert root.find("temperature").get("unit") == "celsius"
    forecast = ET.fromstring(get("/data/2.5/forecast?q=Berlin&mode=xml&cnt=3").body)
    assert forecast.tag == "weatherdata" and len(forecast.find("forecast")) == 3
    error = ET.fromstring(get("/data/2.5/weather?q=Atlantis&mode=xml").body)
    assert error.tag == "ClientError" and error.find("message").text == "city not found"


def test_forecast(get):
    body = get("/data/2.5/forecast?q=Madrid").json()
    assert body["cod"] == "200" and body["cnt"] == 40 and len(body["list"]) == 40
    times = [entry["dt"] for entry in body["list"]]
    assert times[0] > DEFAULT_NOW and all(b - a == 10800 for a, b in zip(times, times[1:]))
    entry = body["list"][0]
    assert {"dt", "main", "weather", "clouds", "wind", "visibility", "pop", "sys", "dt_txt"} <= set(entry)
    assert entry["dt_txt"] == dt.datetime.fromtimestamp(entry["dt"], dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    assert body["city"]["name"] == "Madrid" and body["city"]["country"] == "ES"
    assert get("/data/2.5/forecast?q=Madrid&cnt=5").json()["list"] == body["list"][:5]
    assert get("/data/2.5/forecast?q=Madrid&cnt=0").status == 400
    assert get("/data/2.5/forecast?q=Madrid&cnt=abc").status == 400


def test_air_pollution(get):
    body = get("/data/2.5/air_pollution?lat=28.7&lon=77.1").json()
    assert body["coord"] == {"lon": 77.1, "lat": 28.7}
    (item,) = body["list"]
    assert 1 <= item["main"]["aqi"] <= 5
    assert set(item["components"]) == {"co", "no", "no2", "o3", "so2", "pm2_5", "pm10", "nh3"}
    forecast = get("/data/2.5/air_pollution/forecast?lat=28.7&lon=77.1").json()
    assert len(forecast["list"]) == 96 and forecast["list"][0] == item
    assert get("/data/2.5/air_pollution?q=Delhi").status == 400


def test_direct_geocoding(get):
    places = get("/geo/1.0/direct?q=Springfield&limit=5").json()
    # most populous first, up to the limit
    assert [p["state"] for p in places] == ["Missouri", "Massachusetts", "Illinois", "Ohio", "Oregon"]
    assert get("/geo/1.0/direct?q=Springfield").json() == places[:1]
    assert get("/geo/1.0/direct?q=Springfield&limit=2").json() == places[:2]
    assert get("/geo/1.0/direct?q=Atlantis").json() == []
    assert list(places[0]) == ["name", "local_names", "lat", "lon", "country", "state"]  # the real API's order


@pytest.mark.parametrize(
    "path, key, status, body",
    [
        (
            "/data/2.5/weather?q=London",
            None,
            401,
            {
                "cod": 401,
                "message": "Invalid API key. Please see https://openweathermap.org/faq#error401 for more info.",
            },
        ),
        ("/data/2.5/weather?q=London", "wrong", 401, None),
        ("/data/2.5/air_pollution?lat=1&lon=2", "wrong", 401, None),
        ("/data/2.5/weather?q=Atlantis", KEY, 404, {"cod": "404", "message": "city not found"}),
        ("/data/2.5/forecast?zip=00000", KEY, 404, {"cod": "404", "message": "city not found"}),
        ("/data/2.5/weather?lat=91&lon=0", KEY, 400, {"cod": "400", "message": "wrong latitude"}),
        ("/data/2.5/weather?lat=abc&lon=0", KEY, 400, {"cod": "400", "message": "wrong latitude"}),
        ("/data/2.5/weather?lat=10&lon=200", KEY, 400, {"cod": "400", "message": "wrong longitude"}),
        ("/data/2.5/weather?lat=nan&lon=0", KEY, 400, {"cod": "400", "message": "wrong latitude"}),
        ("/data/2.5/weather?lat=10", KEY, 400, {"cod": "400", "message": "Nothing to geocode"}),
        ("/data/2.5/weather", KEY, 400, {"cod": "400", "message": "Nothing to geocode"}),
        ("/geo/1.0/direct?limit=3", KEY, 400, {"cod": "400", "message": "Nothing to geocode"}),
    ],
)
def test_errors_as_the_real_service_sends_them(get, path, key, status, body):
    response = get(path, key)
    assert response.status == status
    if body is not None:
        assert response.json() == body
    else:
        assert response.json()["cod"] == 401


def test_unknown_paths_and_methods_answer_json_errors_not_500(get):
    router = Router({HOST: create_app()})
    assert get("/data/3.0/onecall?lat=1&lon=1").status == 404
    response = router.send(HttpRequest("POST", f"https://{HOST}/data/2.5/weather?q=London&appid={KEY}"))
    assert response.status == 405 and response.json()["cod"] == "405"


def test_weather_is_plausible_everywhere(world):
    for city in world.cities:
        for hours in (0, 9, 30, 100):
            w = weather_at(world, city.lat, city.lon, DEFAULT_NOW + hours * 3600)
            assert -70 < w.temp < 50 and 0 <= w.humidity <= 100 and 0 <= w.clouds <= 100
            assert w.temp_min <= w.temp <= w.temp_max and w.wind_speed >= 0


def test_responses_are_identical_on_repeat(get):
    paths = ["/data/2.5/weather?q=Lima", "/data/2.5/forecast?lat=-33.9&lon=18.4", "/data/2.5/air_pollution?lat=1&lon=1"]
    assert [get(p).body for p in paths] == [get(p).body for p in paths]


def test_python_requests_reaches_the_fake_in_process(world):
    session = Router({HOST: create_app(world)}).session()
    response = session.get(f"https://{HOST}/data/2.5/weather", params={"q": "Nairobi", "units": "metric", "appid": KEY})
    assert response.status_code == 200 and response.json()["name"] == "Nairobi"
    assert session.get(f"https://{HOST}/data/2.5/weather", params={"q": "Nairobi"}).status_code == 401


def test_kept_answers_are_the_answers(world):
    """The fake keeps its answers to GET requests: they must be byte for byte what it computes."""
    from toolbench.mock_services.http import ResponseCache

    app = create_app(world)
    assert isinstance(app.wsgi_app, ResponseCache)
    kept = Router({HOST: app})
    computed = Router({HOST: create_app(world)})
    computed._apps[HOST].wsgi_app = computed._apps[HOST].wsgi_app.app  # the app without its cache
    paths = [
        "/data/2.5/weather?q=London&units=metric",
        "/data/2.5/forecast?lat=40.7&lon=-74.0&mode=xml",
        "/data/2.5/air_pollution/forecast?lat=48.9&lon=2.35",
        "/data/2.5/weather?q=Nowhere-at-all",
        "/geo/1.0/direct?q=Paris&limit=3",
    ]
    for _ in range(2):
        for path in paths:
            request = HttpRequest("GET", f"https://{HOST}{path}&appid={KEY}")
            assert kept.send(request) == computed.send(request)
        assert kept.send(HttpRequest("GET", f"https://{HOST}{paths[0]}&appid=wrong")).status == 401
    kept_before = len(app.wsgi_app._answers)
    assert kept.send(HttpRequest("POST", f"https://{HOST}{paths[0]}&appid={KEY}")).status == 405
    assert len(app.wsgi_app._answers) == kept_before  # only GET answers are kept


def test_redirects_and_long_urls_are_not_kept(world):
    """A redirect's Location comes from the Host header and scheme: a kept one would send later
    clients to the first client's host. Long URLs are not kept: the cache's memory stays bounded."""
    app = create_app(world)
    router = Router({HOST: app, "other.example": app})
    path = f"/data//2.5/weather?q=London&appid={KEY}"
    first = router.send(HttpRequest("GET", f"http://other.example:8080{path}"))
    second = router.send(HttpRequest("GET", f"https://{HOST}{path}"))
    assert first.status == second.status == 308
    assert first.header("Location").startswith("http://other.example:8080/")
    assert second.header("Location").startswith(f"https://{HOST}/")
    long_query = "&x=" + "a" * 3000
    assert router.send(HttpRequest("GET", f"https://{HOST}/data/2.5/weather?q=London&appid={KEY}{long_query}")).ok
    assert all(len(p) + len(q) <= 2048 for p, q in app.wsgi_app._answers)


def test_the_weather_at_minus_zero_does_not_depend_on_what_was_asked_first(world):
    from toolbench.mock_services.openweather import weather

    def both(order):
        for cache in (weather._uniform, weather.weather_at, weather._air_quality):
            cache.cache_clear()
        found = {lat: weather.weather_at(world, lat, 10.0, DEFAULT_NOW) for lat in order}
        return found[0.0], found[-0.0]

    assert both((-0.0, 0.0)) == both((0.0, -0.0))


def test_the_answer_cache_is_bounded():
    from toolbench.mock_services.http import ResponseCache

    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [environ["QUERY_STRING"].encode() * (1000 if environ["QUERY_STRING"] == "big" else 1)]

    cache = ResponseCache(app, size=3, max_body=100)
    statuses = []
    for query in ("a", "b", "c", "d", "big", "b"):
        body = b"".join(
            cache(
                {"REQUEST_METHOD": "GET", "PATH_INFO": "/", "QUERY_STRING": query},
                lambda s, h, e=None: statuses.append(s),
            )
        )
        assert body == query.encode() * (1000 if query == "big" else 1)
    assert list(cache._answers) == [("/", "c"), ("/", "d"), ("/", "b")] and statuses == ["200 OK"] * 6


def test_air_quality_callers_get_their_own_components(world):
    from toolbench.mock_services.openweather.weather import air_quality_series

    ((aqi, components),) = air_quality_series(world, 51.5, -0.12, [DEFAULT_NOW])
    components["co"] = -1
    assert air_quality_series(world, 51.5, -0.12, [DEFAULT_NOW])[0][1]["co"] != -1
