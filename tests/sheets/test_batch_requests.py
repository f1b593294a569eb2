"""batchUpdate request kinds sent directly (``Spreadsheet.batch_update``), and spreadsheets.get options."""

from __future__ import annotations

import gspread
import pytest

from toolbench.mock_services.sheets import read_sheet


def grid(sheet_id=0, r0=0, r1=1, c0=0, c1=1):
    return {"sheetId": sheet_id, "startRowIndex": r0, "endRowIndex": r1, "startColumnIndex": c0, "endColumnIndex": c1}


def run(sh, *requests):
    return sh.batch_update({"requests": list(requests)})["replies"]


def test_update_cells_with_values_formats_and_mask(sh, ws, store, book):
    run(
        sh,
        {
            "updateCells": {
                "range": grid(r0=1, r1=3, c0=4, c1=6),
                "rows": [
                    {
                        "values": [
                            {"userEnteredValue": {"numberValue": 2}},
                            {"userEnteredValue": {"formulaValue": "=E2*10"}},
                        ]
                    },
                    {
                        "values": [
                            {
                                "userEnteredValue": {"stringValue": "=not a formula"},
                                "userEnteredFormat": {"textFormat": {"bold": True}},
                                "note": "n",
                            }
                        ]
                    },
                ],
                "fields": "userEnteredValue,userEnteredFormat.textFormat.bold,note",
            }
        },
    )
    assert ws.get("E2:F3") == [["2", "20"], ["=not a formula"]]
    cells = read_sheet(store, book.spreadsheet_id)["cells"]
    assert cells["E3"]["format"] == {"textFormat": {"bold": True}} and cells["E3"]["note"] == "n"
    run(sh, {"updateCells": {"range": grid(r0=1, r1=3, c0=4, c1=6), "rows": [], "fields": "userEnteredValue"}})
    assert ws.get("E2:F3") == [[]]  # the range is cleared for the masked field; formats and notes stay
    assert read_sheet(store, book.spreadsheet_id)["cells"]["E3"]["note"] == "n"


def test_repeat_cell_fills_formulas_relative_to_each_cell(sh, ws):
    run(
        sh,
        {
            "repeatCell": {
                "range": grid(r0=1, r1=7, c0=3, c1=4),
                "cell": {"userEnteredValue": {"formulaValue": "=C2-B2"}},
                "fields": "userEnteredValue",
            }
        },
    )
    assert ws.col_values(4) == ["", "2", "-1", "1", "12", "-10", "98"]


def test_dimensions(sh, ws):
    run(
        sh,
        {"appendDimension": {"sheetId": 0, "dimension": "COLUMNS", "length": 4}},
        {
            "updateDimensionProperties": {
                "range": {"sheetId": 0, "dimension": "COLUMNS", "startIndex": 0, "endIndex": 2},
                "properties": {"pixelSize": 150},
                "fields": "pixelSize",
            }
        },
        {
            "autoResizeDimensions": {
                "dimensions": {"sheetId": 0, "dimension": "COLUMNS", "startIndex": 2, "endIndex": 3}
            }
        },
        {"insertDimension": {"range": {"sheetId": 0, "dimension": "ROWS", "startIndex": 0, "endIndex": 2}}},
    )
    data = sh.fetch_sheet_metadata({"includeGridData": "true", "ranges": "Sheet1!A1:D3"})["sheets"][0]
    assert data["properties"]["gridProperties"] == {"rowCount": 1002, "columnCount": 30}
    assert [m["pixelSize"] for m in data["data"][0]["columnMetadata"]] == [150, 150, 45, 100]
    assert ws.get_all_values()[2] == ["Product", "Cost", "Price"]


