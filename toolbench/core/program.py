"""Parse API-call programs without running them.

ToolBench's Home Search and Trip Booking answers are short Python programs such as::

    location = Loc("Laredo")
    API.set_origin(location)
    API.set_departure_date(Date(8, 25, 2023))
    API.search()

The original harness ``exec``'d them. Here the text is parsed with ``ast`` and only this tiny
language is accepted: calls ``API.<documented function>(...)``; arguments that are literals
(strings, numbers, booleans, None, lists and tuples of those), calls of the task's value
constructors (``Loc``, ``Date``), or names assigned earlier; and assignments of such values to
names. Values are evaluated while parsing; nothing is executed. Anything else is refused with a
message that names the line and the construct.

Plain programs (one such statement per line, written simply) are read by ``core.program_lines``
without building a syntax tree, which is most of the cost of a short program; every other text,
and every error, goes through ``ast``. Both readers give the same calls, variables and errors.
"""

from __future__ import annotations

import ast
import re
import textwrap
import warnings
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolbench.core.program_lines import Recipe, Statement, read_lines
from toolbench.core.replies import code_in_reply

MAX_PROGRAM_CHARS = 20_000
MAX_STATEMENTS = 300
MAX_NODES = 20_000
MAX_SEQUENCE = 100
MAX_ITEMS = 1000
#: More syntax nodes than any Python source has per character (the densest, such as ``~~~~1``,
#: ``a<a<a`` or ``a;a;a``, have 2), so a text this short cannot pass MAX_NODES and is not counted.
NODES_PER_CHAR_BOUND = 3
#: Programs this short cannot pass MAX_NODES: their nodes are not counted, and the line reader takes them.
SHORT_PROGRAM_CHARS = MAX_NODES // NODES_PER_CHAR_BOUND


class ProgramError(ValueError):
    """The program is outside the accepted language, or a value cannot be built."""


class RuleError(ValueError):
    """An API call that breaks the API's rules (raised by the backends; the program is not executable)."""


@dataclass(frozen=True)
class Call:
    """One ``API.function(*args, **kwargs)`` with its arguments already evaluated."""

    line: int
    function: str
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"API.{self.function}({', '.join(parts)})"


def parse_program(
    text: str,
    functions: Collection[str],
    constructors: Mapping[str, Callable[..., Any]],
    variables: dict[str, Any] | None = None,
    receiver: str = "API",
) -> list[Call]:
    """The calls a program makes, in order. ``variables`` (updated in place) carries names across calls."""
    if len(text) > MAX_PROGRAM_CHARS:
        raise ProgramError(f"the program is {len(text)} characters long; the limit is {MAX_PROGRAM_CHARS}")
    code = code_in_reply(text)
    indented = _LINE_STARTS_BLANK.search(code) is not None
    if indented:  # else no margin to remove, no blank-only line to empty
        code = textwrap.dedent(code)
    if variables is None:
        variables = {}
    short = len(text) <= SHORT_PROGRAM_CHARS
    if short:
        statements = read_lines(code, functions, constructors, variables, receiver, MAX_SEQUENCE, indented)
        if statements is not None and len(statements) <= MAX_STATEMENTS:
            return _run_lines(statements, constructors, variables)
    tree = _parse(code)
    if len(tree.body) > MAX_STATEMENTS:
        raise ProgramError(f"the program has {len(tree.body)} statements; the limit is {MAX_STATEMENTS}")
    if not short:
        nodes = sum(1 for _ in ast.walk(tree))
        if nodes > MAX_NODES:
            raise ProgramError(f"the program is too large ({nodes} syntax nodes; the limit is {MAX_NODES})")
    reader = _Reader(functions, constructors, variables, receiver)
    calls = []
    for statement in tree.body:
        call = reader.statement(statement)
        if call is not None:
            calls.append(call)
    return calls


_LINE_STARTS_BLANK = re.compile(r"^[ \t]", re.MULTILINE)  # what textwrap.dedent works on
#: What the parser warns about ("invalid escape sequence", "invalid decimal literal" in ``1if``) needs
#: a backslash or a digit right before a letter (a dot between allowed): text without either is
#: parsed without the cost of catching warnings, a sixth of a short call's parse.
_MAY_WARN = re.compile(r"\\|\d\.?[^\W\d]")


