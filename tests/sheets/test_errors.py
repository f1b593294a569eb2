"""Errors in the real services' JSON shapes, limits, atomic batches, and no 500 on hostile input."""

from __future__ import annotations

import json
from typing import Any

import gspread
import pytest

from toolbench.core.seeding import stable_rng
from toolbench.core.transport import HttpRequest
from toolbench.mock_services.sheets import SheetsStore, build_spreadsheet, create_app, make_router
from toolbench.mock_services.sheets.batch import HANDLERS

from .conftest import PRODUCTS

SHEETS = "https://sheets.googleapis.com/v4/spreadsheets"
DRIVE = "https://www.googleapis.com/drive/v3/files"


@pytest.fixture
def env():
    store = SheetsStore()
    book = build_spreadsheet(store, PRODUCTS)
    app = create_app(store)
    router = make_router(app)

    def call(method: str, url: str, body: Any = None, raw: bytes | None = None) -> tuple[int, Any]:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
        response = router.send(HttpRequest(method, url, (("Content-Type", "application/json"),), data))
        try:
            return response.status, response.json()
        except ValueError:
            return response.status, response.text

    return store, book, app, call


def sheets_error(code: int, message: str, field: str | None = None) -> dict[str, Any]:
    """The error body; the JSON transcoder's errors (a value that does not fit the request's schema) also
    name the field in ``details``, as Google's do."""
    status = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND"}[code]
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if field is not None:
        violation = {"field": field, "description": message}
        error["details"] = [{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [violation]}]
    return {"error": error}


#: The field each transcoder error below names in its ``details``.
TRANSCODER_FIELDS = {
    "Invalid value at 'value_render_option' (type.googleapis.com/google.apps.sheets.v4.ValueRenderOption), \"PRETTY\"": (
        "value_render_option"
    ),
    "Invalid value at 'data.values[0]' (type.googleapis.com/google.protobuf.ListValue), 1": "data.values[0]",
    "Invalid value at 'data.values' (type.googleapis.com/google.protobuf.ListValue), \"abc\"": "data.values",
    "Invalid value at 'requests[0].delete_sheet.sheet_id' (TYPE_INT32), \"abc\"": "requests[0].delete_sheet.sheet_id",
    "Invalid JSON payload received. Unknown name \"fooBar\" at 'requests[0]': Cannot find field.": "requests[0]",
}


