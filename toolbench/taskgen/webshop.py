"""WebShop's catalog, goals and expert demonstrations (``fixtures/webshop/``).

- ``items_shuffle_1000.json`` / ``items_ins_v2_1000.json``: the first 1,000 products of our
  generated catalog (``mock_services/webshop/generate.py``) in WebShop's two record formats.
- Goals as WebShop makes synthetic goals: a product's instruction (its instruction attributes),
  one combination of its option values, and a price bound by WebShop's rule (two of the next four
  tens above the price, the higher one), here drawn from a seeded stream so it never changes. Test
  goals are worded as WebShop words them ("... with color: black, and size: 32gb, and price lower
  than 50.00 dollars"), as ToolBench's are; train and demo goals also word the options in
  phrases. Every goal's reference (search, page on, open the product, choose the options, buy) is
  played in the shop and must earn reward 1.0 (goals that cannot, like a "blueberry" flavour
  WebShop's colour rule reads as "blue", are dropped). Goals are shuffled once; sessions 0 to 99
  are ``test`` (as ToolBench's ids), the next 300 ``demo``, the rest ``train``.
- ``demo``: each goal's expert trajectory as ToolBench's demonstrations show it, (page, action)
  pairs with pages in the ``[button] ... [button_]`` form: ``long`` (full pages) for all, and
  ``short`` (results pages without 80% of the products that are not the target) for the 200 with
  the shortest trajectories.
"""

from __future__ import annotations

import itertools
import json
import random
from typing import Any

from toolbench.mock_services.webshop import generate
from toolbench.mock_services.webshop.catalog import Product, load_products, purchase_price
from toolbench.mock_services.webshop.goals import NO_BOUND, goal_record, price_bound, price_clause
from toolbench.mock_services.webshop.reward import Goal, LexiconNouns
from toolbench.mock_services.webshop.shop import PRODUCT_WINDOW, Element, Page, Session, Shop, search_page_text
from toolbench.taskgen import Files, aligner, generator, jsonl, rng_for

PRODUCTS = 1000
GOALS_PER_PRODUCT = 4
SIZES = {"test": 100, "demo": 300}
SHORT_DEMOS = 200


def shop(catalog: tuple[list[dict[str, Any]], dict[str, dict[str, Any]]] | None = None) -> Shop:
    """The shop over the shipped catalog (``generate.catalog(PRODUCTS)``, made here unless given)."""
    products, attributes = catalog or generate.catalog(PRODUCTS)
    return Shop(load_products(products, attributes), nouns=LexiconNouns(generate.noun_lexicon()))


def _option_phrase(name: str, value: str, rng: random.Random) -> str:
    if name == "color":
        return rng.choice((f"in {value}", f"in {value} color", f"{value} colored"))
    if name == "size":
        return rng.choice((f"in size {value}", f"size {value}", f"in {value} size"))
    return rng.choice((f"{name} {value}", f"with {name} {value}", f"in the {value} {name}"))


def instruction_text(instruction: str, options: dict[str, str], rng: random.Random) -> str:
    """The goal's instruction before its price clause: WebShop's "with name: value" options a third
    of the time, else the options in words."""
    text = instruction
    if options and rng.random() < 1 / 3:
        text += " with " + ", and ".join(f"{name}: {value}" for name, value in options.items())
    elif options:
        phrases = [_option_phrase(name, value, rng) for name, value in options.items()]
        text += " " + (phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1])
    return text


def goals(store: Shop) -> list[dict[str, Any]]:
    """Every goal, shuffled: up to four option combinations per product."""
    found = []
    for product in store.products:
        rng = rng_for("webshop-goals", product.asin)
        names = sorted(product.options)
        combinations = list(itertools.product(*(product.options[n] for n in names)))
        for combination in rng.sample(combinations, min(GOALS_PER_PRODUCT, len(combinations))):
            found.append(goal_for(product, dict(zip(names, combination, strict=True)), rng))
    rng_for("webshop-goal-order").shuffle(found)
    return found


def goal_for(product: Product, chosen: dict[str, str], rng: random.Random) -> dict[str, Any]:
    """A goal for ``product`` with the ``chosen`` options and a price bound drawn from ``rng``."""
    bound = price_bound(purchase_price(product), rng)
    text = instruction_text(product.extra["instruction"], chosen, rng)
    return goal_record(product, text, list(product.extra["instruction_attributes"]), chosen, bound)


def webshop_wording(goal: dict[str, Any], product: Product) -> dict[str, Any]:
    """``goal`` worded as WebShop words every synthetic goal (and so every ToolBench test goal):
    the instruction, then "with name: value, and ...", then the price clause."""
    options = goal["goal_options"]
    instruction = product.extra["instruction"]
    text = f"{instruction} with " + ", and ".join(f"{k}: {v}" for k, v in options.items()) if options else instruction
    bound = goal["price_upper"] if goal["price_upper"] != NO_BOUND else None
    return {**goal, "instruction_text": text + price_clause(bound)}


