"""Formula evaluation with the ``formulas`` library (an Excel formula parser and evaluator).

Why the detours:
- Compiling a formula takes about a millisecond, so compiled formulas are cached by text, and
  references are replaced by placeholders first: ``=B2*C2`` and ``=B3*C3`` share one compiled
  function and only the arrays passed in differ.
- Sheets-only references (``A2:A``, ``Sheet!A:A``) are resolved here, not by the library; whole
  columns are clipped to the rows that hold data, the same rows for every range on a sheet, so
  ``SUMIF(A:A, ..., B:B)`` gets arrays of one shape.
- ``TODAY()``/``NOW()`` read the store's fixed clock and ``RAND()``/``RANDBETWEEN()`` a stable hash,
  never the wall clock or a global random generator.
- Values are computed lazily per spreadsheet version, memoised, with an explicit stack (no
  recursion limit on long chains) and cycle detection: every cell on a cycle is ``#REF!``.
"""

from __future__ import annotations

import contextvars
import logging
import math
import re
import threading
from bisect import bisect_left
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from toolbench.core.seeding import stable_uniform
from toolbench.mock_services.sheets import bounded_functions, refs, work
from toolbench.mock_services.sheets.a1 import Rect, parse_bounds, split_sheet
from toolbench.mock_services.sheets.pivot import pivot_output
from toolbench.mock_services.sheets.values import CIRCULAR_MESSAGE, ErrorValue, error

if TYPE_CHECKING:
    from toolbench.mock_services.sheets.model import Sheet, Spreadsheet

_ENGINE_LOCK = threading.RLock()
_CACHE_SIZE = 4096
_COMPILED: OrderedDict[str, Compiled | ErrorValue] = OrderedDict()  # by placeholder text
_PREPARED: OrderedDict[str, Compiled | ErrorValue] = OrderedDict()  # by formula text as stored
#: Results by (placeholder text, clock, input values): a formula is a pure function of its inputs, so
#: after an edit only formulas whose inputs changed reach the engine again.
_RESULTS: OrderedDict[tuple[Any, ...], tuple[Any, int]] = OrderedDict()  # (value, budget units it cost)
_RESULTS_SIZE = 50_000
_RESULT_INPUT_LIMIT = 2_000
_VOLATILE = {"RAND", "RANDBETWEEN"}
#: Input cells (range areas) one version of a spreadsheet may feed to its formulas. Real Sheets
#: gives up on over-heavy sheets too; here the cap keeps one request, and the scoring that reads
#: the book, within a second or two however many whole-range formulas code writes. Counting
#: cells, not seconds, keeps the outcome the same on every machine.
EVALUATION_BUDGET_CELLS = 250_000
#: What compiling and computing one formula cell costs in that budget (so at most 2,500 formula
#: cells per version, about 5 s); arrays built and LAMBDA calls are charged too (bounded_functions).
FORMULA_COST = 100
#: Formulas longer than this are not compiled (an error in the cell); long ones also pay for each
#: character past FREE_FORMULA_CHARS, since compiling a 4,000-character formula takes about a second.
MAX_FORMULA_CHARS = 4_000
FREE_FORMULA_CHARS = 200
FORMULA_COST_PER_CHAR = 25
TOO_LONG_MESSAGE = f"This formula is longer than {MAX_FORMULA_CHARS:,} characters, the most this spreadsheet computes."
BUDGET_MESSAGE = "This formula was not calculated: the spreadsheet's formulas read too many cells."
TEXT_LIMIT_MESSAGE = f"Text result of formula is longer than the limit of {bounded_functions.TEXT_LIMIT} characters."
_CACHED_TEXT_LIMIT = 1_000  # longer text results are not kept in the shared cache
_NOW = contextvars.ContextVar("toolbench_sheets_now", default=45306.375)
#: [seed text, draws so far] of the cell being computed; RAND() draws from it.
_RAND_STATE: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar("toolbench_sheets_rand", default=None)
_PLACEHOLDER = "AAA{}"
_PLACEHOLDER_RE = re.compile(r"^AAA([0-9]+)$")
_FUNCTION_NAME = re.compile(r"(?<![\w.$])([A-Za-z_][\w.]*)\s*\(")
#: Functions that look at where a reference points, not just at its values: compiled as written.
_ADDRESS_FUNCTIONS = {"OFFSET", "INDIRECT", "ADDRESS", "CELL", "FORMULATEXT", "ISFORMULA", "ISREF"}
_DATE_RESULTS = {"DATE", "TODAY", "DATEVALUE", "EDATE", "EOMONTH", "WORKDAY"}
_NO_FORMAT = {
    "COUNT",
    "COUNTA",
    "COUNTIF",
    "COUNTIFS",
    "COUNTBLANK",
    "COUNTUNIQUE",
    "LEN",
    "ROWS",
    "COLUMNS",
    "ROW",
    "COLUMN",
    "MATCH",
    "RANK",
    "YEAR",
    "MONTH",
    "DAY",
    "WEEKDAY",
    "HOUR",
    "MINUTE",
    "SECOND",
    "FIND",
    "SEARCH",
}
_engine: dict[str, Any] = {}


