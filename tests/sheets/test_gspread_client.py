"""The real, unmodified gspread client (and gspread-dataframe) against the emulator.

Each test drives public Client / Spreadsheet / Worksheet methods and checks what they return and
what the workbook holds afterwards.
"""

from __future__ import annotations

import re

import gspread
import pandas as pd
import pytest
from gspread.utils import ExportFormat, ValidationConditionType, ValueRenderOption
from gspread_dataframe import get_as_dataframe, set_with_dataframe

from toolbench.mock_services.sheets import read_sheet

from .conftest import PRODUCTS


# ---------------------------------------------------------------------------------- client
def test_open_by_title_key_and_url(gc, book):
    by_title = gc.open("Products")
    assert by_title.id == book.spreadsheet_id and by_title.title == "Products"
    assert gc.open_by_key(book.spreadsheet_id).title == "Products"
    assert gc.open_by_url(by_title.url).id == book.spreadsheet_id
    assert by_title.url == f"https://docs.google.com/spreadsheets/d/{book.spreadsheet_id}"
    assert by_title.locale == "en_US" and by_title.timezone == "Etc/GMT"
    assert by_title.creationTime == "2024-01-15T09:00:00.000Z"
    with pytest.raises(gspread.SpreadsheetNotFound):
        gc.open("Nope")
    with pytest.raises(gspread.SpreadsheetNotFound):
        gc.open_by_key("1" + "x" * 43)


def test_create_copy_list_delete(gc, book):
    created = gc.create("Budget")
    assert created.title == "Budget"
    assert [(w.title, w.id, w.row_count, w.col_count) for w in created.worksheets()] == [("Sheet1", 0, 1000, 26)]
    copied = gc.copy(book.spreadsheet_id, title="Products copy")
    assert copied.sheet1.get_all_values() == gc.open("Products").sheet1.get_all_values()
    # Drive lists the most recently modified first
    assert [f["name"] for f in gc.list_spreadsheet_files()] == ["Products copy", "Budget", "Products"]
    assert [s.title for s in gc.openall("Budget")] == ["Budget"]
    copied.sheet1.update_acell("A1", "changed")  # a copy is independent
    assert gc.open("Products").sheet1.acell("A1").value == "Product"
    gc.del_spreadsheet(copied.id)
    assert [s.title for s in gc.openall()] == ["Budget", "Products"]
    assert set(gc.list_spreadsheet_files("Budget")[0]) == {"id", "name", "createdTime", "modifiedTime"}


def test_export_csv_and_drive_metadata(gc, sh):
    csv_bytes = gc.export(sh.id, ExportFormat.CSV)
    assert csv_bytes.decode().splitlines()[:2] == ["Product,Cost,Price", "bolt,1,3"]
    assert sh.export(ExportFormat.TSV).decode().splitlines()[1] == "bolt\t1\t3"
    before = sh.get_lastUpdateTime()
    sh.sheet1.update_acell("A2", "veal")
    assert sh.get_lastUpdateTime() > before
    metadata = gc.get_file_drive_metadata(sh.id)
    assert set(metadata) == {"id", "name", "createdTime", "modifiedTime"}


def test_permissions(gc, sh):
    sh.share("bob@example.com", perm_type="user", role="writer", notify=False)
    sh.share(None, perm_type="anyone", role="reader")
    roles = {p.get("emailAddress", p["type"]): p["role"] for p in sh.list_permissions()}
    assert roles == {"agent@toolbench-gym.local": "owner", "bob@example.com": "writer", "anyone": "reader"}
    removed = sh.remove_permissions("bob@example.com")
    assert len(removed) == 1
    assert "bob@example.com" not in {p.get("emailAddress") for p in gc.list_permissions(sh.id)}


def test_import_csv_replaces_the_first_sheet(gc, sh):
    gc.import_csv(sh.id, "name,score\nann,3\nbo,4.5\n")
    # Drive's conversion makes a new first sheet (a new id) named after the file
    assert [w.title for w in sh.worksheets()] == ["Products"] and sh.sheet1.id != 0
    assert sh.sheet1.get_all_records() == [{"name": "ann", "score": 3}, {"name": "bo", "score": 4.5}]


