"""Run untrusted agent Python with no imports, no dunders, no files, no network, and budgets.

Some tasks' actions are real code (gspread/pandas programs for Google Sheets, Code-as-Policies
programs for Tabletop). Such code runs here, behind layers that each stop a class of escape:

1. Compile time: RestrictedPython (a maintained, widely used restricted-compilation library)
   rejects names and attributes that start with ``_`` (so no ``().__class__.__subclasses__()``),
   and our own pass rejects ``import`` and ``class`` with a clear message. Two common, harmless
   forms RestrictedPython refuses are rewritten first: ``df.loc[m, "c"] += 2`` (augmented
   assignment to an item or attribute) and annotated assignments.
2. Names: the code sees only safe builtins (no ``open``, ``eval``, ``exec``, ``compile``,
   ``__import__``, ``globals``...) and the names the task provides. numpy, pandas and gspread are
   untrusted surface: an attribute of anything but a plain value is read only when its owner and
   name are on the allowlist (``core.surface``, generated and reviewed), so members that free,
   reallocate or map memory under a live view, raw buffers, code runners, modules and frames are
   out of reach, and a library upgrade's new members stay out until they are reviewed. Items and
   iterated values pass the same checks; modules and classes cannot be rewritten.
3. Process: ``run_in_worker`` (what the envs use) runs the code in a child of the clean worker
   (``core.worker``, ``core.fork_server``), a fork server that never held a task, so the code's
   memory holds no answer; its names are proxies whose calls the env serves. ``run_code`` runs it
   in a fork of the caller, for tests of the guards with names built in-process. Either way the
   child's environment is cleared, its address space capped, a wall-clock budget enforced by the
   caller, and the kernel layers of ``core.kernel`` applied before the code's first line
   (read-only libraries, no network, no IPC or process of anyone else in reach, no new processes,
   no tracing, an unprivileged uid), after which the child drops its handles on the C library; an
   audit hook refuses file opens outside the libraries, writes, sockets and subprocesses as a
   further check. The budget is wall-clock time; a run that keeps a core busy is moved to the
   lowest priority (``worker.RunDeadline``), so a session whose code spins costs others little.

The child sends back what the task's collect function returns, the printed output and the error,
as JSON: the caller never unpickles anything the child wrote, checks the reply's size and counts
its items before parsing it, and treats anything malformed as an error.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import functools
import importlib
import inspect
import io
import json
import marshal
import math
import operator
import os
import re
import selectors
import signal
import socket
import stat
import sys
import sysconfig
import threading
import time
import traceback
import types
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import MappingProxyType, ModuleType
from typing import Any

from RestrictedPython import compile_restricted_exec, safe_builtins
from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence, safer_getattr
from threadpoolctl import ThreadpoolController

from toolbench.core import kernel, surface
from toolbench.core.worker import (
    SINGLE_THREADED,
    Channel,
    ChannelClosed,
    ChannelTimeout,
    CpuAccount,
    MessageRefused,
    RunDeadline,
    WorkerServer,
    WorkerUnavailable,
    too_many_items,
)

MAX_CODE_CHARS = 65_536
LAST_VALUE = "toolbench_last_value"  # where the last expression of a cell is stored (no leading _)
AGENT_FILE = "<agent code>"

# Builtins beyond RestrictedPython's safe set that ordinary data code needs; none of them reach
# files, the network, the interpreter's internals or other modules.
_EXTRA_BUILTINS = (
    "all",
    "any",
    "dict",
    "enumerate",
    "filter",
    "format",
    "frozenset",
    "iter",
    "list",
    "map",
    "max",
    "min",
    "next",
    "reversed",
    "set",
    "sorted",
    "sum",
    "tuple",
    "zip",
)


class CodeError(ValueError):
    """The code is refused before it runs (syntax, imports, dunders...)."""


@dataclass(frozen=True)
class Limits:
    seconds: float = 10.0
    memory_mb: int = 1024  # address space the code may add to what the process already maps
    output_chars: int = 20_000


def budgets(defaults: Limits, time_limit: float | None, memory_limit: int | None) -> Limits:
    """An env's per-step budgets: its defaults, or the seconds and megabytes the user gave."""
    if time_limit is not None and not 0 < time_limit <= 3600:
        raise ValueError(f"time_limit must be in (0, 3600] seconds, not {time_limit!r}")
    if memory_limit is not None and not 64 <= memory_limit <= 65536:
        raise ValueError(f"memory_limit must be from 64 to 65536 MB, not {memory_limit!r}")
    return Limits(
        seconds=defaults.seconds if time_limit is None else float(time_limit),
        memory_mb=defaults.memory_mb if memory_limit is None else int(memory_limit),
        output_chars=defaults.output_chars,
    )


@dataclass
class SandboxResult:
    ok: bool
    output: str
    error: str | None
    payload: Any = None
    timed_out: bool = False


# ----------------------------------------------------------------------------- compile time
class _Rewrite(ast.NodeTransformer):
    """Turn forms RestrictedPython refuses but that are harmless into ones it accepts."""

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        if isinstance(node.target, (ast.Subscript, ast.Attribute)):
            load = _as_load(node.target)
            value = ast.BinOp(left=load, op=node.op, right=node.value)
            return ast.copy_location(ast.Assign(targets=[node.target], value=value), node)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is None:
            return ast.copy_location(ast.Pass(), node)
        return ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)


def _as_load(node: ast.expr) -> ast.expr:
    clone = ast.parse(ast.unparse(node), mode="eval").body
    return ast.copy_location(clone, node)


# Setting these on an array in place re-reads its memory under another layout: an object view
# with new strides reads integers as object pointers.
LAYOUT_ATTRIBUTES = frozenset({"strides", "dtype", "data", "shape", "base", "flags"})


#: Bounds on the syntax tree: checking and compiling it runs in the env's process before the run's
#: deadline. RestrictedPython's pass over an attribute or item lookup walks the lookup's whole
#: subtree, so its cost is the sum of those subtrees' sizes (``MAX_LOOKUP_COST``, about 0.1 s).
MAX_NODES = 20_000
MAX_DEPTH = 60
MAX_LOOKUP_COST = 100_000


