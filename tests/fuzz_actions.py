"""Actions generated from each env's own grammar: its tool schemas (``info["tools"]``), the names in
its docs and the words of its world, called with hostile arguments.

Where ``tests/fuzzing.py``'s mutations cut and splice reference actions, these are well-formed
calls an agent could write: real tool names with wrong types, huge and non-finite numbers, empty and
very long strings, unicode and control characters, nested structures, missing and extra arguments,
every object of VirtualHome's homes and every product and button of WebShop's shop. Everything is
drawn from a ``random.Random``: the same seed gives the same actions.
"""

from __future__ import annotations

import functools
import json
import math
import random
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import gymnasium as gym

import toolbench  # noqa: F401  (registers the env ids that webshop_words and appbench_apis make)

HUGE_INT = 10**400
NAN = float("nan")


def _nested(depth: int, kind: str = "list") -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


HOSTILE_VALUES: tuple[Any, ...] = (
    1e308, -1e308, HUGE_INT, -HUGE_INT, NAN, math.inf, -math.inf, -1, 0, -0.0, 2**63, -(2**63) - 1, 0.5,
    "", " ", "x" * 5000, "é猫💥\u2028\u200f", "\x00\x01\x1b[31m\r\n\t", "\ud800", "NaN", "1e309", "-1",
    "../../etc/passwd", "' OR 1=1 --", "%ff%00", "{API_KEY}", "${HOME}", "$(id)", "`id`", "a\nb", "None",
    True, False, None, [], {}, [1, "a", None], {"value": 1}, _nested(60), _nested(60, "dict"),
)  # fmt: skip


def hostile_value(r: random.Random, words: tuple[str, ...] = ()) -> Any:
    """A hostile argument, or (half the time, where there are any) a word of the env's world."""
    if words and r.random() < 0.5:
        return r.choice(words)
    return r.choice(HOSTILE_VALUES)


def python_literal(value: Any) -> str:
    """``value`` as Python source text (non-finite floats as the names a program would write)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "float('nan')" if math.isnan(value) else ("float('inf')" if value > 0 else "-float('inf')")
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {python_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)  # NaN and Infinity as JSON readers that allow them write them


def url_quote(text: str, safe: str = "") -> str:
    return quote(text.encode("utf-8", "surrogatepass"), safe=safe)  # a lone surrogate as its raw bytes


def text_of(value: Any) -> str:
    """A value as the free text a bracket or URL argument holds."""
    return value if isinstance(value, str) else json_text(value)


# ----------------------------------------------------------------------------- tool calls from schemas
def tool_specs(tools: list[dict[str, Any]] | None) -> list[tuple[str, list[str]]]:
    """(name, argument names) of each OpenAI function schema."""
    specs = []
    for tool in tools or []:
        function = tool.get("function", tool)
        properties = (function.get("parameters") or {}).get("properties") or {}
        specs.append((function["name"], list(properties)))
    return specs


def arguments(r: random.Random, names: list[str], words: tuple[str, ...]) -> dict[str, Any]:
    """The schema's arguments with hostile values; sometimes one missing, sometimes an extra one."""
    args = {name: hostile_value(r, words) for name in names}
    if args and r.random() < 0.2:
        args.pop(r.choice(list(args)))
    if r.random() < 0.2:
        args[r.choice(("extra", "__class__", "", "value" * 50, "é"))] = hostile_value(r, words)
    return args


def json_tool_call(r: random.Random, specs: list[tuple[str, list[str]]], words: tuple[str, ...]) -> str:
    """``{"name": ..., "arguments": ...}`` for a real tool (or a near miss), arguments hostile in shape too."""
    name, names = r.choice(specs) if specs else ("f", [])
    name = r.choice((name, name, name, name.upper(), name + "_", "", "Finish"))
    shape = r.randrange(8)
    if shape == 0:
        args: Any = json_text(arguments(r, names, words))  # OpenAI sends the arguments as a JSON string
    elif shape == 1:
        args = hostile_value(r)  # not an object at all
    else:
        args = arguments(r, names, words)
    call: Any = {"name": name, "arguments": args}
    if r.random() < 0.1:
        call = [call, call] if r.random() < 0.5 else {"function": call}
    return json_text(call)


