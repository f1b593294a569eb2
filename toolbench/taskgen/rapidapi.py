"""RapidAPI hub tasks in ToolBench's query format, with solution paths and answer facts.

A task asks one to three questions of one tool (G1), of two or three tools of one category (G2) or
of one collection (G3). Each question comes from an API's asker (``catalog.askers``), which also
names the calls that answer it; the calls are played on the hub here, so the solution path and the
answer facts are what the hub returns. A call depends on an earlier one when it uses a value that
call returned (an id from a search).

Splits follow ToolBench's test sets. Seven categories and one tool in each of twenty other
categories are held out of ``train`` (and demo and the alignment tasks): ``G1_category`` and
``G2_category`` use only the held-out categories (ToolLLM's unseen-category groups), ``G1_tool``
only the held-out tools, in categories train uses (its unseen-tool group), and the
``*_instruction`` sets use tools ``train`` uses too (with instructions no train task has). About
one task in ten is unsolvable: it asks about something that does not exist, or for a field no API
returns; its right ending says so.

Every record names its template: its questions' phrasings joined with ``+`` (``get.name.1``, a
service question by its API, ``weather.current``; ``unsolvable.no_such_id``). The test sets, demo
and the alignment tasks share the askers' phrasings; ``train`` (``make``, 1,000 shipped, any number
for another seed) asks the same questions with more openings, connectors and lead-ins, over the
seen tools only, and holds no test or unseen query nor a near duplicate of one. ``unseen`` asks
about the held-out categories (so about tools and categories no demo, train or alignment task
uses: ``HELD_OUT_KEYS``, the records' ``tools`` and ``categories``) in a grammar of its own
(``rapidapi_unseen``): ToolLLM's unseen-category setting with instructions of another kind. Its
categories are those of ``G1_category`` and ``G2_category``, which is how ToolLLM holds them out (of
training, not of each other); ``G1_tool``'s tools stay out of unseen, their categories being
seen. A record's ``difficulty`` is its number of calls.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from toolbench.core.tasks import fixture_file
from toolbench.mock_services.rapidapi import TEST_SETS
from toolbench.mock_services.rapidapi.catalog import CATEGORIES, COLLECTIONS, api_record, askers, hub
from toolbench.mock_services.rapidapi.domains import DOMAINS, Domain, Question
from toolbench.mock_services.rapidapi.hub import Tool, call
from toolbench.mock_services.rapidapi.passrule import states
from toolbench.mock_services.rapidapi.world import build_world
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
from toolbench.taskgen import rapidapi_unseen as unseen_grammar

SIZES = {"G1_instruction": 150, "G1_category": 150, "G1_tool": 150, "G2_instruction": 120, "G2_category": 120,
         "G3_instruction": 100, "train": 1000, "demo": 30}  # fmt: skip
HELD_OUT_CATEGORIES = 7
HELD_OUT_TOOLS = 20
UNSOLVABLE_SHARE = 0.1
MAX_APIS_PER_TOOL = 4  # of a G2/G3 task's tools beyond the ones it needs (ToolBench samples a few per tool)

OPENINGS = (
    "", "I'm putting together some notes. ", "Quick question for a project. ", "Help me out, please. ",
    "I'm planning my week. ", "My team asked me to check a few things. ", "For a report I'm writing: ",
)  # fmt: skip
CONNECTORS = (" Also, ", " And ", " Then, ", " Besides that, ")
MISSING_FIELDS = ("official phone number", "number of social media followers", "founding charter", "tax identifier")
# Train's phrasings beside the test sets' (the same question frames, so the same template ids).
TRAIN_OPENINGS = (*OPENINGS, "Hello! ", "Thanks in advance. ", "I'm looking into something. ")
TRAIN_CONNECTORS = (*CONNECTORS, " Next, ", " In addition, ")
TRAIN_LEADS = ("", "", "", "quick one: ", "I was wondering: ")
#: The record keys that name a task's tools and their categories: ``unseen`` uses only categories
#: (hence tools) that no demo, train or alignment task uses.
HELD_OUT_KEYS = ("tools", "categories")
HAS_DIFFICULTY = True  # a task's number of calls
UNSEEN_GROUPS = (("G1", 0.45), ("G2", 0.4), ("G3", 0.15))  # one tool, tools of one category, of two categories


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _resolve(body: Any, path: str) -> Any:
    for part in path.split("."):
        body = body[int(part)] if isinstance(body, list) else body[part]
    return body


def _fact(value: Any) -> str | list[str] | None:
    """A value as an answer fact; yes/no values are left out (an answer states them in words too
    many ways to check), as are empty ones. A country or currency code may be stated by its name."""
    if isinstance(value, bool) or value is None or value == "":
        return None
    if isinstance(value, float):
        return repr(value) if abs(value) < 1e15 else str(int(value))
    world = build_world()
    for table in ("countries", "currencies"):
        named = world.get(table, value) if isinstance(value, str) and value.isupper() else None
        if named is not None:
            return [value, named["name"]]
    return str(value)


class Player:
    """Plays a task's calls on a fresh hub session, keeping each tool's state apart."""

    def __init__(self) -> None:
        self.state: dict[str, Any] = {}
        self.responses: list[Any] = []

    def play(self, tool: Tool, api_name: str, arguments: dict[str, Any]) -> tuple[int, Any]:
        api = tool.api(api_name)
        assert api is not None, (tool.name, api_name)
        status, body = call(tool, api, arguments, self.state.setdefault(tool.standard_name, {}))
        self.responses.append(body)
        return status, body


def _depends(arguments: dict[str, Any], earlier: list[Any]) -> list[int]:
    """The earlier calls whose responses hold one of these argument values (an id they returned)."""
    needles = [str(v) for v in arguments.values() if isinstance(v, str) and len(str(v)) >= 3]
    return [n for n, body in enumerate(earlier) if any(f'"{needle}"' in json.dumps(body) for needle in needles)]


def _steps(questions: list[tuple[Tool, Question]]) -> tuple[list[dict[str, Any]], list[Any], bool]:
    """Play the questions' calls: the solution path, the answer facts, and whether every call worked."""
    player, path, facts, worked = Player(), [], [], True
    for tool, question in questions:
        for number, (api_name, arguments) in enumerate(question.calls, start=1):
            status, body = player.play(tool, api_name, arguments)
            worked &= status == 200
            path.append(
                {
                    "function": tool.function(tool.api(api_name)),  # type: ignore[arg-type]
                    "tool_name": tool.name,
                    "api_name": api_name,
                    "arguments": arguments,
                    "depends_on": _depends(arguments, player.responses[:-1]),
                    # The call whose response holds the facts (unsolvable: shows it cannot be done).
                    "holds_facts": number == len(question.calls),
                }
            )
        if worked:
            last = player.responses[-1]
            facts += [f for f in (_fact(_resolve(last, key)) for key in question.facts) if f is not None]
    return path, facts, worked


