"""WebShop's reward for a purchase, part by part, by the rules of WebShop's own code (Yao et al. 2022).

``reward = (attributes matched + options matched + price within bound) / (attributes + options + 1)
x r_type``, where an attribute matches a product attribute by fuzzy token-set ratio above 85 (or is
a substring of the title, bullet points or description), an option matches a purchased option the
same way (colours first reduced to a base colour), and ``r_type`` (1, 0.5, 0.1 or 0) says whether
the product is the kind asked for: same search query, two shared breadcrumb levels, or shared title
nouns. The ratio is rapidfuzz's ``token_set_ratio`` with thefuzz's preprocessing (ASCII only, every
non-word character a space, lower case), rounded as thefuzz rounds it.

Title nouns: WebShop tags titles with spaCy's ``en_core_web_sm``, which PyPI does not carry. Nouns
here come from a lexicon (every noun that names a product type in the catalog's vocabulary, plus
those the caller adds); ``spacy_nouns`` uses spaCy when a user has installed it and its model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz

from toolbench.core.tasks import fixture_file
from toolbench.mock_services.webshop.catalog import BREADCRUMB, Product

FUZZY_THRESHOLD = 85
#: WebShop's colour words (its ``COLOR_SET``, 102 words), checked in the list's (alphabetical) order: the first one
#: found in an option value is its colour ("navy blue" is blue, "camo green" is camo, "coconut cashew" is ash).
COLORS: tuple[str, ...] = tuple(json.loads(fixture_file("webshop", "colors.json").read_text(encoding="utf-8")))

Nouns = Callable[[str], list[str]]


def similarity(a: Any, b: Any) -> int:
    """thefuzz's ``token_set_ratio``: tuples compare as their words, non-ASCII is dropped."""
    return round(fuzz.token_set_ratio(_fuzzy_text(a), _fuzzy_text(b), processor=_preprocess))


def _fuzzy_text(value: Any) -> str:
    return " ".join(str(v) for v in value) if isinstance(value, (tuple, list)) else str(value)


def _preprocess(text: str) -> str:
    ascii_only = "".join(ch for ch in text if ord(ch) < 128)
    return re.sub(r"\W", " ", ascii_only).lower().strip()


def normalize_color(value: Any) -> Any:
    """The first colour word in ``value`` (a text; for a (name, value) pair, a colour that is one of
    its parts), else ``value`` unchanged, as WebShop reduces options before comparing them."""
    if isinstance(value, tuple):
        return next((color for color in COLORS if color in value), value)
    return next((color for color in COLORS if color in str(value)), value)


class LexiconNouns:
    """Title nouns by lexicon: the words of the title (lower case, in order) that are known nouns."""

    def __init__(self, nouns: Iterable[str]) -> None:
        self.nouns = frozenset(word.lower() for word in nouns)

    def __call__(self, title: str) -> list[str]:
        return [word for word in re.findall(r"[a-z0-9]+", title.lower()) if word in self.nouns]


def spacy_nouns(model: str = "en_core_web_sm") -> Nouns:
    """WebShop's own tagging (nouns and proper nouns), for users with spaCy and ``model`` installed."""
    try:
        import spacy

        nlp = spacy.load(model)
    except (ImportError, OSError) as exc:
        raise RuntimeError(f"noun_tagger='spacy' needs spaCy and its model {model!r} installed ({exc})") from None
    return lambda title: [t.text.lower() for t in nlp(title) if t.pos_ in ("NOUN", "PROPN")]


