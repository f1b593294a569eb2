"""The unseen grammar of Home Search requests: sentence frames, phrasings and value formats that
no test, demo, train or alignment task uses.

A request is built from structured criteria first (the program comes from those), then written
out: counts in words, prices as "$850k", "1.2 million" or "2,400 a month", home types by other
names, criteria in shuffled order, and a distractor sentence that names another city, home or
price. Reading it takes understanding, not the seen templates' regular expressions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from toolbench.mock_services.home_search import Home
from toolbench.taskgen.numbers import number_words, ordinal_words

#: Other names of the home types (several per type; the API's names are in the program).
TYPE_NAMES = {
    "house": ["single-family house", "detached house", "standalone house"],
    "townhouse": ["townhome", "row house"],
    "condo": ["condominium", "condo unit"],
    "land": ["vacant lot", "building lot", "parcel of land"],
    "multi-family": ["multi-unit property", "multifamily building"],
    "mobile": ["manufactured home", "trailer home"],
    "co-op": ["housing co-op unit", "cooperative"],
    "apartment": ["flat", "apartment unit"],
}
#: Other words for buying and renting.
BUY_WORDS = ["purchase", "own", "put money into", "buy outright"]
RENT_WORDS = ["lease", "rent long-term", "sign a lease on"]


@dataclass
class Request:
    """A request's structured values: the program and the text both come from these."""

    home: Home
    types: list[str]
    criteria: list[tuple[list[str], str]] = field(default_factory=list)  # (program lines, phrase)


def _round_up(value: float, step: int) -> int:
    return int(math.ceil(value / step)) * step


