"""Google Sheets emulator: real gspread calls per second, in-process versus over HTTP on loopback.

The same mix of calls runs against a fresh products workbook both ways: ``get_all_values``,
``update`` (a 2x2 block), ``format`` (a batchUpdate repeatCell), ``append_row``, ``acell`` of a formula
cell, and every tenth round a ``delete_rows`` that keeps the sheet small. In-process, gspread's
session answers from the Flask app through ``Router``; served, it talks HTTP to ``ServedApp`` on
127.0.0.1 (what ``toolbench serve sheets`` runs).
"""

from __future__ import annotations

import time
from typing import Any

import gspread

from toolbench.core.transport import ServedApp
from toolbench.mock_services.sheets import SheetsStore, build_spreadsheet, create_app, make_client, served_client, warm

WORKBOOK = {
    "title": "Bench",
    "sheets": [
        {
            "title": "Sheet1",
            "rows": [["Product", "Cost", "Price", "Margin"]]
            + [[f"item{i}", i, i * 1.5, f"=C{i + 2}-B{i + 2}"] for i in range(20)]
            + [[None, "=SUM(B2:B21)", "=SUM(C2:C21)"]],
        }
    ],
}


def _round(ws: gspread.Worksheet, index: int) -> int:
    """One round of the mix; returns the number of gspread calls it made."""
    ws.get_all_values()
    ws.update([[index, index * 2], [index + 1, index * 3]], "F2")
    ws.format("A1:D1", {"textFormat": {"bold": index % 2 == 0}})
    ws.append_row([f"new{index}", index, index + 1])
    ws.acell("B23")
    calls = 5
    if index % 10 == 9:
        ws.delete_rows(24, 33)
        calls += 1
    return calls


def calls_per_second(make: Any, seconds: float = 3.0) -> float:
    store = SheetsStore(seed=0)
    book = build_spreadsheet(store, WORKBOOK)
    with make(store) as client:
        ws = client.open_by_key(book.spreadsheet_id).sheet1
        _round(ws, 0)  # warm caches (compiled formulas, connections)
        calls, index, start = 0, 1, time.perf_counter()
        while time.perf_counter() - start < seconds:
            calls += _round(ws, index)
            index += 1
        return calls / (time.perf_counter() - start)


class _InProcess:
    def __init__(self, store: SheetsStore):
        self.client = make_client(store)

    def __enter__(self) -> gspread.Client:
        return self.client

    def __exit__(self, *exc: object) -> None:
        pass


class _Served:
    def __init__(self, store: SheetsStore):
        self.served = ServedApp(create_app(store))

    def __enter__(self) -> gspread.Client:
        self.served.start()
        return served_client(self.served.url)

    def __exit__(self, *exc: object) -> None:
        self.served.stop()


def main() -> dict[str, Any]:
    warm()
    in_process = calls_per_second(_InProcess)
    served = calls_per_second(_Served)
    print(f"gspread calls/s   in-process {in_process:8.1f}   served on 127.0.0.1 {served:8.1f}")
    return {"in_process_calls_per_s": round(in_process, 1), "served_calls_per_s": round(served, 1)}


if __name__ == "__main__":
    main()
