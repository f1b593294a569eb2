"""batchUpdate requests that change cells: formats, values, merges, sorting, copy/cut, find/replace, borders.

Each handler takes the request's ``Obj`` and a ``Context`` and returns its reply (``None`` for the
empty reply ``{}``). Handlers validate everything before they change anything, so a failing request
leaves the book as it was.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import re2

from toolbench.mock_services.sheets import refs, work
from toolbench.mock_services.sheets.a1 import Rect
from toolbench.mock_services.sheets.body import Obj
from toolbench.mock_services.sheets.bounded_functions import linear_regex
from toolbench.mock_services.sheets.celldata import (
    CELL_FIELDS,
    cell_from_celldata,
    cell_from_json,
    cell_to_json,
    normalize_format,
    sync_colors,
)
from toolbench.mock_services.sheets.errors import invalid
from toolbench.mock_services.sheets.fields import apply_mask, mask_paths
from toolbench.mock_services.sheets.formula import Calculator, calculator
from toolbench.mock_services.sheets.model import Cell, Sheet, Spreadsheet
from toolbench.mock_services.sheets.pivot import sort_key
from toolbench.mock_services.sheets.ranges import grid_range
from toolbench.mock_services.sheets.store import SheetsStore
from toolbench.mock_services.sheets.values import ErrorValue, format_general, parse_user_entered

MERGE_REQUIRED = "You must select all cells in a merged range to merge or unmerge them."
BORDER_WIDTHS = {"DOTTED": 1, "DASHED": 1, "SOLID": 1, "SOLID_MEDIUM": 2, "SOLID_THICK": 3, "DOUBLE": 1}
PASTE_TYPES = (
    "PASTE_NORMAL",
    "PASTE_VALUES",
    "PASTE_FORMAT",
    "PASTE_NO_BORDERS",
    "PASTE_FORMULA",
    "PASTE_DATA_VALIDATION",
    "PASTE_CONDITIONAL_FORMATTING",
)


@dataclass
class Context:
    store: SheetsStore
    book: Spreadsheet

    @property
    def calc(self) -> Calculator:
        return calculator(self.book, self.store.now_serial())


#: Work units per cell a range write touches (a masked write costs about five cell reads).
WRITE_COST = 5


def _positions(rect: Rect) -> list[tuple[int, int]]:
    work.charge(WRITE_COST * rect.rows * rect.cols)  # before the list is built and before anything is written
    return [(row, col) for row in range(rect.r0, rect.r1) for col in range(rect.c0, rect.c1)]


def _rewrite_rows(sheet: Sheet, rect: Rect, rows: list[int]) -> None:
    """Fill ``rect`` from the top with the cells of ``rows`` (old row indexes, in their new order);
    rows not listed are dropped and the rest of ``rect`` is left empty."""
    moved = {}
    for new_index, old_row in enumerate(rows):
        for col in range(rect.c0, rect.c1):
            if (old_row, col) in sheet.cells:
                moved[(rect.r0 + new_index, col)] = sheet.cells[(old_row, col)]
    for position in _positions(rect):
        sheet.cells.pop(position, None)
    sheet.cells.update(moved)


def _require_fields(obj: Obj) -> list[list[str]]:
    text = obj.text("fields")
    if not text:
        raise invalid("At least one field must be updated, but 'fields' is empty.")
    return mask_paths(text)


def _masked_write(sheet: Sheet, row: int, col: int, source: dict[str, Any], paths: list[list[str]]) -> None:
    current = cell_to_json(sheet.cells.get((row, col)))
    apply_mask(current, source, paths, CELL_FIELDS)
    if isinstance(current.get("userEnteredFormat"), dict):
        current["userEnteredFormat"] = sync_colors(current["userEnteredFormat"], paths)
    sheet.put(row, col, cell_from_celldata(current))


def _shift_formula(data: dict[str, Any], rows: int, cols: int) -> dict[str, Any]:
    """CellData with its formula's relative references moved by (rows, cols), as filling a range does."""
    formula = (data.get("userEnteredValue") or {}).get("formulaValue")
    if formula is None or (rows == 0 and cols == 0):
        return data
    shifted = dict(data)
    shifted["userEnteredValue"] = {"formulaValue": refs.rewrite(formula, lambda r: refs.offset(r, rows, cols))}
    return shifted


