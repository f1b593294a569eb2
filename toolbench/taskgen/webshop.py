"""WebShop's catalog, goals and expert demonstrations (``fixtures/webshop/``).

- ``items_shuffle_1000.json`` / ``items_ins_v2_1000.json``: the shipped catalog, 1,000 products in
  WebShop's two record formats, in families (``generate.family``): an original product and near
  copies of it that each differ in exactly one wanted attribute, one option value a goal names, or
  the price band. Buying the first listing that looks right buys a near copy about as often as the
  product; reading the pages tells them apart.
- ``test``: ToolBench's 100 goals (sessions 0 to 99), as WebShop words its synthetic goals ("...
  with color: black, and size: 32gb, and price lower than 50.00 dollars"), over the original
  products they were first drawn from (``legacy_test_goals``: WebShop's goal recipe over our first
  catalog, kept so the test prompts never change). Each test product heads its own family, built
  for the options and price bound its goal names.
- ``demo`` (300, with expert trajectories) and ``train``: goals over other families of the seen
  product types, in the seen grammar (``webshop_wording``): no product a test goal asks for, and
  no product that would satisfy a test goal, is a demo or train goal's product.
- ``unseen``: goals over families of product types no other split has, in the unseen grammar.

Every goal's reference (search, page on, open the product, choose the goal's options, buy) is
played in the shop and must earn reward 1.0; goals that cannot are dropped.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator
from functools import cache
from typing import Any

from toolbench.mock_services.webshop import generate
from toolbench.mock_services.webshop.catalog import Product, load_products, purchase_price
from toolbench.mock_services.webshop.goals import NO_BOUND, goal_record, price_bound, price_clause, reference
from toolbench.mock_services.webshop.reward import Goal, LexiconNouns, get_reward, normalize_color, similarity
from toolbench.mock_services.webshop.shop import Element, Page, Session, Shop, search_page_text
from toolbench.mock_services.webshop.vocabulary import PRODUCT_TYPES, ProductType
from toolbench.taskgen import (
    SHIPPED_SEED,
    SHIPPED_SIZES,
    Files,
    aligner,
    generator,
    jsonl,
    near_duplicates,
    rng_for,
    split_maker,
)
from toolbench.taskgen.webshop_wording import UNSEEN_FRAMES, seen_wording, unseen_wording

PRODUCTS = 1000
LEGACY_GOALS_PER_PRODUCT = 4
SIZES = {"test": 100, "demo": 300}
SHORT_DEMOS = 200
#: Product types whose goals are only in ``unseen`` (drawn from the types no test goal asks for).
UNSEEN_TYPES = 30
#: Families of unseen types in the shipped catalog; the rest of it is families of seen types.
UNSEEN_FAMILIES = 34
#: The near copies of a seen family (one that lacks a wanted attribute, not two: room for every type).
SEEN_KINDS = generate.VARIANT_KINDS
#: Record keys whose values ``unseen`` holds out of every other split: the product type and the product.
HELD_OUT_KEYS = ("product_type", "asin")
#: Records carry ``difficulty``: how many things the goal asks for (attributes, options, a price bound).
HAS_DIFFICULTY = True
#: Sessions of the shipped files: test 0-99, demo 100-399, train from 400, unseen after train.
FIRST_TRAIN_SESSION = SIZES["test"] + SIZES["demo"]


@cache
def _nouns() -> LexiconNouns:
    return LexiconNouns(generate.noun_lexicon())


# ---------------------------------------------------------------------------- the kept test goals
def _legacy_option_phrase(name: str, value: str, rng: random.Random) -> str:
    if name == "color":
        return rng.choice((f"in {value}", f"in {value} color", f"{value} colored"))
    if name == "size":
        return rng.choice((f"in size {value}", f"size {value}", f"in {value} size"))
    return rng.choice((f"{name} {value}", f"with {name} {value}", f"in the {value} {name}"))


def _legacy_text(instruction: str, options: dict[str, str], rng: random.Random) -> str:
    """The words the first recipe drew (its stream must be consumed the same way to keep its bounds)."""
    text = instruction
    if options and rng.random() < 1 / 3:
        text += " with " + ", and ".join(f"{name}: {value}" for name, value in options.items())
    elif options:
        phrases = [_legacy_option_phrase(name, value, rng) for name, value in options.items()]
        text += " " + (phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1])
    return text


def _legacy_goals(store: Shop) -> Iterator[dict[str, Any]]:
    """The first recipe's goals: up to four option combinations per product, one seeded shuffle."""
    found = []
    for product in store.products:
        rng = rng_for("webshop-goals", product.asin)
        names = sorted(product.options)
        combinations = list(itertools.product(*(product.options[n] for n in names)))
        for combination in rng.sample(combinations, min(LEGACY_GOALS_PER_PRODUCT, len(combinations))):
            chosen = dict(zip(names, combination, strict=True))
            bound = price_bound(purchase_price(product), rng)
            _legacy_text(product.extra["instruction"], chosen, rng)
            found.append(
                goal_record(
                    product, product.extra["instruction"], list(product.extra["instruction_attributes"]), chosen, bound
                )
            )
    rng_for("webshop-goal-order").shuffle(found)
    yield from found