def python_call(r: random.Random, prefix: str, name: str, names: list[str], words: tuple[str, ...]) -> str:
    """``prefix.name(...)``: positional or keyword arguments, hostile, some missing or extra."""
    args = arguments(r, names, words)
    if r.random() < 0.5:
        parts = [python_literal(value) for value in args.values()]
    else:
        parts = [f"{k}={python_literal(v)}" if k.isidentifier() else python_literal(v) for k, v in args.items()]
    if r.random() < 0.1:
        parts.append("*" + python_literal(hostile_value(r)))
    return f"{prefix}{name}({', '.join(parts)})"


# ----------------------------------------------------------------------------- each env's grammar
class Generator:
    """Makes the actions of one episode for one env and mode: a list of steps (one in program mode,
    where a step is a whole program of several calls)."""

    def __init__(self, env: Any, mode: str):
        self.env, self.mode = env, mode
        self.words: tuple[Any, ...] = reference_literals(env)

    def calls(self, r: random.Random, info: dict[str, Any], count: int) -> list[str]:
        raise NotImplementedError

    def episode(self, r: random.Random, info: dict[str, Any]) -> list[str]:
        """Generated calls; in interactive mode often after the first steps of the task's reference,
        so that they reach the states a real episode is in, and with a mutated reference step among them."""
        calls = self.calls(r, info, r.randint(1, 6))
        reference = self.env.oracle_actions(self.env.task) if self.env.task is not None else []
        if self.mode == "program":  # one program: the reference's first lines, then the generated calls
            if reference and r.random() < 0.2:
                return [substitute(r, reference[0], self.words)]
            lines = reference[0].splitlines() if reference and r.random() < 0.6 else []
            return ["\n".join(lines[: r.randrange(len(lines) + 1)] + calls)]
        start = reference[: r.randrange(len(reference) + 1)] if r.random() < 0.6 else []
        if reference and r.random() < 0.2:
            calls.insert(r.randrange(len(calls) + 1), mutate_text(r, r.choice(reference)))
        if reference and r.random() < 0.2:
            calls.insert(r.randrange(len(calls) + 1), substitute(r, r.choice(reference), self.words))
        return start + calls


def substitute(r: random.Random, text: str, words: tuple[Any, ...]) -> str:
    """``text`` with one of its literal values replaced by another value of the env's world: a call
    that parses and type-checks, with an argument the task did not ask for."""
    found = [match for match in _LITERAL.finditer(text)]
    if not found or not words:
        return text
    match, word = r.choice(found), r.choice(words)
    if match.group(3) is not None:  # a number: another number where there is one
        numbers = [w for w in words if isinstance(w, int | float) and not isinstance(w, bool)]
        replacement = repr(r.choice(numbers)) if numbers else match.group(3)
    else:
        quote_mark = "'" if match.group(1) is not None else '"'
        replacement = quote_mark + str(word).replace(quote_mark, "") + quote_mark
    return text[: match.start()] + replacement + text[match.end() :]


def mutate_text(r: random.Random, text: str) -> str:
    """A reference step cut, or with a hostile value spliced in."""
    at = r.randrange(len(text) + 1)
    return text[:at] if r.random() < 0.5 else text[:at] + text_of(hostile_value(r)) + text[at:]


_LITERAL = re.compile(r"'([^'\n]{1,80})'|\"([^\"\n]{1,80})\"|(?<![\w.])(-?\d+(?:\.\d+)?)(?![\w.])")


def reference_literals(env: Any, tasks: int = 300) -> tuple[Any, ...]:
    """The strings and numbers of the first ``tasks`` tasks' reference actions: the values a correct
    call passes, so generated calls also reach the states past a backend's argument checks."""
    found: set[Any] = set()
    for task in env.tasks[:tasks]:
        for reference in task.references[:1]:
            for quoted, double, number in _LITERAL.findall(reference):
                found.add(quoted or double or (float(number) if "." in number else int(number)))
    return tuple(sorted(found, key=repr))


