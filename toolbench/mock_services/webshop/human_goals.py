"""WebShop's human-written goals over any catalog: by asin where the catalog holds it, else matched by text.

WebShop ships its human instructions in two shapes: ``items_human_ins.json`` (``{asin: [{"instruction",
"instruction_attributes", "instruction_options"}]}``, read by its env) and ``human_goals.json`` (a list of the
instruction texts alone, read by its baselines). An instruction whose asin the catalog holds becomes WebShop's own
human goal (``goals.human_goals``). Any other (an original asin over our generated catalog, or a bare text) is
matched to the catalog: its product type is the vocabulary type whose name (or, failing that, all of whose nouns)
the text names; its target is the product of that type with the most of its attributes named in the text (or
annotated, compared by the reward's fuzzy ratio), ties spread over the best products by a stable hash of the text.
The goal asks for those attributes and for the target's option values the text (or annotation) names, with
WebShop's price clause over the target's price. An instruction with no type, no product of its type, or no
attribute of one is not a goal; ``HumanGoalReport`` counts each reason, so nothing is dropped unsaid.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from toolbench.core.seeding import stable_hash
from toolbench.mock_services.webshop.catalog import Product, purchase_price
from toolbench.mock_services.webshop.goals import SHUFFLE_SEED, goal_record, human_goals, price_bound
from toolbench.mock_services.webshop.reward import FUZZY_THRESHOLD, normalize_color, similarity
from toolbench.mock_services.webshop.vocabulary import PRODUCT_TYPES, ProductType

#: Products of a type compared per instruction: enough for every type of a 1,000-product catalog many times
#: over, and a bound on the work in a catalog of a million.
CANDIDATES_PER_TYPE = 400
NO_TYPE, NO_PRODUCT, NO_ATTRIBUTE, NO_ANNOTATION = (
    "no product type of the catalog named",
    "no product of its type in the catalog",
    "no attribute of a product of its type named",
    "no instruction_attributes (WebShop skips these too)",
)


@dataclass
class HumanGoalReport:
    """What became of a human goal file's instructions."""

    instructions: int = 0
    by_asin: int = 0  # the catalog holds the instruction's asin: WebShop's own goal
    by_text: int = 0  # matched to a product by type and attributes
    not_matched: Counter[str] = field(default_factory=Counter)  # reason -> instructions

    @property
    def goals(self) -> int:
        return self.by_asin + self.by_text

    def summary(self) -> str:
        reasons = "; ".join(f"{count} {reason}" for reason, count in sorted(self.not_matched.items()))
        unmatched = sum(self.not_matched.values())
        text = f"{self.goals} goals from {self.instructions} human instructions ({self.by_asin} by asin, "
        return (
            text
            + f"{self.by_text} matched by product type and attributes); {unmatched} not goals"
            + (f": {reasons}" if reasons else "")
        )