def _parse(text: str) -> ast.Module:
    try:
        if _MAY_WARN.search(text) is None:
            return _parse_indented(text)
        with warnings.catch_warnings():  # e.g. "invalid escape sequence" in a string: not our business
            warnings.simplefilter("ignore")
            return _parse_indented(text)
    except SyntaxError as exc:
        raise ProgramError(f"line {exc.lineno}: syntax error: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ProgramError(f"the program cannot be parsed: {type(exc).__name__}") from None


def _parse_indented(text: str) -> ast.Module:
    try:
        return ast.parse(text, mode="exec")
    except IndentationError:
        # The language has no blocks, so stray indentation (common in model output) is harmless.
        return ast.parse("\n".join(line.strip() for line in text.splitlines()), mode="exec")


class _Reader:
    def __init__(
        self,
        functions: Collection[str],
        constructors: Mapping[str, Callable[..., Any]],
        variables: dict[str, Any],
        receiver: str,
    ):
        self.functions = functions
        self.constructors = constructors
        self.variables = variables
        self.receiver = receiver

    def fail(self, node: ast.AST, message: str) -> ProgramError:
        return ProgramError(f"line {getattr(node, 'lineno', '?')}: {message}")

    def is_api_call(self, node: ast.expr) -> bool:
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == self.receiver
        )

    def statement(self, node: ast.stmt) -> Call | None:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            call = node.value
            # print(API.search()) is a common way to write a call; it runs that one call
            if (
                isinstance(call.func, ast.Name)
                and call.func.id == "print"
                and len(call.args) == 1
                and not call.keywords
                and self.is_api_call(call.args[0])
            ):
                call = call.args[0]
            elif (
                isinstance(call.func, ast.Name)
                and call.func.id == "print"
                and all(isinstance(arg, (ast.Name, ast.Constant)) for arg in call.args)
            ):
                return None  # print(results): what a call returns is in the observation already
            return self.api_call(call)
        if isinstance(node, ast.Assign):
            if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
                raise self.fail(node, "only simple assignments (name = value) are allowed")
            name = node.targets[0].id
            if name.startswith("__") or name == self.receiver or name in self.constructors:
                raise self.fail(node, f"the name {name!r} cannot be assigned")
            if self.is_api_call(node.value):  # results = API.search(): the call runs; the name holds nothing
                self.variables[name] = None
                return self.api_call(node.value)
            self.variables[name] = self.value(node.value)
            return None
        if isinstance(node, ast.Pass):
            return None
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return None  # a docstring-like comment
        if isinstance(node, ast.Expr):
            raise self.fail(
                node,
                f"`{_snippet(node.value)}` is not a call; a statement must call "
                f"{self.receiver}.<function>(...) or assign a value to a name",
            )
        kind = type(node).__name__.lower()
        raise self.fail(
            node,
            f"`{kind}` statements are not allowed; a program may only call the documented "
            f"{self.receiver} functions and assign values to names",
        )

    def api_call(self, node: ast.Call) -> Call:
        func = node.func
        if not (
            isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == self.receiver
        ):
            if isinstance(func, ast.Name) and func.id in self.constructors:
                raise self.fail(node, f"{func.id}(...) builds a value; pass it to an {self.receiver} function")
            raise self.fail(node, f"only {self.receiver}.<function>(...) calls are allowed, not `{_snippet(func)}`")
        if func.attr not in self.functions:
            raise self.fail(node, f"unknown function {self.receiver}.{func.attr}; see the API documentation")
        args, kwargs = self.arguments(node)
        return Call(node.lineno, func.attr, args, kwargs)

    def arguments(self, node: ast.Call) -> tuple[tuple[Any, ...], dict[str, Any]]:
        args = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise self.fail(node, "*args are not allowed")
            args.append(self.value(arg))
        kwargs = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise self.fail(node, "**kwargs are not allowed")
            kwargs[keyword.arg] = self.value(keyword.value)
        return tuple(args), kwargs

    def value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (str, int, float, bool))):
            return node.value
        if (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, (ast.USub, ast.UAdd))
            and isinstance(node.operand, ast.Constant)
            and isinstance(node.operand.value, (int, float))
            and not isinstance(node.operand.value, bool)
        ):
            return -node.operand.value if isinstance(node.op, ast.USub) else node.operand.value
        if isinstance(node, (ast.List, ast.Tuple)):
            if len(node.elts) > MAX_SEQUENCE:
                raise self.fail(node, f"lists may hold at most {MAX_SEQUENCE} items")
            items = _counted([self.value(item) for item in node.elts], node.lineno)
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.Name):
            if node.id not in self.variables:
                raise self.fail(node, f"name {node.id!r} is not defined")
            return self.variables[node.id]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.constructors:
            args, kwargs = self.arguments(node)
            return _constructed(self.constructors, node.func.id, args, kwargs, node.lineno)
        if isinstance(node, ast.Call):
            allowed = (
                f"only {', '.join(self.constructors)} calls build values"
                if self.constructors
                else "no call builds a value"
            )
            raise self.fail(node, f"{allowed}; `{_snippet(node.func)}(...)` is not allowed")
        raise self.fail(
            node,
            f"`{_snippet(node)}` is not a literal value, a defined name or a "
            f"{'/'.join(self.constructors) or 'value'} constructor",
        )