def _play(store: Shop, goal: dict[str, Any], actions: list[str]) -> tuple[Session, list[tuple[Page, str]]]:
    session = Session(goal=Goal.from_record(goal))
    pages = []
    for action in actions:
        pages.append((store.page(session), action))
        store.act(session, action)
    return session, pages


def reference(store: Shop, goal: dict[str, Any]) -> list[str] | None:
    """An expert's actions for ``goal``: a search that finds the product, pages on to it, opens
    it, chooses the goal's options and buys; None if no search finds it."""
    product = store.by_asin[goal["asin"]]
    entry = product.extra
    queries = [
        " ".join([*entry["instruction_attributes"], product.query]),
        product.query,
        product.title.lower(),
    ]
    index = store.index_of[product.asin]
    for query in queries:
        hits = store.engine.search(query)
        if index in hits:
            rank = hits.index(index)
            pages = ["click[next >]"] * (rank // PRODUCT_WINDOW)
            options = [f"click[{value}]" for name, value in goal["goal_options"].items()]
            return [f"search[{query}]", *pages, f"click[{product.asin.lower()}]", *options, "click[buy now]"]
    return None


def _short(page: Page, target: str, rng: random.Random) -> str:
    """A results page without 80% of the products that are not the target (ToolBench's short demos)."""
    if page.kind != "results":
        return page.rich()
    groups: list[list[Element]] = []
    head: list[Element] = []
    for element in page.elements:
        if element.kind == "product":
            groups.append([element])
        elif groups:
            groups[-1].append(element)
        else:
            head.append(element)
    others = [g for g in groups if g[0].text != target]
    kept_others = set(map(id, rng.sample(others, round(len(others) * 0.2))))
    kept = [g for g in groups if g[0].text == target or id(g) in kept_others]
    return Page(page.kind, tuple(head + [e for g in kept for e in g]), page.clickables, page.has_search_bar).rich()


def records(store: Shop) -> dict[str, list[dict[str, Any]]]:
    split_of = ["test"] * SIZES["test"] + ["demo"] * SIZES["demo"]
    out: dict[str, list[dict[str, Any]]] = {"test": [], "demo": [], "train": []}
    session = 0
    for goal in goals(store):
        actions = reference(store, goal)
        if actions is None:
            continue
        played, pages = _play(store, goal, actions)
        assert played.reward is not None
        if played.reward.reward < 1.0:  # WebShop's colour rule reads "blueberry" as blue: no full match
            continue
        split = split_of[session] if session < len(split_of) else "train"
        if split == "test":  # ToolBench's test goals all have WebShop's wording; train and demo vary it
            goal = webshop_wording(goal, store.by_asin[goal["asin"]])
        record = {
            "id": f"webshop-{split}-{len(out[split]):04d}",
            "session": session,
            "category": goal["category"],
            "prompt": search_page_text(goal["instruction_text"]),
            "completion": ["\n".join(actions)],
            "goal": goal,
        }
        if split == "demo":
            record["long"] = [[page.rich(), action] for page, action in pages]
            rng = rng_for("webshop-short", session)
            record["short"] = [[_short(page, goal["asin"], rng), action] for page, action in pages]
        out[split].append(record)
        session += 1
    shortest = sorted(out["demo"], key=lambda r: (sum(len(p) for p, _ in r["short"]), r["session"]))[:SHORT_DEMOS]
    keep = {id(r) for r in shortest}
    for record in out["demo"]:
        if id(record) not in keep:
            record["short"] = None
    return out


@aligner("webshop")
def alignment_records(count: int, seed: str) -> list[dict[str, Any]]:
    """Fresh goals over the same catalog from another random stream (options and price bound drawn again)."""
    store = shop()
    rng = rng_for("webshop", "align", seed)
    found = []
    for index in range(count):
        product = rng.choice(store.products)
        goal = goal_for(product, {name: rng.choice(product.options[name]) for name in sorted(product.options)}, rng)
        actions = reference(store, goal)
        if actions is not None and _play(store, goal, actions)[0].reward.reward == 1.0:  # type: ignore[union-attr]
            found.append(
                {
                    "id": f"webshop-align-{seed}-{index:04d}",
                    "category": goal["category"],
                    "prompt": search_page_text(goal["instruction_text"]),
                    "completion": ["\n".join(actions)],
                    "goal": goal,
                }
            )
    return found


@generator("webshop")
def generate_files() -> Files:
    products, attributes = generate.catalog(PRODUCTS)
    out = records(shop((products, attributes)))
    assert len(out["test"]) == SIZES["test"] and len(out["demo"]) == SIZES["demo"], {k: len(v) for k, v in out.items()}
    return {
        "items_shuffle_1000.json": json.dumps(products, ensure_ascii=False, indent=0) + "\n",
        "items_ins_v2_1000.json": json.dumps(attributes, ensure_ascii=False, indent=0) + "\n",
        **{f"{split}.jsonl": jsonl(rows) for split, rows in out.items()},
    }
