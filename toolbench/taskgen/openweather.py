"""OpenWeather task sets: 100 test tasks over the 9 call types ToolBench uses, 2 demos per type.

Questions vary wording, units (Celsius, Fahrenheit, Kelvin), languages, response format and, for
forecasts, how many 3-hour steps to return. Demos use cities that no test task mentions. ``train``
asks more of the same templates (each with more phrasings); ``unseen`` asks the same call types in
a grammar of its own (``openweather_unseen``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, quote_plus, urlsplit

from toolbench.core.curl import find_curl_command, parse_curl
from toolbench.core.transport import Router
from toolbench.mock_services.openweather import DEMO_API_KEY, HOST, City, World, create_app
from toolbench.taskgen import (
    SHIPPED_SEED,
    SHIPPED_SIZES,
    Files,
    aligner,
    fresh,
    generator,
    jsonl,
    rng_for,
    split_maker,
    spread,
)
from toolbench.taskgen.openweather_unseen import unseen_question
from toolbench.taskgen.openweather_values import Options, curl_for, place_of

#: The nine call types are the benchmark's own and every split asks all of them: ``unseen`` holds out
#: sentence frames and the ways values are written (its template ids), not call types.
HELD_OUT_KEYS: tuple[str, ...] = ()
#: A task's difficulty: how many parameters its call sets (the place, units, language, format, count).
HAS_DIFFICULTY = True
#: Questions are drawn from the first cities of ``cities.csv``. The cities after them are smaller
#: same-named places (London, Kentucky; Rome, Georgia) that make geocoding return several matches,
#: as the real one does; drawing from them too would rewrite every shipped task.
TASK_CITIES = 341
TYPES = [
    "current_city",
    "current_zip",
    "current_coords",
    "forecast_city",
    "forecast_zip",
    "forecast_coords",
    "air_current",
    "air_forecast",
    "geocoding",
]


def _coords(rng: Any, world: World) -> tuple[float, float]:
    if rng.random() < 0.5:
        city = rng.choice(world.cities)
        return round(city.lat, 2), round(city.lon, 2)
    return round(rng.uniform(-80, 80), 1), round(rng.uniform(-180, 180), 1)


def _choose(rng: Any, options: list[str]) -> tuple[str, int]:
    """``rng.choice(options)`` (the same draw) and the index of the phrasing chosen: its template."""
    text = rng.choice(options)
    return text, options.index(text)


def _coords_text(rng: Any, lat: float, lon: float) -> str:
    return rng.choice(
        [
            f"latitude {lat} and longitude {lon}",
            f"latitude {lat}, longitude {lon}",
            f"the point with (longitude, latitude) = ({lon}, {lat})",
            f"coordinates lat={lat}, lon={lon}",
        ]
    )


def _make(kind: str, rng: Any, world: World, cities: list[City], us_cities: list[City]) -> tuple[str, str, str]:
    """A question of call type ``kind``, its reference call and its template id (the call type and the
    sentence frame)."""
    if kind in ("current_city", "forecast_city", "current_zip", "forecast_zip", "current_coords", "forecast_coords"):
        forecast = kind.startswith("forecast")
        options = Options(rng, allow_cnt=forecast)
        path = "/data/2.5/forecast" if forecast else "/data/2.5/weather"
        if kind.endswith("city"):
            place_text, q = place_of(rng.choice(cities), world)
            where, query = f"in {place_text}", f"q={quote_plus(q, safe=',')}"
        elif kind.endswith("zip"):
            city = rng.choice(us_cities)
            where, query = (
                rng.choice(
                    [
                        f"in the {city.zip} zip code area",
                        f"around zip code {city.zip}",
                        f"for the area with zip code {city.zip}",
                    ]
                ),
                f"zip={city.zip}",
            )
        else:
            lat, lon = _coords(rng, world)
            where, query = "at " + _coords_text(rng, lat, lon), f"lat={lat}&lon={lon}"
        units = options.units_text
        if forecast and options.cnt:
            question, frame = _choose(
                rng,
                [
                    f"Give me the next {options.cnt} three-hour forecast steps {where}{units}.",
                    f"I only need the first {options.cnt} entries of the 3-hourly forecast {where}{units}.",
                ],
            )
            template = f"steps-{frame}"
        elif forecast:
            question, frame = _choose(
                rng,
                [
                    f"What will the weather be like {where} over the next few days{units}?",
                    f"Can you get me the 5-day forecast {where}{units}?",
                    f"I'm planning a trip; how does the weather look {where} for the coming days{units}?",
                    f"Show me the upcoming forecast {where}{units}.",
                ],
            )
            template = f"days-{frame}"
        else:
            question, frame = _choose(
                rng,
                [
                    f"What's the weather like {where} right now{units}?",
                    f"How warm is it {where} at the moment{units}?",
                    f"Give me the current conditions {where}{units}.",
                    f"I'm about to go outside {where}. What does the weather look like now{units}?",
                    f"Tell me the present weather {where}{units}.",
                ],
            )
            template = f"now-{frame}"
        return question + options.tail(), curl_for(path, query + options.query()), f"{kind}/{template}"
    if kind in ("air_current", "air_forecast"):
        lat, lon = _coords(rng, world)
        where = _coords_text(rng, lat, lon)
        if kind == "air_current":
            question, frame = _choose(
                rng,
                [
                    f"How clean is the air at {where} right now?",
                    f"What is the current air pollution level at {where}?",
                    f"Give me the air quality data at {where} at this moment.",
                ],
            )
            return question, curl_for("/data/2.5/air_pollution", f"lat={lat}&lon={lon}"), f"{kind}/now-{frame}"
        question, frame = _choose(
            rng,
            [
                f"What's the air quality outlook for the coming days at {where}?",
                f"Will the air be clean over the next few days at {where}?",
                f"Show me the air pollution forecast at {where}.",
            ],
        )
        return question, curl_for("/data/2.5/air_pollution/forecast", f"lat={lat}&lon={lon}"), f"{kind}/days-{frame}"
    if kind == "geocoding":
        if rng.random() < 0.5:
            name = rng.choice(sorted({c.name for c in world.cities if len(world.search(c.name)) > 1}))
            k = rng.randint(2, 5)
            question, frame = _choose(
                rng,
                [
                    f"Find the coordinates of up to {k} places called {name}.",
                    f"There are several towns named {name}; list at most {k} of them with their coordinates.",
                ],
            )
            return (
                question,
                curl_for("/geo/1.0/direct", f"q={quote_plus(name, safe=',')}&limit={k}"),
                f"{kind}/many-{frame}",
            )
        place_text, q = place_of(rng.choice(cities), world)
        question, frame = _choose(
            rng,
            [
                f"What are the latitude and longitude of {place_text}?",
                f"Where exactly is {place_text}? I need its geographic coordinates.",
            ],
        )
        return question, curl_for("/geo/1.0/direct", f"q={quote_plus(q, safe=',')}&limit=1"), f"{kind}/one-{frame}"
    raise ValueError(kind)


def generate_tasks(split: str, total: int, world: World, cities: list[City]) -> list[dict[str, Any]]:
    rng = rng_for("openweather", "tasks", split)
    us_cities = [city for city in cities if city.zip]
    records = []
    for index, kind in enumerate(spread(total, TYPES)):
        prompt, reference, template = _make(kind, rng, world, cities, us_cities)
        records.append(
            {
                "id": f"openweather-{split}-{index:04d}",
                "category": kind,
                "prompt": prompt,
                "completion": [reference],
                "template": template,
            }
        )
    return records


def check_references(records: list[dict[str, Any]], world: World) -> None:
    router = Router({HOST: create_app(world, api_keys=[DEMO_API_KEY])})
    for record in records:
        for reference in record["completion"]:
            command = parse_curl(find_curl_command(reference).replace("{API_KEY}", DEMO_API_KEY))
            response = router.send(command.request)
            if not response.ok:
                raise AssertionError(f"{record['id']}: reference fails with {response.status}: {response.text}")


def task_world(world: World) -> World:
    """The world questions are drawn from: ``world`` without the cities added after the task sets."""
    return World(cities=world.cities[:TASK_CITIES], now=world.now)


@aligner("openweather")
def alignment_records(count: int, seed: str) -> list[dict[str, Any]]:
    world = task_world(World())
    return generate_tasks(f"align-{seed}", count, world, list(world.cities))


#: Train's extra phrasings of the seen templates: a greeting before the question, thanks after it.
TRAIN_OPENERS = ["", "", "Hi! ", "Hello. ", "Quick question: ", "Hey, "]
TRAIN_CLOSERS = ["", "", " Thanks!", " Thank you.", " Much appreciated."]


def difficulty(reference: str) -> int:
    """The number of parameters the reference call sets, the API key aside (``lat`` and ``lon`` are one)."""
    url = find_curl_command(reference).split("'")[1]
    names = {name for name, _ in parse_qsl(urlsplit(url).query)} - {"appid", "lon"}
    return len(names)


def _candidates(split: str, seed: int) -> Iterator[tuple[str, str, str, str]]:
    """Endless (prompt, reference, template, call type) of ``split``: train's from the seen templates
    with a greeting or thanks around some, unseen's from the unseen grammar."""

    full_world = World()
    world = task_world(full_world)
    cities = list(world.cities)
    us_cities = [city for city in cities if city.zip]
    rng = rng_for("openweather", split, seed)
    while True:
        for kind in TYPES:
            if split == "unseen":
                prompt, reference, template = unseen_question(kind, rng, world, full_world, cities, us_cities)
            else:
                prompt, reference, template = _make(kind, rng, world, cities, us_cities)
                prompt = rng.choice(TRAIN_OPENERS) + prompt + rng.choice(TRAIN_CLOSERS)
            yield prompt, reference, template, kind


