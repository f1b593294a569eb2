"""Fixtures for the Sheets emulator tests: a store with a small products workbook and a real gspread client."""

from __future__ import annotations

import pytest

from toolbench.mock_services.sheets import SheetsStore, build_spreadsheet, make_client, warm

PRODUCTS = {
    "title": "Products",
    "sheets": [
        {
            "title": "Sheet1",
            "rows": [
                ["Product", "Cost", "Price"],
                ["bolt", 1, 3],
                ["pipe", 5, 4],
                ["clamp", 10, 11],
                ["lever", 3, 15],
                ["drill", 12, 2],
                ["file", 2, 100],
            ],
        },
        {"title": "Notes", "rows": [["k", "v"], ["a", 1]]},
    ],
}


@pytest.fixture(scope="session", autouse=True)
def _warm_engine() -> None:
    warm()  # the formula engine's first compile takes about a second: pay it once


@pytest.fixture
def store() -> SheetsStore:
    return SheetsStore(seed=0)


@pytest.fixture
def book(store):
    return build_spreadsheet(store, PRODUCTS)


@pytest.fixture
def gc(store):
    return make_client(store)


@pytest.fixture
def sh(gc, book):
    return gc.open_by_key(book.spreadsheet_id)


@pytest.fixture
def ws(sh):
    return sh.sheet1
