"""Formula functions whose cost the arguments choose, bounded before they run.

Formulas are evaluated in the env's own process (scoring reads the workbook there), so a formula
must not be able to allocate gigabytes or run for minutes: ``REPT("x", 1e9)``, ``MUNIT(1e5)``,
``MAKEARRAY(1e4, 1e4, ...)`` or a backtracking regular expression. Limits are counts, never
seconds, so every machine computes the same cells:

- text results longer than Google Sheets allows become ``#VALUE!`` (REPT: 32,000 characters;
  other text: 50,000, the limit of a cell), checked before the text is built;
- functions that build arrays or call a LAMBDA per element charge their size to the calculator's
  budget (the same budget the cells formulas read are charged to);
- REGEXMATCH, REGEXEXTRACT and REGEXREPLACE use RE2, as Google Sheets does: linear time, no
  backreferences (an invalid or unsupported expression is ``#REF!``).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import re
import types
from collections.abc import Callable
from typing import Any

import numpy as np
import re2

REPT_LIMIT = 32_000
TEXT_LIMIT = 50_000
LAMBDA_CALL_COST = 100  # budget units per LAMBDA call, as for one formula cell (formula.FORMULA_COST)
MAX_CALL_UNITS = 250_000  # what one call may cost, with or without a calculator (a whole version's budget)

#: Charges units to the active calculator's budget; returns False when the budget is spent.
CHARGE: contextvars.ContextVar[Callable[[int], bool] | None] = contextvars.ContextVar(
    "toolbench_sheets_charge", default=None
)


def _charge(units: float) -> bool:
    if not units <= MAX_CALL_UNITS:  # also refuses NaN
        return False
    charge = CHARGE.get()
    return True if charge is None else charge(int(units))


def _items(value: Any) -> list[Any]:
    """The scalar values of an argument (a 2-D array, a scalar or an error)."""
    try:
        return list(np.ravel(np.asarray(value, dtype=object)))
    except (TypeError, ValueError):
        return [value]


def _number(value: Any) -> float:
    """The largest number among an argument's values (0 when none is a number)."""
    numbers = []
    for item in _items(value):
        try:
            numbers.append(float(item))
        except (TypeError, ValueError):
            continue
    finite = [n for n in numbers if math.isfinite(n)]
    return max(finite, default=0.0) if len(finite) == len(numbers) else math.inf


def _longest(value: Any) -> int:
    return max((len(str(item)) for item in _items(value)), default=0)


def _size(value: Any) -> int:
    return int(np.size(np.asarray(value, dtype=object))) if not callable(value) else 0


def _bounded(function: Callable[..., Any], errors: dict[str, Any], allowed: Callable[..., bool]) -> Callable[..., Any]:
    """``function``, or ``#VALUE!`` when ``allowed(*args)`` says the call would cost too much."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not allowed(*args):
            return np.asarray([[errors["#VALUE!"]]], dtype=object)
        return function(*args, **kwargs)

    return wrapper


def _rept_allowed(text: Any, times: Any = 1, *rest: Any) -> bool:
    return _longest(text) * max(_number(times), 0) <= REPT_LIMIT


def _substitute_allowed(text: Any, old: Any = "", new: Any = "", *rest: Any) -> bool:
    longest_text, longest_new = _longest(text), _longest(new)
    shortest_old = min((len(str(item)) for item in _items(old)), default=0)
    if longest_new <= shortest_old:
        return True  # the text cannot grow
    most_matches = longest_text // max(shortest_old, 1)
    return longest_text + most_matches * (longest_new - shortest_old) <= TEXT_LIMIT


def _munit_allowed(n: Any, *rest: Any) -> bool:
    return _charge(_number(n) ** 2)


def _expand_allowed(array: Any, rows: Any = 1, cols: Any = 1, *rest: Any) -> bool:
    return _charge(max(_number(rows), 1) * max(_number(cols), 1))


def _makearray_allowed(rows: Any, cols: Any = 1, *rest: Any) -> bool:
    return _charge(max(_number(rows), 0) * max(_number(cols), 0) * LAMBDA_CALL_COST)


def _per_element_allowed(*args: Any) -> bool:
    """MAP, REDUCE, SCAN, BYROW, BYCOL: one LAMBDA call per element (at most) of the arrays given."""
    return _charge(max((_size(arg) for arg in args), default=0) * LAMBDA_CALL_COST)


def _mmult_allowed(left: Any, right: Any = 1, *rest: Any) -> bool:
    """The product is rows(left) x cols(right), each cell a dot product over cols(left)."""
    rows, inner = (np.shape(left) + (1, 1))[:2]
    cols = (np.shape(right) + (1, 1))[1] if np.ndim(right) > 1 else 1
    return _charge(float(rows) * float(cols) * max(float(inner), 1.0))


def _wrap_allowed(vector: Any, wrap: Any = 1, *rest: Any) -> bool:
    """WRAPROWS/WRAPCOLS pad the last line to ``wrap`` cells: ceil(n / wrap) lines of ``wrap``."""
    width = max(_number(wrap), 1.0)
    return _charge(math.ceil(max(_size(vector), 1) / width) * width if math.isfinite(width) else math.inf)


def _textsplit_allowed(text: Any, col_delimiter: Any = "", row_delimiter: Any = "", *rest: Any) -> bool:
    """The output is (row pieces) x (most column pieces), padded: bound it by the text's length."""
    longest = _longest(text)
    pieces = longest + 1 if col_delimiter not in ("", None) else 1
    lines = longest + 1 if row_delimiter not in ("", None) else 1
    return _charge(min(pieces * lines, (longest + 1) ** 2) * max(_size(text), 1))