def _api_list(tools: list[Tool], needed: set[tuple[str, str]], r: random.Random, per_tool: int) -> list[dict[str, Any]]:
    records = []
    for tool in tools:
        chosen = [api for api in tool.apis if (tool.name, api.name) in needed]
        others = [api for api in tool.apis if (tool.name, api.name) not in needed]
        r.shuffle(others)
        chosen += others[: max(0, per_tool - len(chosen))]
        records += [api_record(tool, api) for api in sorted(chosen, key=tool.apis.index)]
    return records


def _questions(r: random.Random, tools: list[Tool], count: int, grammar: Grammar) -> list[tuple[Tool, Question]] | None:
    """``count`` questions spread over ``tools`` (each tool at least one), none asked twice, in
    ``grammar``'s phrasing (None where it has none for one of them)."""
    world = build_world()
    picked: list[tuple[Tool, Question]] = []
    used: set[tuple[str, str]] = set()
    order = list(tools) + [r.choice(tools) for _ in range(max(0, count - len(tools)))]
    for tool in order:
        options = [key for key in sorted(askers(tool)) if (tool.name, key.split(".")[0]) not in used]
        if not options:
            return None
        key = r.choice(options)
        used.add((tool.name, key.split(".")[0]))  # one question per service or table of a tool
        question: Question | None = askers(tool)[key](r, world)
        if grammar.phrase is not None:
            question = grammar.phrase(r, world, key, question)
            if question is None:
                return None
        picked.append((tool, question))
    return picked