def webshop_wording(goal: dict[str, Any], product: Product) -> dict[str, Any]:
    """``goal`` worded as WebShop words every synthetic goal (and so every ToolBench test goal):
    the instruction, then "with name: value, and ...", then the price clause."""
    options = goal["goal_options"]
    instruction = product.extra["instruction"]
    text = f"{instruction} with " + ", and ".join(f"{k}: {v}" for k, v in options.items()) if options else instruction
    bound = goal["price_upper"] if goal["price_upper"] != NO_BOUND else None
    return {**goal, "instruction_text": text + price_clause(bound)}


@cache
def legacy_test_goals() -> tuple[tuple[dict[str, Any], int, int], ...]:
    """ToolBench's 100 test goals (sessions 0-99) with their product's original index and instruction
    template: WebShop's recipe over the first 1,000 original products, the first 100 goals whose
    reference earns 1.0 in that catalog. Kept so the test prompts stay what they have always been."""
    originals = [generate.original(source) for source in range(PRODUCTS)]
    source_of = {record["asin"]: source for source, (record, _, _) in enumerate(originals)}
    store = Shop(load_products([r for r, _, _ in originals], {r["asin"]: e for r, e, _ in originals}), nouns=_nouns())
    kept: list[tuple[dict[str, Any], int, int]] = []
    for goal in _legacy_goals(store):
        actions = reference(store, goal)
        if actions is None or _play(store, goal, actions)[0].reward.reward < 1.0:  # type: ignore[union-attr]
            continue
        source = source_of[goal["asin"]]
        kept.append((webshop_wording(goal, store.by_asin[goal["asin"]]), source, originals[source][2]))
        if len(kept) == SIZES["test"]:
            return tuple(kept)
    raise AssertionError("fewer test goals than ToolBench's 100")


# ---------------------------------------------------------------------------- the catalog
def _type_names() -> tuple[set[str], set[str]]:
    """The seen product types (every type but the unseen ones) and the unseen ones."""
    test_types = {generate.kind_of(source).name for _, source, _ in legacy_test_goals()}
    others = sorted(kind.name for kind in PRODUCT_TYPES if kind.name not in test_types)
    unseen = set(rng_for("webshop-unseen-types").sample(others, UNSEEN_TYPES))
    return {kind.name for kind in PRODUCT_TYPES} - unseen, unseen


@cache
def _test_goals_by_query() -> dict[str, list[Goal]]:
    found: dict[str, list[Goal]] = {}
    for goal, _, _ in legacy_test_goals():
        found.setdefault(goal["query"], []).append(Goal.from_record(goal))
    return found


