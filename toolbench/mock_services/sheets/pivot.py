"""Pivot tables: the output a ``pivotTable`` on an anchor cell displays, recomputed from its source.

The output is what the product shows in the grid: a header row (row group labels, then
``SUM of Sales``-style value labels), one row per group in sort order with outer labels shown on the
first row of their block, ``East Total`` subtotal rows and a ``Grand Total`` row when the group
asks for totals, and, with column groups, one column per column key plus a ``Grand Total`` column.
It is an overlay over the sheet (``formula.Calculator.overlay``), so it follows every change of the source.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from toolbench.mock_services.sheets import work
from toolbench.mock_services.sheets.a1 import Rect
from toolbench.mock_services.sheets.values import ErrorValue, error, formatted

if TYPE_CHECKING:
    from toolbench.mock_services.sheets.computed import ComputedValues
    from toolbench.mock_services.sheets.model import Sheet

Output = dict[tuple[int, int], tuple[Any, dict[str, Any] | None]]
SUMMARIZE_FUNCTIONS = (
    "SUM",
    "COUNTA",
    "COUNT",
    "COUNTUNIQUE",
    "AVERAGE",
    "MAX",
    "MIN",
    "MEDIAN",
    "PRODUCT",
    "STDEV",
    "STDEVP",
    "VAR",
    "VARP",
)
_NUMERIC_RESULT = {"SUM", "AVERAGE", "MAX", "MIN", "MEDIAN", "PRODUCT", "STDEV", "STDEVP", "VAR", "VARP"}


def grid_rect(grid_range: dict[str, Any], sheet: Sheet) -> Rect:
    """A stored GridRange (open sides allowed) as a rectangle on ``sheet``."""

    def index(key: str, default: int) -> int:
        value = grid_range.get(key)
        return int(value) if isinstance(value, int) else default

    return Rect(
        index("startRowIndex", 0),
        index("endRowIndex", sheet.row_count),
        index("startColumnIndex", 0),
        index("endColumnIndex", sheet.column_count),
    )


def sort_key(value: Any) -> tuple[int, Any]:
    """The product's order: numbers, then text (ignoring case), then booleans, errors, blanks last."""
    if value is None or value == "":
        return (4, 0)
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, float):
        return (0, value)
    if isinstance(value, ErrorValue):
        return (3, value.code)
    return (1, str(value).casefold())


def summarize(function: str, items: Iterable[Any]) -> Any:
    present = [item for item in items if item is not None and item != ""]
    numbers = [item for item in present if isinstance(item, float)]
    if function == "COUNTA":
        return float(len(present))
    if function == "COUNT":
        return float(len(numbers))
    if function == "COUNTUNIQUE":
        return float(len({sort_key(item) for item in present}))
    if function == "SUM":
        return float(sum(numbers))
    if function == "PRODUCT":
        return float(math.prod(numbers)) if numbers else 0.0
    if function == "AVERAGE":
        return sum(numbers) / len(numbers) if numbers else error("#DIV/0!")
    if function == "MAX":
        return max(numbers) if numbers else 0.0
    if function == "MIN":
        return min(numbers) if numbers else 0.0
    if function == "MEDIAN":
        return float(statistics.median(numbers)) if numbers else error("#NUM!")
    variance = {
        "STDEV": statistics.stdev,
        "STDEVP": statistics.pstdev,
        "VAR": statistics.variance,
        "VARP": statistics.pvariance,
    }.get(function)
    if variance is not None:
        needed = 2 if function in ("STDEV", "VAR") else 1
        return float(variance(numbers)) if len(numbers) >= needed else error("#DIV/0!")
    return error("#VALUE!")