def _seen_no_such(r: random.Random, domain: Domain, fake: str, field: str) -> tuple[str, str]:
    return f"what is the {field.replace('_', ' ')} of the {domain.noun} with id {fake}?", "unsolvable.no_such_id"


def _seen_missing(r: random.Random, domain: Domain, row: dict[str, Any]) -> tuple[str, str]:
    text = f"what is the {r.choice(MISSING_FIELDS)} of the {domain.noun} with id {row['id']}?"
    return text, "unsolvable.missing_field"


def _seen_query(r: random.Random, parts: list[str]) -> str:
    return r.choice(OPENINGS) + _cap(parts[0]) + "".join(r.choice(CONNECTORS) + p for p in parts[1:])


def _train_query(r: random.Random, parts: list[str]) -> str:
    first = _cap(r.choice(TRAIN_LEADS) + parts[0])
    return r.choice(TRAIN_OPENINGS) + first + "".join(r.choice(TRAIN_CONNECTORS) + p for p in parts[1:])


@dataclass(frozen=True)
class Grammar:
    """How a task's questions become its query: the questions' phrasing (None: the askers' own), the
    unsolvable questions' (words and frame id), and how they are joined into one request."""

    query: Callable[[random.Random, list[str]], str]
    phrase: Callable[[random.Random, Any, str, Question], Question | None] | None = None
    no_such: Callable[[random.Random, Domain, str, str], tuple[str, str]] = _seen_no_such
    missing: Callable[[random.Random, Domain, dict[str, Any]], tuple[str, str]] = _seen_missing


SEEN = Grammar(_seen_query)  # the test sets', demo's and alignment's
TRAIN = Grammar(_train_query)  # the same frames, more openings, connectors and lead-ins
UNSEEN = Grammar(unseen_grammar.query, unseen_grammar.phrase, unseen_grammar.no_such, unseen_grammar.missing)


def _unsolvable(
    r: random.Random, tool: Tool, grammar: Grammar
) -> tuple[str, list[tuple[Tool, Question]], str, str] | None:
    """A question the tool cannot answer: about an id that does not exist, or a field no API has; its
    words, calls, reason and frame id."""
    tables = [
        api.key.split(".")[0] for api in tool.apis if api.key.endswith(".get") and api.key.split(".")[0] in DOMAINS
    ]
    if not tables:
        return None
    table = r.choice(tables)
    domain = DOMAINS[table]
    get = next(api.name for api in tool.apis if api.key == f"{table}.get")
    if r.random() < 0.5:
        fake = f"{domain.noun[:2]}{r.randint(10**7, 10**8 - 1)}x"
        field = r.choice(domain.ask_fields)
        text, template = grammar.no_such(r, domain, fake, field)
        return text, [(tool, Question(text, ((get, {domain.id_param: fake}),), ()))], "no such item", template
    row = r.choice(build_world().rows(table))
    text, template = grammar.missing(r, domain, row)
    question = Question(text, ((get, {domain.id_param: row["id"]}),), ())
    return text, [(tool, question)], "the tools do not have it", template


def _finish(answer: str) -> dict[str, Any]:
    return {"name": "Finish", "arguments": {"return_type": "give_answer", "final_answer": answer}}


def oracle_answer(facts: list[Any], solvable: bool) -> str:
    if not solvable:
        return "I'm sorry, but I cannot answer this: the tools do not have that information."
    return "Here is what I found: " + "; ".join(f if isinstance(f, str) else f[0] for f in facts) + "."


