"""Reading gspread's VCR cassettes, and what the account held before each one was recorded.

A cassette is vcrpy's JSON: ``{"interactions": [{"request": {method, uri, body, headers},
"response": {status: {code}, headers, body: {string}}}]}``. Requests and responses are kept as
recorded; nothing here is written anywhere.

Some cassettes open spreadsheets that their own requests never created: the account's leftovers
from earlier runs (``openall`` lists and opens every one of them). ``preexisting_files`` finds
them (ids named in a request or listed by Drive before any request of the cassette created them,
and that Google then served), with what the recording shows of them, so the replay can start
from an account that holds them too.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

#: A Drive file id as Google makes them (44 URL-safe characters, in practice starting with 1).
_FILE_ID = re.compile(r"(?<![A-Za-z0-9_-])1[A-Za-z0-9_-]{32,}(?![A-Za-z0-9_-])")


@dataclass(frozen=True)
class Interaction:
    method: str
    uri: str
    body: str | None
    headers: dict[str, str]
    status: int
    response_body: str
    response_headers: dict[str, str]

    def response_json(self) -> Any:
        """The response's JSON, or None when it is empty or not JSON."""
        try:
            return json.loads(self.response_body) if self.response_body.strip() else None
        except ValueError:
            return None

    @property
    def path(self) -> str:
        return urlsplit(self.uri).path

    @property
    def creates_file(self) -> bool:
        """Drive files.create or files.copy: the response's ``id`` is a new file."""
        return self.method == "POST" and (self.path == "/drive/v3/files" or self.path.endswith("/copy"))


def _first(values: Any) -> str:
    if isinstance(values, list):
        return str(values[0]) if values else ""
    return str(values)


def load_cassette(path: Path) -> list[Interaction]:
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for item in data.get("interactions", []):
        request, response = item["request"], item["response"]
        body = response.get("body") or {}
        out.append(
            Interaction(
                method=request["method"],
                uri=request["uri"],
                body=request.get("body"),
                headers={k: _first(v) for k, v in (request.get("headers") or {}).items()},
                status=int(response["status"]["code"]),
                response_body=body.get("string", "") if isinstance(body, dict) else str(body or ""),
                response_headers={k: _first(v) for k, v in (response.get("headers") or {}).items()},
            )
        )
    return out


@dataclass
class ExistingFile:
    """A spreadsheet the account held before the cassette: what the recording shows of it."""

    file_id: str
    first_use: int  # the index of the first interaction that needs it
    name: str = "Untitled spreadsheet"
    created: str = ""
    modified: str = ""
    sheets: list[dict[str, Any]] = field(default_factory=list)  # SheetProperties from a spreadsheets.get
    locale: str | None = None
    time_zone: str | None = None


def preexisting_files(interactions: list[Interaction]) -> list[ExistingFile]:
    """The spreadsheets a cassette uses without creating them, in the order it first needs them.

    A cassette recorded twice holds two runs, and the account gained files between them: each
    file is needed from the first interaction that names or lists it, not before."""
    created: set[str] = set()
    found: dict[str, ExistingFile] = {}
    for index, item in enumerate(interactions):
        body = item.response_json()
        if item.status == 200:
            for file_id in _FILE_ID.findall(item.uri):
                if file_id not in created:
                    found.setdefault(file_id, ExistingFile(file_id, index))
        if isinstance(body, dict) and item.path == "/drive/v3/files" and item.method == "GET":
            for entry in body.get("files", []):
                if isinstance(entry, dict) and entry.get("id") and entry["id"] not in created:
                    known = found.setdefault(entry["id"], ExistingFile(entry["id"], index))
                    known.name = entry.get("name", known.name)
                    known.created = entry.get("createdTime", known.created)
                    known.modified = entry.get("modifiedTime", known.modified)
        if isinstance(body, dict) and body.get("spreadsheetId") in found and "sheets" in body:
            known = found[body["spreadsheetId"]]
            if not known.sheets:
                known.sheets = [s.get("properties", {}) for s in body["sheets"] if isinstance(s, dict)]
                properties = body.get("properties", {})
                known.name = properties.get("title", known.name)
                known.locale = properties.get("locale")
                known.time_zone = properties.get("timeZone")
        if item.creates_file and isinstance(body, dict) and isinstance(body.get("id"), str):
            created.add(body["id"])
    return sorted(found.values(), key=lambda f: (f.first_use, f.created))
