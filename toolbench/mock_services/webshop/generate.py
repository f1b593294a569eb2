"""Our product catalog, generated from the vocabulary in ``vocabulary.py``, in WebShop's record formats.

Original product ``i`` (``original``) is a pure function of ``i``: its type (types take turns in a fixed
shuffled order), brand, attributes, options, title, price (one price or a range), bullet points,
description, reviews and an instruction that asks for it. A catalog is made of families
(``family``): an original product and near copies of it, each differing from it in exactly one
thing a goal asks for (one wanted attribute, one named option value, or the price band), so that
only reading a listing tells the product from its copies. The shipped catalog's families are laid
out by ``taskgen/webshop.py`` for its goals; a generated catalog's part past it (``products(count,
start)``, up to 1,200,000 products, the scale of WebShop's full catalog) is families of ``FAMILY``
products from ``default_plan``. Asins are ``B0`` and eight base-36 digits of a bijection of a
number (the original's index, or a scrambled catalog index for a copy): distinct for every product.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from toolbench.core.tasks import fixture_file
from toolbench.mock_services.webshop.catalog import BREADCRUMB, Product, product_from_record, purchase_price
from toolbench.mock_services.webshop.goals import price_bound
from toolbench.mock_services.webshop.reward import FUZZY_THRESHOLD, normalize_color, similarity
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
def type_order() -> tuple[ProductType, ...]:
    """The product types in the order original products take them (product ``i``: type ``i`` modulo their number)."""
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


def _without(texts: tuple[str, ...] | list[str], avoid: str | None) -> list[str]:
    """The templates that do not say ``avoid`` (all of them without one)."""
    return [t for t in texts if avoid is None or avoid not in t.lower()]


def _title(
    rng: random.Random, kind: ProductType, brand: str, attributes: list[str], options: dict[str, list[str]],
    avoid: str | None = None,
) -> str:  # fmt: skip
    usable = [p for p in _without(kind.title_patterns, avoid) if all(g in options for g in _option_groups(p))]
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


def _bullets(
    rng: random.Random, kind: ProductType, brand: str, attributes: list[str], avoid: str | None = None
) -> list[str]:
    """Bullet points that name every attribute (one that says it, else a generic one), and one or two more,
    none saying ``avoid``."""
    bullets: list[str] = []
    templates = _without(kind.bullets, avoid)
    generic = [t for t in templates if "{attr}" in t] or [t for t in kind.bullets if "{attr}" in t]
    for attribute in attributes:
        saying = [t for t in templates if "{attr}" not in t and attribute in t.lower()]
        text = rng.choice(saying) if saying else _fill(rng.choice(generic), attr=attribute, brand=brand)
        if text not in bullets:
            bullets.append(text)
    others = [t for t in templates if "{attr}" not in t and t not in bullets]
    bullets = [_fill(text, brand=brand) for text in bullets]  # a bullet that says an attribute may name the brand
    bullets += [_fill(t, brand=brand) for t in rng.sample(others, min(len(others), rng.randint(1, 2)))]
    rng.shuffle(bullets)
    return bullets


def _description(
    rng: random.Random, kind: ProductType, brand: str, attributes: list[str], avoid: str | None = None,
    sizes: tuple[int, int] = (2, 4),
) -> str:  # fmt: skip
    sentences = _without(kind.descriptions, avoid)
    paragraphs = rng.sample(sentences, rng.randint(min(sizes[0], len(sentences)), min(sizes[1], len(sentences))))
    return " ".join(_fill(p, brand=brand, attr=rng.choice(attributes), name=kind.name) for p in paragraphs)


def _reviews(rng: random.Random, kind: ProductType, attributes: list[str]) -> list[dict[str, Any]]:
    reviews = []
    for _ in range(rng.choice((0, 1, 2, 2, 3, 3, 4, 5))):
        score = rng.choices((5, 4, 3, 2, 1), weights=(40, 30, 14, 8, 8))[0]
        body = rng.choice(REVIEW_BODIES[score]).format(name=kind.name, attr=rng.choice(attributes))
        reviews.append({"title": rng.choice(REVIEW_TITLES[score]), "score": score, "body": body})
    return reviews


def instruction(template: int, kind: ProductType, wanted: list[str]) -> str:
    """The attribute file's instruction for a product of ``kind``: ``INSTRUCTIONS[template]`` with ``wanted``."""
    pattern = INSTRUCTIONS[template]
    following = kind.name if "{a} {name}" in pattern else wanted[0]
    article = "" if _plural(kind.name) else _article(following)
    return " ".join(pattern.format(a=article, attrs=_joined(wanted), name=kind.name).split())


