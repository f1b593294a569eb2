"""``spreadsheets.values``: get, update, append, clear and their batch forms.

Behaviour that clients depend on and is reproduced here: ranges echoed in the service's normal
form (``Sheet1!A1:Z1000``); trailing empty cells and rows trimmed and ``values`` omitted when
nothing is left; ``null`` in written values leaves a cell alone and ``""`` clears it; writes past a
bounded range or the grid are 400s with the service's messages; append finds the table in the
range and writes below it, growing the grid as needed.
"""

from __future__ import annotations

from typing import Any

from toolbench.mock_services.sheets import structure, work
from toolbench.mock_services.sheets.a1 import Rect, column_letters, format_range, quote_title
from toolbench.mock_services.sheets.body import bad_value
from toolbench.mock_services.sheets.celldata import apply_entered, charge_typed_grid
from toolbench.mock_services.sheets.errors import check_cell_text, invalid
from toolbench.mock_services.sheets.formula import Calculator, calculator
from toolbench.mock_services.sheets.model import Sheet, Spreadsheet
from toolbench.mock_services.sheets.ranges import exceeds_grid, read_rect, resolve_a1
from toolbench.mock_services.sheets.store import SheetsStore
from toolbench.mock_services.sheets.values import parse_json_value, render

RENDER_OPTIONS = ("FORMATTED_VALUE", "UNFORMATTED_VALUE", "FORMULA")
DATETIME_OPTIONS = ("SERIAL_NUMBER", "FORMATTED_STRING")
DIMENSIONS = ("ROWS", "COLUMNS")
INPUT_OPTIONS = ("RAW", "USER_ENTERED")
INSERT_OPTIONS = ("OVERWRITE", "INSERT_ROWS")


def calc_for(store: SheetsStore, book: Spreadsheet) -> Calculator:
    return calculator(book, store.now_serial())


def rendered_grid(
    calc: Calculator, sheet: Sheet, rect: Rect, render_option: str, dates_as_strings: bool
) -> dict[tuple[int, int], Any]:
    """Non-blank rendered values in ``rect`` by position."""
    work.charge(min(rect.rows * rect.cols, len(sheet.cells) + len(calc.overlay(sheet))) + 1)
    positions = set()
    if rect.rows * rect.cols <= len(sheet.cells):
        for row in range(rect.r0, rect.r1):
            for col in range(rect.c0, rect.c1):
                if (row, col) in sheet.cells:
                    positions.add((row, col))
    else:
        positions.update(pos for pos, cell in sheet.cells.items() if rect.contains(*pos))
    positions.update(pos for pos in calc.overlay(sheet) if rect.contains(*pos))
    out = {}
    for row, col in sorted(positions):
        cell = sheet.cells.get((row, col))
        overlaid = (row, col) in calc.overlay(sheet)
        formula = cell.formula if cell is not None and not overlaid else None
        if cell is not None and not cell.has_content and not overlaid:
            continue
        value = calc.value(sheet, row, col)
        shown = render(value, formula, calc.number_format(sheet, row, col), render_option, dates_as_strings)
        if shown is not None and shown != "":
            out[(row, col)] = shown
    return out


def value_range(
    store: SheetsStore,
    book: Spreadsheet,
    range_text: str,
    major: str = "ROWS",
    render_option: str = "FORMATTED_VALUE",
    datetime_option: str = "SERIAL_NUMBER",
) -> dict[str, Any]:
    """A ValueRange: ``{"range", "majorDimension", "values"}`` with the service's trimming."""
    sheet, rect = read_rect(book, range_text)
    grid = rendered_grid(calc_for(store, book), sheet, rect, render_option, datetime_option == "FORMATTED_STRING")
    out: dict[str, Any] = {"range": format_range(sheet.title, rect), "majorDimension": major}
    if grid:
        if major == "COLUMNS":
            grid = {(col, row): value for (row, col), value in grid.items()}
            origin = (rect.c0, rect.r0)
        else:
            origin = (rect.r0, rect.c0)
        last_line = max(line for line, _ in grid)
        lines: list[list[Any]] = [[] for _ in range(last_line - origin[0] + 1)]
        for (line, index), value in sorted(grid.items()):
            row = lines[line - origin[0]]
            position = index - origin[1]
            row.extend([""] * (position - len(row)))
            row.append(value)
        out["values"] = lines
    return out


# ---------------------------------------------------------------------------------- writing
def check_values(values: Any, path: str = "data.values") -> list[list[Any]]:
    """The ``values`` of a ValueRange: a list of lists of scalars (null allowed)."""
    if values is None:
        return []
    if not isinstance(values, list):
        raise bad_value(path, "type.googleapis.com/google.protobuf.ListValue", values)
    for i, line in enumerate(values):
        if not isinstance(line, list):
            raise bad_value(f"{path}[{i}]", "type.googleapis.com/google.protobuf.ListValue", line)
        for j, item in enumerate(line):
            if item is not None and not isinstance(item, (str, int, float, bool)):
                raise invalid(f"Invalid values[{i}][{j}]: {_kind(item)}")
            if isinstance(item, str):
                check_cell_text(item)
    return values


