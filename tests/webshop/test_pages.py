"""Pages, transitions and observations in WebShop's formats (its pages' own strings)."""

from __future__ import annotations

import pytest

from toolbench.mock_services.webshop.shop import InvalidAction, Session, parse_action

from .shopdata import GOAL, INSTRUCTION, small_shop

I = INSTRUCTION  # noqa: E741


@pytest.fixture(scope="module")
def shop():
    return small_shop()


def play(shop, *actions):
    session = Session(goal=GOAL)
    for action in actions:
        shop.act(session, action)
    return session


def test_search_page(shop):
    page = shop.page(play(shop))
    assert page.simple() == f"WebShop [SEP] Instruction: [SEP] {I} [SEP] Search"
    assert page.has_search_bar and page.clickables == ("search",)


def test_results_pages(shop):
    session = play(shop, "search[flash drive]")
    text = shop.page(session).simple()
    assert text.startswith(
        f"Instruction: [SEP] {I} [SEP] Back to Search [SEP] Page 1 (Total results: 25) [SEP] Next > [SEP] B0DRIVE"
    )
    rows = text.split(" [SEP] Next > [SEP] ")[1].split(" [SEP] ")
    assert len(rows) == 30 and rows[2].startswith("$")  # ten products: asin, title, price
    assert shop.page(session).clickables[:2] == ("back to search", "next >")
    shop.act(session, "click[next >]")
    assert " [SEP] Page 2 (Total results: 25) [SEP] < Prev [SEP] Next > [SEP] " in shop.page(session).simple()
    shop.act(session, "click[next >]")
    shop.act(session, "click[next >]")  # past the last result: an empty page, still with Next >
    assert shop.page(session).simple().endswith("Page 4 (Total results: 25) [SEP] < Prev [SEP] Next >")
    shop.act(session, "click[< prev]")
    assert "Page 3 (Total results: 25)" in shop.page(session).simple()


def test_item_page_and_options(shop):
    session = play(shop, "search[flash drive]", "click[b0drive003]")
    assert shop.page(session).simple() == (
        f"Instruction: [SEP] {I} [SEP] Back to Search [SEP] < Prev [SEP] size [SEP] 16gb [SEP] 32gb [SEP] color "
        "[SEP] black [SEP] blue | green [SEP] Quickline High Speed USB Flash Drive 3 [SEP] Price: $13.0 [SEP] "
        "Rating: N.A. [SEP] Description [SEP] Features [SEP] Reviews [SEP] Buy Now"  # WebShop shows no ratings
    )
    assert shop.page(session).clickables == (
        "back to search", "< prev", "description", "features", "reviews", "buy now", "16gb", "32gb", "black", "blue | green",
    )  # fmt: skip
    shop.act(session, "click[32gb]")
    shop.act(session, "click[16gb]")  # one value per option: the later click replaces
    shop.act(session, "click[black]")
    assert session.options == {"size": "16gb", "color": "black"}
    rich = shop.page(session).rich()
    assert rich.startswith("You have clicked black.\nYou have clicked 16gb.\nInstruction:\n")
    assert "  [clicked button] 16gb [clicked button_]\n  [button] 32gb [button_]\n" in rich
    assert "[button] Buy Now [button_]\n" in rich


def test_sub_pages_and_back(shop):
    session = play(shop, "search[flash drive]", "click[b0drive003]", "click[32gb]", "click[description]")
    assert shop.page(session).simple() == (
        f"Instruction: [SEP] {I} [SEP] Back to Search [SEP] < Prev [SEP] A pocket drive number 3 with a metal shell."
    )
    shop.act(session, "click[< prev]")
    assert session.page == "item" and session.options == {"size": "32gb"}
    shop.act(session, "click[features]")
    assert shop.page(session).simple().endswith("< Prev [SEP] Reads at 150 MB per second [SEP] Key ring loop")
    shop.act(session, "click[< prev]")
    shop.act(session, "click[reviews]")
    assert shop.page(session).simple().endswith("Back to Search [SEP] < Prev")  # as in WebShop: no reviews
    shown = small_shop(reviews=True)
    listed = (
        '< Prev [SEP] "Works fine" [SEP] 4 [SEP] Fast enough for photos. [SEP] "Broke" [SEP] 1 [SEP] The cap fell off.'
    )
    assert shown.page(session).simple().endswith(listed)
    shown.act(session, "click[< prev]")
    assert "[SEP] Rating: 2.5 [SEP]" in shown.page(session).simple()
    shown.act(session, "click[reviews]")
    shop.act(session, "click[< prev]")
    shop.act(session, "click[< prev]")  # item page back to the results: the options are dropped
    assert session.page == "results" and session.options == {}


