"""``spreadsheets.batchUpdate``: the request dispatcher and the sheet-level requests.

Requests run in order and the batch is atomic, as in the real service: if one fails, the book is
restored and the error names it (``Invalid requests[2].addSheet: ...``). Replies come back in the
service's shapes (``{"addSheet": {"properties": ...}}``, ``{}`` for requests without a reply).
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable
from typing import Any

from toolbench.mock_services.sheets import cellops, structure, work
from toolbench.mock_services.sheets.a1 import Rect, grid_range_json
from toolbench.mock_services.sheets.body import Obj, snake
from toolbench.mock_services.sheets.celldata import normalize_color
from toolbench.mock_services.sheets.cellops import WRITE_COST, Context
from toolbench.mock_services.sheets.errors import SheetsError, invalid
from toolbench.mock_services.sheets.fields import apply_mask, mask_paths
from toolbench.mock_services.sheets.metadata import named_range_json, protected_range_json, sheet_properties
from toolbench.mock_services.sheets.model import DEFAULT_COLUMNS, DEFAULT_ROWS, Sheet, Spreadsheet
from toolbench.mock_services.sheets.ranges import dimension_range, grid_range
from toolbench.mock_services.sheets.store import SheetsStore
from toolbench.mock_services.sheets.values_api import cell_limit

MAX_REQUESTS = 1000
Handler = Callable[[Context, Obj], "dict[str, Any] | None"]
#: Real request kinds this emulator does not implement: a clear 400 rather than a silent no-op.
UNSUPPORTED = {
    "addChart",
    "updateChartSpec",
    "deleteEmbeddedObject",
    "updateEmbeddedObjectPosition",
    "updateEmbeddedObjectBorder",
    "addSlicer",
    "updateSlicerSpec",
    "addBanding",
    "updateBanding",
    "deleteBanding",
    "addFilterView",
    "updateFilterView",
    "deleteFilterView",
    "duplicateFilterView",
    "insertRange",
    "deleteRange",
    "moveDimension",
    "textToColumns",
    "autoFill",
    "pasteData",
    "appendCells",
    "createDeveloperMetadata",
    "updateDeveloperMetadata",
    "deleteDeveloperMetadata",
    "addDataSource",
    "updateDataSource",
    "deleteDataSource",
    "refreshDataSource",
    "cancelDataSourceRefresh",
    "addTable",
    "updateTable",
    "deleteTable",
}


def _check_capacity(ctx: Context, extra_cells: int) -> None:
    if extra_cells > 0 and ctx.book.cell_count + extra_cells > ctx.store.max_cells:
        raise cell_limit(ctx.store)


def _sheet(ctx: Context, sheet_id: int | None) -> Sheet:
    sheet = ctx.book.sheet_by_id(sheet_id if sheet_id is not None else 0)
    if sheet is None:
        raise invalid(f"No grid with id: {sheet_id if sheet_id is not None else 0}")
    return sheet


def _valid_title(ctx: Context, title: str, own: Sheet | None = None) -> str:
    if not title.strip():
        raise invalid("The sheet name cannot be empty.")
    if len(title) > 100:
        raise invalid("The sheet name must be at most 100 characters.")
    existing = ctx.book.sheet_by_title(title)
    if existing is not None and existing is not own:
        raise invalid(f'A sheet with the name "{title}" already exists. Please enter another name.')
    return title


def _tab_color(properties: Obj) -> tuple[bool, dict[str, Any] | None]:
    """(given, colour) from tabColor / tabColorStyle."""
    style = properties.raw("tabColorStyle")
    if "tabColorStyle" in properties.data:
        if isinstance(style, dict) and isinstance(style.get("rgbColor"), dict):
            return True, normalize_color(_eight_bit(style["rgbColor"]))
        return True, None
    if "tabColor" in properties.data:
        color = properties.raw("tabColor")
        return True, normalize_color(_eight_bit(color)) if isinstance(color, dict) else None
    return False, None


def _eight_bit(color: dict[str, Any]) -> dict[str, Any]:
    """A tab colour as the product keeps it: 8 bits a channel, rounded down (blue 0.5 reads back as
    127/255, 0.49803922)."""
    out = dict(color)
    for key in ("red", "green", "blue"):
        value = out.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            out[key] = math.floor(min(max(value, 0.0), 1.0) * 255 + 1e-6) / 255
    return out


# ---------------------------------------------------------------------------------- spreadsheet and sheets
def update_spreadsheet_properties(ctx: Context, obj: Obj) -> None:
    properties = obj.obj("properties") or Obj({}, obj.at("properties"))
    text = obj.text("fields")
    if not text:
        raise invalid("At least one field must be updated, but 'fields' is empty.")
    names = {path[0] for path in mask_paths(text)}
    if "*" in names:
        names = {"title", "locale", "timeZone", "autoRecalc"}
    if "title" in names:
        title = properties.text("title", "") or ""
        if not title.strip():
            raise invalid("The spreadsheet title cannot be empty.")
        ctx.store.rename(ctx.book.spreadsheet_id, title)
    if "locale" in names:
        ctx.book.locale = properties.text("locale", "en_US") or "en_US"
    if "timeZone" in names:
        ctx.book.time_zone = properties.text("timeZone", "Etc/GMT") or "Etc/GMT"
    if "autoRecalc" in names:
        ctx.book.auto_recalc = (
            properties.enum(
                "autoRecalc",
                ("ON_CHANGE", "MINUTE", "HOUR", "RECALCULATION_INTERVAL_UNSPECIFIED"),
                "RecalculationInterval",
                "ON_CHANGE",
            )
            or "ON_CHANGE"
        )
    ctx.book.touch()


def _move_sheet(book: Spreadsheet, sheet: Sheet, index: int) -> None:
    """Indexes count "before the move", as the API documents: to put S1 after S2 of [S1, S2, S3], ask for 2."""
    old = book.index_of(sheet)
    target = index if index <= old else index - 1
    book.sheets.remove(sheet)
    book.sheets.insert(max(0, min(target, len(book.sheets))), sheet)


def update_sheet_properties(ctx: Context, obj: Obj) -> None:
    properties = obj.required_obj("properties")
    sheet = _sheet(ctx, properties.integer("sheetId", 0))
    text = obj.text("fields")
    if not text:
        raise invalid("At least one field must be updated, but 'fields' is empty.")
    paths = {".".join(path) for path in mask_paths(text)}
    if "*" in paths:
        paths = {"title", "index", "hidden", "tabColorStyle", "rightToLeft", "gridProperties"}
    grid = properties.obj("gridProperties") or Obj({}, properties.at("gridProperties"))

    def grid_field(name: str) -> bool:
        return "gridProperties" in paths or f"gridProperties.{name}" in paths

    rows = grid.integer("rowCount", DEFAULT_ROWS, low=0) if grid_field("rowCount") else sheet.row_count
    cols = grid.integer("columnCount", DEFAULT_COLUMNS, low=0) if grid_field("columnCount") else sheet.column_count
    assert rows is not None and cols is not None
    if rows < 1:
        raise invalid("You can't delete all the rows on the sheet.")
    if cols < 1:
        raise invalid("You can't delete all the columns on the sheet.")
    if cols > 18278:
        raise invalid("This action would increase the number of columns in the workbook above the limit of 18278.")
    _check_capacity(ctx, rows * cols - sheet.cell_count)
    frozen_rows = grid.integer("frozenRowCount", 0, low=0) if grid_field("frozenRowCount") else sheet.frozen_rows
    frozen_cols = (
        grid.integer("frozenColumnCount", 0, low=0) if grid_field("frozenColumnCount") else sheet.frozen_columns
    )
    assert frozen_rows is not None and frozen_cols is not None
    if frozen_rows >= rows and frozen_rows:
        raise invalid("You can't freeze all visible rows on the sheet.")
    if frozen_cols >= cols and frozen_cols:
        raise invalid("You can't freeze all visible columns on the sheet.")
    title = sheet.title
    if "title" in paths:
        title = _valid_title(ctx, properties.text("title", "") or "", sheet)
    hidden = properties.flag("hidden") if "hidden" in paths else sheet.hidden
    if hidden and not sheet.hidden and all(other.hidden for other in ctx.book.sheets if other is not sheet):
        raise invalid("You can't hide all the sheets in a document.")
    index = properties.integer("index", 0, low=0) if "index" in paths else None
    # -- everything validated: apply
    if rows < sheet.row_count:
        structure.delete_dimension(ctx.book, sheet, True, rows, sheet.row_count)
    if cols < sheet.column_count:
        structure.delete_dimension(ctx.book, sheet, False, cols, sheet.column_count)
    sheet.row_count, sheet.column_count = rows, cols
    sheet.frozen_rows, sheet.frozen_columns = frozen_rows, frozen_cols
    if grid_field("hideGridlines"):
        sheet.hide_gridlines = grid.flag("hideGridlines")
    if grid_field("rowGroupControlAfter"):
        sheet.row_group_control_after = grid.flag("rowGroupControlAfter")
    if grid_field("columnGroupControlAfter"):
        sheet.column_group_control_after = grid.flag("columnGroupControlAfter")
    if title != sheet.title:
        structure.rename_sheet(ctx.book, sheet, title)
    sheet.hidden = hidden
    if "rightToLeft" in paths:
        sheet.right_to_left = properties.flag("rightToLeft")
    if "tabColor" in paths or "tabColorStyle" in paths:
        _, sheet.tab_color = _tab_color(properties)
        if sheet.tab_color == {} and "tabColorStyle" in properties.data and not properties.data.get("tabColorStyle"):
            sheet.tab_color = None
    if index is not None:
        _move_sheet(ctx.book, sheet, index)
    ctx.book.touch()


def _new_sheet(ctx: Context, properties: Obj) -> Sheet:
    sheet_id = properties.integer("sheetId", None, low=0)
    if sheet_id is not None and ctx.book.sheet_by_id(sheet_id) is not None:
        raise invalid(f"A sheet with the id {sheet_id} already exists. Please choose another id.")
    title = properties.text("title")
    if title is None:
        number = len(ctx.book.sheets) + 1
        while ctx.book.sheet_by_title(f"Sheet{number}") is not None:
            number += 1
        title = f"Sheet{number}"
    _valid_title(ctx, title)
    grid = properties.obj("gridProperties") or Obj({}, properties.at("gridProperties"))
    rows = grid.integer("rowCount", DEFAULT_ROWS, low=1)
    cols = grid.integer("columnCount", DEFAULT_COLUMNS, low=1)
    assert rows is not None and cols is not None
    if cols > 18278:
        raise invalid("This action would increase the number of columns in the workbook above the limit of 18278.")
    _check_capacity(ctx, rows * cols)
    sheet = Sheet(sheet_id if sheet_id is not None else ctx.book.new_sheet_id(), title, rows, cols)
    sheet.frozen_rows = grid.integer("frozenRowCount", 0, low=0) or 0
    sheet.frozen_columns = grid.integer("frozenColumnCount", 0, low=0) or 0
    sheet.hide_gridlines = grid.flag("hideGridlines")
    sheet.hidden = properties.flag("hidden")
    sheet.right_to_left = properties.flag("rightToLeft")
    _, sheet.tab_color = _tab_color(properties)
    return sheet


def add_sheet(ctx: Context, obj: Obj) -> dict[str, Any]:
    properties = obj.obj("properties") or Obj({}, obj.at("properties"))
    sheet = _new_sheet(ctx, properties)
    index = properties.integer("index", None, low=0)
    position = len(ctx.book.sheets) if index is None else min(index, len(ctx.book.sheets))
    ctx.book.sheets.insert(position, sheet)
    ctx.book.touch()
    return {"addSheet": {"properties": sheet_properties(ctx.book, sheet)}}


def delete_sheet(ctx: Context, obj: Obj) -> None:
    sheet = _sheet(ctx, obj.integer("sheetId", 0))
    if len(ctx.book.sheets) == 1:
        raise invalid("You can't remove all the sheets in a document.")
    if all(other.hidden for other in ctx.book.sheets if other is not sheet):
        raise invalid("You can't remove all the visible sheets in a document.")
    ctx.book.sheets.remove(sheet)
    ctx.book.named_ranges = [item for item in ctx.book.named_ranges if item["sheetId"] != sheet.sheet_id]
    ctx.book.touch()


def duplicate_sheet(ctx: Context, obj: Obj) -> dict[str, Any]:
    source = _sheet(ctx, obj.integer("sourceSheetId", 0))
    new_id = obj.integer("newSheetId", None, low=0)
    if new_id is not None and ctx.book.sheet_by_id(new_id) is not None:
        raise invalid(f"A sheet with the id {new_id} already exists. Please choose another id.")
    name = obj.text("newSheetName")
    title = _valid_title(ctx, name) if name else ctx.book.unique_title(f"Copy of {source.title}")
    _check_capacity(ctx, source.cell_count)
    data = source.to_data()
    data["sheetId"] = new_id if new_id is not None else ctx.book.new_sheet_id()
    data["title"] = title
    data["hidden"] = False
    for item in data["protectedRanges"]:
        item["protectedRangeId"] = ctx.book.next_number("protected")
    copy_sheet = Sheet.from_data(data)
    index = obj.integer("insertSheetIndex", None, low=0)
    position = ctx.book.index_of(source) + 1 if index is None else min(index, len(ctx.book.sheets))
    ctx.book.sheets.insert(position, copy_sheet)
    ctx.book.touch()
    return {"duplicateSheet": {"properties": sheet_properties(ctx.book, copy_sheet)}}


# ---------------------------------------------------------------------------------- dimensions
def insert_dimension(ctx: Context, obj: Obj) -> None:
    sheet, rows, start, end = dimension_range(ctx.book, obj.obj("range"))
    size = sheet.row_count if rows else sheet.column_count
    inherit = obj.flag("inheritFromBefore")
    if start > size:
        raise invalid(f"Cannot insert {'rows' if rows else 'columns'} after the end of the sheet: index {start}.")
    if inherit and start == 0:
        raise invalid("Cannot inherit properties from before when inserting at the start.")
    count = end - start
    if not rows and sheet.column_count + count > 18278:
        raise invalid("This action would increase the number of columns in the workbook above the limit of 18278.")
    _check_capacity(ctx, count * (sheet.column_count if rows else sheet.row_count))
    structure.insert_dimension(ctx.book, sheet, rows, start, count, inherit)


def delete_dimension(ctx: Context, obj: Obj) -> None:
    sheet, rows, start, end = dimension_range(ctx.book, obj.obj("range"))
    size = sheet.row_count if rows else sheet.column_count
    if end > size:
        raise invalid(f"Cannot delete {'rows' if rows else 'columns'} beyond the end of the sheet ({size}).")
    if start == 0 and end >= size:
        raise invalid(f"You can't delete all the {'rows' if rows else 'columns'} on the sheet.")
    structure.delete_dimension(ctx.book, sheet, rows, start, end)


def append_dimension(ctx: Context, obj: Obj) -> None:
    sheet = _sheet(ctx, obj.integer("sheetId", 0))
    rows = obj.enum("dimension", ("ROWS", "COLUMNS"), "Dimension") == "ROWS"
    if obj.raw("dimension") is None:
        raise invalid("dimension is required (ROWS or COLUMNS).")
    length = obj.integer("length", 0)
    assert length is not None
    if length < 1:
        raise invalid("length must be at least 1.")
    if not rows and sheet.column_count + length > 18278:
        raise invalid("This action would increase the number of columns in the workbook above the limit of 18278.")
    _check_capacity(ctx, length * (sheet.column_count if rows else sheet.row_count))
    if rows:
        sheet.row_count += length
    else:
        sheet.column_count += length
    ctx.book.touch()


def update_dimension_properties(ctx: Context, obj: Obj) -> None:
    sheet, rows, start, end = dimension_range(ctx.book, obj.obj("range"))
    properties = obj.obj("properties") or Obj({}, obj.at("properties"))
    text = obj.text("fields")
    if not text:
        raise invalid("At least one field must be updated, but 'fields' is empty.")
    size = sheet.row_count if rows else sheet.column_count
    if end > size:
        raise invalid(f"Range exceeds grid limits: {'rows' if rows else 'columns'} end at {size}.")
    work.charge(WRITE_COST * (end - start))  # one masked write per row or column
    pixel = properties.integer("pixelSize", None, low=0)
    hidden = properties.flag("hiddenByUser")
    source: dict[str, Any] = {"hiddenByUser": True} if hidden else {}
    if pixel is not None:
        source["pixelSize"] = pixel
    meta = sheet.row_meta if rows else sheet.column_meta
    paths = mask_paths(text)
    for index in range(start, end):
        current = dict(meta.get(index, {}))
        apply_mask(current, source, paths, ("pixelSize", "hiddenByUser"))
        if current:
            meta[index] = current
        else:
            meta.pop(index, None)
    ctx.book.touch()


def auto_resize_dimensions(ctx: Context, obj: Obj) -> None:
    """Widths from the longest formatted text (about 7 px a character), deterministically."""
    sheet, rows, start, end = dimension_range(ctx.book, obj.obj("dimensions"))
    if rows:
        return
    work.charge(len(sheet.cells))  # every cell's formatted text is measured
    from toolbench.mock_services.sheets.values import formatted

    calc = ctx.calc
    widths: dict[int, int] = {}
    for (row, col), cell in sheet.cells.items():
        if start <= col < end and cell.has_content:
            text = formatted(calc.value(sheet, row, col), calc.number_format(sheet, row, col))
            widths[col] = max(widths.get(col, 0), len(text))
    for col, chars in widths.items():
        sheet.column_meta.setdefault(col, {})["pixelSize"] = max(20, chars * 7 + 10)
    ctx.book.touch()


def _groups(sheet: Sheet, rows: bool) -> list[dict[str, Any]]:
    return sheet.row_groups if rows else sheet.column_groups


def _group_reply(sheet: Sheet, rows: bool) -> list[dict[str, Any]]:
    from toolbench.mock_services.sheets.metadata import dimension_groups_json

    return dimension_groups_json(sheet, rows)


def add_dimension_group(ctx: Context, obj: Obj) -> dict[str, Any]:
    sheet, rows, start, end = dimension_range(ctx.book, obj.obj("range"))
    groups = _groups(sheet, rows)
    if any(g["start"] == start and g["end"] == end for g in groups):
        raise invalid("A group with this range already exists.")
    depth = 1 + sum(1 for g in groups if g["start"] <= start and end <= g["end"])
    for g in groups:
        if start <= g["start"] and g["end"] <= end:
            g["depth"] += 1
    groups.append({"start": start, "end": end, "depth": depth, "collapsed": False})
    if rows:
        sheet.row_group_control_after = True
    else:
        sheet.column_group_control_after = True
    ctx.book.touch()
    return {"addDimensionGroup": {"dimensionGroups": _group_reply(sheet, rows)}}


def delete_dimension_group(ctx: Context, obj: Obj) -> dict[str, Any]:
    sheet, rows, start, end = dimension_range(ctx.book, obj.obj("range"))
    groups = _groups(sheet, rows)
    found = next((g for g in groups if g["start"] == start and g["end"] == end), None)
    if found is None:
        raise invalid("No dimension group with this range exists.")
    groups.remove(found)
    for g in groups:
        if start <= g["start"] and g["end"] <= end:
            g["depth"] = max(1, g["depth"] - 1)
    ctx.book.touch()
    remaining = _group_reply(sheet, rows)
    # An empty repeated field is left out of the JSON: the last group gone, the reply is {}.
    return {"deleteDimensionGroup": {"dimensionGroups": remaining} if remaining else {}}


def update_dimension_group(ctx: Context, obj: Obj) -> None:
    group = obj.required_obj("dimensionGroup")
    sheet, rows, start, end = dimension_range(ctx.book, group.obj("range"))
    found = next((g for g in _groups(sheet, rows) if g["start"] == start and g["end"] == end), None)
    if found is None:
        raise invalid("No dimension group with this range exists.")
    if "collapsed" in (obj.text("fields") or "") or obj.text("fields") == "*":
        found["collapsed"] = group.flag("collapsed")
    ctx.book.touch()


# ---------------------------------------------------------------------------------- filters and ranges
def set_basic_filter(ctx: Context, obj: Obj) -> None:
    spec = obj.required_obj("filter")
    sheet, rect = grid_range(ctx.book, spec.obj("range"), clip=True)
    specs = cellops.sort_specs(spec, sheet)
    sheet.basic_filter = {"range": rect}
    for key in ("sortSpecs", "filterSpecs", "criteria"):
        if spec.raw(key):
            sheet.basic_filter[key] = copy.deepcopy(spec.raw(key))
    if specs and rect.rows > 1:
        cellops.sort_rows(ctx, sheet, Rect(rect.r0 + 1, rect.r1, rect.c0, rect.c1), specs)
    ctx.book.touch()


def clear_basic_filter(ctx: Context, obj: Obj) -> None:
    _sheet(ctx, obj.integer("sheetId", 0)).basic_filter = None
    ctx.book.touch()


def _valid_range_name(name: str) -> bool:
    """Letters, digits and underscores, not starting with a digit, not TRUE/FALSE, not an A1 or R1C1 reference."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,249}", name) or name.lower() in ("true", "false"):
        return False
    return not re.fullmatch(r"[A-Za-z]{1,3}[0-9]+|[Rr][0-9]*[Cc][0-9]*", name)