def _load_engine() -> dict[str, Any]:
    """Import ``formulas`` once, silence its dispatch logging, and make its volatile functions deterministic."""
    if _engine:
        return _engine
    with _ENGINE_LOCK:
        if _engine:
            return _engine
        import formulas
        import schedula
        from formulas.functions import COMPILING, get_functions, replace_empty, wrap_func, wrap_impure_func, wrap_ufunc
        from formulas.tokens.operand import Error, XlError

        logging.getLogger("schedula").setLevel(logging.CRITICAL)
        functions = get_functions()

        def today() -> float:
            return float(math.floor(_NOW.get()))

        def now() -> float:
            return float(_NOW.get())

        def rand() -> float:
            state = _RAND_STATE.get()
            if state is None:  # outside a Calculator (e.g. constant folding while compiling)
                state = ["", 0]
            state[1] += 1
            return stable_uniform("RAND", state[0], state[1])

        def randbetween(bottom: Any, top: Any) -> Any:
            low, high = math.ceil(float(np.ravel(bottom)[0])), math.floor(float(np.ravel(top)[0]))
            if high < low:
                return Error.errors["#NUM!"]
            return float(low + math.floor(rand() * (high - low + 1)))

        for name, function in (("TODAY", today), ("NOW", now), ("RAND", rand)):
            functions[name] = {
                "extra_inputs": OrderedDict([(COMPILING, False)]),
                "function": wrap_impure_func(wrap_func(function)),
            }
        functions["RANDBETWEEN"] = wrap_func(randbetween)
        bounded_functions.install(functions, wrap_ufunc, replace_empty, Error.errors)
        import formulas.functions.date
        import formulas.functions.text

        bounded_functions.install_linear_re(formulas.functions, formulas.functions.text, formulas.functions.date)
        from formulas.functions.operators import OPERATORS

        bounded_functions.bound_operators(OPERATORS, Error.errors)
        _engine.update(
            parser=formulas.Parser(),
            functions=functions,
            errors=Error.errors,
            XlError=XlError,
            EMPTY=schedula.EMPTY,
        )
        return _engine


def warm() -> None:
    """Load and exercise the engine once (its first compile takes about a second)."""
    compile_formula("=SUM(A1:A2)+1")


@dataclass
class Compiled:
    """A compiled formula: the function, the names of its inputs, and the references behind placeholders."""

    function: Any
    inputs: list[str]
    refs: list[refs.Ref]
    top_function: str | None
    key: str = ""
    volatile: bool = False


