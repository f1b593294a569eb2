"""``spreadsheets.get``: the Spreadsheet resource, with grid data when asked for.

Sheet properties, merges, basic filter, protected ranges, named ranges and, with
``includeGridData`` (or a ``fields`` mask that reaches ``sheets.data``), ``GridData``: rows of
``CellData`` with ``userEnteredValue``, ``effectiveValue``, ``formattedValue``,
``userEnteredFormat``, ``effectiveFormat``, ``note`` and ``pivotTable``, plus row and column metadata.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from toolbench.mock_services.sheets import work
from toolbench.mock_services.sheets.a1 import Rect, grid_range_json
from toolbench.mock_services.sheets.celldata import (
    DEFAULT_FORMAT,
    add_cell_attachments,
    effective_format,
    float32_number,
    user_entered_json,
)
from toolbench.mock_services.sheets.formula import Calculator
from toolbench.mock_services.sheets.model import DEFAULT_COLUMN_PIXELS, DEFAULT_ROW_PIXELS, Sheet, Spreadsheet
from toolbench.mock_services.sheets.values import formatted, typed_value_json

#: The default theme of a new spreadsheet: Arial and the product's standard palette (text black,
#: background white, six accents, link blue), as ``#rrggbb``.
DEFAULT_THEME_FONT = "Arial"
DEFAULT_THEME_COLORS = (
    ("TEXT", "#000000"),
    ("BACKGROUND", "#ffffff"),
    ("ACCENT1", "#4285f4"),
    ("ACCENT2", "#ea4335"),
    ("ACCENT3", "#fbbc04"),
    ("ACCENT4", "#34a853"),
    ("ACCENT5", "#ff6d01"),
    ("ACCENT6", "#46bdc6"),
    ("LINK", "#1155cc"),
)


def rgb_color(hex_color: str) -> dict[str, int | float]:
    """A Color from ``#rrggbb``, zero components left out and the rest in single precision, as the API writes it."""
    channels = zip(("red", "green", "blue"), (hex_color[1:3], hex_color[3:5], hex_color[5:7]))
    return {name: float32_number(int(pair, 16) / 255) for name, pair in channels if int(pair, 16)}


@functools.cache
def _default_theme() -> dict[str, Any]:
    return {
        "primaryFontFamily": DEFAULT_THEME_FONT,
        "themeColors": [
            {"colorType": kind, "color": {"rgbColor": rgb_color(hex_color)}} for kind, hex_color in DEFAULT_THEME_COLORS
        ],
    }


def spreadsheet_theme() -> dict[str, Any]:
    """The ``SpreadsheetTheme`` of spreadsheet properties (the default one: themes cannot be changed here)."""
    return copy.deepcopy(_default_theme())


def spreadsheet_url(spreadsheet_id: str) -> str:
    return f"https://docs.google.com/spreadsheets/d/{spreadsheet_id}/edit"


def spreadsheet_properties(book: Spreadsheet) -> dict[str, Any]:
    return {
        "title": book.title,
        "locale": book.locale,
        "autoRecalc": book.auto_recalc,
        "timeZone": book.time_zone,
        "defaultFormat": copy.deepcopy(DEFAULT_FORMAT),
        "spreadsheetTheme": spreadsheet_theme(),
    }


def sheet_properties(book: Spreadsheet, sheet: Sheet) -> dict[str, Any]:
    """SheetProperties as the service writes them: defaults (false, 0) left out."""
    grid: dict[str, Any] = {"rowCount": sheet.row_count, "columnCount": sheet.column_count}
    if sheet.frozen_rows:
        grid["frozenRowCount"] = sheet.frozen_rows
    if sheet.frozen_columns:
        grid["frozenColumnCount"] = sheet.frozen_columns
    if sheet.hide_gridlines:
        grid["hideGridlines"] = True
    if sheet.row_group_control_after:
        grid["rowGroupControlAfter"] = True
    if sheet.column_group_control_after:
        grid["columnGroupControlAfter"] = True
    out: dict[str, Any] = {
        "sheetId": sheet.sheet_id,
        "title": sheet.title,
        "index": book.index_of(sheet),
        "sheetType": "GRID",
        "gridProperties": grid,
    }
    if sheet.hidden:
        out["hidden"] = True
    if sheet.tab_color is not None:
        out["tabColor"] = copy.deepcopy(sheet.tab_color)
        out["tabColorStyle"] = {"rgbColor": copy.deepcopy(sheet.tab_color)}
    if sheet.right_to_left:
        out["rightToLeft"] = True
    return out


def protected_range_json(sheet: Sheet, item: dict[str, Any]) -> dict[str, Any]:
    out = {key: copy.deepcopy(value) for key, value in item.items() if key != "range"}
    out["range"] = grid_range_json(sheet.sheet_id, item["range"])
    return out


def basic_filter_json(sheet: Sheet) -> dict[str, Any] | None:
    if sheet.basic_filter is None:
        return None
    out = {key: copy.deepcopy(value) for key, value in sheet.basic_filter.items() if key != "range"}
    return {"range": grid_range_json(sheet.sheet_id, sheet.basic_filter["range"]), **out}


def named_range_json(item: dict[str, Any]) -> dict[str, Any]:
    return {
        "namedRangeId": item["namedRangeId"],
        "name": item["name"],
        "range": grid_range_json(item["sheetId"], item["range"]),
    }


def dimension_groups_json(sheet: Sheet, rows: bool) -> list[dict[str, Any]]:
    groups = sheet.row_groups if rows else sheet.column_groups
    return [
        {
            "range": {
                **({"sheetId": sheet.sheet_id} if sheet.sheet_id else {}),  # proto3 leaves out a 0 id
                "dimension": "ROWS" if rows else "COLUMNS",
                "startIndex": group["start"],
                "endIndex": group["end"],
            },
            "depth": group["depth"],
            **({"collapsed": True} if group.get("collapsed") else {}),
        }
        for group in sorted(groups, key=lambda g: (g["start"], g["end"], g["depth"]))
    ]


