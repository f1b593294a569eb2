"""Layer 2 of the sandbox, the names: what agent code can see and reach once it runs.

The code sees only safe builtins (no ``open``, ``eval``, ``exec``, ``compile``, ``__import__``,
``globals``...) and the names the task provides. numpy, pandas and gspread are untrusted surface:
an attribute of anything but a plain value is read only when its owner and name are on the
allowlist (``core.surface``, generated and reviewed), so members that free, reallocate or map
memory under a live view, raw buffers, code runners, modules and frames are out of reach, and a
library upgrade's new members stay out until they are reviewed. Items and iterated values pass
the same checks; modules and classes cannot be rewritten; calls whose arguments could alias
memory check them first (``core.surface``'s argument rules).

These guards are RestrictedPython's hooks (``_getattr_``, ``_write_``...) in the code's globals
(``restricted_globals``). They trust compile time (layer 1) to have refused ``_`` names, so that
the code cannot name the hooks or the real builtins; what pandas and numpy look up by name, past
these hooks, ``disarm`` covers.
"""

from __future__ import annotations

import inspect
import operator
import re
import sys
import types
from collections.abc import Callable
from types import MappingProxyType, ModuleType
from typing import Any

from RestrictedPython import safe_builtins
from RestrictedPython.Guards import guarded_iter_unpack_sequence, guarded_unpack_sequence, safer_getattr

from toolbench.core import reachable
from toolbench.core.sandbox import for_tests
from toolbench.core.sandbox.terms import PACKAGE, shown

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


class Printer:
    """RestrictedPython routes ``print`` through ``_print_``; this one writes to a bounded buffer."""

    def __init__(self, limit: int):
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit

    def __call__(self, _getattr: Any = None) -> Printer:
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
        namespace = {"_wrapped": value, "_rules": rules, "__module__": PACKAGE, "__toolbench_checked__": True}
        _STAND_INS[value] = _GuardedClass(value.__name__, (), namespace)
    return _STAND_INS[value]


def refuse_unknown_object(obj: Any) -> Any:
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
                given[parameter] = copied(given[parameter])
                args, kwargs = bound.args, bound.kwargs
            continue
        check, allowed = _RULE_CHECKS[rule]
        if parameter in given and not check(given[parameter]):
            given_text = shown(given[parameter], repr, 80)
            raise ValueError(f"{parameter}={given_text} is not available here ({allowed})")
    return function(*args, **kwargs)


def copied(value: Any, depth: int = 0) -> Any:
    """Arrays and array-likes (a Series, an Index; in lists and tuples too) as numpy arrays of their
    own; anything else as it is (pandas builds a new array from a plain list itself)."""
    numpy = sys.modules.get("numpy")
    if numpy is None or reachable.is_plain(value) and not isinstance(value, (list, tuple)):
        return value
    if isinstance(value, numpy.ndarray) or hasattr(type(value), "__array__"):
        return numpy.array(value, copy=True)
    if depth < 3 and type(value) in (list, tuple):
        return type(value)(copied(item, depth + 1) for item in value)
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
    rules = reachable.argument_rules().get(reachable.callable_name(value))
    if not rules:
        return value
    return _stand_in(value, rules) if isinstance(value, type) else _guarded_callable(value, rules)


# Objects whose attributes lead to a code runner: pandas' Styler holds a plain jinja2 Environment,
# whose templates reach dunders and the real builtins.
DENIED_TYPE_MODULES = ("jinja2", "markupsafe", "pandas.io.formats.style")


def _of_denied_type(obj: Any) -> bool:
    module = getattr(type(obj), "__module__", None) or ""
    return module.startswith(DENIED_TYPE_MODULES)


def _module_allowed(name: str) -> bool:
    return name in reachable.ALLOWED_MODULES or name in for_tests.TRUSTED_MODULES_FOR_TESTS


def _checked(value: Any, what: str) -> Any:
    """Refuse values that would take the code out of the sandbox: modules and code-running builtins;
    numpy's array types come back as stand-ins that refuse raw buffers."""
    if isinstance(value, ModuleType) and not _module_allowed(value.__name__):
        raise AttributeError(f"{what}: modules are not available here")
    if any(value is denied for denied in _DENIED_OBJECTS) or _of_denied_type(value):
        raise AttributeError(f"{what}: not available here")
    if isinstance(value, memoryview):  # ndarray.data: writable raw memory, where pointers can be forged
        raise AttributeError(f"{what}: raw memory (memoryview) is not available here")
    if callable(value) and not isinstance(value, _GuardedClass):
        return _with_argument_checks(value)
    return value


_MISSING = object()


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
    trusted = isinstance(obj, ModuleType) and obj.__name__ in for_tests.TRUSTED_MODULES_FOR_TESTS
    if trusted or (_is_own_function(obj) and name in obj.__dict__):  # what the code set, it reads back
        allowed, key = True, None
    else:
        allowed, key = reachable.decision(obj, name)
    if not allowed:
        if _is_label_shortcut(obj, name):  # df.Price: the column, as df["Price"] reads it
            return guarded_getitem(obj, name)
        if reachable.defined(obj, name):
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
    if isinstance(obj, ModuleType) and obj.__name__ not in for_tests.TRUSTED_MODULES_FOR_TESTS:
        raise TypeError(f"the module {obj.__name__} cannot be changed here")
    if isinstance(obj, type):
        raise TypeError(f"the class {obj.__name__} cannot be changed here")
    if isinstance(obj, (list, dict, set, bytearray)) or reachable.is_plain(obj) or _is_own_function(obj):
        return obj
    return _WriteTarget(obj)


#: RestrictedPython's safe builtins that agent code does without: ``setattr``/``delattr`` write past
#: ``_write_`` (RestrictedPython's own guard lets through any object that answers
#: ``_guarded_writes``, which a pandas label does) and past the compile-time layout check;
#: ``id`` and ``hash`` give object addresses, what forged pointers are made of; classes are refused.
_REMOVED_BUILTINS = frozenset({"setattr", "delattr", "id", "hash", "__build_class__", "_getattr_"})


def restricted_globals(names: dict[str, Any], printer: Printer) -> dict[str, Any]:
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
