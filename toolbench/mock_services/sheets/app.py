"""The Flask app: Sheets v4 (``/v4/spreadsheets/...``) and Drive (``/drive/v3/files/...``,
``/upload/drive/v2/files/...``) on one app, so one app can answer for both hosts.

Every error is a JSON body in the service's shape; bad input is a 400, never a 500. Bodies larger
than ``max_body_bytes`` are refused with the service's message. The store lock is held for each
request, so the app is safe behind a threaded server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from toolbench.mock_services.http import STATE_KEY, json_response, new_app, parse_int
from toolbench.mock_services.sheets import batch, drive, drive_v2, values_api, work
from toolbench.mock_services.sheets.body import Obj, bad_value, parse_json_body, snake
from toolbench.mock_services.sheets.errors import DriveError, SheetsError, invalid, not_found
from toolbench.mock_services.sheets.fields import parse_mask, project, selects
from toolbench.mock_services.sheets.formula import calculator
from toolbench.mock_services.sheets.metadata import sheet_properties, spreadsheet_json
from toolbench.mock_services.sheets.model import Sheet, Spreadsheet
from toolbench.mock_services.sheets.ranges import read_rect
from toolbench.mock_services.sheets.store import SPREADSHEET_MIME, SheetsStore

#: The real limit is 10 MB per request ("Request payload size exceeds the limit: 10485760 bytes.").
MAX_BODY_BYTES = 10 * 1024 * 1024
SHEETS_HOST = "sheets.googleapis.com"
DRIVE_HOST = "www.googleapis.com"
ALL_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"]


def _query_enum(name: str, allowed: tuple[str, ...], default: str, type_name: str) -> str:
    value = request.args.get(name)
    if value is None or value == "":
        return default
    if value not in allowed:
        raise bad_value(snake(name), f"type.googleapis.com/google.apps.sheets.v4.{type_name}", value)
    return value


def _query_bool(name: str, default: bool = False) -> bool:
    value = request.args.get(name)
    if value is None or value == "":
        return default
    if value.lower() in ("true", "1"):
        return True
    if value.lower() in ("false", "0"):
        return False
    raise bad_value(snake(name), "TYPE_BOOL", value)


def _body() -> Any:
    return parse_json_body(request.get_data(cache=True))


def _fields(value: dict[str, Any]) -> dict[str, Any]:
    mask = request.args.get("fields")
    return project(value, parse_mask(mask)) if mask else value


class _Api:
    """Request handlers over one store (instances hold no other state)."""

    def __init__(self, store: SheetsStore):
        self.store = store

    # ------------------------------------------------------------------ sheets
    def spreadsheet(self, spreadsheet_id: str) -> Spreadsheet:
        return self.store.spreadsheet(spreadsheet_id)

    def create_spreadsheet(self) -> Response:
        spec = Obj(_body(), "")
        properties = spec.obj("properties") or Obj({}, "properties")
        title = properties.text("title") or "Untitled spreadsheet"
        book = self.store.create_spreadsheet(title, first_sheet=False)
        try:
            book.locale = properties.text("locale", "en_US") or "en_US"
            book.time_zone = properties.text("timeZone", book.time_zone) or book.time_zone
            ctx = batch.Context(self.store, book)
            for index, sheet_spec in enumerate(spec.objs("sheets")):
                properties_data = sheet_spec.raw("properties", {})
                if index == 0 and isinstance(properties_data, dict):  # a new spreadsheet's first sheet has id 0
                    properties_data = {"sheetId": 0, **properties_data}
                batch.add_sheet(ctx, Obj({"properties": properties_data}, sheet_spec.path))
            if not book.sheets:
                book.sheets.append(Sheet(0, "Sheet1"))
        except SheetsError:
            self.store.delete_file(book.spreadsheet_id)
            raise
        return json_response(_fields(spreadsheet_json(book, None, False, None)))

    def sheets(self, rest: str) -> Response:
        spreadsheet_id, slash, tail = rest.partition("/")
        method = request.method
        if not slash:
            if spreadsheet_id.endswith(":batchUpdate") and method == "POST":
                return self.batch_update(spreadsheet_id[: -len(":batchUpdate")])
            if ":" not in spreadsheet_id and method == "GET":
                return self.get(spreadsheet_id)
            raise _url_not_found()
        book = self.spreadsheet(spreadsheet_id)
        if tail.startswith("values/"):
            range_text = tail[len("values/") :]
            if range_text.endswith(":append") and method == "POST":
                return self.append(book, range_text[: -len(":append")])
            if range_text.endswith(":clear") and method == "POST":
                return self.clear(book, range_text[: -len(":clear")])
            if method == "GET":
                return self.values_get(book, range_text)
            if method == "PUT":
                return self.values_put(book, range_text)
            raise _url_not_found()
        handlers: dict[tuple[str, str], Callable[[Spreadsheet], Response]] = {
            ("values:batchGet", "GET"): self.batch_get,
            ("values:batchUpdate", "POST"): self.values_batch_update,
            ("values:batchClear", "POST"): self.batch_clear,
        }
        handler = handlers.get((tail, method))
        if handler is not None:
            return handler(book)
        if tail.startswith("sheets/") and tail.endswith(":copyTo") and method == "POST":
            return self.copy_to(book, tail[len("sheets/") : -len(":copyTo")])
        raise _url_not_found()

    def get(self, spreadsheet_id: str) -> Response:
        book = self.spreadsheet(spreadsheet_id)
        mask_text = request.args.get("fields")
        mask = parse_mask(mask_text) if mask_text else None
        include = selects(mask, "sheets", "data") if mask is not None else _query_bool("includeGridData")
        ranges = [read_rect(book, text) for text in request.args.getlist("ranges")]
        calc = calculator(book, self.store.now_serial()) if include else None
        body = spreadsheet_json(book, calc, include, ranges or None)
        return json_response(project(body, mask) if mask is not None else body)

    def batch_update(self, spreadsheet_id: str) -> Response:
        book = self.spreadsheet(spreadsheet_id)
        result = batch.batch_update(self.store, book, _body())
        if result["replies"]:
            self.store.changed(book.spreadsheet_id)
        return json_response(_fields(result))

    def _read_options(self) -> tuple[str, str, str]:
        return (
            _query_enum("majorDimension", values_api.DIMENSIONS, "ROWS", "Dimension"),
            _query_enum("valueRenderOption", values_api.RENDER_OPTIONS, "FORMATTED_VALUE", "ValueRenderOption"),
            _query_enum("dateTimeRenderOption", values_api.DATETIME_OPTIONS, "SERIAL_NUMBER", "DateTimeRenderOption"),
        )

    def values_get(self, book: Spreadsheet, range_text: str) -> Response:
        major, render, dates = self._read_options()
        return json_response(_fields(values_api.value_range(self.store, book, range_text, major, render, dates)))

    def batch_get(self, book: Spreadsheet) -> Response:
        major, render, dates = self._read_options()
        ranges = request.args.getlist("ranges")
        out: dict[str, Any] = {"spreadsheetId": book.spreadsheet_id}
        if ranges:
            out["valueRanges"] = [
                values_api.value_range(self.store, book, text, major, render, dates) for text in ranges
            ]
        return json_response(_fields(out))

    def _input_option(self, value: str | None, path: str = "value_input_option") -> bool:
        if value is None or value == "":
            raise invalid("'valueInputOption' is required but not specified")
        if value not in values_api.INPUT_OPTIONS:
            raise bad_value(path, "type.googleapis.com/google.apps.sheets.v4.ValueInputOption", value)
        return value == "USER_ENTERED"

    def _response_options(self, source: Obj | None = None) -> tuple[bool, str, str]:
        if source is not None:
            return (
                source.flag("includeValuesInResponse"),
                source.enum(
                    "responseValueRenderOption", values_api.RENDER_OPTIONS, "ValueRenderOption", "FORMATTED_VALUE"
                )
                or "FORMATTED_VALUE",
                source.enum(
                    "responseDateTimeRenderOption", values_api.DATETIME_OPTIONS, "DateTimeRenderOption", "SERIAL_NUMBER"
                )
                or "SERIAL_NUMBER",
            )
        return (
            _query_bool("includeValuesInResponse"),
            _query_enum("responseValueRenderOption", values_api.RENDER_OPTIONS, "FORMATTED_VALUE", "ValueRenderOption"),
            _query_enum(
                "responseDateTimeRenderOption", values_api.DATETIME_OPTIONS, "SERIAL_NUMBER", "DateTimeRenderOption"
            ),
        )

    def values_put(self, book: Spreadsheet, range_text: str) -> Response:
        user_entered = self._input_option(request.args.get("valueInputOption"))
        include, render, dates = self._response_options()
        body = Obj(_body(), "")
        major = body.enum("majorDimension", values_api.DIMENSIONS, "Dimension", "ROWS") or "ROWS"
        result = values_api.update(
            self.store,
            book,
            range_text,
            body.raw("values"),
            major,
            user_entered,
            include,
            render,
            dates,
            path="data.values",
        )
        self.store.changed(book.spreadsheet_id)
        return json_response(_fields(result))

    def append(self, book: Spreadsheet, range_text: str) -> Response:
        user_entered = self._input_option(request.args.get("valueInputOption"))
        insert = _query_enum("insertDataOption", values_api.INSERT_OPTIONS, "OVERWRITE", "InsertDataOption")
        include, render, dates = self._response_options()
        body = Obj(_body(), "")
        major = body.enum("majorDimension", values_api.DIMENSIONS, "Dimension", "ROWS") or "ROWS"
        result = values_api.append(
            self.store,
            book,
            range_text,
            body.raw("values"),
            major,
            user_entered,
            insert == "INSERT_ROWS",
            include,
            render,
            dates,
        )
        self.store.changed(book.spreadsheet_id)
        return json_response(_fields(result))

    def clear(self, book: Spreadsheet, range_text: str) -> Response:
        cleared = values_api.clear(book, range_text)
        self.store.changed(book.spreadsheet_id)
        return json_response(_fields({"spreadsheetId": book.spreadsheet_id, "clearedRange": cleared}))

    def values_batch_update(self, book: Spreadsheet) -> Response:
        body = Obj(_body(), "")
        user_entered = self._input_option(body.text("valueInputOption"))
        include, render, dates = self._response_options(body)
        data = body.objs("data")
        saved = book.to_data() if len(data) > 1 else None  # one update validates before writing
        responses = []
        tally: values_api.Tally = set()
        try:
            for index, item in enumerate(data):
                major = item.enum("majorDimension", values_api.DIMENSIONS, "Dimension", "ROWS") or "ROWS"
                range_text = item.text("range")
                if not range_text:
                    raise invalid(f"Invalid data[{index}]: range is required")
                responses.append(
                    values_api.update(
                        self.store,
                        book,
                        range_text,
                        item.raw("values"),
                        major,
                        user_entered,
                        include,
                        render,
                        dates,
                        path=f"data[{index}].values",
                        tally=tally,
                    )
                )
        except SheetsError:
            if saved is not None:
                _restore(book, saved)
            raise
        out: dict[str, Any] = {"spreadsheetId": book.spreadsheet_id, **values_api.batch_totals(tally)}
        out["responses"] = responses
        if responses:
            self.store.changed(book.spreadsheet_id)
        return json_response(_fields(out))

    def batch_clear(self, book: Spreadsheet) -> Response:
        ranges = Obj(_body(), "").array("ranges")
        for text in ranges:  # all ranges must resolve before anything is cleared
            if not isinstance(text, str):
                raise invalid(f"Unable to parse range: {text}")
            read_rect(book, text)
        cleared = [values_api.clear(book, text) for text in ranges]
        if cleared:
            self.store.changed(book.spreadsheet_id)
        return json_response(_fields({"spreadsheetId": book.spreadsheet_id, "clearedRanges": cleared}))

    def copy_to(self, book: Spreadsheet, sheet_text: str) -> Response:
        sheet_id = parse_int(sheet_text)
        source = book.sheet_by_id(sheet_id) if sheet_id is not None else None
        if source is None:
            raise not_found()
        body = Obj(_body(), "")
        target_id = body.text("destinationSpreadsheetId")
        if not target_id:
            raise invalid("destinationSpreadsheetId is required")
        target = self.spreadsheet(target_id)
        ctx = batch.Context(self.store, target)
        batch._check_capacity(ctx, source.cell_count)
        data = source.to_data()
        data.update(sheetId=target.new_sheet_id(), title=target.unique_title(f"Copy of {source.title}"), hidden=False)
        copied = Sheet.from_data(data)
        target.sheets.append(copied)
        target.touch()
        self.store.changed(target.spreadsheet_id)
        return json_response(_fields(sheet_properties(target, copied)))

    # ------------------------------------------------------------------ drive
    def files(self) -> Response:
        if request.method == "POST":
            entry = drive.create_file(self.store, _body())
            self.store.changed(entry.file_id)
            return json_response(
                drive.shaped(drive.file_json(self.store, entry), request.args.get("fields"), drive.DEFAULT_FILE_FIELDS)
            )
        page_size = parse_int(request.args.get("pageSize", "100") or "100")
        if page_size is None or not 1 <= page_size <= 1000:
            raise drive.bad_request("Invalid Value", "pageSize", "invalid")
        return json_response(
            drive.list_files(
                self.store,
                request.args.get("q", ""),
                page_size,
                request.args.get("pageToken", ""),
                request.args.get("orderBy", ""),
                request.args.get("fields"),
            )
        )

    def file_routes(self, rest: str) -> Response:
        parts = rest.split("/")
        entry = self.store.file(parts[0])
        method = request.method
        fields = request.args.get("fields")
        if len(parts) == 1:
            if method == "GET":
                if request.args.get("alt") == "media":
                    raise DriveError(
                        403,
                        "Only files with binary content can be downloaded. Use Export with Docs Editors files.",
                        "fileNotDownloadable",
                        "alt",
                    )
                return json_response(
                    drive.shaped(drive.file_json(self.store, entry), fields, drive.DEFAULT_FILE_FIELDS)
                )
            if method == "PATCH":
                drive.update_file(self.store, entry, _body())
                self.store.changed(entry.file_id)
                return json_response(
                    drive.shaped(drive.file_json(self.store, entry), fields, drive.DEFAULT_FILE_FIELDS)
                )
            if method == "DELETE":
                self.store.delete_file(entry.file_id)
                self.store.revision += 1
                return Response(status=204)
        elif parts[1:] == ["copy"] and method == "POST":
            spec = Obj(_body(), "")
            parents = [p for p in spec.array("parents") if isinstance(p, str)] if spec.has("parents") else None
            copied = self.store.copy_file(entry.file_id, spec.text("name"), parents)
            self.store.changed(copied.file_id)
            return json_response(drive.shaped(drive.file_json(self.store, copied), fields, drive.DEFAULT_FILE_FIELDS))
        elif parts[1:] == ["export"] and method == "GET":
            mime = request.args.get("mimeType")
            if not mime:
                raise drive.bad_request("Required parameter: mimeType", "mimeType", "required")
            data = drive.export_file(self.store, entry, mime)
            return Response(
                data, status=200, content_type=f"{mime}; charset=utf-8" if mime.startswith("text/") else mime
            )
        elif parts[1:2] == ["permissions"]:
            return self.permissions(entry, parts[2] if len(parts) > 2 else None)
        elif parts[1:] == ["comments"]:
            if method == "GET":
                return json_response(_fields({"kind": "drive#commentList", "comments": entry.comments}))
            if method == "POST":
                if not fields:
                    raise drive.bad_request("The 'fields' parameter is required for this method.", "fields", "required")
                comment = drive.add_comment(self.store, entry, _body())
                self.store.changed(entry.file_id)
                return json_response(project(comment, parse_mask(fields)))
        raise _url_not_found()

    def permissions(self, entry: drive.DriveFile, permission: str | None) -> Response:
        method, fields = request.method, request.args.get("fields")
        transfer = _query_bool("transferOwnership")
        default = ("kind", "id", "type", "role")
        if permission is None:
            if method == "GET":
                out = {"kind": "drive#permissionList", "permissions": entry.permissions}
                return json_response(
                    project(out, parse_mask(fields))
                    if fields
                    else {
                        "kind": out["kind"],
                        "permissions": [drive.shaped(p, None, default) for p in entry.permissions],
                    }
                )
            if method == "POST":
                created = drive.create_permission(self.store, entry, _body(), transfer)
                self.store.changed(entry.file_id)
                return json_response(drive.shaped(created, fields, default))
        else:
            if method == "GET":
                return json_response(drive.shaped(drive.find_permission(entry, permission), fields, default))
            if method == "PATCH":
                updated = drive.update_permission(entry, permission, _body(), transfer)
                self.store.changed(entry.file_id)
                return json_response(drive.shaped(updated, fields, default))
            if method == "DELETE":
                drive.delete_permission(entry, permission)
                self.store.changed(entry.file_id)
                return Response(status=204)
        raise _url_not_found()

    def upload(self, file_id: str) -> Response:
        entry = self.store.file(file_id)
        if entry.mime_type != SPREADSHEET_MIME:
            raise drive.bad_request("Only spreadsheets can be replaced by a CSV upload here.")
        drive.import_csv(self.store, entry, request.get_data(cache=True))
        self.store.changed(entry.file_id)
        return json_response(drive_v2.file_v2_json(self.store, entry))


def _restore(book: Spreadsheet, saved: dict[str, Any]) -> None:
    book.__dict__.update(Spreadsheet.from_data(saved).__dict__)
    book.touch()


def _url_not_found() -> SheetsError:
    return SheetsError(404, f"The requested URL {request.path} was not found on this server.")


def create_app(store: SheetsStore | None = None, max_body_bytes: int = MAX_BODY_BYTES) -> Flask:
    """One Flask app answering for both sheets.googleapis.com and www.googleapis.com paths. A request
    that names a store under ``STATE_KEY`` (``with_state``) works on that store instead of ``store``,
    so one app serves the stores of every env in a process."""
    app = new_app(__name__)
    app.config["MAX_CONTENT_LENGTH"] = max_body_bytes

    @app.errorhandler(SheetsError)
    def api_error(error: SheetsError) -> Response:
        return json_response(error.body(), error.code)

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> Response:
        if isinstance(error, RequestEntityTooLarge):
            failure = invalid(f"Request payload size exceeds the limit: {max_body_bytes} bytes.")
        else:
            failure = SheetsError(
                404 if error.code in (404, 405) else error.code or 400,
                f"The requested URL {request.path} was not found on this server."
                if error.code in (404, 405)
                else error.description or "Bad request",
            )
        return json_response(failure.body(), failure.code)

    @app.errorhandler(Exception)
    def internal_error(error: Exception) -> Response:
        app.config["SHEETS_LAST_ERROR"] = f"{type(error).__name__}: {error}"
        return json_response(
            {"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}}, 500
        )

    def locked(handler: Callable[..., Response]) -> Callable[..., Response]:
        def run(*args: Any, **kwargs: Any) -> Response:
            length = request.content_length
            if length is not None and length > max_body_bytes:
                raise RequestEntityTooLarge()
            current = request.environ.get(STATE_KEY, store)
            if current is None:
                raise RuntimeError("no store to answer from")
            with current.lock:
                if work.active():  # the caller's budget (an env's step) holds
                    return handler(_Api(current), *args, **kwargs)
                with work.budget(work.PER_REQUEST):
                    return handler(_Api(current), *args, **kwargs)

        run.__name__ = handler.__name__
        return run

    app.add_url_rule("/v4/spreadsheets", "create_spreadsheet", locked(_Api.create_spreadsheet), methods=["POST"])
    app.add_url_rule("/v4/spreadsheets/<path:rest>", "sheets", locked(_Api.sheets), methods=ALL_METHODS)
    app.add_url_rule("/drive/v3/files", "files", locked(_Api.files), methods=["GET", "POST"])
    app.add_url_rule("/drive/v3/files/<path:rest>", "file_routes", locked(_Api.file_routes), methods=ALL_METHODS)
    app.add_url_rule("/upload/drive/v2/files/<file_id>", "upload", locked(_Api.upload), methods=["PUT", "POST"])
    return app