# ---------------------------------------------------------------------------------- formats and values
def repeat_cell(ctx: Context, obj: Obj) -> None:
    sheet, rect = grid_range(ctx.book, obj.obj("range"), clip=True)
    paths = _require_fields(obj)
    source = cell_from_json(obj.obj("cell") or Obj({}, obj.at("cell")))
    for row, col in _positions(rect):
        _masked_write(sheet, row, col, _shift_formula(source, row - rect.r0, col - rect.c0), paths)
    ctx.book.touch()


def update_cells(ctx: Context, obj: Obj) -> None:
    paths = _require_fields(obj)
    rows = obj.objs("rows")
    parsed = [[cell_from_json(value) for value in row.objs("values")] for row in rows]
    if obj.has("range") and obj.has("start"):
        raise invalid("Only one of range or start may be set.")
    if obj.has("range"):
        sheet, rect = grid_range(ctx.book, obj.obj("range"), clip=True)
        if len(parsed) > rect.rows or any(len(line) > rect.cols for line in parsed):
            raise invalid("The number of rows or columns in 'rows' exceeds the range.")
    else:
        start = obj.obj("start") or Obj({}, obj.at("start"))
        sheet_id = start.integer("sheetId", 0)
        found = ctx.book.sheet_by_id(sheet_id)  # type: ignore[arg-type]
        if found is None:
            raise invalid(f"No grid with id: {sheet_id}")
        sheet = found
        top, left = start.integer("rowIndex", 0, low=0), start.integer("columnIndex", 0, low=0)
        assert top is not None and left is not None
        width = max((len(line) for line in parsed), default=0)
        rect = Rect(top, top + len(parsed), left, left + width)
        if rect.r1 > sheet.row_count or rect.c1 > sheet.column_count:
            raise invalid(f"Range exceeds grid limits. Max rows: {sheet.row_count}, max columns: {sheet.column_count}")
    for i, line in enumerate(parsed):
        for j, data in enumerate(line):
            _masked_write(sheet, rect.r0 + i, rect.c0 + j, data, paths)
    if obj.has("range"):  # cells of the range the rows leave out are cleared for the masked fields
        for row, col in _positions(rect):
            i, j = row - rect.r0, col - rect.c0
            if i >= len(parsed) or j >= len(parsed[i]):
                _masked_write(sheet, row, col, {}, paths)
    ctx.book.touch()


def update_borders(ctx: Context, obj: Obj) -> None:
    sheet, rect = grid_range(ctx.book, obj.obj("range"), clip=True)
    sides: dict[str, Any] = {}
    for name in ("top", "bottom", "left", "right", "innerHorizontal", "innerVertical"):
        border = obj.obj(name)
        if border is not None:
            style = border.enum("style", tuple(BORDER_WIDTHS) + ("NONE", "STYLE_UNSPECIFIED"), "Style") or "NONE"
            value = (
                None
                if style in ("NONE", "STYLE_UNSPECIFIED")
                else normalize_format({**border.data, "style": style, "width": BORDER_WIDTHS[style]})
            )
            sides[name] = value
    for row, col in _positions(rect):
        wanted: dict[str, Any] = {}
        if row == rect.r0 and "top" in sides:
            wanted["top"] = sides["top"]
        if row == rect.r1 - 1 and "bottom" in sides:
            wanted["bottom"] = sides["bottom"]
        if col == rect.c0 and "left" in sides:
            wanted["left"] = sides["left"]
        if col == rect.c1 - 1 and "right" in sides:
            wanted["right"] = sides["right"]
        if "innerHorizontal" in sides:
            if row > rect.r0:
                wanted["top"] = sides["innerHorizontal"]
            if row < rect.r1 - 1:
                wanted["bottom"] = sides["innerHorizontal"]
        if "innerVertical" in sides:
            if col > rect.c0:
                wanted["left"] = sides["innerVertical"]
            if col < rect.c1 - 1:
                wanted["right"] = sides["innerVertical"]
        if not wanted:
            continue
        cell = sheet.ensure(row, col)
        fmt = dict(cell.format or {})
        borders = dict(fmt.get("borders") or {})
        for side, value in wanted.items():
            if value is None:
                borders.pop(side, None)
            else:
                borders[side] = value
        if borders:
            fmt["borders"] = borders
        else:
            fmt.pop("borders", None)
        cell.format = fmt or None
        sheet.prune(row, col)
    ctx.book.touch()


