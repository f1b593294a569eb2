"""Home Search world (the listings database) and task sets.

100 test tasks and 10 demonstrations. Three criterion setters (balconies, floor number, commute
time) never appear in a demonstration, as in ToolBench's unseen-function test. Every task is
built around a real listing, so its search returns at least that home. ``train`` (1,000) uses
the same five sentence frames with more phrasings of the criteria; ``unseen`` (100) is written in
a grammar of its own (``home_search_unseen``). Every record names its frame in ``template``.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import fields
from functools import cache
from typing import Any

from toolbench.core.program import parse_program
from toolbench.mock_services.home_search import FUNCTIONS, Home, HomeSearchAPI
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
)
from toolbench.taskgen import home_search_unseen as unseen_grammar

# City, state, sale price per square foot, monthly rent per square foot (rough 2023 levels).
CITIES = [
    ("Pittsburgh", "PA", 150, 1.3),
    ("Aurora", "CO", 280, 1.9),
    ("Lincoln", "NE", 170, 1.2),
    ("Austin", "TX", 330, 2.0),
    ("Seattle", "WA", 520, 2.9),
    ("San Diego", "CA", 650, 3.4),
    ("Denver", "CO", 420, 2.3),
    ("Boston", "MA", 650, 3.6),
    ("Chicago", "IL", 260, 2.1),
    ("Miami", "FL", 480, 3.0),
    ("Atlanta", "GA", 260, 1.9),
    ("Phoenix", "AZ", 290, 1.6),
    ("Portland", "OR", 380, 2.2),
    ("Nashville", "TN", 300, 2.0),
    ("Raleigh", "NC", 260, 1.6),
    ("Columbus", "OH", 190, 1.4),
    ("Minneapolis", "MN", 240, 1.7),
    ("Kansas City", "MO", 180, 1.3),
    ("Salt Lake City", "UT", 360, 1.8),
    ("Sacramento", "CA", 380, 2.0),
    ("Orlando", "FL", 290, 1.9),
    ("Tampa", "FL", 300, 2.0),
    ("Charlotte", "NC", 260, 1.6),
    ("Dallas", "TX", 270, 1.8),
    ("Houston", "TX", 190, 1.5),
    ("San Antonio", "TX", 180, 1.3),
    ("Las Vegas", "NV", 260, 1.6),
    ("Albuquerque", "NM", 210, 1.2),
    ("Tucson", "AZ", 230, 1.3),
    ("Omaha", "NE", 180, 1.2),
    ("Boise", "ID", 320, 1.6),
    ("Richmond", "VA", 250, 1.6),
    ("Madison", "WI", 250, 1.6),
    ("Spokane", "WA", 250, 1.4),
    ("Buffalo", "NY", 170, 1.2),
    ("Cleveland", "OH", 120, 1.1),
    ("Detroit", "MI", 100, 1.1),
    ("Milwaukee", "WI", 150, 1.2),
]
BUY_WEIGHTS = {"house": 40, "townhouse": 15, "condo": 20, "land": 5, "multi-family": 8, "mobile": 6, "co-op": 6}
RENT_WEIGHTS = {"apartment": 50, "house": 20, "townhouse": 15, "condo": 15}
PRICE_FACTOR = {
    "house": 1.0,
    "townhouse": 0.95,
    "condo": 0.9,
    "land": 0.15,
    "multi-family": 1.1,
    "mobile": 0.4,
    "co-op": 0.8,
    "apartment": 0.95,
}
STACKED = ("apartment", "condo", "co-op")  # homes on a floor of a building
TYPE_WORDS = {
    "house": "house",
    "townhouse": "townhouse",
    "condo": "condo",
    "land": "plot of land",
    "multi-family": "multi-family home",
    "mobile": "mobile home",
    "co-op": "co-op",
    "apartment": "apartment",
}
UNSEEN_IN_DEMOS = ("set_num_balconies", "set_floor_number", "set_max_commute_time")
#: Home Search has no activities, products or tools to hold out: ``unseen`` holds out its templates.
HELD_OUT_KEYS: tuple[str, ...] = ()
#: Train and unseen records carry ``difficulty``: how many criteria of its own the task sets.
HAS_DIFFICULTY = True
#: The calls every task makes (city, buy or rent, search): not part of a task's difficulty.
SHARED_CALLS = ("API.set_location(", "API.set_buy_or_rent(", "API.search(")


# ------------------------------------------------------------------------------ listings
@cache
def listings() -> tuple[Home, ...]:
    """The listings, generated once per process."""
    return tuple(generate_listings())


def generate_listings() -> list[Home]:
    rng = rng_for("home_search", "listings")
    homes: list[Home] = []
    for city, state, price_sqft, rent_sqft in CITIES:
        for _ in range(rng.randint(60, 75)):
            mode = "buy" if rng.random() < 0.55 else "rent"
            weights = BUY_WEIGHTS if mode == "buy" else RENT_WEIGHTS
            kind = rng.choices(list(weights), weights=list(weights.values()))[0]
            if kind == "land":
                beds, baths, square_feet = 0, 0.0, rng.randrange(2000, 40000, 100)
            else:
                beds = rng.choices([0, 1, 2, 3, 4, 5, 6], weights=[4 if kind in STACKED else 0, 14, 26, 28, 17, 8, 3])[
                    0
                ]
                baths = float(min(5.0, max(1.0, round((beds * 0.75 + rng.uniform(-0.5, 1.0)) * 2) / 2)))
                square_feet = int(round((380 + beds * 430) * rng.uniform(0.75, 1.35), -1))
            factor = PRICE_FACTOR[kind] * rng.uniform(0.8, 1.25)
            if mode == "buy":
                price = int(round(square_feet * price_sqft * factor, -3))
            else:
                price = max(600, int(round(square_feet * rent_sqft * factor / 5) * 5))
            big = kind in ("house", "townhouse", "multi-family")
            garages = (
                0 if kind == "land" else rng.choices([0, 1, 2, 3], weights=[3, 4, 5, 1] if big else [8, 3, 0, 0])[0]
            )
            pools = 0 if kind in ("land", "mobile") else rng.choices([0, 1, 2], weights=[80, 17, 3])[0]
            balconies = 0 if kind in ("land", "mobile") else rng.choices([0, 1, 2, 3], weights=[4, 4, 2, 1])[0]
            floor = 0 if kind == "land" else (rng.randint(1, 25) if kind in STACKED else 1)
            homes.append(
                Home(
                    id=f"H{len(homes) + 1:05d}",
                    city=city,
                    state=state,
                    buy_or_rent=mode,
                    home_type=kind,
                    price=price,
                    beds=beds,
                    baths=baths,
                    square_feet=square_feet,
                    garages=garages,
                    swimming_pools=pools,
                    balconies=balconies,
                    floor=floor,
                    commute_time=rng.randint(5, 75),
                )
            )
    return homes


def listings_csv(homes: list[Home]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([f.name for f in fields(Home)])
    for home in homes:
        writer.writerow([getattr(home, f.name) for f in fields(Home)])
    return buffer.getvalue()


# ------------------------------------------------------------------------------ tasks
def _money(value: int) -> str:
    return f"${value:,}"


def _count(n: float, noun: str) -> str:
    return f"{n:g} {noun}" + ("" if n == 1 else "s")


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _listing(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _say(rng: Any, variety: bool, phrase: str, *others: str) -> str:
    """``phrase``, or with ``variety`` (train) one of it and ``others``, the same criterion said otherwise."""
    return rng.choice([phrase, *others]) if variety else phrase


def _criteria(rng: Any, home: Home, allow_unseen: bool, variety: bool = False) -> list[tuple[str, str]]:
    """(program line, phrase) pairs for 2-5 criteria that ``home`` satisfies."""
    unit = "/month" if home.buy_or_rent == "rent" else ""
    options: list[list[tuple[str, str]]] = []
    if home.beds > 0:
        options.append(
            [
                (
                    f"API.set_num_beds({home.beds})",
                    rng.choice([_count(home.beds, "bedroom"), f"at least {_count(home.beds, 'bedroom')}"]),
                )
            ]
        )
        baths = _say(rng, variety, _count(home.baths, "bathroom"), _count(home.baths, "bath"))
        options.append([(f"API.set_num_baths({home.baths:g})", baths)])
    high = int(math.ceil(home.price * rng.uniform(1.0, 1.4) / (50 if unit else 5000))) * (50 if unit else 5000)
    low = int(home.price * rng.uniform(0.6, 1.0) // (50 if unit else 5000)) * (50 if unit else 5000)
    options.append(
        rng.choice(
            [
                [
                    (
                        f"API.set_max_price({high})",
                        _say(
                            rng,
                            variety,
                            f"a budget of {_money(high)}{unit}",
                            f"a maximum price of {_money(high)}{unit}",
                            f"a price of at most {_money(high)}{unit}",
                        ),
                    )
                ],
                [
                    (f"API.set_min_price({low})", ""),
                    (
                        f"API.set_max_price({high})",
                        _say(
                            rng,
                            variety,
                            f"a price between {_money(low)} and {_money(high)}{unit}",
                            f"a price from {_money(low)} to {_money(high)}{unit}",
                        ),
                    ),
                ],
            ]
        )
    )
    small = int(home.square_feet * rng.uniform(0.7, 1.0) // 50) * 50
    large = int(math.ceil(home.square_feet * rng.uniform(1.0, 1.4) / 50)) * 50
    options.append(
        rng.choice(
            [
                [
                    (
                        f"API.set_min_square_feet({small})",
                        _say(rng, variety, f"at least {small:,} square feet", f"at least {small:,} sq ft"),
                    )
                ],
                [
                    (f"API.set_min_square_feet({small})", ""),
                    (f"API.set_max_square_feet({large})", f"{small:,} to {large:,} square feet"),
                ],
                [(f"API.set_max_square_feet({large})", f"no more than {large:,} square feet")],
            ]
        )
    )
    if home.garages:
        options.append(
            [(f"API.set_num_garages({home.garages})", f"{home.garages} garage{'s' if home.garages > 1 else ''}")]
        )
    if home.swimming_pools:
        n = home.swimming_pools
        options.append([(f"API.set_num_swimming_pools({n})", "a swimming pool" if n == 1 else f"{n} swimming pools")])
    if allow_unseen:
        if home.balconies:
            n = home.balconies
            options.append([(f"API.set_num_balconies({n})", "a balcony" if n == 1 else f"{n} balconies")])
        if home.home_type in STACKED:
            options.append([(f"API.set_floor_number({home.floor})", f"on the {_ordinal(home.floor)} floor")])
        commute = int(math.ceil((home.commute_time + rng.randint(0, 20)) / 5)) * 5
        options.append([(f"API.set_max_commute_time({commute})", f"a commute of at most {commute} minutes")])
    rng.shuffle(options)
    chosen = options[: rng.randint(2, min(5, len(options)))]
    return [pair for option in chosen for pair in option]


#: The seen sentence frames, in the order of their template ids ("hs-0" ... "hs-4").
def _frames(verb: str, article: str, wants: str, city: str, detail: str) -> list[str]:
    return [
        f"I want to {verb} {article} {wants} in {city} with {detail}.",
        f"Can you help me find {article} {wants} to {verb} in {city}? I need {detail}.",
        f"Search for {article} {wants} {'for sale' if verb == 'buy' else 'for rent'} in {city} with {detail}.",
        f"My family is moving to {city} and we'd like to {verb} {article} {wants}: {detail}.",
        f"Looking to {verb} in {city}: {article} {wants} with {detail}, please.",
    ]


def _task(rng: Any, home: Home, allow_unseen: bool, variety: bool = False) -> tuple[str, str, str]:
    """A seen-template task on ``home``: its prompt, program and template id."""
    mode_types = list(RENT_WEIGHTS if home.buy_or_rent == "rent" else BUY_WEIGHTS)
    # extra acceptable types are homes to live in: "land" only when the listing itself is land
    others = [t for t in mode_types if t not in (home.home_type, "land")]
    types = [home.home_type] + rng.sample(others, rng.choice([0, 0, 1, 2]))
    rng.shuffle(types)
    criteria = _criteria(rng, home, allow_unseen, variety)
    lines = [
        f'API.set_location("{home.city}")',
        f'API.set_buy_or_rent("{home.buy_or_rent}")',
        "API.select_home_type([" + ", ".join(f'"{t.title()}"' for t in types) + "])",
    ]
    lines += [line for line, _ in criteria] + ["API.search()"]
    phrases = [phrase for _, phrase in criteria if phrase]
    wants = _listing([TYPE_WORDS[t] for t in types])
    article = "an" if wants[0] in "aeiou" else "a"
    detail = ", ".join(phrases[:-1]) + (" and " if len(phrases) > 1 else "") + phrases[-1]
    verb = home.buy_or_rent
    frames = _frames(verb, article, wants, home.city, detail)
    prompt = rng.choice(frames)
    return prompt, "\n".join(lines), f"hs-{frames.index(prompt)}"


def generate_tasks(split: str, total: int, homes: list[Home], allow_unseen: bool | None = None) -> list[dict[str, Any]]:
    rng = rng_for("home_search", "tasks", split)
    if allow_unseen is None:
        allow_unseen = split != "demo"
    # Demos and tests draw from different listings, so no test answer appears among the demos.
    pool = [home for index, home in enumerate(homes) if (index % 10 == 0) == (split == "demo")]
    records = []
    for index, home in enumerate(rng.sample(pool, total)):
        prompt, program, template = _task(rng, home, allow_unseen)
        records.append(
            {"id": f"home_search-{split}-{index:04d}", "prompt": prompt, "completion": [program], "template": template}
        )
    return records


def difficulty(program: str) -> int:
    """The number of the task's own criteria calls (its home types and criteria)."""
    return sum(1 for line in program.splitlines() if line.startswith("API.") and not line.startswith(SHARED_CALLS))