def make_task(
    r: random.Random, group: str, tools: list[Tool], query_id: int, unsolvable: bool, grammar: Grammar = SEEN
) -> dict[str, Any] | None:
    """One task record in ToolBench's query format, plus the id of the template its query was written
    from (its questions' frames joined with ``+``), our solution path and answer facts."""
    reason = ""
    if unsolvable:
        made = _unsolvable(r, tools[0], grammar)
        if made is None:
            return None
        text, questions, reason, template = made
        query = grammar.query(r, [text])
    else:
        count = len(tools) if group != "G1" else r.choice((1, 2, 2, 3))
        asked = _questions(r, tools, count, grammar)
        if asked is None:
            return None
        questions = asked
        template = "+".join(q.template for _, q in questions)
        query = grammar.query(r, [q.text for _, q in questions])
    path, facts, worked = _steps(questions)
    facts = [fact for fact in facts if not states(query, fact)]  # a fact the query already says proves nothing
    if unsolvable == worked and reason != "the tools do not have it":
        return None  # a question meant to fail that worked, or one meant to work that failed
    if not unsolvable and not facts:
        return None
    needed = {(step["tool_name"], step["api_name"]) for step in path}
    per_tool = 8 if group == "G1" else MAX_APIS_PER_TOOL
    actions = [{"name": step["function"], "arguments": step["arguments"]} for step in path]
    actions.append(_finish(oracle_answer(facts, not unsolvable)))
    return {
        "template": template,
        "query": query,
        "query_id": query_id,
        "api_list": _api_list(tools, needed, r, per_tool),
        "relevant APIs": [[tool_name, api_name] for tool_name, api_name in dict.fromkeys(
            (step["tool_name"], step["api_name"]) for step in path)],
        "solvable": not unsolvable,
        "unsolvable_reason": reason,
        "answer_facts": facts,
        "solution": path,
        "completion": [json.dumps(action, ensure_ascii=False) for action in actions],
    }  # fmt: skip


# ---------------------------------------------------------------------- splits
def held_out() -> tuple[list[str], set[str]]:
    """The categories and tools ``train`` never uses."""
    r = rng_for("rapidapi", "held-out")
    categories = sorted(CATEGORIES)
    r.shuffle(categories)
    out_categories = sorted(categories[:HELD_OUT_CATEGORIES])
    out_tools = {CATEGORIES[c][1][-1] for c in categories[HELD_OUT_CATEGORIES : HELD_OUT_CATEGORIES + HELD_OUT_TOOLS]}
    return out_categories, out_tools


def _tools_of(category: str, exclude: set[str]) -> list[Tool]:
    return [t for t in hub().tools if t.category == category and t.name not in exclude]


def _pickers() -> dict[str, Callable[[random.Random], tuple[str, list[Tool]]]]:
    out_categories, out_tools = held_out()
    seen_categories = [c for c in CATEGORIES if c not in out_categories]

    def g1(categories: list[str], exclude: set[str]) -> Callable[[random.Random], tuple[str, list[Tool]]]:
        return lambda r: ("G1", [r.choice(_tools_of(r.choice(categories), exclude))])

    def g2(categories: list[str], exclude: set[str]) -> Callable[[random.Random], tuple[str, list[Tool]]]:
        def pick(r: random.Random) -> tuple[str, list[Tool]]:
            tools = _tools_of(r.choice(categories), exclude)
            return "G2", r.sample(tools, min(len(tools), r.choice((2, 2, 3))))

        return pick

    def g3(r: random.Random) -> tuple[str, list[Tool]]:
        name = r.choice(sorted(COLLECTIONS))
        tools = [t for t in hub().tools if name in t.collections and t.name not in out_tools]
        tools = [t for t in tools if t.category not in out_categories]
        categories = sorted({t.category for t in tools})
        chosen = r.sample(categories, min(len(categories), r.choice((2, 3))))
        return "G3", [r.choice([t for t in tools if t.category == c]) for c in chosen]

    held_tools = sorted((t for t in hub().tools if t.name in out_tools), key=lambda t: t.name)
    train_g1, train_g2 = g1(seen_categories, out_tools), g2(seen_categories, out_tools)

    def g1_tool(r: random.Random) -> tuple[str, list[Tool]]:
        return "G1", [r.choice(held_tools)]

    def train(r: random.Random) -> tuple[str, list[Tool]]:
        return r.choice((train_g1, train_g1, train_g2, g3))(r)

    return {
        "G1_instruction": train_g1,
        "G1_category": g1(out_categories, set()),
        "G1_tool": g1_tool,
        "G2_instruction": train_g2,
        "G2_category": g2(out_categories, set()),
        "G3_instruction": g3,
        "train": train,
        "demo": train,
    }


