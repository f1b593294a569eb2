"""AppBench plans: parsed from text, never run as code.

A plan is one call per line in AppBench's format::

    Restaurants: [restaurant_name, address = findrestaurants(#category='Korean', #location='San Jose')]
    Rents: [ride_fare = getride(#destination=address, #number_of_seats='2', #ride_type='Pool')]

A quoted value is a literal (AppBench quotes numbers and booleans too: ``#number_of_seats='2'``);
a bare name is a reference to a value an earlier call returns, resolved to the nearest earlier call
that returns it (AppBench's ``topo_relations``). The ``#`` before an argument name, the returned
names and the brackets may be left out. Quoted values may hold apostrophes (``'Mcdonald's'``, as in
AppBench's own data): a quote closes a value only where the argument list goes on or ends.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_CALLS = 50
MAX_LINE_CHARS = 2000

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_LINE = re.compile(
    rf"^\s*(?P<app>{_IDENT})\s*:\s*\[?\s*(?:(?P<returns>{_IDENT}(?:\s*,\s*{_IDENT})*)\s*=\s*)?"
    rf"(?P<api>{_IDENT})\s*\((?P<args>.*)\)\s*\]?\s*$"
)
_ARG_NAME = re.compile(rf"\s*#?\s*(?P<name>{_IDENT})\s*=\s*")
_QUOTE_END = re.compile(r"\s*(?:,\s*#?\s*[A-Za-z_][A-Za-z0-9_]*\s*=|$)")
_BARE = re.compile(r"[^,]*")
_IDENT_ONLY = re.compile(_IDENT)
_LITERAL = re.compile(r"-?\d+(?:\.\d+)?|True|False")
_COMMA = re.compile(r"\s*,\s*")
# Arguments whose values are each quoted (none holding its own quote character) or a bare name (most
# plans): read in one pass, with the same result as the general reading below.
_SIMPLE = rf"""\s*#?\s*({_IDENT})\s*=\s*(?:'([^']*)'|"([^"]*)"|({_IDENT}))"""
_SIMPLE_ARG = re.compile(_SIMPLE)
_ALL_SIMPLE = re.compile(rf"{_SIMPLE}(?:\s*,{_SIMPLE})*")


class PlanError(ValueError):
    """A plan that cannot be read; the message names the line and what is wrong."""


@dataclass(frozen=True)
class Ref:
    """A value taken from an earlier call's results: ``name`` as returned by call ``source``."""

    name: str
    source: int | None = None  # index of the providing call, set by ``resolve``


@dataclass(frozen=True)
class Call:
    app: str
    api: str
    returns: tuple[str, ...]
    args: dict[str, str | Ref] = field(default_factory=dict)  # literal text or a reference
    line: str = ""


def parse_args(text: str, number: int) -> dict[str, str | Ref]:
    """``#k='v', #k2=ref`` as a dict; quoted values are literals, bare names references."""
    args: dict[str, str | Ref] = {}
    position = 0
    text = text.strip()
    if _ALL_SIMPLE.fullmatch(text):
        found = _SIMPLE_ARG.findall(text)
        for name, single, double, bare in found:
            if bare:  # a name: a reference, unless it is a boolean literal
                args[name.lower()] = bare if bare in ("True", "False") else Ref(bare)
            else:
                args[name.lower()] = single or double  # the group a value did not use is ""
        if len(args) == len(found):
            return args
        args = {}  # a name given twice: the general reading says where
    while position < len(text):
        match = _ARG_NAME.match(text, position)
        if match is None:
            raise PlanError(f"line {number}: expected #name=value at {text[position : position + 30]!r}")
        name, position = match.group("name").lower(), match.end()
        if name in args:
            raise PlanError(f"line {number}: argument {name!r} is given twice")
        if position < len(text) and text[position] in "'\"":
            quote, start = text[position], position + 1
            end = start
            while True:
                end = text.find(quote, end)
                if end < 0:
                    raise PlanError(f"line {number}: the value of {name!r} has no closing quote")
                if _QUOTE_END.match(text, end + 1):
                    break
                end += 1
            args[name] = text[start:end]
            position = end + 1
        else:
            value = _BARE.match(text, position).group(0)  # type: ignore[union-attr]
            position += len(value)
            value = value.strip()
            if not value:
                raise PlanError(f"line {number}: argument {name!r} has no value")
            if _IDENT_ONLY.fullmatch(value) and value not in ("True", "False"):
                args[name] = Ref(value)
            elif _LITERAL.fullmatch(value):
                args[name] = value  # an unquoted number or boolean: a literal
            else:
                raise PlanError(
                    f"line {number}: unexpected {value[:30]!r} as the value of {name!r} "
                    "(quote a literal value, or name a value an earlier call returns)"
                )
        rest = _COMMA.match(text, position)
        if rest:
            position = rest.end()
        elif text[position:].strip():
            raise PlanError(f"line {number}: unexpected {text[position : position + 30]!r} after {name!r}")
    return args


