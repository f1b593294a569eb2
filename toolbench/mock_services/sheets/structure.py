"""Structural edits: inserting and deleting rows or columns, and everything that must move with them.

Cells shift; so do merges, the basic filter, protected and named ranges, conditional-format ranges,
dimension groups, row/column sizes, pivot table sources, and every formula reference in the book
that points at the sheet (``=A1`` becomes ``=A2`` when a row is inserted above, ``#REF!`` when its
row is deleted).
"""

from __future__ import annotations

from collections.abc import Callable

from toolbench.mock_services.sheets import refs, work
from toolbench.mock_services.sheets.a1 import Rect
from toolbench.mock_services.sheets.model import Cell, Sheet, Spreadsheet

Interval = tuple[int, int]


def shift_interval(low: int, high: int, start: int, count: int, insert: bool) -> Interval | None:
    """A half-open interval after inserting (or deleting) ``count`` indexes at ``start``; None if deleted."""
    if insert:
        if low >= start:
            return low + count, high + count
        if high > start:
            return low, high + count
        return low, high
    end = start + count
    new_low = low if low < start else (low - count if low >= end else start)
    new_high = high if high <= start else (high - count if high >= end else start)
    return (new_low, new_high) if new_high > new_low else None


def shift_rect(rect: Rect, rows: bool, start: int, count: int, insert: bool) -> Rect | None:
    pair = (rect.r0, rect.r1) if rows else (rect.c0, rect.c1)
    moved = shift_interval(pair[0], pair[1], start, count, insert)
    if moved is None:
        return None
    return Rect(moved[0], moved[1], rect.c0, rect.c1) if rows else Rect(rect.r0, rect.r1, moved[0], moved[1])


def map_ranges(book: Spreadsheet, sheet: Sheet, change: Callable[[Rect], Rect | None]) -> None:
    """Apply ``change`` to every range that lives on ``sheet``; ranges mapped to None are removed."""
    work.charge(len(sheet.merges) + len(book.named_ranges))
    sheet.merges = [new for rect in sheet.merges if (new := change(rect)) is not None and (new.rows * new.cols) > 1]
    if sheet.basic_filter is not None:
        new = change(sheet.basic_filter["range"])
        if new is None:
            sheet.basic_filter = None
        else:
            sheet.basic_filter["range"] = new
    kept = []
    for item in sheet.protected_ranges:
        new = change(item["range"])
        if new is not None:
            item["range"] = new
            kept.append(item)
    sheet.protected_ranges = kept
    rules = []
    for rule in sheet.conditional_formats:
        rule["ranges"] = [new for rect in rule["ranges"] if (new := change(rect)) is not None]
        if rule["ranges"]:
            rules.append(rule)
    sheet.conditional_formats = rules
    named = []
    for item in book.named_ranges:
        if item["sheetId"] == sheet.sheet_id:
            new = change(item["range"])
            if new is None:
                continue
            item["range"] = new
        named.append(item)
    book.named_ranges = named
    for other in book.sheets:
        for cell in other.cells.values():
            source = cell.pivot.get("source") if cell.pivot else None
            if isinstance(source, dict) and int(source.get("sheetId") or 0) == sheet.sheet_id:
                from toolbench.mock_services.sheets.pivot import grid_rect

                new = change(grid_rect(source, sheet))
                if new is not None:
                    source.update(
                        startRowIndex=new.r0, endRowIndex=new.r1, startColumnIndex=new.c0, endColumnIndex=new.c1
                    )


def rewrite_formulas(book: Spreadsheet, change_for: Callable[[Sheet], Callable[[refs.Ref], refs.Ref | None]]) -> None:
    """Rewrite the references of every formula in the book; ``change_for(host)`` gives the change for one sheet."""
    work.charge_rewrite(book.sheets)
    for host in book.sheets:
        change = change_for(host)
        for cell in host.cells.values():
            if cell.formula is not None:
                cell.formula = refs.rewrite(cell.formula, change)


def _shift_index_map(mapping: dict[int, dict], start: int, count: int, insert: bool) -> dict[int, dict]:
    work.charge(len(mapping))
    out = {}
    for index, meta in mapping.items():
        if index < start:
            out[index] = meta
        elif insert:
            out[index + count] = meta
        elif index >= start + count:
            out[index - count] = meta
    return out