def add_named_range(ctx: Context, obj: Obj) -> dict[str, Any]:
    spec = obj.required_obj("namedRange")
    name = spec.text("name", "") or ""
    if not _valid_range_name(name):
        raise invalid(f"The range name '{name}' is not valid.")
    if ctx.book.named_range(name) is not None:
        raise invalid(f"A named range with the name '{name}' already exists.")
    sheet, rect = grid_range(ctx.book, spec.obj("range"), clip=True)
    range_id = spec.text("namedRangeId") or str(ctx.book.next_number("named"))
    if any(item["namedRangeId"] == range_id for item in ctx.book.named_ranges):
        raise invalid(f"A named range with the id '{range_id}' already exists.")
    item = {"namedRangeId": range_id, "name": name, "sheetId": sheet.sheet_id, "range": rect}
    ctx.book.named_ranges.append(item)
    ctx.book.touch()
    return {"addNamedRange": {"namedRange": named_range_json(item)}}


def delete_named_range(ctx: Context, obj: Obj) -> None:
    range_id = obj.text("namedRangeId", "")
    before = len(ctx.book.named_ranges)
    ctx.book.named_ranges = [item for item in ctx.book.named_ranges if item["namedRangeId"] != range_id]
    if len(ctx.book.named_ranges) == before:
        raise invalid(f"No named range with id: {range_id}")
    ctx.book.touch()