def test_not_found_shapes(env):
    _, book, _, call = env
    assert call("GET", f"{SHEETS}/missing") == (404, sheets_error(404, "Requested entity was not found."))
    assert call("GET", f"{SHEETS}/missing/values/A1")[0] == 404
    status, body = call("GET", f"{DRIVE}/missing")
    assert status == 404 and body["error"]["errors"][0]["reason"] == "notFound"
    assert body["error"]["message"] == "File not found: missing."
    assert call("GET", "https://sheets.googleapis.com/v5/whatever")[0] == 404
    assert call("DELETE", f"{SHEETS}/{book.spreadsheet_id}")[0] == 404


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        ("/values/Sheet9!A1", None, "Unable to parse range: Sheet9!A1"),
        ("/values/'Sheet1!A1", None, "Unable to parse range: 'Sheet1!A1"),
        ("/values/Sheet1!A2000", None, "Range (Sheet1!A2000) exceeds grid limits. Max rows: 1000, max columns: 26"),
        (
            "/values/A1?valueRenderOption=PRETTY",
            None,
            "Invalid value at 'value_render_option' (type.googleapis.com/google.apps.sheets.v4.ValueRenderOption), \"PRETTY\"",
        ),
    ],
)
def test_read_errors(env, path, body, message):
    _, book, _, call = env
    expected = sheets_error(400, message, TRANSCODER_FIELDS.get(message))
    assert call("GET", f"{SHEETS}/{book.spreadsheet_id}{path}") == (400, expected)


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        ("/values/A1", {"values": [[1]]}, "'valueInputOption' is required but not specified"),
        (
            "/values/A1?valueInputOption=RAW",
            {"values": [1, 2]},
            "Invalid value at 'data.values[0]' (type.googleapis.com/google.protobuf.ListValue), 1",
        ),
        (
            "/values/A1?valueInputOption=RAW",
            {"values": "abc"},
            "Invalid value at 'data.values' (type.googleapis.com/google.protobuf.ListValue), \"abc\"",
        ),
        (
            "/values/Sheet1!A1:B1?valueInputOption=RAW",
            {"values": [[1, 2, 3]]},
            "Requested writing within range [Sheet1!A1:B1], but tried writing to column [C]",
        ),
        (
            "/values/Sheet1!Z1?valueInputOption=RAW",
            {"values": [[1, 2]]},
            "Range (Sheet1!Z1) exceeds grid limits. Max rows: 1000, max columns: 26",
        ),
    ],
)
def test_write_errors(env, path, body, message):
    _, book, _, call = env
    expected = sheets_error(400, message, TRANSCODER_FIELDS.get(message))
    assert call("PUT", f"{SHEETS}/{book.spreadsheet_id}{path}", body) == (400, expected)


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (
            {"deleteSheet": {"sheetId": "abc"}},
            "Invalid value at 'requests[0].delete_sheet.sheet_id' (TYPE_INT32), \"abc\"",
        ),
        ({"deleteSheet": {"sheetId": 77}}, "Invalid requests[0].deleteSheet: No grid with id: 77"),
        (
            {"addSheet": {"properties": {"title": "notes"}}},
            'Invalid requests[0].addSheet: A sheet with the name "notes" already exists. Please enter another name.',
        ),
        ({"fooBar": {}}, "Invalid JSON payload received. Unknown name \"fooBar\" at 'requests[0]': Cannot find field."),
        ({"addChart": {}}, "Invalid requests[0].addChart: addChart is not supported by this emulator."),
        (
            {"mergeCells": {"range": {"sheetId": 0, "endRowIndex": 2000}}},
            "Invalid requests[0].mergeCells: Range (Sheet1!A1:Z2000) exceeds grid limits. Max rows: 1000, max columns: 26",
        ),
        (
            {"deleteDimension": {"range": {"sheetId": 0, "dimension": "ROWS"}}},
            "Invalid requests[0].deleteDimension: You can't delete all the rows on the sheet.",
        ),
    ],
)
def test_batch_update_errors(env, request_, message):
    _, book, _, call = env
    assert call("POST", f"{SHEETS}/{book.spreadsheet_id}:batchUpdate", {"requests": [request_]}) == (
        400,
        sheets_error(400, message, TRANSCODER_FIELDS.get(message)),
    )


def test_bad_json(env):
    _, book, _, call = env
    status, body = call("POST", f"{SHEETS}/{book.spreadsheet_id}:batchUpdate", raw=b"{nope")
    assert status == 400 and body["error"]["message"].startswith("Invalid JSON payload received.")
    status, body = call("POST", f"{SHEETS}/{book.spreadsheet_id}:batchUpdate", raw=b"[" * 100_000)
    assert status == 400


def test_batches_are_atomic(env):
    store, book, _, call = env
    before = store.snapshot()
    status, _ = call(
        "POST",
        f"{SHEETS}/{book.spreadsheet_id}:batchUpdate",
        {
            "requests": [
                {"addSheet": {"properties": {"title": "X"}}},
                {"updateSpreadsheetProperties": {"properties": {"title": "Renamed"}, "fields": "title"}},
                {"deleteSheet": {"sheetId": 999}},
            ]
        },
    )
    assert status == 400
    status, _ = call(
        "POST",
        f"{SHEETS}/{book.spreadsheet_id}/values:batchUpdate",
        {
            "valueInputOption": "RAW",
            "data": [{"range": "A1", "values": [["changed"]]}, {"range": "Nope!A1", "values": [[1]]}],
        },
    )
    assert status == 400
    assert store.snapshot() == before


