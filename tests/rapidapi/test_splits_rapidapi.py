"""RapidAPI's train and unseen splits: a parser fitted to the seen phrasings solves the test sets but
not unseen; the oracle solves unseen and train; unseen's tools, categories and templates are its own;
a policy that fills in only what every task shares earns nothing.

The parser is what an optimiser writes after reading the demo and train prompts: it cuts a query
into questions at the openings and connectors it saw, turns each seen question into a regular
expression (the values its calls take become groups), and remembers which APIs (by what they do)
that question calls, where each argument comes from (the question, an earlier response, a constant)
and which response fields answer it. It answers in the env's reference format.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import pytest

import toolbench  # noqa: F401  (registers the env ids)
from tests.episodes import play
from toolbench.envs.rapidapi import RapidAPIEnv
from toolbench.taskgen.rapidapi import HELD_OUT_KEYS, _fact, held_out, oracle_answer

OPENING = re.compile(
    r"^(?:(?:I'm putting together some notes\.|Quick question for a project\.|Help me out, please\.|"
    r"I'm planning my week\.|My team asked me to check a few things\.|For a report I'm writing:|Hello!|"
    r"Thanks in advance\.|I'm looking into something\.) )?(?:Quick one: |I was wondering: )?"
)
CONNECTOR = re.compile(r"(?<=[?.]) (?:Also, |And |Then, |Besides that, |Next, |In addition, )(?=[A-Za-z])")


# The seen phrasings of a question about one row, with its fields and the row's kind as groups: a
# parser generalises them to field pairs train never asked for (and learns the words of each field).
ROW_FORMS = (
    re.compile(r"What are the (?P<a>.+?) and the (?P<b>.+?) of the (?P<noun>[a-z ]+?) '(?P<label>.+)'\?"),
    re.compile(r"I need the (?P<a>.+?) and the (?P<b>.+?) for the (?P<noun>[a-z ]+?) called '(?P<label>.+)'\."),
    re.compile(r"Could you tell me the (?P<a>.+?) and the (?P<b>.+?) of '(?P<label>.+)' \(a (?P<noun>[a-z ]+?)\)\?"),
    re.compile(
        r"What (?:are|is) the (?P<a>.+?)(?: and the (?P<b>.+?))? of the (?P<noun>[a-z ]+?) with id (?P<id>\S+)\?"
    ),
)


def questions(query: str) -> list[str]:
    """A query's questions, each with a capital first letter."""
    parts = CONNECTOR.split(query[OPENING.match(query).end() :])
    return [part[:1].upper() + part[1:] for part in parts]


def functions_by_use(task: Any, tools: list[dict[str, Any]]) -> dict[str, str]:
    """What each offered API does (its ``api_list`` description) -> its function (the tool schemas
    come in ``api_list`` order, ``Finish`` last)."""
    return {entry["api_description"]: s["function"]["name"] for entry, s in zip(task.get("api_list"), tools[:-1])}


def leaves(value: Any, path: tuple = ()) -> list[tuple[tuple, Any]]:
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in leaves(item, (*path, key))]
    if isinstance(value, list):
        return [leaf for n, item in enumerate(value) for leaf in leaves(item, (*path, n))]
    return [(path, value)]


def fact_form(value: Any) -> str | None:
    fact = _fact(value)
    return fact if fact is None or isinstance(fact, str) else fact[0]


@dataclass(frozen=True)
class Frame:
    """One seen question: its calls (what each API does, and each argument's source: ``("slot",
    group, type, offset)``, ``("response", call, path)`` or ``("constant", value)``), the paths of the
    last response that answer it (a group's value may be a path's part), and whether it can be
    answered."""

    calls: tuple
    facts: tuple
    solvable: bool


def _placed(part: str, text: str, taken: list[tuple[int, int]]) -> tuple[int, int] | None:
    """Where ``text`` stands in ``part`` as a whole value, clear of the places already taken."""
    for match in re.finditer(r"(?<![A-Za-z0-9])" + re.escape(text) + r"(?![A-Za-z0-9])", part):
        if all(match.end() <= start or match.start() >= end for start, end in taken):
            return match.span()
    return None