def _kind(item: Any) -> str:
    if isinstance(item, dict):
        return f"struct_value {{{', '.join(sorted(map(str, item)))[:100]}}}"
    return f"list_value {item!r}"[:120]


def _grid_shape(values: list[list[Any]], major: str) -> list[list[Any]]:
    """Values as rows, whatever the major dimension."""
    if major != "COLUMNS":
        return values
    rows: list[list[Any]] = []
    for col, column in enumerate(values):
        for row, item in enumerate(column):
            while len(rows) <= row:
                rows.append([])
            line = rows[row]
            line.extend([None] * (col - len(line)))
            line.append(item)
    return rows


#: Cells written by a batch of updates, as (sheetId, row, column): the batch's totals count them.
Tally = set[tuple[int, int, int]]


def write_grid(
    book: Spreadsheet,
    sheet: Sheet,
    top: int,
    left: int,
    rows: list[list[Any]],
    user_entered: bool,
    tally: Tally | None = None,
) -> dict[str, int] | None:
    """Write rows of values with their top-left at (top, left); returns the counts, or None if nothing.

    The counts are of cells written: ``null`` leaves a cell alone and is not counted, so
    ``[["a", null], [null, "b"]]`` updates 2 rows, 2 columns and 2 cells, and ``[["a", null]]``
    1 row and 1 column, as the service counts them."""
    height = len(rows)
    width = max((len(line) for line in rows), default=0)
    if not height or not width:
        return None
    charge_typed_grid(rows, user_entered)
    written: set[tuple[int, int]] = set()
    for i, line in enumerate(rows):
        for j, item in enumerate(line):
            if item is None:
                continue
            row, col = top + i, left + j
            cell = sheet.ensure(row, col)
            apply_entered(cell, parse_json_value(item, user_entered))
            sheet.prune(row, col)
            written.add((row, col))
    book.touch()
    if tally is not None:
        tally.update((sheet.sheet_id, row, col) for row, col in written)
    return {
        "rows": len({row for row, _ in written}),
        "columns": len({col for _, col in written}),
        "cells": len(written),
    }


def batch_totals(tally: Tally) -> dict[str, int]:
    """``totalUpdated*`` of a batch: distinct rows, columns and sheets among the cells written (none when 0)."""
    if not tally:
        return {}
    return {
        "totalUpdatedRows": len({(sheet, row) for sheet, row, _ in tally}),
        "totalUpdatedColumns": len({(sheet, col) for sheet, _, col in tally}),
        "totalUpdatedCells": len(tally),
        "totalUpdatedSheets": len({sheet for sheet, _, _ in tally}),
    }


def _update_response(
    store: SheetsStore,
    book: Spreadsheet,
    sheet: Sheet,
    rect: Rect | None,
    counts: dict[str, int] | None,
    include_values: bool,
    response_render: str,
    response_datetime: str,
    fallback_range: str,
) -> dict[str, Any]:
    out: dict[str, Any] = {"spreadsheetId": book.spreadsheet_id}
    if rect is None or counts is None:
        out["updatedRange"] = fallback_range
        return out
    updated_range = format_range(sheet.title, rect)
    out["updatedRange"] = updated_range
    if counts["cells"]:  # zero counts are left out of the JSON, as proto3 writes them
        out.update(updatedRows=counts["rows"], updatedColumns=counts["columns"], updatedCells=counts["cells"])
    if include_values:
        out["updatedData"] = value_range(store, book, updated_range, "ROWS", response_render, response_datetime)
    return out


def update(
    store: SheetsStore,
    book: Spreadsheet,
    range_text: str,
    values: Any,
    major: str = "ROWS",
    user_entered: bool = False,
    include_values: bool = False,
    response_render: str = "FORMATTED_VALUE",
    response_datetime: str = "SERIAL_NUMBER",
    path: str = "data.values",
    tally: Tally | None = None,
) -> dict[str, Any]:
    """values.update: write from the range's top-left corner, within the range and the grid
    (``tally`` collects the cells written, for a batch's totals)."""
    rows = _grid_shape(check_values(values, path), major)
    sheet, bounds = resolve_a1(book, range_text)
    if bounds.is_single_cell and ":" not in range_text.rpartition("!")[2]:
        bounds = bounds._replace(r1=None, c1=None)  # a single cell is where writing starts, not a limit
    top = bounds.r0 or 0
    left = bounds.c0 or 0
    height = len(rows)
    width = max((len(line) for line in rows), default=0)
    shown = range_text if "!" in range_text else f"{quote_title(sheet.title)}!{range_text}"
    if bounds.r1 is not None and top + height > bounds.r1:
        raise invalid(f"Requested writing within range [{shown}], but tried writing to row [{bounds.r1 + 1}]")
    if bounds.c1 is not None and left + width > bounds.c1:
        raise invalid(
            f"Requested writing within range [{shown}], but tried writing to column [{column_letters(bounds.c1)}]"
        )
    if (
        top >= sheet.row_count
        or left >= sheet.column_count
        or top + height > sheet.row_count
        or (left + width > sheet.column_count)
    ):
        raise exceeds_grid(shown, sheet)
    counts = write_grid(book, sheet, top, left, rows, user_entered, tally)
    rect = Rect(top, top + height, left, left + width) if counts else None
    start = format_range(sheet.title, Rect(top, top + 1, left, left + 1))
    return _update_response(store, book, sheet, rect, counts, include_values, response_render, response_datetime, start)