# ---------------------------------------------------------------------------------- spreadsheet
def test_worksheets_add_get_delete(sh):
    added = sh.add_worksheet("Q1 Sales", rows=50, cols=10)
    assert (added.title, added.row_count, added.col_count, added.index) == ("Q1 Sales", 50, 10, 2)
    assert [w.title for w in sh.worksheets()] == ["Sheet1", "Notes", "Q1 Sales"]
    assert sh.worksheet("Q1 Sales").id == added.id
    assert sh.get_worksheet(1).title == "Notes"
    assert sh.get_worksheet_by_id(added.id).title == "Q1 Sales"
    with pytest.raises(gspread.WorksheetNotFound):
        sh.worksheet("Nope")
    sh.del_worksheet(added)
    assert [w.title for w in sh.worksheets()] == ["Sheet1", "Notes"]
    at_front = sh.add_worksheet("First", 5, 5, index=0)
    assert [w.title for w in sh.worksheets()] == ["First", "Sheet1", "Notes"]
    sh.del_worksheet_by_id(at_front.id)


def test_duplicate_and_reorder(sh, ws):
    copy = sh.duplicate_sheet(ws.id, new_sheet_name="Backup")
    assert copy.title == "Backup" and copy.get_all_values() == ws.get_all_values()
    default = ws.duplicate()
    assert default.title == "Copy of Sheet1"
    sh.reorder_worksheets([sh.worksheet("Notes"), copy])
    assert [w.title for w in sh.worksheets()] == ["Notes", "Backup", "Sheet1", "Copy of Sheet1"]


def test_spreadsheet_title_timezone_locale(gc, sh):
    sh.update_title("Inventory")
    assert gc.open("Inventory").id == sh.id
    assert gc.list_spreadsheet_files()[0]["name"] == "Inventory"
    sh.update_timezone("America/New_York")
    sh.update_locale("en_GB")
    reopened = gc.open_by_key(sh.id)
    assert (reopened.timezone, reopened.locale) == ("America/New_York", "en_GB")


def test_spreadsheet_values_methods(sh):
    got = sh.values_get("Sheet1!A1:B2")
    assert got == {"range": "Sheet1!A1:B2", "majorDimension": "ROWS", "values": [["Product", "Cost"], ["bolt", "1"]]}
    result = sh.values_update(
        "Sheet1!E1", params={"valueInputOption": "USER_ENTERED"}, body={"values": [["50%", "$5", "1/5/2024"]]}
    )
    assert result["updatedRange"] == "Sheet1!E1:G1" and result["updatedCells"] == 3
    assert sh.values_get("Sheet1!E1:G1")["values"] == [["50%", "$5.00", "1/5/2024"]]
    appended = sh.values_append("Sheet1", params={"valueInputOption": "RAW"}, body={"values": [["goat", 4, 5]]})
    assert appended["tableRange"] == "Sheet1!A1:C7"  # column D is empty: E1:G1 is another table
    assert appended["updates"]["updatedRange"] == "Sheet1!A8:C8"
    assert sh.values_clear("Sheet1!E1:G1") == {"spreadsheetId": sh.id, "clearedRange": "Sheet1!E1:G1"}
    batch = sh.values_batch_get(["Sheet1!A8:C8", "Notes"])
    assert [vr["range"] for vr in batch["valueRanges"]] == ["Sheet1!A8:C8", "Notes!A1:Z1000"]
    assert batch["valueRanges"][1]["values"] == [["k", "v"], ["a", "1"]]
    sh.values_batch_clear(body={"ranges": ["Sheet1!A8:C8"]})
    assert "values" not in sh.values_get("Sheet1!A8:C8")


