"""The Google account gspread's suite ran against, as far as its tests can see it.

The tests create, change and delete their own spreadsheets, so an empty account is almost the
whole world. One thing in Google's world is not made by the tests: a spreadsheet owned by someone
else that the suite's account was never given access to (``test_access_private_spreadsheet``
opens it by id and expects a permission error, not "not found"). Both the live run and the replay
start from a store that holds it too.
"""

from __future__ import annotations

from typing import Any

from toolbench.mock_services.sheets import Sheet, SheetsStore

#: The id of the private spreadsheet named in gspread's ``client_test.py``.
PRIVATE_SPREADSHEET_ID = "1jIKzPs8LsiZZdLdeMEP-5ZIHw6RkjiOmj1LrJN706Yc"
#: Whoever owns it (the suite only needs it not to be the caller).
PRIVATE_OWNER = "someone.else@example.com"
#: The store's seed: fixed, so runs are reproducible.
SEED = "gspread-conformance"


def new_store() -> SheetsStore:
    """A fresh emulator store holding what Google's account held before the tests ran."""
    store = SheetsStore(seed=SEED)
    store.create_foreign_spreadsheet(PRIVATE_SPREADSHEET_ID, PRIVATE_OWNER)
    return store


def add_existing_spreadsheet(
    store: SheetsStore,
    file_id: str,
    title: str,
    sheets: list[dict[str, Any]] | None = None,
    locale: str | None = None,
    time_zone: str | None = None,
    created: str = "",
    modified: str = "",
) -> None:
    """Give the account a spreadsheet it held before a recording, under Google's own id (so
    requests naming it need no mapping), with the sheets' ``SheetProperties`` and the times the
    recording shows (older than anything the replay creates, so Drive lists it after those)."""
    made = store.create_spreadsheet(title)
    data = store.spreadsheet_data(made.spreadsheet_id)
    store.delete_file(made.spreadsheet_id)
    data["file"]["id"] = file_id
    data["file"]["createdTime"] = created or data["file"]["createdTime"]
    data["file"]["modifiedTime"] = modified or created or data["file"]["modifiedTime"]
    book = data["spreadsheet"]
    book["spreadsheetId"] = file_id
    book["locale"] = locale or book["locale"]
    book["timeZone"] = time_zone or book["timeZone"]
    if sheets:
        book["sheets"] = [_sheet_from_properties(properties).to_data() for properties in sheets]
    store.load_spreadsheet(data)


def _sheet_from_properties(properties: dict[str, Any]) -> Sheet:
    grid = properties.get("gridProperties", {})
    return Sheet(
        int(properties.get("sheetId", 0)),
        str(properties.get("title", "Sheet1")),
        row_count=int(grid.get("rowCount", 1000)),
        column_count=int(grid.get("columnCount", 26)),
        frozen_rows=int(grid.get("frozenRowCount", 0)),
        frozen_columns=int(grid.get("frozenColumnCount", 0)),
        hidden=bool(properties.get("hidden", False)),
    )