def resolve_positions(formula: str, row: int, col: int) -> str:
    """``ROW()``/``COLUMN()`` and ``ROW(ref)``/``COLUMN(ref)`` replaced by the numbers they stand for.

    The engine only sees values, never where they came from, so positions are filled in here.
    """
    if "ROW" not in formula.upper() and "COLUMN" not in formula.upper():
        return formula
    segments = refs.tokenize(formula)
    out: list[str] = []
    index = 0
    while index < len(segments):
        part = segments[index]
        if isinstance(part, str):
            part = re.sub(r"(?i)(?<![\w.])ROW\(\s*\)", str(row + 1), part)
            part = re.sub(r"(?i)(?<![\w.])COLUMN\(\s*\)", str(col + 1), part)
            match = re.search(r"(?i)(?<![\w.])(ROW|COLUMN)\(\s*$", part)
            if match and index + 1 < len(segments):
                ref = segments[index + 1]
                after = segments[index + 2] if index + 2 < len(segments) else ""
                if isinstance(ref, refs.Ref) and isinstance(after, str) and after.lstrip().startswith(")"):
                    number = ref.r0 if match.group(1).upper() == "ROW" else ref.c0
                    if number is not None:  # rejoin and look again: "ROW(A1)+COLUMN(B1)"
                        rest = part[: match.start()] + str(number + 1) + after.lstrip()[1:]
                        segments = segments[:index] + [rest] + segments[index + 3 :]
                        continue
            out.append(part)
        else:
            out.append(part.text())
        index += 1
    return "".join(out)


def _top_function(formula: str) -> str | None:
    match = re.match(r"^=\s*([A-Za-z_][\w.]*)\s*\(", formula)
    return match.group(1).upper() if match else None


def compile_formula(formula: str) -> Compiled | ErrorValue:
    """The compiled form of ``formula`` (cached), or the error the cell shows (#ERROR!, #NAME?)."""
    with _ENGINE_LOCK:
        prepared = _PREPARED.get(formula)
        if prepared is not None:
            _PREPARED.move_to_end(formula)
            return prepared
    prepared = _compile(formula)
    with _ENGINE_LOCK:
        _PREPARED[formula] = prepared
        if len(_PREPARED) > _CACHE_SIZE:
            _PREPARED.popitem(last=False)
    return prepared


def _compile(formula: str) -> Compiled | ErrorValue:
    if len(formula) > MAX_FORMULA_CHARS:  # compiling takes time that grows faster than the length
        return error("#ERROR!", TOO_LONG_MESSAGE)
    segments = refs.tokenize(formula)
    text_parts = "".join(part for part in segments if isinstance(part, str))
    names = {name.upper() for name in _FUNCTION_NAME.findall(re.sub(r'"(?:[^"]|"")*"', '""', text_parts))}
    found: list[refs.Ref] = []
    if names & _ADDRESS_FUNCTIONS:
        key = formula
    else:
        index: dict[str, int] = {}
        pieces = []
        for part in segments:
            if isinstance(part, str):
                pieces.append(part)
            else:
                spelled = part.text()
                if spelled not in index:
                    index[spelled] = len(found)
                    found.append(part)
                pieces.append(_PLACEHOLDER.format(index[spelled] + 1))
        key = "".join(pieces)
    with _ENGINE_LOCK:
        cached = _COMPILED.get(key)
        if cached is not None:
            _COMPILED.move_to_end(key)
            return _with_refs(cached, found)
        engine = _load_engine()
        unknown = sorted(name for name in names if name not in engine["functions"])
        if unknown:
            result: Compiled | ErrorValue = error("#NAME?", f"Unknown function: '{unknown[0].lower()}'.")
        else:
            try:
                function = engine["parser"].ast(key)[1].compile()
                volatile = bool(names & _VOLATILE)
                result = Compiled(function, list(function.inputs), [], _top_function(formula), key, volatile)
            except Exception:  # the library raises many kinds of errors for text it cannot parse
                result = error("#ERROR!", "Formula parse error.")
        _COMPILED[key] = result
        if len(_COMPILED) > _CACHE_SIZE:
            _COMPILED.popitem(last=False)
        return _with_refs(result, found)


def _with_refs(compiled: Compiled | ErrorValue, found: list[refs.Ref]) -> Compiled | ErrorValue:
    if isinstance(compiled, ErrorValue):
        return compiled
    return Compiled(compiled.function, compiled.inputs, found, compiled.top_function, compiled.key, compiled.volatile)


def _to_engine(value: Any) -> Any:
    engine = _engine
    if value is None:
        return engine["EMPTY"]
    if isinstance(value, ErrorValue):
        return engine["errors"].get(value.code, engine["errors"]["#VALUE!"])
    return value