def _check_size(tree: ast.AST) -> None:
    order, stack = [], [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        order.append(node)
        if len(order) > MAX_NODES:
            raise CodeError(f"the code has more than {MAX_NODES:,} syntax nodes; write it shorter")
        if depth > MAX_DEPTH:
            line = getattr(node, "lineno", "?")
            raise CodeError(f"line {line}: the code is nested more than {MAX_DEPTH} levels deep")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    sizes: dict[int, int] = {}
    cost = 0
    for node in reversed(order):  # each node after its children
        size = sizes[id(node)] = 1 + sum(sizes[id(child)] for child in ast.iter_child_nodes(node))
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            cost += size
    if cost > MAX_LOOKUP_COST:
        raise CodeError("the code's attribute and item lookups are nested too deeply; use intermediate variables")


def compile_code(code: str, echo_last_expression: bool = False) -> Any:
    """Check and compile agent code; raises ``CodeError`` saying what is not allowed."""
    if len(code) > MAX_CODE_CHARS:
        raise CodeError(f"the code is {len(code)} characters long; the limit is {MAX_CODE_CHARS}")
    try:
        with _quiet_compiler():
            tree = ast.parse(code, filename=AGENT_FILE, mode="exec")
    except SyntaxError as exc:
        raise CodeError(f"line {exc.lineno}: syntax error: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise CodeError(f"the code cannot be parsed: {type(exc).__name__}") from None
    _check_size(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            raise CodeError(f"line {node.lineno}: import is not allowed; use the names already provided")
        if isinstance(node, ast.ClassDef):
            raise CodeError(f"line {node.lineno}: class definitions are not allowed")
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, (ast.Store, ast.Del))
            and node.attr in LAYOUT_ATTRIBUTES
        ):
            raise CodeError(f"line {node.lineno}: assigning .{node.attr} is not allowed; build a new array instead")
    if echo_last_expression and tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        tree.body[-1] = ast.copy_location(
            ast.Assign(targets=[ast.Name(id=LAST_VALUE, ctx=ast.Store())], value=last.value), last
        )
    try:
        tree = ast.fix_missing_locations(_Rewrite().visit(tree))
        with _quiet_compiler():
            result = compile_restricted_exec(tree, filename=AGENT_FILE)
    except RecursionError:
        raise CodeError("the code is nested too deeply to compile") from None
    except SyntaxError as exc:  # parsed, but not compilable: `return` or `break` out of place, `global` after use...
        raise CodeError(f"line {exc.lineno}: syntax error: {exc.msg}") from None
    except (ValueError, MemoryError) as exc:
        raise CodeError(f"the code cannot be compiled: {type(exc).__name__}") from None
    if result.errors:
        raise CodeError("; ".join(_readable(error) for error in result.errors))
    return result.code


@contextlib.contextmanager
def _quiet_compiler() -> Iterator[None]:
    """The compiler's warnings about agent code (``1.0(x)``: "perhaps you missed a comma?", an invalid
    escape) would go to the env process's stderr, a training run's log; its errors are what counts."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def _readable(error: str) -> str:
    return error.replace("Line ", "line ", 1)


# ----------------------------------------------------------------------------- run time names
class _Printer:
    """RestrictedPython routes ``print`` through ``_print_``; this one writes to a bounded buffer."""

    def __init__(self, limit: int):
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit

    def __call__(self, _getattr: Any = None) -> _Printer:
        return self

    def _call_print(
        self, *objects: Any, sep: str = " ", end: str = "\n", file: Any = None, flush: bool = False
    ) -> None:
        text = str(sep).join(str(o) for o in objects) + str(end)
        if self.size < self.limit:
            self.parts.append(text[: self.limit - self.size])
        self.size += len(text)

    def text(self) -> str:
        joined = "".join(self.parts)
        return joined + (f"\n...[output truncated at {self.limit} characters]" if self.size > self.limit else "")


def _inplace(op: str, target: Any, value: Any) -> Any:
    return _INPLACE[op](target, value)


_INPLACE = {
    "+=": operator.iadd,
    "-=": operator.isub,
    "*=": operator.imul,
    "/=": operator.itruediv,
    "//=": operator.ifloordiv,
    "%=": operator.imod,
    "**=": operator.ipow,
    "<<=": operator.ilshift,
    ">>=": operator.irshift,
    "&=": operator.iand,
    "^=": operator.ixor,
    "|=": operator.ior,
    "@=": operator.imatmul,
}


# Entry points that run code or unpickle data, whatever object they hang on, and frame walks.
DENIED_NAMES = frozenset(
    {
        "eval",
        "query",
        "read_pickle",
        "to_pickle",
        "load",
        "loads",
        "memmap",
        "fromfile",
        "tofile",
        "read_clipboard",
        "to_clipboard",
        "f2py",
        "ctypeslib",
        "mro",  # np.matrix.mro() would hand out the real np.ndarray, past its stand-in
        "frombuffer",  # np.frombuffer(object array) reads object pointers as integers
        "tobytes",  # an object array's bytes are its object pointers
        "tostring",
        "ctypes",  # ndarray.ctypes, BitGenerator.ctypes: raw addresses and callable C pointers
        "cffi",
        "capsule",
        "exec",
        "compile",
        "gi_frame",
        "gi_code",
        "cr_frame",
        "ag_frame",
        "f_globals",
        "f_locals",
        "f_back",
        "f_builtins",
        "tb_frame",
        "tb_next",
        "func_globals",
    }
)


def _denied_objects() -> tuple[Any, ...]:
    import builtins

    names = (
        "eval",
        "exec",
        "compile",
        "open",
        "__import__",
        "getattr",
        "setattr",
        "delattr",
        "globals",
        "locals",
        "vars",
        "input",
        "breakpoint",
        "memoryview",
    )
    return tuple(getattr(builtins, name) for name in names if hasattr(builtins, name))


_DENIED_OBJECTS = _denied_objects()


class _GuardedClass(type):
    """Stands in for a library class whose constructor takes arguments agent code may not pass
    (``np.ndarray``'s buffer and strides, over which object fields would alias other memory;
    ``pd.MultiIndex``'s ``verify_integrity=False``): ``isinstance``, ``issubclass`` and the class's
    attributes work as on the class itself, and a call checks its arguments first (``core.surface``'s
    argument rules)."""

    _wrapped: type
    _rules: dict[str, str]

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls._wrapped)

    def __subclasscheck__(cls, subclass: Any) -> bool:
        subclass = subclass._wrapped if isinstance(subclass, _GuardedClass) else subclass
        return isinstance(subclass, type) and issubclass(subclass, cls._wrapped)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return _checked_call(cls._wrapped, cls._rules, args, kwargs)


_STAND_INS: dict[type, type] = {}


def _stand_in(value: type, rules: dict[str, str]) -> type:
    if value not in _STAND_INS:
        namespace = {"_wrapped": value, "_rules": rules, "__module__": __name__, "__toolbench_checked__": True}
        _STAND_INS[value] = _GuardedClass(value.__name__, (), namespace)
    return _STAND_INS[value]


def _refuse_unknown_object(obj: Any) -> Any:
    """pandas' JSON writer's handler for objects it cannot write: refused, rather than read each of
    their public attributes in C, past the attribute guard."""
    raise TypeError(f"{type(obj).__name__} objects cannot be written as JSON here")


_FIELD_LOOKUP = re.compile(r"\{[^{}:!]*[.\[]")  # "{0.__class__}", "{0[x]}": a template that reads attributes
_RULE_CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "none": (lambda value: value is None, "only None"),
    "none_or_zero": (lambda value: value is None or (type(value) is int and value == 0), "only None or 0"),
    "not_false": (lambda value: value is not False, "this check cannot be switched off here"),
    "falsy": (lambda value: not value, "only a false value"),
    "no_field_lookup": (
        lambda value: not isinstance(value, str) or not _FIELD_LOOKUP.search(value),
        "a format may not read attributes or items",
    ),
    "public_name": (
        lambda value: value is None or (isinstance(value, str) and value.isidentifier() and not value.startswith("_")),
        "a plain name",
    ),
    "bounded_counts": (lambda value: _integers_within(value, total=True), f"counts adding up to at most {2**32:,}"),
    "bounded_indices": (lambda value: _integers_within(value, total=False), f"values from 0 to {2**32:,}"),
}
#: What an integer that sizes or indexes an allocation may be: numpy sizes some outputs by a sum
#: or a maximum plus one, which wraps past 2**63 (``repeat``'s copy then runs past its output,
#: ``bincount`` adds at any offset).
COUNT_BOUND = 2**32


def _integers_within(value: Any, total: bool) -> bool:
    """Whether ``value`` is an integer, or integers in an array-like, from 0 to ``COUNT_BOUND``, and
    with ``total`` their sum too (bounded by the largest times how many). Anything else is refused,
    not left to numpy: it converts a list element by element, so a list that reads as floats or
    text here (``["9223372036854775807"]``, a numpy uint64 beside Python ints) reaches its C code as
    huge integers."""
    numpy = sys.modules.get("numpy")
    if value is None or numpy is None:
        return True
    try:
        array = numpy.asarray(value)
        if array.size == 0:
            return True
        if array.dtype.kind == "O":  # Python integers past int64, or anything else: read one by one
            numbers = [operator.index(item) for item in array.ravel().tolist()]
            low, high, count = min(numbers), max(numbers), len(numbers)
        elif array.dtype.kind in "iub":
            low, high, count = int(array.min()), int(array.max()), int(array.size)
        else:
            return False
    except Exception:  # noqa: BLE001 - not integers: refused
        return False
    return low >= 0 and high <= COUNT_BOUND and (not total or high * count <= COUNT_BOUND)


def _checked_call(function: Callable[..., Any], rules: dict[str, str], args: tuple, kwargs: dict[str, Any]) -> Any:
    """``function(*args, **kwargs)`` once the arguments its rules name pass them."""
    try:
        bound = inspect.signature(function).bind_partial(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{getattr(function, '__name__', 'this call')}(): {exc}") from None
    given = bound.arguments
    for parameter, rule in rules.items():
        if rule == "copied":  # what the callee keeps by reference, the code must not change after its checks
            if parameter in given:
                given[parameter] = _copied(given[parameter])
                args, kwargs = bound.args, bound.kwargs
            continue
        check, allowed = _RULE_CHECKS[rule]
        if parameter in given and not check(given[parameter]):
            shown = _shown(given[parameter], repr, 80)
            raise ValueError(f"{parameter}={shown} is not available here ({allowed})")
    return function(*args, **kwargs)


def _copied(value: Any, depth: int = 0) -> Any:
    """Arrays and array-likes (a Series, an Index; in lists and tuples too) as numpy arrays of their
    own; anything else as it is (pandas builds a new array from a plain list itself)."""
    numpy = sys.modules.get("numpy")
    if numpy is None or surface.is_plain(value) and not isinstance(value, (list, tuple)):
        return value
    if isinstance(value, numpy.ndarray) or hasattr(type(value), "__array__"):
        return numpy.array(value, copy=True)
    if depth < 3 and type(value) in (list, tuple):
        return type(value)(_copied(item, depth + 1) for item in value)
    return value


def _guarded_callable(function: Callable[..., Any], rules: dict[str, str]) -> Callable[..., Any]:
    """A function, or a bound method, whose calls check their arguments first (not functools.wraps:
    nothing of the original is reachable from it)."""

    def checked(*args: Any, **kwargs: Any) -> Any:
        return _checked_call(function, rules, args, kwargs)

    checked.__name__ = checked.__qualname__ = str(getattr(function, "__name__", "function"))
    checked.__toolbench_checked__ = True  # type: ignore[attr-defined]
    return checked


def _with_argument_checks(value: Any) -> Any:
    """``value``, or (where the allowlist names rules for its arguments) its guarded stand-in."""
    rules = surface.argument_rules().get(surface.callable_name(value))
    if not rules:
        return value
    return _stand_in(value, rules) if isinstance(value, type) else _guarded_callable(value, rules)


# Objects whose attributes lead to a code runner: pandas' Styler holds a plain jinja2 Environment,
# whose templates reach dunders and the real builtins.
DENIED_TYPE_MODULES = ("jinja2", "markupsafe", "pandas.io.formats.style")


def _of_denied_type(obj: Any) -> bool:
    module = getattr(type(obj), "__module__", None) or ""
    return module.startswith(DENIED_TYPE_MODULES)


def _checked(value: Any, what: str) -> Any:
    """Refuse values that would take the code out of the sandbox: modules and code-running builtins;
    numpy's array types come back as stand-ins that refuse raw buffers."""
    if isinstance(value, ModuleType) and value.__name__ not in surface.ALLOWED_MODULES | TRUSTED_MODULES_FOR_TESTS:
        raise AttributeError(f"{what}: modules are not available here")
    if any(value is denied for denied in _DENIED_OBJECTS) or _of_denied_type(value):
        raise AttributeError(f"{what}: not available here")
    if isinstance(value, memoryview):  # ndarray.data: writable raw memory, where pointers can be forged
        raise AttributeError(f"{what}: raw memory (memoryview) is not available here")
    if callable(value) and not isinstance(value, _GuardedClass):
        return _with_argument_checks(value)
    return value


_MISSING = object()

#: Tests only: modules whose attributes pass the guard, so that the tests of the layers behind it
#: can hand agent code ``os`` on purpose. Nothing in the package sets it.
TRUSTED_MODULES_FOR_TESTS: frozenset[str] = frozenset()


def _is_label_shortcut(obj: Any, name: str) -> bool:
    """Whether ``obj.name`` is pandas' shortcut for a label: a DataFrame's column (a Series' row),
    or the column a GroupBy, Resampler or window selects (``df.groupby("a").Price``)."""
    generic = sys.modules.get("pandas.core.generic")
    if generic is None or not type(obj).__module__.startswith("pandas"):
        return False
    try:
        if isinstance(obj, generic.NDFrame):
            return bool(obj._info_axis._can_hold_identifiers_and_holds_name(name))
        held = vars(obj).get("obj") if hasattr(obj, "__dict__") else None
        return isinstance(held, generic.NDFrame) and name in held
    except Exception:  # noqa: BLE001 - an index that cannot answer: no shortcut
        return False


def _is_own_function(obj: Any) -> bool:
    """A function the agent's code defined (its globals are the run's, named "agent")."""
    return isinstance(obj, types.FunctionType) and obj.__module__ == "agent"


def guarded_getattr(obj: Any, name: str, *default: Any) -> Any:
    """``obj.name`` for agent code: a plain value's public attribute (RestrictedPython's rules), or
    an attribute whose owner and name are on the allowlist (``core.surface``); never a module but
    the allowed ones, a code runner or raw memory."""
    if not isinstance(name, str):
        raise TypeError(f"attribute name must be a string, not {type(name).__name__}")
    if name.startswith("_") or name in DENIED_NAMES:
        raise AttributeError(f"{name!r} is not available here")
    if _of_denied_type(obj):
        raise AttributeError(f"{type(obj).__name__} objects are not available here")
    if isinstance(obj, _GuardedClass):  # np.ndarray.sum: the class's own attributes, by its own keys
        obj = obj._wrapped
    trusted = isinstance(obj, ModuleType) and obj.__name__ in TRUSTED_MODULES_FOR_TESTS
    if trusted or (_is_own_function(obj) and name in obj.__dict__):  # what the code set, it reads back
        allowed, key = True, None
    else:
        allowed, key = surface.decision(obj, name)
    if not allowed:
        if _is_label_shortcut(obj, name):  # df.Price: the column, as df["Price"] reads it
            return guarded_getitem(obj, name)
        if surface.defined(obj, name):
            raise AttributeError(f"{key} is not available here")
        if default:
            return default[0]
        raise AttributeError(f"{type(obj).__name__!r} object has no attribute {name!r}")
    # safer_getattr's own default is None, which would turn a misspelt name into a silent None.
    value = safer_getattr(obj, name, _MISSING) if key is None else getattr(obj, name, _MISSING)
    if value is _MISSING:
        if default:
            return default[0]
        raise AttributeError(f"{type(obj).__name__!r} object has no attribute {name!r}")
    if isinstance(obj, (ModuleType, type)):  # np.sctypeDict: the library's own state, to read, not to change
        value = _read_only(value)
    elif key is not None and type(value) in (dict, list, set):  # gb.indices: an object's cache, trusted later
        value = _detached(value)
    return _checked(value, repr(name))


def _detached(value: Any) -> Any:
    """A library object's dict, list or set (a groupby's cached ``indices``, which later calls trust
    as positions) as a copy, the arrays in it copied too: what the code changes, the library never sees."""
    numpy = sys.modules.get("numpy")

    def own(item: Any) -> Any:
        return item.copy() if numpy is not None and isinstance(item, numpy.ndarray) else item

    if type(value) is dict:
        return {key: own(item) for key, item in value.items()}
    if type(value) is list:
        return [own(item) for item in value]
    return set(value)


def _read_only(value: Any) -> Any:
    """A module's or class's mutable container as a read-only view (a dict) or copy (a list, a set)."""
    if type(value) is dict:
        return MappingProxyType(value)
    if type(value) is list:
        return tuple(value)
    if type(value) is set:
        return frozenset(value)
    return value


def guarded_getitem(obj: Any, key: Any) -> Any:
    return _checked(obj[key], "item")


def _guarded_iter(obj: Any) -> Any:
    """``for x in obj`` for agent code: the items pass the same checks as attributes and items."""
    return map(_checked_item, iter(obj))


def _guarded_iter_builtin(obj: Any, *sentinel: Any) -> Any:
    return map(_checked_item, iter(obj, *sentinel))


def _guarded_next(iterator: Any, *default: Any) -> Any:
    return _checked(next(iterator, *default), "item")


def _checked_item(value: Any) -> Any:
    return _checked(value, "item")


def _guarded_hasattr(obj: Any, name: str) -> bool:
    try:
        guarded_getattr(obj, name)
    except (AttributeError, TypeError):
        return False
    return True


# C code called from agent code imports through the agent frame's ``__import__`` (``ndarray.sum``
# loads numpy's _methods, ``Timestamp.strftime`` loads time). Agent code itself cannot name it:
# ``_`` names are refused at compile time and the builtins are out of its reach.
LIBRARY_IMPORT_ROOTS = frozenset({"numpy", "pandas"})


def _library_import(
    name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
) -> ModuleType:
    """``__import__`` for the libraries' own C code: modules already loaded (nothing new is read
    or run) and numpy's and pandas' own, which they load lazily."""
    if level != 0 or (name not in sys.modules and name.partition(".")[0] not in LIBRARY_IMPORT_ROOTS):
        raise ImportError(f"import of {name!r} is not allowed here")
    import builtins

    return builtins.__import__(name, globals, locals, fromlist, level)


#: The attributes agent code may assign on a library's objects: a frame's labels and names.
SETTABLE_ATTRIBUTES = frozenset({"columns", "index", "name", "names"})


class _WriteTarget:
    """What ``obj.x = v``, ``obj[k] = v`` and ``del obj...`` act on for a library's object: items
    freely (the library checks them), attributes only where ``SETTABLE_ATTRIBUTES`` allows, on
    pandas' objects (an array's flags made writable again would let code rewrite what a pandas
    object relies on, such as a Categorical's codes)."""

    __slots__ = ("_target",)

    def __init__(self, target: Any) -> None:
        object.__setattr__(self, "_target", target)

    def __setattr__(self, name: str, value: Any) -> None:
        target = object.__getattribute__(self, "_target")
        if name not in SETTABLE_ATTRIBUTES or not type(target).__module__.startswith("pandas"):
            raise TypeError(f"{type(target).__name__}.{name} cannot be assigned here")
        setattr(target, name, value)

    def __delattr__(self, name: str) -> None:
        raise TypeError(f"{type(object.__getattribute__(self, '_target')).__name__}.{name} cannot be deleted here")

    def __setitem__(self, key: Any, value: Any) -> None:
        object.__getattribute__(self, "_item_target")()[key] = value

    def __delitem__(self, key: Any) -> None:
        del object.__getattribute__(self, "_item_target")()[key]

    def _item_target(self) -> Any:
        target = object.__getattribute__(self, "_target")
        if not isinstance(target, _item_writable_classes()):
            raise TypeError(f"{type(target).__name__} items cannot be assigned here")
        return target


#: What agent code may assign items of, besides plain containers: arrays, frames and their indexers,
#: pandas' extension arrays (which check what they store). Not an array's flags (``flags["W"] = True``
#: would make a pandas object's read-only codes writable), nor anything else.
ITEM_WRITABLE = (
    ("numpy", "ndarray"),
    ("numpy", "flatiter"),
    ("pandas.core.generic", "NDFrame"),
    ("pandas.core.indexing", "_LocationIndexer"),
    ("pandas.core.indexing", "_ScalarAccessIndexer"),
    ("pandas.core.arrays.base", "ExtensionArray"),
    ("pandas.core.flags", "Flags"),
)


def _item_writable_classes() -> tuple[type, ...]:
    classes = (getattr(sys.modules.get(module), name, None) for module, name in ITEM_WRITABLE)
    return tuple(cls for cls in classes if isinstance(cls, type))


def _guarded_write(obj: Any) -> Any:
    """What ``obj.x = ...``, ``obj[k] = ...`` and ``del obj.x`` write to: plain values and the code's
    own functions as they are; never a module or a class, whose change every later lookup in the
    run, the libraries' own included, would see; a library's object through ``_WriteTarget``."""
    if isinstance(obj, ModuleType) and obj.__name__ not in TRUSTED_MODULES_FOR_TESTS:
        raise TypeError(f"the module {obj.__name__} cannot be changed here")
    if isinstance(obj, type):
        raise TypeError(f"the class {obj.__name__} cannot be changed here")
    if isinstance(obj, (list, dict, set, bytearray)) or surface.is_plain(obj) or _is_own_function(obj):
        return obj
    return _WriteTarget(obj)


#: RestrictedPython's safe builtins that agent code does without: ``setattr``/``delattr`` write past
#: ``_write_`` (RestrictedPython's own guard lets through any object that answers
#: ``_guarded_writes``, which a pandas label does) and past the compile-time layout check;
#: ``id`` and ``hash`` give object addresses, what forged pointers are made of; classes are refused.
_REMOVED_BUILTINS = frozenset({"setattr", "delattr", "id", "hash", "__build_class__", "_getattr_"})


def restricted_globals(names: dict[str, Any], printer: _Printer) -> dict[str, Any]:
    """The globals agent code runs with: safe builtins, RestrictedPython's guards, and ``names``."""
    import builtins

    allowed = {name: value for name, value in safe_builtins.items() if name not in _REMOVED_BUILTINS}
    allowed["__import__"] = _library_import
    allowed.update({name: getattr(builtins, name) for name in _EXTRA_BUILTINS})
    allowed["getattr"] = guarded_getattr
    allowed["hasattr"] = _guarded_hasattr
    # What takes one item out of something, as indexing and iterating do, checks it as they do.
    allowed["iter"] = _guarded_iter_builtin
    allowed["next"] = _guarded_next
    allowed["min"] = lambda *args, **kwargs: _checked(min(*args, **kwargs), "item")
    allowed["max"] = lambda *args, **kwargs: _checked(max(*args, **kwargs), "item")
    return {
        "__builtins__": allowed,
        "__name__": "agent",
        "_print_": printer,
        "_getattr_": guarded_getattr,
        "_getitem_": guarded_getitem,
        "_getiter_": _guarded_iter,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_write_": _guarded_write,
        "_inplacevar_": _inplace,
        "_apply_": lambda function, *args, **kwargs: function(*args, **kwargs),
        **names,
    }


# ----------------------------------------------------------------------------- the child process
# sys._getframe stays allowed: libraries call it to place their warnings, and the agent cannot
# spell it (leading underscore); whatever a frame exposes is still behind this hook.
_DENIED_EVENT_PREFIXES = (
    "os.",
    "shutil.",
    "subprocess.",
    "socket.",
    "ctypes.",
    "urllib.",
    "http.",
    "ftplib.",
    "smtplib.",
    "webbrowser.",
    "pty.",
    "glob.",
    "tempfile.",
    "sqlite3.",
    "fcntl.",
    "mmap.",
    "resource.",
    "winreg.",
    "msvcrt.",
    "_winapi.",
    "sys.settrace",
    "sys.setprofile",
    "sys.addaudithook",
    "gc.get_",
    "signal.",
)
MAX_REPLY_BYTES = 8 * 2**20

# Tests only: the child runs the code as plain Python, with the real builtins and no guards, so the
# security tests can show that the kernel layers hold by themselves. Nothing in the package sets it,
# and agent code cannot: it lives in the env's process, which the child never writes to.
UNGUARDED_FOR_TESTS = False


@functools.cache
def _readable_roots() -> tuple[str, ...]:
    """Where libraries may lazily load their own files from: the standard library and site-packages.
    Not sys.path wholesale (it holds the working directory and the project), and never this package,
    whose fixtures hold the tasks' answers. Called first in the parent: sysconfig loads its data
    module lazily, which the child may no longer be able to read."""
    import site

    paths = {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths.update(p for p in site.getsitepackages() if os.path.isdir(p))
    return tuple(sorted(os.path.realpath(p) + os.sep for p in paths if p))


_PACKAGE_DIR = os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


def _under(
    path: Any,
    roots: tuple[str, ...],
    realpath: Callable[[str], str] = os.path.realpath,
    fsdecode: Callable[[Any], str] = os.fsdecode,
) -> bool:
    # realpath and fsdecode are bound when this is defined: code that rebinds os.path.realpath
    # must not turn the audit hook's file check into "yes".
    if not isinstance(path, (str, bytes, os.PathLike)):
        return False  # a file descriptor or nothing: refuse
    try:
        real = realpath(fsdecode(path)) + os.sep
    except (OSError, ValueError):  # e.g. a relative path where the working directory is unreadable
        return False
    return real.startswith(roots) and not real.startswith(_PACKAGE_DIR)


def _readable_by_others(path: str) -> bool:
    """Whether a user with no relation to the owner can reach and list ``path``: every folder on
    the way must be searchable by others (a Python under /root/.pyenv is not)."""
    try:
        current = os.path.realpath(path)
        if not os.stat(current).st_mode & stat.S_IROTH:
            return False
        while True:
            if not os.stat(current).st_mode & stat.S_IXOTH:
                return False
            parent = os.path.dirname(current)
            if parent == current:
                return True
            current = parent
    except OSError:
        return False


@functools.cache
def _can_drop_to_nobody() -> bool:
    """Dropping root is only safe for the run when the unprivileged user can still import the
    libraries the code uses lazily; otherwise every late import would fail."""
    return all(_readable_by_others(root) for root in _readable_roots())


def _install_audit_hook() -> None:
    # Everything the hook uses is bound here, not looked up in the module at call time: rebinding
    # the module's names must not switch the hook off.
    roots, under, denied_prefixes = _readable_roots(), _under, _DENIED_EVENT_PREFIXES
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = args[0], args[1], args[2] if len(args) > 2 else None
            writing = isinstance(mode, str) and any(c in mode for c in "wax+")
            if isinstance(flags, int):  # os.open: the mode is None and the flags say it all
                writing = writing or bool(flags & write_flags)
            if writing or not under(path, roots):
                raise PermissionError(
                    f"file access is not allowed here: {os.fsdecode(path)!r}"
                    if isinstance(path, (str, bytes))
                    else "file access is not allowed here"
                )
        elif event in ("os.listdir", "os.scandir") and under(args[0], roots):
            return  # the import system lists package folders when a library loads a submodule lazily
        elif event.startswith(denied_prefixes):
            raise PermissionError(f"not allowed here: {event}")

    sys.addaudithook(hook)


def _mapped_pages() -> int | None:
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _limit_memory(extra_mb: int, pages: int | None = None) -> None:
    """Cap the address space at what is mapped now (or at ``pages``, counted earlier) plus ``extra_mb``."""
    try:
        import resource

        pages = pages if pages is not None else _mapped_pages()
        if pages is None:
            return
        ceiling = pages * os.sysconf("SC_PAGE_SIZE") + extra_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (ceiling, ceiling))
    except (ImportError, OSError, ValueError):
        pass  # not Linux: the wall-clock budget still applies


MAX_ERROR_CHARS = 2_000


def _agent_traceback(exc: BaseException) -> str:
    """The error with the agent's own line numbers, without the sandbox's frames."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == AGENT_FILE]
    where = f"line {frames[-1].lineno}: " if frames else ""
    message = _shown(exc, str)
    return f"{where}{type(exc).__name__}" + (f": {message}" if message else "")


def _shown(value: Any, render: Callable[[Any], str], limit: int = MAX_ERROR_CHARS) -> str:
    """``render(value)`` cut to ``limit`` characters; never raises (the code's objects may)."""
    try:
        text = render(value)
    except BaseException as exc:  # a __repr__ that raises, or a structure too deep to render
        return f"<cannot be shown: {type(exc).__name__}>"
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more characters)"


def _close_inherited_descriptors(keep: int) -> None:
    """Close every descriptor but stdio and the reply pipe: nothing else the parent holds (sockets,
    a vector env's pipes, log files) may be reachable from agent code."""
    try:
        import resource

        highest = min(resource.getrlimit(resource.RLIMIT_NOFILE)[0], 65536)
    except (ImportError, ValueError, OSError):
        highest = 4096
    os.closerange(3, keep)
    os.closerange(keep + 1, highest)


def _clear_environment() -> None:
    """Nothing of the env's environment (API keys, tokens) for the code; only the settings that keep
    a native library loaded later (scipy's BLAS) to one thread."""
    os.environ.clear()
    os.environ.update(SINGLE_THREADED)


def _quiet_stdio() -> None:
    """The code must not read the parent's stdin or write into its stdout (e.g. a --json report)."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)


#: Descriptors a child may hold: a handful is all a run uses, and each pipe holds kernel memory
#: that its address-space budget does not count.
MAX_DESCRIPTORS = 256


def _first_to_go_when_memory_runs_out() -> None:
    """The kernel's OOM killer takes this child before anything else of the machine's (a process may
    raise its own score without privileges)."""
    with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w", encoding="ascii") as handle:
        handle.write("1000")


def _drop_privileges() -> None:
    """No new processes: RLIMIT_NPROC = 0 stops fork for an unprivileged user (seccomp, applied
    later, stops it for root too). At most MAX_DESCRIPTORS descriptors, and no core dump for the
    host to keep. No raising its own priority again once the env has lowered it (RLIMIT_NICE 0).
    Relative paths never name the user's working directory."""
    try:
        import resource

        os.chdir("/")
        for limit, value in (
            (resource.RLIMIT_NPROC, 0),
            (resource.RLIMIT_NOFILE, MAX_DESCRIPTORS),
            (resource.RLIMIT_CORE, 0),
            (resource.RLIMIT_NICE, 0),
        ):
            with contextlib.suppress(ValueError, OSError):  # one refused limit leaves the others
                resource.setrlimit(limit, (value, value))
    except (ImportError, OSError, AttributeError):
        pass  # not POSIX: the other layers remain


def _apply_kernel_layers() -> None:
    """The kernel boundaries (``core.kernel``): read-only file system beneath the standard library,
    site-packages and the system's shared libraries; no network, no IPC shared with other
    processes, no new processes or programs, no tracing, no signals outside; ``nobody`` (with
    the right to read the libraries where it could not otherwise). Applied before the first
    line of agent code."""
    applied = kernel.apply(kernel.Plan(read_only=_kernel_read_only(), needs_read_capability=not _can_drop_to_nobody()))
    _kernel_layers_applied[:] = applied.layers
    kernel.forget()


# Library entry points that run code, unpickle, or read and write files in native code (where the
# audit hook does not see the file): replaced in the child, since pandas also reaches methods by
# name (``df.agg("style")``, ``df.apply("eval", ...)``) without passing the attribute guard.
DISARMED = {
    "pandas": ("eval", "read_*"),
    "pandas.DataFrame": (
        "eval",
        "query",
        "style",
        "to_clipboard",
        "to_excel",
        "to_feather",
        "to_hdf",
        "to_iceberg",
        "to_latex",
        "to_orc",
        "to_parquet",
        "to_pickle",
        "to_sql",
        "to_stata",
        "to_xarray",
        "to_xml",
    ),
    "pandas.Series": ("to_clipboard", "to_excel", "to_hdf", "to_latex", "to_pickle", "to_sql", "to_xarray"),
    "numpy": ("load", "fromfile", "memmap", "frombuffer"),
}


def _refusal(name: str) -> Callable[..., Any]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(f"{name} is not available here")

    return refuse


def _no_private_labels(getattr_: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    """pandas answers an unknown attribute with the row or column of that label, so numpy asking a
    Series for ``__array_interface__`` would get a dict the code wrote (an array at any address),
    and a library asking for any ``_`` name (``_guarded_writes``) would get what the code chose."""

    @functools.wraps(getattr_)
    def lookup(self: Any, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr_(self, name)

    return lookup


def _by_name_allowed(obj: Any, name: str) -> bool:
    """Whether pandas may look ``name`` up on ``obj`` (or, as it does next, on numpy) for agent
    code: the attribute guard's rules. A name that is neither is pandas' own error to raise."""
    if name.startswith("_") or name in DENIED_NAMES:
        return False
    numpy = sys.modules.get("numpy")
    for owner in (obj, numpy):
        if owner is not None and surface.defined(owner, name):
            # Called by name, a method with argument rules would be called unwrapped: call it directly.
            found = getattr(owner if isinstance(owner, (type, ModuleType)) else type(owner), name, None)
            return surface.decision(owner, name)[0] and surface.callable_name(found) not in surface.argument_rules()
    return True


def _guarded_apply_str(apply_str: Callable[..., Any]) -> Callable[..., Any]:
    """pandas' ``df.agg("name")``/``apply``/``transform`` look the method up themselves: the same
    rules as the attribute guard."""

    @functools.wraps(apply_str)
    def checked(self: Any, obj: Any, func: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(func, str) and not _by_name_allowed(obj, func):
            raise PermissionError(f"{func!r} is not available here")
        return apply_str(self, obj, func, *args, **kwargs)

    return checked


# Modules whose classes' aggregate/agg/transform/apply look a method up by the name they are given
# (``groupby(...).aggregate(obj, "__getattribute__", name)`` is getattr with any name).
_BY_NAME_MODULES = (
    "pandas.core.groupby.generic",
    "pandas.core.groupby.groupby",
    "pandas.core.resample",
    "pandas.core.window.rolling",
    "pandas.core.window.expanding",
    "pandas.core.window.ewm",
)
_BY_NAME_METHODS = ("aggregate", "agg", "transform", "apply")
#: The classes whose ``__getattr__`` answers with a label (a column, a row, a grouped column).
_LABEL_GETATTRS = (
    ("pandas.core.generic", "NDFrame"),
    ("pandas.core.groupby.groupby", "GroupBy"),
    ("pandas.core.groupby.groupby", "BaseGroupBy"),
    ("pandas.core.window.rolling", "BaseWindow"),
    ("pandas.core.resample", "Resampler"),
)
_DISARMED_MODULES = (
    "pandas",
    "numpy",
    "pandas.plotting._core",
    "pandas.core.generic",
    "pandas.core.apply",
    "pandas.core.dtypes.cast",
    "pandas._libs.lib",
    "pandas._libs.reshape",
    *_BY_NAME_MODULES,
    *(module for module, _ in _LABEL_GETATTRS),
)


def _denied_name_in(value: Any, owner: Any, depth: int = 0) -> str | None:
    """A name the attribute guard would refuse on ``owner``, anywhere in a by-name call's arguments."""
    if isinstance(value, str):
        return None if _by_name_allowed(owner, value) else value
    if depth < 5 and isinstance(value, (list, tuple)):
        return next((n for v in value if (n := _denied_name_in(v, owner, depth + 1))), None)
    if depth < 5 and isinstance(value, dict):
        return next((n for v in value.values() if (n := _denied_name_in(v, owner, depth + 1))), None)
    return None


def _names_checked(method: Callable[..., Any]) -> Callable[..., Any]:
    """A pandas method that may look methods up by name, refusing the names the guard refuses."""

    @functools.wraps(method)
    def checked(*args: Any, **kwargs: Any) -> Any:
        owner = args[0] if args else None
        denied = _denied_name_in(args[1:], owner) or _denied_name_in(kwargs, owner)
        if denied is not None:
            raise PermissionError(f"{denied!r} is not available here")
        return method(*args, **kwargs)

    return checked


def _own_codes(coerce: Callable[..., Any]) -> Callable[..., Any]:
    """pandas' ``coerce_indexer_dtype``, whose result a Categorical or MultiIndex keeps as its codes,
    always an array of its own: given the code's own array of the right type, it returns that very
    array, which the code could change after pandas checked it (codes index categories unchecked)."""

    @functools.wraps(coerce)
    def coerced(indexer: Any, categories: Any) -> Any:
        return coerce(indexer, categories).copy()  # small integers: a copy costs little, and it is sure

    return coerced


def _rows_as(function: Callable[..., Any], kind: type) -> Callable[..., Any]:
    """pandas' ``lib.to_object_array`` (and its tuples twin) sizes each row by ``len(row)`` and fills it
    from ``list(row)`` with bounds checks off: a DataFrame as a row has one length and another
    iteration. Each row as a list (a tuple) first, whose length is what it holds."""

    @functools.wraps(function)
    def converted(rows: Any, *args: Any, **kwargs: Any) -> Any:
        return function([row if type(row) is kind else kind(row) for row in rows], *args, **kwargs)

    return converted


def _exploded_from_lists(explode: Callable[..., Any]) -> Callable[..., Any]:
    """pandas' ``reshape.explode`` sizes its output by each list-like's ``len`` and fills it from
    iterating it, with bounds checks off: a DataFrame's length counts rows, its iteration yields
    column labels, and ``len(range(2**62))`` costs nothing while several such add up past 2**64.
    Each list-like is made a list first (whose length is what it holds: a huge one fails to build)."""
    from pandas.api.types import is_list_like

    @functools.wraps(explode)
    def exploded(values: Any) -> Any:
        numpy = sys.modules["numpy"]
        rows = numpy.empty(len(values), dtype=object)
        for index, row in enumerate(values):
            rows[index] = list(row) if is_list_like(row, allow_sets=True) else row
        return explode(rows)

    return exploded


def _json_refusing_unknown_objects(to_json: Callable[..., Any]) -> Callable[..., Any]:
    """``to_json`` without a ``default_handler`` reads each public attribute of an object it cannot
    write, in C, past the attribute guard: here such objects are refused instead (the env's own
    code in the child writes frames with it too)."""

    @functools.wraps(to_json)
    def written(self: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("default_handler") is None:
            kwargs["default_handler"] = _refuse_unknown_object
        return to_json(self, *args, **kwargs)

    return written


def _on_a_snapshot(method: Callable[..., Any]) -> Callable[..., Any]:
    """``groupby``, ``rolling``, ``expanding``, ``ewm`` and ``resample`` keep the frame (and arrays
    given as keys or times) by reference, and their group ids and time deltas count the rows it had:
    a frame changed in place afterwards (``drop(inplace=True)``, ``s.loc[new] = v``) would have them
    read and write past its arrays. Here they get a shallow copy (copy-on-write: free) and copies of
    the arrays, which no later change of the code's reaches."""

    @functools.wraps(method)
    def grouped(self: Any, *args: Any, **kwargs: Any) -> Any:
        args = tuple(_copied(arg) if not isinstance(arg, str) else arg for arg in args)
        kwargs = {key: _copied(value) if not isinstance(value, str) else value for key, value in kwargs.items()}
        return method(self.copy(deep=False), *args, **kwargs)

    return grouped


_SNAPSHOT_METHODS = ("groupby", "rolling", "expanding", "ewm", "resample")


def _invariant_keepers(loaded: frozenset[str]) -> list[tuple[Any, str, Any]]:
    """Patches for pandas' internals that trust what they were given: codes kept by reference,
    rows sized by ``len``, objects written to JSON by their attributes."""
    plan: list[tuple[Any, str, Any]] = []
    cast = sys.modules.get("pandas.core.dtypes.cast") if "pandas.core.dtypes.cast" in loaded else None
    coerce = getattr(cast, "coerce_indexer_dtype", None)
    if coerce is not None:  # the function, and every pandas module that imported it by name
        for name, module in list(sys.modules.items()):
            if name.startswith("pandas") and getattr(module, "coerce_indexer_dtype", None) is coerce:
                plan.append((module, "coerce_indexer_dtype", _own_codes(coerce)))
    lib = sys.modules.get("pandas._libs.lib") if "pandas._libs.lib" in loaded else None
    for name, kind in (("to_object_array", list), ("to_object_array_tuples", tuple)):
        if callable(getattr(lib, name, None)):
            plan.append((lib, name, _rows_as(getattr(lib, name), kind)))
    reshape = sys.modules.get("pandas._libs.reshape") if "pandas._libs.reshape" in loaded else None
    if callable(getattr(reshape, "explode", None)):
        plan.append((reshape, "explode", _exploded_from_lists(reshape.explode)))
    generic = sys.modules.get("pandas.core.generic") if "pandas.core.generic" in loaded else None
    if generic is not None and callable(getattr(generic.NDFrame, "to_json", None)):
        plan.append((generic.NDFrame, "to_json", _json_refusing_unknown_objects(generic.NDFrame.to_json)))
    pandas = sys.modules.get("pandas") if "pandas" in loaded else None
    patched: set[tuple[type, str]] = set()
    for frame_class in (getattr(pandas, "DataFrame", None), getattr(pandas, "Series", None)):
        for name in _SNAPSHOT_METHODS if isinstance(frame_class, type) else ():
            # Patched where it is defined (NDFrame.rolling, DataFrame.groupby): the attribute keeps its key.
            owner = next((cls for cls in frame_class.__mro__ if name in vars(cls)), None)
            if owner is not None and (owner, name) not in patched and callable(vars(owner)[name]):
                patched.add((owner, name))
                plan.append((owner, name, _on_a_snapshot(vars(owner)[name])))
    return plan


def _disarm_plan() -> tuple[tuple[Any, str, Any], ...]:
    """(owner, attribute, replacement) for the libraries loaded now; built in the parent, where it
    is kept for as long as the same libraries are loaded, and applied in each child."""
    return _plan_for(frozenset(name for name in _DISARMED_MODULES if name in sys.modules))


@functools.cache
def _plan_for(loaded: frozenset[str]) -> tuple[tuple[Any, str, Any], ...]:
    plan: list[tuple[Any, str, Any]] = []
    if "pandas.plotting._core" in loaded:  # .plot(backend=NAME) and the plotting.backend option import NAME
        plan.append((sys.modules["pandas.plotting._core"], "_load_backend", _refusal("pandas plotting backends")))
    for module_name, class_name in _LABEL_GETATTRS:  # s.__array_interface__ would be a row label
        module = sys.modules.get(module_name) if module_name in loaded else None
        owner = getattr(module, class_name, None)
        if isinstance(owner, type) and "__getattr__" in vars(owner):
            plan.append((owner, "__getattr__", _no_private_labels(vars(owner)["__getattr__"])))
    plan.extend(_invariant_keepers(loaded))
    applying = sys.modules.get("pandas.core.apply") if "pandas.core.apply" in loaded else None
    if applying is not None and hasattr(applying, "Apply"):
        plan.append((applying.Apply, "_apply_str", _guarded_apply_str(applying.Apply._apply_str)))
    wrapped: set[tuple[int, str]] = set()
    for module_name in _BY_NAME_MODULES:  # (pandas gives these classes __module__ "pandas.api.typing")
        module = sys.modules.get(module_name) if module_name in loaded else None
        for owner in vars(module).values() if module is not None else ():
            if not isinstance(owner, type) or not owner.__module__.startswith("pandas"):
                continue
            for name in _BY_NAME_METHODS:
                if callable(vars(owner).get(name)) and (id(owner), name) not in wrapped:
                    wrapped.add((id(owner), name))
                    plan.append((owner, name, _names_checked(vars(owner)[name])))
    for owner_path, patterns in DISARMED.items():
        module_name, _, class_name = owner_path.partition(".")
        module = sys.modules.get(module_name) if module_name in loaded else None
        owner = getattr(module, class_name, None) if class_name else module
        if owner is None:
            continue
        for pattern in patterns:
            names = [n for n in dir(owner) if n.startswith(pattern[:-1])] if pattern.endswith("*") else [pattern]
            for name in names:
                if not hasattr(owner, name):
                    continue
                refusal = _refusal(f"{owner_path}.{name}")
                plan.append(
                    (owner, name, property(refusal) if isinstance(owner, type) and name == "style" else refusal)
                )
    return tuple(plan)


def _disarm_libraries() -> None:
    """Replace the DISARMED entry points (and pandas' lookups by name) in this child only."""
    for owner, name, replacement in _disarm_plan():
        setattr(owner, name, replacement)


_SYSTEM_LIBRARIES = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/share/zoneinfo", "/etc/ld.so.cache")
_kernel_layers_applied: list[str] = []  # in a child: the layers it runs under (for tests and doctor)


@functools.cache
def _kernel_read_only() -> tuple[str, ...]:
    """What the code may read: the Python installation's libraries and the system's shared ones;
    not the working directory, not this package (its fixtures hold the answers), nothing writable."""
    roots = tuple(root.rstrip(os.sep) for root in _readable_roots()) + _SYSTEM_LIBRARIES
    return tuple(path for root in roots for path in paths_except(root, _PACKAGE_DIR.rstrip(os.sep)))


def paths_except(root: str, excluded: str) -> list[str]:
    """Paths whose trees cover ``root`` but not ``excluded``: ``[root]`` when ``excluded`` is not in it,
    else the entries of each folder on the way down except the one leading to ``excluded``.
    Landlock only grants, so a package installed in site-packages is kept out this way."""
    if not excluded.startswith(root + os.sep):
        return [root]
    paths, current = [], root
    for part in os.path.relpath(excluded, root).split(os.sep):
        try:
            entries = sorted(os.listdir(current))
        except OSError:
            return paths
        paths.extend(os.path.join(current, entry) for entry in entries if entry != part)
        current = os.path.join(current, part)
    return paths


@functools.cache
def _thread_pools() -> ThreadpoolController | None:
    """The native thread pools (BLAS, OpenMP), found once in the parent: finding them takes tens of
    milliseconds, which every run would otherwise pay again."""
    try:
        return ThreadpoolController()
    except Exception:  # noqa: BLE001 - it inspects native libraries; the budgets apply regardless
        return None


def _single_threaded_libraries() -> None:
    """One BLAS/OpenMP thread (in ``run_code``'s fork; the worker starts with one): the child runs as
    an ordinary user, where RLIMIT_NPROC = 0 holds and OpenBLAS would wait until the deadline for
    a thread it cannot start."""
    pools = _thread_pools()
    if pools is not None:
        with contextlib.suppress(Exception):
            pools.limit(limits=1)


def _seed_libraries(seed: int) -> None:
    """numpy's global generator (np.random.*, DataFrame.sample) would otherwise carry the parent's
    entropy-seeded state into every run."""
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % 2**32)


def _child(
    reply_fd: int,
    code_object: Any,
    setup: Callable[[], dict[str, Any]],
    collect: Callable[[dict[str, Any]], Any],
    limits: Limits,
    seed: int = 0,
) -> None:
    _close_inherited_descriptors(reply_fd)
    _quiet_stdio()
    _clear_environment()
    _limit_memory(limits.memory_mb)
    _single_threaded_libraries()
    _first_to_go_when_memory_runs_out()
    _drop_privileges()
    _seed_libraries(seed)
    reply = _run_agent_code(code_object, setup, collect, limits, UNGUARDED_FOR_TESTS)
    try:
        data = memoryview(reply.encode("utf-8"))
        while data:
            data = data[os.write(reply_fd, data) :]
    finally:
        os._exit(0)


def _run_agent_code(
    code_object: Any,
    setup: Callable[[], dict[str, Any]],
    collect: Callable[[dict[str, Any]], Any],
    limits: Limits,
    unguarded: bool,
    layers_applied: bool = False,
) -> str:
    """Set up the names, apply the layers (unless this process already has them), run the code;
    the reply as JSON text."""
    printer = _Printer(limits.output_chars)
    error = None
    namespace: dict[str, Any] = {}
    plain_output = io.StringIO()  # what unguarded test code prints with the real print()
    try:
        if unguarded:
            import builtins

            namespace = {"__builtins__": builtins, **setup()}
            if not layers_applied:
                _apply_kernel_layers()
        else:
            namespace = restricted_globals(setup(), printer)
            if not layers_applied:  # a ready child of the worker did both before its run
                _disarm_libraries()
                _apply_kernel_layers()
            _install_audit_hook()
        with contextlib.redirect_stdout(plain_output):
            exec(code_object, namespace)  # compiled by RestrictedPython from checked code; see the module doc
    except MemoryError:
        error = "MemoryError: the code used more memory than its budget"
    except RecursionError:
        error = "RecursionError: maximum recursion depth exceeded"
    except BaseException as exc:  # the agent's own exceptions, SystemExit included
        error = _agent_traceback(exc)
    output = printer.text() + plain_output.getvalue()[: limits.output_chars]
    if error is None and LAST_VALUE in namespace:
        value = namespace[LAST_VALUE]
        if value is not None:
            output += _shown(value, repr, limits.output_chars)
    try:
        payload = collect(namespace)
    except BaseException as exc:
        payload, error = None, error or f"could not read the result: {type(exc).__name__}: {_shown(exc, str)}"
    try:
        return json.dumps({"ok": error is None, "output": output, "error": error, "payload": payload})
    except (TypeError, ValueError) as exc:
        return json.dumps(
            {
                "ok": False,
                "output": output,
                "payload": None,
                "error": f"the result could not be sent back: {type(exc).__name__}: {exc}",
            }
        )


# ----------------------------------------------------------------------------- the clean worker
#: The libraries agent code uses, imported once by the worker so that every child has them (a child
#: behind Landlock could not read them).
AGENT_LIBRARIES = ("numpy", "pandas", "gspread", "gspread_dataframe", "RestrictedPython")
#: Libraries kept out of agent code's world whether or not they are installed. Where pyarrow is,
#: pandas keeps strings in Arrow and builds arrays from dtypes such as ``"int64[pyarrow]"``: a large
#: native surface, and a world (the allowlist's walk, the code's output) that would differ from one
#: machine to the next.
WITHHELD_LIBRARIES = ("pyarrow",)


@functools.cache  # read on every run's job (import_dotted): the catalog does not change
def worker_modules() -> tuple[str, ...]:
    """Modules the worker imports besides ``AGENT_LIBRARIES``: the env modules of the tasks that
    run code (the catalog says which), where their code-side names live."""
    from toolbench.catalog import TASKS

    return tuple(spec.module for spec in TASKS if spec.runs_code)


def load_agent_libraries() -> None:
    """Import agent code's libraries as the worker has them: in a fresh interpreter, before anything
    imported pandas, the withheld libraries then read as not installed. (A process that imported
    them already keeps them: ``run_code``'s in-process mode, for tests, runs in that world.)"""
    for name in WITHHELD_LIBRARIES:
        if name not in sys.modules:
            sys.modules[name] = None  # ``import`` raises ImportError, as for a library not installed
    for module in (*AGENT_LIBRARIES, *worker_modules()):
        importlib.import_module(module)


def run_warm_ups(name: str) -> None:
    """Each worker module's ``name`` function (``warm_worker``: run once before the worker forks, to
    fill what children would each fill on first use; ``warm_child``: run by a child while it waits).
    A warm-up saves time: without it runs are slower, not wrong."""
    for module_name in worker_modules():
        warm_up = getattr(sys.modules.get(module_name), name, None)
        if warm_up is not None:
            with contextlib.suppress(Exception):
                warm_up()


def prepare_parent() -> None:
    """In the process that forks (the worker, or ``run_code``'s caller): what children would
    otherwise each compute, read while everything is readable."""
    _can_drop_to_nobody()
    _kernel_read_only()
    surface.allowlist()  # read now: the children cannot read this package
    kernel.prepare()
    _disarm_plan()
    _arrow_on_the_system_allocator()


def _arrow_on_the_system_allocator() -> None:
    """Arrow's default pools (jemalloc, mimalloc) reserve address space in large chunks, so where
    pyarrow is installed (pandas then keeps strings in Arrow) a child's first DataFrame could pass
    the address-space budget without using the memory. The system allocator reserves what it uses."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    arrow = sys.modules.get("pyarrow")
    if arrow is not None:  # loaded already: its pool may have been chosen, so set it for what follows
        with contextlib.suppress(AttributeError, NotImplementedError):
            arrow.set_memory_pool(arrow.system_memory_pool())


def no_names(call: Callable[[str, Any], Any]) -> dict[str, Any]:
    """Names for code that is given nothing (``names="toolbench.core.sandbox:no_names"``)."""
    return {}


def result_variable(namespace: dict[str, Any]) -> Any:
    """What the code left in ``result`` (``collect="toolbench.core.sandbox:result_variable"``)."""
    return namespace.get("result")


def layers_applied(namespace: dict[str, Any]) -> list[str]:
    """The kernel layers the run had (``collect="toolbench.core.sandbox:layers_applied"``; doctor)."""
    return list(_kernel_layers_applied)


def import_dotted(path: str) -> Any:
    module_name, _, attribute = path.partition(":")
    if module_name not in (*worker_modules(), __name__):
        raise ValueError(f"{module_name} is not a module of agent-code names")
    return getattr(sys.modules[module_name], attribute)


class RemoteError(Exception):
    """What the env answered a proxy call with, raised in the code as the named built-in type."""


_ERROR_TYPES = {"ValueError": ValueError, "KeyError": KeyError, "TypeError": TypeError, "RuntimeError": RuntimeError}


def ready_child(link: socket.socket) -> None:
    """A child the worker forks ahead of need: it closes what it inherited, applies the kernel
    layers, then waits on ``link`` for its run's job (so a run does not wait for a fork). The
    worker hands the other end of ``link`` to the env, which sends the job straight to it.
    Never returns."""
    _close_inherited_descriptors(link.fileno())
    _quiet_stdio()
    _clear_environment()
    pages = _mapped_pages()  # before Landlock closes /proc
    _die_with_the_worker()
    _first_to_go_when_memory_runs_out()
    _drop_privileges()
    _apply_kernel_layers()
    _disarm_libraries()  # the same for every run: done while waiting, not on the step's path
    run_warm_ups("warm_child")
    worker_child(link.detach(), pages)  # the end of its link (the env or the worker gone) ends it


def _die_with_the_worker() -> None:
    """SIGKILL when the fork server exits (it exits when the env's process goes): a child the env
    could not kill (the env was killed itself) does not live on."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        # The server was already gone. In a PID namespace of its own the child sees no parent (0);
        # there the end of file on its link ends it (the worker, gone, never handed the link on).
        if os.getppid() == 1:
            os._exit(0)


def _limit_cpu(seconds: float) -> None:
    """A CPU-time ceiling as a backstop to the caller's wall-clock deadline."""
    with contextlib.suppress(ImportError, OSError, ValueError):
        import resource

        limit = int(seconds) + 2
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1))


def worker_child(channel_fd: int, pages: int | None) -> None:
    """A run in a ready child: read the job, build the names, run, reply; never returns."""
    channel = Channel(socket.socket(fileno=channel_fd))
    try:
        job = channel.receive()
    except (ChannelClosed, OSError):
        os._exit(0)  # no run came: the env (or the worker, before handing the link on) has gone
    limits = Limits(**job["limits"])
    _limit_memory(limits.memory_mb, pages)
    _limit_cpu(limits.seconds)
    _seed_libraries(int(job["seed"]))

    def call(kind: str, payload: Any) -> Any:
        """One request to the env; its answer, or the env's refusal raised here."""
        channel.send({"type": "call", "kind": kind, "payload": payload})
        answer = channel.receive()
        if "error" in answer:
            error = answer["error"]
            raise _ERROR_TYPES.get(error.get("type"), RemoteError)(error.get("message", ""))
        return answer["result"]

    unguarded = bool(job.get("unguarded"))
    try:
        code = job["code"]
        # Compiled and checked by the env (marshal of its code object): the child does not redo it.
        code_object = (
            compile(code, AGENT_FILE, "exec") if unguarded else marshal.loads(base64.b64decode(job["compiled"]))
        )
        names = import_dotted(job["names"])
        collect = import_dotted(job["collect"])
        reply = _run_agent_code(
            code_object,
            lambda: names(call, **job["names_args"]),
            lambda namespace: collect(namespace, **job["collect_args"]),
            limits,
            unguarded,
            layers_applied=True,
        )
    except (CodeError, SyntaxError) as exc:
        reply = json.dumps({"ok": False, "output": "", "error": str(exc), "payload": None})
    try:
        # The reply is JSON text already: framed as it is, so the env parses it once.
        channel.send_json_text('{"type": "done", "reply": ' + reply + "}")
    finally:
        os._exit(0)


#: Programs up to this long keep their compiled form: agents (and references) send the same
#: program again and again, and checking and compiling it costs more than its run's hand-over.
CACHED_CODE_CHARS = 16_384


@functools.lru_cache(maxsize=256)
def _marshalled_cached(code: str, echo_last_expression: bool) -> str:
    return base64.b64encode(marshal.dumps(compile_code(code, echo_last_expression))).decode("ascii")


def _marshalled(code: str, echo_last_expression: bool) -> str:
    """The checked, compiled code as the child receives it (raises ``CodeError``; refusals are not kept)."""
    if len(code) <= CACHED_CODE_CHARS:
        return _marshalled_cached(code, echo_last_expression)
    return _marshalled_cached.__wrapped__(code, echo_last_expression)


def start_worker() -> None:
    """Start this process's clean worker now, if it is not running, so that no step pays for its
    start (a second or more on a loaded machine); a failure shows at the first run instead."""
    with contextlib.suppress(WorkerUnavailable, RuntimeError, OSError):
        WorkerServer.get()


def run_in_worker(
    code: str,
    names: str,
    collect: str,
    serve: Callable[[str, Any], Any],
    limits: Limits = Limits(),
    echo_last_expression: bool = False,
    seed: int = 0,
    names_args: dict[str, Any] | None = None,
    collect_args: dict[str, Any] | None = None,
    account: CpuAccount | None = None,
) -> SandboxResult:
    """Run ``code`` in a child of the clean worker. ``names`` and ``collect`` are ``module:function``
    paths of the task's code-side helpers (``names(call, **names_args)`` builds the namespace from
    proxies; ``collect(namespace, **collect_args)`` says what to send back). Each proxy call
    arrives here as ``serve(kind, payload)``, which answers it (or raises ValueError, KeyError or
    TypeError with a message for the code). One wall-clock deadline holds for the whole run;
    ``account`` is the session's recent CPU use (``worker.CpuAccount``), which decides how soon a
    busy run is demoted to the lowest priority."""
    compiled = ""
    try:
        if not UNGUARDED_FOR_TESTS:  # refused code never reaches a child
            compiled = _marshalled(code, echo_last_expression)
    except CodeError as exc:
        return SandboxResult(False, "", str(exc))
    return _run_in_child(
        code, compiled, echo_last_expression, names, collect, serve, limits, seed, names_args, collect_args,
        account, ends=time.monotonic() + limits.seconds,
    )  # fmt: skip


def _run_in_child(
    code: str,
    compiled: str,
    echo_last_expression: bool,
    names: str,
    collect: str,
    serve: Callable[[str, Any], Any],
    limits: Limits,
    seed: int,
    names_args: dict[str, Any] | None,
    collect_args: dict[str, Any] | None,
    account: CpuAccount | None,
    ends: float,
) -> SandboxResult:
    """``run_in_worker``'s run, ending by ``ends`` (``time.monotonic()``): waiting for a child counts,
    as the child's own time does (``RunDeadline``). Code envs start the clean worker at reset, so
    its start is no step's."""
    try:
        child, channel = WorkerServer.get().fork(ends)
    except (WorkerUnavailable, OSError) as exc:
        return SandboxResult(False, "", f"the sandbox could not start a run ({exc}); try the step again")
    deadline = RunDeadline(max(ends - time.monotonic(), 0.05), child.pid, account)
    try:
        channel.send(
            {
                "code": code,
                "compiled": compiled,
                "echo": echo_last_expression,
                "seed": seed,
                "limits": {
                    "seconds": limits.seconds,
                    "memory_mb": limits.memory_mb,
                    "output_chars": limits.output_chars,
                },
                "names": names,
                "names_args": names_args or {},
                "collect": collect,
                "collect_args": collect_args or {},
                "unguarded": UNGUARDED_FOR_TESTS,
            },
            deadline,
        )
        while True:
            message = channel.receive(deadline)
            if not isinstance(message, dict):
                return SandboxResult(False, "", "the code sent back a malformed result")
            if message.get("type") == "done":
                return _reply_result(message.get("reply"))
            if message.get("type") != "call" or not isinstance(message.get("kind"), str):
                return SandboxResult(False, "", "the code sent back a malformed result")
            if deadline.remaining() <= 0:
                raise ChannelTimeout()
            channel.send(_serve_call(serve, message, deadline), deadline)
    except ChannelTimeout:
        if deadline.over_memory:
            return SandboxResult(False, "", deadline.over_memory)
        return SandboxResult(
            False, "", f"the code did not finish within its {limits.seconds:g} s time budget", timed_out=True
        )
    except MessageRefused:
        return SandboxResult(False, "", "the code sent back a malformed result")
    except (ChannelClosed, OSError):
        return SandboxResult(False, "", "the code stopped without a result; it may have exceeded its memory budget")
    finally:
        child.kill()
        channel.close()
        deadline.finish()


#: Demoted runs' calls are served one at a time in the process, each followed by a pause of this
#: many times its length: sessions whose code keeps the env itself busy (Tabletop's simulator)
#: share at most a quarter of the env's process among them, however many they are.
SLOW_LANE_PAUSE = 3.0
_SLOW_LANE = threading.Lock()


def _serve_call(serve: Callable[[str, Any], Any], message: dict[str, Any], deadline: RunDeadline) -> dict[str, Any]:
    """The env's answer to one call of the code (its result, or its refusal as an error), its time
    charged to the run; a demoted run's call waits for the slow lane."""
    if not deadline.demoted:
        return _timed_answer(serve, message, deadline)
    if not _SLOW_LANE.acquire(timeout=max(deadline.ends - time.monotonic(), 0.0)):
        raise ChannelTimeout()
    try:
        started = time.monotonic()
        answer = _timed_answer(serve, message, deadline)
    finally:
        _SLOW_LANE.release()
    pause = min((time.monotonic() - started) * SLOW_LANE_PAUSE, max(deadline.ends - time.monotonic(), 0.0))
    time.sleep(pause)
    return answer


def _timed_answer(serve: Callable[[str, Any], Any], message: dict[str, Any], deadline: RunDeadline) -> dict[str, Any]:
    started = time.monotonic()
    try:
        return {"result": serve(message["kind"], message.get("payload"))}
    except (ValueError, KeyError, TypeError) as exc:
        # Raised in the code as the built-in type it is (KeyError, TypeError or ValueError).
        kind = next(k for k in (KeyError, TypeError, ValueError) if isinstance(exc, k)).__name__
        text = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        return {"error": {"type": kind, "message": str(text)[:MAX_ERROR_CHARS]}}
    except (ArithmeticError, IndexError, RecursionError, MemoryError) as exc:
        # Arguments a backend did not foresee (10**400 as a coordinate): the code's error.
        return {"error": {"type": "ValueError", "message": f"{type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS]}}
    finally:
        deadline.served += time.monotonic() - started


def run_code(
    code: str,
    setup: Callable[[], dict[str, Any]],
    collect: Callable[[dict[str, Any]], Any],
    limits: Limits = Limits(),
    echo_last_expression: bool = False,
    seed: int = 0,
) -> SandboxResult:
    """Run ``code`` in a forked child with the names ``setup()`` returns; ``collect(namespace)`` (run
    in the child after the code, even if it failed) says what to send back as the payload. ``seed``
    seeds the libraries' global random generators in the child."""
    try:
        if UNGUARDED_FOR_TESTS:
            code_object = compile(code, AGENT_FILE, "exec")  # tests only: see UNGUARDED_FOR_TESTS
        else:
            code_object = compile_code(code, echo_last_expression)
    except (CodeError, SyntaxError) as exc:
        return SandboxResult(False, "", str(exc))
    prepare_parent()
    _thread_pools()
    # A bare fork, not multiprocessing: it also works inside daemonic workers (AsyncVectorEnv's),
    # which multiprocessing forbids to have children.
    read_fd, write_fd = os.pipe()
    pid = kernel.fork()
    if pid == 0:  # the child never returns
        try:
            os.close(read_fd)
            os.setsid()  # its own process group: the parent can kill everything it started
            _child(write_fd, code_object, setup, collect, limits, seed)
        finally:
            os._exit(1)
    os.close(write_fd)
    deadline = time.monotonic() + limits.seconds
    try:
        data, finished = _read_reply(read_fd, deadline)
    finally:
        os.close(read_fd)
    status = _wait(pid, deadline) if finished else None
    _kill(pid)  # the whole group, in every case: nothing the code started outlives it
    if status is None:
        return SandboxResult(
            False, "", f"the code did not finish within its {limits.seconds:g} s time budget", timed_out=True
        )
    if data is None:
        return SandboxResult(False, "", "the code sent back a result longer than allowed")
    if not data:
        return SandboxResult(False, "", _death(status))
    return _parse_reply(data)


def _read_reply(fd: int, deadline: float) -> tuple[bytes | None, bool]:
    """Everything written to the pipe until it closes (None if too long), and whether it closed in time."""
    chunks, size = [], 0
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                return None, False
            chunk = os.read(fd, 1 << 20)
            if not chunk:  # end of file: the child closed the pipe by exiting
                return (b"".join(chunks) if size <= MAX_REPLY_BYTES else None), True
            size += len(chunk)
            if size <= MAX_REPLY_BYTES:
                chunks.append(chunk)


def _wait(pid: int, deadline: float) -> int | None:
    """The child's exit status, or None if it is still running at the deadline (the pipe closing
    does not prove the child exited: the code could have closed it)."""
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return 0
        if done:
            return status
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.002)


def _kill(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            target()
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _parse_reply(data: bytes) -> SandboxResult:
    """The child's reply, checked: agent code could have written to the pipe itself. The counts of
    brackets and separators bound what parsing may build before anything is parsed."""
    if too_many_items(data):
        return SandboxResult(False, "", "the code sent back a malformed result")
    try:
        reply = json.loads(data)
    except (ValueError, RecursionError, MemoryError):
        return SandboxResult(False, "", "the code sent back a malformed result")
    return _reply_result(reply)


def _reply_result(reply: Any) -> SandboxResult:
    """A parsed reply as a result, its fields checked."""
    try:
        ok, output, error = reply["ok"], reply["output"], reply["error"]
        if not (isinstance(ok, bool) and isinstance(output, str) and (error is None or isinstance(error, str))):
            raise TypeError
    except (KeyError, TypeError):
        return SandboxResult(False, "", "the code sent back a malformed result")
    return SandboxResult(ok, output, error, reply.get("payload"))


def _death(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"the code crashed (signal {os.WTERMSIG(status)}); it may have exceeded its memory budget"
    return f"the code stopped without a result (exit code {os.waitstatus_to_exitcode(status)})"


def describe_limits(limits: Limits) -> str:
    return f"{limits.seconds:g} s and {limits.memory_mb} MB ({math.ceil(limits.output_chars / 1000)}k chars of output)"
