"""Goals over a catalog as WebShop makes them: the price bound, and human goals from its files.

WebShop draws the price bound (two of the next four tens above the product's price, the higher
one) from Python's unseeded ``random`` at start-up; here the caller passes a seeded stream, so a
goal set is the same in every run. ``human_goals`` reads ``items_human_ins.json`` (``{asin:
[{"instruction", "instruction_attributes", "instruction_options"}]}``) as ``get_human_goals`` does:
one goal per instruction with at least one attribute, its trailing dots stripped and the price
clause added, its options kept as the list they are.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from toolbench.mock_services.webshop.catalog import Product, purchase_price

PRICE_RANGE = [10.0 * i for i in range(1, 100)]
NO_BOUND = 1_000_000.0


def price_bound(price: float, rng: random.Random) -> float | None:
    """WebShop's bound: of the (up to) four tens above the price, the higher of two drawn; none
    when fewer than two are left (the goal then names no price)."""
    above = [p for p in PRICE_RANGE if p > price][:4]
    return max(rng.sample(above, 2)) if len(above) >= 2 else None


def price_clause(bound: float | None) -> str:
    return f", and price lower than {bound:.2f} dollars" if bound is not None else ""


def human_goals(products: Sequence[Product], instructions: Mapping[str, Any], seed: str = "0") -> list[dict[str, Any]]:
    """Goals from WebShop's human instruction file, in a seeded shuffled order."""
    rng = random.Random(f"webshop-human-goals/{seed}")
    goals = []
    for product in products:
        for entry in instructions.get(product.asin) or ():
            if not isinstance(entry, Mapping) or not entry.get("instruction_attributes"):
                continue  # WebShop skips instructions without attributes
            bound = price_bound(purchase_price(product), rng)
            options = entry.get("instruction_options") or []
            goals.append(
                {
                    "asin": product.asin,
                    "instruction_text": str(entry.get("instruction", "")).strip(".") + price_clause(bound),
                    "attributes": [str(a) for a in entry["instruction_attributes"]],
                    "goal_options": [str(o) for o in options] if isinstance(options, list) else dict(options),
                    "price_upper": bound if bound is not None else NO_BOUND,
                    "query": product.query,
                    "category": product.category,
                    "product_category": product.product_category,
                    "name": product.title,
                }
            )
    rng.shuffle(goals)
    return goals
