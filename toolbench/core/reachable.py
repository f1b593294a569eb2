"""The allowlist agent code's attribute reads are checked against: what the sandbox reads at run time.

``reachable.json`` beside this module holds the keys agent code may read (``allowed``), those it
may not with the reason (``denied``), and the argument rules of the allowed callables
(``arguments``); ``toolbench.core.surface`` generates it and checks it, by walking the libraries
through the sandbox's attribute guard. The guard (``sandbox.guards``, ``sandbox.disarm``) asks this
module, which imports nothing of the sandbox, whether ``obj.name`` may be read:

- an attribute of a module is ``module.name`` (``numpy.mean``), and only modules in
  ``ALLOWED_MODULES`` have attributes agent code may read;
- any other attribute is owned by the first class in the object's MRO whose ``__dict__`` defines
  it (for a class, its own MRO, then its metaclass's), else by the object's type:
  ``owner-module.OwnerQualname.name``;
- the plain built-in values and what their own classes define have no key: RestrictedPython's
  rules apply to them.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Iterable
from pathlib import Path
from types import BuiltinMethodType, ClassMethodDescriptorType, MethodDescriptorType, MethodType, ModuleType
from typing import Any

ALLOWLIST_FILE = Path(__file__).with_name("reachable.json")
FORMAT = 1

PLAIN_TYPES: frozenset[type] = frozenset(
    {
        str,
        bytes,
        int,
        float,
        complex,
        bool,
        type(None),
        list,
        tuple,
        dict,
        set,
        frozenset,
        range,
        slice,
        type({}.keys()),
        type({}.values()),
        type({}.items()),
    }
)

#: Modules whose attributes agent code may read (each attribute still needs its key allowed).
ALLOWED_MODULES = frozenset(
    {
        "numpy",
        "numpy.random",
        "numpy.linalg",
        "numpy.fft",
        "numpy.strings",
        "numpy.char",
        "numpy.polynomial",
        "pandas",
        "pandas.api",  # of which only the module pandas.api.types
        "pandas.api.types",
        "pandas.errors",
        "pandas.tseries.offsets",  # pd.offsets
    }
)


def is_plain_class(cls: type) -> bool:
    """A built-in value type, or a built-in exception: RestrictedPython's rules apply to its members."""
    return cls in PLAIN_TYPES or (cls.__module__ == "builtins" and issubclass(cls, BaseException))


def is_plain(obj: Any) -> bool:
    return is_plain_class(type(obj))


def class_key(cls: type) -> str:
    return f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', cls.__name__)}"


def _defining_class(classes: Iterable[type], name: str) -> type | None:
    for cls in classes:
        try:
            if name in vars(cls):
                return cls
        except TypeError:  # a class without a __dict__
            continue
    return None


def owner_of(obj: Any, name: str) -> Any:
    """The module, or the class, that owns ``obj.name``."""
    if isinstance(obj, ModuleType):
        return obj
    if isinstance(obj, type):
        return _defining_class(obj.__mro__, name) or _defining_class(type(obj).__mro__, name) or obj
    return _defining_class(type(obj).__mro__, name) or type(obj)


def key_of(owner: Any, name: str) -> str | None:
    """The allowlist key of ``name`` on ``owner``; None for a plain class (RestrictedPython's rules)."""
    if isinstance(owner, ModuleType):
        return f"{owner.__name__}.{name}"
    if is_plain_class(owner):
        return None
    return f"{class_key(owner)}.{name}"


@functools.cache
def _allowlist_data() -> dict[str, Any]:
    try:
        with open(ALLOWLIST_FILE, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return {"format": FORMAT, "libraries": {}, "allowed": [], "denied": {}}


@functools.cache
def allowlist() -> frozenset[str]:
    """The allowed keys (read once; the fork server reads it before it forks)."""
    return frozenset(_allowlist_data()["allowed"])


_DECISIONS: dict[Any, tuple[bool, str | None]] = {}


def decision(obj: Any, name: str) -> tuple[bool, str | None]:
    """(whether agent code may read ``obj.name``, its key); cached by the object's class (or the
    module or class itself), since the key depends on nothing else."""
    if isinstance(obj, ModuleType):
        cache_key: Any = ("module", obj.__name__, name)
    elif isinstance(obj, type):
        cache_key = ("class", obj, name)
    else:
        cache_key = (type(obj), name)
    try:
        return _DECISIONS[cache_key]
    except (KeyError, TypeError):  # TypeError: an unhashable metaclass instance
        pass
    owner = owner_of(obj, name)
    key = key_of(owner, name)
    if isinstance(obj, ModuleType) and obj.__name__ not in ALLOWED_MODULES:
        result = (False, key)
    elif is_named_tuple(owner) and name in owner._fields:  # a row's field: its item, by name
        result = (True, key)
    else:
        result = (key is None or key in allowlist(), key)
    if len(_DECISIONS) < 100_000:
        with contextlib.suppress(TypeError):
            _DECISIONS[cache_key] = result
    return result


def defined(obj: Any, name: str) -> bool:
    """Whether ``obj.name`` exists without asking ``__getattr__`` (which pandas answers with labels)."""
    if isinstance(obj, ModuleType):
        return name in vars(obj) or name in _module_names(obj)
    classes = obj.__mro__ if isinstance(obj, type) else type(obj).__mro__
    if _defining_class(classes, name) is not None:
        return True
    return name in (getattr(obj, "__dict__", None) or ())


@functools.lru_cache(maxsize=64)
def _module_names(module: ModuleType) -> frozenset[str]:
    """A module's ``dir`` (numpy lists there the submodules its ``__getattr__`` loads lazily)."""
    try:
        return frozenset(dir(module))
    except Exception:  # noqa: BLE001 - a broken __dir__: only what is loaded counts
        return frozenset(vars(module))


def is_named_tuple(owner: Any) -> bool:
    return isinstance(owner, type) and issubclass(owner, tuple) and hasattr(owner, "_fields")


def callable_name(value: Any) -> str | None:
    """A callable's stable name, however it was reached: ``module.Qualname`` of the class, function,
    or (for a bound method) its function; a C method bound to an instance takes its class's module."""
    if isinstance(value, type):
        return class_key(value)
    function = value.__func__ if isinstance(value, MethodType) else value
    qualname = getattr(function, "__qualname__", None)
    module = getattr(function, "__module__", None)
    if module is None and isinstance(value, BuiltinMethodType):
        owner = value.__self__
        module = (owner if isinstance(owner, type) else type(owner)).__module__
    elif module is None and isinstance(value, (MethodDescriptorType, ClassMethodDescriptorType)):
        module = value.__objclass__.__module__  # a C class's method, taken from the class
    if not isinstance(qualname, str) or not isinstance(module, str):
        return None
    return f"{module}.{qualname}"


@functools.cache
def argument_rules() -> dict[str, dict[str, str]]:
    """Callable name -> {parameter: rule}, for the allowed callables that have rules."""
    return _allowlist_data().get("arguments", {})
