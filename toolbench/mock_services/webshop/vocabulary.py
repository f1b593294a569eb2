"""The words of the generated shop: product types, their templates, and review text.

The words are data, in ``fixtures/webshop/vocabulary.json``; this module reads them and checks them.
Each ``ProductType`` describes one kind of product in one of five top categories (beauty, grocery,
fashion, furniture, electronics): where it sits in the store (a breadcrumb), the nouns that name it in
titles, title patterns, invented brands, the attributes a shopper may ask for, option groups, a price
range, bullet point and description templates, and the search query it is listed under. Templates use
``{brand}``, ``{attr}`` (one attribute phrase of the product), ``{name}`` (the type's name) and, in
titles, ``{option:<group>}`` (the product's first value of that option group). ``REVIEW_TITLES`` and
``REVIEW_BODIES`` give review text by star rating.

All of it, brand names included, is our own writing for this suite; nothing is taken from WebShop,
Amazon or any other dataset. ``check()`` asserts the rules the generator and the reward rely on.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from toolbench.core.tasks import fixture_file

_WORDS: dict[str, Any] = json.loads(fixture_file("webshop", "vocabulary.json").read_text(encoding="utf-8"))
CATEGORIES: tuple[str, ...] = tuple(_WORDS["categories"])
#: The store's name for each category: the first level of every breadcrumb.
CATEGORY_ROOTS: dict[str, str] = dict(_WORDS["category_roots"])
OPTION_GROUPS: tuple[str, ...] = tuple(_WORDS["option_groups"])


@dataclass(frozen=True)
class ProductType:
    name: str  # lower-case product type, e.g. "usb flash drive"
    category: str  # one of CATEGORIES
    breadcrumb: tuple[str, ...]  # 3-4 Title Case levels, the first CATEGORY_ROOTS[category]
    nouns: tuple[str, ...]  # lower-case nouns naming the type, each a whole word of every title pattern
    title_patterns: tuple[str, ...]  # {brand}, optional {attr} and {option:<group>}
    brands: tuple[str, ...]  # invented brand names
    attributes: tuple[str, ...]  # lower-case phrases a shopper asks for
    options: dict[str, tuple[str, ...]]  # option group (from OPTION_GROUPS) -> lower-case values
    price_range: tuple[float, float]  # low and high dollars
    bullets: tuple[str, ...]  # bullet point templates: {attr}, {brand}
    descriptions: tuple[str, ...]  # description sentence templates: {brand}, {attr}, {name}
    query: str  # the lower-case search query the type is listed under


def _product_type(entry: dict[str, Any]) -> ProductType:
    low, high = entry["price_range"]
    return ProductType(
        name=entry["name"],
        category=entry["category"],
        breadcrumb=tuple(entry["breadcrumb"]),
        nouns=tuple(entry["nouns"]),
        title_patterns=tuple(entry["title_patterns"]),
        brands=tuple(entry["brands"]),
        attributes=tuple(entry["attributes"]),
        options={group: tuple(values) for group, values in entry["options"].items()},
        price_range=(float(low), float(high)),
        bullets=tuple(entry["bullets"]),
        descriptions=tuple(entry["descriptions"]),
        query=entry["query"],
    )


PRODUCT_TYPES: tuple[ProductType, ...] = tuple(_product_type(entry) for entry in _WORDS["product_types"])
REVIEW_TITLES: dict[int, tuple[str, ...]] = {int(stars): tuple(t) for stars, t in _WORDS["review_titles"].items()}
REVIEW_BODIES: dict[int, tuple[str, ...]] = {int(stars): tuple(t) for stars, t in _WORDS["review_bodies"].items()}

_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_FORBIDDEN = frozenset("[]<>{}")


def _tokens(text: str) -> list[str]:
    """Lower-case words as the reward's title-noun lexicon splits a title."""
    return re.findall(r"[a-z0-9]+", text.lower())


def _check_text(text: str, allowed: set[str], where: str) -> list[str]:
    """Asserts ``text`` is clean ASCII whose placeholders are all in ``allowed``; returns them."""
    assert text and text.isascii() and text == text.strip(), f"{where}: empty, non-ASCII or padded: {text!r}"
    fields = _PLACEHOLDER.findall(text)
    assert set(fields) <= allowed, f"{where}: unknown placeholder in {text!r}"
    assert not set(_PLACEHOLDER.sub("", text)) & _FORBIDDEN, f"{where}: stray bracket in {text!r}"
    return fields


