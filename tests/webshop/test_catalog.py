"""Catalogs in WebShop's record formats: loading follows the original's rules."""

from __future__ import annotations

import json

import pytest

from toolbench.mock_services.webshop.catalog import load_products, parse_pricing, purchase_price, read_product_files


def record(asin, **changes):
    base = {
        "asin": asin,
        "name": f"Product {asin}",
        "full_description": "A thing.",
        "small_description": ["First point", "Second point"],
        "pricing": "$12.99",
        "images": ["https://example.invalid/a.jpg"],
        "customization_options": {
            "Color": [{"value": " Black/White ", "image": None}, {"value": "Red", "image": None}]
        },
        "category": "fashion",
        "query": "  Sneakers ",
        "product_category": "Clothing \u203a Shoes",
        "brand": "ignored",
    }
    base.update(changes)
    return base


@pytest.mark.parametrize(
    ("pricing", "prices", "tag"),
    [
        ("$12.99", (12.99,), "$12.99"),
        ("$10.00 - $20.00", (10.0, 20.0), "$10.0 to $20.0"),
        ("$1,299.00", (1299.0,), "$1299.0"),
        ("$5 - $6 - $7", (5.0, 6.0), "$5.0 to $6.0"),
        ("", (100.0,), "$100.0"),
        (None, (100.0,), "$100.0"),
    ],
)
def test_pricing_is_parsed_as_webshop_parses_it(pricing, prices, tag):
    assert parse_pricing(pricing) == (prices, tag)


def test_original_format_files_load_with_webshops_rules(tmp_path):
    records = [
        record("B000000001"),
        record("nan"),
        record("B00000000012"),  # longer than 10 characters
        record("B000000001", name="a duplicate"),
        record("B000000002", small_description="One string", pricing="$3.00 - $4.50", customization_options=None),
    ]
    attributes = {
        "B000000001": {
            "attributes": ["water resistant"],
            "instruction": "i want shoes",
            "instruction_attributes": ["water resistant"],
        }
    }
    (tmp_path / "items.json").write_text(json.dumps(records))
    (tmp_path / "attrs.json").write_text(json.dumps(attributes))
    products = read_product_files(tmp_path / "items.json", tmp_path / "attrs.json")
    assert [p.asin for p in products] == ["B000000001", "B000000002"]
    first, second = products
    assert first.title == "Product B000000001" and first.bullet_points == ("First point", "Second point")
    assert first.options == {"color": ("black | white", "red")} and first.query == "sneakers"
    assert first.attributes == ("water resistant",) and first.extra["instruction"] == "i want shoes"
    assert first.image == "https://example.invalid/a.jpg" and first.rating == "N.A." and first.reviews == ()
    assert second.attributes == ("DUMMY_ATTR",) and second.bullet_points == ("One string",) and second.options == {}
    assert second.price_tag == "$3.0 to $4.5" and 3.0 <= purchase_price(second) <= 4.5
    assert purchase_price(second) == purchase_price(read_product_files(tmp_path / "items.json")[1])  # no RNG state
    assert [p.asin for p in load_products(records, attributes, limit=1)] == ["B000000001"]


def test_files_that_are_not_catalogs_are_refused(tmp_path):
    (tmp_path / "items.json").write_text(json.dumps({"not": "a list"}))
    with pytest.raises(ValueError, match="JSON list"):
        read_product_files(tmp_path / "items.json")


def _texts(value):
    """Every string inside a record (keys and values)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _texts(key)
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def test_no_generated_text_holds_an_unfilled_template_field():
    import re

    from toolbench.core.tasks import fixture_file
    from toolbench.mock_services.webshop import generate

    records, attributes = generate.catalog(2000)  # every product type about 18 times
    shipped = [json.loads(fixture_file("webshop", name).read_text()) for name in ("items_shuffle_1000.json",
               "items_ins_v2_1000.json")]  # fmt: skip
    unfilled = re.compile(r"[{}]")
    for source in (records, attributes, *shipped):
        leaks = [text for text in _texts(source) if unfilled.search(text)]
        assert not leaks, leaks[:3]


def test_the_vocabulary_file_keeps_the_rules_the_generator_relies_on():
    from toolbench.mock_services.webshop import vocabulary

    vocabulary.check()  # counts, placeholders, nouns, clean ASCII text
    assert len(vocabulary.PRODUCT_TYPES) == 109 and sorted(vocabulary.REVIEW_BODIES) == [1, 2, 3, 4, 5]
