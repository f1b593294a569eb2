"""The common API programs, read without building a Python syntax tree.

Most programs are plain lines: ``API.set_num_beds(2)``, ``location = Loc("Laredo")``,
``API.select_home_type(["Condo", "Townhouse"])``. For those, ``ast.parse`` and walking its tree are
most of an episode's cost (a tree of Python objects for every line), so ``read_lines`` reads them
with one regular expression for the tokens and a small grammar. It accepts only text whose meaning
is beyond doubt: one statement per line, ASCII names that are not keywords, decimal numbers,
strings without backslashes, lists, calls of the API and of the value constructors, and names
already assigned. Anything else (comments, escapes, tuples, indentation, and every error the
reader of ``core.program`` reports) returns None, and ``parse_program`` reads the text with
``ast`` as before, which gives each error its message. The two readers give the same calls,
values, variables and errors (``tests/core/test_program_lines.py`` compares them on generated
and mutated programs).

``read_lines`` only reads: it checks the whole text and gives each value's recipe, so a text that
falls back has changed nothing. ``core.program`` then builds the values in order, as its ``ast``
reader does (constructor errors and the total size of nested values can only be known then).
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Collection
from typing import Any

# A token cannot run into the next one (a name or number must end before a letter, digit or, for a
# number, a dot), so a line splits into tokens one way only. Each token's blanks before it are part
# of its match, so splitting a line leaves nothing between tokens unless a character is not allowed.
# A match starts only where blanks start (the lookbehind): else a run of blanks before no token
# would be tried again from each of its blanks, in time quadratic in its length.
_TOKEN = re.compile(
    r"""(?<![ \t])[ \t]*(
    [()\[\],.=-]
    |[A-Za-z_][A-Za-z0-9_]*(?![A-Za-z0-9_])
    |(?:0|[1-9][0-9]{0,30})(?:\.[0-9]{1,30})?(?![A-Za-z0-9_.])
    |"[^"\\\n\x00\ud800-\udfff]*"|'[^'\\\n\x00\ud800-\udfff]*')""",
    re.VERBOSE,
)
_INDENTED = re.compile(r"^[ \t]+[^ \t\n]", re.MULTILINE)  # the ast reader's rules apply to indentation
_DIGITS = frozenset("0123456789")
_QUOTES = frozenset("'\"")
_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_CONSTANTS = {"True": True, "False": False, "None": None}
_MAX_DEPTH = 50  # brackets open at once
#: Names Python reserves: as a name, an attribute or a keyword argument they are syntax errors.
_RESERVED = frozenset(keyword.kwlist)


class _Unsure(Exception):
    """The text is outside what this reader accepts: the ``ast`` reader decides."""


# A value's recipe: ("const", value) | ("name", name) | ("list", line, [recipes])
# | ("new", line, constructor name, [recipes], {keyword: recipe}).
Recipe = tuple[Any, ...]
Statement = tuple[int, "str | None", "str | None", list[Recipe], dict[str, Recipe]]


def read_lines(
    code: str,
    functions: Collection[str],
    constructors: Collection[str],
    defined: Collection[str],
    receiver: str,
    max_sequence: int,
    maybe_indented: bool = True,
) -> list[Statement] | None:
    """The program's statements as ``(line, target, function, args, kwargs)`` (``function`` None
    for ``target = value``; values as recipes), or None when the text needs the ``ast`` reader.
    ``defined`` are the names assigned before; ``maybe_indented=False`` says no line starts with
    a blank (the caller has looked already)."""
    try:
        context = _Context(functions, constructors, set(defined), receiver, max_sequence)
        return _statements(code, context, maybe_indented)
    except _Unsure:
        return None


class _Context:
    """What the first pass checks names against (``defined`` grows with each assignment read)."""

    def __init__(
        self,
        functions: Collection[str],
        constructors: Collection[str],
        defined: set[str],
        receiver: str,
        max_sequence: int,
    ) -> None:
        self.functions = functions
        self.constructors = constructors
        self.defined = defined
        self.receiver = receiver
        self.max_sequence = max_sequence