def update_named_range(ctx: Context, obj: Obj) -> None:
    spec = obj.required_obj("namedRange")
    range_id = spec.text("namedRangeId", "")
    item = next((i for i in ctx.book.named_ranges if i["namedRangeId"] == range_id), None)
    if item is None:
        raise invalid(f"No named range with id: {range_id}")
    names = {path[0] for path in mask_paths(obj.text("fields") or "*")}
    if "name" in names or "*" in names:
        name = spec.text("name", "") or ""
        if not _valid_range_name(name):
            raise invalid(f"The range name '{name}' is not valid.")
        other = ctx.book.named_range(name)
        if other is not None and other is not item:
            raise invalid(f"A named range with the name '{name}' already exists.")
        item["name"] = name
    if "range" in names or "*" in names:
        sheet, rect = grid_range(ctx.book, spec.obj("range"), clip=True)
        item.update(sheetId=sheet.sheet_id, range=rect)
    ctx.book.touch()


def _find_protected(ctx: Context, range_id: int | None) -> tuple[Sheet, dict[str, Any]]:
    for sheet in ctx.book.sheets:
        for item in sheet.protected_ranges:
            if item["protectedRangeId"] == range_id:
                return sheet, item
    raise invalid(f"No protected range with id: {range_id}")


def add_protected_range(ctx: Context, obj: Obj) -> dict[str, Any]:
    spec = obj.required_obj("protectedRange")
    if spec.has("namedRangeId"):
        named = next((i for i in ctx.book.named_ranges if i["namedRangeId"] == spec.text("namedRangeId")), None)
        if named is None:
            raise invalid(f"No named range with id: {spec.text('namedRangeId')}")
        sheet, rect = _sheet(ctx, named["sheetId"]), named["range"]
    else:
        sheet, rect = grid_range(ctx.book, spec.obj("range"), clip=True)
    item: dict[str, Any] = {"protectedRangeId": ctx.book.next_number("protected"), "range": rect}
    if spec.text("description"):
        item["description"] = spec.text("description")
    warning = spec.flag("warningOnly")
    if warning:
        item["warningOnly"] = True
    item["requestingUserCanEdit"] = True
    requested = _editors(spec.obj("editors"))
    item["editors"] = _with_owner(ctx, requested)
    if spec.raw("unprotectedRanges"):
        item["unprotectedRanges"] = copy.deepcopy(spec.raw("unprotectedRanges"))
    sheet.protected_ranges.append(item)
    ctx.book.touch()
    # The reply echoes the editors as asked (empty lists left out, even for a warning-only range);
    # the owner, always an editor, shows up in the spreadsheet's metadata afterwards.
    return {"addProtectedRange": {"protectedRange": {**protected_range_json(sheet, item), "editors": requested}}}