@functools.cache
def _held(split: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """The prompts a ``split`` task may not equal or nearly equal (test's and demo's, and for train the
    shipped unseen split's), and the answers it may not have (for train, test's and unseen's: a
    policy that memorises train must not answer them)."""
    world = task_world(World())
    test, demo = _seen_records("test", 100, world), _seen_records("demo", 2 * len(TYPES), world)
    prompts = [r["prompt"] for r in (*test, *demo)]
    answers: set[str] = set()
    if split == "train":
        unseen = make_split("unseen", SHIPPED_SIZES["unseen"], SHIPPED_SEED)
        prompts += [r["prompt"] for r in unseen]
        answers = {reference for r in (*test, *unseen) for reference in r["completion"]}
    return tuple(prompts), frozenset(answers)


def _seen_records(split: str, total: int, world: World) -> list[dict[str, Any]]:
    demo_cities = [city for i, city in enumerate(world.cities) if i % 7 == 3]
    test_cities = [city for i, city in enumerate(world.cities) if i % 7 != 3]
    return generate_tasks(split, total, world, demo_cities if split == "demo" else test_cities)


@split_maker("openweather")
def make_split(split: str, size: int, seed: int) -> list[dict[str, Any]]:
    """``size`` train tasks (the seen templates) or unseen tasks (the unseen grammar), none of them a
    test, demo or (for train) shipped unseen prompt, nor a near duplicate of one; no train task has a
    test or unseen task's answer."""
    held, answers = _held(split)
    chosen = fresh(_candidates(split, seed), size, held, batch=9, keep=lambda candidate: candidate[1] not in answers)
    return [
        {
            "id": f"openweather-{split}-{index:04d}",
            "category": kind,
            "prompt": prompt,
            "completion": [reference],
            "template": template,
            "difficulty": difficulty(reference),
        }
        for index, (prompt, reference, template, kind) in enumerate(chosen)
    ]


@generator("openweather")
def generate() -> Files:
    world = World()
    drawn_from = task_world(world)
    # Hold out every seventh city for the demonstrations.
    demo_cities = [city for i, city in enumerate(drawn_from.cities) if i % 7 == 3]
    test_cities = [city for i, city in enumerate(drawn_from.cities) if i % 7 != 3]
    files = {}
    for split, total, cities in (("test", 100, test_cities), ("demo", 2 * len(TYPES), demo_cities)):
        records = generate_tasks(split, total, drawn_from, cities)
        check_references(records, world)  # the references must work against the whole world
        files[f"{split}.jsonl"] = jsonl(records)
    for split in ("train", "unseen"):
        records = make_split(split, SHIPPED_SIZES[split], SHIPPED_SEED)
        check_references(records, world)
        files[f"{split}.jsonl"] = jsonl(records)
    return files
