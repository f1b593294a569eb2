"""The store without HTTP: workbook specs, read-outs for scoring, snapshots, ids and clock, Drive queries."""

from __future__ import annotations

import copy
import pickle

import pytest

from toolbench.mock_services.sheets import (
    SheetsStore,
    build_spreadsheet,
    make_client,
    read_sheet,
    read_workbook,
    sheet_values,
)
from toolbench.mock_services.sheets.drive import list_files

from .conftest import PRODUCTS


def test_spec_builds_values_formulas_formats_and_ranges():
    store = SheetsStore()
    spec = {
        "title": "Grades",
        "sheets": [
            {
                "title": "Class A",
                "rows": [
                    ["Name", "Score", "Share"],
                    ["ann", 90, "45%"],
                    ["bo", 70, "=B3/SUM(B2:B3)"],
                    [None, "=SUM(B2:B3)"],
                ],
                "formats": {
                    "A1:C1": {"textFormat": {"bold": True}, "backgroundColor": {"red": 0.5, "green": 0, "blue": 0}}
                },
                "notes": {"A1": "names"},
                "merges": ["E1:F1"],
                "frozen_rows": 1,
                "basic_filter": "A1:C3",
            }
        ],
        "named_ranges": {"Scores": "'Class A'!B2:B3"},
    }
    book = build_spreadsheet(store, spec)
    sheet = read_sheet(store, book.spreadsheet_id)
    cells = sheet["cells"]
    assert cells["A1"] == {
        "value": "Name",
        "formatted": "Name",
        "format": {
            "textFormat": {"bold": True},
            "backgroundColor": {"red": 0.5},
            "backgroundColorStyle": {"rgbColor": {"red": 0.5}},
        },
        "note": "names",
    }
    assert cells["C2"] == {
        "value": 0.45,
        "formatted": "45%",
        "format": {"numberFormat": {"type": "PERCENT", "pattern": "0%"}},
    }
    assert cells["C3"]["formula"] == "=B3/SUM(B2:B3)" and cells["C3"]["formatted"] == "0.4375"
    assert cells["B4"]["value"] == 160 and "A4" not in cells
    assert (sheet["merges"], sheet["basic_filter"], sheet["frozen_rows"]) == (["E1:F1"], "A1:C3", 1)
    assert read_workbook(store, book.spreadsheet_id)["named_ranges"] == {"Scores": "'Class A'!B2:B3"}
    assert sheet_values(store, book.spreadsheet_id)[1] == ["ann", "90", "45%"]
    raw = build_spreadsheet(store, {"title": "Raw", "raw": True, "sheets": [{"rows": [["=1+1", "50%"]]}]})
    assert sheet_values(store, raw.spreadsheet_id) == [["=1+1", "50%"]]


def test_spec_errors_leave_no_file():
    store = SheetsStore(max_cells=10_000)
    with pytest.raises(ValueError, match="above the limit"):
        build_spreadsheet(store, {"title": "Big", "sheets": [{"rows": [[1]]}]})
    with pytest.raises(ValueError, match="duplicate"):
        build_spreadsheet(SheetsStore(), {"sheets": [{"title": "A"}, {"title": "a"}]})
    assert store.files == {}


def test_snapshot_restore_is_exact_and_plain(store, book, gc):
    ws = gc.open_by_key(book.spreadsheet_id).sheet1
    ws.update_acell("D1", "=SUM(B2:B7)")
    snapshot = store.snapshot()
    frozen = pickle.dumps(snapshot)
    ws.update_acell("B2", 1000)
    ws.spreadsheet.add_worksheet("More", 5, 5)
    assert ws.acell("D1").value == "1032"
    store.restore(snapshot)
    assert pickle.dumps(store.snapshot()) == frozen
    assert ws.acell("D1").value == "33"  # the same client sees the restored state
    assert [w.title for w in ws.spreadsheet.worksheets()] == ["Sheet1", "Notes"]
    clone = SheetsStore.from_snapshot(pickle.loads(frozen))
    assert read_workbook(clone, book.spreadsheet_id) == read_workbook(store, book.spreadsheet_id)
    assert copy.deepcopy(snapshot) == snapshot