def set_data_validation(ctx: Context, obj: Obj) -> None:
    sheet, rect = grid_range(ctx.book, obj.obj("range"), clip=True)
    rule = obj.obj("rule")
    for row, col in _positions(rect):
        if rule is None:
            found = sheet.cells.get((row, col))
            if found is not None:
                found.validation = None
                sheet.prune(row, col)
        else:
            sheet.ensure(row, col).validation = dict(rule.data)
    ctx.book.touch()


# ---------------------------------------------------------------------------------- merges
def _check_merge_overlap(sheet: Sheet, rect: Rect) -> None:
    work.charge(len(sheet.merges))
    for merge in sheet.merges:
        if merge.intersects(rect) and not merge.inside(rect):
            raise invalid(MERGE_REQUIRED)


def merge_cells(ctx: Context, obj: Obj) -> None:
    sheet, rect = grid_range(ctx.book, obj.obj("range"))
    kind = obj.enum("mergeType", ("MERGE_ALL", "MERGE_COLUMNS", "MERGE_ROWS"), "MergeType", "MERGE_ALL")
    _check_merge_overlap(sheet, rect)
    if kind == "MERGE_ALL":
        new = [rect]
    elif kind == "MERGE_COLUMNS":
        new = [Rect(rect.r0, rect.r1, col, col + 1) for col in range(rect.c0, rect.c1)]
    else:
        new = [Rect(row, row + 1, rect.c0, rect.c1) for row in range(rect.r0, rect.r1)]
    new = [merge for merge in new if merge.rows * merge.cols > 1]
    sheet.merges = [merge for merge in sheet.merges if not merge.inside(rect)] + new
    for merge in new:  # only the top-left value of a merge survives
        for row, col in _positions(merge):
            if (row, col) != (merge.r0, merge.c0) and (row, col) in sheet.cells:
                cell = sheet.cells[(row, col)]
                cell.value = cell.formula = None
                sheet.prune(row, col)
    ctx.book.touch()


def unmerge_cells(ctx: Context, obj: Obj) -> None:
    sheet, rect = grid_range(ctx.book, obj.obj("range"))
    _check_merge_overlap(sheet, rect)
    sheet.merges = [merge for merge in sheet.merges if not merge.inside(rect)]
    ctx.book.touch()


# ---------------------------------------------------------------------------------- sorting
def compare_values(left: Any, right: Any, descending: bool) -> int:
    """Sheets' sort order; blanks stay last whichever the direction."""
    lk, rk = sort_key(left), sort_key(right)
    if lk[0] == 4 or rk[0] == 4:
        return (lk[0] == 4) - (rk[0] == 4)
    if lk == rk:
        return 0
    result = -1 if lk < rk else 1
    return -result if descending else result


def sort_rows(ctx: Context, sheet: Sheet, rect: Rect, specs: list[tuple[int, bool]]) -> None:
    """Reorder the rows of ``rect`` by (column, descending) specs; cells move with their formats."""
    calc = ctx.calc
    keyed = [(row, [calc.value(sheet, row, col) for col, _ in specs]) for row in range(rect.r0, rect.r1)]

    def compare(a: tuple[int, list[Any]], b: tuple[int, list[Any]]) -> int:
        for (value_a, value_b), (_, descending) in zip(zip(a[1], b[1]), specs):
            result = compare_values(value_a, value_b, descending)
            if result:
                return result
        return 0

    order = [row for row, _ in sorted(keyed, key=functools.cmp_to_key(compare))]
    moved: dict[tuple[int, int], Cell] = {}
    for new_index, old_row in enumerate(order):
        new_row = rect.r0 + new_index
        for col in range(rect.c0, rect.c1):
            cell = sheet.cells.get((old_row, col))
            if cell is not None:
                if cell.formula is not None and new_row != old_row:
                    formula, cell = cell.formula, cell.copy()
                    cell.formula = refs.rewrite(formula, _row_offset(new_row - old_row))
                moved[(new_row, col)] = cell
    for position in _positions(rect):
        sheet.cells.pop(position, None)
    sheet.cells.update(moved)
    ctx.book.touch()


def _row_offset(rows: int) -> Callable[[refs.Ref], refs.Ref | None]:
    return lambda ref: refs.offset(ref, rows, 0)


def sort_specs(obj: Obj, sheet: Sheet) -> list[tuple[int, bool]]:
    specs = []
    for spec in obj.objs("sortSpecs"):
        column = spec.integer("dimensionIndex", 0, low=0)
        assert column is not None
        if column >= sheet.column_count:
            raise invalid(f"dimensionIndex {column} is outside the sheet.")
        order = spec.enum("sortOrder", ("ASCENDING", "DESCENDING", "SORT_ORDER_UNSPECIFIED"), "SortOrder", "ASCENDING")
        specs.append((column, order == "DESCENDING"))
    return specs


