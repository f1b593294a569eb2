"""The workbook data model: spreadsheets, sheets, cells, and their round trip to plain data.

Pure Python, no Flask. Cells are sparse (``{(row, col): Cell}``, 0-based); a cell keeps what a user
entered (a literal or a formula), its ``userEnteredFormat``, note, data validation and, on a pivot
table's anchor, the pivot definition. Computed values live elsewhere (``formula.Calculator``) and
are thrown away on every change (``Spreadsheet.touch``), so the data here is the whole state.

``to_data``/``from_data`` give plain dicts and lists (sorted where order is not meaningful), so a
snapshot pickles and compares byte for byte across processes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from toolbench.core.seeding import stable_hash
from toolbench.mock_services.sheets.a1 import Rect

DEFAULT_ROWS = 1000
DEFAULT_COLUMNS = 26
DEFAULT_ROW_PIXELS = 21
DEFAULT_COLUMN_PIXELS = 100


@dataclass
class Cell:
    """What a user put in one cell. ``value`` is None, bool, float or str; ``formula`` starts with "="."""

    value: Any = None
    formula: str | None = None
    format: dict[str, Any] | None = None
    note: str | None = None
    validation: dict[str, Any] | None = None
    pivot: dict[str, Any] | None = None
    extra: dict[str, Any] | None = None  # other CellData fields kept verbatim (hyperlink, textFormatRuns)

    def is_blank(self) -> bool:
        return (
            self.value is None
            and self.formula is None
            and not self.format
            and not self.note
            and self.validation is None
            and self.pivot is None
            and not self.extra
        )

    @property
    def has_content(self) -> bool:
        return self.value is not None or self.formula is not None

    def copy(self) -> Cell:
        return Cell(
            self.value,
            self.formula,
            copy.deepcopy(self.format),
            self.note,
            copy.deepcopy(self.validation),
            copy.deepcopy(self.pivot),
            copy.deepcopy(self.extra),
        )

    def to_data(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in ("value", "formula", "format", "note", "validation", "pivot", "extra"):
            item = getattr(self, key)
            if item is not None:
                out[key] = copy.deepcopy(item)
        return out

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Cell:
        return cls(**{key: copy.deepcopy(value) for key, value in data.items()})


@dataclass
class Sheet:
    """One grid sheet: its properties, sparse cells, and the ranges that live on it."""

    sheet_id: int
    title: str
    row_count: int = DEFAULT_ROWS
    column_count: int = DEFAULT_COLUMNS
    frozen_rows: int = 0
    frozen_columns: int = 0
    hidden: bool = False
    hide_gridlines: bool = False
    right_to_left: bool = False
    # Where a group's +/- control sits: set (after the group) when the sheet gets its first group of
    # that dimension, and kept after the groups go, as the product does.
    row_group_control_after: bool = False
    column_group_control_after: bool = False
    tab_color: dict[str, Any] | None = None  # an rgbColor
    cells: dict[tuple[int, int], Cell] = field(default_factory=dict)
    merges: list[Rect] = field(default_factory=list)
    basic_filter: dict[str, Any] | None = None  # {"range": Rect, "sortSpecs": [...], "filterSpecs": [...]}
    protected_ranges: list[dict[str, Any]] = field(default_factory=list)  # each with "range": Rect
    row_meta: dict[int, dict[str, Any]] = field(default_factory=dict)  # pixelSize, hiddenByUser
    column_meta: dict[int, dict[str, Any]] = field(default_factory=dict)
    row_groups: list[dict[str, Any]] = field(default_factory=list)  # {"start", "end", "depth", "collapsed"}
    column_groups: list[dict[str, Any]] = field(default_factory=list)
    conditional_formats: list[dict[str, Any]] = field(default_factory=list)  # each with "ranges": [Rect]

    @property
    def grid(self) -> Rect:
        return Rect(0, self.row_count, 0, self.column_count)

    @property
    def cell_count(self) -> int:
        return self.row_count * self.column_count

    def cell(self, row: int, col: int) -> Cell | None:
        return self.cells.get((row, col))

    def ensure(self, row: int, col: int) -> Cell:
        """The cell at (row, col), created empty if absent."""
        found = self.cells.get((row, col))
        if found is None:
            found = self.cells[(row, col)] = Cell()
        return found

    def put(self, row: int, col: int, cell: Cell | None) -> None:
        """Store ``cell`` (or remove it when None or blank): keeps the dict sparse."""
        if cell is None or cell.is_blank():
            self.cells.pop((row, col), None)
        else:
            self.cells[(row, col)] = cell

    def prune(self, row: int, col: int) -> None:
        found = self.cells.get((row, col))
        if found is not None and found.is_blank():
            del self.cells[(row, col)]

    def content_extent(self) -> tuple[int, int]:
        """(rows, columns) spanned by cells that hold a value or formula."""
        rows = cols = 0
        for (row, col), cell in self.cells.items():
            if cell.has_content:
                rows = max(rows, row + 1)
                cols = max(cols, col + 1)
        return rows, cols

    def to_data(self) -> dict[str, Any]:
        return {
            "sheetId": self.sheet_id,
            "title": self.title,
            "rowCount": self.row_count,
            "columnCount": self.column_count,
            "frozenRows": self.frozen_rows,
            "frozenColumns": self.frozen_columns,
            "hidden": self.hidden,
            "hideGridlines": self.hide_gridlines,
            "rightToLeft": self.right_to_left,
            "tabColor": copy.deepcopy(self.tab_color),
            **({"rowGroupControlAfter": True} if self.row_group_control_after else {}),
            **({"columnGroupControlAfter": True} if self.column_group_control_after else {}),
            "cells": [[row, col, cell.to_data()] for (row, col), cell in sorted(self.cells.items())],
            "merges": [list(rect) for rect in self.merges],
            "basicFilter": _rects_to_lists(self.basic_filter),
            "protectedRanges": [_rects_to_lists(item) for item in self.protected_ranges],
            "rowMeta": [[index, dict(meta)] for index, meta in sorted(self.row_meta.items())],
            "columnMeta": [[index, dict(meta)] for index, meta in sorted(self.column_meta.items())],
            "rowGroups": copy.deepcopy(self.row_groups),
            "columnGroups": copy.deepcopy(self.column_groups),
            "conditionalFormats": [_rects_to_lists(item) for item in self.conditional_formats],
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Sheet:
        return cls(
            sheet_id=data["sheetId"],
            title=data["title"],
            row_count=data["rowCount"],
            column_count=data["columnCount"],
            frozen_rows=data.get("frozenRows", 0),
            frozen_columns=data.get("frozenColumns", 0),
            hidden=data.get("hidden", False),
            hide_gridlines=data.get("hideGridlines", False),
            right_to_left=data.get("rightToLeft", False),
            tab_color=copy.deepcopy(data.get("tabColor")),
            row_group_control_after=data.get("rowGroupControlAfter", False),
            column_group_control_after=data.get("columnGroupControlAfter", False),
            cells={(row, col): Cell.from_data(cell) for row, col, cell in data.get("cells", [])},
            merges=[Rect(*rect) for rect in data.get("merges", [])],
            basic_filter=_lists_to_rects(data.get("basicFilter")),
            protected_ranges=[_item_rects(item) for item in data.get("protectedRanges", [])],
            row_meta={index: dict(meta) for index, meta in data.get("rowMeta", [])},
            column_meta={index: dict(meta) for index, meta in data.get("columnMeta", [])},
            row_groups=copy.deepcopy(data.get("rowGroups", [])),
            column_groups=copy.deepcopy(data.get("columnGroups", [])),
            conditional_formats=[_item_rects(item) for item in data.get("conditionalFormats", [])],
        )


def _rects_to_lists(item: dict[str, Any] | None) -> dict[str, Any] | None:
    """A copy of a dict whose "range"/"ranges" Rects become plain lists."""
    if item is None:
        return None
    out = copy.deepcopy(item)
    if isinstance(out.get("range"), Rect):
        out["range"] = list(out["range"])
    if "ranges" in out:
        out["ranges"] = [list(rect) for rect in out["ranges"]]
    return out


def _lists_to_rects(item: dict[str, Any] | None) -> dict[str, Any] | None:
    if item is None:
        return None
    out = copy.deepcopy(item)
    if isinstance(out.get("range"), list):
        out["range"] = Rect(*out["range"])
    if "ranges" in out:
        out["ranges"] = [Rect(*rect) for rect in out["ranges"]]
    return out


def _item_rects(item: dict[str, Any]) -> dict[str, Any]:
    out = _lists_to_rects(item)
    assert out is not None
    return out


@dataclass
class Spreadsheet:
    """A workbook: its properties, sheets in tab order, and named ranges.

    ``version`` changes on every edit; computed values are cached per version.
    """

    spreadsheet_id: str
    title: str
    locale: str = "en_US"
    time_zone: str = "Etc/GMT"
    auto_recalc: str = "ON_CHANGE"
    sheets: list[Sheet] = field(default_factory=list)
    named_ranges: list[dict[str, Any]] = field(default_factory=list)  # {"namedRangeId", "name", "sheetId", "range"}
    id_counter: int = 0
    version: int = 0
    calc: Any = field(default=None, repr=False, compare=False)  # formula.Calculator for this version

    def touch(self) -> None:
        """Record an edit: computed values (formulas, pivot tables) are recomputed on the next read."""
        self.version += 1
        self.calc = None

    # ------------------------------------------------------------------ lookups
    def sheet_by_id(self, sheet_id: int) -> Sheet | None:
        return next((sheet for sheet in self.sheets if sheet.sheet_id == sheet_id), None)

    def sheet_by_title(self, title: str) -> Sheet | None:
        """Titles are unique ignoring case in the product, and formulas upper-case them, so match casefolded."""
        folded = title.casefold()
        return next((sheet for sheet in self.sheets if sheet.title.casefold() == folded), None)

    def first_visible_sheet(self) -> Sheet:
        return next((sheet for sheet in self.sheets if not sheet.hidden), self.sheets[0])

    def named_range(self, name: str) -> dict[str, Any] | None:
        folded = name.casefold()
        return next((item for item in self.named_ranges if item["name"].casefold() == folded), None)

    def index_of(self, sheet: Sheet) -> int:
        return self.sheets.index(sheet)

    @property
    def cell_count(self) -> int:
        return sum(sheet.cell_count for sheet in self.sheets)

    # ------------------------------------------------------------------ ids
    def next_number(self, kind: str, modulo: int = 2_000_000_000) -> int:
        """A deterministic id for a new sheet, named range or protected range (never 0)."""
        self.id_counter += 1
        return stable_hash(self.spreadsheet_id, kind, self.id_counter) % modulo + 1

    def new_sheet_id(self) -> int:
        taken = {sheet.sheet_id for sheet in self.sheets}
        while True:
            candidate = self.next_number("sheet")
            if candidate not in taken:
                return candidate

    def unique_title(self, base: str) -> str:
        """``base``, or ``base 2``, ``base 3``... whichever is free."""
        if self.sheet_by_title(base) is None:
            return base
        number = 2
        while self.sheet_by_title(f"{base} {number}") is not None:
            number += 1
        return f"{base} {number}"

    # ------------------------------------------------------------------ plain data
    def to_data(self) -> dict[str, Any]:
        return {
            "spreadsheetId": self.spreadsheet_id,
            "title": self.title,
            "locale": self.locale,
            "timeZone": self.time_zone,
            "autoRecalc": self.auto_recalc,
            "sheets": [sheet.to_data() for sheet in self.sheets],
            "namedRanges": [_rects_to_lists(item) for item in self.named_ranges],
            "idCounter": self.id_counter,
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Spreadsheet:
        return cls(
            spreadsheet_id=data["spreadsheetId"],
            title=data["title"],
            locale=data.get("locale", "en_US"),
            time_zone=data.get("timeZone", "Etc/GMT"),
            auto_recalc=data.get("autoRecalc", "ON_CHANGE"),
            sheets=[Sheet.from_data(sheet) for sheet in data["sheets"]],
            named_ranges=[_item_rects(item) for item in data.get("namedRanges", [])],
            id_counter=data.get("idCounter", 0),
        )

    def clone(self, new_id: str, title: str) -> Spreadsheet:
        """A deep copy under a new id and title (Drive's files.copy)."""
        data = self.to_data()
        data["spreadsheetId"] = new_id
        data["title"] = title
        return Spreadsheet.from_data(data)