def _run_lines(
    statements: list[Statement], constructors: Mapping[str, Callable[..., Any]], variables: dict[str, Any]
) -> list[Call]:
    """The calls of statements read by ``read_lines``, their values built in the order, and with
    the errors, of ``_Reader``."""
    calls = []
    for line, target, function, args, kwargs in statements:
        if function is None:  # name = value
            variables[target] = _built(args[0], constructors, variables)  # type: ignore[index]
            continue
        if target is not None:  # name = API.f(...): the call runs, the name holds nothing
            variables[target] = None
        values = tuple([arg[1] if arg[0] == "const" else _built(arg, constructors, variables) for arg in args])
        named = {key: _built(value, constructors, variables) for key, value in kwargs.items()} if kwargs else {}
        calls.append(Call(line, function, values, named))
    return calls


def _built(recipe: Recipe, constructors: Mapping[str, Callable[..., Any]], variables: dict[str, Any]) -> Any:
    kind = recipe[0]
    if kind == "const":
        return recipe[1]
    if kind == "name":
        return variables[recipe[1]]
    if kind == "list":
        _, line, items = recipe
        return _counted([_built(item, constructors, variables) for item in items], line)
    _, line, name, args, kwargs = recipe  # "new": a constructor's call
    arguments = [_built(arg, constructors, variables) for arg in args]
    keywords = {key: _built(value, constructors, variables) for key, value in kwargs.items()}
    return _constructed(constructors, name, arguments, keywords, line)


def _counted(items: list[Any], line: int) -> list[Any]:
    """``items``, unless they hold more than MAX_ITEMS (names can nest shared lists: count what they hold)."""
    if _weight(items) > MAX_ITEMS:
        raise ProgramError(f"line {line}: a value may hold at most {MAX_ITEMS} items in all")
    return items


def _constructed(
    constructors: Mapping[str, Callable[..., Any]], name: str, args: Any, kwargs: dict[str, Any], line: int
) -> Any:
    """A value constructor's result; what it refuses is an error naming the line."""
    try:
        return constructors[name](*args, **kwargs)
    except (TypeError, ValueError) as exc:
        raise ProgramError(f"line {line}: {name}(...): {exc}") from None


def _weight(value: Any, limit: int = MAX_ITEMS) -> int:
    """How many items ``value`` holds, nested lists included; stops counting past ``limit``."""
    count, stack = 0, [value]
    while stack and count <= limit:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            count += len(item)
            stack.extend(item)
    return count


def _snippet(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except RecursionError:  # absurdly deep expressions
        return type(node).__name__
    return text if len(text) <= 60 else text[:57] + "..."