class ToolCalls(Generator):
    """Envs whose actions are calls of the tools in ``info["tools"]``: JSON, and Python-style where
    the env reads that too (``API.f(...)``; ``prefix`` names the object)."""

    prefix: str | None = None

    def calls(self, r: random.Random, info: dict[str, Any], count: int) -> list[str]:
        specs = tool_specs(info.get("tools") or self.env.tools())
        out = []
        for _ in range(count):
            if self.prefix is not None and specs and r.random() < 0.6:
                name, names = r.choice(specs)
                out.append(python_call(r, self.prefix, name, names, self.words))
            else:
                out.append(json_tool_call(r, specs, self.words))
        return out


class CriteriaCalls(ToolCalls):
    """Home Search and Trip Booking: ``API.set_x(...)`` with their place and date values too."""

    prefix = "API."

    def __init__(self, env: Any, mode: str):
        super().__init__(env, mode)
        places = ("Boston", "Denver", "San Antonio", "", "é" * 300)
        self.words += tuple(f'Loc("{p}")' for p in places) + ("Date(2, 30, 2023)", "Date(13, 1, -5)", "Loc(1e308)")

    def calls(self, r: random.Random, info: dict[str, Any], count: int) -> list[str]:
        out = super().calls(r, info, count)
        # The words above are Python expressions: python_call quoted them; some calls use them bare.
        return [re.sub(r"'((?:Loc|Date)\([^']*\))'", r"\1", call) if r.random() < 0.5 else call for call in out]


class CurlCalls(Generator):
    """OpenWeather and The Cat API: curl commands with the real paths and parameter names (read from
    every task's reference calls), hostile values, methods, headers and bodies."""

    def __init__(self, env: Any, mode: str):
        super().__init__(env, mode)
        urls = [m for task in env.tasks for ref in task.references for m in re.findall(r"https?://[^\s'\"?]+", ref)]
        self.bases = sorted(set(urls)) or ["https://example.com/"]
        self.values: dict[str, set[str]] = {}
        uses: dict[str, int] = {}
        references = [reference for task in env.tasks for reference in task.references]
        for reference in references:
            pairs = re.findall(r"[?&](\w+)=([^&'\s]*)", reference)
            for name, value in pairs:
                self.values.setdefault(name, set()).add(value)
            for name in {name for name, _ in pairs}:
                uses[name] = uses.get(name, 0) + 1
        self.params = sorted(self.values)
        self.always = [name for name in self.params if uses[name] == len(references)]  # the key (appid)
        self.keys = sorted(
            {m for task in env.tasks for ref in task.references for m in re.findall(r'"(\w+)"\s*:', ref)}
        )

    def _query(self, r: random.Random) -> str:
        pairs = []
        names = r.sample(self.params, min(len(self.params), r.randint(0, 5)))
        for name in self.always if r.random() < 0.8 else []:
            if name not in names:
                names.insert(r.randrange(len(names) + 1), name)
        for name in names:
            hostile = (url_quote(text_of(hostile_value(r))), text_of(hostile_value(r)), "%ff%fe", "%", "%zz")
            value = r.choice(sorted(self.values[name])) if r.random() < 0.5 else r.choice(hostile)
            pairs.append(f"{name}={value}")
        return "&".join(pairs)

    def calls(self, r: random.Random, info: dict[str, Any], count: int) -> list[str]:
        method = "GET" if r.random() < 0.5 else r.choice(("GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", "get", "X"))
        url = r.choice(self.bases)
        if r.random() < 0.2:
            url += "/" + url_quote(text_of(hostile_value(r)), safe="/%")
        command = f"curl -X {method} '{url}?{self._query(r)}'"
        if r.random() < 0.1:
            command += f" -H 'x-api-key: {text_of(hostile_value(r))[:200]}'"
        if r.random() < 0.3:
            command += " -H 'Content-Type: application/json'"
        if method != "GET" and r.random() < 0.7:
            body = {key: hostile_value(r) for key in r.sample(self.keys, min(len(self.keys), r.randint(0, 3)))}
            data = json_text(body if r.random() < 0.7 else hostile_value(r)).replace("'", "")
            command += f" -d '{data}'"
        return [command]  # the env reads one curl command per action

    def episode(self, r: random.Random, info: dict[str, Any]) -> list[str]:
        return self.calls(r, info, 1)


