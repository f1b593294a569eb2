"""toolbench/OpenWeather-v0: answer weather questions with one OpenWeather API call written as curl."""

from __future__ import annotations

from functools import cache
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from toolbench.core.curl_env import CurlProgramEnv, Execution, response_fields
from toolbench.core.scoring import deep_equal
from toolbench.core.tasks import Task
from toolbench.core.transport import HttpRequest, Router
from toolbench.mock_services.openweather import DEMO_API_KEY, HOST, World, create_app

_OPTIONAL = """units: (optional) 'standard' (Kelvin, m/s; the default), 'metric' (Celsius, m/s)
  or 'imperial' (Fahrenheit, mph).
mode: (optional) 'json' (the default) or 'xml'.
lang: (optional) language of the condition descriptions: en (default), fr, zh_cn, it, de, ru, ja, nl."""

API_DOCS = f"""# Current weather at a geographic point given as latitude {{lat}} and longitude {{lon}}
curl -X GET 'https://api.openweathermap.org/data/2.5/weather?lat={{lat}}&lon={{lon}}&appid={{API_KEY}}{{optional_params}}'

Parameters:
lat, lon: (required) latitude and longitude in decimal degrees.
appid: (required) your API key.
{_OPTIONAL}

# Current weather in a city called {{city}}
curl -X GET 'https://api.openweathermap.org/data/2.5/weather?q={{city}}&appid={{API_KEY}}{{optional_params}}'

Parameters:
q: (required) city name, optionally followed by a state code (US only) and an ISO 3166 country code,
  separated by commas, e.g. London,GB or Portland,ME,US.
appid: (required) your API key.
{_OPTIONAL}

# Current weather in the area of the zip code {{zipcode}}
curl -X GET 'https://api.openweathermap.org/data/2.5/weather?zip={{zipcode}}&appid={{API_KEY}}{{optional_params}}'

Parameters:
zip: (required) zip code, optionally followed by a country code (US when omitted), e.g. 10001 or 10001,US.
appid: (required) your API key.
{_OPTIONAL}

# 5-day forecast in 3-hour steps at latitude {{lat}} and longitude {{lon}}
curl -X GET 'https://api.openweathermap.org/data/2.5/forecast?lat={{lat}}&lon={{lon}}&appid={{API_KEY}}{{optional_params}}'

Parameters:
lat, lon: (required) latitude and longitude in decimal degrees.
appid: (required) your API key.
cnt: (optional) number of 3-hour steps to return (1-40).
{_OPTIONAL}

# 5-day forecast in 3-hour steps for a city called {{city}}
curl -X GET 'https://api.openweathermap.org/data/2.5/forecast?q={{city}}&appid={{API_KEY}}{{optional_params}}'

Parameters:
q: (required) city name, optionally followed by a state code (US only) and a country code, e.g. Paris,FR.
appid: (required) your API key.
cnt: (optional) number of 3-hour steps to return (1-40).
{_OPTIONAL}

# 5-day forecast in 3-hour steps for the zip code {{zipcode}}
curl -X GET 'https://api.openweathermap.org/data/2.5/forecast?zip={{zipcode}}&appid={{API_KEY}}{{optional_params}}'

Parameters:
zip: (required) zip code, optionally followed by a country code (US when omitted).
appid: (required) your API key.
cnt: (optional) number of 3-hour steps to return (1-40).
{_OPTIONAL}

# Air pollution right now at latitude {{lat}} and longitude {{lon}}
curl -X GET 'https://api.openweathermap.org/data/2.5/air_pollution?lat={{lat}}&lon={{lon}}&appid={{API_KEY}}'

Parameters:
lat, lon: (required) latitude and longitude in decimal degrees.
appid: (required) your API key.

# Hourly air pollution forecast for the next 4 days at latitude {{lat}} and longitude {{lon}}
curl -X GET 'https://api.openweathermap.org/data/2.5/air_pollution/forecast?lat={{lat}}&lon={{lon}}&appid={{API_KEY}}'

Parameters:
lat, lon: (required) latitude and longitude in decimal degrees.
appid: (required) your API key.

# Coordinates of up to {{k}} places named {{city}}
curl -X GET 'https://api.openweathermap.org/geo/1.0/direct?q={{city}}&limit={{k}}&appid={{API_KEY}}'

Parameters:
q: (required) place name, optionally with a state code (US only) and a country code.
appid: (required) your API key.
limit: (optional) how many places to return, up to 5 (1 when omitted).
"""


#: The parameters that name a call's place.
PLACE_PARAMETERS = frozenset({"q", "zip", "id", "lat", "lon"})
#: Open-ocean points given to three decimals, which no task names. A reference's call is asked again
#: with each of them in place of its own place: a response field one of them gets equal (cod, message,
#: cnt, base, dt, the XML root, a visibility of 10 km under a clear sky...) is not the task's, so it
#: earns nothing. Geocoding takes no coordinates: its entries are all the place's.
OTHER_PLACES = ((("lat", "-47.123"), ("lon", "-132.457")), (("lat", "71.913"), ("lon", "163.271")))
#: What a policy that knows only the call type writes: the task's endpoint with one fixed place of
#: the kind the task names (Moscow, Idaho, a town no task asks about, by name, zip code or id; a
#: point in the Indian Ocean).
FIXED_PLACES = {
    "q": (("q", "Moscow,ID,US"),),
    "zip": (("zip", "83844"),),
    "id": (("id", "5601538"),),
    "lat": (("lat", "-20.5"), ("lon", "75.5")),
}


