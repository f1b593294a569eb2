"""Finding the cells a request names: A1 text (values API) and GridRange objects (batchUpdate).

A1 text may be a bare sheet name, a quoted one, a named range, or a range on the first visible
sheet; ``'Sheet1'!MyRange`` (what gspread's ``named_range`` sends) resolves to the named range.
Unresolvable text is the real service's ``Unable to parse range: ...``.
"""

from __future__ import annotations

from toolbench.mock_services.sheets.a1 import Bounds, Rect, format_rect, parse_bounds, quote_title, split_sheet
from toolbench.mock_services.sheets.body import Obj
from toolbench.mock_services.sheets.errors import invalid
from toolbench.mock_services.sheets.model import Sheet, Spreadsheet

OPEN = Bounds(None, None, None, None)


def _named(book: Spreadsheet, name: str) -> tuple[Sheet, Bounds] | None:
    found = book.named_range(name)
    if found is None:
        return None
    sheet = book.sheet_by_id(found["sheetId"])
    if sheet is None:
        return None
    rect: Rect = found["range"]
    return sheet, Bounds(rect.r0, rect.r1, rect.c0, rect.c1)


def resolve_a1(book: Spreadsheet, text: str) -> tuple[Sheet, Bounds]:
    """The sheet and (possibly open) bounds an A1 range names."""
    if not isinstance(text, str) or not text.strip():
        raise invalid(f"Unable to parse range: {text}")
    cleaned = text.strip()
    try:
        sheet_name, cells = split_sheet(cleaned)
    except ValueError:
        raise invalid(f"Unable to parse range: {text}") from None
    if sheet_name is None:
        bounds = parse_bounds(cells)
        if bounds is not None:
            return book.first_visible_sheet(), bounds
        sheet = book.sheet_by_title(cells)
        if sheet is not None:
            return sheet, OPEN
        named = _named(book, cells)
        if named is not None:
            return named
        raise invalid(f"Unable to parse range: {text}")
    sheet = book.sheet_by_title(sheet_name)
    if sheet is None:
        raise invalid(f"Unable to parse range: {text}")
    if not cells.strip():
        return sheet, OPEN
    bounds = parse_bounds(cells)
    if bounds is not None:
        return sheet, bounds
    named = _named(book, cells.strip())
    if named is not None:
        return named
    raise invalid(f"Unable to parse range: {text}")


def exceeds_grid(text: str, sheet: Sheet) -> Exception:
    return invalid(
        f"Range ({text}) exceeds grid limits. Max rows: {sheet.row_count}, max columns: {sheet.column_count}"
    )


def read_rect(book: Spreadsheet, text: str) -> tuple[Sheet, Rect]:
    """A range to read: open sides closed at the grid, the far side clipped to it; a start outside is an error."""
    sheet, bounds = resolve_a1(book, text)
    rect = bounds.close(sheet.row_count, sheet.column_count)
    if rect.r0 >= sheet.row_count or rect.c0 >= sheet.column_count:
        raise exceeds_grid(text if "!" in text else f"{quote_title(sheet.title)}!{text}", sheet)
    return sheet, Rect(rect.r0, min(rect.r1, sheet.row_count), rect.c0, min(rect.c1, sheet.column_count))


def grid_range(book: Spreadsheet, obj: Obj | None, clip: bool = False) -> tuple[Sheet, Rect]:
    """A GridRange object: sheetId (default 0) and half-open indexes, open ends at the grid's edge."""
    if obj is None:
        obj = Obj({}, "")
    sheet_id = obj.integer("sheetId", 0)
    sheet = book.sheet_by_id(sheet_id)  # type: ignore[arg-type]
    if sheet is None:
        raise invalid(f"No grid with id: {sheet_id}")
    r0 = obj.integer("startRowIndex", 0, low=0)
    r1 = obj.integer("endRowIndex", sheet.row_count, low=0)
    c0 = obj.integer("startColumnIndex", 0, low=0)
    c1 = obj.integer("endColumnIndex", sheet.column_count, low=0)
    assert r0 is not None and r1 is not None and c0 is not None and c1 is not None
    if r1 < r0 or c1 < c0:
        raise invalid("The start index of the range must be less than or equal to the end index.")
    if clip:
        r1, c1 = min(r1, sheet.row_count), min(c1, sheet.column_count)
    rect = Rect(r0, r1, c0, c1)
    if r1 > sheet.row_count or c1 > sheet.column_count:
        raise exceeds_grid(f"{quote_title(sheet.title)}!{format_rect(rect)}", sheet)
    return sheet, rect


def dimension_range(book: Spreadsheet, obj: Obj | None) -> tuple[Sheet, bool, int, int]:
    """A DimensionRange: (sheet, is_rows, start, end), open ends at the grid's edge."""
    if obj is None:
        raise invalid("range is required")
    sheet_id = obj.integer("sheetId", 0)
    sheet = book.sheet_by_id(sheet_id)  # type: ignore[arg-type]
    if sheet is None:
        raise invalid(f"No grid with id: {sheet_id}")
    dimension = obj.enum("dimension", ("ROWS", "COLUMNS"), "Dimension")
    if dimension is None:
        raise invalid("range.dimension is required (ROWS or COLUMNS)")
    rows = dimension == "ROWS"
    size = sheet.row_count if rows else sheet.column_count
    start = obj.integer("startIndex", 0, low=0)
    end = obj.integer("endIndex", size, low=0)
    assert start is not None and end is not None
    if end < start:
        raise invalid("The start index of the range must be less than or equal to the end index.")
    return sheet, rows, start, end