class CodeCalls(Generator):
    """Google Sheets and Tabletop: programs calling the API names of the env's docs with hostile
    arguments; in interactive mode also as ``run_code`` tool calls and the finishing word."""

    def __init__(self, env: Any, mode: str):
        super().__init__(env, mode)
        docs = env.api_docs()
        names = re.findall(r"^(?:#\s*)?((?:worksheet\.|sheet\.)?\w+)\(", docs, re.MULTILINE)
        names += re.findall(r"(worksheet\.\w+)\(", docs)
        self.functions = sorted(set(names)) or ["print"]
        self.words += tuple(re.findall(r"'([a-z][a-z ]+)'", docs)) + ("A1", "A1:Z1000", "Sheet1", "blue block")

    def calls(self, r: random.Random, info: dict[str, Any], count: int) -> list[str]:
        return [
            python_call(r, "", r.choice(self.functions), ["a", "b", "c"][: r.randint(0, 3)], self.words)
            for _ in range(count)
        ]

    def episode(self, r: random.Random, info: dict[str, Any]) -> list[str]:
        program = "\n".join(self.calls(r, info, r.randint(1, 4)))
        if self.mode == "program":
            return [program]
        finish = next((n for n, _ in tool_specs(info.get("tools")) if n != "run_code"), "done")
        steps = [program, json_text({"name": "run_code", "arguments": {"code": program}})]
        if r.random() < 0.3:
            steps.append(json_tool_call(r, tool_specs(info.get("tools")), self.words))
        return steps + ([finish] if r.random() < 0.5 else [])


@functools.cache
def virtualhome_words() -> tuple[tuple[str, ...], tuple[tuple[str, int], ...]]:
    """Every object of every home (and every object class), and every action with its arity."""
    from toolbench.mock_services.virtualhome.homes import HOMES, build_home
    from toolbench.mock_services.virtualhome.objects import ACTIONS, PROPERTIES

    names = {name for number in range(len(HOMES)) for name in build_home(number).names} | set(PROPERTIES)
    return tuple(sorted(names)), tuple((action.name, action.arity) for action in ACTIONS)


class VirtualHomeCalls(Generator):
    def __init__(self, env: Any, mode: str):
        super().__init__(env, mode)
        self.objects, self.actions = virtualhome_words()

    def _argument(self, r: random.Random) -> str:
        if r.random() < 0.85:
            return r.choice(self.objects)
        return text_of(hostile_value(r)).replace("\n", " ")[:300]

    def calls(self, r: random.Random, info: dict[str, Any], count: int) -> list[str]:
        out = []
        for _ in range(count):
            name, arity = r.choice(self.actions)
            arity = r.choice((arity, arity, arity, arity + 1, max(0, arity - 1)))
            name = name if r.random() < 0.9 else r.choice((name.lower(), "Grab_", "Done", "__init__"))
            out.append(f"Agent.{name}({', '.join(self._argument(r) for _ in range(arity))})")
        return out


@functools.cache
def webshop_words(env_id: str) -> tuple[str, ...]:
    """Every product's id, option value and title, and every button of the shop's pages."""
    shop = gym.make(env_id).unwrapped.shop
    words = {"buy now", "next >", "< prev", "back to search", "description", "features", "reviews", "attributes"}
    for product in shop.products:
        words.update((product.asin, product.asin.upper(), product.title[:200]))
        words.update(value for values in product.options.values() for value in values)
    return tuple(sorted(words))