def _unseen_task(rng: Any, home: Home) -> tuple[str, str, str]:
    """A task in the unseen grammar: its prompt, program and template id."""
    mode_types = list(RENT_WEIGHTS if home.buy_or_rent == "rent" else BUY_WEIGHTS)
    others = [t for t in mode_types if t not in (home.home_type, "land")]
    types = [home.home_type] + rng.sample(others, rng.choice([0, 1, 1, 2]))
    rng.shuffle(types)
    chosen = unseen_grammar.criteria(rng, home)
    lines = [
        f'API.set_location("{home.city}")',
        f'API.set_buy_or_rent("{home.buy_or_rent}")',
        "API.select_home_type([" + ", ".join(f'"{t.title()}"' for t in sorted(types)) + "])",
    ]
    lines += [line for program, _ in chosen for line in program] + ["API.search()"]
    template = rng.choice(unseen_grammar.FRAMES)[0]
    other = rng.choice([c for c, *_ in CITIES if c != home.city])
    prompt = unseen_grammar.render(rng, template, home.city, home.buy_or_rent, types, [p for _, p in chosen], other)
    return prompt, "\n".join(lines), template


def _candidates(split: str, seed: int, homes: tuple[Home, ...]) -> Any:
    """An endless stream of (prompt, program, template) for ``split`` from seed ``seed``."""
    rng = rng_for("home_search", "split", split, seed)
    while True:
        home = rng.choice(homes)
        if split == "unseen":
            yield _unseen_task(rng, home)
        else:
            yield _task(rng, home, allow_unseen=True, variety=True)