def _frame(part: str, steps: list[dict], responses: list[Any], facts: set[str], solvable: bool):
    """The regular expression and frame of one seen question: each argument value found in the
    question becomes a group (in the order they stand), a value an earlier call returned is read
    from its response, any other is a constant."""
    spans: dict[str, tuple[int, int]] = {}
    sources: list[tuple[str, dict[str, Any]]] = []
    for number, step in enumerate(steps):
        arguments: dict[str, Any] = {}
        for name, value in step["arguments"].items():
            forms = [(str(value), 0)] + ([(str(value - 1), 1)] if type(value) is int else [])
            placed = None
            for text, offset in forms:
                span = spans.get(text) or _placed(part, text, list(spans.values()))
                if span is not None and text:
                    spans[text], placed = span, (text, offset)
                    break
            earlier = [(n, path) for n, body in enumerate(responses[:number]) for path, v in leaves(body) if v == value]
            if placed is not None:
                arguments[name] = ("slot", placed[0], type(value).__name__, placed[1])
            elif earlier:
                arguments[name] = ("response", *earlier[0])
            else:
                arguments[name] = ("constant", value)
        sources.append((step["what"], arguments))
    order = sorted(spans, key=lambda text: spans[text][0])
    group = {text: n for n, text in enumerate(order)}
    regex, at = "", 0
    for text in order:
        start, end = spans[text]
        regex += re.escape(part[at:start]) + "(.+?)"
        at = end
    regex += re.escape(part[at:])
    calls = tuple(
        (what, tuple(sorted((name, ("slot", group[src[1]], *src[2:]) if src[0] == "slot" else src)
                            for name, src in arguments.items())))
        for what, arguments in sources
    )  # fmt: skip
    paths = []
    for path, value in leaves(responses[-1]) if solvable else []:
        if fact_form(value) in facts:
            paths.append(tuple(("slot", group[p]) if isinstance(p, str) and p in group else p for p in path))
    return regex, Frame(calls, tuple(paths), solvable)


@dataclass
class Rows:
    """What the parser learns of the questions about one row: per kind of row, the calls by name
    and by id (each argument a group's value, an earlier response's or a constant), and how often
    each phrase stood with each field of the answer."""

    calls: dict[tuple[str, bool], tuple]
    together: Counter
    fields: Counter

    def learn(self, part: str, steps: list[dict], responses: list[Any], facts: set[str]) -> None:
        match = next((m for form in ROW_FORMS if (m := form.fullmatch(part))), None)
        if match is None:
            return
        found = match.groupdict()
        values = {found.get("id") or found["label"]: ("value",)}
        calls = []
        for number, step in enumerate(steps):
            arguments = {}
            for name, value in step["arguments"].items():
                earlier = [
                    (n, path) for n, body in enumerate(responses[:number]) for path, v in leaves(body) if v == value
                ]
                arguments[name] = values.get(value) or (("response", *earlier[0]) if earlier else ("constant", value))
            calls.append((step["what"], tuple(sorted(arguments.items()))))
        self.calls.setdefault((found["noun"], "id" in found), tuple(calls))
        keys = {path[-1] for path, value in leaves(responses[-1]) if fact_form(value) in facts}
        for phrase in (found["a"], found["b"]) if found["b"] else ():
            for key in keys:
                self.together[phrase, key] += 1
        self.fields.update(keys)

    def field(self, phrase: str) -> str | None:
        """The field a phrase names: the one it stood with most often, for that field's count."""
        scores = {key: n / self.fields[key] for (said, key), n in self.together.items() if said == phrase}
        return max(scores, key=scores.get) if scores else None


def fit(tasks: list[Any]) -> tuple[list[tuple[re.Pattern, Frame]], Rows]:
    """The parser's frames and what it knows of questions about one row, read from the demo and train
    tasks (their queries, solution paths and answers, replayed on the hub for the responses)."""
    env = gym.make("toolbench/RapidAPI-v0", tasks=tasks).unwrapped
    seen: dict[str, Counter] = {}
    rows = Rows({}, Counter(), Counter())
    for task in tasks:
        _, info = env.reset(options={"task_id": task.id})
        doing = {function: what for what, function in functions_by_use(task, info["tools"]).items()}
        steps, responses = [], []
        for step in task.get("solution"):
            observation = env.step(json.dumps({"name": step["function"], "arguments": step["arguments"]}))[0]
            try:
                responses.append(json.loads(observation)["response"])
            except ValueError:  # cut at 1,024 characters
                responses.append(None)
            steps.append({**step, "what": doing.get(step["function"], step["function"])})
        groups, current = [], []
        for step, response in zip(steps, responses):
            current.append((step, response))
            if step["holds_facts"]:
                groups.append(current)
                current = []
        parts = questions(task.prompt)
        if len(parts) != len(groups):
            continue
        facts = {f if isinstance(f, str) else f[0] for f in task.get("answer_facts")}
        for part, group in zip(parts, groups):
            if any(response is None for _, response in group):
                continue
            if task.get("solvable"):
                rows.learn(part, [s for s, _ in group], [r for _, r in group], facts)
            made = _frame(part, [s for s, _ in group], [r for _, r in group], facts, bool(task.get("solvable")))
            if made is not None:
                seen.setdefault(made[0], Counter())[made[1]] += 1
    env.close()
    return [(re.compile(regex), counts.most_common(1)[0][0]) for regex, counts in seen.items()], rows


def _value(source: tuple, groups: tuple, responses: list[Any]) -> Any:
    kind = source[0]
    if kind == "constant":
        return source[1]
    if kind == "response":
        body = responses[source[1]]
        for part in source[2]:
            body = body[part]
        return body
    _, group, type_name, offset = source
    text = groups[group]
    return {"int": lambda t: int(t) + offset, "float": float}.get(type_name, str)(text)


