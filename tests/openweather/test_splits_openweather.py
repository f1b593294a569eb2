"""OpenWeather's train and unseen splits: a parser fitted to the seen phrasings reads test, not unseen.

The parser is what an optimiser writes after reading the demo and train prompts: regular
expressions over their phrasings for the call type, the place and the options, a table of place
names learned from the train answers, and the reference format to write the call in.
"""

import re
from urllib.parse import parse_qsl, quote_plus, urlsplit

import gymnasium as gym
import pytest

import toolbench
from tests.episodes import assert_the_oracle_solves, play
from toolbench.taskgen import SHIPPED_SIZES
from toolbench.taskgen.openweather_values import LANGUAGE_NAMES

ENV_ID = "toolbench/OpenWeather-v0"
BASE = "https://api.openweathermap.org"
NUMBER = r"(-?\d+(?:\.\d+)?)"
COORDS = [
    (re.compile(rf"latitude {NUMBER},? (?:and )?longitude {NUMBER}"), (1, 2)),
    (re.compile(rf"\(longitude, latitude\) = \({NUMBER}, {NUMBER}\)"), (2, 1)),
    (re.compile(rf"lat={NUMBER}, lon={NUMBER}"), (1, 2)),
]
ZIP = re.compile(r"zip code (\d{5})|(\d{5}) zip code")
CITY = re.compile(
    r"\b(?:in|of|is) ([A-Z][^?.]*?)(?= right now| at the moment| over the next| for the coming| in Celsius| in metric"
    r"| in degrees| in Fahrenheit| using| in °F| in Kelvin| in standard| for the|\?|\.|$)"
)
MANY = re.compile(r"(?:up to|at most) (\d+)")
MANY_NAME = re.compile(r"places called ([^.]+)\.|towns named ([^;]+);")
COUNT = re.compile(r"next (\d+) three-hour|first (\d+) entries")
UNITS = [("metric", r"Celsius|metric"), ("imperial", r"Fahrenheit|imperial|°F"), ("standard", r"Kelvin|standard")]
LANGUAGES = {name: code for code, name in LANGUAGE_NAMES.items()}


def query_of(reference):
    return dict(parse_qsl(urlsplit(reference.split("'")[1]).query))


def learn_places(tasks):
    """Place text -> ``q``, from the seen prompts and their answers."""
    table = {}
    for task in tasks:
        q, match = query_of(task.references[0]).get("q"), CITY.search(task.prompt)
        if q and match:
            table.setdefault(match.group(1), q)
    return table


def parse(prompt, places):
    """The call the seen phrasings say ``prompt`` asks for, or None."""
    words = prompt.lower()
    params = []
    if "air" in words or "pollution" in words:
        path = "/data/2.5/air_pollution" + (
            "/forecast" if re.search(r"forecast|outlook|coming days|next few", words) else ""
        )
    elif re.search(r"places called|towns named|latitude and longitude of|where exactly is", words):
        path = "/geo/1.0/direct"
    elif re.search(r"forecast|next few days|coming days|three-hour|3-hourly|upcoming|entries", words):
        path = "/data/2.5/forecast"
    else:
        path = "/data/2.5/weather"
    if path == "/geo/1.0/direct":
        many, name = MANY.search(prompt), MANY_NAME.search(prompt)
        if many and name:
            params += [("q", name.group(1) or name.group(2)), ("limit", many.group(1))]
        else:
            city = CITY.search(prompt)
            if not city:
                return None
            params += [("q", places.get(city.group(1), city.group(1))), ("limit", "1")]
        return path, params
    for pattern, (lat, lon) in COORDS:
        match = pattern.search(prompt)
        if match:
            params += [("lat", match.group(lat)), ("lon", match.group(lon))]
            break
    else:
        if path.startswith("/data/2.5/air"):
            return None
        code, city = ZIP.search(prompt), CITY.search(prompt)
        if code:
            params.append(("zip", code.group(1) or code.group(2)))
        elif city:
            params.append(("q", places.get(city.group(1), city.group(1).replace(", ", ","))))
        else:
            return None
    if path.startswith("/data/2.5/air"):
        return path, params
    count = COUNT.search(prompt)
    if count:
        params.append(("cnt", count.group(1) or count.group(2)))
    params += [("units", units) for units, pattern in UNITS if re.search(pattern, prompt)][:1]
    language = re.search(r"answer in ([A-Z][a-z]+(?: [A-Z][a-z]+)?)\.", prompt)
    if language and language.group(1) in LANGUAGES:
        params.append(("lang", LANGUAGES[language.group(1)]))
    if "XML" in prompt:
        params.append(("mode", "xml"))
    return path, params


def parser_action(prompt, places):
    parsed = parse(prompt, places)
    if parsed is None:
        return "no call"
    path, params = parsed
    query = "&".join(f"{name}={quote_plus(value, safe=',')}" for name, value in params)
    return f"curl -X GET '{BASE}{path}?{query}&appid={{API_KEY}}'"


@pytest.fixture(scope="module")
def places():
    return learn_places([*toolbench.load_tasks("OpenWeather", "demo"), *toolbench.load_tasks("OpenWeather", "train")])


def solved_share(split, places):
    env = gym.make(ENV_ID, split=split, disable_env_checker=True).unwrapped
    solved = [play(env, task.id, [parser_action(task.prompt, places)])[4]["success"] for task in env.tasks]
    return sum(solved) / len(solved)


def test_the_seen_parser_solves_most_of_test_and_train(places):
    assert solved_share("test", places) >= 0.8
    assert solved_share("demo", places) >= 0.8


def test_the_seen_parser_solves_almost_none_of_unseen(places):
    assert solved_share("unseen", places) <= 0.10


@pytest.mark.parametrize("split", ["train", "unseen"])
def test_the_oracle_solves_every_unseen_task_and_a_spread_of_train(split):
    env = gym.make(ENV_ID, split=split, disable_env_checker=True).unwrapped
    assert_the_oracle_solves(env, env.tasks if split == "unseen" else env.tasks[::10])


def test_splits_are_shipped_with_their_templates_and_difficulty():
    train, unseen = toolbench.load_tasks("OpenWeather", "train"), toolbench.load_tasks("OpenWeather", "unseen")
    assert len(train) >= SHIPPED_SIZES["train"] and len(unseen) >= SHIPPED_SIZES["unseen"]
    seen = {t.get("template") for split in ("test", "demo") for t in toolbench.load_tasks("OpenWeather", split)}
    assert seen <= {t.get("template") for t in train}
    assert not {t.get("template") for t in train} & {t.get("template") for t in unseen}
    assert {t.category for t in unseen} == {t.category for t in train}  # every call type, in new words
    assert all(isinstance(t.get("difficulty"), int) and t.get("difficulty") >= 1 for t in [*train, *unseen])


def test_copying_the_closest_seen_answer_does_not_pass_unseen():
    from toolbench.agents.cheap import POLICIES

    policy = POLICIES["nearest_copy"]()
    env = gym.make(ENV_ID, split="unseen", disable_env_checker=True).unwrapped
    solved = 0
    for task in env.tasks:
        observation, info = env.reset(options={"task_id": task.id})
        policy.begin(env, task, observation, info)
        solved += env.step(policy.act(observation, info))[4]["success"]
    assert solved / len(env.tasks) <= 0.10
