"""The Home Search backend: listings, search semantics and the API's rules."""

import pytest

from toolbench.core.program import RuleError
from toolbench.mock_services.home_search import BUY_TYPES, HomeSearchAPI, load_listings, search


@pytest.fixture(scope="module")
def homes():
    return load_listings()


def started(mode="buy", city="Boston"):
    api = HomeSearchAPI()
    api.set_location(city)
    api.set_buy_or_rent(mode)
    return api


def test_listings_database(homes):
    assert len(homes) >= 2000 and len({h.city for h in homes}) >= 30
    assert {h.buy_or_rent for h in homes} == {"buy", "rent"}
    assert {h.home_type for h in homes if h.buy_or_rent == "buy"} == set(BUY_TYPES)
    rents = [h.price for h in homes if h.buy_or_rent == "rent"]
    sales = [h.price for h in homes if h.buy_or_rent == "buy" and h.home_type != "land"]
    assert min(rents) >= 500 and max(rents) < 20_000 and min(sales) > 20_000  # rents are monthly


def test_search_semantics(homes):
    criteria = {
        "location": "Denver",
        "buy_or_rent": "rent",
        "home_type": "apartment,condo",
        "num_beds": 2,
        "max_price": 4000,
        "min_price": 0,
        "min_square_feet": 0,
    }
    found = search(homes, criteria)
    assert found == sorted(found, key=lambda h: (h.price, h.id))
    assert all(
        h.city == "Denver" and h.home_type in ("apartment", "condo") and h.beds >= 2 and h.price <= 4000 for h in found
    )
    expected = [
        h
        for h in homes
        if h.city == "Denver"
        and h.buy_or_rent == "rent"
        and h.home_type in ("apartment", "condo")
        and h.beds >= 2
        and h.price <= 4000
    ]
    assert len(found) == len(expected) > 0
    floor = next(h for h in homes if h.home_type == "apartment").floor
    assert all(h.floor == floor for h in search(homes, {"floor_number": floor}))


def test_the_criteria_use_the_benchmark_keys():
    api = started("rent", "boston")
    api.select_home_type(["Condo", "apartment", "Condo"])
    api.set_num_baths(2)
    api.set_max_price(3500)
    result = api.search()
    assert api.criteria == {
        "location": "Boston",
        "buy_or_rent": "rent",
        "home_type": "apartment,condo",
        "num_baths": 2.0,
        "max_price": 3500,
        "min_price": 0,
        "min_square_feet": 0,
    }
    assert result.startswith("Search criteria:") and "Found" in result and api.results is not None


@pytest.mark.parametrize(
    "calls, message",
    [
        ([("set_buy_or_rent", "buy")], "before set_location"),
        ([("set_num_beds", 2)], "before set_buy_or_rent"),
        ([("set_location", "Boston"), ("set_num_beds", 2)], "before set_buy_or_rent"),
        ([("set_location", "Boston"), ("set_location", "Denver")], "must be the first call"),
        ([("set_location", "Boston"), ("set_buy_or_rent", "lease")], "expects 'buy' or 'rent'"),
        (
            [("set_location", "Boston"), ("set_buy_or_rent", "buy"), ("set_buy_or_rent", "rent")],
            "right after set_location",
        ),
        (
            [("set_location", "Boston"), ("set_buy_or_rent", "rent"), ("select_home_type", ["Land"])],
            "not a home type for renting",
        ),
        (
            [("set_location", "Boston"), ("set_buy_or_rent", "buy"), ("select_home_type", ["Apartment"])],
            "not a home type for buying",
        ),
        (
            [("set_location", "Boston"), ("set_buy_or_rent", "buy"), ("select_home_type", "House")],
            "expects a list of home types",
        ),
        ([("set_location", "Boston"), ("set_buy_or_rent", "buy"), ("set_num_beds", "two")], "whole number"),
        ([("set_location", "Boston"), ("set_buy_or_rent", "buy"), ("set_num_beds", -1)], "at least 0"),
        ([("set_location", "Boston"), ("set_buy_or_rent", "buy"), ("set_num_baths", 2.3)], "such as 2 or 2.5"),
        ([("set_location", "")], "expects a city name"),
    ],
)
def test_broken_rules_name_the_rule(calls, message):
    api = HomeSearchAPI()
    with pytest.raises(RuleError, match=message):
        for name, *args in calls:
            getattr(api, name)(*args)


def test_snapshot_and_restore():
    api = started()
    api.set_num_beds(3)
    api.search()
    snapshot = api.snapshot()
    other = HomeSearchAPI()
    other.restore(snapshot)
    assert other.criteria == api.criteria and other.results == api.results


def test_the_index_finds_what_a_full_scan_finds(homes):
    """Searches read one bucket of the city and buy/rent index; they must match scanning every listing."""
    from toolbench.mock_services.home_search.listings import Listings, default_listings

    listings = default_listings()
    cities = sorted({h.city for h in homes})
    assert listings.homes is homes and Listings(homes[:50]).homes == homes[:50]
    for index, city in enumerate(cities):
        for mode in ("buy", "rent"):
            for criteria in (
                {"location": city, "buy_or_rent": mode},
                {"location": city.upper(), "buy_or_rent": mode, "num_beds": 1 + index % 3, "max_price": 10**6},
                {"location": city, "buy_or_rent": mode, "home_type": "condo,house", "floor_number": index % 4},
            ):
                assert listings.search(criteria) == search(homes, criteria), criteria
    assert listings.search({"location": "Atlantis", "buy_or_rent": "buy"}) == []
    assert listings.search({"num_beds": 5}) == search(homes, {"num_beds": 5})  # no city: a full scan
    assert HomeSearchAPI(homes[:10]).listings.homes == homes[:10]  # a caller's own listings get their own index
