"""Our product catalog, generated from the vocabulary in ``vocabulary.py``, in WebShop's record formats.

Product ``i`` is a pure function of ``i``: its type (types take turns in a fixed shuffled order, so
every type has products in any catalog of a few hundred or more), brand, attributes, options,
title, price (one price or a range), bullet points, description, reviews and an instruction that
asks for it. A catalog of ``n`` products is the first ``n`` of them, so the shipped 1,000 are the start
of every larger catalog (up to 1,200,000, the scale of WebShop's full catalog). Asins are ``B0`` and eight
base-36 digits of a bijection of ``i``: distinct for every product.
"""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from functools import cache
from typing import Any

from toolbench.mock_services.webshop.catalog import BREADCRUMB, Product, product_from_record
from toolbench.mock_services.webshop.vocabulary import PRODUCT_TYPES, REVIEW_BODIES, REVIEW_TITLES, ProductType

#: WebShop's full catalog holds about 1.18 million products: a generated one reaches that scale.
MAX_PRODUCTS = 1_200_000
_DIGITS = string.digits + string.ascii_uppercase
_ASIN_SPACE = 36**8
_ASIN_STEP = 2_654_435_761  # coprime with 36: i -> (i * step + offset) mod 36**8 is a bijection
_ASIN_OFFSET = 1_234_567_890
#: How instructions ask for a product ({what}: the type with attributes worked in; our own phrasings).
INSTRUCTIONS = (
    "i need {a} {attrs} {name}",
    "i am looking for {a} {name} that is {attrs}",
    "i'm looking for {a} {attrs} {name}",
    "find me {a} {name} that is {attrs}",
    "i want to buy {a} {attrs} {name}",
    "can you find {a} {attrs} {name} for me",
    "i would like {a} {name}, it should be {attrs}",
    "get me {a} {attrs} {name}",
    "i want {a} {name} that's {attrs}",
    "search for {a} {attrs} {name}",
)


def asin(index: int) -> str:
    """The asin of product ``index``: ``B0`` and eight base-36 digits, distinct for every index."""
    number = (index * _ASIN_STEP + _ASIN_OFFSET) % _ASIN_SPACE
    digits = []
    for _ in range(8):
        number, digit = divmod(number, 36)
        digits.append(_DIGITS[digit])
    return "B0" + "".join(reversed(digits))


@cache
def _type_order() -> tuple[ProductType, ...]:
    order = list(PRODUCT_TYPES)
    random.Random("webshop-type-order").shuffle(order)
    return tuple(order)


def _article(words: str) -> str:
    vowel = words[:1] in ("a", "e", "i", "o") or (words[:1] == "u" and not words.startswith(("us", "uni", "ut")))
    return "an" if vowel else "a"


def _plural(name: str) -> bool:
    """Names of things sold in pairs or sets ("running shoes", "socks") take no article."""
    return name.endswith("s") and not name.endswith(("ss", "us"))