def cell_data(calc: Calculator, sheet: Sheet, row: int, col: int) -> dict[str, Any]:
    """One CellData; ``{}`` for an untouched cell."""
    cell = sheet.cells.get((row, col))
    overlaid = (row, col) in calc.overlay(sheet)
    out: dict[str, Any] = {}
    if cell is not None and not overlaid:
        entered = user_entered_json(cell)
        if entered is not None:
            out["userEnteredValue"] = entered
    value = calc.value(sheet, row, col) if (overlaid or (cell is not None and cell.has_content)) else None
    number_format = calc.number_format(sheet, row, col) if value is not None else None
    if value is not None:
        out["effectiveValue"] = typed_value_json(value)
        out["formattedValue"] = formatted(value, number_format)
    if cell is not None and cell.format:
        out["userEnteredFormat"] = copy.deepcopy(cell.format)
    if value is not None or (cell is not None and cell.format):
        out["effectiveFormat"] = effective_format(cell, number_format)
    if cell is not None:
        add_cell_attachments(cell, out)
    return out


#: Work units per cell of grid data (a full CellData costs about thirty rendered values).
GRID_CELL_COST = 30


def grid_data(calc: Calculator, sheet: Sheet, rect: Rect) -> dict[str, Any]:
    shown = min(rect.rows * rect.cols, len(sheet.cells) + len(calc.overlay(sheet)))
    work.charge(len(sheet.cells) + GRID_CELL_COST * shown)
    positions = {pos for pos in sheet.cells if rect.contains(*pos)}
    positions.update(pos for pos in calc.overlay(sheet) if rect.contains(*pos))
    out: dict[str, Any] = {}
    if rect.r0:
        out["startRow"] = rect.r0
    if rect.c0:
        out["startColumn"] = rect.c0
    if positions:
        last_row = max(row for row, _ in positions)
        by_row: dict[int, list[int]] = {}
        for row, col in positions:
            by_row.setdefault(row, []).append(col)
        rows: list[dict[str, Any]] = []
        for row in range(rect.r0, last_row + 1):
            cols = by_row.get(row)
            if not cols:
                rows.append({})
                continue
            line = [cell_data(calc, sheet, row, col) for col in range(rect.c0, max(cols) + 1)]
            while line and not line[-1]:
                line.pop()
            rows.append({"values": line} if line else {})
        while rows and not rows[-1]:
            rows.pop()
        if rows:
            out["rowData"] = rows
    out["rowMetadata"] = [_dimension_meta(sheet.row_meta.get(i), DEFAULT_ROW_PIXELS) for i in range(rect.r0, rect.r1)]
    out["columnMetadata"] = [
        _dimension_meta(sheet.column_meta.get(i), DEFAULT_COLUMN_PIXELS) for i in range(rect.c0, rect.c1)
    ]
    return out


def _dimension_meta(meta: dict[str, Any] | None, default_pixels: int) -> dict[str, Any]:
    out: dict[str, Any] = {"pixelSize": (meta or {}).get("pixelSize", default_pixels)}
    if meta and meta.get("hiddenByUser"):
        out["hiddenByUser"] = True
    return out


def sheet_json(
    book: Spreadsheet, sheet: Sheet, calc: Calculator | None, data_rects: list[Rect] | None
) -> dict[str, Any]:
    out: dict[str, Any] = {"properties": sheet_properties(book, sheet)}
    if data_rects is not None and calc is not None:
        out["data"] = [grid_data(calc, sheet, rect) for rect in data_rects]
    if sheet.merges:
        out["merges"] = [grid_range_json(sheet.sheet_id, rect) for rect in sheet.merges]
    if sheet.conditional_formats:
        out["conditionalFormats"] = [
            {
                **{k: copy.deepcopy(v) for k, v in rule.items() if k != "ranges"},
                "ranges": [grid_range_json(sheet.sheet_id, rect) for rect in rule["ranges"]],
            }
            for rule in sheet.conditional_formats
        ]
    if sheet.protected_ranges:
        out["protectedRanges"] = [protected_range_json(sheet, item) for item in sheet.protected_ranges]
    found_filter = basic_filter_json(sheet)
    if found_filter is not None:
        out["basicFilter"] = found_filter
    if sheet.row_groups:
        out["rowGroups"] = dimension_groups_json(sheet, True)
    if sheet.column_groups:
        out["columnGroups"] = dimension_groups_json(sheet, False)
    return out


def spreadsheet_json(
    book: Spreadsheet, calc: Calculator | None, include_grid: bool, ranges: list[tuple[Sheet, Rect]] | None
) -> dict[str, Any]:
    """The Spreadsheet resource; ``ranges`` limits the sheets (and grid data) to those ranges."""
    sheets = []
    if ranges:
        for sheet in book.sheets:
            rects = [rect for target, rect in ranges if target is sheet]
            if rects:
                sheets.append(sheet_json(book, sheet, calc, rects if include_grid else None))
    else:
        for sheet in book.sheets:
            sheets.append(sheet_json(book, sheet, calc, [sheet.grid] if include_grid else None))
    out: dict[str, Any] = {
        "spreadsheetId": book.spreadsheet_id,
        "properties": spreadsheet_properties(book),
        "sheets": sheets,
    }
    if book.named_ranges:
        out["namedRanges"] = [named_range_json(item) for item in book.named_ranges]
    out["spreadsheetUrl"] = spreadsheet_url(book.spreadsheet_id)
    return out