def with_place(url: str, place: tuple[tuple[str, str], ...], keep_options: bool = True) -> str:
    """``url`` with its place parameters swapped for ``place`` (and, unless ``keep_options``, its
    optional parameters dropped: only the API key stays)."""
    parts = urlsplit(url)
    kept = [
        (name, value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
        if name not in PLACE_PARAMETERS and (keep_options or name == "appid")
    ]
    return urlunsplit(parts._replace(query=urlencode([*place, *kept], safe=",{}")))


@cache
def _router() -> Router:
    return Router({HOST: create_app(_world(), api_keys=[DEMO_API_KEY])})


@cache
def _world() -> World:
    return World()


class OpenWeatherEnv(CurlProgramEnv):
    """Answer a weather question with one call to a local OpenWeather.

    ## Description
    The ToolBench OpenWeather task (Xu et al. 2023): the agent reads a question ("what will the
    weather be like in Lyon over the next days, in Celsius?") and writes the curl command that asks
    the OpenWeather API for the answer. Nine call types are covered: current weather and 5-day
    forecast by city name, zip code or coordinates; current and forecast air pollution; and
    direct geocoding. The API is a local Flask fake over 382 real cities (with their real
    OpenWeather ids, US zip codes and names in other languages) whose weather is a deterministic
    function of place and a fixed clock (2024-05-14 12:00 UTC), so scores never drift.

    ## Action Space
    Free text (``UnicodeText``, up to 131,072 characters). The first line starting with ``curl``
    is the call; ``{API_KEY}`` is replaced by the episode's key. The command is parsed, never run
    by a shell: shell operators, expansions, file options and hosts other than
    ``api.openweathermap.org`` are refused with an error observation.

    ## Observation Space
    Text. After ``reset`` it is the question; after ``step`` it is the response body the call got
    (JSON or XML), or an error message.

    ## Rewards
    ``score`` (the reward, paid when the episode ends) is the F1 between the top-level fields of the
    call's response and those of the best reference's response (values compared exactly), over the
    fields that depend on the task's place: a field that the same call about another place gets
    equal (``cod``, ``message``, ``cnt``, ``base``, ``dt``...) counts for nothing, so the right endpoint
    about a fixed place earns about nothing. ``info`` carries ``success`` (every field equal),
    ``score``, ``executable``, ``error``, and ToolBench's own field F1 over all fields as
    ``precision``, ``recall`` and ``f1``.

    ## Starting State
    A task drawn with the env's seeded RNG from the split (``test``: 100 tasks, ``demo``: 18,
    ``train``: 1,000 more of the seen templates, ``unseen``: 100 in sentence frames and value formats
    none of the others use), or the one named by ``options={"task_id": ...}``.

    ## Episode End
    ``mode="program"`` (the only mode): the episode terminates after one action.

    ## Arguments
    ``gym.make("toolbench/OpenWeather-v0", split="test", mode="program", render_mode=None,
    max_steps=None, task_file=None)``; ``task_file`` loads a user's own JSONL task file, e.g. the
    original benchmark's ``test.jsonl``. ``render_mode="ansi"`` renders the episode transcript.
    """

    service_host = HOST
    api_key = DEMO_API_KEY
    generation_max_tokens = 128

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # The service is stateless, so one router serves episodes and references alike, and every env
        # of a process (a vector env's worker holds many) shares it and its cache of answers.
        self._router = _router()
        # A reference's fields another place's answer shares, by the reference's URL: the same for
        # every env that plays these tasks.
        self._shared_fields: dict[str, frozenset[Any]] = self._task_set.derived((type(self), "shared fields"))

    def _episode_router(self) -> Router:
        return self._router

    def _fresh_router(self) -> Router:
        return self._router

    def api_docs(self) -> str:
        return API_DOCS

    def shared_parts_actions(self, task: Task) -> list[str]:
        """The task's endpoint with a fixed place of the same kind (a city name, a zip code, a point)
        and none of its options."""
        url = self.parse_action(task.references[0]).request.url
        names = {name for name, _ in parse_qsl(urlsplit(url).query)}
        kind = next((name for name in ("q", "zip", "id", "lat") if name in names), "q")
        return [f"curl -X GET '{with_place(url, FIXED_PLACES[kind], keep_options=False)}'"]

    # ----------------------------------------------------------------- scoring
    def shared_fields(self, reference: Execution) -> frozenset[Any]:
        """The fields of ``reference``'s response that the same call about another place gets equal."""
        key = reference.request.url
        if key not in self._shared_fields:
            fields = reference.fields()
            shared: set[Any] = set()
            for place in OTHER_PLACES:
                other = self._router.send(_moved(reference.request, place))
                if other.ok:
                    theirs = response_fields(other)
                    shared.update(
                        name for name, value in fields.items() if name in theirs and deep_equal(value, theirs[name])
                    )
            self._shared_fields[key] = frozenset(shared)
        return self._shared_fields[key]


def _moved(request: HttpRequest, place: tuple[tuple[str, str], ...]) -> HttpRequest:
    return HttpRequest(request.method, with_place(request.url, place), request.headers, request.body)