def satisfies_a_test_goal(record: dict[str, Any], entry: dict[str, Any]) -> bool:
    """Whether buying this listing could pass a test goal (no product but the test goal's own may: the
    catalog is built so that only reading finds it, and no training goal's product passes a test goal)."""
    product = load_products([record], {record["asin"]: entry})[0]
    if product.asin in {goal.asin for goals in _test_goals_by_query().values() for goal in goals}:
        return False
    return any(_best_reward(product, goal, _nouns()) == 1.0 for goal in _test_goals_by_query().get(product.query, ()))


def _random_plan(source: int, rng: random.Random, kinds: tuple[str, ...] = generate.FAMILY_KINDS) -> generate.Plan:
    record, entry, _ = generate.original(source)
    product = load_products([record], {record["asin"]: entry})[0]
    chosen = {name: rng.choice(values) for name, values in sorted(product.options.items())}
    bound = price_bound(purchase_price(product), rng)
    return generate.Plan(source, chosen, (bound,) if bound is not None else (), kinds, keyworded=rng.random() < 0.5)


def _seen_sources(test: set[int], count: int) -> list[int]:
    """``count`` original products for the seen families: the test goals' types first, so training goals
    cover every type a test goal asks for, then the other seen types, a type at a time; none a test
    goal's product or one that would satisfy a test goal."""
    test_types = list(dict.fromkeys(generate.kind_of(source).name for _, source, _ in legacy_test_goals()))
    seen_types, _ = _type_names()
    order = test_types + sorted(seen_types - set(test_types))
    offsets = {kind.name: position for position, kind in enumerate(generate.type_order())}
    steps = dict.fromkeys(order, 0)
    chosen: list[int] = []
    while len(chosen) < count:
        for name in order:
            while True:  # the type's next original product that may head a seen family
                source = offsets[name] + len(offsets) * steps[name]
                steps[name] += 1
                if source not in test and not satisfies_a_test_goal(*generate.original(source)[:2]):
                    break
            chosen.append(source)
            if len(chosen) == count:
                break
    return chosen


@cache
def plans() -> tuple[tuple[generate.Plan, str], ...]:
    """The shipped catalog's families and the split whose goals they serve ("test", "seen", "unseen"),
    in catalog order: a family per test product (built for its first goal's options and every test
    bound on it), ``UNSEEN_FAMILIES`` of unseen types and the rest of seen types."""
    test: dict[int, generate.Plan] = {}
    for goal, source, _ in legacy_test_goals():
        bound = goal["price_upper"]
        bounds = () if bound == NO_BOUND else (bound,)
        if source in test:
            test[source] = generate.Plan(source, test[source].chosen, tuple(sorted({*test[source].bounds, *bounds})))
        else:
            test[source] = generate.Plan(source, dict(goal["goal_options"]), bounds)
    seen_types, unseen_types = _type_names()
    rng = rng_for("webshop-families")
    families = [(plan, "test") for plan in test.values()]
    unseen_sources = (s for s in itertools.count(PRODUCTS) if generate.kind_of(s).name in unseen_types)
    families += [(_random_plan(next(unseen_sources), rng), "unseen") for _ in range(UNSEEN_FAMILIES)]
    room = (PRODUCTS - generate.FAMILY * len(families)) // (1 + len(SEEN_KINDS))
    families += [(_random_plan(s, rng, SEEN_KINDS), "seen") for s in _seen_sources(set(test), room)]
    rng.shuffle(families)
    return tuple(families)


@cache
def catalog() -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The shipped catalog: raw records and the attribute file's entries by asin."""
    records, attributes = [], {}
    for record, entry in generate.laid_out([plan for plan, _ in plans()], excluded=satisfies_a_test_goal):
        records.append(record)
        attributes[record["asin"]] = entry
    assert len(records) == PRODUCTS == len(attributes)
    return records, attributes


@cache
def shop() -> Shop:
    """The shop over the shipped catalog."""
    products, attributes = catalog()
    return Shop(load_products(products, attributes), nouns=_nouns())