def _unseen_picker(r: random.Random) -> tuple[str, list[Tool]]:
    """The tools of an unseen task: one tool, two or three of one category, or one of each of two
    categories, all from the categories no demo, train or alignment task uses."""
    categories = held_out()[0]
    group = r.choices([g for g, _ in UNSEEN_GROUPS], [w for _, w in UNSEEN_GROUPS])[0]
    if group == "G1":
        return group, [r.choice(_tools_of(r.choice(categories), set()))]
    if group == "G2":
        tools = _tools_of(r.choice(categories), set())
        return group, r.sample(tools, r.choice((2, 2, 3)))
    return group, [r.choice(_tools_of(category, set())) for category in r.sample(categories, 2)]


def _drawn(
    r: random.Random, pick: Callable[[random.Random], tuple[str, list[Tool]]], grammar: Grammar
) -> Iterator[dict[str, Any]]:
    """Task records without ids, drawn for ever (a draw that cannot make a task is skipped)."""
    while True:
        unsolvable = r.random() < UNSOLVABLE_SHARE
        group, tools = pick(r)
        record = make_task(r, group, tools, 0, unsolvable, grammar)
        if record is not None:
            yield record


def _grown(record: dict[str, Any]) -> dict[str, Any]:
    """A demo, train, unseen or alignment record with its difficulty (its number of calls), tools and
    their categories (``HELD_OUT_KEYS``) after its template id."""
    tools = list(dict.fromkeys(entry["tool_name"] for entry in record["api_list"]))
    categories = sorted({entry["category_name"] for entry in record["api_list"]})
    head = {key: record[key] for key in ("id", "category", "template") if key in record}
    extra = {"difficulty": len(record["solution"]), "tools": tools, "categories": categories}
    return {**head, **extra, **{k: v for k, v in record.items() if k not in head}}


def build_split(split: str, taken: set[str]) -> list[dict[str, Any]]:
    """A published split's records (a test set or demo); ``taken`` holds the queries of earlier
    splits (no query repeats)."""
    r = rng_for("rapidapi", split)
    pick = _pickers()[split]
    records: list[dict[str, Any]] = []
    base = {name: 10_000 * (n + 1) for n, name in enumerate((*TEST_SETS, "train", "demo"))}[split]
    while len(records) < SIZES[split]:
        unsolvable = r.random() < UNSOLVABLE_SHARE
        group, tools = pick(r)
        record = make_task(r, group, tools, base + len(records), unsolvable)
        if record is None or record["query"] in taken:
            continue
        taken.add(record["query"])
        record = {"id": f"rapidapi-{split}-{len(records):04d}", "category": split, **record}
        records.append(_grown(record) if split == "demo" else record)
    return records


@cache
def published() -> dict[str, list[dict[str, Any]]]:
    """The demo and test sets as published. They were drawn after a first train split and avoid its
    queries, so that split is drawn again first (and set aside: ``train`` is ``make``'s)."""
    taken: set[str] = set()
    build_split("train", taken)
    return {split: build_split(split, taken) for split in ("demo", *TEST_SETS)}


def _prompts(*splits: str) -> list[str]:
    return [record["query"] for split in splits for record in published()[split]]


