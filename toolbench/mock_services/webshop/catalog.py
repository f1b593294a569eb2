"""The shop's products: WebShop's record formats, loaded the way WebShop loads them.

A catalog comes from two files in the original formats: the products (``items_shuffle_1000.json``:
``asin``, ``name``, ``full_description``, ``small_description``, ``pricing``, ``images``,
``customization_options``, ``category``, ``query``, ``product_category``, and here also
``reviews``) and their attributes (``items_ins_v2_1000.json``: ``{asin: {"attributes": [...],
"instruction": ..., "instruction_attributes": [...]}}``). ``load_products`` follows WebShop's
rules: records whose asin is ``nan`` or longer than 10 characters and repeated asins are skipped,
the pricing text becomes one or two prices and a display tag, option values are stripped,
lower-cased and have ``/`` turned into `` | ``, and a product without attributes gets
``DUMMY_ATTR``. Our generated records (``generate.py``) and a user's original files load alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from toolbench.core.seeding import stable_uniform

#: WebShop's price for a product whose record has none.
DEFAULT_PRICE = 100.0
#: The separator of a product category breadcrumb (U+203A).
BREADCRUMB = "\u203a"


@dataclass(frozen=True)
class Review:
    title: str
    score: int
    body: str


@dataclass(frozen=True, eq=False)
class Product:
    asin: str
    title: str
    description: str
    bullet_points: tuple[str, ...]
    pricing: tuple[float, ...]  # one price, or the low and high ends of a range
    price_tag: str  # as the pages show it: "$12.99" or "$10.0 to $20.0"
    options: dict[str, tuple[str, ...]]  # option name (lower case) -> values, in the record's order
    attributes: tuple[str, ...]
    category: str
    query: str
    product_category: str
    reviews: tuple[Review, ...] = ()
    rating: str = "N.A."
    image: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # instruction fields of the attribute file

    def option_of(self, value: str) -> str | None:
        """The option name a value belongs to (the first, if several share it)."""
        return next((name for name, values in self.options.items() if value in values), None)


def parse_pricing(pricing: Any) -> tuple[tuple[float, ...], str]:
    """WebShop's prices from a pricing text ("$12.99", "$10.00 - $20.00"): at most two, and the tag."""
    if not pricing or not isinstance(pricing, str):
        return (DEFAULT_PRICE,), f"${DEFAULT_PRICE}"
    prices: list[float] = []
    for part in pricing.split("$")[1:]:
        digits = re.sub(r"[^\d.]", "", part)
        try:
            prices.append(float(Decimal(digits)))
        except InvalidOperation:
            continue
    if not prices:
        return (DEFAULT_PRICE,), f"${DEFAULT_PRICE}"
    if len(prices) == 1:
        return (prices[0],), f"${prices[0]}"
    return (prices[0], prices[1]), f"${prices[0]} to ${prices[1]}"


def option_value(text: str) -> str:
    return text.strip().replace("/", " | ").lower()


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def product_from_record(record: Mapping[str, Any], attributes: Mapping[str, Any] | None) -> Product:
    """One raw product record (and its entry of the attribute file) as the shop shows it."""
    asin = str(record["asin"])
    pricing, price_tag = parse_pricing(record.get("pricing"))
    options: dict[str, tuple[str, ...]] = {}
    for name, contents in (record.get("customization_options") or {}).items():
        if not contents:
            continue
        values = [option_value(_text(item.get("value"))) for item in contents if isinstance(item, Mapping)]
        options[str(name).lower()] = tuple(value for value in values if value)
    bullets = record.get("small_description")
    bullets = tuple(str(b) for b in bullets) if isinstance(bullets, list) else (_text(bullets),)
    reviews = tuple(
        Review(_text(item.get("title")), int(item.get("score", item.get("stars", 0)) or 0), _text(item.get("body")))
        for item in record.get("reviews") or ()
        if isinstance(item, Mapping)
    )
    rating = f"{sum(r.score for r in reviews) / len(reviews):.1f}" if reviews else "N.A."
    entry = attributes.get(asin) if attributes else None
    listed = entry.get("attributes") if isinstance(entry, Mapping) else None
    images = record.get("images") or []
    return Product(
        asin=asin,
        title=_text(record.get("name")),
        description=_text(record.get("full_description")),
        bullet_points=bullets,
        pricing=pricing,
        price_tag=price_tag,
        options=options,
        attributes=tuple(str(a) for a in listed) if listed else ("DUMMY_ATTR",),
        category=_text(record.get("category")),
        query=_text(record.get("query")).lower().strip(),
        product_category=_text(record.get("product_category")),
        reviews=reviews,
        rating=rating,
        image=images[0] if images and isinstance(images[0], str) else None,
        extra=dict(entry) if isinstance(entry, Mapping) else {},
    )


def load_products(
    records: Iterable[Mapping[str, Any]], attributes: Mapping[str, Any] | None = None, limit: int | None = None
) -> list[Product]:
    """Products from raw records, as WebShop loads them (the first ``limit`` records when given)."""
    products: list[Product] = []
    seen: set[str] = set()
    for index, record in enumerate(records):
        if limit is not None and index >= limit:
            break
        asin = str(record.get("asin", "nan"))
        if asin == "nan" or len(asin) > 10 or asin in seen:
            continue
        seen.add(asin)
        products.append(product_from_record(record, attributes))
    return products


def read_product_files(
    products_file: str | Path, attributes_file: str | Path | None = None, limit: int | None = None
) -> list[Product]:
    """Products from files in WebShop's formats (ours, or the original ``items_shuffle*.json``)."""
    with open(products_file, encoding="utf-8") as handle:
        records = json.load(handle)
    attributes = None
    if attributes_file is not None:
        with open(attributes_file, encoding="utf-8") as handle:
            attributes = json.load(handle)
    if not isinstance(records, list) or (attributes is not None and not isinstance(attributes, dict)):
        raise ValueError("a products file holds a JSON list of records; an attributes file a JSON object by asin")
    return load_products(records, attributes, limit)


def purchase_price(product: Product) -> float:
    """The price a purchase is checked against: the product's price, or for a range one price in it.
    WebShop draws it unseeded at start-up; here it is a pure function of the asin."""
    if len(product.pricing) == 1:
        return product.pricing[0]
    low, high = product.pricing[0], product.pricing[1]
    return round(low + (high - low) * stable_uniform("webshop-price", product.asin), 2)