def _content_cells(calc: Calculator, sheet: Sheet, rect: Rect) -> set[tuple[int, int]]:
    """Positions in ``rect`` that show something: a value, a formula, or a spilled result."""
    work.charge(len(sheet.cells) + 1)
    cells = {pos for pos, cell in sheet.cells.items() if cell.has_content and rect.contains(*pos)}
    cells.update(pos for pos in calc.overlay(sheet) if rect.contains(*pos))
    return cells


def find_table(calc: Calculator, sheet: Sheet, rect: Rect) -> Rect | None:
    """The "table" values.append finds in ``rect``: the block of filled cells around the last one.

    The last filled cell (reading the range row by row) and every filled cell joined to it through
    filled neighbours (up, down, left, right) make the table; its bounding box is the table range.
    So after a row ``["x", "", "y"]`` the table is just the ``y`` cell, and the next append starts
    under ``y``, as the service does (gspread's ``test_append_row_with_empty_value``)."""
    cells = _content_cells(calc, sheet, rect)
    if not cells:
        return None
    start = max(cells)
    seen = {start}
    todo = [start]
    while todo:
        row, col = todo.pop()
        for near in ((row - 1, col), (row + 1, col), (row, col - 1), (row, col + 1)):
            if near in cells and near not in seen:
                seen.add(near)
                todo.append(near)
    rows = [row for row, _ in seen]
    cols = [col for _, col in seen]
    return Rect(min(rows), max(rows) + 1, min(cols), max(cols) + 1)


def append(
    store: SheetsStore,
    book: Spreadsheet,
    range_text: str,
    values: Any,
    major: str = "ROWS",
    user_entered: bool = False,
    insert_rows: bool = False,
    include_values: bool = False,
    response_render: str = "FORMATTED_VALUE",
    response_datetime: str = "SERIAL_NUMBER",
) -> dict[str, Any]:
    """values.append: write below the table found in the range, adding rows/columns the data needs."""
    rows = _grid_shape(check_values(values), major)
    sheet, bounds = resolve_a1(book, range_text)
    rect = bounds.close(sheet.row_count, sheet.column_count)
    rect = Rect(rect.r0, min(rect.r1, sheet.row_count), rect.c0, min(rect.c1, sheet.column_count))
    if rect.r0 >= sheet.row_count or rect.c0 >= sheet.column_count:
        raise exceeds_grid(range_text, sheet)
    table = find_table(calc_for(store, book), sheet, rect) if rect.rows > 0 and rect.cols > 0 else None
    top, left = (table.r1, table.c0) if table else (rect.r0, rect.c0)
    height = len(rows)
    width = max((len(line) for line in rows), default=0)
    extra_rows = max(0, top + height - sheet.row_count)
    extra_cols = max(0, left + width - sheet.column_count)
    grown = book.cell_count + (extra_rows * sheet.column_count) + extra_cols * (sheet.row_count + extra_rows)
    if insert_rows and height:
        grown += height * (sheet.column_count + extra_cols)
    if grown > store.max_cells:
        raise cell_limit(store)
    if insert_rows and height and top < sheet.row_count:
        structure.insert_dimension(book, sheet, True, top, height, inherit_before=top > 0)
        extra_rows = max(0, top + height - sheet.row_count)
    sheet.row_count += extra_rows
    sheet.column_count += extra_cols
    counts = write_grid(book, sheet, top, left, rows, user_entered)
    out: dict[str, Any] = {"spreadsheetId": book.spreadsheet_id}
    if table is not None:
        out["tableRange"] = format_range(sheet.title, table)
    written = Rect(top, top + height, left, left + width) if counts else None
    start = format_range(sheet.title, Rect(top, top + 1, left, left + 1))
    out["updates"] = _update_response(
        store, book, sheet, written, counts, include_values, response_render, response_datetime, start
    )
    return out


def cell_limit(store: SheetsStore) -> Exception:
    return invalid(
        f"This action would increase the number of cells in the workbook above the limit of {store.max_cells} cells."
    )


def clear(book: Spreadsheet, range_text: str) -> str:
    """values.clear: values and formulas go, formats and notes stay. Returns the cleared range."""
    sheet, rect = read_rect(book, range_text)
    work.charge(len(sheet.cells))
    for position in [pos for pos in sheet.cells if rect.contains(*pos)]:
        cell = sheet.cells[position]
        cell.value = cell.formula = None
        sheet.prune(*position)
    book.touch()
    return format_range(sheet.title, rect)
