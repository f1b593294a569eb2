"""Pivot tables written with updateCells: the displayed output, totals, and recomputation."""

from __future__ import annotations

import pytest

from toolbench.mock_services.sheets import SheetsStore, build_spreadsheet, make_client, read_sheet

SALES = {
    "title": "Sales",
    "sheets": [
        {
            "title": "Sales",
            "rows": [
                ["Region", "Product", "Units", "Price"],
                ["East", "A", 2, "$3.50"],
                ["West", "B", 5, "$1.25"],
                ["East", "B", 1, "$10"],
                ["West", "A", 4, "$4"],
                ["East", "A", 3, "$2"],
            ],
        },
        {"title": "Report"},
    ],
}


@pytest.fixture
def sales():
    store = SheetsStore()
    book = build_spreadsheet(store, SALES)
    sh = make_client(store).open_by_key(book.spreadsheet_id)
    return store, book, sh


def add_pivot(sh, pivot: dict, row: int = 0, col: int = 0) -> dict:
    source = sh.worksheet("Sales")
    pivot = {
        "source": {
            "sheetId": source.id,
            "startRowIndex": 0,
            "endRowIndex": 6,
            "startColumnIndex": 0,
            "endColumnIndex": 4,
        },
        **pivot,
    }
    report = sh.worksheet("Report")
    return sh.batch_update(
        {
            "requests": [
                {
                    "updateCells": {
                        "rows": [{"values": [{"pivotTable": pivot}]}],
                        "start": {"sheetId": report.id, "rowIndex": row, "columnIndex": col},
                        "fields": "pivotTable",
                    }
                }
            ]
        }
    )


def test_rows_values_and_totals(sales):
    _, _, sh = sales
    add_pivot(
        sh,
        {
            "rows": [{"sourceColumnOffset": 0, "showTotals": True, "sortOrder": "ASCENDING"}],
            "values": [
                {"summarizeFunction": "SUM", "sourceColumnOffset": 2},
                {"summarizeFunction": "COUNTA", "sourceColumnOffset": 1},
                {"summarizeFunction": "AVERAGE", "sourceColumnOffset": 3, "name": "Avg price"},
            ],
        },
    )
    assert sh.worksheet("Report").get_all_values() == [
        ["Region", "SUM of Units", "COUNTA of Product", "Avg price"],
        ["East", "6", "3", "$5.17"],
        ["West", "9", "2", "$2.63"],
        ["Grand Total", "15", "5", "$4.15"],
    ]


def test_nested_rows_subtotals_and_descending(sales):
    _, _, sh = sales
    add_pivot(
        sh,
        {
            "rows": [
                {"sourceColumnOffset": 0, "showTotals": True},
                {"sourceColumnOffset": 1, "showTotals": True, "sortOrder": "DESCENDING"},
            ],
            "values": [{"summarizeFunction": "MAX", "sourceColumnOffset": 2}],
        },
    )
    assert sh.worksheet("Report").get_all_values() == [
        ["Region", "Product", "MAX of Units"],
        ["East", "B", "1"],
        ["", "A", "3"],
        ["East Total", "", "3"],
        ["West", "B", "5"],
        ["", "A", "4"],
        ["West Total", "", "5"],
        ["Grand Total", "", "5"],
    ]


def test_columns_and_without_totals(sales):
    _, _, sh = sales
    add_pivot(
        sh,
        {
            "rows": [{"sourceColumnOffset": 0}],
            "columns": [{"sourceColumnOffset": 1, "showTotals": True}],
            "values": [{"summarizeFunction": "SUM", "sourceColumnOffset": 2}],
        },
    )
    assert sh.worksheet("Report").get_all_values() == [
        ["SUM of Units", "Product", "", ""],
        ["Region", "A", "B", "Grand Total"],
        ["East", "5", "1", "6"],
        ["West", "4", "5", "9"],
    ]


def test_min_count_and_value_types(sales):
    _, _, sh = sales
    add_pivot(
        sh,
        {
            "rows": [{"sourceColumnOffset": 1, "showTotals": True}],
            "values": [
                {"summarizeFunction": "MIN", "sourceColumnOffset": 2},
                {"summarizeFunction": "COUNT", "sourceColumnOffset": 2},
            ],
        },
        row=2,
        col=1,
    )
    report = sh.worksheet("Report")
    assert report.get("B3:D6") == [
        ["Product", "MIN of Units", "COUNT of Units"],
        ["A", "2", "3"],
        ["B", "1", "2"],
        ["Grand Total", "1", "5"],
    ]
    assert report.get("C4:D4", value_render_option="UNFORMATTED_VALUE") == [[2, 3]]


def test_recomputed_when_the_source_changes_and_moves(sales):
    store, book, sh = sales
    add_pivot(
        sh,
        {
            "rows": [{"sourceColumnOffset": 0, "showTotals": True}],
            "values": [{"summarizeFunction": "SUM", "sourceColumnOffset": 2}],
        },
    )
    source, report = sh.worksheet("Sales"), sh.worksheet("Report")
    source.update_acell("C2", 20)
    assert report.get("B2:B4") == [["24"], ["9"], ["33"]]
    source.insert_row(["South", "C", 7, 1], index=3)  # inside the source: the pivot's range grows with it
    assert report.col_values(1) == ["Region", "East", "South", "West", "Grand Total"]
    cells = read_sheet(store, book.spreadsheet_id, "Report")["cells"]
    assert cells["B5"] == {"value": 40, "formatted": "40", "format": None}


def test_pivot_definition_in_grid_data(sales):
    _, _, sh = sales
    add_pivot(
        sh, {"rows": [{"sourceColumnOffset": 0}], "values": [{"summarizeFunction": "SUM", "sourceColumnOffset": 2}]}
    )
    data = sh.fetch_sheet_metadata({"includeGridData": "true", "ranges": "Report!A1:B2"})["sheets"][0]["data"][0]
    anchor = data["rowData"][0]["values"][0]
    assert anchor["pivotTable"]["values"] == [{"summarizeFunction": "SUM", "sourceColumnOffset": 2}]
    assert anchor["formattedValue"] == "Region" and "userEnteredValue" not in anchor
    assert data["rowData"][1]["values"][1]["effectiveValue"] == {"numberValue": 6}