def _shift_groups(groups: list[dict], start: int, count: int, insert: bool) -> list[dict]:
    kept = []
    for group in groups:
        moved = shift_interval(group["start"], group["end"], start, count, insert)
        if moved is not None:
            group["start"], group["end"] = moved
            kept.append(group)
    return kept


def insert_dimension(book: Spreadsheet, sheet: Sheet, rows: bool, start: int, count: int, inherit_before: bool) -> None:
    """Insert ``count`` empty rows (or columns) before index ``start``; they take the neighbours' formats."""
    if count <= 0:
        return
    size = sheet.row_count if rows else sheet.column_count
    source = start - 1 if inherit_before else start
    cells: dict[tuple[int, int], Cell] = {}
    for (row, col), cell in sheet.cells.items():
        index = row if rows else col
        if index >= start:
            cells[(row + count, col) if rows else (row, col + count)] = cell
        else:
            cells[(row, col)] = cell
    if 0 <= source < size:  # new rows inherit the formats of the row before (or after) them
        shifted_source = source if source < start else source + count
        for (row, col), cell in list(cells.items()):
            if (row if rows else col) == shifted_source and cell.format:
                for k in range(start, start + count):
                    cells[(k, col) if rows else (row, k)] = Cell(format=dict(cell.format))
    sheet.cells = cells
    meta = sheet.row_meta if rows else sheet.column_meta
    meta = _shift_index_map(meta, start, count, True)
    if 0 <= source < size and (source if source < start else source + count) in meta:
        for k in range(start, start + count):
            meta[k] = dict(meta[source if source < start else source + count])
    if rows:
        sheet.row_meta, sheet.row_count = meta, sheet.row_count + count
        sheet.row_groups = _shift_groups(sheet.row_groups, start, count, True)
        if start < sheet.frozen_rows:
            sheet.frozen_rows += count
    else:
        sheet.column_meta, sheet.column_count = meta, sheet.column_count + count
        sheet.column_groups = _shift_groups(sheet.column_groups, start, count, True)
        if start < sheet.frozen_columns:
            sheet.frozen_columns += count
    map_ranges(book, sheet, lambda rect: shift_rect(rect, rows, start, count, True))
    rewrite_formulas(
        book,
        lambda host: refs.for_sheet(host.title, sheet.title, lambda r: refs.shift_for_insert(r, rows, start, count)),
    )
    book.touch()


def delete_dimension(book: Spreadsheet, sheet: Sheet, rows: bool, start: int, end: int) -> None:
    """Delete rows (or columns) ``start <= i < end``; references to them become ``#REF!``."""
    count = end - start
    if count <= 0:
        return
    cells: dict[tuple[int, int], Cell] = {}
    for (row, col), cell in sheet.cells.items():
        index = row if rows else col
        if index < start:
            cells[(row, col)] = cell
        elif index >= end:
            cells[(row - count, col) if rows else (row, col - count)] = cell
    sheet.cells = cells
    if rows:
        sheet.row_meta = _shift_index_map(sheet.row_meta, start, count, False)
        sheet.row_count -= count
        sheet.row_groups = _shift_groups(sheet.row_groups, start, count, False)
        sheet.frozen_rows -= max(0, min(end, sheet.frozen_rows) - start)
    else:
        sheet.column_meta = _shift_index_map(sheet.column_meta, start, count, False)
        sheet.column_count -= count
        sheet.column_groups = _shift_groups(sheet.column_groups, start, count, False)
        sheet.frozen_columns -= max(0, min(end, sheet.frozen_columns) - start)
    map_ranges(book, sheet, lambda rect: shift_rect(rect, rows, start, count, False))
    rewrite_formulas(
        book,
        lambda host: refs.for_sheet(host.title, sheet.title, lambda r: refs.shift_for_delete(r, rows, start, count)),
    )
    book.touch()


def rename_sheet(book: Spreadsheet, sheet: Sheet, title: str) -> None:
    """Rename a sheet; formulas that name it follow."""
    old = sheet.title
    sheet.title = title
    if old != title:
        rewrite_formulas(book, lambda host: refs.renamed(old, title))
    book.touch()
