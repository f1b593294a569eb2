"""The shop's pages and how actions move between them: WebShop's ``SimServer``, without a browser.

A ``Session`` is one shopper's state (page, search, product, chosen options). ``Shop.act`` applies
``search[...]`` and ``click[...]`` with WebShop's rules: the argument is lower-cased; a search with
text works from any page; a click must name a button, product or option of the current page (not
``search``). ``Shop.page`` lays the current page out as a list of ``Element``s in document order, and
the two text forms are read off it: ``simple`` (WebShop's ``text`` mode: the visible strings joined
by `` [SEP] ``) and ``rich`` (its ``text_rich`` mode with ``[button] ... [button_]`` markers). The Flask
site (``app.py``) renders the same pages as HTML whose visible text is exactly the simple form (a
test parses it as WebShop does, with BeautifulSoup).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolbench.mock_services.webshop.catalog import Product, Review, purchase_price
from toolbench.mock_services.webshop.reward import Goal, LexiconNouns, Nouns, Reward, get_reward
from toolbench.mock_services.webshop.search import SEARCH_RETURN_N, SearchEngine

PRODUCT_WINDOW = 10
SEP = " [SEP] "
BACK_TO_SEARCH, NEXT_PAGE, PREV_PAGE, END_BUTTON = "Back to Search", "Next >", "< Prev", "Buy Now"
SUB_PAGES = ("Description", "Features", "Reviews", "Attributes")
SCORE_LABEL = "Your score (min 0.0, max 1.0)"
#: The longest query a search takes (the rest is cut): longer ones only cost time and page size.
MAX_QUERY_CHARS = 1000


@dataclass
class Session:
    """One shopper's place in the shop."""

    goal: Goal
    page: str = "search"  # search | results | item | description | features | reviews | attributes | done
    keywords: str = ""
    page_number: int = 1
    hits: tuple[int, ...] = ()  # product indexes the last search found, best first
    asin: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    visited: list[str] = field(default_factory=list)  # asins opened since the last Back to Search
    reward: Reward | None = None

    def snapshot(self) -> dict[str, Any]:
        return {
            "page": self.page,
            "keywords": self.keywords,
            "page_number": self.page_number,
            "hits": list(self.hits),
            "asin": self.asin,
            "options": dict(self.options),
            "visited": list(self.visited),
        }

    def restore(self, state: dict[str, Any]) -> None:
        self.page, self.keywords, self.page_number = state["page"], state["keywords"], int(state["page_number"])
        self.hits, self.asin = tuple(state["hits"]), state["asin"]
        self.options, self.visited = dict(state["options"]), list(state["visited"])
        self.reward = None


@dataclass(frozen=True)
class Element:
    """One visible string of a page: plain text, a button, an option value or a product link."""

    kind: str  # text | button | option | product
    text: str
    selected: bool = False  # an option that is chosen, a product already opened


@dataclass(frozen=True)
class Page:
    kind: str
    elements: tuple[Element, ...]
    clickables: tuple[str, ...]  # lower-case button texts, asins and option values, in page order
    has_search_bar: bool

    def simple(self) -> str:
        """WebShop's ``text`` observation."""
        return SEP.join(element.text.strip() for element in self.elements if element.text.strip())

    def rich(self) -> str:
        """WebShop's ``text_rich`` observation."""
        observation = ""
        for element in self.elements:
            if not element.text.strip():
                continue
            text = element.text
            if element.kind == "button":
                piece = f"[button] {text} [button_]"
            elif element.kind == "option" and element.selected:
                piece = f"  [clicked button] {text} [clicked button_]"
                observation = f"You have clicked {text}.\n" + observation
            elif element.kind == "option":
                piece = f"  [button] {text} [button_]"
            elif element.kind == "product":
                marker = "clicked button" if element.selected else "button"
                piece = f"\n[{marker}] {text} [{marker}_]"
            else:
                piece = text
            observation += piece + "\n"
        return observation


def search_page_text(instruction: str) -> str:
    """The search page in ``text`` mode: an episode's first observation."""
    return f"WebShop{SEP}Instruction:{SEP}{instruction.strip()}{SEP}Search"