def parse_plan(text: str) -> list[Call]:
    """The calls of a plan, in order; raises ``PlanError`` for a line that is not a call."""
    if "\x00" in text:
        raise PlanError("the plan is not text (it holds NUL bytes)")
    calls: list[Call] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("```"):
            continue
        if len(line) > MAX_LINE_CHARS:
            raise PlanError(f"line {number} is {len(line)} characters long; the limit is {MAX_LINE_CHARS}")
        match = _LINE.match(line)
        if match is None:
            raise PlanError(f"line {number}: not a call of the form App: [r1, r2 = api(#arg='value', #arg2=r1)]")
        returns = tuple(_IDENT_ONLY.findall(match.group("returns") or ""))
        calls.append(
            Call(match.group("app"), match.group("api").lower(), returns, parse_args(match.group("args"), number), line)
        )
        if len(calls) > MAX_CALLS:
            raise PlanError(f"the plan has more than {MAX_CALLS} calls")
    return calls


def resolve(calls: list[Call], said: Mapping[str, Any] | None = None, strict: bool = True) -> list[Call]:
    """The calls with each reference tied to the nearest earlier call that returns its name; raises
    ``PlanError`` for a reference no earlier call returns. For gold plans only: with ``said`` (what
    the user stated, by argument name), such a reference becomes the user's value; not ``strict``,
    one the user never stated either is left unresolved."""
    resolved: list[Call] = []
    for call in calls:  # the calls before this one, resolved (a reference only reads what they return)
        resolved.append(resolve_call(resolved, call, said, strict))
    return resolved


def resolve_call(earlier: list[Call], call: Call, said: Mapping[str, Any] | None = None, strict: bool = True) -> Call:
    """``call`` with each reference tied to the nearest of the ``earlier`` calls that returns its name
    (see ``resolve``): one more call of a plan whose earlier calls are resolved already. A call without
    references is returned as it is (calls are not changed once made)."""
    if not any(isinstance(value, Ref) for value in call.args.values()):
        return call
    index = len(earlier)
    args: dict[str, str | Ref] = {}
    for name, value in call.args.items():
        if isinstance(value, Ref):
            source = _provider(earlier, value.name)
            if source is not None:
                value = Ref(value.name, source)
            elif said is not None and (name in said or value.name in said):
                value = str(said.get(name, said.get(value.name)))
            elif strict:
                raise PlanError(
                    f"call {index + 1} ({call.api}): #{name}={value.name} names a value no earlier call returns"
                )
        args[name] = value
    return Call(call.app, call.api, call.returns, args, call.line)


def _provider(earlier: list[Call], name: str) -> int | None:
    """The index of the nearest of the ``earlier`` calls that returns ``name``, else None."""
    for index in range(len(earlier) - 1, -1, -1):
        if name in earlier[index].returns:
            return index
    return None


def format_call(call: Call) -> str:
    """A call in AppBench's line format (arguments sorted, as AppBench's data has them)."""
    args = ", ".join(
        f"#{name}={value.name}" if isinstance(value, Ref) else f"#{name}='{value}'"
        for name, value in sorted(call.args.items())
    )
    returns = ", ".join(call.returns)
    return f"{call.app}: [{returns + ' = ' if returns else ''}{call.api}({args})]"