def test_fetch_sheet_metadata_and_named_ranges(sh, ws):
    metadata = sh.fetch_sheet_metadata()
    assert metadata["properties"]["title"] == "Products"
    first = metadata["sheets"][0]["properties"]
    assert first == {
        "sheetId": 0,
        "title": "Sheet1",
        "index": 0,
        "sheetType": "GRID",
        "gridProperties": {"rowCount": 1000, "columnCount": 26},
    }
    ws.define_named_range("B2:B7", "Costs")
    ranges = sh.list_named_ranges()
    assert [(r["name"], r["range"]["startRowIndex"], r["range"]["endRowIndex"]) for r in ranges] == [("Costs", 1, 7)]
    assert [c.value for c in sh.named_range("Costs")] == ["1", "5", "10", "3", "12", "2"]
    assert ws.get("Costs").range == "Sheet1!B2:B7"
    ws.delete_named_range(ranges[0]["namedRangeId"])
    assert sh.list_named_ranges() == []


# ---------------------------------------------------------------------------------- reading
def test_cell_reads(ws):
    assert ws.acell("A2").value == "bolt"
    assert ws.cell(3, 2).value == "5"
    assert ws.cell(3, 2, value_render_option=ValueRenderOption.unformatted).value == 5
    assert ws.row_values(1) == ["Product", "Cost", "Price"]
    assert ws.col_values(1) == ["Product", "bolt", "pipe", "clamp", "lever", "drill", "file"]
    assert ws.acell("Z999").value is None


def test_get_and_get_values(ws):
    assert ws.get("A1:B2") == [["Product", "Cost"], ["bolt", "1"]]
    assert ws.get("A1:B2").range == "Sheet1!A1:B2"
    assert ws.get("B2:C3", value_render_option=ValueRenderOption.unformatted) == [[1, 3], [5, 4]]
    assert ws.get("A1:C2", major_dimension="COLUMNS") == [["Product", "bolt"], ["Cost", "1"], ["Price", "3"]]
    assert ws.get_values("A6:C20") == [["drill", "12", "2"], ["file", "2", "100"]]
    assert ws.get("E1:F5") == [[]]
    assert ws.get_values("B7:D8", maintain_size=True) == [["2", "100", ""], ["", "", ""]]
    assert len(ws.get_all_values()) == 7


def test_get_all_records_and_cells(ws):
    records = ws.get_all_records()
    assert records[0] == {"Product": "bolt", "Cost": 1, "Price": 3}
    assert len(records) == 6
    cells = ws.range("A1:B2")
    assert [(c.row, c.col, c.value) for c in cells] == [(1, 1, "Product"), (1, 2, "Cost"), (2, 1, "bolt"), (2, 2, "1")]


def test_batch_get(ws):
    first, second = ws.batch_get(["A1:B1", "C7"])
    assert first == [["Product", "Cost"]] and first.range == "Sheet1!A1:B1"
    assert second.first() == "100"


def test_find_and_findall(ws):
    found = ws.find("pipe")
    assert (found.row, found.col) == (3, 1)
    assert ws.find("PIPE", case_sensitive=False).row == 3
    assert ws.find("nothing") is None
    assert [(c.row, c.col) for c in ws.findall(re.compile(r"^[bp]"))] == [(2, 1), (3, 1)]
    assert [c.row for c in ws.findall("2", in_column=2)] == [7]
    assert [c.row for c in ws.findall("12", in_column=2)] == [6]


def test_expand(ws):
    assert ws.expand("A1")[0] == ["Product", "Cost", "Price"]
    assert len(ws.expand("A1")) == 7


