"""One gspread script touching most of the emulator, used by the parity and determinism tests.

``python -m tests.sheets.scenario`` prints a digest of the script's results and the store snapshot, so a
test can compare processes started with different ``PYTHONHASHSEED``.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from typing import Any

import gspread
import pandas as pd
from gspread_dataframe import get_as_dataframe, set_with_dataframe

from toolbench.mock_services.sheets import SheetsStore, build_spreadsheet, make_client

WORKBOOK = {
    "title": "Scenario",
    "sheets": [
        {
            "title": "Sales",
            "rows": [
                ["Region", "Rep", "Units", "Price", "Date"],
                ["East", "Ann", 12, "$3.50", "2024-01-05"],
                ["West", "Bo", 7, "$12", "2024-02-11"],
                ["East", "Cy", 3, "$1.25", "2024-03-02"],
                ["North", "Di", 9, "$7", "2024-03-30"],
            ],
            "formats": {"A1:E1": {"textFormat": {"bold": True}}},
        },
        {"title": "Summary"},
    ],
}


def run_script(gc: gspread.Client, spreadsheet_id: str) -> list[Any]:
    """Run the calls; return what each gave (errors as their messages)."""
    out: list[Any] = []
    sh = gc.open_by_key(spreadsheet_id)
    sales, summary = sh.worksheet("Sales"), sh.worksheet("Summary")

    def record(value: Any) -> None:
        out.append(json.loads(json.dumps(value, default=str)))

    record(sales.get_all_values())
    record(sales.get_all_records())
    sales.update_acell("F1", "Revenue")
    sales.update([[f"=C{r}*D{r}"] for r in range(2, 6)], "F2", raw=False)
    record(sales.get("F1:F5"))
    sales.append_row(["South", "Ed", 4, 5, "4/1/2024", "=C6*D6"], value_input_option="USER_ENTERED")
    sales.insert_row(["West", "Fay", 1, 2, "2024-04-02", "=C3*D3"], index=3, value_input_option="USER_ENTERED")
    sales.format("F2:F7", {"numberFormat": {"type": "CURRENCY", "pattern": "$#,##0.00"}})
    sales.sort((3, "des"), range="A2:F7")
    record(sales.get_all_values())
    summary.update(
        [
            ["Total units", "=SUM(Sales!C2:C7)"],
            ["Average", "=ROUND(AVERAGE(Sales!C2:C7),2)"],
            ["East units", '=SUMIF(Sales!A2:A7,"East",Sales!C2:C7)'],
            ["Bad", "=1/0"],
        ],
        "A1",
        raw=False,
    )
    record(summary.get_all_values())
    sh.batch_update(
        {
            "requests": [
                {
                    "updateCells": {
                        "rows": [
                            {
                                "values": [
                                    {
                                        "pivotTable": {
                                            "source": {
                                                "sheetId": sales.id,
                                                "startRowIndex": 0,
                                                "endRowIndex": 7,
                                                "startColumnIndex": 0,
                                                "endColumnIndex": 6,
                                            },
                                            "rows": [
                                                {"sourceColumnOffset": 0, "showTotals": True, "sortOrder": "ASCENDING"}
                                            ],
                                            "values": [
                                                {"summarizeFunction": "SUM", "sourceColumnOffset": 2},
                                                {"summarizeFunction": "AVERAGE", "sourceColumnOffset": 3},
                                            ],
                                        }
                                    }
                                ]
                            }
                        ],
                        "start": {"sheetId": summary.id, "rowIndex": 6, "columnIndex": 0},
                        "fields": "pivotTable",
                    }
                }
            ]
        }
    )
    record(summary.get("A7:C12"))
    sales.merge_cells("G1:H1")
    sales.freeze(rows=1)
    sales.set_basic_filter("A1:F7")
    sales.define_named_range("C2:C7", "Units")
    sales.update_note("A1", "regions")
    sales.delete_columns(5)
    record(sales.get_all_values(value_render_option="FORMULA"))
    extra = sh.add_worksheet("Frame", 3, 3)
    set_with_dataframe(extra, pd.DataFrame({"x": [1, 2, 3], "y": ["a", "b", "=A2*10"]}), resize=True)
    record(get_as_dataframe(extra, evaluate_formulas=True).to_dict("list"))
    try:
        sales.update([[1, 2, 3]], "A1:B1")
    except gspread.exceptions.APIError as exc:
        record(str(exc))
    record(sh.fetch_sheet_metadata())
    record(sh.fetch_sheet_metadata({"includeGridData": "true", "ranges": "Sales!A1:C3"}))
    record(gc.list_spreadsheet_files())
    copy = gc.copy(spreadsheet_id, title="Scenario copy", copy_comments=False)
    record(copy.worksheets()[0].get_all_values())
    return out


def fresh() -> tuple[SheetsStore, str]:
    store = SheetsStore(seed=7)
    return store, build_spreadsheet(store, WORKBOOK).spreadsheet_id


def digest(results: list[Any], store: SheetsStore) -> str:
    payload = json.dumps(results, sort_keys=True).encode() + pickle.dumps(store.snapshot(), protocol=4)
    return hashlib.sha256(payload).hexdigest()


def main() -> None:
    store, spreadsheet_id = fresh()
    print(digest(run_script(make_client(store), spreadsheet_id), store))


if __name__ == "__main__":
    main()