def _joined(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _price(rng: random.Random, kind: ProductType) -> str:
    low, high = kind.price_range
    base = low + (high - low) * rng.random() ** 1.6  # more cheap products than dear ones
    price = max(low, int(base) + rng.choice((0.99, 0.49, 0.95, 0.0, 0.79)))
    if rng.random() < 0.25:
        top = round(price * rng.uniform(1.15, 1.9), 2)
        return f"${price:.2f} - ${top:.2f}"
    return f"${price:.2f}"


def _fill(template: str, **values: str) -> str:
    return template.format(**values)


def _title(
    rng: random.Random, kind: ProductType, brand: str, attributes: list[str], options: dict[str, list[str]]
) -> str:
    usable = [p for p in kind.title_patterns if all(g in options for g in _option_groups(p))]
    pattern = rng.choice(usable or list(kind.title_patterns))
    # The first attribute the pattern does not already spell out ("with Foldable Plug, Foldable Plug").
    shown = next((a for a in attributes if a.lower() not in pattern.lower()), attributes[0])
    title = pattern.replace("{brand}", brand).replace("{attr}", shown.title())
    for group in _option_groups(pattern):
        values = options.get(group) or list(kind.options[group])
        title = title.replace("{option:" + group + "}", values[0].upper() if len(values[0]) <= 5 else values[0].title())
    return " ".join(title.split())


def _option_groups(pattern: str) -> list[str]:
    groups, rest = [], pattern
    while "{option:" in rest:
        rest = rest[rest.index("{option:") + 8 :]
        groups.append(rest[: rest.index("}")])
    return groups


def product(index: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Product ``index`` as a raw record (``items_shuffle`` format) and its attribute entry
    (``items_ins_v2`` format)."""
    rng = random.Random(f"webshop-product/{index}")
    order = _type_order()
    kind = order[index % len(order)]
    brand = rng.choice(kind.brands)
    count = rng.randint(2, min(5, len(kind.attributes)))
    attributes = sorted(rng.sample(kind.attributes, count), key=kind.attributes.index)
    options: dict[str, list[str]] = {}
    for group, values in kind.options.items():
        if rng.random() < 0.85:
            chosen = rng.sample(values, rng.randint(min(2, len(values)), len(values)))
            options[group] = sorted(chosen, key=values.index)
    title = _title(rng, kind, brand, attributes, options)
    bullets: list[str] = []
    generic = [t for t in kind.bullets if "{attr}" in t]
    for attribute in attributes:  # every attribute named in a bullet: one that says it, else a generic one
        saying = [t for t in kind.bullets if "{attr}" not in t and attribute in t.lower()]
        text = rng.choice(saying) if saying else _fill(rng.choice(generic), attr=attribute, brand=brand)
        if text not in bullets:
            bullets.append(text)
    others = [t for t in kind.bullets if "{attr}" not in t and t not in bullets]
    bullets = [_fill(text, brand=brand) for text in bullets]  # a bullet that says an attribute may name the brand
    bullets += [_fill(t, brand=brand) for t in rng.sample(others, min(len(others), rng.randint(1, 2)))]
    rng.shuffle(bullets)
    paragraphs = rng.sample(kind.descriptions, rng.randint(2, min(4, len(kind.descriptions))))
    description = " ".join(_fill(p, brand=brand, attr=rng.choice(attributes), name=kind.name) for p in paragraphs)
    reviews = []
    for _ in range(rng.choice((0, 1, 2, 2, 3, 3, 4, 5))):
        score = rng.choices((5, 4, 3, 2, 1), weights=(40, 30, 14, 8, 8))[0]
        body = rng.choice(REVIEW_BODIES[score]).format(name=kind.name, attr=rng.choice(attributes))
        reviews.append({"title": rng.choice(REVIEW_TITLES[score]), "score": score, "body": body})
    wanted = sorted(rng.sample(attributes, rng.randint(1, min(3, len(attributes)))), key=attributes.index)
    template = rng.choice(INSTRUCTIONS)
    following = kind.name if "{a} {name}" in template else wanted[0]
    article = "" if _plural(kind.name) else _article(following)
    instruction = " ".join(template.format(a=article, attrs=_joined(wanted), name=kind.name).split())
    record = {
        "asin": asin(index),
        "name": title,
        "full_description": description,
        "small_description": bullets,
        "pricing": _price(rng, kind),
        "images": [],
        "customization_options": {
            group.title(): [{"value": value, "image": None} for value in values] for group, values in options.items()
        }
        or None,
        "category": kind.category,
        "query": kind.query,
        "product_category": f" {BREADCRUMB} ".join(kind.breadcrumb),
        "reviews": reviews,
    }
    entry = {"attributes": list(attributes), "instruction": instruction, "instruction_attributes": wanted}
    return record, entry


def _check_count(count: int) -> None:
    if not 1 <= count <= MAX_PRODUCTS:
        raise ValueError(f"a generated catalog holds 1 to {MAX_PRODUCTS:,} products, not {count!r}")


def catalog(count: int) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The first ``count`` products: raw records and the attribute file's entries by asin."""
    _check_count(count)
    records, attributes = [], {}
    for index in range(count):
        record, entry = product(index)
        records.append(record)
        attributes[record["asin"]] = entry
    return records, attributes


def products(count: int) -> Iterator[Product]:
    """The first ``count`` products as the shop loads them, one at a time (a million records never all
    held at once)."""
    _check_count(count)
    for index in range(count):
        record, entry = product(index)
        yield product_from_record(record, {record["asin"]: entry})


def noun_lexicon() -> set[str]:
    """Every noun that names a product type in the vocabulary (for the type reward's title nouns)."""
    return {noun for kind in PRODUCT_TYPES for noun in kind.nouns}