# ---------------------------------------------------------------------------------- writing
def test_update_forms(ws):
    response = ws.update([["x", "y"], ["z"]], "E1")
    assert response["updatedRange"] == "Sheet1!E1:F2"
    assert (response["updatedRows"], response["updatedColumns"], response["updatedCells"]) == (2, 2, 3)
    ws.update([["=SUM(B2:B7)"]], "E3")  # RAW by default: stays text
    assert ws.acell("E3").value == "=SUM(B2:B7)"
    ws.update([["=SUM(B2:B7)"]], "E4", raw=False)
    assert ws.acell("E4").value == "33"
    ws.update(range_name="E5", values=[["1,234.5"]], value_input_option="USER_ENTERED")
    assert ws.acell("E5", value_render_option=ValueRenderOption.unformatted).value == 1234.5
    with pytest.raises(gspread.exceptions.APIError, match=r"tried writing to row \[2\]"):
        ws.update([[1], [2]], "H1:H1")


def test_update_cell_and_acell(ws):
    ws.update_cell(2, 4, "=B2+C2")
    ws.update_acell("D3", "=B3+C3")
    assert [c.value for c in ws.range("D2:D3")] == ["4", "9"]
    ws.update_acell("A2", "veal")
    assert ws.acell("A2").value == "veal"


def test_worksheet_batch_update_and_cells(ws):
    response = ws.batch_update([{"range": "E1", "values": [["a"]]}, {"range": "E2:F2", "values": [[1, 2]]}])
    assert response["totalUpdatedCells"] == 3 and len(response["responses"]) == 2
    cells = ws.range("G1:G2")
    for cell, value in zip(cells, ["p", "q"]):
        cell.value = value
    ws.update_cells(cells)
    assert ws.get("E1:G2") == [["a", "", "p"], ["1", "2", "q"]]


def test_append_row_and_rows(ws):
    response = ws.append_row(["goat", 4, 6])
    assert response["tableRange"] == "Sheet1!A1:C7"
    assert response["updates"]["updatedRange"] == "Sheet1!A8:C8"
    ws.append_rows([["emu", 1, 2], ["yak", 3, 4]], value_input_option="USER_ENTERED")
    assert ws.col_values(1)[-3:] == ["goat", "emu", "yak"]
    ws.append_row(["after gap"], table_range="A20")
    assert ws.acell("A20").value == "after gap"
    # The table is the block around the last filled cell (here "after gap"), as the service finds it
    ws.append_row(["tail"], insert_data_option="INSERT_ROWS")
    assert ws.acell("A21").value == "tail" and ws.acell("A20").value == "after gap"


def test_append_grows_the_grid(sh):
    small = sh.add_worksheet("Small", rows=2, cols=2)
    small.append_rows([["a", "b"], ["c", "d"], ["e", "f", "g"]])
    metadata = sh.fetch_sheet_metadata()["sheets"][-1]["properties"]["gridProperties"]
    assert metadata == {"rowCount": 3, "columnCount": 3}
    assert small.get_all_values() == [["a", "b", ""], ["c", "d", ""], ["e", "f", "g"]]


def test_insert_rows_and_cols(ws):
    ws.insert_row(["new", 7, 8], index=2)
    assert ws.row_values(2) == ["new", "7", "8"] and ws.row_values(3) == ["bolt", "1", "3"]
    ws.insert_rows([["r1"], ["r2"]], row=1)
    assert ws.col_values(1)[:4] == ["r1", "r2", "Product", "new"]
    ws.insert_cols([["c1", "c2"]], col=2)
    assert ws.row_values(1) == ["r1", "c1"] and ws.row_values(3) == ["Product", "", "Cost", "Price"]
    assert ws.row_count == 1003 and ws.col_count == 27


def test_delete_rows_and_columns(ws):
    ws.delete_rows(2, 3)
    assert ws.col_values(1) == ["Product", "clamp", "lever", "drill", "file"]
    ws.delete_columns(2)
    assert ws.row_values(1) == ["Product", "Price"]
    assert ws.row_count == 998 and ws.col_count == 25
    with pytest.raises(gspread.exceptions.APIError, match="all the columns"):
        ws.delete_columns(1, 25)