def test_cell_limit(env):
    store, book, _, call = env
    message = "This action would increase the number of cells in the workbook above the limit of 200000 cells."
    for request_ in (
        {"appendDimension": {"sheetId": 0, "dimension": "ROWS", "length": 100_000}},
        {"addSheet": {"properties": {"gridProperties": {"rowCount": 10_000, "columnCount": 20}}}},
        {
            "updateSheetProperties": {
                "properties": {"sheetId": 0, "gridProperties": {"rowCount": 50_000}},
                "fields": "gridProperties.rowCount",
            }
        },
    ):
        assert call("POST", f"{SHEETS}/{book.spreadsheet_id}:batchUpdate", {"requests": [request_]}) == (
            400,
            sheets_error(400, message),
        )
    rows = [["x"] * 26 for _ in range(10_000)]
    status, body = call(
        "POST", f"{SHEETS}/{book.spreadsheet_id}/values/Sheet1:append?valueInputOption=RAW", {"values": rows}
    )
    assert (status, body["error"]["message"]) == (400, message)
    assert store.spreadsheet(book.spreadsheet_id).cell_count == 1000 * 26 * 2


def test_hostile_huge_sheet_through_gspread_fails_fast(store, book, gc):
    ws = gc.open_by_key(book.spreadsheet_id).sheet1
    with pytest.raises(gspread.exceptions.APIError, match="above the limit of 200000 cells"):
        ws.resize(rows=1_000_000, cols=26)
    with pytest.raises(gspread.exceptions.APIError, match="above the limit"):
        ws.append_rows([[i] for i in range(200_000)])


def test_body_size_limit(env):
    _, book, _, call = env
    huge = b'{"values": [[' + b'"xxxxxxxxxx",' * 1_000_000 + b'"x"]]}'
    status, body = call("PUT", f"{SHEETS}/{book.spreadsheet_id}/values/A1?valueInputOption=RAW", raw=huge)
    assert (status, body) == (400, sheets_error(400, "Request payload size exceeds the limit: 10485760 bytes."))


def test_drive_errors(env):
    _, book, _, call = env
    status, body = call("GET", f"{DRIVE}?q=name+%3D")
    assert status == 400 and body["error"]["errors"][0] == {
        "message": "Invalid Value",
        "domain": "global",
        "reason": "invalid",
        "location": "q",
        "locationType": "parameter",
    }
    assert call("GET", f"{DRIVE}/{book.spreadsheet_id}/export?mimeType=application/pdf")[0] == 400
    status, body = call("POST", f"{DRIVE}/{book.spreadsheet_id}/permissions", {"role": "writer"})
    assert status == 400 and "type" in body["error"]["message"]
    assert call("DELETE", f"{DRIVE}/{book.spreadsheet_id}/permissions/nope")[0] == 404


def test_gspread_raises_api_errors(gc, book):
    ws = gc.open_by_key(book.spreadsheet_id).sheet1
    with pytest.raises(gspread.exceptions.APIError) as caught:
        ws.update("A2", "Hello world")  # gspread 5 argument order: values "A2" are not a list of lists
    assert caught.value.code == 400
    assert "Invalid value at 'data.values' (type.googleapis.com/google.protobuf.ListValue), \"A2\"" in str(caught.value)
    with pytest.raises(gspread.exceptions.APIError, match="Unable to parse range: 'Sheet1'!Hello world"):
        ws.update([["A2"]], "Hello world")


# ---------------------------------------------------------------------------------- fuzzing
def _junk(rng, depth: int = 0) -> Any:
    choice = int(rng.integers(0, 10 if depth < 3 else 8))
    if choice == 8:
        return [_junk(rng, depth + 1)]
    if choice == 9:
        return {"sheetId": _junk(rng, depth + 1)}
    return [None, True, int(rng.integers(-3, 2_000)), float(rng.normal()) * 1e6, "", "A1:B2", "Sheet1!A:A", "'x'!Q"][
        choice
    ]


def _random_grid_range(rng) -> Any:
    keys = ["sheetId", "startRowIndex", "endRowIndex", "startColumnIndex", "endColumnIndex"]
    return {k: (int(rng.integers(-2, 30)) if rng.random() < 0.8 else _junk(rng)) for k in keys if rng.random() < 0.7}


