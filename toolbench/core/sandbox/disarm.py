"""Layer 2 of the sandbox, continued: the libraries' own ways past the guards, closed in the child.

pandas reaches methods by name (``df.agg("style")``, ``df.apply("eval", ...)``,
``groupby(...).aggregate(obj, "__getattribute__", name)``) and answers unknown attributes with
labels, and some of its internals trust what they were given (codes kept by reference, rows sized
by ``len``, frames grouped by reference and changed afterwards). Entry points that run code,
unpickle, or read and write files in native code (where the audit hook does not see the file)
are replaced. The plan of replacements is built in the process that forks (``disarm_plan``,
kept while the same libraries are loaded) and applied in each child before the code's first
line (``disarm_libraries``). It uses the guards' rules (``guards``) to decide what a lookup by
name may reach.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

from toolbench.core import reachable
from toolbench.core.sandbox.guards import DENIED_NAMES, copied, refuse_unknown_object

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
        if owner is not None and reachable.defined(owner, name):
            # Called by name, a method with argument rules would be called unwrapped: call it directly.
            found = getattr(owner if isinstance(owner, (type, ModuleType)) else type(owner), name, None)
            return (
                reachable.decision(owner, name)[0] and reachable.callable_name(found) not in reachable.argument_rules()
            )
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
            kwargs["default_handler"] = refuse_unknown_object
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
        args = tuple(copied(arg) if not isinstance(arg, str) else arg for arg in args)
        kwargs = {key: copied(value) if not isinstance(value, str) else value for key, value in kwargs.items()}
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


def disarm_plan() -> tuple[tuple[Any, str, Any], ...]:
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


def disarm_libraries() -> None:
    """Replace the DISARMED entry points (and pandas' lookups by name) in this child only."""
    for owner, name, replacement in disarm_plan():
        setattr(owner, name, replacement)