def test_clear_and_batch_clear(ws):
    ws.format("A1", {"textFormat": {"bold": True}})
    ws.batch_clear(["B2:C3", "A7"])
    assert ws.get("A1:C3") == [["Product", "Cost", "Price"], ["bolt"], ["pipe"]]
    assert ws.acell("A7").value is None
    ws.clear()
    assert ws.get_all_values() == [[]]
    assert ws.get_all_records() == []
    assert ws.spreadsheet.fetch_sheet_metadata({"includeGridData": "true", "ranges": "Sheet1!A1"})["sheets"][0]["data"][
        0
    ]["rowData"][0]["values"][0]["userEnteredFormat"] == {"textFormat": {"bold": True}}


def test_resize_add_rows_cols(ws, sh):
    ws.resize(rows=10, cols=5)
    assert (ws.row_count, ws.col_count) == (10, 5)
    ws.add_rows(5)
    ws.add_cols(2)
    assert sh.sheet1.row_count == 15 and sh.sheet1.col_count == 7
    ws.resize(rows=3)
    assert ws.get_all_values() == [["Product", "Cost", "Price"], ["bolt", "1", "3"], ["pipe", "5", "4"]]


def test_freeze_title_tab_color_hide(sh, ws):
    ws.freeze(rows=1, cols=2)
    grid = sh.fetch_sheet_metadata()["sheets"][0]["properties"]["gridProperties"]
    assert grid["frozenRowCount"] == 1 and grid["frozenColumnCount"] == 2
    ws.update_title("Main")
    assert sh.worksheet("Main").id == 0
    ws.update_tab_color("#ff8000")
    assert sh.sheet1.tab_color == "#FF8000"
    ws.clear_tab_color()
    assert sh.sheet1.tab_color is None
    sh.worksheet("Notes").hide()
    assert [w.title for w in sh.worksheets(exclude_hidden=True)] == ["Main"]
    sh.worksheet("Notes").show()
    ws.update_index(2)  # indexes count "before the move", as the API documents
    assert [w.title for w in sh.worksheets()] == ["Notes", "Main"]
    ws.hide_gridlines()
    assert sh.worksheet("Main").is_gridlines_hidden


def test_sort(ws):
    ws.sort((2, "des"))  # no range and nothing frozen: the header row is sorted too (text before numbers)
    assert ws.col_values(1)[:2] == ["Product", "drill"]
    ws.freeze(rows=1)
    ws.sort((2, "asc"))  # now the rows below the frozen header
    assert ws.col_values(1) == ["Product", "bolt", "file", "lever", "pipe", "clamp", "drill"]
    ws.sort((1, "des"), range="A2:C7")
    assert ws.col_values(1) == ["Product", "pipe", "lever", "file", "drill", "clamp", "bolt"]


def test_sort_numbers_before_text_blanks_last(ws):
    ws.update([["Cost"], [10], ["ten"], [""], [2], ["Apple"], [""]], "B1")
    ws.sort((2, "asc"), range="A2:C7")
    assert ws.col_values(2) == ["Cost", "2", "10", "Apple", "ten"]
    ws.sort((2, "des"), range="A2:C7")
    assert ws.col_values(2) == ["Cost", "ten", "Apple", "10", "2"]


def test_merge_and_unmerge(sh, ws):
    ws.merge_cells("A1:C1")
    assert sh.fetch_sheet_metadata()["sheets"][0]["merges"] == [
        {"startRowIndex": 0, "endRowIndex": 1, "startColumnIndex": 0, "endColumnIndex": 3}  # sheetId 0 left out
    ]
    assert ws.row_values(1) == ["Product"]  # only the top-left value of a merge survives
    assert ws.get_values("A1:C2", combine_merged_cells=True)[0] == ["Product", "Product", "Product"]
    with pytest.raises(gspread.exceptions.APIError, match="merged range"):
        ws.merge_cells("B1:D2")
    ws.unmerge_cells("A1:C1")
    assert "merges" not in sh.fetch_sheet_metadata()["sheets"][0]
    ws.merge_cells("E1:F3", merge_type="MERGE_ROWS")
    assert len(sh.fetch_sheet_metadata()["sheets"][0]["merges"]) == 3