def _statements(code: str, context: _Context, maybe_indented: bool) -> list[Statement]:
    """First pass: tokens, grammar and every check that needs no value, line by line. Tokens are
    read as a list of strings by index (the cost of a line is a few regex calls and comparisons)."""
    if maybe_indented and _INDENTED.search(code):
        raise _Unsure  # an indented line
    if code.count("(") + code.count("[") > _MAX_DEPTH:
        _check_depth(code)
    statements: list[Statement] = []
    receiver = context.receiver
    for number, text in enumerate(code.split("\n"), start=1):
        pieces = _TOKEN.split(text)  # text between tokens, token, text between, ..., the rest
        if any(pieces[0:-1:2]) or pieces[-1].strip(" \t"):
            raise _Unsure  # a character outside the accepted text
        tokens = pieces[1::2]
        if not tokens:
            continue
        tokens += ("", "", "")  # the end, so that looking a few tokens ahead never runs off the list
        target = None
        at = 0
        if tokens[1] == "=":
            target = tokens[0]
            if (
                target[:1] not in _NAME_START
                or target in _RESERVED
                or target.startswith("__")
                or target == receiver
                or target in context.constructors
            ):
                raise _Unsure  # a name that cannot be assigned: the ast reader says so
            at = 2
            if tokens[2] != receiver:
                value, at = _value(tokens, 2, context, number)
                if tokens[at] != "":
                    raise _Unsure
                statements.append((number, target, None, [value], {}))
                context.defined.add(target)
                continue
        function = tokens[at + 2]
        if tokens[at] != receiver or tokens[at + 1] != "." or function not in context.functions:
            raise _Unsure
        if function[:1] not in _NAME_START or function in _RESERVED:
            raise _Unsure
        args, kwargs, at = _arguments(tokens, at + 3, context, number)
        if tokens[at] != "":
            raise _Unsure
        statements.append((number, target, function, args, kwargs))
        if target is not None:
            context.defined.add(target)
    return statements


def _arguments(tokens: list[str], at: int, context: _Context, line: int) -> tuple[list[Recipe], dict[str, Recipe], int]:
    """The arguments in the brackets opening at ``at``, and the index after the closing one."""
    if tokens[at] != "(":
        raise _Unsure
    at += 1
    args: list[Recipe] = []
    kwargs: dict[str, Recipe] = {}
    if tokens[at] == ")":
        return args, kwargs, at + 1
    while True:
        if tokens[at + 1] == "=" and tokens[at][:1] in _NAME_START:
            name = tokens[at]
            if name in _RESERVED or name in kwargs or name.startswith("__"):
                raise _Unsure  # a keyword, or repeated (a syntax error); __debug__ too
            kwargs[name], at = _value(tokens, at + 2, context, line)
        elif kwargs:
            raise _Unsure  # a positional argument after a keyword one is a syntax error
        else:
            value, at = _value(tokens, at, context, line)
            args.append(value)
        separator = tokens[at]
        if separator == ")":
            return args, kwargs, at + 1
        if separator != "," or tokens[at + 1] in (")", ""):
            raise _Unsure  # a trailing comma is left to the ast reader
        at += 1


def _value(tokens: list[str], at: int, context: _Context, line: int) -> tuple[Recipe, int]:
    """The value starting at ``at``, and the index after it."""
    text = tokens[at]
    first = text[:1]  # a token's kind shows in its first character
    if first in _QUOTES:
        return ("const", text[1:-1]), at + 1
    if first in _DIGITS:
        return ("const", _number(text)), at + 1
    if first in _NAME_START:
        if text in _CONSTANTS:
            return ("const", _CONSTANTS[text]), at + 1
        if text in _RESERVED:
            raise _Unsure
        if tokens[at + 1] == "(":
            if text not in context.constructors:
                raise _Unsure
            args, kwargs, after = _arguments(tokens, at + 1, context, line)
            return ("new", line, text, args, kwargs), after
        if text not in context.defined:
            raise _Unsure
        return ("name", text), at + 1
    if text == "-" and tokens[at + 1][:1] in _DIGITS:
        return ("const", -_number(tokens[at + 1])), at + 2
    if text == "[":
        items: list[Recipe] = []
        at += 1
        if tokens[at] == "]":
            return ("list", line, items), at + 1
        while True:
            item, at = _value(tokens, at, context, line)
            items.append(item)
            separator = tokens[at]
            if separator == "]":
                break
            if separator != "," or tokens[at + 1] in ("]", ""):
                raise _Unsure
            at += 1
        if len(items) > context.max_sequence:
            raise _Unsure
        return ("list", line, items), at + 1
    raise _Unsure


def _check_depth(code: str) -> None:
    depth = 0
    for token in _TOKEN.findall(code):
        if token in ("(", "["):
            depth += 1
            if depth > _MAX_DEPTH:
                raise _Unsure  # Python has its own limit on nesting, and the grammar recurses
        elif token in (")", "]"):
            depth -= 1


def _number(text: str) -> int | float:
    return float(text) if "." in text else int(text)
