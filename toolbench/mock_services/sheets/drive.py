"""Drive v3 (and the v2 upload gspread's ``import_csv`` uses): files, permissions, comments, export.

``files.list`` understands the query language gspread and most scripts send
(``mimeType="..." and name = "..."``, ``'folder' in parents`` and gspread's ``parents in "folder"``,
``trashed = false``, ``name contains 'x'``, ``not``, ``or``, parentheses). Without a ``fields``
parameter a file is ``{kind, id, name, mimeType}``, as in the real API; without ``orderBy`` the most
recently modified file comes first, as Drive lists them.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from typing import Any

from toolbench.mock_services.sheets import work
from toolbench.mock_services.sheets.body import Obj
from toolbench.mock_services.sheets.errors import DriveError
from toolbench.mock_services.sheets.fields import parse_mask, project
from toolbench.mock_services.sheets.formula import calculator
from toolbench.mock_services.sheets.store import (
    FOLDER_MIME,
    SPREADSHEET_MIME,
    DriveFile,
    SheetsStore,
    permission_id,
)
from toolbench.mock_services.sheets.values import formatted

DEFAULT_FILE_FIELDS = ("kind", "id", "name", "mimeType")
PERMISSION_TYPES = ("user", "group", "domain", "anyone")
PERMISSION_ROLES = ("owner", "organizer", "fileOrganizer", "writer", "commenter", "reader")
EXPORT_TYPES = {"text/csv": ",", "text/tab-separated-values": "\t"}


def bad_request(message: str, location: str | None = None, reason: str = "badRequest") -> DriveError:
    return DriveError(400, message, reason, location)


def file_json(store: SheetsStore, entry: DriveFile) -> dict[str, Any]:
    """The full File resource (what ``fields=*`` returns)."""
    owner = store.owner_permission()
    out: dict[str, Any] = {
        "kind": "drive#file",
        "id": entry.file_id,
        "name": entry.name,
        "mimeType": entry.mime_type,
        "starred": entry.starred,
        "trashed": entry.trashed,
        "parents": list(entry.parents),
        "createdTime": entry.created,
        "modifiedTime": entry.modified,
        "owners": [
            {
                "kind": "drive#user",
                "displayName": owner["displayName"],
                "me": True,
                "permissionId": owner["id"],
                "emailAddress": owner["emailAddress"],
            }
        ],
        "ownedByMe": True,
        "shared": len(entry.permissions) > 1,
        "version": str(store.revision + 1),
    }
    if entry.description:
        out["description"] = entry.description
    if entry.mime_type == SPREADSHEET_MIME:
        out["webViewLink"] = f"https://docs.google.com/spreadsheets/d/{entry.file_id}/edit?usp=drivesdk"
    return out


def shaped(value: dict[str, Any], fields: str | None, default: tuple[str, ...]) -> dict[str, Any]:
    """A resource trimmed by ``fields``, or to its default fields when none are asked for."""
    if fields:
        return project(value, parse_mask(fields))
    return {key: value[key] for key in default if key in value}


# ---------------------------------------------------------------------------------- query language
_TOKEN = re.compile(
    r"""\s*(?:(?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|(?P<op><=|>=|!=|=|<|>|\(|\))|(?P<word>[A-Za-z_.]+|-?\d+(?:\.\d+)?))"""
)
Predicate = Callable[[SheetsStore, DriveFile], bool]


def _tokens(query: str) -> list[tuple[str, str]]:
    out, position = [], 0
    while position < len(query):
        if query[position:].strip() == "":
            break
        match = _TOKEN.match(query, position)
        if not match or match.end() == position:
            raise bad_request("Invalid Value", "q", "invalid")
        position = match.end()
        if match.group("str") is not None:
            out.append(("str", re.sub(r"\\(.)", r"\1", match.group("str")[1:-1])))
        elif match.group("op") is not None:
            out.append(("op", match.group("op")))
        else:
            out.append(("word", match.group("word")))
    return out


class _Query:
    def __init__(self, query: str):
        self.tokens = _tokens(query)
        self.position = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise bad_request("Invalid Value", "q", "invalid")
        self.position += 1
        return token

    def word(self, token: tuple[str, str] | None, *words: str) -> bool:
        return token is not None and token[0] == "word" and token[1].lower() in words

    def parse(self) -> Predicate:
        predicate = self.disjunction()
        if self.peek() is not None:
            raise bad_request("Invalid Value", "q", "invalid")
        return predicate

    def disjunction(self) -> Predicate:
        parts = [self.conjunction()]
        while self.word(self.peek(), "or"):
            self.take()
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else (lambda s, f: any(p(s, f) for p in parts))

    def conjunction(self) -> Predicate:
        parts = [self.unary()]
        while self.word(self.peek(), "and"):
            self.take()
            parts.append(self.unary())
        return parts[0] if len(parts) == 1 else (lambda s, f: all(p(s, f) for p in parts))

    def unary(self) -> Predicate:
        token = self.peek()
        if self.word(token, "not"):
            self.take()
            inner = self.unary()
            return lambda s, f: not inner(s, f)
        if token == ("op", "("):
            self.take()
            inner = self.disjunction()
            if self.take() != ("op", ")"):
                raise bad_request("Invalid Value", "q", "invalid")
            return inner
        return self.comparison()

    def comparison(self) -> Predicate:
        left = self.take()
        operator = self.take()
        right = self.take()
        if operator == ("word", "in"):
            if left[0] == "str" and right[0] == "word":
                return _membership(right[1], left[1])
            if left[0] == "word" and right[0] == "str":  # gspread sends: parents in "folder"
                return _membership(left[1], right[1])
            raise bad_request("Invalid Value", "q", "invalid")
        op = operator[1].lower()
        if left[0] != "word" or (operator[0] != "op" and op != "contains"):
            raise bad_request("Invalid Value", "q", "invalid")
        return _field_test(left[1], op, right)


def _membership(field: str, value: str) -> Predicate:
    field = field.lower()
    if field == "parents":
        return lambda s, f: value in f.parents
    if field in ("owners", "writers", "readers"):
        roles = {"owners": ("owner",), "writers": ("owner", "writer"), "readers": PERMISSION_ROLES}[field]
        return lambda s, f: any(p.get("emailAddress") == value and p["role"] in roles for p in f.permissions)
    raise bad_request("Invalid Value", "q", "invalid")


def _field_test(field: str, op: str, right: tuple[str, str]) -> Predicate:
    getters: dict[str, Callable[[DriveFile], Any]] = {
        "name": lambda f: f.name,
        "title": lambda f: f.name,
        "mimetype": lambda f: f.mime_type,
        "trashed": lambda f: f.trashed,
        "starred": lambda f: f.starred,
        "modifiedtime": lambda f: f.modified,
        "createdtime": lambda f: f.created,
        "fulltext": lambda f: f"{f.name} {f.description or ''}",
    }
    getter = getters.get(field.lower())
    if getter is None:
        raise bad_request("Invalid Value", "q", "invalid")
    if field.lower() in ("trashed", "starred"):
        if right[0] != "word" or right[1].lower() not in ("true", "false"):
            raise bad_request("Invalid Value", "q", "invalid")
        wanted: Any = right[1].lower() == "true"
    else:
        if right[0] != "str":
            raise bad_request("Invalid Value", "q", "invalid")
        wanted = right[1]
    tests: dict[str, Callable[[Any, Any], bool]] = {
        "=": lambda a, b: a == b,
        "!=": lambda a, b: a != b,
        "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b,
        ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b,
        "contains": lambda a, b: str(b).casefold() in str(a).casefold(),
    }
    test = tests.get(op)
    if test is None:
        raise bad_request("Invalid Value", "q", "invalid")
    return lambda s, f: test(getter(f), wanted)


def parse_query(query: str) -> Predicate:
    if not query.strip():
        return lambda s, f: True
    return _Query(query).parse()


# ---------------------------------------------------------------------------------- files
MAX_QUERY_CHARS = 10_000


def list_files(
    store: SheetsStore, query: str, page_size: int, page_token: str, order_by: str, fields: str | None
) -> dict[str, Any]:
    if len(query) > MAX_QUERY_CHARS:
        raise DriveError(400, f"Invalid Value: the query is longer than {MAX_QUERY_CHARS} characters", "invalid", "q")
    predicate = parse_query(query)
    work.charge(len(store.files) * max(1, len(query) // 20))  # each file against each term
    found = [entry for entry in store.files.values() if predicate(store, entry)]
    # With no orderBy, Drive lists the most recently modified first (newest created first on a tie).
    found.reverse()
    found.sort(key=lambda entry: entry.modified, reverse=True)
    for key in reversed([part.strip() for part in order_by.split(",") if part.strip()]):
        name, _, direction = key.partition(" ")
        attribute = {
            "name": "name",
            "name_natural": "name",
            "modifiedtime": "modified",
            "createdtime": "created",
            "folder": "mime_type",
        }.get(name.lower())
        if attribute is None:
            raise bad_request("Invalid Value", "orderBy", "invalid")

        def sort_text(entry: DriveFile, attribute: str = attribute) -> str:
            return str(getattr(entry, attribute)).casefold()

        found.sort(key=sort_text, reverse=direction.lower() == "desc")
    offset = int(page_token) if page_token.isdigit() else 0
    page = found[offset : offset + page_size]
    out: dict[str, Any] = {"kind": "drive#fileList", "incompleteSearch": False}
    if offset + page_size < len(found):
        out["nextPageToken"] = str(offset + page_size)
    out["files"] = [file_json(store, entry) for entry in page]
    if fields:
        return project(out, parse_mask(fields))
    out["files"] = [shaped(item, None, DEFAULT_FILE_FIELDS) for item in out["files"]]
    return out


def create_file(store: SheetsStore, body: Any) -> DriveFile:
    spec = Obj(body, "")
    name = spec.text("name") or spec.text("title") or "Untitled"
    mime = spec.text("mimeType") or "application/octet-stream"
    parents = [p for p in spec.array("parents") if isinstance(p, str)]
    for parent in parents:
        if parent not in store.files or store.files[parent].mime_type != FOLDER_MIME:
            raise DriveError(404, f"File not found: {parent}.", "notFound", "fileId")
    if mime == SPREADSHEET_MIME:
        entry = store.file(store.create_spreadsheet(name, parents).spreadsheet_id)
    else:
        entry = store.add_file(name, mime, parents)
    entry.description = spec.text("description")
    entry.starred = spec.flag("starred")
    return entry


def update_file(store: SheetsStore, entry: DriveFile, body: Any) -> None:
    spec = Obj(body, "")
    if spec.has("name"):
        name = spec.text("name") or ""
        if not name:
            raise bad_request("The file name cannot be empty.", "name", "invalid")
        store.rename(entry.file_id, name)
    for key in ("trashed", "starred"):
        if spec.has(key):
            setattr(entry, key, spec.flag(key))
    if spec.has("description"):
        entry.description = spec.text("description")


def export_file(store: SheetsStore, entry: DriveFile, mime_type: str) -> bytes:
    """CSV or TSV of the first sheet, formatted values, as Drive exports a spreadsheet: rows end
    with CRLF except the last, which ends with nothing."""
    if entry.mime_type != SPREADSHEET_MIME:
        raise DriveError(403, "Export only supports Docs Editors files.", "fileNotExportable")
    delimiter = EXPORT_TYPES.get(mime_type)
    if delimiter is None:
        raise bad_request(
            f"Export to '{mime_type}' is not supported by this emulator (use text/csv or text/tab-separated-values).",
            "mimeType",
        )
    book = store.spreadsheet(entry.file_id)
    sheet = book.sheets[0]
    calc = calculator(book, store.now_serial())
    rows, cols = calc.extent(sheet)
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\r\n")
    for row in range(rows):
        line = [formatted(calc.value(sheet, row, col), calc.number_format(sheet, row, col)) for col in range(cols)]
        writer.writerow(line)
    return buffer.getvalue().removesuffix("\r\n").encode("utf-8")


def import_csv(store: SheetsStore, entry: DriveFile, data: bytes) -> None:
    """Replace the spreadsheet with the CSV, as Drive's conversion does: other sheets go, and the
    first is a new sheet (a new id, named after the file) holding the rows (as typed text)."""
    from toolbench.mock_services.sheets.celldata import apply_entered, charge_typed_grid
    from toolbench.mock_services.sheets.values import parse_user_entered

    book = store.spreadsheet(entry.file_id)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise bad_request("The uploaded CSV is not valid UTF-8.") from None
    rows = list(csv.reader(io.StringIO(text)))
    width = max((len(row) for row in rows), default=0)
    height = len(rows)
    sheet = book.sheets[0]
    if max(height, 1000) * max(width, 26) > store.max_cells:
        raise DriveError(400, "The uploaded CSV is larger than the workbook limit.", "badRequest")
    charge_typed_grid(rows, formulas_possible=True)
    book.sheets = [sheet]
    sheet.sheet_id = book.new_sheet_id()
    # A sheet name has at most 100 characters and is never blank (the API refuses blank ones everywhere).
    sheet.title = entry.name[:100] if entry.name[:100].strip() else "Sheet1"
    sheet.row_meta, sheet.column_meta, sheet.row_groups, sheet.column_groups = {}, {}, [], []
    sheet.hidden = sheet.hide_gridlines = sheet.right_to_left = False
    sheet.row_group_control_after = sheet.column_group_control_after = False
    sheet.tab_color = None
    book.named_ranges = []
    sheet.cells, sheet.merges, sheet.basic_filter = {}, [], None
    sheet.protected_ranges, sheet.conditional_formats = [], []
    sheet.row_count, sheet.column_count = max(height, 1000), max(width, 26)
    sheet.frozen_rows = sheet.frozen_columns = 0
    for r, row in enumerate(rows):
        for c, item in enumerate(row):
            if item != "":
                apply_entered(sheet.ensure(r, c), parse_user_entered(item))
                sheet.prune(r, c)
    book.touch()


# ---------------------------------------------------------------------------------- permissions and comments
def create_permission(store: SheetsStore, entry: DriveFile, body: Any, transfer: bool) -> dict[str, Any]:
    spec = Obj(body, "")
    kind = spec.text("type")
    role = spec.text("role")
    if not kind:
        raise bad_request("The permission type field is required.", "permission.type", "required")
    if kind not in PERMISSION_TYPES:
        raise bad_request("The permission type is not valid.", "permission.type", "invalid")
    if not role:
        raise bad_request("The permission role field is required.", "permission.role", "required")
    if role not in PERMISSION_ROLES:
        raise bad_request("The permission role is not valid.", "permission.role", "invalid")
    if role == "owner" and not transfer:
        raise DriveError(
            403,
            "The transferOwnership parameter must be enabled when the permission role is 'owner'.",
            "forbidden",
        )
    who = spec.text("emailAddress") if kind in ("user", "group") else spec.text("domain") if kind == "domain" else None
    if kind in ("user", "group", "domain") and not who:
        field = "emailAddress" if kind != "domain" else "domain"
        raise bad_request(f"The permission {field} field is required.", f"permission.{field}", "required")
    ident = "anyoneWithLink" if kind == "anyone" and spec.flag("withLink") else permission_id(kind, who)
    permission: dict[str, Any] = {"kind": "drive#permission", "id": ident, "type": kind, "role": role}
    if kind in ("user", "group"):
        permission.update(emailAddress=who, displayName=str(who).split("@")[0])
    elif kind == "domain":
        permission.update(domain=who, displayName=who)
    if kind == "anyone":
        permission["allowFileDiscovery"] = not spec.flag("withLink")
    permission.update(deleted=False, pendingOwner=False)
    existing = next((p for p in entry.permissions if p["id"] == ident), None)
    if existing is not None:
        existing.update(role=role)
        return existing
    if role == "owner":
        for item in entry.permissions:
            if item["role"] == "owner":
                item["role"] = "writer"
    entry.permissions.append(permission)
    return permission


def find_permission(entry: DriveFile, permission: str) -> dict[str, Any]:
    found = next((p for p in entry.permissions if p["id"] == permission), None)
    if found is None:
        raise DriveError(404, f"Permission not found: {permission}.", "notFound", "permissionId")
    return found


def update_permission(entry: DriveFile, permission: str, body: Any, transfer: bool) -> dict[str, Any]:
    found = find_permission(entry, permission)
    spec = Obj(body, "")
    role = spec.text("role")
    if role is not None:
        if role not in PERMISSION_ROLES:
            raise bad_request("The permission role is not valid.", "permission.role", "invalid")
        if role == "owner":
            if not transfer:
                raise DriveError(
                    403,
                    "The transferOwnership parameter must be enabled when the permission role is 'owner'.",
                    "forbidden",
                )
            for item in entry.permissions:
                if item["role"] == "owner":
                    item["role"] = "writer"
            found["pendingOwner"] = False
        found["role"] = role
    if spec.has("pendingOwner"):
        found["pendingOwner"] = spec.flag("pendingOwner")
    return found


def delete_permission(entry: DriveFile, permission: str) -> None:
    found = find_permission(entry, permission)
    if found["role"] == "owner":
        raise DriveError(403, "The owner of a file cannot be removed.", "cannotRemoveOwner")
    entry.permissions.remove(found)


def add_comment(store: SheetsStore, entry: DriveFile, body: Any) -> dict[str, Any]:
    spec = Obj(body, "")
    content = spec.text("content")
    if not content:
        raise bad_request("The comment content is required.", "content", "required")
    now = store.now()
    comment: dict[str, Any] = {
        "kind": "drive#comment",
        "id": f"AAAA{len(entry.comments) + 1:08d}",
        "content": content,
        "htmlContent": content,
        "createdTime": now,
        "modifiedTime": now,
        "author": {"kind": "drive#user", "displayName": store.owner_email.split("@")[0], "me": True},
        "deleted": False,
        "resolved": False,
    }
    if spec.text("anchor"):
        comment["anchor"] = spec.text("anchor")
    entry.comments.append(comment)
    return comment