class WebShopCalls(ToolCalls):
    def __init__(self, env: Any, mode: str):
        super().__init__(env, mode)
        self.words += webshop_words(env.spec.id if env.spec else "toolbench/WebShop-v0")

    def calls(self, r: random.Random, info: dict[str, Any], count: int) -> list[str]:
        out = []
        for _ in range(count):
            kind = r.randrange(10)
            if kind < 6:
                out.append(f"click[{text_of(hostile_value(r, self.words))}]")
            elif kind < 9:
                out.append(f"search[{text_of(hostile_value(r, self.words))}]")
            else:
                out.extend(super().calls(r, info, 1))
        return out


@functools.cache
def appbench_apis(env_id: str) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """(app, api, argument names) of every API of every app, from the program mode's tools."""
    tools = gym.make(env_id, mode="program").unwrapped.tools()
    return tuple(
        (name.split("__")[0], name.split("__")[1], tuple(args)) for name, args in tool_specs(tools) if "__" in name
    )


class AppBenchCalls(Generator):
    def __init__(self, env: Any, mode: str):
        super().__init__(env, mode)
        self.apis = appbench_apis(env.spec.id if env.spec else "toolbench/AppBench-v0")
        self.apps = tuple(sorted({app for app, _, _ in self.apis}))

    def _call(self, r: random.Random, returned: list[str]) -> str:
        app, api, names = r.choice(self.apis)
        app = app if r.random() < 0.9 else r.choice(("", "Nope", app.lower(), "é"))
        args = []
        for name in names:
            if r.random() < 0.15:
                continue
            value = python_literal(hostile_value(r, self.words))
            if r.random() < 0.5:
                value = python_literal(text_of(hostile_value(r, self.words)))  # AppBench quotes every literal
            if returned and r.random() < 0.3:
                value = r.choice(returned)
            args.append(f"#{name}={value}")
        if r.random() < 0.2:
            args.append(f"#extra={python_literal(hostile_value(r))}")
        results = [f"r{len(returned) + i}" for i in range(r.randint(0, 3))]
        returned.extend(results)
        return f"{app}: [{', '.join(results)}{' = ' if results else ''}{api}({', '.join(args)})]"

    def calls(self, r: random.Random, info: dict[str, Any], count: int) -> list[str]:
        returned: list[str] = []
        return [self._call(r, returned) for _ in range(count)]

    def episode(self, r: random.Random, info: dict[str, Any]) -> list[str]:
        calls = self.calls(r, info, r.randint(1, 5))
        if self.mode == "program":
            return ["\n".join(calls)]
        apps = r.sample(self.apps, r.randint(0, 3)) + ([text_of(hostile_value(r))] if r.random() < 0.2 else [])
        selects = [
            f"select_apps({python_literal(apps)})",
            json_text({"name": "select_apps", "arguments": {"apps": apps}}),
        ]
        return [r.choice(selects), *calls, r.choice(("finish()", json_text({"name": "finish", "arguments": {}})))]


GENERATORS: dict[str, Callable[[Any, str], Generator]] = {
    "OpenWeather": CurlCalls,
    "CatAPI": CurlCalls,
    "HomeSearch": CriteriaCalls,
    "TripBooking": CriteriaCalls,
    "GoogleSheets": CodeCalls,
    "Tabletop": CodeCalls,
    "VirtualHome": VirtualHomeCalls,
    "WebShop": WebShopCalls,
    "RapidAPI": ToolCalls,
    "AppBench": AppBenchCalls,
}


def generator_for(env: Any, mode: str) -> Generator:
    """The grammar of ``env`` (an unwrapped toolbench env); an env this list does not name gets tool calls."""
    name = type(env).__name__.removesuffix("Env")
    for task, make in GENERATORS.items():
        if name.lower() == task.lower() or (env.spec and f"/{task}-" in env.spec.id):
            return make(env, mode)
    return ToolCalls(env, mode)