@cache
def family_products() -> dict[str, tuple[str, ...]]:
    """Split ("test", "seen", "unseen") -> the asins of its families' products."""
    store, out = shop(), {"test": [], "seen": [], "unseen": []}
    index = 0
    for plan, split in plans():
        size = 1 + len(plan.kinds)
        out[split] += [store.products[i].asin for i in range(index, index + size)]
        index += size
    return {split: tuple(asins) for split, asins in out.items()}


@cache
def family_of() -> dict[str, tuple[str, ...]]:
    """Each product's asin -> the asins of its family (itself among them), in catalog order."""
    store, out = shop(), {}
    index = 0
    for plan, _ in plans():
        size = 1 + len(plan.kinds)
        members = tuple(store.products[i].asin for i in range(index, index + size))
        out.update(dict.fromkeys(members, members))
        index += size
    return out


def _alike(value: str, option: tuple[str, str]) -> bool:
    """Whether buying ``value`` would meet the goal option ``option`` (the reward's fuzzy match)."""
    return similarity(normalize_color(value), normalize_color(option)) > 85


# ---------------------------------------------------------------------------- goals and references
def _play(store: Shop, goal: dict[str, Any], actions: list[str]) -> tuple[Session, list[tuple[Page, str]]]:
    session = Session(goal=Goal.from_record(goal))
    pages = []
    for action in actions:
        pages.append((store.page(session), action))
        store.act(session, action)
    return session, pages


def _best_reward(product: Product, goal: Goal, nouns: LexiconNouns) -> float:
    """What buying ``product`` for ``goal`` can earn at best (each option the goal names chosen if offered)."""
    chosen: dict[str, str] = {}
    wanted = goal.goal_options.items() if isinstance(goal.goal_options, dict) else ()
    for name, value in wanted:
        for group, values in product.options.items():
            best = max(values, key=lambda v: similarity(normalize_color(v), normalize_color((name, value))))
            if similarity(normalize_color(best), normalize_color((name, value))) > 85 and group not in chosen:
                chosen[group] = best
                break
    return get_reward(product, goal, purchase_price(product), chosen, nouns).reward


@cache
def test_solvers() -> frozenset[str]:
    """Every product that earns reward 1.0 on a test goal (its own product and any other): none is a demo,
    train or alignment goal's product, so copying a training trajectory cannot pass a test goal."""
    store = shop()
    solvers = set()
    for goal, _, _ in legacy_test_goals():
        target = Goal.from_record(goal)
        solvers |= {
            p.asin for p in store.products if p.query == target.query and _best_reward(p, target, _nouns()) == 1.0
        }
    return frozenset(solvers)


def _kind(product: Product) -> ProductType:
    return next(kind for kind in PRODUCT_TYPES if kind.query == product.query)


def _goal(product: Product, chosen: dict[str, str], bound: float | None, text: str) -> dict[str, Any]:
    """A goal record whose instruction is ``text`` as worded (its price clause included)."""
    goal = goal_record(product, text, list(product.extra["instruction_attributes"]), chosen, bound)
    return {**goal, "instruction_text": text}


def _record(goal: dict[str, Any], actions: list[str], template: str, product: Product) -> dict[str, Any]:
    return {
        "category": goal["category"],
        "prompt": search_page_text(goal["instruction_text"]),
        "completion": ["\n".join(actions)],
        "goal": goal,
        "template": template,
        "product_type": _kind(product).name,
        "asin": product.asin,
        "difficulty": len(goal["attributes"]) + len(goal["goal_options"]) + (goal["price_upper"] != NO_BOUND),
    }