def test_carry_one_workbook_to_another_store(store, book):
    data = store.spreadsheet_data(book.spreadsheet_id)
    other = SheetsStore(seed=99)
    other.load_spreadsheet(pickle.loads(pickle.dumps(data)))
    gc = make_client(other)
    assert gc.open("Products").sheet1.get_all_values() == make_client(store).open("Products").sheet1.get_all_values()


def test_ids_and_clock_are_deterministic():
    def ids(seed):
        store = SheetsStore(seed=seed)
        first = build_spreadsheet(store, PRODUCTS)
        second = build_spreadsheet(store, PRODUCTS)
        return first.spreadsheet_id, second.spreadsheet_id, [s.sheet_id for s in second.sheets]

    assert ids(1) == ids(1)
    assert ids(1) != ids(2)
    first, _, sheet_ids = ids(1)
    assert len(first) == 44 and sheet_ids[0] == 0
    store = SheetsStore(clock="2023-06-01T12:00:00Z")
    book = build_spreadsheet(store, PRODUCTS)
    gc = make_client(store)
    assert gc.get_file_drive_metadata(book.spreadsheet_id)["createdTime"] == "2023-06-01T12:00:00.000Z"
    gc.open_by_key(book.spreadsheet_id).sheet1.update_acell("A1", "x")
    assert gc.get_file_drive_metadata(book.spreadsheet_id)["modifiedTime"] == "2023-06-01T12:00:01.000Z"


def test_drive_queries(store):
    for title in ("Alpha", "Beta", "Alphabet"):
        build_spreadsheet(store, {"title": title})
    folder = store.add_file("Folder", "application/vnd.google-apps.folder")
    store.create_spreadsheet("Inside", parents=[folder.file_id])
    store.files[store.spreadsheets[next(iter(store.spreadsheets))].spreadsheet_id].trashed = True

    def names(query, order=""):
        return [f["name"] for f in list_files(store, query, 100, "", order, None)["files"]]

    assert names('mimeType="application/vnd.google-apps.spreadsheet" and name = "Beta"') == ["Beta"]
    # no orderBy: the most recently modified first, the newest first among equal times
    assert names("name contains 'alpha'") == ["Alphabet", "Alpha"]
    assert names("trashed = false and name contains 'Alpha'") == ["Alphabet"]
    assert names(f"'{folder.file_id}' in parents") == ["Inside"]
    assert names(f'parents in "{folder.file_id}"') == ["Inside"]
    assert names("not name = 'Beta' and (name = 'Alpha' or name = 'Inside')") == ["Inside", "Alpha"]
    assert names("mimeType != 'application/vnd.google-apps.folder'", "name desc") == [
        "Inside",
        "Beta",
        "Alphabet",
        "Alpha",
    ]
    page = list_files(store, "", 2, "", "", "nextPageToken,files(name)")
    assert page == {"nextPageToken": "2", "files": [{"name": "Inside"}, {"name": "Folder"}]}


def test_threaded_server_keeps_the_store_consistent(store, book):
    from concurrent.futures import ThreadPoolExecutor

    from toolbench.core.transport import ServedApp
    from toolbench.mock_services.sheets import create_app, served_client

    with ServedApp(create_app(store)) as served:

        def append(n: int) -> None:
            served_client(served.url).open_by_key(book.spreadsheet_id).worksheet("Notes").append_row([f"r{n}", n])

        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(append, range(12)))
    values = sheet_values(store, book.spreadsheet_id, "Notes")
    assert len(values) == 14 and sorted(row[0] for row in values[2:]) == sorted(f"r{n}" for n in range(12))
