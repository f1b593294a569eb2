"""The website: real HTML whose visible text (read as WebShop reads it) is the env's observation."""

from __future__ import annotations

import json

import pytest

from toolbench.mock_services.webshop.app import create_app, render_page
from toolbench.mock_services.webshop.shop import Session

from .shopdata import GOAL, small_shop

bs4 = pytest.importorskip("bs4", reason="beautifulsoup4 (a dev dependency) reads pages as WebShop does")


def visible_text(html: str) -> str:
    """WebShop's simple mode: the visible strings of the page joined by [SEP]."""
    soup = bs4.BeautifulSoup(html, "html.parser")
    hidden = {"style", "script", "head", "title", "meta", "[document]"}
    texts = [
        t for t in soup.find_all(string=True) if t.parent.name not in hidden and not isinstance(t, bs4.element.Comment)
    ]
    return " [SEP] ".join(t.strip() for t in texts if t != "\n")


@pytest.fixture(scope="module")
def shop():
    return small_shop(show_attrs=True, reviews=True)


@pytest.fixture(scope="module")
def client(shop):
    evil = GOAL.__class__(**{**GOAL.__dict__, "instruction_text": "buy a <script>alert(1)</script> & more"})
    return create_app(shop, [GOAL, evil]).test_client()


PATHS = [
    ["search[flash drive]"],
    ["search[flash drive]", "click[next >]", "click[next >]"],
    ["search[flash drive]", "click[b0drive004]"],
    ["search[flash drive]", "click[b0drive004]", "click[32gb]", "click[blue | green]"],
    ["search[flash drive]", "click[b0drive004]", "click[description]"],
    ["search[flash drive]", "click[b0drive004]", "click[features]"],
    ["search[flash drive]", "click[b0drive004]", "click[reviews]"],
    ["search[flash drive]", "click[b0drive004]", "click[attributes]"],
    ["search[flash drive]", "click[b0drive004]", "click[16gb]", "click[buy now]"],
    ["search[zzzz]"],
]


@pytest.mark.parametrize("actions", [[], *PATHS], ids=lambda a: "/".join(a) or "start")
def test_every_page_reads_as_the_text_observation(shop, actions):
    app = create_app(shop, [GOAL])
    session = Session(goal=GOAL)
    for action in actions:
        shop.act(session, action)
    with app.test_request_context():
        html = render_page(shop, session, "fixed_0")
    assert visible_text(html) == shop.page(session).simple()
    assert "http://" not in html and "https://" not in html  # nothing is loaded from the network


def follow(client, url, **query):
    response = client.get(url, query_string=query) if query else client.get(url)
    while response.status_code in (301, 302, 303):
        response = client.get(response.headers["Location"])
    assert response.status_code == 200, response.get_data(as_text=True)[:300]
    return response.get_data(as_text=True)


def form_target(html, label):
    """Where the form of the button labelled ``label`` goes, with its hidden fields."""
    soup = bs4.BeautifulSoup(html, "html.parser")
    button = next(b for b in soup.find_all("button") if b.get_text() == label)
    form = button.find_parent("form")
    return form["action"], {i["name"]: i["value"] for i in form.find_all("input", type="hidden")}


def test_a_purchase_through_the_site_scores_as_the_shop(client, shop):
    page = follow(client, "/")
    assert visible_text(page).startswith("WebShop [SEP] Instruction: [SEP] i need a high speed usb flash drive")
    page = follow(client, "/search/fixed_0", search_query="flash drive")
    soup = bs4.BeautifulSoup(page, "html.parser")
    link = next(a for a in soup.find_all("a", class_="product-link") if a.get_text() == "B0DRIVE003")
    page = follow(client, link["href"])
    soup = bs4.BeautifulSoup(page, "html.parser")
    radio = soup.find("input", attrs={"type": "radio", "value": "32gb"})
    form = radio.find_parent("form")
    fields = {i["name"]: i["value"] for i in form.find_all("input", type="hidden")}
    page = follow(client, form["action"], **fields)
    assert json.loads(fields["options"]) == {"size": "32gb"}
    assert bs4.BeautifulSoup(page, "html.parser").find("input", attrs={"value": "32gb"}).has_attr("checked")
    action, fields = form_target(page, "Buy Now")
    done = follow(client, action, **fields)
    expected = Session(goal=GOAL)
    for action_text in ["search[flash drive]", "click[b0drive003]", "click[32gb]", "click[buy now]"]:
        shop.act(expected, action_text)
    assert visible_text(done) == shop.page(expected).simple()
    assert visible_text(done).endswith(f"[SEP] {expected.reward.reward}")


def test_markup_in_an_instruction_or_query_is_escaped(client):
    page = follow(client, "/fixed_1")
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    page = follow(client, "/search/fixed_0", search_query="<img src=x onerror=alert(1)>")
    assert "<img src=x" not in page
    page = follow(client, "/search_results/fixed_0/1", keywords='"><script>x</script>')
    assert "<script>x</script>" not in page


@pytest.mark.parametrize(
    "url",
    ["/fixed_99", "/item_page/fixed_0/B0NOPE", "/item_sub_page/fixed_0/B0DRIVE001/Secrets", "/done/fixed_0/B0NOPE"],
)
def test_unknown_things_are_404(client, url):
    assert client.get(url).status_code == 404


def test_bad_options_and_pages_are_ignored_not_errors(client):
    page = follow(client, "/item_page/fixed_0/B0DRIVE001", options="{not json", page="x")
    assert "Quickline High Speed USB Flash Drive 1" in page
    page = follow(client, "/item_page/fixed_0/B0DRIVE001", options=json.dumps({"size": "9000tb", "color": ["x"]}))
    assert not bs4.BeautifulSoup(page, "html.parser").find("input", checked=True)
    assert client.get("/search_results/fixed_0/1", query_string={"keywords": "x" * 100_000}).status_code in (200, 414)


@pytest.mark.parametrize("url", ["/fixed_%C2%B2", "/fixed_" + "1" * 4301])
def test_odd_session_numbers_are_session_names_not_errors(client, url):
    assert client.get(url).status_code == 200  # not a goal number: a session whose goal a hash picks


def test_deeply_nested_options_are_ignored(client):
    assert client.get("/item_page/fixed_0/B0DRIVE001", query_string={"options": "[" * 1000}).status_code == 200
    assert client.get("/done/fixed_0/B0DRIVE001", query_string={"options": "{" * 5000}).status_code == 200


def test_the_attributes_page_exists_only_where_the_shop_shows_it():
    hidden = create_app(small_shop(), [GOAL]).test_client()
    assert hidden.get("/item_sub_page/fixed_0/B0DRIVE001/Attributes").status_code == 404
    shown = create_app(small_shop(show_attrs=True), [GOAL]).test_client()
    assert shown.get("/item_sub_page/fixed_0/B0DRIVE001/Attributes").status_code == 200