def _editors(editors: Obj | None) -> dict[str, Any]:
    """An Editors object as given: ``users`` and ``groups`` (non-empty lists of addresses), ``domainUsersCanEdit``."""
    out: dict[str, Any] = {}
    if editors is None:
        return out
    for key in ("users", "groups"):
        found = [item for item in editors.array(key) if isinstance(item, str)]
        if found:
            out[key] = found
    if editors.flag("domainUsersCanEdit"):
        out["domainUsersCanEdit"] = True
    return out


def _with_owner(ctx: Context, editors: dict[str, Any]) -> dict[str, Any]:
    """The editors a protected range has: those given, and the spreadsheet's owner first."""
    users = [user for user in editors.get("users", []) if user != ctx.store.owner_email]
    return {**editors, "users": [ctx.store.owner_email, *users]}


def delete_protected_range(ctx: Context, obj: Obj) -> None:
    sheet, item = _find_protected(ctx, obj.integer("protectedRangeId"))
    sheet.protected_ranges.remove(item)
    ctx.book.touch()


def update_protected_range(ctx: Context, obj: Obj) -> None:
    spec = obj.required_obj("protectedRange")
    sheet, item = _find_protected(ctx, spec.integer("protectedRangeId"))
    names = {path[0] for path in mask_paths(obj.text("fields") or "*")}
    for name in ("description", "warningOnly", "unprotectedRanges"):
        if name in names or "*" in names:
            if spec.raw(name) is None:
                item.pop(name, None)
            else:
                item[name] = copy.deepcopy(spec.raw(name))
    if "editors" in names or "*" in names:
        item["editors"] = _with_owner(ctx, _editors(spec.obj("editors")))
    if "range" in names or "*" in names:
        new_sheet, rect = grid_range(ctx.book, spec.obj("range"), clip=True)
        item["range"] = rect
        if new_sheet is not sheet:
            sheet.protected_ranges.remove(item)
            new_sheet.protected_ranges.append(item)
    ctx.book.touch()