def test_fuzzed_requests_never_500(env):
    store, book, app, call = env
    rng = stable_rng("sheets-fuzz")
    sid = book.spreadsheet_id
    kinds = sorted(HANDLERS)
    fields = [
        "range",
        "source",
        "destination",
        "properties",
        "fields",
        "rows",
        "cell",
        "sortSpecs",
        "filter",
        "namedRange",
        "protectedRange",
        "dimensions",
        "mergeType",
        "find",
        "start",
        "sheetId",
        "rule",
        "pasteType",
        "length",
        "dimension",
    ]
    for _ in range(500):
        kind = kinds[int(rng.integers(0, len(kinds)))]
        spec = {}
        for name in fields:
            if rng.random() < 0.3:
                spec[name] = _random_grid_range(rng) if name in ("range", "source", "destination") else _junk(rng)
        if rng.random() < 0.5:
            spec["fields"] = ["*", "userEnteredFormat", "title", "gridProperties.rowCount", "note", "((", ""][
                int(rng.integers(0, 7))
            ]
        status, body = call("POST", f"{SHEETS}/{sid}:batchUpdate", {"requests": [{kind: spec}]})
        assert status != 500, (kind, spec, app.config.get("SHEETS_LAST_ERROR"))
        if status >= 400:
            assert {"code", "message", "status"} <= set(body["error"]) <= {"code", "message", "status", "details"}
    ranges = [
        "A1",
        "Sheet1!A:A",
        "'Sheet1'!",
        "!A1",
        "Notes!ZZZ9999999",
        "A1:",
        ":A1",
        "''!A1",
        "Sheet1!1:0",
        "%",
        "Sheet1!A1:B2:C3",
        "'a''b'!A1",
        "\u00e9!A1",
        "Sheet1!$A$1:$B",
        "x" * 500,
    ]
    for text in ranges:
        for method, body in (("GET", None), ("PUT", {"values": [[1, "2", None, True]]})):
            status, reply = call(method, f"{SHEETS}/{sid}/values/{text}?valueInputOption=USER_ENTERED", body)
            assert status in (200, 400), (text, reply)
        status, _ = call("POST", f"{SHEETS}/{sid}/values/{text}:append?valueInputOption=RAW", {"values": [[1]]})
        assert status in (200, 400)
    for _ in range(150):
        values = [[_junk(rng) for _ in range(int(rng.integers(0, 4)))] for _ in range(int(rng.integers(0, 4)))]
        status, _ = call(
            "PUT",
            f"{SHEETS}/{sid}/values/Sheet1!C3?valueInputOption=USER_ENTERED",
            {"values": values, "majorDimension": _junk(rng)},
        )
        assert status in (200, 400), app.config.get("SHEETS_LAST_ERROR")
    for query in (
        "name = 'x' and",
        "(",
        "not",
        "'a' in",
        "x = 'y'",
        "trashed = maybe",
        "name contains 'P' or (",
        "mimeType != 'x' and not starred = true",
    ):
        status, _ = call("GET", f"{DRIVE}?q={query}")
        assert status in (200, 400)
    assert app.config.get("SHEETS_LAST_ERROR") is None


def test_cell_text_limit_and_non_json_numbers(env):
    _, book, _, call = env
    url = f"{SHEETS}/{book.spreadsheet_id}/values/A1?valueInputOption=RAW"
    status, body = call("PUT", url, {"values": [["x" * 50_001]]})
    assert status == 400 and "more than the maximum of 50000 characters" in body["error"]["message"]
    assert call("PUT", url, {"values": [["x" * 50_000]]})[0] == 200
    for raw in (b'{"values": [[NaN]]}', b'{"values": [[Infinity]]}', b'{"values": [[1e400]]}'):
        status, body = call("PUT", url, raw=raw)
        assert status == 400 and body["error"]["message"].startswith("Invalid JSON payload received."), raw


def test_a_number_no_double_holds_is_an_invalid_payload_not_a_500():
    from toolbench.mock_services.sheets.body import parse_json_body
    from toolbench.mock_services.sheets.errors import SheetsError

    with pytest.raises(SheetsError, match="Invalid JSON payload"):
        parse_json_body(('{"values": [[1' + "0" * 400 + "]]}").encode())
    assert parse_json_body(b'{"values": [[12345678901234567890]]}') == {"values": [[12345678901234567890]]}
