"""A shopping website for WebShop's task, usable without the env.

``Shop(products)`` holds a catalog, its BM25 search engine (``search.py``) and the page logic
(``shop.py``); ``create_app(shop, goals)`` serves it as HTML (``app.py``); ``get_reward`` scores a
purchase as WebShop does (``reward.py``). Catalogs load from WebShop's record formats
(``catalog.py``); ours are generated (``generate.py``) from our own vocabulary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolbench.mock_services.webshop.catalog import Product, Review, load_products, read_product_files
from toolbench.mock_services.webshop.reward import Goal, LexiconNouns, Reward, get_reward
from toolbench.mock_services.webshop.search import SearchEngine
from toolbench.mock_services.webshop.shop import Page, Session, Shop, search_page_text

if TYPE_CHECKING:
    from flask import Flask

__all__ = [
    "Goal",
    "LexiconNouns",
    "Page",
    "Product",
    "Review",
    "Reward",
    "SearchEngine",
    "Session",
    "Shop",
    "create_demo_app",
    "get_reward",
    "load_products",
    "read_product_files",
    "search_page_text",
]


def create_demo_app() -> Flask:
    """The shipped shop (1,000 products) with every shipped goal; ``/fixed_<n>`` is session ``n``."""
    from toolbench.core.tasks import fixture_file, read_records
    from toolbench.mock_services.webshop import generate
    from toolbench.mock_services.webshop.app import create_app

    products = read_product_files(
        fixture_file("webshop", "items_shuffle_1000.json"), fixture_file("webshop", "items_ins_v2_1000.json")
    )
    records = [
        record
        for split in ("test", "demo", "train", "unseen")
        for record in read_records(fixture_file("webshop", f"{split}.jsonl"))
    ]
    goals = [Goal.from_record(record["goal"]) for record in sorted(records, key=lambda r: r["session"])]
    return create_app(Shop(products, nouns=LexiconNouns(generate.noun_lexicon())), goals)
