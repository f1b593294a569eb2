"""A cell and the API's ``CellData`` JSON, both ways, plus formats as the product stores them.

Formats are normalised the way the service echoes them: a colour given as ``backgroundColor`` also
appears as ``backgroundColorStyle.rgbColor`` (and the reverse), and zero colour components are
dropped (black is ``{}``), so a format read back compares equal however it was written.
"""

from __future__ import annotations

import copy
import struct
from collections.abc import Iterable, Sequence
from typing import Any

from toolbench.mock_services.sheets import refs, work
from toolbench.mock_services.sheets.body import Obj, bad_value
from toolbench.mock_services.sheets.errors import check_cell_text, invalid
from toolbench.mock_services.sheets.model import Cell
from toolbench.mock_services.sheets.values import Entered, json_number, typed_value_json

DEFAULT_FORMAT: dict[str, Any] = {
    "backgroundColor": {"red": 1, "green": 1, "blue": 1},
    "padding": {"top": 2, "right": 3, "bottom": 2, "left": 3},
    "verticalAlignment": "BOTTOM",
    "wrapStrategy": "OVERFLOW_CELL",
    "textFormat": {
        "foregroundColor": {},
        "fontFamily": "arial,sans,sans-serif",
        "fontSize": 10,
        "bold": False,
        "italic": False,
        "strikethrough": False,
        "underline": False,
        "foregroundColorStyle": {"rgbColor": {}},
    },
    "backgroundColorStyle": {"rgbColor": {"red": 1, "green": 1, "blue": 1}},
}
#: Fields of CellData a "*" mask covers.
CELL_FIELDS = (
    "userEnteredValue",
    "userEnteredFormat",
    "note",
    "dataValidation",
    "pivotTable",
    "textFormatRuns",
    "hyperlink",
)
_COLOR_PAIRS = (
    ("backgroundColor", "backgroundColorStyle"),
    ("foregroundColor", "foregroundColorStyle"),
    ("color", "colorStyle"),
)


def float32_number(value: float) -> int | float:
    """``value`` as a proto ``float`` field comes back: rounded to single precision and written with
    the fewest digits that round-trip (127/255 is ``0.49803922``), integral values without a fraction."""
    single = struct.unpack("<f", struct.pack("<f", value))[0]
    for digits in range(1, 10):
        text = f"{single:.{digits}g}"
        if struct.unpack("<f", struct.pack("<f", float(text)))[0] == single:
            return json_number(float(text))
    return json_number(single)


def normalize_color(color: Any) -> Any:
    """A Color with zero components dropped and numbers as the API writes them (single precision:
    Color's components are proto floats)."""
    if not isinstance(color, dict):
        return color
    out = {}
    for key in ("red", "green", "blue", "alpha"):
        value = color.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value != 0:
            if key == "alpha" and value == 1:
                continue
            try:
                out[key] = float32_number(float(value))
            except OverflowError:  # beyond single precision: the transcoder would refuse it; keep it as sent
                out[key] = json_number(float(value))
    return out


def normalize_format(fmt: Any) -> Any:
    """A CellFormat (or any nested part) with colours normalised and the colour/style pairs in step."""
    if isinstance(fmt, list):
        return [normalize_format(item) for item in fmt]
    if not isinstance(fmt, dict):
        return fmt
    out = {key: normalize_format(value) for key, value in fmt.items()}
    for key in ("red", "green", "blue", "alpha"):
        if key in out:
            return normalize_color(out)
    for plain, style in _COLOR_PAIRS:
        if plain in out and style not in out:
            out[style] = {"rgbColor": copy.deepcopy(out[plain])}
        elif style in out and plain not in out and isinstance(out[style], dict) and "rgbColor" in out[style]:
            out[plain] = copy.deepcopy(out[style]["rgbColor"])
    return out


def sync_colors(fmt: dict[str, Any], paths: list[list[str]]) -> dict[str, Any]:
    """After a masked write, make each colour and its ``...Style`` twin agree with the one that was written."""
    written = {tuple(path) for path in paths}
    for path in written:
        for plain, style in _COLOR_PAIRS:
            for mine, twin in ((plain, style), (style, plain)):
                if path[-1] == mine and path[:-1] + (twin,) not in written:
                    node: Any = fmt
                    for name in path[1:-1]:
                        node = node.get(name) if isinstance(node, dict) else None
                    if isinstance(node, dict):
                        node.pop(twin, None)
    return normalize_format(fmt)


def deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def effective_format(cell: Cell | None, number_format: dict[str, Any] | None) -> dict[str, Any]:
    fmt = deep_merge(DEFAULT_FORMAT, cell.format or {}) if cell is not None else copy.deepcopy(DEFAULT_FORMAT)
    if number_format:
        fmt["numberFormat"] = dict(number_format)
    return fmt


def charge_typed_grid(rows: Iterable[Sequence[Any]], formulas_possible: bool) -> None:
    """Charge writing ``rows`` of typed values (one unit per value, ``FORMULA_REWRITE_COST`` per
    formula to normalise), row by row, before any is written: a request refused on the way (out of
    work or past its deadline) leaves the sheet as it was."""
    for line in rows:
        formulas = sum(1 for item in line if isinstance(item, str) and item[:1] == "=") if formulas_possible else 0
        work.charge(len(line) + work.FORMULA_REWRITE_COST * formulas + 1)