def _drafts(split: str, seed: object) -> Iterator[dict[str, Any]]:
    """An endless stream of candidate goal records of ``split`` ("seen" or "unseen") over its families'
    products: half over an original with its family's planned options (the near copies are built for
    those), half over any product of the families with options drawn afresh."""
    store = shop()
    planned = {generate.asin(plan.source): plan for plan, kind in plans() if kind == split}
    asins = [a for a in family_products()[split] if split != "seen" or a not in test_solvers()]
    rng = rng_for("webshop", split, seed)
    while True:
        if rng.random() < 0.5:
            asin = rng.choice(sorted(planned))
            chosen = dict(planned[asin].chosen)
        else:
            asin = rng.choice(asins)
            chosen = {name: rng.choice(values) for name, values in sorted(store.by_asin[asin].options.items())}
        product = store.by_asin[asin]
        if (split == "seen" and asin in test_solvers()) or (
            split == "unseen" and len(chosen) < min(2, len(_kind(product).options))
        ):
            continue  # unseen goals name options, two at least where the type has two groups
        bound = price_bound(purchase_price(product), rng)
        kind, wanted = _kind(product), list(product.extra["instruction_attributes"])
        if split == "unseen":
            frame = rng.randrange(len(UNSEEN_FRAMES))
            # The clause about a value not wanted names one this product does not offer, where there is one:
            # a parser that wants every value it finds on the page finds no product with them all.
            elsewhere = {
                g: [v for v in values if v not in product.options.get(g, ())] for g, values in kind.options.items()
            }
            family = [store.by_asin[a] for a in family_of()[asin]]
            # Attributes the family's other listings are wanted for and this one lacks: named as not needed.
            decoys = sorted(
                {a for p in family for a in p.extra["instruction_attributes"]} - set(wanted) - set(product.attributes)
            )
            rng.shuffle(decoys)
            # Per option group, a value this product offers besides the wanted one (its option copy offers it too).
            rivals = {
                g: rng.choice(others)
                for g, v in chosen.items()
                if (others := [o for o in product.options.get(g, ()) if o != v and not _alike(o, (g, v))])
            }
            text = unseen_wording(kind, wanted, chosen, bound, frame, elsewhere, rng, decoys, rivals)
            template = f"unseen-u{frame}"
        else:
            frame = rng.randrange(len(generate.INSTRUCTIONS))
            style = "colon" if rng.random() < 0.3 else "inline"
            text = seen_wording(kind, wanted, chosen, bound, frame, style, product.options, rng)
            template = f"f{frame}/{style}"
        goal = _goal(product, chosen, bound, text)
        actions = reference(store, goal)
        if actions is None or _play(store, goal, actions)[0].reward.reward < 1.0:  # type: ignore[union-attr]
            continue
        yield _record(goal, actions, template, product)


def _taken(records: list[dict[str, Any]], against: list[str], size: int, stream: Iterator[dict[str, Any]]) -> None:
    """Append drafts from ``stream`` to ``records`` until it holds ``size``, dropping repeats and near
    duplicates of each other and of ``against``."""
    while len(records) < size:
        batch = [next(stream) for _ in range(max(16, size - len(records)))]
        prompts = [r["prompt"] for r in batch]
        bad = near_duplicates(prompts, against + [r["prompt"] for r in records])
        for index, record in enumerate(batch):
            if index in bad or len(records) >= size:
                continue
            if near_duplicates([record["prompt"]], [r["prompt"] for r in records]):
                continue
            records.append(record)


def _numbered(records: list[dict[str, Any]], split: str, first_session: int) -> list[dict[str, Any]]:
    return [
        {"id": f"webshop-{split}-{n:04d}", "session": first_session + n, **record} for n, record in enumerate(records)
    ]


@cache
def test_records() -> tuple[dict[str, Any], ...]:
    """ToolBench's test goals over the shipped catalog, with their references in it."""
    store, out = shop(), []
    for session, (goal, _, template) in enumerate(legacy_test_goals()):
        actions = reference(store, goal)
        assert actions is not None and _play(store, goal, actions)[0].reward.reward == 1.0, goal  # type: ignore[union-attr]
        product = store.by_asin[goal["asin"]]
        record = {
            "id": f"webshop-test-{session:04d}",
            "session": session,
            "category": goal["category"],
            "prompt": search_page_text(goal["instruction_text"]),
            "completion": ["\n".join(actions)],
            "goal": goal,
            "template": f"f{template}/colon",
            "product_type": _kind(product).name,
            "asin": product.asin,
        }
        out.append(record)
    return tuple(out)