def test_copy_paste_kinds(sh, ws):
    ws.format("B2", {"numberFormat": {"type": "CURRENCY"}})
    ws.update_acell("D2", "=B2+C2")
    run(
        sh,
        {
            "copyPaste": {
                "source": grid(r0=1, r1=2, c0=1, c1=4),
                "destination": grid(r0=9, r1=10, c0=1, c1=4),
                "pasteType": "PASTE_VALUES",
            }
        },
    )
    assert ws.get("B10:D10", value_render_option="FORMULA") == [[1, 3, 4]]
    run(
        sh,
        {
            "copyPaste": {
                "source": grid(r0=1, r1=2, c0=1, c1=2),
                "destination": grid(r0=9, r1=10, c0=1, c1=2),
                "pasteType": "PASTE_FORMAT",
            }
        },
    )
    assert ws.acell("B10").value == "$1.00"
    run(
        sh,
        {
            "copyPaste": {
                "source": grid(r0=0, r1=2, c0=0, c1=2),
                "destination": grid(r0=11, r1=12, c0=0, c1=1),
                "pasteOrientation": "TRANSPOSE",
            }
        },
    )
    assert ws.get("A12:B13") == [["Product", "bolt"], ["Cost", "$1.00"]]
    run(sh, {"copyPaste": {"source": grid(r0=1, r1=2, c0=3, c1=4), "destination": grid(r0=2, r1=7, c0=3, c1=4)}})
    assert ws.col_values(4)[1:7] == ["$4.00", "9", "21", "18", "14", "102"]  # tiled, references shifted


def test_find_replace_trim_duplicates_randomize(sh, ws):
    ws.update([["  pipe  chop "], ["pipe"], ["PIPE"]], "E1")
    (trimmed,) = run(sh, {"trimWhitespace": {"range": grid(r1=10, c0=4, c1=5)}})
    assert trimmed == {"trimWhitespace": {"cellsChangedCount": 1}} and ws.acell("E1").value == "pipe chop"
    (found,) = run(sh, {"findReplace": {"find": "^pipe$", "replacement": "hose", "searchByRegex": True, "sheetId": 0}})
    assert found["findReplace"]["occurrencesChanged"] == 3  # A3, E2 and E3 (case-insensitive)
    (entire,) = run(
        sh,
        {
            "findReplace": {
                "find": "hose",
                "replacement": "x",
                "matchEntireCell": True,
                "matchCase": True,
                "range": grid(r1=10, c0=4, c1=5),
            }
        },
    )
    assert entire["findReplace"]["valuesChanged"] == 2
    ws.update([["a"], ["b"], ["a"], ["c"], ["b"]], "G1")
    (dedup,) = run(sh, {"deleteDuplicates": {"range": grid(r1=5, c0=6, c1=7)}})
    assert dedup == {"deleteDuplicates": {"duplicatesRemovedCount": 2}} and ws.col_values(7) == ["a", "b", "c"]
    run(sh, {"randomizeRange": {"range": grid(r0=1, r1=7, c0=0, c1=3)}})
    assert sorted(ws.col_values(1)[1:]) == sorted(["bolt", "hose", "clamp", "lever", "drill", "file"])


def test_find_replace_uses_linear_time_expressions(sh, ws):
    """RE2, as Sheets: an expression that backtracks for hours in Python's re answers at once."""
    ws.update([["a" * 40 + "!"], ["aaa"]], "H1")
    request = {"find": "(a+)+$", "replacement": "[$1]", "searchByRegex": True, "matchCase": True, "sheetId": 0}
    (found,) = run(sh, {"findReplace": request})
    assert found["findReplace"]["occurrencesChanged"] == 1 and ws.col_values(8) == ["a" * 40 + "!", "[aaa]"]


def test_conditional_formats_and_groups(sh):
    run(
        sh,
        {
            "addConditionalFormatRule": {
                "index": 0,
                "rule": {
                    "ranges": [grid(r0=1, r1=7, c0=1, c1=2)],
                    "booleanRule": {
                        "condition": {"type": "NUMBER_GREATER", "values": [{"userEnteredValue": "5"}]},
                        "format": {"backgroundColor": {"red": 1}},
                    },
                },
            }
        },
    )
    sheet = sh.fetch_sheet_metadata()["sheets"][0]
    written = grid(r0=1, r1=7, c0=1, c1=2)
    del written["sheetId"]  # a GridRange's sheetId 0 is left out, as proto3 JSON does
    assert sheet["conditionalFormats"][0]["ranges"] == [written]
    sh.sheet1.insert_row(["x"], 1)
    assert sh.fetch_sheet_metadata()["sheets"][0]["conditionalFormats"][0]["ranges"][0]["startRowIndex"] == 2
    (deleted,) = run(sh, {"deleteConditionalFormatRule": {"sheetId": 0, "index": 0}})
    assert deleted["deleteConditionalFormatRule"]["rule"]["booleanRule"]["condition"]["type"] == "NUMBER_GREATER"