def _check_type(kind: ProductType) -> None:
    where = kind.name
    assert kind.name == kind.name.lower() and kind.name.isascii(), where
    assert kind.category in CATEGORIES, where
    assert 3 <= len(kind.breadcrumb) <= 4 and kind.breadcrumb[0] == CATEGORY_ROOTS[kind.category], where
    for level in kind.breadcrumb:
        _check_text(level, set(), where)
        assert all(not word[0].islower() for word in level.split()), f"{where}: not Title Case: {level!r}"
    assert 1 <= len(kind.nouns) <= 3 and len(set(kind.nouns)) == len(kind.nouns), where
    assert all(re.fullmatch(r"[a-z0-9]+", noun) for noun in kind.nouns), f"{where}: nouns {kind.nouns}"

    assert 1 <= len(kind.options) <= 3, where
    for group, values in kind.options.items():
        assert group in OPTION_GROUPS, f"{where}: option group {group!r}"
        assert 3 <= len(values) <= 10 and len(set(values)) == len(values), f"{where}: {group} values"
        for value in values:
            _check_text(value, set(), where)
            assert value == value.lower() and "/" not in value, f"{where}: option value {value!r}"

    assert 3 <= len(kind.title_patterns) <= 5, where
    title_fields = {"brand", "attr"} | {f"option:{group}" for group in kind.options}
    for pattern in kind.title_patterns:
        fields = _check_text(pattern, title_fields, where)
        assert fields.count("brand") == 1 and fields.count("attr") <= 1, f"{where}: {pattern!r}"
        words = _tokens(_PLACEHOLDER.sub(" ", pattern))
        assert all(noun in words for noun in kind.nouns), f"{where}: nouns missing from {pattern!r}"

    assert 6 <= len(kind.brands) <= 10 and len(set(kind.brands)) == len(kind.brands), where
    for brand in kind.brands:
        _check_text(brand, set(), where)
        words = [word for word in brand.split() if word != "&"]
        assert 1 <= len(words) <= 2 and all(word[0].isupper() for word in words), f"{where}: brand {brand!r}"

    assert 8 <= len(kind.attributes) <= 14 and len(set(kind.attributes)) == len(kind.attributes), where
    for attribute in kind.attributes:
        _check_text(attribute, set(), where)
        assert re.fullmatch(r"[a-z0-9][a-z0-9 .]*", attribute), f"{where}: attribute {attribute!r}"
        assert 1 <= len(attribute.split()) <= 3, f"{where}: attribute {attribute!r}"

    low, high = kind.price_range
    assert 2.0 <= low < high <= 950.0, where

    assert 6 <= len(kind.bullets) <= 10 and len(set(kind.bullets)) == len(kind.bullets), where
    for bullet in kind.bullets:
        _check_text(bullet, {"attr", "brand"}, where)
        assert 8 <= len(bullet.split()) <= 30, f"{where}: bullet length {bullet!r}"
    assert sum("{attr}" in bullet for bullet in kind.bullets) >= 1, f"{where}: no bullet shows {{attr}}"
    # Attributes must be checkable: most are written out in a bullet as well as shown through {attr}.
    text = " ".join(kind.bullets).lower()
    literal = [a for a in kind.attributes if re.search(rf"(?<![a-z0-9]){re.escape(a)}(?![a-z0-9])", text)]
    assert len(literal) * 10 >= len(kind.attributes) * 7, f"{where}: few attributes in bullets"

    assert 4 <= len(kind.descriptions) <= 6 and len(set(kind.descriptions)) == len(kind.descriptions), where
    for sentence in kind.descriptions:
        _check_text(sentence, {"brand", "attr", "name"}, where)

    _check_text(kind.query, set(), where)
    assert kind.query == kind.query.lower(), where


def _title_material(kind: ProductType) -> list[str]:
    """Every text that can become part of a title of this type."""
    fields = {field for pattern in kind.title_patterns for field in _PLACEHOLDER.findall(pattern)}
    groups = sorted(field.removeprefix("option:") for field in fields if field.startswith("option:"))
    values = [value for group in groups for value in kind.options[group]]
    patterns = [_PLACEHOLDER.sub(" ", pattern) for pattern in kind.title_patterns]
    return patterns + list(kind.brands) + list(kind.attributes) + values


def check() -> None:
    """Asserts the rules of this vocabulary (counts, placeholders, nouns, value lists, clean text)."""
    names = [kind.name for kind in PRODUCT_TYPES]
    assert len(PRODUCT_TYPES) >= 100 and len(set(names)) == len(names)
    for category in CATEGORIES:
        assert sum(kind.category == category for kind in PRODUCT_TYPES) >= 20, category
    for kind in PRODUCT_TYPES:
        _check_type(kind)

    lexicon = {noun for kind in PRODUCT_TYPES for noun in kind.nouns}
    by_category = {c: {n for k in PRODUCT_TYPES if k.category == c for n in k.nouns} for c in CATEGORIES}
    for category in CATEGORIES:
        kinds = [kind for kind in PRODUCT_TYPES if kind.category == category]
        assert len({frozenset(kind.nouns) for kind in kinds}) == len(kinds), f"{category}: same nouns twice"
    # Different categories share a noun only rarely.
    shared = {n for c in CATEGORIES for n in by_category[c] if any(n in by_category[o] for o in CATEGORIES if o != c)}
    assert len(shared) <= 2, f"nouns shared across categories: {sorted(shared)}"
    for kind in PRODUCT_TYPES:
        for text in _title_material(kind):
            words = set(_tokens(text))
            # A title never carries a noun of another category's type ...
            foreign = (words & lexicon) - set(kind.nouns) - by_category[kind.category]
            assert not foreign, f"{kind.name}: {text!r} holds nouns {sorted(foreign)} of other categories"
            # ... nor all the nouns of another type.
            for other in PRODUCT_TYPES:
                if other is not kind:
                    assert not set(other.nouns) <= words, f"{kind.name}: {text!r} names {other.name!r}"

    for table, allowed in ((REVIEW_TITLES, set()), (REVIEW_BODIES, {"name", "attr"})):
        assert sorted(table) == [1, 2, 3, 4, 5]
        for stars, texts in table.items():
            assert len(texts) >= 6 and len(set(texts)) == len(texts), stars
            for text in texts:
                _check_text(text, allowed, f"review {stars}")
