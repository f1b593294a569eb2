"""A local Google Sheets v4 + Drive v3 emulator that the real, unmodified ``gspread`` runs against.

Typical use::

    store = SheetsStore(seed=0)
    book = build_spreadsheet(store, {"title": "Products", "sheets": [{"rows": [["Product", "Cost"], ["bolt", 1]]}]})
    gc = make_client(store)                       # a gspread.Client, no credentials, no network
    ws = gc.open_by_key(book.spreadsheet_id).sheet1
    ws.update_acell("C1", "=SUM(B2:B3)")
    read_sheet(store, book.spreadsheet_id)        # values, formatted values, formats: for scoring

``create_app(store)`` is the Flask app (both hosts' paths); ``served_client(url)`` is a gspread
client for an app served on loopback (``toolbench serve sheets``). ``store.snapshot()`` /
``store.restore()`` move the whole state as plain data.
"""

from flask import Flask

from toolbench.mock_services.sheets.app import DRIVE_HOST, MAX_BODY_BYTES, SHEETS_HOST, create_app
from toolbench.mock_services.sheets.client import HOSTS, make_client, make_router, served_client
from toolbench.mock_services.sheets.errors import DriveError, SheetsError
from toolbench.mock_services.sheets.formula import warm
from toolbench.mock_services.sheets.model import Cell, Sheet, Spreadsheet
from toolbench.mock_services.sheets.store import DEFAULT_CLOCK, DEFAULT_MAX_CELLS, SPREADSHEET_MIME, SheetsStore
from toolbench.mock_services.sheets.workbook import build_spreadsheet, read_sheet, read_workbook, sheet_values

DEMO_WORKBOOK = {
    "title": "Products",
    "sheets": [
        {
            "title": "Sheet1",
            "rows": [
                ["Item", "Unit Cost", "Price"],
                ["Notebook", 1.2, 2.5],
                ["Pencil", 0.1, 0.35],
                ["Stapler", 4.0, 7.99],
                ["Folder", 0.4, 1.1],
            ],
        }
    ],
}


def demo_store(seed: int = 0) -> SheetsStore:
    """A store holding a small example workbook, for ``toolbench serve sheets``."""
    store = SheetsStore(seed=seed)
    build_spreadsheet(store, DEMO_WORKBOOK)
    return store


def create_demo_app() -> Flask:
    """The app ``toolbench serve sheets`` serves: the demo store behind both Google hosts' paths."""
    return create_app(demo_store())


__all__ = [
    "DEFAULT_CLOCK",
    "DEFAULT_MAX_CELLS",
    "DEMO_WORKBOOK",
    "DRIVE_HOST",
    "HOSTS",
    "MAX_BODY_BYTES",
    "SHEETS_HOST",
    "SPREADSHEET_MIME",
    "Cell",
    "DriveError",
    "Sheet",
    "SheetsError",
    "SheetsStore",
    "Spreadsheet",
    "build_spreadsheet",
    "create_app",
    "create_demo_app",
    "demo_store",
    "make_client",
    "make_router",
    "read_sheet",
    "read_workbook",
    "served_client",
    "sheet_values",
    "warm",
]