def test_sheet_properties_mask_and_errors(sh):
    run(
        sh,
        {
            "updateSheetProperties": {
                "properties": {
                    "sheetId": 0,
                    "title": "Main",
                    "hidden": False,
                    "gridProperties": {"rowCount": 50, "frozenRowCount": 2},
                },
                "fields": "title,gridProperties.frozenRowCount",
            }
        },
    )
    props = sh.fetch_sheet_metadata()["sheets"][0]["properties"]
    assert props["title"] == "Main" and props["gridProperties"] == {
        "rowCount": 1000,
        "columnCount": 26,
        "frozenRowCount": 2,
    }
    with pytest.raises(gspread.exceptions.APIError, match="hide all the sheets"):
        run(
            sh,
            {"updateSheetProperties": {"properties": {"sheetId": 0, "hidden": True}, "fields": "hidden"}},
            {
                "updateSheetProperties": {
                    "properties": {"sheetId": sh.worksheet("Notes").id, "hidden": True},
                    "fields": "hidden",
                }
            },
        )
    with pytest.raises(gspread.exceptions.APIError, match="fields"):
        run(sh, {"updateSheetProperties": {"properties": {"sheetId": 0, "title": "X"}}})


def test_get_with_fields_ranges_and_grid_data(sh, ws):
    ws.update_acell("D2", "=B2*2")
    only = sh.fetch_sheet_metadata({"fields": "sheets.properties.title,spreadsheetId"})
    assert only == {
        "spreadsheetId": sh.id,
        "sheets": [{"properties": {"title": "Sheet1"}}, {"properties": {"title": "Notes"}}],
    }
    data = sh.fetch_sheet_metadata(
        {"ranges": ["Sheet1!B2:D2"], "fields": "sheets(data(rowData(values(formattedValue,userEnteredValue))))"}
    )
    assert data == {
        "sheets": [
            {
                "data": [
                    {
                        "rowData": [
                            {
                                "values": [
                                    {"formattedValue": "1", "userEnteredValue": {"numberValue": 1}},
                                    {"formattedValue": "3", "userEnteredValue": {"numberValue": 3}},
                                    {"formattedValue": "2", "userEnteredValue": {"formulaValue": "=B2*2"}},
                                ]
                            }
                        ]
                    }
                ]
            }
        ]
    }
    full = sh.fetch_sheet_metadata({"includeGridData": "true", "ranges": "Notes!A1:B2"})
    cell = full["sheets"][0]["data"][0]["rowData"][1]["values"][1]
    assert cell["effectiveValue"] == {"numberValue": 1} and cell["effectiveFormat"]["textFormat"]["fontSize"] == 10


def test_values_update_returns_values_when_asked(sh):
    result = sh.values_update(
        "Sheet1!E1",
        params={
            "valueInputOption": "USER_ENTERED",
            "includeValuesInResponse": True,
            "responseValueRenderOption": "UNFORMATTED_VALUE",
        },
        body={"values": [["=1+1", "10%"]]},
    )
    assert result["updatedData"] == {"range": "Sheet1!E1:F1", "majorDimension": "ROWS", "values": [[2, 0.1]]}


def test_spreadsheets_create_and_comments(gc, sh):
    created = gc.http_client.request(
        "post",
        "https://sheets.googleapis.com/v4/spreadsheets",
        json={
            "properties": {"title": "Direct"},
            "sheets": [
                {"properties": {"title": "One", "gridProperties": {"rowCount": 5, "columnCount": 2}}},
                {"properties": {"title": "Two"}},
            ],
        },
    ).json()
    assert [s["properties"]["title"] for s in created["sheets"]] == ["One", "Two"]
    assert gc.open("Direct").worksheet("One").row_count == 5
    url = f"https://www.googleapis.com/drive/v3/files/{sh.id}/comments"
    gc.http_client.request("post", url, json={"content": "check totals"}, params={"fields": "id"})
    copied = gc.copy(sh.id, title="With comments")
    listed = gc.http_client.request(
        "get", f"https://www.googleapis.com/drive/v3/files/{copied.id}/comments", params={"fields": "comments/content"}
    ).json()
    assert listed == {"comments": [{"content": "check totals"}]}