class _Pivot:
    def __init__(self, calc: ComputedValues, source: Sheet, rect: Rect, definition: dict[str, Any]):
        self.calc = calc
        self.source = source
        self.rect = rect
        self.first_rows: dict[int, dict[Any, int]] = {}  # source column -> key -> first row holding it
        self.rows_groups = [g for g in definition.get("rows") or [] if isinstance(g, dict)]
        self.column_groups = [g for g in definition.get("columns") or [] if isinstance(g, dict)]
        self.values = [v for v in definition.get("values") or [] if isinstance(v, dict)]
        self.header = [calc.value(source, rect.r0, col) for col in range(rect.c0, rect.c1)]
        self.records: list[list[Any]] = []
        self.record_rows: list[int] = []
        for row in range(rect.r0 + 1, rect.r1):
            record = [calc.value(source, row, col) for col in range(rect.c0, rect.c1)]
            if any(item is not None and item != "" for item in record):
                self.records.append(record)
                self.record_rows.append(row)

    def offset(self, item: dict[str, Any]) -> int:
        offset = item.get("sourceColumnOffset", 0)
        if not isinstance(offset, int) or not 0 <= offset < len(self.header):
            raise ValueError("sourceColumnOffset out of the source range")
        return offset

    def header_text(self, offset: int) -> str:
        value = self.header[offset]
        return formatted(value, self.calc.number_format(self.source, self.rect.r0, self.rect.c0 + offset))

    def group_label(self, group: dict[str, Any]) -> str:
        label = group.get("label")
        return label if isinstance(label, str) and label else self.header_text(self.offset(group))

    def value_label(self, value: dict[str, Any]) -> str:
        name = value.get("name")
        if isinstance(name, str) and name:
            return name
        return f"{value.get('summarizeFunction', 'SUM')} of {self.header_text(self.offset(value))}"

    def column_format(self, offset: int) -> dict[str, Any] | None:
        for row in self.record_rows:
            col = self.rect.c0 + offset
            if self.calc.value(self.source, row, col) is not None:
                return self.calc.number_format(self.source, row, col)
        return None

    def aggregate(self, records: list[list[Any]], value: dict[str, Any]) -> Any:
        function = str(value.get("summarizeFunction", "SUM"))
        if value.get("formula"):
            return error("#VALUE!", "Calculated pivot fields are not supported.")
        offset = self.offset(value)
        return summarize(function, (record[offset] for record in records))

    def value_format(self, value: dict[str, Any]) -> dict[str, Any] | None:
        if str(value.get("summarizeFunction", "SUM")) in _NUMERIC_RESULT:
            return self.column_format(self.offset(value))
        return None

    def keys(self, group: dict[str, Any], records: list[list[Any]]) -> list[Any]:
        offset = self.offset(group)
        distinct: dict[tuple[int, Any], Any] = {}
        for record in records:
            distinct.setdefault(sort_key(record[offset]), record[offset])
        ordered = sorted(distinct.items(), key=lambda item: item[0])
        bucket = group.get("valueBucket")
        if isinstance(bucket, dict) and isinstance(bucket.get("valuesIndex"), int) and self.values:
            index = min(max(bucket["valuesIndex"], 0), len(self.values) - 1)

            def by_value(item: tuple[tuple[int, Any], Any]) -> tuple[int, Any]:
                subset = [r for r in records if sort_key(r[offset]) == item[0]]
                return sort_key(self.aggregate(subset, self.values[index]))

            ordered.sort(key=by_value)
        keys = [value for _, value in ordered]
        if group.get("sortOrder") == "DESCENDING":
            blanks = [k for k in keys if k is None or k == ""]
            keys = [k for k in keys if not (k is None or k == "")][::-1] + blanks
        return keys

    def matching(self, records: list[list[Any]], group: dict[str, Any], key: Any) -> list[list[Any]]:
        offset = self.offset(group)
        wanted = sort_key(key)
        return [record for record in records if sort_key(record[offset]) == wanted]


def _display_key(pivot: _Pivot, group: dict[str, Any], key: Any) -> tuple[Any, dict[str, Any] | None]:
    """The key with the number format of the first source row that holds it."""
    offset = pivot.offset(group)
    rows = _first_rows(pivot, offset)
    row = rows.get(sort_key(key))
    return key, None if row is None else pivot.calc.number_format(pivot.source, row, pivot.rect.c0 + offset)


def _first_rows(pivot: _Pivot, offset: int) -> dict[Any, int]:
    """For one source column, each key's first row: built once per column, not scanned per key."""
    cache = pivot.first_rows
    if offset not in cache:
        work.charge(len(pivot.records))
        first: dict[Any, int] = {}
        for row, record in zip(pivot.record_rows, pivot.records):
            first.setdefault(sort_key(record[offset]), row)
        cache[offset] = first
    return cache[offset]


def pivot_output(calc: ComputedValues, sheet: Sheet, row: int, col: int, definition: dict[str, Any]) -> Output:
    """The cells the pivot table anchored at (row, col) of ``sheet`` displays."""
    source_range = definition.get("source")
    if not isinstance(source_range, dict):
        return {(row, col): (error("#REF!", "The pivot table has no source."), None)}
    source = calc.book.sheet_by_id(int(source_range.get("sheetId") or 0))
    if source is None:
        return {(row, col): (error("#REF!", "The source range no longer exists."), None)}
    rect = grid_rect(source_range, source)
    if rect.rows < 1 or rect.cols < 1:
        return {(row, col): (error("#REF!"), None)}
    try:
        pivot = _Pivot(calc, source, rect, definition)
        table = _layout(pivot)
    except ValueError as exc:
        return {(row, col): (error("#REF!", str(exc)), None)}
    output: Output = {}
    for i, line in enumerate(table):
        for j, item in enumerate(line):
            r, c = row + i, col + j
            if item is None or item[0] is None or r >= sheet.row_count or c >= sheet.column_count:
                continue
            output[(r, c)] = item
    return output


