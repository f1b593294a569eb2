"""WebShop's reward, part by part, on products and goals written here."""

import pytest

from toolbench.mock_services.webshop.catalog import Product
from toolbench.mock_services.webshop.reward import Goal, LexiconNouns, get_reward, normalize_color, similarity

NOUNS = LexiconNouns(["wool", "socks", "crew", "hiking", "boots", "liner", "kettle"])


def socks(**changes) -> Product:
    fields = dict(
        asin="B0TEST0001",
        title="Trailmark Wool Hiking Socks",
        description="Knitted for long walks, with a reinforced heel and a soft toe seam.",
        bullet_points=("Merino blend", "Keeps feet dry"),
        pricing=(12.0,),
        price_tag="$12.0",
        options={"color": ("grey", "navy blue"), "size": ("m", "xl")},
        attributes=("breathable",),
        category="fashion",
        query="hiking socks",
        product_category="Clothing, Shoes & Jewelry \u203a Men \u203a Socks",
    )
    fields.update(changes)
    return Product(**fields)


GOAL = Goal(
    asin="B0TEST0001",
    instruction_text="i want hiking socks",
    attributes=("arch support", "odor resistant", "reinforced heel"),  # only the last: in the description
    goal_options={"color": "grey", "size": "xl", "pack": "pack of 6"},
    price_upper=20.0,
    query="hiking socks",
    category="fashion",
    product_category="Clothing, Shoes & Jewelry \u203a Men \u203a Socks",
    name="Trailmark Wool Hiking Socks",
)


def test_the_worked_example_scores_four_sevenths():
    reward = get_reward(socks(), GOAL, 12.0, {"color": "grey", "size": "xl"}, NOUNS)
    assert reward.attributes_matched == 1 and reward.options_matched == 2 and reward.r_price
    assert reward.r_type == 1.0 and reward.reward == pytest.approx(4 / 7)
    assert reward.r_att == pytest.approx(1 / 3) and reward.r_option == pytest.approx(2 / 3)


def test_a_type_mismatch_halves_it_to_two_sevenths():
    goal = Goal(**{**GOAL.__dict__, "query": "boot liners", "product_category": "Sports \u203a Outdoors \u203a Liners",
                   "name": "wool crew hiking boots liner"})  # fmt: skip
    reward = get_reward(socks(), goal, 12.0, {"color": "grey", "size": "xl"}, NOUNS)
    assert not reward.query_match and not reward.category_match
    assert reward.title_score == pytest.approx(2 / 5)  # wool and hiking of five nouns: > 0.2, so no penalty
    goal = Goal(**{**goal.__dict__, "name": "wool crew boots liner kettle"})
    reward = get_reward(socks(), goal, 12.0, {"color": "grey", "size": "xl"}, NOUNS)
    assert reward.title_score == pytest.approx(1 / 5) and reward.r_type == 0.5
    assert reward.reward == pytest.approx(2 / 7)


@pytest.mark.parametrize(
    ("title_nouns", "expected"),
    [("kettle", 0.0), ("wool kettle boots liner crew hiking socks kettle kettle kettle kettle", 1.0)],
)
def test_the_type_factor_follows_title_nouns(title_nouns, expected):
    goal = Goal(**{**GOAL.__dict__, "query": "other", "product_category": "A \u203a B", "name": title_nouns})
    assert get_reward(socks(), goal, 12.0, {}, NOUNS).r_type == expected


def test_price_over_the_bound_and_unchosen_options_lose_their_share():
    reward = get_reward(socks(), GOAL, 25.0, {}, NOUNS)
    assert not reward.r_price and reward.options_matched == 0 and reward.reward == pytest.approx(1 / 7)


def test_colours_are_checked_in_alphabetical_order():
    from toolbench.mock_services.webshop.reward import COLORS

    assert list(COLORS) == sorted(COLORS) and len(set(COLORS)) == len(COLORS)


def test_the_colour_words_are_webshops():
    from toolbench.mock_services.webshop.reward import COLORS

    assert len(COLORS) == 102  # WebShop's COLOR_SET
    assert normalize_color("camo green") == "camo"  # camo comes before green
    assert normalize_color("heather grey") == "grey" and normalize_color("royal blue") == "blue"
    assert normalize_color("midnight navy") == "midnight"  # before navy; ours once read it as navy
    assert normalize_color("stonewash") == "ash"  # a substring, as in WebShop


def test_fuzzy_matching_is_thefuzz_token_set_ratio():
    assert similarity(("size", "xl"), "xl") == 100  # a subset of the other's words
    assert similarity("Gluten-Free", "gluten free") == 100  # punctuation and case do not count
    assert similarity("high speed", "high-speed usb") == 100
    assert similarity("water resistant", "wrinkle resistant") <= 85
    assert normalize_color("dark navy blue heather") == "blue"  # the first colour word in alphabetical order
    assert normalize_color("coconut cashew") == "ash"  # a substring counts, as in WebShop
    assert normalize_color(("color", "grey")) == "grey" and normalize_color(("size", "xl")) == ("size", "xl")


def test_attributes_match_by_list_or_by_text():
    product = socks(attributes=("Odour Resistant", "breathable"), bullet_points=("Great arch support for trails",))
    # "odor resistant" by fuzzy match, "arch support" in a bullet, "reinforced heel" in the description
    assert get_reward(product, GOAL, 12.0, {}, NOUNS).attributes_matched == 3