@split_maker("home_search")
def make_split(split: str, size: int, seed: int) -> list[dict[str, Any]]:
    """``size`` train tasks (the seen templates, with more phrasings per template) or unseen tasks (the
    unseen grammar), none of them a test, demo or (for train) shipped unseen prompt or a near duplicate."""
    homes = listings()
    held = [
        r["prompt"] for name, total in (("test", 100), ("demo", 10)) for r in generate_tasks(name, total, list(homes))
    ]
    if split == "train":
        shipped = make_split("unseen", SHIPPED_SIZES["unseen"], SHIPPED_SEED)
        held += [r["prompt"] for r in shipped]
    return [
        {
            "id": f"home_search-{split}-{index:04d}",
            "prompt": prompt,
            "completion": [program],
            "template": template,
            "difficulty": difficulty(program),
        }
        for index, (prompt, program, template) in enumerate(fresh(_candidates(split, seed, homes), size, held, batch=8))
    ]


def check_references(records: list[dict[str, Any]], homes: list[Home]) -> None:
    for record in records:
        api = HomeSearchAPI(tuple(homes))
        for call in parse_program(record["completion"][0], FUNCTIONS, {}):
            getattr(api, call.function)(*call.args, **call.kwargs)
        if not api.results:
            raise AssertionError(f"{record['id']}: the reference search finds no home")


@aligner("home_search")
def alignment_records(count: int, seed: str) -> list[dict[str, Any]]:
    # The functions held out of the demonstrations stay held out of training data too.
    return generate_tasks(f"align-{seed}", count, generate_listings(), allow_unseen=False)


@generator("home_search")
def generate() -> Files:
    homes = list(listings())
    files = {"listings.csv": listings_csv(homes)}
    for split, total in (("test", 100), ("demo", 10)):
        records = generate_tasks(split, total, homes)
        check_references(records, homes)
        if split == "demo":
            used = {name for r in records for name in UNSEEN_IN_DEMOS if name in r["completion"][0]}
            assert not used, used
        files[f"{split}.jsonl"] = jsonl(records)
    for split, size in SHIPPED_SIZES.items():
        records = make_split(split, size, SHIPPED_SEED)
        check_references(records, homes)
        files[f"{split}.jsonl"] = jsonl(records)
    return files