@dataclass(frozen=True)
class Goal:
    """What a shopper asked for: WebShop's goal fields."""

    asin: str
    instruction_text: str
    attributes: tuple[str, ...]
    goal_options: Mapping[str, str] | tuple[str, ...]
    price_upper: float
    query: str = ""
    category: str = ""
    product_category: str = ""
    name: str = ""  # the target product's title
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Goal:
        options = record.get("goal_options") or {}
        return cls(
            asin=str(record.get("asin", "")),
            instruction_text=str(record.get("instruction_text", "")),
            attributes=tuple(record.get("attributes") or ()),
            goal_options=dict(options) if isinstance(options, Mapping) else tuple(options),
            price_upper=float(record.get("price_upper", 1_000_000.0)),
            query=str(record.get("query", "")),
            category=str(record.get("category", "")),
            product_category=str(record.get("product_category", "")),
            name=str(record.get("name", "")),
        )


@dataclass(frozen=True)
class Reward:
    reward: float
    r_type: float
    r_att: float
    r_option: float | None
    r_price: bool
    query_match: bool
    category_match: bool
    title_score: float
    attributes_matched: int
    options_matched: int
    attributes_total: int = 0  # how many attributes the goal wants

    def info(self) -> dict[str, Any]:
        return {
            "reward": self.reward,
            "r_type": self.r_type,
            "r_att": self.r_att,
            "r_option": self.r_option,
            "r_price": self.r_price,
            "query_match": self.query_match,
            "category_match": self.category_match,
            "title_score": self.title_score,
        }


def type_reward(product: Product, goal: Goal, nouns: Nouns) -> tuple[float, bool, bool, float]:
    """``r_type`` and what it rests on: query match, category match and title noun score."""
    query_match = product.query == goal.query
    ours = {part.strip() for part in product.product_category.split(BREADCRUMB)}
    theirs = {part.strip() for part in goal.product_category.split(BREADCRUMB)}
    category_match = len(ours & theirs) >= 2
    wanted = nouns(goal.name)
    title_score = len(set(nouns(product.title)) & set(wanted)) / len(wanted) if wanted else 0.2
    r_type = 1.0
    if not (query_match or category_match or title_score > 0.2):
        r_type = 0.5
    if title_score < 0.1:
        r_type = 0.1
    if title_score == 0.0:
        r_type = 0.0
    return r_type, query_match, category_match, title_score


def attributes_matched(product: Product, goal: Goal) -> int:
    title, description = product.title.lower(), product.description.lower()
    bullets = " ".join(product.bullet_points).lower()
    text = (title, bullets, description)

    def found(wanted: str) -> bool:
        fuzzy = any(similarity(have, wanted) > FUZZY_THRESHOLD for have in product.attributes)
        return fuzzy or any(wanted in part for part in text)

    return sum(found(wanted) for wanted in goal.attributes)


def options_matched(goal: Goal, chosen: Mapping[str, str]) -> int:
    wanted = list(goal.goal_options.items()) if isinstance(goal.goal_options, Mapping) else list(goal.goal_options)
    purchased = [normalize_color(value) for value in chosen.values()]
    return sum(
        any(similarity(have, normalize_color(option)) > FUZZY_THRESHOLD for have in purchased) for option in wanted
    )


def get_reward(product: Product, goal: Goal, price: float, options: Mapping[str, str], nouns: Nouns) -> Reward:
    """The reward of buying ``product`` at ``price`` with ``options`` chosen, for ``goal``."""
    r_type, query_match, category_match, title_score = type_reward(product, goal, nouns)
    n_attributes = len(goal.attributes)
    n_options = len(goal.goal_options)
    attribute_hits = attributes_matched(product, goal)
    option_hits = options_matched(goal, options) if n_options else 0
    r_price = price <= goal.price_upper
    total = (attribute_hits + option_hits + r_price) / (n_attributes + n_options + 1) * r_type
    return Reward(
        reward=total,
        r_type=r_type,
        r_att=attribute_hits / n_attributes if n_attributes else 0.0,
        r_option=option_hits / n_options if n_options else None,
        r_price=r_price,
        query_match=query_match,
        category_match=category_match,
        title_score=title_score,
        attributes_matched=attribute_hits,
        options_matched=option_hits,
        attributes_total=n_attributes,
    )