def test_format_and_batch_format(store, book, ws):
    ws.format("A1:C1", {"textFormat": {"bold": True, "fontSize": 12}, "horizontalAlignment": "CENTER"})
    ws.batch_format(
        [
            {"range": "B2:C7", "format": {"numberFormat": {"type": "CURRENCY", "pattern": "$#,##0.00"}}},
            {"range": "A2:A7", "format": {"backgroundColor": {"red": 1, "green": 0.9, "blue": 0.8}}},
        ]
    )
    assert ws.get("B2:C2") == [["$1.00", "$3.00"]]
    cells = read_sheet(store, book.spreadsheet_id)["cells"]
    assert cells["A1"]["format"] == {"textFormat": {"bold": True, "fontSize": 12}, "horizontalAlignment": "CENTER"}
    assert cells["A2"]["format"]["backgroundColorStyle"] == {"rgbColor": {"red": 1, "green": 0.9, "blue": 0.8}}
    ws.format("A1", {"textFormat": {"italic": True}})  # the mask replaces textFormat as a whole
    assert read_sheet(store, book.spreadsheet_id)["cells"]["A1"]["format"]["textFormat"] == {"italic": True}


def test_basic_filter(sh, ws):
    ws.set_basic_filter("A1:C7")
    assert sh.fetch_sheet_metadata()["sheets"][0]["basicFilter"]["range"] == {  # sheetId 0 left out
        "startRowIndex": 0,
        "endRowIndex": 7,
        "startColumnIndex": 0,
        "endColumnIndex": 3,
    }
    ws.clear_basic_filter()
    assert "basicFilter" not in sh.fetch_sheet_metadata()["sheets"][0]
    ws.set_basic_filter()
    assert sh.fetch_sheet_metadata()["sheets"][0]["basicFilter"]["range"]["endRowIndex"] == 1000


def test_notes(ws):
    ws.update_note("A1", "header row")
    ws.insert_note("B2", "cheap")
    assert ws.get_note("A1") == "header row"
    assert ws.get_notes()[:2] == [["header row", "", ""], ["", "cheap", ""]]
    ws.update_notes({"C3": "x", "C4": "y"})
    ws.clear_note("A1")
    ws.clear_notes(["C3"])
    assert ws.get_note("A1") == "" and ws.get_note("C4") == "y"


def test_hide_and_show_dimensions(sh, ws):
    ws.hide_rows(1, 3)
    ws.hide_columns(0, 1)
    data = sh.fetch_sheet_metadata({"includeGridData": "true", "ranges": "Sheet1!A1:B4"})["sheets"][0]["data"][0]
    assert [m.get("hiddenByUser", False) for m in data["rowMetadata"]] == [False, True, True, False]
    assert [m.get("hiddenByUser", False) for m in data["columnMetadata"]] == [True, False]
    ws.unhide_rows(1, 3)
    ws.unhide_columns(0, 1)
    data = sh.fetch_sheet_metadata({"includeGridData": "true", "ranges": "Sheet1!A1:B4"})["sheets"][0]["data"][0]
    assert not any(m.get("hiddenByUser") for m in data["rowMetadata"] + data["columnMetadata"])
    ws.columns_auto_resize(0, 1)
    ws.rows_auto_resize(0, 3)


def test_copy_and_cut_range(ws):
    ws.update_acell("D2", "=B2*C2")
    ws.copy_range("A1:D2", "F1")
    assert ws.get("F1:I2", value_render_option=ValueRenderOption.formula) == [
        ["Product", "Cost", "Price"],
        ["bolt", 1, 3, "=G2*H2"],
    ]
    ws.cut_range("A7:C7", "A10")
    assert ws.get("A7:C7") == [[]] and ws.row_values(10) == ["file", "2", "100"]