def add_conditional_format_rule(ctx: Context, obj: Obj) -> None:
    rule = obj.required_obj("rule")
    ranges = [grid_range(ctx.book, item, clip=True) for item in rule.objs("ranges")]
    if not ranges:
        raise invalid("A conditional format rule needs at least one range.")
    sheet = ranges[0][0]
    if any(target is not sheet for target, _ in ranges):
        raise invalid("All ranges of a conditional format rule must be on one sheet.")
    stored = {key: copy.deepcopy(value) for key, value in rule.data.items() if key != "ranges"}
    stored["ranges"] = [rect for _, rect in ranges]
    index = obj.integer("index", len(sheet.conditional_formats), low=0)
    sheet.conditional_formats.insert(min(index or 0, len(sheet.conditional_formats)), stored)
    ctx.book.touch()


def delete_conditional_format_rule(ctx: Context, obj: Obj) -> dict[str, Any]:
    sheet = _sheet(ctx, obj.integer("sheetId", 0))
    index = obj.integer("index", 0, low=0)
    assert index is not None
    if index >= len(sheet.conditional_formats):
        raise invalid(f"No conditional format on sheet {sheet.sheet_id} at index {index}")
    rule = sheet.conditional_formats.pop(index)
    ctx.book.touch()
    out = {k: copy.deepcopy(v) for k, v in rule.items() if k != "ranges"}
    out["ranges"] = [grid_range_json(sheet.sheet_id, rect) for rect in rule["ranges"]]
    return {"deleteConditionalFormatRule": {"rule": out}}