def parse_action(action: str) -> tuple[str, str | None]:
    """WebShop's split of ``name[argument]`` (its ``(.+)\\[(.+)\\]`` matched from the start: within the
    first line, the argument runs from the last ``[`` to the last ``]``, both parts non-empty); no
    match: the whole text and None. Found with two scans, not the pattern, which takes quadratic time
    on text with many ``[`` and no ``]``."""
    line = action.split("\n", 1)[0]
    close = line.rfind("]")
    opening = line.rfind("[", 1, close - 1) if close > 1 else -1
    if opening < 1:
        return action, None
    return line[:opening], line[opening + 1 : close]


class InvalidAction(ValueError):
    """An action that does nothing on this page; the message says why."""


class Shop:
    """The products, their search engine and the page logic shared by the env and the site."""

    def __init__(
        self,
        products: Sequence[Product],
        show_attrs: bool = False,
        nouns: Nouns | None = None,
        show_reviews: bool = False,
    ) -> None:
        self.products = list(products)
        self.by_asin = {product.asin: product for product in self.products}
        self.index_of = {product.asin: index for index, product in enumerate(self.products)}
        self._asin_of = {product.asin.lower(): product.asin for product in self.products}
        self.engine = SearchEngine(self.products)
        self.show_attrs = show_attrs
        # WebShop never loads its reviews file: every product shows "Rating: N.A." and no reviews.
        self.show_reviews = show_reviews
        self.nouns = nouns or LexiconNouns(())

    # ------------------------------------------------------------------ actions
    def act(self, session: Session, action: str) -> None:
        """Apply one action; raises ``InvalidAction`` (session unchanged) if it does nothing here."""
        if session.page == "done":
            raise InvalidAction("the purchase is made; the episode is over")
        name, argument = parse_action(action)
        if argument is None:
            raise InvalidAction("an action is search[query] or click[button text]")
        if name == "search":
            self.act_search(session, argument)
        elif name == "click":
            self.act_click(session, argument)
        else:
            raise InvalidAction(f"unknown action {name[:40]!r}: an action is search[query] or click[button text]")

    def act_search(self, session: Session, query: str) -> None:
        """``search[query]``, from any page; raises ``InvalidAction`` for an empty query."""
        if session.page == "done":
            raise InvalidAction("the purchase is made; the episode is over")
        if not query.strip():
            raise InvalidAction("search[...] needs words to search for")
        self.search(session, query.lower())

    def act_click(self, session: Session, target: str) -> None:
        """``click[target]`` (lower-cased): a button, product or option of the current page."""
        if session.page == "done":
            raise InvalidAction("the purchase is made; the episode is over")
        target = target.lower()
        if target == "search":
            raise InvalidAction("to search, write search[your query]")
        page = self.page(session)
        if target not in page.clickables:
            shown = ", ".join(page.clickables) or "none"
            raise InvalidAction(f"there is no {target[:80]!r} to click on this page (you can click: {shown})")
        self.click(session, target)

    def search(self, session: Session, keywords: str) -> None:
        keywords = keywords[:MAX_QUERY_CHARS]
        session.page, session.keywords, session.page_number = "results", keywords, 1
        session.hits = tuple(self.engine.search(keywords, SEARCH_RETURN_N))
        session.asin, session.options = None, {}

    def click(self, session: Session, target: str) -> None:
        page = session.page
        if target == BACK_TO_SEARCH.lower():
            session.page, session.keywords, session.page_number, session.hits = "search", "", 1, ()
            session.asin, session.options, session.visited = None, {}, []
        elif page == "results" and target == NEXT_PAGE.lower():
            session.page_number += 1
        elif page == "results" and target == PREV_PAGE.lower():
            session.page_number -= 1
        elif page == "results":  # a product's id, as the page shows it (lower-cased in the action)
            session.page, session.asin, session.options = "item", self._asin_of[target], {}
            if session.asin not in session.visited:
                session.visited.append(session.asin)
        elif page == "item" and self.by_asin[session.asin or ""].option_of(target) is not None:
            # An option value wins over a button of the same text, as in WebShop's clickables.
            session.options[self.by_asin[session.asin or ""].option_of(target) or ""] = target
        elif page == "item" and target == PREV_PAGE.lower():
            session.page, session.asin, session.options = "results", None, {}
        elif page == "item" and target == END_BUTTON.lower():
            self.buy(session)
        elif page == "item" and target in (name.lower() for name in SUB_PAGES):
            session.page = target
        elif target == PREV_PAGE.lower():  # from a sub-page back to the product
            session.page = "item"

    def buy(self, session: Session) -> Reward:
        product = self.by_asin[session.asin or ""]
        session.page = "done"
        session.reward = get_reward(product, session.goal, purchase_price(product), session.options, self.nouns)
        return session.reward

    # ------------------------------------------------------------------ pages
    def page(self, session: Session) -> Page:
        kind = session.page
        if kind == "search":
            elements = [_text("WebShop"), *_instruction(session), _button("Search")]
            return Page(kind, tuple(elements), ("search",), True)
        if kind == "done":
            return Page(kind, tuple(self._done_elements(session)), (), False)
        elements = [*_instruction(session), _button(BACK_TO_SEARCH)]
        if kind == "results":
            elements += self._results_elements(session)
        else:
            elements.append(_button(PREV_PAGE))
            product = self.by_asin[session.asin or ""]
            elements += self._item_elements(session, product) if kind == "item" else self._sub_page(kind, product)
        clickables = [e.text.lower() for e in elements if e.kind in ("button", "product")]
        clickables += [e.text for e in elements if e.kind == "option"]
        return Page(kind, tuple(elements), tuple(dict.fromkeys(clickables)), False)

    def rating(self, product: Product) -> str:
        return product.rating if self.show_reviews else "N.A."

    def reviews(self, product: Product) -> tuple[Review, ...]:
        return product.reviews if self.show_reviews else ()

    def _sub_page(self, kind: str, product: Product) -> list[Element]:
        if kind == "description":
            return [_text(product.description)]
        if kind == "features":
            return [_text(bullet) for bullet in product.bullet_points]
        if kind == "reviews":
            return [
                part
                for r in self.reviews(product)
                for part in (_text(f'"{r.title}"'), _text(str(r.score)), _text(r.body))
            ]
        return [_text(attribute) for attribute in product.attributes]

    def results(self, session: Session) -> list[Product]:
        start = (session.page_number - 1) * PRODUCT_WINDOW
        return [self.products[i] for i in session.hits[max(start, 0) : start + PRODUCT_WINDOW]] if start >= 0 else []

    def _results_elements(self, session: Session) -> list[Element]:
        elements = [_text(f"Page {session.page_number} (Total results: {len(session.hits)})")]
        if session.page_number > 1:
            elements.append(_button(PREV_PAGE))
        elements.append(_button(NEXT_PAGE))
        for product in self.results(session):
            elements += [
                Element("product", product.asin, product.asin in session.visited),
                _text(product.title),
                _text(product.price_tag),
            ]
        return elements

    def _item_elements(self, session: Session, product: Product) -> list[Element]:
        elements: list[Element] = []
        for name, values in product.options.items():
            elements.append(_text(name))
            elements += [Element("option", value, session.options.get(name) == value) for value in values]
        elements += [
            _text(product.title),
            _text(f"Price: {product.price_tag}"),
            _text(f"Rating: {self.rating(product)}"),
        ]
        shown = SUB_PAGES if self.show_attrs else SUB_PAGES[:3]
        elements += [_button(name) for name in shown]
        elements.append(_button(END_BUTTON))
        return elements

    def _done_elements(self, session: Session) -> list[Element]:
        product = self.by_asin[session.asin or ""]
        reward = session.reward.reward if session.reward else 0.0
        return [
            _text("Thank you for shopping with us!"),
            _text("Your code:"),
            _text("(Paste it in your MTurk interface.)"),
            _text("Purchased"),
            _text("asin"),
            _text(product.asin),
            _text("options"),
            _text(json.dumps(session.options, sort_keys=True)),
            _text("attrs"),
            _text(", ".join(product.attributes)),
            _text("category"),
            _text(product.category),
            _text("query"),
            _text(product.query),
            _text("product category"),
            _text(product.product_category),
            _text(SCORE_LABEL),
            _text(str(reward)),
        ]


def _text(text: str) -> Element:
    return Element("text", text)


def _button(text: str) -> Element:
    return Element("button", text)


def _instruction(session: Session) -> list[Element]:
    return [_text("Instruction:"), _text(session.goal.instruction_text)]