def sort_range(ctx: Context, obj: Obj) -> None:
    sheet, rect = grid_range(ctx.book, obj.obj("range"), clip=True)
    specs = sort_specs(obj, sheet)
    if not specs:
        raise invalid("At least one sort spec is required.")
    sort_rows(ctx, sheet, rect, specs)


def randomize_range(ctx: Context, obj: Obj) -> None:
    """Shuffle rows by a stable hash of the book's version: reproducible, like everything else here."""
    from toolbench.core.seeding import stable_hash

    sheet, rect = grid_range(ctx.book, obj.obj("range"), clip=True)
    order = sorted(range(rect.r0, rect.r1), key=lambda r: stable_hash(ctx.book.spreadsheet_id, ctx.book.version, r))
    _rewrite_rows(sheet, rect, order)
    ctx.book.touch()


# ---------------------------------------------------------------------------------- copy and cut
def _paste(
    ctx: Context, target: Sheet, row: int, col: int, source: Cell | None, value: Any, kind: str, shift: tuple[int, int]
) -> None:
    current = target.cells.get((row, col))
    if kind in ("PASTE_NORMAL", "PASTE_NO_BORDERS"):
        new = source.copy() if source is not None else None
        if new is not None and new.formula is not None:
            new.formula = refs.rewrite(new.formula, lambda r: refs.offset(r, *shift))
        if new is not None and kind == "PASTE_NO_BORDERS" and new.format:
            new.format.pop("borders", None)
        target.put(row, col, new)
        return
    cell = current.copy() if current is not None else Cell()
    if kind == "PASTE_VALUES":
        cell.formula = None
        cell.value = None if isinstance(value, ErrorValue) else value
    elif kind == "PASTE_FORMAT":
        cell.format = dict(source.format) if source is not None and source.format else None
    elif kind == "PASTE_FORMULA":
        cell.value = source.value if source is not None else None
        cell.formula = source.formula if source is not None else None
        if cell.formula is not None:
            cell.formula = refs.rewrite(cell.formula, lambda r: refs.offset(r, *shift))
    elif kind == "PASTE_DATA_VALIDATION":
        cell.validation = dict(source.validation) if source is not None and source.validation else None
    target.put(row, col, cell)


def copy_paste(ctx: Context, obj: Obj) -> None:
    sheet, src = grid_range(ctx.book, obj.obj("source"), clip=True)
    target, dest = grid_range(ctx.book, obj.obj("destination"), clip=True)
    kind = obj.enum("pasteType", PASTE_TYPES, "PasteType") or "PASTE_NORMAL"
    transpose = obj.enum("pasteOrientation", ("NORMAL", "TRANSPOSE"), "PasteOrientation", "NORMAL") == "TRANSPOSE"
    height, width = (src.cols, src.rows) if transpose else (src.rows, src.cols)
    work.charge(WRITE_COST * (src.rows * src.cols + dest.rows * dest.cols))
    if height == 0 or width == 0:
        return
    tiles_down = dest.rows // height if dest.rows % height == 0 and dest.rows >= height else 1
    tiles_across = dest.cols // width if dest.cols % width == 0 and dest.cols >= width else 1
    if dest.r0 + height * tiles_down > target.row_count or dest.c0 + width * tiles_across > target.column_count:
        raise invalid(f"Range exceeds grid limits. Max rows: {target.row_count}, max columns: {target.column_count}")
    calc = ctx.calc
    grid = {}
    for i in range(src.rows):
        for j in range(src.cols):
            cell = sheet.cells.get((src.r0 + i, src.c0 + j))
            grid[(j, i) if transpose else (i, j)] = (
                cell.copy() if cell is not None else None,
                calc.value(sheet, src.r0 + i, src.c0 + j) if kind == "PASTE_VALUES" else None,
                (src.r0 + i, src.c0 + j),
            )
    for tile_row in range(tiles_down):
        for tile_col in range(tiles_across):
            for (i, j), (cell, value, origin) in grid.items():
                row, col = dest.r0 + tile_row * height + i, dest.c0 + tile_col * width + j
                _paste(ctx, target, row, col, cell, value, kind, (row - origin[0], col - origin[1]))
            if kind in ("PASTE_NORMAL", "PASTE_FORMAT") and not transpose:
                _copy_merges(sheet, src, target, dest.r0 + tile_row * height, dest.c0 + tile_col * width)
    ctx.book.touch()