HANDLERS: dict[str, Handler] = {
    "updateSpreadsheetProperties": update_spreadsheet_properties,
    "updateSheetProperties": update_sheet_properties,
    "addSheet": add_sheet,
    "deleteSheet": delete_sheet,
    "duplicateSheet": duplicate_sheet,
    "insertDimension": insert_dimension,
    "deleteDimension": delete_dimension,
    "appendDimension": append_dimension,
    "updateDimensionProperties": update_dimension_properties,
    "autoResizeDimensions": auto_resize_dimensions,
    "addDimensionGroup": add_dimension_group,
    "deleteDimensionGroup": delete_dimension_group,
    "updateDimensionGroup": update_dimension_group,
    "setBasicFilter": set_basic_filter,
    "clearBasicFilter": clear_basic_filter,
    "addNamedRange": add_named_range,
    "deleteNamedRange": delete_named_range,
    "updateNamedRange": update_named_range,
    "addProtectedRange": add_protected_range,
    "deleteProtectedRange": delete_protected_range,
    "updateProtectedRange": update_protected_range,
    "addConditionalFormatRule": add_conditional_format_rule,
    "deleteConditionalFormatRule": delete_conditional_format_rule,
    "repeatCell": cellops.repeat_cell,
    "updateCells": cellops.update_cells,
    "updateBorders": cellops.update_borders,
    "setDataValidation": cellops.set_data_validation,
    "mergeCells": cellops.merge_cells,
    "unmergeCells": cellops.unmerge_cells,
    "sortRange": cellops.sort_range,
    "randomizeRange": cellops.randomize_range,
    "copyPaste": cellops.copy_paste,
    "cutPaste": cellops.cut_paste,
    "findReplace": cellops.find_replace,
    "trimWhitespace": cellops.trim_whitespace,
    "deleteDuplicates": cellops.delete_duplicates,
}