def apply_entered(cell: Cell, entered: Entered) -> None:
    """Store what was typed; a recognised shape (date, %, $) sets the number format unless one of its type is set."""
    if entered.formula is not None:
        cell.formula, cell.value = refs.normalize(entered.formula), None
    else:
        cell.formula, cell.value = None, entered.value
    if entered.number_format is not None:
        current = (cell.format or {}).get("numberFormat")
        if not current or current.get("type") != entered.number_format.get("type"):
            cell.format = dict(cell.format or {})
            cell.format["numberFormat"] = dict(entered.number_format)


def user_entered_json(cell: Cell) -> dict[str, Any] | None:
    if cell.formula is not None:
        return {"formulaValue": cell.formula}
    return typed_value_json(cell.value)  # a stored literal: never an error value


def cell_to_json(cell: Cell | None) -> dict[str, Any]:
    """The user-entered half of a CellData (what updateCells writes and masks act on)."""
    if cell is None:
        return {}
    out: dict[str, Any] = {}
    entered = user_entered_json(cell)
    if entered is not None:
        out["userEnteredValue"] = entered
    if cell.format:
        out["userEnteredFormat"] = copy.deepcopy(cell.format)
    add_cell_attachments(cell, out)
    return out


def add_cell_attachments(cell: Cell, out: dict[str, Any]) -> None:
    """The parts of a CellData beside value and format: note, validation, pivot table, and fields we
    store without interpreting."""
    if cell.note:
        out["note"] = cell.note
    if cell.validation is not None:
        out["dataValidation"] = copy.deepcopy(cell.validation)
    if cell.pivot is not None:
        pivot = copy.deepcopy(cell.pivot)
        source = pivot.get("source")
        if isinstance(source, dict) and source.get("sheetId") == 0:
            del source["sheetId"]  # a GridRange's 0 sheetId is left out of the JSON, as everywhere
        out["pivotTable"] = pivot
    for key, value in (cell.extra or {}).items():
        out[key] = copy.deepcopy(value)


def _entered_from_json(obj: Obj) -> tuple[Any, str | None]:
    """(value, formula) from an ExtendedValue object."""
    kinds = [key for key in ("numberValue", "stringValue", "boolValue", "formulaValue", "errorValue") if obj.has(key)]
    if len(kinds) > 1:
        raise invalid(
            f"Invalid value at '{obj.path}': only one of numberValue, stringValue, boolValue, formulaValue may be set"
        )
    if not kinds:
        return None, None
    kind = kinds[0]
    if kind == "numberValue":
        number = obj.number(kind)
        return number, None
    if kind == "stringValue":
        return check_cell_text(obj.text(kind) or "") or None, None
    if kind == "boolValue":
        return obj.flag(kind), None
    if kind == "formulaValue":
        text = check_cell_text(obj.text(kind) or "")
        if not text.startswith("="):
            raise invalid(f"Invalid value at '{obj.at(kind)}': a formula must start with '='")
        return None, text
    raise invalid(f"Invalid value at '{obj.at(kind)}': errorValue cannot be written")


def cell_from_json(obj: Obj) -> dict[str, Any]:
    """A CellData from a request, validated and normalised into the same shape ``cell_to_json`` gives."""
    out: dict[str, Any] = {}
    value_obj = obj.obj("userEnteredValue")
    if value_obj is not None:
        value, formula = _entered_from_json(value_obj)
        if formula is not None:
            out["userEnteredValue"] = {"formulaValue": formula}
        elif value is not None:
            probe = Cell(value=value)
            out["userEnteredValue"] = user_entered_json(probe)
    fmt = obj.raw("userEnteredFormat")
    if fmt is not None:
        if not isinstance(fmt, dict):
            raise bad_value(obj.at("userEnteredFormat"), "type.googleapis.com/google.apps.sheets.v4.CellFormat", fmt)
        out["userEnteredFormat"] = normalize_format(fmt)
    note = obj.text("note")
    if note:
        out["note"] = note
    for key in ("dataValidation", "pivotTable", "textFormatRuns", "hyperlink"):
        item = obj.raw(key)
        if item is not None:
            if key == "pivotTable" and not isinstance(item, dict):
                raise bad_value(obj.at(key), "type.googleapis.com/google.apps.sheets.v4.PivotTable", item)
            out[key] = copy.deepcopy(item)
    return out


def cell_from_celldata(data: dict[str, Any]) -> Cell | None:
    """A Cell from the normalised CellData shape (None when nothing is left)."""
    cell = Cell()
    entered = data.get("userEnteredValue") or {}
    if "formulaValue" in entered:
        cell.formula = refs.normalize(entered["formulaValue"])
    elif "numberValue" in entered:
        cell.value = float(entered["numberValue"])
    elif "boolValue" in entered:
        cell.value = bool(entered["boolValue"])
    elif "stringValue" in entered:
        cell.value = entered["stringValue"] or None
    if data.get("userEnteredFormat"):
        cell.format = copy.deepcopy(data["userEnteredFormat"])
    cell.note = data.get("note") or None
    cell.validation = copy.deepcopy(data.get("dataValidation"))
    cell.pivot = copy.deepcopy(data.get("pivotTable"))
    extra = {key: copy.deepcopy(data[key]) for key in ("textFormatRuns", "hyperlink") if data.get(key) is not None}
    cell.extra = extra or None
    return None if cell.is_blank() else cell