Cell = tuple[Any, dict[str, Any] | None] | None


def _layout(pivot: _Pivot) -> list[list[Cell]]:
    groups, values = pivot.rows_groups, pivot.values
    n = len(groups)
    column_keys: list[tuple[Any, ...]] = []
    if pivot.column_groups:
        column_keys = _column_keys(pivot, pivot.column_groups, pivot.records)
    table: list[list[Cell]] = []
    # -- header rows
    value_labels: list[Cell] = [(pivot.value_label(v), None) for v in values]
    if not pivot.column_groups:
        header: list[Cell] = [(pivot.group_label(g), None) for g in groups]
        table.append(header + value_labels)
    else:
        first: list[Cell] = [None] * n
        if len(values) == 1 and n:
            first[0] = value_labels[0]
        first_col_label = " / ".join(pivot.group_label(g) for g in pivot.column_groups)
        table.append(first + [(first_col_label, None)])
        width = max(1, len(values))
        keys_row: list[Cell] = [(pivot.group_label(g), None) for g in groups]
        for key in column_keys:
            keys_row.append(_key_cell(pivot, pivot.column_groups, key))
            keys_row.extend([None] * (width - 1))
        if pivot.column_groups[0].get("showTotals"):
            keys_row.append(("Grand Total", None))
        table.append(keys_row)
        if len(values) > 1:
            labels_row: list[Cell] = [None] * n
            for _ in column_keys:
                labels_row.extend(value_labels)
            if pivot.column_groups[0].get("showTotals"):
                labels_row.extend((f"Total {pivot.value_label(v)}", None) for v in values)
            table.append(labels_row)

    def value_cells(records: list[list[Any]]) -> list[Cell]:
        if not pivot.column_groups:
            return [(pivot.aggregate(records, v), pivot.value_format(v)) for v in values]
        cells: list[Cell] = []
        for key in column_keys:
            subset = _select(pivot, pivot.column_groups, records, key)
            for v in values:
                cells.append((pivot.aggregate(subset, v), pivot.value_format(v)) if subset else None)
        if pivot.column_groups[0].get("showTotals"):
            cells.extend((pivot.aggregate(records, v), pivot.value_format(v)) for v in values)
        return cells

    previous: list[Any] = []

    def emit(level: int, records: list[list[Any]], path: list[Any]) -> None:
        nonlocal previous
        group = groups[level]
        for key in pivot.keys(group, records):
            subset = pivot.matching(records, group, key)
            new_path = path + [key]
            if level == n - 1:
                labels: list[Cell] = []
                for i, part in enumerate(new_path):
                    repeat = groups[i].get("repeatHeadings")
                    same = previous[: i + 1] == [sort_key(k) for k in new_path[: i + 1]]
                    labels.append(None if same and not repeat else _display_key(pivot, groups[i], part))
                previous = [sort_key(k) for k in new_path]
                table.append(labels + value_cells(subset))
            else:
                emit(level + 1, subset, new_path)
                if group.get("showTotals"):
                    text = formatted(*_display_key(pivot, group, key))
                    line: list[Cell] = [None] * n
                    line[level] = (f"{text} Total", None)
                    table.append(line + value_cells(subset))
                    previous = []

    if n:
        emit(0, pivot.records, [])
        if groups[0].get("showTotals"):
            total: list[Cell] = [("Grand Total", None)] + [None] * (n - 1)
            table.append(total + value_cells(pivot.records))
    else:
        table.append(value_cells(pivot.records))
    return table


def _column_keys(pivot: _Pivot, groups: list[dict[str, Any]], records: list[list[Any]]) -> list[tuple[Any, ...]]:
    if not groups:
        return [()]
    out: list[tuple[Any, ...]] = []
    for key in pivot.keys(groups[0], records):
        for rest in _column_keys(pivot, groups[1:], pivot.matching(records, groups[0], key)):
            out.append((key, *rest))
    return out


def _select(pivot: _Pivot, groups: list[dict[str, Any]], records: list[list[Any]], key: tuple[Any, ...]) -> list[Any]:
    work.charge(len(records) * len(groups))  # one scan per row and column key: quadratic in distinct keys
    for group, part in zip(groups, key):
        records = pivot.matching(records, group, part)
    return records


def _key_cell(pivot: _Pivot, groups: list[dict[str, Any]], key: tuple[Any, ...]) -> Cell:
    if len(key) == 1:
        return _display_key(pivot, groups[0], key[0])
    return (" / ".join(formatted(*_display_key(pivot, g, k)) for g, k in zip(groups, key)), None)