def _copy_merges(sheet: Sheet, src: Rect, target: Sheet, top: int, left: int) -> None:
    for merge in list(sheet.merges):
        if merge.inside(src):
            moved = Rect(
                merge.r0 - src.r0 + top, merge.r1 - src.r0 + top, merge.c0 - src.c0 + left, merge.c1 - src.c0 + left
            )
            if all(not other.intersects(moved) for other in target.merges):
                target.merges.append(moved)


def cut_paste(ctx: Context, obj: Obj) -> None:
    sheet, src = grid_range(ctx.book, obj.obj("source"), clip=True)
    work.charge_rewrite(ctx.book.sheets)  # any formula in the book may point at the cut cells
    destination = obj.obj("destination") or Obj({}, obj.at("destination"))
    target_id = destination.integer("sheetId", 0)
    target = ctx.book.sheet_by_id(target_id)  # type: ignore[arg-type]
    if target is None:
        raise invalid(f"No grid with id: {target_id}")
    top, left = destination.integer("rowIndex", 0, low=0), destination.integer("columnIndex", 0, low=0)
    assert top is not None and left is not None
    kind = obj.enum("pasteType", PASTE_TYPES, "PasteType") or "PASTE_NORMAL"
    if top + src.rows > target.row_count or left + src.cols > target.column_count:
        raise invalid(f"Range exceeds grid limits. Max rows: {target.row_count}, max columns: {target.column_count}")
    moving = {
        (row - src.r0, col - src.c0): sheet.cells.pop((row, col))
        for row, col in _positions(src)
        if (row, col) in sheet.cells
    }
    merges = [merge for merge in sheet.merges if merge.inside(src)]
    sheet.merges = [merge for merge in sheet.merges if not merge.inside(src)]
    for row, col in _positions(Rect(top, top + src.rows, left, left + src.cols)):
        target.cells.pop((row, col), None)
    for (i, j), cell in moving.items():
        if kind == "PASTE_VALUES":
            cell = Cell(value=cell.value, formula=cell.formula)
        elif kind == "PASTE_FORMAT":
            cell = Cell(format=cell.format)
        target.put(top + i, left + j, cell)
    for merge in merges:
        target.merges.append(
            Rect(merge.r0 - src.r0 + top, merge.r1 - src.r0 + top, merge.c0 - src.c0 + left, merge.c1 - src.c0 + left)
        )

    def follower(host: Sheet) -> Callable[[refs.Ref], refs.Ref | None]:
        """References wholly inside the cut range follow the cells to their new place."""

        def follow(ref: refs.Ref) -> refs.Ref | None:
            pointed = ref.sheet if ref.sheet is not None else host.title
            r0, r1, c0, c1 = ref.r0, ref.r1, ref.c0, ref.c1
            if pointed.casefold() != sheet.title.casefold() or r0 is None or r1 is None or c0 is None or c1 is None:
                return ref
            if not Rect(r0, r1 + 1, c0, c1 + 1).inside(src):
                return ref
            dr, dc = top - src.r0, left - src.c0
            sheet_name = ref.sheet if target is sheet else (None if target is host else target.title)
            return replace(ref, sheet=sheet_name, r0=r0 + dr, r1=r1 + dr, c0=c0 + dc, c1=c1 + dc)

        return follow

    for host in ctx.book.sheets:
        change = follower(host)
        for (row, col), cell in host.cells.items():
            if cell.formula is not None and not (host is target and (row - top, col - left) in moving):
                cell.formula = refs.rewrite(cell.formula, change)
    ctx.book.touch()


# ---------------------------------------------------------------------------------- find and replace
def _find_scope(ctx: Context, obj: Obj) -> list[tuple[Sheet, Rect]]:
    chosen = [key for key in ("range", "sheetId", "allSheets") if obj.has(key)]
    if len(chosen) != 1:
        raise invalid("Exactly one of range, sheetId or allSheets must be set.")
    if chosen[0] == "range":
        return [grid_range(ctx.book, obj.obj("range"), clip=True)]
    if chosen[0] == "sheetId":
        sheet_id = obj.integer("sheetId")
        sheet = ctx.book.sheet_by_id(sheet_id)  # type: ignore[arg-type]
        if sheet is None:
            raise invalid(f"No grid with id: {sheet_id}")
        return [(sheet, sheet.grid)]
    if not obj.flag("allSheets"):
        raise invalid("allSheets must be true when set.")
    return [(sheet, sheet.grid) for sheet in ctx.book.sheets]