def words(text: str) -> str:
    """Lower-case words split by single spaces, possessives dropped: the text phrases are matched in."""
    text = re.sub(r"['\u2019]s\b", "", str(text).lower())
    return " ".join(re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", text))


def names(text: str, phrase: str) -> bool:
    """Whether ``text`` (already ``words``) holds ``phrase`` as whole words, its last word also plural."""
    phrase = _phrase(phrase)
    padded = f" {text} "
    return bool(phrase) and any(f" {phrase}{end} " in padded for end in ("", "s", "es"))


@cache
def _phrase(text: str) -> str:
    return words(text)


@cache
def _type_names() -> tuple[tuple[ProductType, str, tuple[str, ...]], ...]:
    """Each type with its name as words (without a leading "men's"/"women's") and its nouns."""
    return tuple((kind, words(re.sub(r"^(wo)?men's ", "", kind.name)), kind.nouns) for kind in PRODUCT_TYPES)


def _has_word(tokens: set[str], word: str) -> bool:
    return word in tokens or word + "s" in tokens or word + "es" in tokens


@cache
def _types_by_word() -> dict[str, tuple[int, ...]]:
    """Type indexes by each form of their name's and nouns' words: the types a text can name."""
    index: dict[str, set[int]] = {}
    for number, (_, name, nouns) in enumerate(_type_names()):
        for word in (*name.split(), *nouns):
            for form in (word, word + "s", word + "es"):
                index.setdefault(form, set()).add(number)
    return {form: tuple(sorted(numbers)) for form, numbers in index.items()}


def product_type(text: str) -> ProductType | None:
    """The type the instruction (already ``words``) names: the longest type name in it, else the type all
    of whose nouns are in it (the most nouns first); the earliest type on a tie."""
    tokens = set(text.split())
    by_word = _types_by_word()
    types = _type_names()
    candidates = sorted({number for token in tokens for number in by_word.get(token, ())})
    found = [(len(types[n][1]), types[n][0]) for n in candidates if names(text, types[n][1])]
    if not found:
        found = [(len(types[n][2]), types[n][0]) for n in candidates if all(_has_word(tokens, w) for w in types[n][2])]
    return max(found, key=lambda pair: pair[0])[1] if found else None


def _annotated(wanted: Sequence[str], have: Sequence[str], colours: bool = False) -> list[str]:
    """The ``have`` values an annotation names, by the reward's fuzzy ratio (option colours reduced first)."""

    def same(a: str, b: str) -> bool:
        return similarity(normalize_color(a) if colours else a, normalize_color(b) if colours else b) > FUZZY_THRESHOLD

    return [value for value in have if any(same(value, str(w)) for w in wanted)]


def _match(product: Product, text: str, entry: Mapping[str, Any] | None) -> tuple[list[str], list[str]]:
    """The product's attributes and option values (one per group) the instruction asks for, in the product's order."""
    attributes = [a for a in product.attributes if names(text, a)]
    values = [value for group in product.options.values() for value in group]
    options = [v for v in values if names(text, v)]
    if entry is not None:
        attributes += _annotated(entry.get("instruction_attributes") or [], product.attributes)
        options += _annotated(entry.get("instruction_options") or [], values, colours=True)
    attributes = [a for a in product.attributes if a in attributes]
    # One value per option group, the first named: a shopper can choose only one, so the target can earn 1.0.
    chosen = (next((v for v in group if v in options), None) for group in product.options.values())
    return attributes, [value for value in chosen if value is not None]


class GoalMatcher:
    """Matches instructions to a catalog's products by product type and attributes."""

    def __init__(self, products: Sequence[Product]) -> None:
        self.by_query: dict[str, list[Product]] = {}
        for product in products:
            group = self.by_query.setdefault(product.query, [])
            if len(group) < CANDIDATES_PER_TYPE:
                group.append(product)

    def match(
        self, instruction: str, rng: random.Random, entry: Mapping[str, Any] | None = None
    ) -> dict[str, Any] | str:
        """A goal for ``instruction`` (an ``items_human_ins`` entry gives its annotation), or why there is none."""
        text = words(instruction)
        kind = product_type(text)
        if kind is None:
            return NO_TYPE
        candidates = self.by_query.get(kind.query, [])
        if not candidates:
            return NO_PRODUCT
        scored = [(product, *_match(product, text, entry)) for product in candidates]
        best = max((len(attributes), len(options)) for _, attributes, options in scored)
        if best[0] == 0:
            return NO_ATTRIBUTE
        tied = [row for row in scored if (len(row[1]), len(row[2])) == best]
        product, attributes, options = tied[stable_hash("webshop-human-goal", instruction) % len(tied)]
        bound = price_bound(purchase_price(product), rng)
        goal = goal_record(product, instruction.strip().strip("."), attributes, options, bound)
        goal["human"] = {"instruction": instruction, **({"annotation": dict(entry)} if entry is not None else {})}
        return goal


def read_human_goal_file(path: str | Path) -> dict[str, Any] | list[str]:
    """A human goal file in either of WebShop's shapes; a ``ValueError`` says what any other file is not."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc.msg})") from None
    if isinstance(data, list) and all(isinstance(item, str) for item in data):
        return data
    if isinstance(data, dict) and all(isinstance(entries, list) for entries in data.values()):
        return data
    raise ValueError(
        f"{path}: a human goal file is WebShop's items_human_ins.json ({{asin: [{{instruction, ...}}]}}) "
        "or human_goals.json (a list of instruction texts)"
    )


def is_human_goal_file(path: str | Path) -> bool:
    """Whether ``path`` is a ``.json`` file in one of WebShop's human goal shapes (task files are JSONL)."""
    if Path(path).suffix != ".json":
        return False
    try:
        read_human_goal_file(path)
    except (OSError, ValueError):
        return False
    return True


def human_goals_from(
    products: Sequence[Product], source: Mapping[str, Any] | Sequence[str], seed: str = "0"
) -> tuple[list[dict[str, Any]], HumanGoalReport]:
    """Goals from a human goal file's content over ``products``, and what became of each instruction.

    ``items_human_ins``: the instructions whose asin the catalog holds are WebShop's own human goals (in
    WebShop's order); the others follow in file order, matched by text; all shuffled as WebShop shuffles.
    A list of texts: one goal per matched text, in file order (``goal["human"]["index"]`` is its place)."""
    report = HumanGoalReport()
    matcher = GoalMatcher(products)
    rng = random.Random(f"webshop-human-text-goals/{seed}")
    if isinstance(source, Mapping):
        held = {p.asin for p in products}
        entries = [(asin, e) for asin, items in source.items() for e in items or () if isinstance(e, Mapping)]
        report.instructions = len(entries)
        direct = {asin: items for asin, items in source.items() if asin in held}
        goals = human_goals(products, direct, seed)
        report.by_asin = len(goals)
        report.not_matched[NO_ANNOTATION] += sum(
            1 for asin, e in entries if asin in held and not e.get("instruction_attributes")
        )
        for asin, entry in entries:
            if asin in held:
                continue
            if not entry.get("instruction_attributes"):
                report.not_matched[NO_ANNOTATION] += 1
                continue
            found = matcher.match(str(entry.get("instruction", "")), rng, entry)
            if isinstance(found, str):
                report.not_matched[found] += 1
            else:
                found["human"]["asin"] = asin
                goals.append(found)
                report.by_text += 1
        if report.by_text:  # WebShop's order when every asin is held; else the matched ones shuffled in too
            random.Random(SHUFFLE_SEED).shuffle(goals)
        return goals, report
    goals = []
    report.instructions = len(source)
    for index, instruction in enumerate(source):
        found = matcher.match(instruction, rng)
        if isinstance(found, str):
            report.not_matched[found] += 1
            continue
        found["human"]["index"] = index
        goals.append(found)
        report.by_text += 1
    return goals, report