def _round_down(value: float, step: int) -> int:
    return int(value // step) * step


def _buy_price(rng: Any, value: int) -> tuple[int, str]:
    """A price at or above ``value`` and its text: "$850k", "1.2 million", "$1,250,000"."""
    style = rng.choice(["k", "million", "plain"])
    if style == "million" and value >= 1_000_000:
        limit = _round_up(value * rng.uniform(1.0, 1.3), 100_000)
        return limit, f"{limit / 1_000_000:g} million"
    if style in ("k", "million"):
        limit = _round_up(value * rng.uniform(1.0, 1.3), 1000)
        return limit, f"${limit // 1000:,}k"
    limit = _round_up(value * rng.uniform(1.0, 1.3), 2500)
    return limit, f"{limit:,} dollars"


def _rent_price(rng: Any, value: int) -> tuple[int, str]:
    limit = _round_up(value * rng.uniform(1.0, 1.3), 25)
    return limit, rng.choice([f"{limit:,} a month", f"${limit:,} monthly", f"{limit:,} dollars per month"])


def _count_phrase(rng: Any, n: int, one: str, many: str) -> str:
    if n == 1:
        return rng.choice([f"a {one}", f"one {one}", f"at least one {one}"])
    return rng.choice(
        [f"{number_words(n)} {many}", f"at least {number_words(n)} {many}", f"{number_words(n)} or more {many}"]
    )


def _baths_phrase(rng: Any, baths: float) -> str:
    whole = int(baths)
    if baths != whole:
        words = "one and a half" if whole == 1 else f"{number_words(whole)} and a half"
        return rng.choice([f"{words} baths", f"{words} bathrooms"])
    return _count_phrase(rng, whole, "bathroom", rng.choice(["bathrooms", "baths"]))


def _commute_phrase(rng: Any, minutes: int) -> str:
    spoken = {30: "half an hour", 45: "three quarters of an hour", 60: "an hour", 90: "an hour and a half"}
    said = [f"{minutes} minutes"] + ([f"{number_words(minutes)} minutes"] if minutes < 100 else [])
    amount = spoken.get(minutes) or rng.choice(said)
    return rng.choice(
        [f"no more than {amount} to get to work", f"a commute of {amount} at most", f"{amount} or less of commuting"]
    )


def criteria(rng: Any, home: Home) -> list[tuple[list[str], str]]:
    """2-5 criteria ``home`` satisfies, each as (program lines, phrase in the unseen grammar)."""
    rent = home.buy_or_rent == "rent"
    options: list[tuple[list[str], str]] = []
    if home.beds > 0:
        options.append(([f"API.set_num_beds({home.beds})"], _count_phrase(rng, home.beds, "bedroom", "bedrooms")))
        options.append(([f"API.set_num_baths({home.baths:g})"], _baths_phrase(rng, home.baths)))
    high, high_text = (_rent_price if rent else _buy_price)(rng, home.price)
    if rng.random() < 0.6:
        options.append(
            (
                [f"API.set_max_price({high})"],
                rng.choice([f"under {high_text}", f"{high_text} tops", f"no more than {high_text}"]),
            )
        )
    else:
        low = _round_down(home.price * rng.uniform(0.6, 0.95), 25 if rent else 1000)
        low_text = f"{low:,}" if rent else f"${low // 1000:,}k"
        options.append(
            (
                [f"API.set_min_price({low})", f"API.set_max_price({high})"],
                rng.choice(
                    [
                        f"priced somewhere from {low_text} up to {high_text}",
                        f"not below {low_text} and not above {high_text}",
                    ]
                ),
            )
        )
    small = _round_down(home.square_feet * rng.uniform(0.7, 1.0), 50)
    large = _round_up(home.square_feet * rng.uniform(1.0, 1.4), 50)
    options.append(
        rng.choice(
            [
                (
                    [f"API.set_min_square_feet({small})"],
                    rng.choice([f"{small:,} sq. ft. or more", f"no smaller than {small:,} sqft"]),
                ),
                (
                    [f"API.set_max_square_feet({large})"],
                    rng.choice([f"{large:,} sq. ft. at the most", f"no bigger than {large:,} sqft"]),
                ),
                (
                    [f"API.set_min_square_feet({small})", f"API.set_max_square_feet({large})"],
                    f"somewhere in the {small:,}-{large:,} sqft range",
                ),
            ]
        )
    )
    if home.garages:
        options.append(
            ([f"API.set_num_garages({home.garages})"], _count_phrase(rng, home.garages, "garage", "garages"))
        )
    if home.swimming_pools:
        n = home.swimming_pools
        options.append(([f"API.set_num_swimming_pools({n})"], _count_phrase(rng, n, "pool", "pools")))
    if home.balconies:
        n = home.balconies
        options.append(([f"API.set_num_balconies({n})"], _count_phrase(rng, n, "balcony", "balconies")))
    if home.home_type in ("apartment", "condo", "co-op"):
        floor = home.floor
        options.append(
            (
                [f"API.set_floor_number({floor})"],
                rng.choice([f"up on floor {number_words(floor)}", f"on the {ordinal_words(floor)} floor"]),
            )
        )
    commute = _round_up(home.commute_time + rng.randint(0, 20), 15)
    options.append(([f"API.set_max_commute_time({commute})"], _commute_phrase(rng, commute)))
    rng.shuffle(options)
    return options[: rng.randint(2, min(5, len(options)))]


def type_phrase(rng: Any, types: list[str]) -> str:
    names = [rng.choice(TYPE_NAMES[t]) for t in types]
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + ", or " + names[-1] if len(names) > 2 else f"{names[0]} or {names[1]}"


def distractor(rng: Any, city: str, other: str) -> str:
    """A sentence about another city's homes or prices, which the request is not about."""
    return rng.choice(
        [
            f"My cousin just sold her four-bedroom place in {other} for $640k.",
            f"We looked at two condos in {other} last spring, but that fell through.",
            f"A friend pays 1,900 a month for a flat in {other} with three bathrooms.",
            f"Forget the listings in {other} I sent last week; prices there got silly.",
            f"Our old house in {other} had a pool and two garages, which we won't need now.",
            f"I work remotely for a company based in {other}, so that city doesn't matter.",
        ]
    )


def joined(phrases: list[str], rng: Any) -> str:
    if len(phrases) == 1:
        return phrases[0]
    glue = rng.choice([", ", "; "])
    return glue.join(phrases[:-1]) + rng.choice([", plus ", " and also ", glue + "and "]) + phrases[-1]


#: The unseen frames, by template id: f(city, mode words, types text, criteria text, distractor).
FRAMES = (
    ("hs-u0", "{noise} Anyway, the plan is to {verb} {a_types} over in {city}. Requirements: {wants}."),
    ("hs-u1", "{wants} — those are the must-haves for the {types} I'd {verb}. Location is {city}. {noise}"),
    ("hs-u2", "City: {city}. Deal: {deal}. Property type: {types}. Needs: {wants}. (Side note: {noise})"),
    ("hs-u3", "{noise} We're relocating to {city} and would {verb} {a_types}, ideally with {wants}."),
    ("hs-u4", "{city} it is! Pull up every {types} I could {verb} there that has {wants}. {noise}"),
    ("hs-u5", "Help a first-timer out: in {city}, which {types} listings could I {verb} with {wants}? {noise}"),
    ("hs-u6", "Question about the {city} market — {noise} What {types} can I {verb} that offers {wants}?"),
)


def render(rng: Any, template: str, city: str, mode: str, types: list[str], phrases: list[str], other: str) -> str:
    frame = dict(FRAMES)[template]
    noise = distractor(rng, city, other)
    verb = rng.choice(RENT_WORDS if mode == "rent" else BUY_WORDS)
    deal = rng.choice(
        ["long-term rental", "renting", "to rent"] if mode == "rent" else ["purchase", "buying", "to buy"]
    )
    kinds = type_phrase(rng, types)
    return frame.format(
        noise=noise,
        verb=verb,
        deal=deal,
        types=kinds,
        a_types=("an " if kinds[0] in "aeiou" else "a ") + kinds,
        city=city,
        wants=joined(phrases, rng),
    )