def _lookups_allowed(lookup: Any, within: Any = 1, *rest: Any) -> bool:
    """XLOOKUP, MATCH, RANK, COUNTIF and kin look each value up in the whole range: the scans
    beyond the one the inputs were charged for (a single criterion costs nothing more)."""
    first, second = max(_size(lookup), 1), max(_size(within), 1)
    return _charge(first * second - max(first, second))


BOUNDS: dict[str, Callable[..., bool]] = {
    "MMULT": _mmult_allowed,
    "WRAPROWS": _wrap_allowed,
    "WRAPCOLS": _wrap_allowed,
    "TEXTSPLIT": _textsplit_allowed,
    "XLOOKUP": _lookups_allowed,
    "MATCH": _lookups_allowed,
    "XMATCH": _lookups_allowed,
    "RANK": _lookups_allowed,
    "RANK.EQ": _lookups_allowed,
    "RANK.AVG": _lookups_allowed,
    "COUNTIF": _lookups_allowed,
    "COUNTIFS": _lookups_allowed,
    "SUMIF": _lookups_allowed,
    "AVERAGEIF": _lookups_allowed,
    "REPT": _rept_allowed,
    "SUBSTITUTE": _substitute_allowed,
    "MUNIT": _munit_allowed,
    "EXPAND": _expand_allowed,
    "MAKEARRAY": _makearray_allowed,
    "MAP": _per_element_allowed,
    "REDUCE": _per_element_allowed,
    "SCAN": _per_element_allowed,
    "BYROW": _per_element_allowed,
    "BYCOL": _per_element_allowed,
}


# ----------------------------------------------------------------------------- regular expressions
class _Unsupported(Exception):
    """Not a valid RE2 expression (Sheets answers #REF!)."""


class _TooLong(Exception):
    """The replaced text would pass the cell limit."""


@functools.lru_cache(maxsize=512)
def linear_regex(pattern: str, case_sensitive: bool = True) -> Any:
    """``pattern`` compiled by RE2, as Sheets compiles its expressions: linear time, so no text can
    make a match run for hours. Raises ``re2.error`` for what RE2 does not take."""
    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = case_sensitive
    return re2.compile(pattern, options)


def _compiled(pattern: str) -> Any:
    try:
        return linear_regex(pattern)
    except re2.error:
        raise _Unsupported(pattern) from None


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


_GROUP_REFERENCE = re.compile(r"\$(\d+)")


def regexmatch(text: Any, pattern: Any) -> bool:
    return _compiled(_text(pattern)).search(_text(text)) is not None


def regexextract(text: Any, pattern: Any) -> Any:
    """The first match, or its first capture group when the expression has groups."""
    match = _compiled(_text(pattern)).search(_text(text))
    if match is None:
        raise LookupError("no match")
    return match.group(1) if match.groups() else match.group(0)


def regexreplace(text: Any, pattern: Any, replacement: Any) -> str:
    """Every match replaced; ``$1`` in the replacement is the first capture group."""
    regex, written = _compiled(_text(pattern)), _text(replacement)
    source = _text(text)
    produced = [0]

    def expand(match: Any) -> str:
        def group(reference: re.Match[str]) -> str:
            index = int(reference.group(1))
            return (match.group(index) or "") if index <= len(match.groups()) else reference.group(0)

        piece = _GROUP_REFERENCE.sub(group, written)
        produced[0] += len(piece) - (match.end() - match.start())
        if len(source) + produced[0] > TEXT_LIMIT:
            raise _TooLong
        return piece

    return regex.sub(expand, source)


