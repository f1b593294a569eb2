"""Goals over a catalog as WebShop makes them: the price bound, and human goals from its files.

WebShop draws the price bound (two of the next four tens above the product's price, the higher
one) from Python's unseeded ``random`` at start-up; here the caller passes a seeded stream, so a
goal set is the same in every run. ``synthetic_goals`` makes WebShop's goals from the attribute
file's instructions; ``human_goals`` reads ``items_human_ins.json`` (``{asin:
[{"instruction", "instruction_attributes", "instruction_options"}]}``) as ``get_human_goals`` does:
one goal per instruction with at least one attribute, its trailing dots stripped and the price
clause added, its options kept as the list they are. ``reference`` is an expert's actions for a goal
in a shop.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from typing import Any

from toolbench.mock_services.webshop.catalog import Product, purchase_price
from toolbench.mock_services.webshop.shop import PRODUCT_WINDOW, Shop

PRICE_RANGE = [10.0 * i for i in range(1, 100)]
NO_BOUND = 1_000_000.0


def price_bound(price: float, rng: random.Random) -> float | None:
    """WebShop's bound: of the (up to) four tens above the price, the higher of two drawn; none
    when fewer than two are left (the goal then names no price)."""
    above = [p for p in PRICE_RANGE if p > price][:4]
    return max(rng.sample(above, 2)) if len(above) >= 2 else None


def price_clause(bound: float | None) -> str:
    return f", and price lower than {bound:.2f} dollars" if bound is not None else ""


#: WebShop shuffles its goal list with ``random.seed(233)``: the same permutation here, so session n
#: names the same goal (product, options) as WebShop's session n over the same files.
SHUFFLE_SEED = 233


def goal_record(
    product: Product, instruction: str, attributes: list[str], options: Any, bound: float | None
) -> dict[str, Any]:
    """A goal in WebShop's fields: the instruction (the price clause added), what it asks for, the product's kind."""
    return {
        "asin": product.asin,
        "instruction_text": instruction + price_clause(bound),
        "attributes": attributes,
        "goal_options": options,
        "price_upper": bound if bound is not None else NO_BOUND,
        "query": product.query,
        "category": product.category,
        "product_category": product.product_category,
        "name": product.title,
    }


def synthetic_goals(products: Sequence[Product], seed: str = "0") -> list[dict[str, Any]]:
    """WebShop's synthetic goals from the attribute file's instructions: one per combination of a
    product's option values (names sorted), "with name: value, and ..." appended, one price bound
    per product; shuffled as WebShop shuffles them."""
    rng = random.Random(f"webshop-synthetic-goals/{seed}")
    goals = []
    for product in products:
        instruction, attributes = product.extra.get("instruction"), product.extra.get("instruction_attributes")
        if not instruction or not attributes:
            continue
        bound = price_bound(purchase_price(product), rng)
        names = sorted(product.options)
        for combination in itertools.product(*(product.options[name] for name in names)):
            chosen = dict(zip(names, combination, strict=True))
            with_options = ", and ".join(f"{name}: {value}" for name, value in chosen.items())
            text = f"{instruction} with {with_options}" if chosen else str(instruction)
            goals.append(goal_record(product, text, [str(a) for a in attributes], chosen, bound))
    random.Random(SHUFFLE_SEED).shuffle(goals)
    return goals


def human_goals(products: Sequence[Product], instructions: Mapping[str, Any], seed: str = "0") -> list[dict[str, Any]]:
    """Goals from WebShop's human instruction file, shuffled as WebShop shuffles them."""
    rng = random.Random(f"webshop-human-goals/{seed}")
    goals = []
    for product in products:
        for entry in instructions.get(product.asin) or ():
            if not isinstance(entry, Mapping) or not entry.get("instruction_attributes"):
                continue  # WebShop skips instructions without attributes
            bound = price_bound(purchase_price(product), rng)
            options = entry.get("instruction_options") or []
            options = [str(o) for o in options] if isinstance(options, list) else dict(options)
            attributes = [str(a) for a in entry["instruction_attributes"]]
            goals.append(goal_record(product, str(entry.get("instruction", "")).strip("."), attributes, options, bound))
    random.Random(SHUFFLE_SEED).shuffle(goals)
    return goals


def reference(store: Shop, goal: Mapping[str, Any]) -> list[str] | None:
    """An expert's actions for ``goal`` in ``store``: a search that finds the product (its wanted attributes
    and type query, the query alone, or its title), pages on to it, opens it, chooses the goal's options
    and buys; None if no search finds it."""
    product = store.by_asin[goal["asin"]]
    entry = product.extra
    queries = [
        " ".join([*entry["instruction_attributes"], product.query]),
        product.query,
        product.title.lower(),
    ]
    index = store.index_of[product.asin]
    for query in queries:
        hits = store.engine.search(query)
        if index in hits:
            rank = hits.index(index)
            pages = ["click[next >]"] * (rank // PRODUCT_WINDOW)
            options = [f"click[{value}]" for name, value in goal["goal_options"].items()]
            return [f"search[{query}]", *pages, f"click[{product.asin.lower()}]", *options, "click[buy now]"]
    return None
