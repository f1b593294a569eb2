"""The shop as a website: WebShop's pages as real HTML, for people and browser agents.

``create_app(shop, goals)`` is a Flask app with one blueprint. Like WebShop's site, the URLs carry
the whole state (the search words, the page, the product and the chosen options), so any page can
be bookmarked or opened twice; ``/fixed_<n>`` is a session for goal ``n`` (as in the original), any
other session id picks a goal by a stable hash of the id. The pages are rendered from the same
``Shop`` logic the env uses, and their visible text is exactly the env's ``text`` observation.
No page loads anything from the network. The done page shows the score of that purchase, and the
site keeps no record of it (anyone may buy again): it is for people and browser agents to shop in,
while runs are scored by the env.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from flask import Blueprint, Flask, abort, redirect, render_template, request, url_for
from werkzeug.exceptions import default_exceptions
from werkzeug.wrappers import Response

from toolbench.core.seeding import stable_hash
from toolbench.mock_services.errors import answer_unreadable_requests
from toolbench.mock_services.webshop.reward import Goal
from toolbench.mock_services.webshop.shop import MAX_QUERY_CHARS, SUB_PAGES, Session, Shop

MAX_OPTIONS_CHARS = 4096  # the options JSON in a URL: a product's few choices fit many times over


def create_app(shop: Shop, goals: Sequence[Goal]) -> Flask:
    """A Flask app serving ``shop`` with ``goals`` as its sessions' instructions."""
    if not goals:
        raise ValueError("the shop needs at least one goal to serve")
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = 64 * 1024
    app.register_blueprint(_pages(shop, list(goals)))
    # Flask's own HTML error page, as WebShop's Flask site answers its other client errors
    answer_unreadable_requests(app, lambda status, message: default_exceptions[status](message).get_response())
    return app


def goal_for(session_id: str, goals: Sequence[Goal]) -> Goal:
    """``fixed_<n>``: goal ``n``; anything else: a goal chosen by a stable hash of the id."""
    number = session_id[6:]
    if session_id.startswith("fixed_") and number.isascii() and number.isdecimal() and len(number) <= 9:
        index = int(number)
        if index >= len(goals):
            abort(404, f"there are {len(goals)} goals; {session_id} names none of them")
        return goals[index]
    return goals[stable_hash("webshop-session", session_id) % len(goals)]


def render_page(shop: Shop, state: Session, session_id: str) -> str:
    """The HTML of ``state``'s page (inside a request context of the shop's app)."""
    options = state.options

    def options_with(name: str, value: str) -> str:
        return json.dumps({**options, name: value})

    values: dict[str, Any] = {
        "session_id": session_id,
        "instruction": state.goal.instruction_text,
        "keywords": state.keywords,
        "page": state.page_number,
        "options": options,
        "options_json": json.dumps(options),
        "options_with": options_with,
    }
    if state.page == "search":
        return render_template("search_page.html", **values)
    if state.page == "results":
        return render_template("results_page.html", total=len(state.hits), products=shop.results(state), **values)
    product = shop.by_asin[state.asin or ""]
    values.update(rating=shop.rating(product), reviews=shop.reviews(product))
    if state.page == "item":
        sub_pages = SUB_PAGES if shop.show_attrs else SUB_PAGES[:3]
        return render_template("item_page.html", product=product, sub_pages=sub_pages, **values)
    if state.page == "done":
        reward = state.reward.reward if state.reward else 0.0
        values["options_json"] = json.dumps(options, sort_keys=True)
        return render_template("done_page.html", product=product, reward=reward, **values)
    return render_template("sub_page.html", product=product, sub_page=state.page.capitalize(), **values)


def _pages(shop: Shop, goals: list[Goal]) -> Blueprint:
    pages = Blueprint("webshop", __name__, template_folder="templates")

    def session(session_id: str, keywords: str = "", page: int = 1, asin: str | None = None) -> Session:
        state = Session(goal=goal_for(session_id, goals))
        if keywords:
            shop.search(state, keywords[:MAX_QUERY_CHARS].lower())
            state.page_number = max(1, page)
        if asin is not None:
            product = shop.by_asin.get(asin)
            if product is None:
                abort(404, f"no product {asin}")
            state.asin, state.options = asin, _chosen_options(product.options)
        return state

    def search_args() -> tuple[str, int]:
        return request.args.get("keywords", ""), request.args.get("page", 1, type=int)

    @pages.route("/")
    def home() -> Response:
        return redirect(url_for("webshop.index", session_id="fixed_0"))

    @pages.route("/<session_id>")
    def index(session_id: str) -> str:
        return render_page(shop, session(session_id), session_id)

    @pages.route("/search/<session_id>")
    def search(session_id: str) -> Response:
        query = request.args.get("search_query", "").strip()[:MAX_QUERY_CHARS]
        if not query:
            return redirect(url_for("webshop.index", session_id=session_id))
        return redirect(url_for("webshop.results", session_id=session_id, page=1, keywords=query))

    @pages.route("/search_results/<session_id>/<int:page>")
    def results(session_id: str, page: int) -> str:
        state = session(session_id, request.args.get("keywords", ""), page)
        state.page = "results"
        return render_page(shop, state, session_id)

    @pages.route("/item_page/<session_id>/<asin>")
    def item(session_id: str, asin: str) -> str:
        state = session(session_id, *search_args(), asin=asin)
        state.page = "item"
        return render_page(shop, state, session_id)

    @pages.route("/item_sub_page/<session_id>/<asin>/<sub_page>")
    def sub_page(session_id: str, asin: str, sub_page: str) -> str:
        if sub_page not in SUB_PAGES or (sub_page == "Attributes" and not shop.show_attrs):
            abort(404, f"no page {sub_page}")
        state = session(session_id, *search_args(), asin=asin)
        state.page = sub_page.lower()
        return render_page(shop, state, session_id)

    @pages.route("/done/<session_id>/<asin>")
    def done(session_id: str, asin: str) -> str:
        state = session(session_id, asin=asin)
        shop.buy(state)
        return render_page(shop, state, session_id)

    return pages


def _chosen_options(offered: dict[str, tuple[str, ...]]) -> dict[str, str]:
    """The ``options`` query argument (JSON), keeping only values the product offers."""
    text = request.args.get("options") or "{}"
    if len(text) > MAX_OPTIONS_CHARS:
        return {}
    try:
        chosen = json.loads(text)
    except (ValueError, RecursionError):
        return {}
    if not isinstance(chosen, dict):
        return {}
    return {name: value for name, value in chosen.items() if isinstance(value, str) and value in offered.get(name, ())}
