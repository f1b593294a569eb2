"""toolbench/OpenWeather-v0: answer weather questions with one OpenWeather API call written as curl."""

from __future__ import annotations

from functools import cache
from typing import Any

from toolbench.core.curl_env import CurlProgramEnv
from toolbench.core.transport import Router
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
    The F1 between the top-level fields of the call's response and those of the best reference's
    response (values compared exactly), paid when the episode ends. ``info`` carries ``success``
    (F1 = 1), ``score``, ``executable``, ``error``, ``precision``, ``recall`` and ``f1``.

    ## Starting State
    A task drawn with the env's seeded RNG from the split (``test``: 100 tasks, ``demo``: 18), or
    the one named by ``options={"task_id": ...}``.

    ## Episode End
    ``mode="program"`` (the only mode): the episode terminates after one action.

    ## Arguments
    ``gym.make("toolbench/OpenWeather-v0", split="test", mode="program", render_mode=None,
    max_steps=None, task_file=None)``; ``task_file`` loads a user's own JSONL task file, e.g. the
    original benchmark's ``test.jsonl``. ``render_mode="ansi"`` renders the episode transcript.
    """

    task_name = "OpenWeather"
    fixture_slug = "openweather"
    service_host = HOST
    api_key = DEMO_API_KEY

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # The service is stateless, so one router serves episodes and references alike, and every env
        # of a process (a vector env's worker holds many) shares it and its cache of answers.
        self._router = _router()

    def _episode_router(self) -> Router:
        return self._router

    def _fresh_router(self) -> Router:
        return self._router

    def api_docs(self) -> str:
        return API_DOCS