@cache
def demo_records() -> tuple[dict[str, Any], ...]:
    records: list[dict[str, Any]] = []
    _taken(records, _held_prompts(), SIZES["demo"], _drafts("seen", "demo"))
    return tuple(_numbered(records, "demo", SIZES["test"]))


def _held_prompts() -> list[str]:
    return [r["prompt"] for r in test_records()] + [
        r["prompt"] for r in unseen_records(SHIPPED_SIZES["unseen"], SHIPPED_SEED)
    ]


@cache
def unseen_records(size: int, seed: int) -> tuple[dict[str, Any], ...]:
    records: list[dict[str, Any]] = []
    _taken(records, [r["prompt"] for r in test_records()], size, _drafts("unseen", seed))
    return tuple(records)


@split_maker("webshop")
def make(split: str, size: int, seed: int) -> list[dict[str, Any]]:
    """``size`` goals of ``split``: ``train`` over the seen families (no test product nor a product that
    satisfies a test goal, no demo, test or unseen prompt nor a near duplicate), ``unseen`` over the
    unseen types' families in the unseen grammar."""
    if split == "unseen":
        first = FIRST_TRAIN_SESSION + SHIPPED_SIZES["train"]
        return _numbered([dict(r) for r in unseen_records(size, seed)], "unseen", first)
    if split != "train":
        raise ValueError(f"webshop grows train and unseen, not {split!r}")
    records: list[dict[str, Any]] = []
    demos = [r["prompt"] for r in demo_records()]
    _taken(records, _held_prompts() + demos, size, _drafts("seen", ("train", seed)))
    return _numbered(records, "train", FIRST_TRAIN_SESSION)


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


def with_trajectories(records: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    """Demo records with each goal's expert trajectory: ``long`` (full pages) for all, ``short`` for the
    ``SHORT_DEMOS`` shortest."""
    store, out = shop(), []
    for record in records:
        goal = record["goal"]
        _, pages = _play(store, goal, record["completion"][0].split("\n"))
        rng = rng_for("webshop-short", record["session"])
        out.append(
            {
                **record,
                "long": [[page.rich(), action] for page, action in pages],
                "short": [[_short(page, goal["asin"], rng), action] for page, action in pages],
            }
        )
    shortest = sorted(out, key=lambda r: (sum(len(p) for p, _ in r["short"]), r["session"]))[:SHORT_DEMOS]
    keep = {id(r) for r in shortest}
    for record in out:
        if id(record) not in keep:
            record["short"] = None
    return out


@aligner("webshop")
def alignment_records(count: int, seed: str) -> list[dict[str, Any]]:
    """Fresh goals over the seen families from another random stream (the seen grammar)."""
    stream = _drafts("seen", ("align", seed))
    return [{"id": f"webshop-align-{seed}-{index:04d}", **next(stream)} for index in range(count)]


@generator("webshop")
def generate_files() -> Files:
    products, attributes = catalog()
    return {
        "items_shuffle_1000.json": json.dumps(products, ensure_ascii=False, indent=0) + "\n",
        "items_ins_v2_1000.json": json.dumps(attributes, ensure_ascii=False, indent=0) + "\n",
        "test.jsonl": jsonl(test_records()),
        "demo.jsonl": jsonl(with_trajectories(demo_records())),
        "train.jsonl": jsonl(make("train", SHIPPED_SIZES["train"], SHIPPED_SEED)),
        "unseen.jsonl": jsonl(make("unseen", SHIPPED_SIZES["unseen"], SHIPPED_SEED)),
    }
