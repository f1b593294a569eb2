"""A small shop written for the tests (no generated catalog), with two goals."""

from __future__ import annotations

from toolbench.mock_services.webshop.catalog import Product, Review
from toolbench.mock_services.webshop.reward import Goal, LexiconNouns
from toolbench.mock_services.webshop.shop import Shop

INSTRUCTION = "i need a high speed usb flash drive that is 32 gb, and price lower than 50.00 dollars"


def drive(index: int, **changes) -> Product:
    fields = dict(
        asin=f"B0DRIVE{index:03d}",
        title=f"Quickline High Speed USB Flash Drive {index}",
        description=f"A pocket drive number {index} with a metal shell.",
        bullet_points=("Reads at 150 MB per second", "Key ring loop"),
        pricing=(10.0 + index,),
        price_tag=f"${10.0 + index}",
        options={"size": ("16gb", "32gb"), "color": ("black", "blue | green")},
        attributes=("high speed", "plug and play"),
        category="electronics",
        query="usb flash drive",
        product_category="Electronics \u203a Computers \u203a Flash Drives",
        reviews=(Review("Works fine", 4, "Fast enough for photos."), Review("Broke", 1, "The cap fell off.")),
        rating="2.5",
    )
    fields.update(changes)
    return Product(**fields)


def small_shop(count: int = 25, show_attrs: bool = False, reviews: bool = False) -> Shop:
    products = [drive(i) for i in range(count)]
    products.append(drive(99, title="Cozy Knit Scarf", description="warm", options={}, query="scarf",
                          asin="B0SCARF001", product_category="Clothing \u203a Scarves"))  # fmt: skip
    return Shop(products, show_attrs=show_attrs, nouns=LexiconNouns(["flash", "drive", "scarf"]), show_reviews=reviews)


GOAL = Goal(
    asin="B0DRIVE003",
    instruction_text=INSTRUCTION,
    attributes=("high speed",),
    goal_options={"size": "32gb", "color": "black"},
    price_upper=50.0,
    query="usb flash drive",
    category="electronics",
    product_category="Electronics \u203a Computers \u203a Flash Drives",
    name="Quickline High Speed USB Flash Drive 3",
)