def test_validation_protection_groups(sh, ws):
    ws.add_validation("D2:D7", ValidationConditionType.one_of_list, ["yes", "no"], showCustomUi=True)
    cell = sh.fetch_sheet_metadata({"includeGridData": "true", "ranges": "Sheet1!D2"})["sheets"][0]["data"][0]
    assert cell["rowData"][0]["values"][0]["dataValidation"]["condition"]["type"] == "ONE_OF_LIST"
    response = ws.add_protected_range("A1:C1", ["boss@example.com"], description="header")
    protected = response["replies"][0]["addProtectedRange"]["protectedRange"]
    assert protected["description"] == "header"
    assert [p["protectedRangeId"] for p in sh.list_protected_ranges(ws.id)] == [protected["protectedRangeId"]]
    ws.delete_protected_range(protected["protectedRangeId"])
    assert sh.list_protected_ranges(ws.id) == []
    ws.add_dimension_group_rows(1, 4)
    ws.add_dimension_group_columns(0, 2)
    assert ws.list_dimension_group_rows()[0]["range"]["endIndex"] == 4
    ws.delete_dimension_group_rows(1, 4)
    assert ws.list_dimension_group_rows() == []
    assert len(ws.list_dimension_group_columns()) == 1


def test_copy_to_another_spreadsheet(gc, ws):
    target = gc.create("Target")
    properties = ws.copy_to(target.id)
    assert properties["title"] == "Copy of Sheet1"
    assert target.worksheet("Copy of Sheet1").get_all_values() == ws.get_all_values()


def test_raw_batch_update_replies(sh, ws):
    response = sh.batch_update(
        {
            "requests": [
                {"addSheet": {"properties": {"title": "Extra", "gridProperties": {"rowCount": 3, "columnCount": 3}}}},
                {"findReplace": {"find": "bolt", "replacement": "steak", "allSheets": True}},
                {
                    "updateBorders": {
                        "range": {
                            "sheetId": 0,
                            "startRowIndex": 0,
                            "endRowIndex": 1,
                            "startColumnIndex": 0,
                            "endColumnIndex": 3,
                        },
                        "bottom": {"style": "SOLID"},
                    }
                },
            ]
        }
    )
    add, found, borders = response["replies"]
    assert add["addSheet"]["properties"]["title"] == "Extra"
    assert found == {"findReplace": {"valuesChanged": 1, "rowsChanged": 1, "sheetsChanged": 1, "occurrencesChanged": 1}}
    assert borders == {}
    assert ws.acell("A2").value == "steak"


# ---------------------------------------------------------------------------------- gspread-dataframe
def test_get_as_dataframe(ws):
    df = get_as_dataframe(ws)
    assert list(df.columns) == ["Product", "Cost", "Price"]
    assert df["Cost"].sum() == 33
    ws.update_acell("D1", "Margin")
    ws.update([["=C2-B2"]], "D2", raw=False)
    assert get_as_dataframe(ws)["Margin"].iloc[0] == "=C2-B2"
    assert get_as_dataframe(ws, evaluate_formulas=True)["Margin"].iloc[0] == 2


def test_set_with_dataframe_round_trip(sh):
    target = sh.add_worksheet("DF", rows=3, cols=2)
    frame = pd.DataFrame({"name": ["a", "b", "c"], "score": [1.5, 2, None], "formula": ["=B2*2", "x", "'=lit"]})
    set_with_dataframe(target, frame)
    assert (target.row_count, target.col_count) == (4, 3)
    assert target.get_all_values() == [
        ["name", "score", "formula"],
        ["a", "1.5", "3"],
        ["b", "2", "x"],
        ["c", "", "'=lit"],
    ]
    back = get_as_dataframe(target, evaluate_formulas=True)
    assert back["score"].tolist()[:2] == [1.5, 2.0]
    set_with_dataframe(target, frame[["name"]], row=1, col=5, include_index=True, resize=True)
    assert (target.row_count, target.col_count) == (4, 6)


def test_products_workbook_fixture_is_unchanged():
    assert PRODUCTS["sheets"][0]["rows"][1] == ["bolt", 1, 3]