def _from_engine(result: Any) -> Any:
    """A library result as an effective cell value (the top-left value of an array result)."""
    engine = _engine
    while isinstance(result, np.ndarray):
        if result.size == 0:
            return None
        result = result.ravel()[0]
    if result is engine["EMPTY"] or result is None:
        return None
    if isinstance(result, engine["XlError"]):
        return error(str(result))
    if isinstance(result, (bool, np.bool_)):
        return bool(result)
    if isinstance(result, (int, float, np.integer, np.floating)):
        number = float(result)
        return number if math.isfinite(number) else error("#NUM!")
    if isinstance(result, str):
        return result
    return error("#VALUE!")


class Calculator:
    """Computed values of one spreadsheet version: formula results and pivot table outputs."""

    def __init__(self, book: Spreadsheet, now_serial: float):
        self.book = book
        self.now_serial = now_serial
        self.memo: dict[tuple[int, int, int], Any] = {}
        self.formats: dict[tuple[int, int, int], dict[str, Any] | None] = {}
        self._visiting: set[tuple[int, int, int]] = set()
        self._cyclic: set[tuple[int, int, int]] = set()
        self._formula_columns: dict[int, dict[int, list[int]]] = {}
        self._extent: dict[int, tuple[int, int]] = {}
        self._overlays: dict[int, dict[tuple[int, int], tuple[Any, dict[str, Any] | None]]] = {}
        self._overlay_busy: set[int] = set()
        self.budget = EVALUATION_BUDGET_CELLS

    # ------------------------------------------------------------------ public reads
    def value(self, sheet: Sheet, row: int, col: int) -> Any:
        """The effective value of a cell: its literal, its formula's result, or a pivot table's output."""
        overlay = self.overlay(sheet)
        if overlay and (row, col) in overlay:
            return overlay[(row, col)][0]
        cell = sheet.cells.get((row, col))
        if cell is None:
            return None
        if cell.formula is None:
            return cell.value
        key = (sheet.sheet_id, row, col)
        if key not in self.memo:
            if key in self._visiting:
                return error("#REF!", CIRCULAR_MESSAGE)
            self._evaluate(key)
        return self.memo[key]

    def number_format(self, sheet: Sheet, row: int, col: int) -> dict[str, Any] | None:
        """The number format the cell displays with: its own, else one inferred for a formula or pivot output."""
        cell = sheet.cells.get((row, col))
        if cell is not None and cell.format and cell.format.get("numberFormat"):
            return cell.format["numberFormat"]
        overlay = self.overlay(sheet)
        if overlay and (row, col) in overlay:
            return overlay[(row, col)][1]
        if cell is not None and cell.formula is not None:
            key = (sheet.sheet_id, row, col)
            if key not in self.memo:
                self.value(sheet, row, col)
            return self.formats.get(key)
        return None

    def extent(self, sheet: Sheet) -> tuple[int, int]:
        """(rows, columns) spanned by values, formulas and pivot outputs: where open ranges stop."""
        found = self._extent.get(sheet.sheet_id)
        if found is None:
            rows, cols = sheet.content_extent()
            for row, col in self.overlay(sheet):
                rows, cols = max(rows, row + 1), max(cols, col + 1)
            found = self._extent[sheet.sheet_id] = (rows, cols)
        return found

    def overlay(self, sheet: Sheet) -> dict[tuple[int, int], tuple[Any, dict[str, Any] | None]]:
        """Pivot table outputs on ``sheet``: (row, col) -> (value, number format)."""
        found = self._overlays.get(sheet.sheet_id)
        if found is not None:
            return found
        anchors = [(pos, cell.pivot) for pos, cell in sheet.cells.items() if cell.pivot]
        if not anchors or sheet.sheet_id in self._overlay_busy:
            found = {}
        else:
            self._overlay_busy.add(sheet.sheet_id)
            try:
                found = {}
                for (row, col), definition in sorted(anchors, key=lambda item: item[0]):
                    found.update(pivot_output(self, sheet, row, col, definition))
            finally:
                self._overlay_busy.discard(sheet.sheet_id)
        self._overlays[sheet.sheet_id] = found
        return found

    # ------------------------------------------------------------------ references
    def resolve(self, host: Sheet, name: str, compiled: Compiled) -> tuple[Sheet, Rect] | ErrorValue:
        """The sheet and rectangle an input of a compiled formula stands for."""
        match = _PLACEHOLDER_RE.match(name)
        if match and int(match.group(1)) <= len(compiled.refs):
            return self.resolve_ref(host, compiled.refs[int(match.group(1)) - 1])
        named = self.book.named_range(name)
        if named is not None:
            target = self.book.sheet_by_id(named["sheetId"])
            if target is None:
                return error("#REF!")
            return target, named["range"]
        try:
            sheet_name, cells = split_sheet(name)
        except ValueError:
            return error("#NAME?", f"Unknown range name: '{name}'.")
        bounds = parse_bounds(cells)
        if bounds is None:
            return error("#NAME?", f"Unknown range name: '{name}'.")
        ref = refs.Ref(
            sheet_name,
            bounds.r0,
            bounds.c0,
            None if bounds.r1 is None else bounds.r1 - 1,
            None if bounds.c1 is None else bounds.c1 - 1,
            is_range=True,
        )
        return self.resolve_ref(host, ref)

    def resolve_ref(self, host: Sheet, ref: refs.Ref) -> tuple[Sheet, Rect] | ErrorValue:
        target = host if ref.sheet is None else self.book.sheet_by_title(ref.sheet)
        if target is None:
            return error("#REF!", f"Unresolved sheet name '{ref.sheet}'.")
        rows, cols = self.extent(target)
        r0 = ref.r0 if ref.r0 is not None else 0
        c0 = ref.c0 if ref.c0 is not None else 0
        r1 = ref.r1 + 1 if ref.r1 is not None else min(target.row_count, max(rows, r0 + 1))
        c1 = ref.c1 + 1 if ref.c1 is not None else min(target.column_count, max(cols, c0 + 1))
        if r1 > target.row_count or c1 > target.column_count or r0 >= r1 or c0 >= c1:
            return error("#REF!", "Range exceeds grid limits.")
        return target, Rect(r0, r1, c0, c1)

    def formula_cells_in(self, sheet: Sheet, rect: Rect) -> list[tuple[int, int, int]]:
        columns = self._formula_columns.get(sheet.sheet_id)
        if columns is None:
            columns = {}
            for (row, col), cell in sorted(sheet.cells.items()):
                if cell.formula is not None:
                    columns.setdefault(col, []).append(row)
            self._formula_columns[sheet.sheet_id] = columns
        found = []
        # The range's own columns when it spans fewer than the sheet has formula columns (18,000
        # formula columns read one by one for each reference took minutes).
        wanted = range(rect.c0, rect.c1) if rect.cols < len(columns) else sorted(columns)
        self.budget -= min(rect.cols, len(columns))
        for col in wanted:
            rows = columns.get(col)
            if rows is not None and rect.c0 <= col < rect.c1:
                start = bisect_left(rows, rect.r0)
                for row in rows[start:]:
                    if row >= rect.r1:
                        break
                    found.append((sheet.sheet_id, row, col))
        return found

    def array(self, sheet: Sheet, rect: Rect) -> np.ndarray:
        """The effective values of ``rect`` as an object array for the engine."""
        out = np.empty((rect.rows, rect.cols), dtype=object)
        out.fill(_engine["EMPTY"])  # np.full would turn the EMPTY token (a str subclass) into a plain str
        overlay = self.overlay(sheet)
        if rect.rows * rect.cols <= len(sheet.cells) + len(overlay):
            for row in range(rect.r0, rect.r1):
                for col in range(rect.c0, rect.c1):
                    value = self.value(sheet, row, col)
                    if value is not None:
                        out[row - rect.r0, col - rect.c0] = _to_engine(value)
            return out
        positions = {pos for pos in sheet.cells if rect.contains(*pos)}
        positions.update(pos for pos in overlay if rect.contains(*pos))
        for row, col in positions:
            value = self.value(sheet, row, col)
            if value is not None:
                out[row - rect.r0, col - rect.c0] = _to_engine(value)
        return out

    # ------------------------------------------------------------------ evaluation
    def _length_cost(self, key: tuple[int, int, int]) -> int:
        sheet = self.book.sheet_by_id(key[0])
        cell = sheet.cells.get((key[1], key[2])) if sheet else None
        if cell is None or not cell.formula:
            return 0
        return max(0, len(cell.formula) - FREE_FORMULA_CHARS) * FORMULA_COST_PER_CHAR

    def _dependencies(self, key: tuple[int, int, int]) -> list[tuple[int, int, int]]:
        sheet = self.book.sheet_by_id(key[0])
        cell = sheet.cells.get((key[1], key[2])) if sheet else None
        if sheet is None or cell is None or cell.formula is None:
            return []
        compiled = compile_formula(resolve_positions(cell.formula, key[1], key[2]))
        if isinstance(compiled, ErrorValue):
            return []
        found: list[tuple[int, int, int]] = []
        for name in compiled.inputs:
            target = self.resolve(sheet, name, compiled)
            if not isinstance(target, ErrorValue):
                found.extend(self.formula_cells_in(*target))
        return found

    def _evaluate(self, start: tuple[int, int, int]) -> None:
        """Compute ``start`` and every formula it depends on, deepest first."""
        stack = [start]
        expanded: set[tuple[int, int, int]] = set()
        while stack:
            key = stack[-1]
            if key in self.memo:
                stack.pop()
                continue
            if key not in expanded:
                self._check_deadline()
                expanded.add(key)
                self.budget -= FORMULA_COST + self._length_cost(key)  # before compiling: texts may differ (ROW())
                if self.budget < 0:
                    self.memo[key] = error("#ERROR!", BUDGET_MESSAGE)
                    stack.pop()
                    continue
                self._visiting.add(key)
                pushed, base = False, len(stack)
                dependencies = self._dependencies(key)
                self.budget -= len(dependencies)  # walking them is work too: 2,600 formulas reading each other
                for dep in dependencies:
                    if self.budget < 0:
                        break
                    if dep in self.memo:
                        continue
                    if dep in self._visiting:
                        self._mark_cycle(stack, dep)
                    else:
                        stack.append(dep)
                        pushed = True
                if self.budget < 0:
                    del stack[base:]  # the dependencies just pushed, then the key itself
                    self.memo[key] = error("#ERROR!", BUDGET_MESSAGE)
                    self._visiting.discard(key)
                    stack.pop()
                    continue
                if pushed:
                    continue
            self.memo[key] = self._compute(key)
            self._visiting.discard(key)
            stack.pop()

    def _check_deadline(self) -> None:
        """Stop the walk once the caller's time is up (work.DeadlineExceeded); the values computed
        so far stay valid, and the next read starts a walk of its own."""
        try:
            work.check_deadline()
        except work.DeadlineExceeded:
            self._visiting.clear()
            raise

    def _mark_cycle(self, stack: list[tuple[int, int, int]], back_to: tuple[int, int, int]) -> None:
        for key in reversed(stack):
            self.budget -= 1  # charged, as the walk can be as long as the stack
            if key in self._visiting:
                self._cyclic.add(key)
            if key == back_to:
                break

    def _compute(self, key: tuple[int, int, int]) -> Any:
        sheet = self.book.sheet_by_id(key[0])
        assert sheet is not None
        cell = sheet.cells[(key[1], key[2])]
        compiled = compile_formula(resolve_positions(cell.formula or "=", key[1], key[2]))
        if key in self._cyclic:
            return error("#REF!", CIRCULAR_MESSAGE)
        if isinstance(compiled, ErrorValue):
            return compiled
        arguments, targets = [], []
        for name in compiled.inputs:
            target = self.resolve(sheet, name, compiled)
            if isinstance(target, ErrorValue):
                arguments.append(np.array([[_to_engine(target)]], dtype=object))
            else:
                self.budget -= target[1].rows * target[1].cols  # charged before the array is built
                if self.budget < 0:
                    return error("#ERROR!", BUDGET_MESSAGE)
                targets.append(target)
                arguments.append(self.array(*target))
        if key in self._cyclic:
            return error("#REF!", CIRCULAR_MESSAGE)
        cache_key = _result_key(compiled, self.now_serial, arguments)
        if cache_key is not None:
            with _ENGINE_LOCK:
                if cache_key in _RESULTS:
                    _RESULTS.move_to_end(cache_key)
                    value, spent = _RESULTS[cache_key]
                    self.budget -= spent  # what computing it cost: the same with or without the cache
                    if self.budget < 0:
                        return error("#ERROR!", BUDGET_MESSAGE)
                    if isinstance(value, float):
                        self.formats[key] = self._inferred_format(compiled, targets)
                    return value
        now_token = _NOW.set(self.now_serial)
        rand_token = _RAND_STATE.set([f"{self.book.spreadsheet_id}:{key}:{self.book.version}", 0])
        charge_token = bounded_functions.CHARGE.set(self._charge)
        budget_before = self.budget
        try:
            with _ENGINE_LOCK:
                result = compiled.function(*arguments)
            value = _from_engine(result)
        except Exception as exc:  # the engine reports unsupported cases by raising
            cause = exc.args[-1] if exc.args else None
            unknown = isinstance(cause, NotImplementedError)
            value = error("#NAME?", "Unknown function.") if unknown else error("#VALUE!")
        finally:
            _NOW.reset(now_token)
            _RAND_STATE.reset(rand_token)
            bounded_functions.CHARGE.reset(charge_token)
        if self.budget < 0:  # a function's arrays or LAMBDA calls spent it
            return error("#ERROR!", BUDGET_MESSAGE)
        if isinstance(value, str) and len(value) > bounded_functions.TEXT_LIMIT:
            value = error("#VALUE!", TEXT_LIMIT_MESSAGE)
        if isinstance(value, str) and len(value) > _CACHED_TEXT_LIMIT:
            cache_key = None
        if cache_key is not None:
            with _ENGINE_LOCK:
                _RESULTS[cache_key] = (value, budget_before - self.budget)
                if len(_RESULTS) > _RESULTS_SIZE:
                    _RESULTS.popitem(last=False)
        if isinstance(value, float):
            self.formats[key] = self._inferred_format(compiled, targets)
        return value

    def _charge(self, units: int) -> bool:
        self.budget -= units
        return self.budget >= 0

    def _inferred_format(self, compiled: Compiled, targets: list[tuple[Sheet, Rect]]) -> dict[str, Any] | None:
        """The number format a formula result shows without one of its own, as the product infers it."""
        top = compiled.top_function
        if top in _DATE_RESULTS:
            return {"type": "DATE", "pattern": "M/d/yyyy"}
        if top == "NOW":
            return {"type": "DATE_TIME", "pattern": "M/d/yyyy H:mm:ss"}
        if top in _NO_FORMAT:
            return None
        for sheet, rect in targets:
            for row in range(rect.r0, min(rect.r1, rect.r0 + 10_000)):
                for col in range(rect.c0, rect.c1):
                    cell = sheet.cells.get((row, col))
                    if cell is None or not cell.has_content:
                        continue
                    fmt = self.number_format(sheet, row, col)
                    if fmt:
                        return dict(fmt)
        return None


def _tagged(item: Any) -> tuple[str, Any]:
    """A hashable stand-in that keeps types apart (the EMPTY token is a str; True == 1.0)."""
    if item is _engine["EMPTY"]:
        return ("e", None)
    if isinstance(item, _engine["XlError"]):
        return ("x", str(item))
    return (type(item).__name__, item)


def _result_key(compiled: Compiled, now_serial: float, arguments: list[np.ndarray]) -> tuple[Any, ...] | None:
    """The key of a computed result, or None when it must not be reused (RAND, large inputs)."""
    if compiled.volatile or sum(argument.size for argument in arguments) > _RESULT_INPUT_LIMIT:
        return None
    parts: list[Any] = [compiled.key, now_serial]
    for argument in arguments:
        parts.append(argument.shape)
        parts.extend(_tagged(item) for item in argument.flat)
    return tuple(parts)


def calculator(book: Spreadsheet, now_serial: float) -> Calculator:
    """The calculator of the book's current version (created on first use after each change). The
    engine loads on the first formula compiled: a book without formulas never needs it (the clean
    worker's warm-up writes none, so its children are forked without the engine's memory)."""
    if book.calc is None or book.calc.book is not book:
        book.calc = Calculator(book, now_serial)
    return book.calc