@cache
def _shipped_unseen_prompts() -> tuple[str, ...]:
    return tuple(record["query"] for record in make("unseen", SHIPPED_SIZES["unseen"], SHIPPED_SEED))


def _kept(drawn: Iterator[dict[str, Any]], size: int, against: list[str], exclude: set[str]) -> list[dict[str, Any]]:
    """The first ``size`` drawn records whose query is new and no near duplicate of one ``against``."""
    kept: list[dict[str, Any]] = []
    seen = set(exclude)
    while len(kept) < size:
        batch: list[dict[str, Any]] = []
        while len(batch) < (size - len(kept)) * 5 // 4 + 8:
            record = next(drawn)
            if record["query"] not in seen:
                seen.add(record["query"])
                batch.append(record)
        close = near_duplicates([record["query"] for record in batch], against)
        kept += [record for n, record in enumerate(batch) if n not in close][: size - len(kept)]
    return kept


@split_maker("rapidapi")
def make(split: str, size: int, seed: int) -> list[dict[str, Any]]:
    """``size`` records of ``train`` (the seen frames, in more phrasings than the test sets, over the
    tools and categories the test sets' instruction groups use) or ``unseen`` (its own grammar, over
    the held-out categories), deterministic in ``seed``; neither holds a test or demo query nor a
    near duplicate of one, and train none of the shipped unseen split's."""
    if split == "train":
        drawn = _drawn(rng_for("rapidapi", "train", seed), _pickers()["train"], TRAIN)
        against = [*_prompts(*TEST_SETS), *_shipped_unseen_prompts()]
    elif split == "unseen":
        drawn = _drawn(rng_for("rapidapi", "unseen", seed), _unseen_picker, UNSEEN)
        against = _prompts("demo", *TEST_SETS)
    else:
        raise ValueError(f"RapidAPI grows the splits train and unseen, not {split!r}")
    records = _kept(drawn, size, against, set(_prompts("demo")))
    base = {"train": 70_000, "unseen": 90_000}[split]
    prefix = f"rapidapi-{split}" if seed == SHIPPED_SEED else f"rapidapi-{split}-{seed}"
    return [
        _grown({"id": f"{prefix}-{n:04d}", "category": split, **{**record, "query_id": base + n}})
        for n, record in enumerate(records)
    ]


@aligner("rapidapi")
def alignment_records(count: int, seed: str) -> list[dict[str, Any]]:
    """``count`` fresh tasks of the seen templates, from another random stream (``prompt`` is the
    query), never a shipped query."""
    r = rng_for("rapidapi", "align", seed)
    pick = _pickers()["train"]
    shipped = (*TEST_SETS, "train", "demo", "unseen")
    seen = {json.loads(line)["query"] for split in shipped for line in _fixture_lines(split)}
    records: list[dict[str, Any]] = []
    while len(records) < count:
        group, tools = pick(r)
        record = make_task(r, group, tools, 900_000 + len(records), r.random() < UNSOLVABLE_SHARE)
        if record is None or record["query"] in seen:
            continue
        seen.add(record["query"])
        made = _grown({"id": f"rapidapi-align-{seed}-{len(records):04d}", **record})
        records.append({"id": made.pop("id"), "prompt": record["query"], **made})
    return records


def _fixture_lines(split: str) -> list[str]:
    path = fixture_file("rapidapi", f"{split}.jsonl")
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line] if path.exists() else []


def _write_dense_retriever() -> Path:
    """The hub's dense retriever, trained on the train split just written and stored."""
    from toolbench.taskgen.dense_retriever import write_stored

    return write_stored()


@generator("rapidapi", derived=_write_dense_retriever)
def generate() -> Files:
    files: Files = {"train.jsonl": jsonl(make("train", SIZES["train"], SHIPPED_SEED))}
    for split in ("demo", *TEST_SETS):
        files[f"{split}.jsonl"] = jsonl(published()[split])
    files["unseen.jsonl"] = jsonl(make("unseen", SHIPPED_SIZES["unseen"], SHIPPED_SEED))
    return files