def test_attributes_page_only_when_shown():
    shop = small_shop(show_attrs=True)
    session = play(shop, "search[flash drive]", "click[b0drive003]")
    assert "[SEP] Reviews [SEP] Attributes [SEP] Buy Now" in shop.page(session).simple()
    shop.act(session, "click[attributes]")
    assert shop.page(session).simple().endswith("< Prev [SEP] high speed [SEP] plug and play")


def test_buying_ends_on_the_done_page_with_the_reward(shop):
    session = play(shop, "search[flash drive]", "click[b0drive003]", "click[32gb]", "click[black]", "click[buy now]")
    assert session.reward is not None and session.reward.reward == 1.0
    text = shop.page(session).simple()
    assert text.startswith(
        "Thank you for shopping with us! [SEP] Your code: [SEP] (Paste it in your MTurk interface.) [SEP] Purchased "
        '[SEP] asin [SEP] B0DRIVE003 [SEP] options [SEP] {"color": "black", "size": "32gb"} [SEP] attrs'  # keys sorted, as tojson
    )
    assert text.endswith("[SEP] Your score (min 0.0, max 1.0) [SEP] 1.0")
    assert shop.page(session).clickables == ()
    with pytest.raises(InvalidAction):
        shop.act(session, "search[anything]")


def test_search_works_from_any_page_and_back_to_search_resets(shop):
    session = play(shop, "search[flash drive]", "click[b0drive003]", "click[32gb]", "search[scarf]")
    assert session.page == "results" and session.hits[0] == 25 and session.options == {}
    shop.act(session, "click[back to search]")
    assert session.page == "search" and session.keywords == "" and session.visited == []


@pytest.mark.parametrize(
    ("action", "why"),
    [
        ("click[search]", "search[your query]"),
        ("search[]", "an action is"),
        ("search[   ]", "needs words"),
        ("click[b0drive003]", "no 'b0drive003' to click"),
        ("buy now", "an action is"),
        ("jump[x]", "unknown action"),
        ("click[next >", "an action is"),
    ],
)
def test_invalid_actions_change_nothing_and_say_why(shop, action, why):
    session = play(shop)
    with pytest.raises(InvalidAction, match=why.replace("[", r"\[").replace("]", r"\]")):
        shop.act(session, action)
    assert session.page == "search"


def test_actions_parse_as_webshop_parses_them():
    assert parse_action("click[Next >]") == ("click", "Next >")
    assert parse_action("search[a [b] c]") == ("search[a ", "b] c")  # greedy: the last "[" splits, as the original
    assert parse_action("search[a][b]") == ("search[a]", "b")
    assert parse_action("click[x]\nsearch[y]") == ("click", "x")  # "." stops at the line's end
    assert parse_action("look around") == ("look around", None)


def test_rich_mode_marks_products_opened_before(shop):
    session = play(shop, "search[flash drive]", "click[b0drive003]", "click[< prev]")
    rich = shop.page(session).rich()
    assert "\n[clicked button] B0DRIVE003 [clicked button_]\n" in rich and "\n[button] B0DRIVE001 [button_]\n" in rich
    assert rich.startswith(f"Instruction:\n{I}\n[button] Back to Search [button_]\nPage 1 (Total results: 25)\n")


def test_search_tokens_are_cut_as_lucene_cuts_them():
    from toolbench.mock_services.webshop.search import lucene_tokens

    assert lucene_tokens("women's 1.7 fl oz for 80.00 dollars, size 8") == [
        "women", "1.7", "fl", "oz", "for", "80.00", "dollars", "size", "8",
    ]  # fmt: skip


def test_equal_scores_are_ranked_by_asin():
    from toolbench.mock_services.webshop.search import SearchEngine

    from .shopdata import drive

    products = [drive(i, asin=asin, title="Same Words", description="", bullet_points=("",)) for i, asin in
                enumerate(["B0ZZZZZZZ1", "B0AAAAAAA1", "B0MMMMMMM1"])]  # fmt: skip
    assert SearchEngine(products).search("same words") == [1, 2, 0]


def test_the_top_hits_are_those_of_a_full_ranking():
    """Search sorts only the hits that can place; the result is the full ranking's head, ties included."""
    import numpy as np

    from toolbench.envs.webshop import shipped_products
    from toolbench.mock_services.webshop.search import SearchEngine

    from .shopdata import drive

    same = [drive(i, asin=f"B0TIE{i:05d}", title="Same Words", description="", bullet_points=("",)) for i in range(80)]
    for products in (list(shipped_products()), same[::-1]):
        engine = SearchEngine(products)
        for query in ("usb flash drive 32 gb", "organic green tea", "long lasting", "same words"):
            ids = engine._tokenizer.tokenize([query], update_vocab=False, show_progress=False, return_as="ids")[0]
            scores = engine._index.get_scores(ids)
            hits = np.flatnonzero(scores > 0)
            full = [int(i) for i in hits[np.lexsort((engine._asin_rank[hits], -scores[hits]))]]
            for k in (1, 10, 50):
                assert engine.search(query, k) == full[:k], (query, k)