def _row_frame(part: str, rows: Rows) -> tuple[tuple, Frame] | None:
    """A question about one row in a seen phrasing, with fields or a kind of row no seen question
    paired: its frame, from what the parser learned (a phrase it does not know: no answer facts)."""
    match = next((m for form in ROW_FORMS if (m := form.fullmatch(part))), None)
    found = match.groupdict() if match else {}
    calls = rows.calls.get((found["noun"], "id" in found)) if match else None
    if calls is None:
        return None
    value = found.get("id") or found["label"]
    calls = tuple(
        (what, tuple((n, ("slot", 0, "str", 0) if s == ("value",) else s) for n, s in args)) for what, args in calls
    )
    keys = [rows.field(phrase) for phrase in (found["a"], found.get("b")) if phrase is not None]
    return (value,), Frame(calls, tuple((key,) for key in keys if key is not None), None not in keys)


def parse_and_play(env: RapidAPIEnv, task: Any, frames: list[tuple[re.Pattern, Frame]], rows: Rows) -> bool:
    """Play a task as the parser does; whether it passed (no matching frame: no answer)."""
    _, info = env.reset(options={"task_id": task.id})
    functions = functions_by_use(task, info["tools"])
    found = []
    try:
        for part in questions(task.prompt):
            exact = next(((m.groups(), f) for regex, f in frames if (m := regex.fullmatch(part))), None)
            groups, frame = exact or _row_frame(part, rows)
            responses = []
            for what, arguments in frame.calls:
                call = {"name": functions[what], "arguments": {n: _value(s, groups, responses) for n, s in arguments}}
                reply = json.loads(env.step(json.dumps(call))[0])
                if reply["error"] or not frame.solvable:
                    return env.step(finish("", "give_up_and_restart"))[4]["success"]
                responses.append(reply["response"])
            for path in frame.facts:
                body = responses[-1]
                for part_of_path in path:
                    body = body[groups[part_of_path[1]] if isinstance(part_of_path, tuple) else part_of_path]
                found.append(fact_form(body))
    except (KeyError, IndexError, TypeError, ValueError):
        return False
    return env.step(finish(oracle_answer([f for f in found if f is not None], True)))[4]["success"]


def finish(answer: str, kind: str = "give_answer") -> str:
    return json.dumps({"name": "Finish", "arguments": {"return_type": kind, "final_answer": answer}})


def split_env(split: str) -> RapidAPIEnv:
    return gym.make("toolbench/RapidAPI-v0", split=split).unwrapped


@pytest.fixture(scope="module")
def parser() -> tuple[list[tuple[re.Pattern, Frame]], Rows]:
    return fit([*split_env("demo").tasks, *split_env("train").tasks])


def test_a_parser_fitted_to_the_seen_phrasings_solves_test_not_unseen(parser):
    rates = {}
    for split in ("test", "unseen"):
        env = split_env(split)
        rates[split] = sum(parse_and_play(env, task, *parser) for task in env.tasks) / len(env.tasks)
    assert rates["test"] >= 0.6 and rates["unseen"] <= 0.10, rates


def test_the_oracle_solves_unseen_and_train():
    for split, stride in (("unseen", 1), ("train", 25)):
        env = split_env(split)
        for task in env.tasks[::stride]:
            *_, info = play(env, task.id, env.oracle_actions(task))
            assert info["success"] is True and info["score"] == 1.0, (task.id, info)


def _keyed(env: RapidAPIEnv, key: str) -> set[str]:
    return {value for task in env.tasks for value in task.get(key) or ()}


def test_unseen_tools_categories_and_templates_are_its_own():
    unseen = split_env("unseen")
    for split in ("demo", "train"):
        other = split_env(split)
        for key in HELD_OUT_KEYS:
            assert _keyed(unseen, key) and not _keyed(unseen, key) & _keyed(other, key), (split, key)
    templates = {task.get("template") for task in unseen.tasks}
    for split in ("test", "demo", "train"):
        assert not templates & {task.get("template") for task in split_env(split).tasks}, split
    # ToolLLM's groups: unseen draws on the categories G1_category and G2_category hold out of train;
    # G1_tool's tools are held out of train too, in categories train uses.
    categories, tools = held_out()
    assert _keyed(unseen, "categories") <= set(categories)
    assert not _keyed(split_env("train"), "tools") & tools
    g1_tool = {e["tool_name"] for task in split_env("G1_tool").tasks for e in task.get("api_list")}
    assert g1_tool <= tools
    train_categories = _keyed(split_env("train"), "categories")
    assert not train_categories & set(categories)
    assert {t.get("difficulty") for t in split_env("train").tasks} >= {1, 2, 3, 4, 5}


@pytest.mark.parametrize("split", ["test", "unseen"])
def test_what_every_task_shares_earns_nothing(split):
    env = split_env(split)
    scores = []
    for task in env.tasks:
        *_, info = play(env, task.id, env.shared_parts_actions(task))
        assert info["success"] is False, task.id
        scores.append(info["score"])
    assert sum(scores) / len(scores) <= 0.15