def _record(
    index_asin: str, kind: ProductType, title: str, description: str, bullets: list[str], pricing: str,
    options: dict[str, list[str]], reviews: list[dict[str, Any]],
) -> dict[str, Any]:  # fmt: skip
    return {
        "asin": index_asin,
        "name": title,
        "full_description": description,
        "small_description": bullets,
        "pricing": pricing,
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


def kind_of(source: int) -> ProductType:
    """The product type of original product ``source``."""
    order = type_order()
    return order[source % len(order)]


def original(source: int) -> tuple[dict[str, Any], dict[str, Any], int]:
    """Original product ``source``: a raw record (``items_shuffle`` format), its attribute entry
    (``items_ins_v2`` format) and the index of the ``INSTRUCTIONS`` template its instruction uses.
    A catalog's families start from these (``family``)."""
    rng = random.Random(f"webshop-product/{source}")
    kind = kind_of(source)
    brand = rng.choice(kind.brands)
    count = rng.randint(2, min(5, len(kind.attributes)))
    attributes = sorted(rng.sample(kind.attributes, count), key=kind.attributes.index)
    options: dict[str, list[str]] = {}
    for group, values in kind.options.items():
        if rng.random() < 0.85:
            chosen = rng.sample(values, rng.randint(min(2, len(values)), len(values)))
            options[group] = sorted(chosen, key=values.index)
    title = _title(rng, kind, brand, attributes, options)
    bullets = _bullets(rng, kind, brand, attributes)
    description = _description(rng, kind, brand, attributes)
    reviews = _reviews(rng, kind, attributes)
    wanted = sorted(rng.sample(attributes, rng.randint(1, min(3, len(attributes)))), key=attributes.index)
    template = INSTRUCTIONS.index(rng.choice(INSTRUCTIONS))
    record = _record(asin(source), kind, title, description, bullets, _price(rng, kind), options, reviews)
    entry = {
        "attributes": list(attributes),
        "instruction": instruction(template, kind, wanted),
        "instruction_attributes": wanted,
    }
    return record, entry, template


#: Attributes in other words (``fixtures/webshop/paraphrases.json``): attribute -> what it means, in words none
#: of which is one of the attribute's own (the unseen goals' wording; near copies say what they lack with them).
PARAPHRASES: dict[str, str] = json.loads(fixture_file("webshop", "paraphrases.json").read_text(encoding="utf-8"))


#: Every product of a catalog belongs to a family: an original product (``original``) and near copies of
#: it, each differing from it in exactly one thing a goal asks for: one wanted attribute (another of
#: the type's attributes instead), one option value the goal names (another value instead), or the
#: price band (above the goal's bound). A shopper who buys the first listing that looks right buys a
#: near copy about as often as the product; one who reads the pages buys the product.
VARIANT_KINDS = ("attribute", "option", "price")
#: The near copies of a family, in catalog order: two that each lack a wanted attribute (another one
#: each, where the goal wants more than one), one for an option value and one for the price.
FAMILY_KINDS = ("attribute", "attribute", "option", "price")
#: Products per family in a generated catalog.
FAMILY = 1 + len(FAMILY_KINDS)
#: Near copies' asins are ``asin(VARIANT_ASINS + scrambled catalog index)``; originals' ``asin(source)``, sources
#: below it. The index is scrambled (a bijection modulo a prime) so a family's copies do not share an asin prefix.
VARIANT_ASINS = 2_000_000_000
_SCRAMBLE, _PRIME = 48_271, 2_147_483_647
#: Generated families (past a shipped catalog) start from original products from here on.
GENERATED_SOURCES = 10_000_000
_CENTS = (0.99, 0.49, 0.95, 0.0, 0.79)


#: A test a listing must fail to be part of a catalog (a record and its attribute entry).
Excluded = Callable[[dict[str, Any], dict[str, Any]], bool]


@dataclass(frozen=True)
class Plan:
    """A family: its original product, the option values its goal names, its goals' price bounds and
    the kinds of its near copies, in catalog order."""

    source: int
    chosen: dict[str, str] = field(default_factory=dict)
    bounds: tuple[float, ...] = ()
    kinds: tuple[str, ...] = FAMILY_KINDS
    #: Whether the original's listing is keyword-rich too (``_keyworded``); off keeps it as ``original`` made it.
    keyworded: bool = False


def family(
    plan: Plan, first_index: int, excluded: Excluded | None = None
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The products of ``plan``'s family, the original first, at catalog indexes from ``first_index``; no
    near copy is a listing ``excluded`` refuses."""
    record, entry, template = original(plan.source)
    members = [(_keyworded(record, entry, plan, kind_of(plan.source)) if plan.keyworded else record, entry)]
    for offset, kind in enumerate(plan.kinds, start=1):
        index = first_index + offset
        rng = random.Random(f"webshop-variant/{plan.source}/{index}")
        made = _variant(kind, plan, record, entry, template, index, rng, offset, excluded)
        for fallback in VARIANT_KINDS:  # a kind this product cannot vary (no options, no bound): another
            if made is None:
                made = _variant(fallback, plan, record, entry, template, index, rng, offset, excluded)
        if made is None:  # every kind excluded: the copy the plan asked for, unchecked
            made = _variant(kind, plan, record, entry, template, index, rng, offset)
        assert made is not None, (plan, kind)
        members.append(made)
    return members


def default_plan(number: int) -> Plan:
    """Family ``number`` of a generated catalog: a goal of one option value per group and WebShop's bound."""
    source = GENERATED_SOURCES + number
    record, entry, _ = original(source)
    rng = random.Random(f"webshop-family/{number}")
    base = product_from_record(record, {record["asin"]: entry})
    chosen = {name: rng.choice(values) for name, values in sorted(base.options.items())}
    bound = price_bound(purchase_price(base), rng)
    return Plan(source, chosen, (bound,) if bound is not None else ())


def _variant(
    kind: str, plan: Plan, record: dict[str, Any], entry: dict[str, Any], template: int, index: int,
    rng: random.Random, offset: int, excluded: Excluded | None = None,
) -> tuple[dict[str, Any], dict[str, Any]] | None:  # fmt: skip
    product_type = kind_of(plan.source)
    # A copy that lacks a wanted attribute is keyword-rich, as sellers' listings often are: its first bullet
    # and description name the wanted things it has, so a search for the goal's words often finds it
    # first. Its title stays as plain as any other (the results page shows nothing of it).
    keyworded = kind == "attribute" or rng.random() < 0.5
    for _ in range(20):  # drawn again while a text says the attribute the copy lacks, or it is excluded
        change = _change(kind, plan, record, entry, rng, offset)
        if change is None:
            return None
        attributes, wanted, options, price, missing = change
        made = _listing(rng, product_type, index, attributes, wanted, options, price, template, missing)
        if keyworded:
            made = (_keyworded(made[0], made[1], plan, product_type), made[1])
        made = (_unlike(made[0], kind, plan, options, missing, product_type, index), made[1])
        if (missing is None or not _says(made[0], missing)) and not (excluded and excluded(*made)):
            return made
    return None


def _change(
    kind: str, plan: Plan, record: dict[str, Any], entry: dict[str, Any], rng: random.Random, offset: int
) -> tuple[list[str], list[str], dict[str, list[str]], float, str | None] | None:
    """A near copy's attributes, wanted attributes, options, price and the wanted attribute it lacks (if it
    lacks one); None if the original cannot be varied that way."""
    product_type = kind_of(plan.source)
    attributes, wanted = list(entry["attributes"]), list(entry["instruction_attributes"])
    options = {
        name.lower(): [item["value"] for item in items]
        for name, items in (record["customization_options"] or {}).items()
    }
    base = product_from_record(record, {record["asin"]: entry})
    price = _price_below(purchase_price(base), min(plan.bounds, default=None), rng)
    missing: str | None = None
    if kind == "attribute":
        missing = wanted[(plan.source + offset) % len(wanted)]  # the family's copies each lack another one
        others = [a for a in product_type.attributes if a not in attributes and _apart(a, missing)]
        if not others or any(not _apart(a, missing) for a in attributes if a != missing):
            return None
        # Where the type has one, an attribute that shares a word with the missing one ("medium roast" for
        # "dark roast"): a search for the goal's words cannot tell them apart; its pages can.
        alike = [a for a in others if set(a.split()) & set(missing.split())]
        other = rng.choice(alike if alike and rng.random() < 0.7 else others)
        attributes = [other if a == missing else a for a in attributes]
        wanted = [other if a == missing else a for a in wanted]
    elif kind == "option":
        groups = [g for g in sorted(plan.chosen) if g in options]
        if not groups:
            return None
        group = rng.choice(groups)
        unwanted = (group, plan.chosen[group])
        fresh = [v for v in product_type.options[group] if v not in options[group] and not _matches(v, unwanted)]
        values = [v for v in options[group] if not _matches(v, unwanted)]
        if fresh:
            values.append(rng.choice(fresh))
        options[group] = sorted(set(values), key=product_type.options[group].index)
        if not options[group]:
            return None
    elif kind == "price":
        if not plan.bounds:
            return None
        price = max(plan.bounds) + 1 + int(rng.uniform(0, min(9.0, max(plan.bounds) * 0.2))) + rng.choice(_CENTS)
    return attributes, wanted, options, price, missing


#: A near copy's last bullet (the features page; the search index holds only the first): what it is not, in the
#: words of the thing it lacks rearranged ({not}: a missing attribute's words joined by hyphens, a value the
#: goal names that the copy does not offer), so that counting the words a page shares with a goal ties the
#: copy with the product; only reading the sentence tells them apart.
UNLIKE = (
    "Please note: this {name} is not {not}.",
    "Not {not}; shoppers who need that should pick another listing.",
    "If you need it {not}, this is not the {name} for you.",
)
#: The same for a missing attribute that ``PARAPHRASES`` words otherwise ({not}: those words): a goal that says the
#: attribute that way shares them with the copy, not with the product, whose pages say it as it is.
UNLIKE_MEANING = (
    "If you need it {not}, this is not the {name} for you.",
    "Not {not}; shoppers who need that should pick another listing.",
)
UNLIKE_OPTION = (
    "Not sold in {not}.",
    "The {not} version is not offered in this listing.",
    "Looking for {not}? This listing does not have it.",
)


def _unlike(
    record: dict[str, Any], kind: str, plan: Plan, options: dict[str, list[str]], missing: str | None,
    product_type: ProductType, index: int,
) -> dict[str, Any]:  # fmt: skip
    """``record`` with an ``UNLIKE`` bullet where the copy lacks a wanted attribute of more than one word, an
    ``UNLIKE_MEANING`` one where ``PARAPHRASES`` words that attribute, an ``UNLIKE_OPTION`` one where it lacks an
    option value the plan names; a stream of its own picks the words, so the rest is drawn as before."""
    rng = random.Random(f"webshop-unlike/{plan.source}/{index}")
    sentences = []
    if kind == "attribute" and missing is not None and len(missing.split()) > 1:
        sentences.append(rng.choice(UNLIKE).format(name=product_type.name, **{"not": "-".join(missing.split())}))
    if kind == "attribute" and missing in PARAPHRASES:
        sentences.append(rng.choice(UNLIKE_MEANING).format(name=product_type.name, **{"not": PARAPHRASES[missing]}))
    if kind == "option":
        lacking = [v for g, v in sorted(plan.chosen.items()) if g in options and v not in options[g]]
        sentences += [rng.choice(UNLIKE_OPTION).format(**{"not": rng.choice(lacking)})] if lacking else []
    return {**record, "small_description": [*record["small_description"], *sentences]} if sentences else record


def _keyworded(record: dict[str, Any], entry: dict[str, Any], plan: Plan, kind: ProductType) -> dict[str, Any]:
    """``record`` with a first bullet, also the description's first sentence, that names its wanted
    attributes, its product type and the planned option values it offers."""
    offered = {item["value"] for items in (record["customization_options"] or {}).values() for item in items}
    values = [value for value in plan.chosen.values() if value in offered]
    bullet = f"{_joined(list(entry['instruction_attributes'])).capitalize()} {kind.name}"
    bullet += f", offered in {_joined(values)}" if values else ""
    description = f"{bullet}. {record['full_description']}"
    return {**record, "full_description": description, "small_description": [bullet, *record["small_description"]]}


def _listing(
    rng: random.Random, kind: ProductType, index: int, attributes: list[str], wanted: list[str],
    options: dict[str, list[str]], price: float, template: int, avoid: str | None,
) -> tuple[dict[str, Any], dict[str, Any]]:  # fmt: skip
    """A near copy's listing, with none of its text saying ``avoid`` (the attribute it lacks)."""
    brand = rng.choice(kind.brands)
    title = _title(rng, kind, brand, attributes, options, avoid)
    bullets = _bullets(rng, kind, brand, attributes, avoid)
    # A copy without a wanted attribute says less (a terse listing): the words it has weigh more in a search.
    description = _description(rng, kind, brand, attributes, avoid, (1, 2) if avoid else (2, 4))
    reviews = _reviews(rng, kind, attributes)
    record = _record(
        asin(VARIANT_ASINS + index * _SCRAMBLE % _PRIME),
        kind,
        title,
        description,
        bullets,
        f"${price:.2f}",
        options,
        reviews,
    )
    entry = {
        "attributes": attributes,
        "instruction": instruction(template, kind, wanted),
        "instruction_attributes": wanted,
    }
    return record, entry


def _price_below(price: float, bound: float | None, rng: random.Random) -> float:
    """A price near ``price`` and under ``bound``."""
    near = max(1.0, price * rng.uniform(0.85, 1.12))
    value = int(near) + rng.choice(_CENTS)
    if bound is not None and value >= bound:
        value = max(0.49, min(price, bound - 0.51))
    return round(value, 2)


def _apart(one: str, other: str) -> bool:
    """Whether WebShop's reward tells attribute ``one`` from ``other`` (no containment, fuzzy ratio at most 85)."""
    return other not in one and one not in other and similarity(one, other) <= FUZZY_THRESHOLD


def _matches(value: str, option: tuple[str, str]) -> bool:
    """Whether buying ``value`` meets the goal option ``(name, value)`` under WebShop's reward."""
    return similarity(normalize_color(value), normalize_color(option)) > FUZZY_THRESHOLD


def _says(record: dict[str, Any], attribute: str) -> bool:
    """Whether a listing's text holds ``attribute`` (WebShop's reward counts that as having it)."""
    texts = (record["name"], record["full_description"], " ".join(record["small_description"]))
    return any(attribute in text.lower() for text in texts)


def _check_count(count: int) -> None:
    if not 1 <= count <= MAX_PRODUCTS:
        raise ValueError(f"a generated catalog holds 1 to {MAX_PRODUCTS:,} products, not {count!r}")


def laid_out(
    plans: list[Plan], start: int = 0, excluded: Excluded | None = None
) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """The products of ``plans``' families in order, the first at catalog index ``start``."""
    index = start
    for plan in plans:
        members = family(plan, index, excluded)
        yield from members
        index += len(members)


def _generated(count: int, start: int) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """Catalog indexes ``start`` to ``count - 1`` of a generated catalog (``start`` a multiple of ``FAMILY``)."""
    _check_count(count)
    if start % FAMILY:
        raise ValueError(f"a generated catalog part starts at a multiple of {FAMILY}, not {start}")
    index = start
    while index < count:
        for record, entry in family(default_plan(index // FAMILY), index):
            if index < count:
                yield record, entry
            index += 1


def catalog(count: int, start: int = 0) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """A generated catalog's products ``start`` to ``count - 1``: raw records, attribute file entries by asin."""
    records, attributes = [], {}
    for record, entry in _generated(count, start):
        records.append(record)
        attributes[record["asin"]] = entry
    return records, attributes


def products(count: int, start: int = 0) -> Iterator[Product]:
    """A generated catalog's products ``start`` to ``count - 1`` as the shop loads them, one at a time (a
    million records never all held at once)."""
    for record, entry in _generated(count, start):
        yield product_from_record(record, {record["asin"]: entry})


def noun_lexicon() -> set[str]:
    """Every noun that names a product type in the vocabulary (for the type reward's title nouns)."""
    return {noun for kind in PRODUCT_TYPES for noun in kind.nouns}