def batch_update(store: SheetsStore, book: Spreadsheet, body: Any) -> dict[str, Any]:
    """Run a batchUpdate body against ``book``; all requests or none take effect."""
    top = Obj(body, "")
    requests = top.array("requests")
    if len(requests) > MAX_REQUESTS:
        raise invalid(f"Too many requests in one batch: {len(requests)} (at most {MAX_REQUESTS}).")
    ctx = Context(store, book)
    # Handlers validate before they change anything, so only a batch of several needs a copy to roll back to.
    if len(requests) > 1:
        work.charge(book.cell_count)
    saved = book.to_data() if len(requests) > 1 else None
    saved_name = store.file(book.spreadsheet_id).name if book.spreadsheet_id in store.files else None
    replies: list[dict[str, Any]] = []
    try:
        for index, request in enumerate(requests):
            path = f"requests[{index}]"
            if not isinstance(request, dict):
                raise invalid(
                    f"Invalid value at '{path}' (type.googleapis.com/google.apps.sheets.v4.Request), "
                    f"{str(request)[:100]}"
                )
            kinds = [key for key in request if request[key] is not None]
            if not kinds:
                raise invalid(f"Invalid {path}: no request set.")
            if len(kinds) > 1:
                raise invalid(
                    f"Invalid value at '{path}' (oneof), oneof field 'kind' is already set. Cannot set '{kinds[1]}'"
                )
            kind = kinds[0]
            handler = HANDLERS.get(kind)
            if handler is None:
                if kind in UNSUPPORTED:
                    raise invalid(f"Invalid {path}.{kind}: {kind} is not supported by this emulator.")
                raise invalid(f"Invalid JSON payload received. Unknown name \"{kind}\" at '{path}': Cannot find field.")
            try:
                reply = handler(ctx, Obj(request[kind], f"{path}.{snake(kind)}"))
            except SheetsError as exc:
                if exc.code == 400 and not exc.message.startswith(("Invalid ", "This action")):
                    raise invalid(f"Invalid {path}.{kind}: {exc.message}") from None
                raise
            replies.append(reply or {})
            if book.cell_count > store.max_cells:
                raise cell_limit(store)
    except BaseException:
        if saved is not None:
            restored = Spreadsheet.from_data(saved)
            book.__dict__.update(restored.__dict__)
            book.touch()
            if saved_name is not None:
                store.files[book.spreadsheet_id].name = saved_name
        raise
    out: dict[str, Any] = {"spreadsheetId": book.spreadsheet_id, "replies": replies}
    if top.flag("includeSpreadsheetInResponse"):
        from toolbench.mock_services.sheets.metadata import spreadsheet_json

        out["updatedSpreadsheet"] = spreadsheet_json(book, None, False, None)
    return out