def find_replace(ctx: Context, obj: Obj) -> dict[str, Any]:
    find = obj.text("find")
    if not find:
        raise invalid("find must not be empty.")
    replacement = obj.text("replacement", "") or ""
    case_sensitive = obj.flag("matchCase")
    if obj.flag("searchByRegex"):
        try:
            pattern = linear_regex(find, case_sensitive)
        except re2.error:
            raise invalid(f"Invalid regular expression: {find}") from None
        replacement = re.sub(r"\$(\d+)", r"\\g<\1>", replacement.replace("\\", "\\\\"))
    else:
        pattern = linear_regex(re2.escape(find), case_sensitive)
        replacement = replacement.replace("\\", "\\\\")
    entire = obj.flag("matchEntireCell")
    include_formulas = obj.flag("includeFormulas")
    work.charge(sum(len(sheet.cells) for sheet, _ in _find_scope(ctx, obj)))
    counts = {"valuesChanged": 0, "formulasChanged": 0, "rowsChanged": 0, "sheetsChanged": 0, "occurrencesChanged": 0}
    for sheet, rect in _find_scope(ctx, obj):
        rows, changed_sheet = set(), False
        for (row, col), cell in sorted(sheet.cells.items()):
            if not rect.contains(row, col) or not cell.has_content:
                continue
            if cell.formula is not None:
                if not include_formulas:
                    continue
                text = cell.formula
            elif isinstance(cell.value, bool):
                text = "TRUE" if cell.value else "FALSE"
            elif isinstance(cell.value, float):
                text = format_general(cell.value)
            else:
                text = str(cell.value)
            if entire:
                if not pattern.fullmatch(text):
                    continue
                new_text, hits = pattern.sub(replacement, text, count=1), 1
            else:
                new_text, hits = pattern.subn(replacement, text)
            if not hits or new_text == text:
                continue
            counts["occurrencesChanged"] += hits
            if cell.formula is not None:
                counts["formulasChanged"] += 1
                entered = parse_user_entered(new_text)
                cell.formula = refs.normalize(new_text) if entered.formula else None
                cell.value = None if entered.formula else entered.value
            else:
                counts["valuesChanged"] += 1
                cell.value = parse_user_entered(new_text).value if not isinstance(cell.value, str) else new_text
                cell.value = cell.value if cell.value != "" else None
            sheet.prune(row, col)
            rows.add(row)
            changed_sheet = True
        counts["rowsChanged"] += len(rows)
        counts["sheetsChanged"] += int(changed_sheet)
    ctx.book.touch()
    return {"findReplace": {key: value for key, value in counts.items() if value}}


def trim_whitespace(ctx: Context, obj: Obj) -> dict[str, Any]:
    sheet, rect = grid_range(ctx.book, obj.obj("range"), clip=True)
    work.charge(len(sheet.cells))
    changed = 0
    for (row, col), cell in list(sheet.cells.items()):
        if rect.contains(row, col) and isinstance(cell.value, str) and cell.formula is None:
            trimmed = re.sub(r"\s+", " ", cell.value.strip())
            if trimmed != cell.value:
                cell.value = trimmed or None
                sheet.prune(row, col)
                changed += 1
    ctx.book.touch()
    return {"trimWhitespace": {"cellsChangedCount": changed} if changed else {}}


def delete_duplicates(ctx: Context, obj: Obj) -> dict[str, Any]:
    sheet, rect = grid_range(ctx.book, obj.obj("range"), clip=True)
    columns: list[int] = []
    for item in obj.objs("comparisonColumns"):
        start, end = item.integer("startIndex", rect.c0, low=0), item.integer("endIndex", None)
        assert start is not None
        columns.extend(range(start, end if end is not None else start + 1))
    columns = [c for c in columns if rect.c0 <= c < rect.c1] or list(range(rect.c0, rect.c1))
    calc = ctx.calc
    seen, keep, removed = set(), [], 0
    for row in range(rect.r0, rect.r1):
        key = tuple(sort_key(calc.value(sheet, row, col)) for col in columns)
        if key in seen and any(k[0] != 4 for k in key):
            removed += 1
            continue
        seen.add(key)
        keep.append(row)
    _rewrite_rows(sheet, rect, keep)
    ctx.book.touch()
    return {"deleteDuplicates": {"duplicatesRemovedCount": removed} if removed else {}}
