"""Workbooks from a plain spec, and read-outs of what a sheet holds (for building tasks and scoring).

A spec::

    {"title": "Products",
     "sheets": [{"title": "Sheet1",
                 "rows": [["Product", "Cost", "Price"], ["bolt", 1, 3], ["pipe", 5, 4]],
                 "formats": {"A1:C1": {"textFormat": {"bold": True}},
                             "B2:C3": {"numberFormat": {"type": "CURRENCY", "pattern": "$#,##0.00"}}},
                 "notes": {"A1": "header"}, "merges": ["E1:F1"], "frozen_rows": 1,
                 "row_count": 1000, "column_count": 26, "basic_filter": "A1:C3",
                 "pivots": {"E3": {<PivotTable JSON, source on this sheet unless it names a sheetId>}}}],
     "named_ranges": {"Prices": "Sheet1!C2:C3"}}

Strings in ``rows`` are read as typed (USER_ENTERED: ``"=SUM(B2:B3)"`` is a formula, ``"50%"`` a
percentage) unless the sheet or the spec says ``"raw": True``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from toolbench.mock_services.sheets.a1 import Rect, cell_name, format_range, format_rect
from toolbench.mock_services.sheets.celldata import apply_entered, normalize_format
from toolbench.mock_services.sheets.formula import calculator
from toolbench.mock_services.sheets.model import DEFAULT_COLUMNS, DEFAULT_ROWS, Sheet, Spreadsheet
from toolbench.mock_services.sheets.ranges import resolve_a1
from toolbench.mock_services.sheets.store import SheetsStore
from toolbench.mock_services.sheets.values import ErrorValue, formatted, json_number, parse_json_value, render


def _rect(book: Spreadsheet, sheet: Sheet, text: str) -> Rect:
    target, bounds = resolve_a1(book, text if "!" in text else f"'{sheet.title.replace(chr(39), chr(39) * 2)}'!{text}")
    if target is not sheet and "!" not in text:
        raise ValueError(f"range {text!r} is not on sheet {sheet.title!r}")
    return bounds.close(target.row_count, target.column_count)


def build_spreadsheet(store: SheetsStore, spec: Mapping[str, Any]) -> Spreadsheet:
    """Create a spreadsheet (and its Drive file) in ``store`` from a workbook spec; returns it."""
    sheets = list(spec.get("sheets") or [{"title": "Sheet1"}])
    book = store.create_spreadsheet(str(spec.get("title", "Untitled spreadsheet")), first_sheet=False)
    try:
        for index, sheet_spec in enumerate(sheets):
            rows = sheet_spec.get("rows") or []
            width = max((len(row) for row in rows), default=0)
            sheet = Sheet(
                0 if index == 0 else book.new_sheet_id(),
                str(sheet_spec.get("title", f"Sheet{index + 1}")),
                int(sheet_spec.get("row_count", max(DEFAULT_ROWS, len(rows)))),
                int(sheet_spec.get("column_count", max(DEFAULT_COLUMNS, width))),
            )
            if book.sheet_by_title(sheet.title) is not None:
                raise ValueError(f"duplicate sheet title {sheet.title!r}")
            book.sheets.append(sheet)
        if book.cell_count > store.max_cells:
            raise ValueError(f"the workbook has {book.cell_count} cells, above the limit of {store.max_cells}")
        for sheet, sheet_spec in zip(book.sheets, sheets):
            raw = bool(sheet_spec.get("raw", spec.get("raw", False)))
            for r, row in enumerate(sheet_spec.get("rows") or []):
                for c, item in enumerate(row):
                    if item is None or item == "":
                        continue
                    apply_entered(sheet.ensure(r, c), parse_json_value(item, not raw))
            for text, fmt in (sheet_spec.get("formats") or {}).items():
                rect = _rect(book, sheet, text)
                for r in range(rect.r0, rect.r1):
                    for c in range(rect.c0, rect.c1):
                        cell = sheet.ensure(r, c)
                        cell.format = {**(cell.format or {}), **normalize_format(copy.deepcopy(fmt))}
            for text, note in (sheet_spec.get("notes") or {}).items():
                rect = _rect(book, sheet, text)
                sheet.ensure(rect.r0, rect.c0).note = str(note)
            sheet.merges = [_rect(book, sheet, text) for text in sheet_spec.get("merges") or []]
            sheet.frozen_rows = int(sheet_spec.get("frozen_rows", 0))
            sheet.frozen_columns = int(sheet_spec.get("frozen_columns", 0))
            if sheet_spec.get("basic_filter"):
                sheet.basic_filter = {"range": _rect(book, sheet, sheet_spec["basic_filter"])}
            for text, pivot in (sheet_spec.get("pivots") or {}).items():
                rect = _rect(book, sheet, text)
                definition = copy.deepcopy(pivot)
                definition.setdefault("source", {}).setdefault("sheetId", sheet.sheet_id)
                sheet.ensure(rect.r0, rect.c0).pivot = definition
        for name, text in (spec.get("named_ranges") or {}).items():
            target, bounds = resolve_a1(book, text)
            book.named_ranges.append(
                {
                    "namedRangeId": str(book.next_number("named")),
                    "name": name,
                    "sheetId": target.sheet_id,
                    "range": bounds.close(target.row_count, target.column_count),
                }
            )
    except Exception:
        store.delete_file(book.spreadsheet_id)
        raise
    book.touch()
    return book


# ---------------------------------------------------------------------------------- read-outs
def _plain(value: Any) -> Any:
    if isinstance(value, float):
        return json_number(value)
    if isinstance(value, ErrorValue):
        return value.code
    return value


def _sheet(book: Spreadsheet, which: str | int | None) -> Sheet:
    if which is None:
        return book.sheets[0]
    found = book.sheet_by_id(which) if isinstance(which, int) else book.sheet_by_title(which)
    if found is None:
        raise KeyError(f"no sheet {which!r} in {book.title!r}")
    return found


def read_sheet(store: SheetsStore, spreadsheet_id: str, sheet: str | int | None = None) -> dict[str, Any]:
    """Everything a checker compares on one sheet (``sheet``: title, sheetId, or None for the first).

    ``cells`` maps A1 names of every non-empty cell (a value, formula, format, note or pivot output) to
    ``value`` (effective: number, string, bool, error code or None), ``formatted`` (as the sheet
    shows it), ``format`` (the user-entered format, or None) and, where present, ``formula`` and ``note``.
    """
    with store.lock:
        book = store.spreadsheet(spreadsheet_id)
        target = _sheet(book, sheet)
        calc = calculator(book, store.now_serial())
        positions = set(target.cells) | set(calc.overlay(target))
        cells: dict[str, dict[str, Any]] = {}
        for row, col in sorted(positions):
            cell = target.cells.get((row, col))
            value = calc.value(target, row, col)
            entry: dict[str, Any] = {
                "value": _plain(value),
                "formatted": formatted(value, calc.number_format(target, row, col)),
                "format": copy.deepcopy(cell.format) if cell is not None and cell.format else None,
            }
            if cell is not None and cell.formula is not None and (row, col) not in calc.overlay(target):
                entry["formula"] = cell.formula
            if cell is not None and cell.note:
                entry["note"] = cell.note
            if value is None and entry["format"] is None and "note" not in entry:
                continue
            cells[cell_name(row, col)] = entry
        return {
            "title": target.title,
            "sheet_id": target.sheet_id,
            "index": book.index_of(target),
            "row_count": target.row_count,
            "column_count": target.column_count,
            "frozen_rows": target.frozen_rows,
            "frozen_columns": target.frozen_columns,
            "hidden": target.hidden,
            "cells": cells,
            "merges": sorted(format_rect(rect) for rect in target.merges),
            "basic_filter": format_rect(target.basic_filter["range"]) if target.basic_filter else None,
            "hidden_rows": sorted(i for i, meta in target.row_meta.items() if meta.get("hiddenByUser")),
            "hidden_columns": sorted(i for i, meta in target.column_meta.items() if meta.get("hiddenByUser")),
        }


def read_workbook(store: SheetsStore, spreadsheet_id: str) -> dict[str, Any]:
    """``read_sheet`` for every sheet, in tab order, plus the title and named ranges."""
    with store.lock:
        book = store.spreadsheet(spreadsheet_id)
        return {
            "title": book.title,
            "sheets": [read_sheet(store, spreadsheet_id, sheet.sheet_id) for sheet in book.sheets],
            "named_ranges": {
                item["name"]: format_range(book.sheet_by_id(item["sheetId"]).title, item["range"])  # type: ignore[union-attr]
                for item in book.named_ranges
            },
        }


def sheet_values(
    store: SheetsStore, spreadsheet_id: str, sheet: str | int | None = None, render_option: str = "FORMATTED_VALUE"
) -> list[list[Any]]:
    """The sheet as a rectangle of rendered values (what ``get_all_values`` would show, padded)."""
    with store.lock:
        book = store.spreadsheet(spreadsheet_id)
        target = _sheet(book, sheet)
        calc = calculator(book, store.now_serial())
        rows, cols = calc.extent(target)
        out = []
        for row in range(rows):
            line = []
            for col in range(cols):
                cell = target.cells.get((row, col))
                formula = cell.formula if cell is not None and (row, col) not in calc.overlay(target) else None
                shown = render(
                    calc.value(target, row, col), formula, calc.number_format(target, row, col), render_option, False
                )
                line.append("" if shown is None else shown)
            out.append(line)
        return out