def regex_functions(
    wrap_ufunc: Callable[..., Any], replace_empty: Callable[..., Any], errors: dict[str, Any]
) -> dict[str, Any]:
    """Google Sheets' REGEX functions over RE2, wrapped like the library's own text functions."""

    def sheets_errors(function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def call(*args: Any) -> Any:
            try:
                return function(*args)
            except _Unsupported:
                return errors["#REF!"]
            except LookupError:
                return errors["#N/A"]
            except _TooLong:
                return errors["#VALUE!"]

        return call

    text_arguments = {
        "input_parser": lambda *a: a,
        "args_parser": lambda *a: (replace_empty(v, "") for v in a),
        "check_nan": False,
    }
    return {
        "REGEXMATCH": wrap_ufunc(sheets_errors(regexmatch), **text_arguments),
        "REGEXEXTRACT": wrap_ufunc(sheets_errors(regexextract), **text_arguments),
        "REGEXREPLACE": wrap_ufunc(sheets_errors(regexreplace), **text_arguments),
    }


def _result_size(*args: Any) -> float:
    """How many cells an element-wise operator builds from ``args`` (broadcast as numpy does)."""
    shapes = [np.shape(arg) for arg in args if isinstance(arg, np.ndarray)]
    try:
        return float(math.prod(np.broadcast_shapes(*shapes))) if shapes else 1.0
    except ValueError:  # shapes that do not broadcast: the engine answers an error itself
        return float(sum(math.prod(shape) for shape in shapes))


def bound_operators(operators: dict[str, Any], errors: dict[str, Any]) -> None:
    """Charge an operator's result before it is built: ``TOCOL(A1:Z999)*TOROW(A1:Z999)`` reads
    52,000 cells (charged as inputs) but would build 675 million."""
    for name, function in list(operators.items()):
        if callable(function) and not getattr(function, "_charged", False):
            operators[name] = _charged(function, errors)


def _charged(function: Callable[..., Any], errors: dict[str, Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not _charge(_result_size(*args)):
            return np.asarray([[errors["#VALUE!"]]], dtype=object)
        return function(*args, **kwargs)

    wrapper._charged = True  # type: ignore[attr-defined]
    return wrapper


class _LinearRe(types.ModuleType):
    """``re`` as the formulas library's own code sees it: ``compile`` and ``match`` go to RE2, so
    the expressions it builds from cell text (COUNTIF's wildcards ``*a*a*a*b`` become ``.*a.*a...``,
    NUMBERVALUE's number pattern) run in linear time; anything RE2 cannot take falls back to ``re``."""

    def __init__(self) -> None:
        super().__init__("re")

    def __getattr__(self, name: str) -> Any:
        return getattr(re, name)  # escape, split, finditer, IGNORECASE, error...

    @staticmethod
    def compile(pattern: Any, flags: int = 0) -> Any:
        if isinstance(pattern, str) and flags in (0, re.IGNORECASE):
            with contextlib.suppress(re2.error):
                return linear_regex(pattern, case_sensitive=not flags)
        return re.compile(pattern, flags)

    def match(self, pattern: Any, string: Any, flags: int = 0) -> Any:
        return self.compile(pattern, flags).match(string)


def install_linear_re(*modules: types.ModuleType) -> None:
    """Give ``modules`` (the library's function modules) the RE2-backed ``re``."""
    shim = _LinearRe()
    for module in modules:
        if getattr(module, "re", None) is re:
            module.re = shim  # type: ignore[attr-defined]


def install(
    functions: dict[str, Any], wrap_ufunc: Callable[..., Any], replace_empty: Callable[..., Any], errors: dict[str, Any]
) -> None:
    """Bound the costly functions of the library's table (and their ``_XLFN.`` aliases) and put
    RE2 behind the REGEX functions (Excel's backtracking REGEXTEST goes)."""
    for name, allowed in BOUNDS.items():
        for key in (name, f"_XLFN.{name}"):
            if key in functions and callable(functions[key]):
                functions[key] = _bounded(functions[key], errors, allowed)
    for key in ("REGEXTEST", "_XLFN.REGEXTEST", "_XLFN.REGEXEXTRACT", "_XLFN.REGEXREPLACE"):
        functions.pop(key, None)
    functions.update(regex_functions(wrap_ufunc, replace_empty, errors))
