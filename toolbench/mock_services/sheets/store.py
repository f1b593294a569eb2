"""The store: Drive files (with their metadata) and the spreadsheets behind them.

Everything is deterministic: ids come from a seed and a counter through a stable hash, times from
a fixed clock that advances one second per change (so ``modifiedTime`` moves, reproducibly), never
from the wall clock. ``snapshot()`` is plain data (dicts, lists, str, numbers) that pickles to the
same bytes in every process; ``restore()`` and ``SheetsStore.from_snapshot()`` read it back.
"""

from __future__ import annotations

import base64
import copy
import datetime as dt
import hashlib
import threading
from dataclasses import dataclass, field
from typing import Any

from toolbench.mock_services.sheets.errors import file_not_found, not_found, permission_denied
from toolbench.mock_services.sheets.model import Sheet, Spreadsheet
from toolbench.mock_services.sheets.numfmt import serial_from_datetime

SPREADSHEET_MIME = "application/vnd.google-apps.spreadsheet"
FOLDER_MIME = "application/vnd.google-apps.folder"
DEFAULT_CLOCK = "2024-01-15T09:00:00.000Z"
DEFAULT_OWNER = "agent@toolbench-gym.local"
#: The product's cap is 10,000,000 cells per workbook; ours is smaller so that a hostile
#: "write a huge sheet" ends with the same 400 error quickly.
DEFAULT_MAX_CELLS = 200_000
SNAPSHOT_FORMAT = 1


def _parse_clock(text: str) -> dt.datetime:
    return dt.datetime.strptime(text.replace("Z", "").split(".")[0], "%Y-%m-%dT%H:%M:%S")


def rfc3339(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


@dataclass
class DriveFile:
    """A Drive file's metadata; spreadsheets also have an entry in ``SheetsStore.spreadsheets``."""

    file_id: str
    name: str
    mime_type: str
    created: str
    modified: str
    parents: list[str] = field(default_factory=list)
    trashed: bool = False
    starred: bool = False
    description: str | None = None
    permissions: list[dict[str, Any]] = field(default_factory=list)
    comments: list[dict[str, Any]] = field(default_factory=list)

    def to_data(self) -> dict[str, Any]:
        return {
            "id": self.file_id,
            "name": self.name,
            "mimeType": self.mime_type,
            "createdTime": self.created,
            "modifiedTime": self.modified,
            "parents": list(self.parents),
            "trashed": self.trashed,
            "starred": self.starred,
            "description": self.description,
            "permissions": copy.deepcopy(self.permissions),
            "comments": copy.deepcopy(self.comments),
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> DriveFile:
        return cls(
            file_id=data["id"],
            name=data["name"],
            mime_type=data["mimeType"],
            created=data["createdTime"],
            modified=data["modifiedTime"],
            parents=list(data.get("parents", [])),
            trashed=data.get("trashed", False),
            starred=data.get("starred", False),
            description=data.get("description"),
            permissions=copy.deepcopy(data.get("permissions", [])),
            comments=copy.deepcopy(data.get("comments", [])),
        )


class SheetsStore:
    """All files and spreadsheets one emulator serves. Guard access with ``lock`` when shared by threads."""

    def __init__(
        self,
        seed: int | str = 0,
        clock: str = DEFAULT_CLOCK,
        max_cells: int = DEFAULT_MAX_CELLS,
        owner_email: str = DEFAULT_OWNER,
        time_zone: str = "Etc/GMT",
    ):
        self.seed = seed
        self.clock = clock
        self.max_cells = max_cells
        self.owner_email = owner_email
        self.time_zone = time_zone
        self.counter = 0
        self.revision = 0
        self.files: dict[str, DriveFile] = {}
        self.spreadsheets: dict[str, Spreadsheet] = {}
        #: Spreadsheets that exist but belong to someone who never shared them with the caller
        #: (id -> owner's address): Sheets answers 403 for them, Drive 404, and no listing shows them.
        self.foreign: dict[str, str] = {}
        self.lock = threading.RLock()
        self._base = _parse_clock(clock)

    # ------------------------------------------------------------------ clock and ids
    def now(self) -> str:
        """The store's current time: the fixed clock plus one second per change so far."""
        return rfc3339(self._base + dt.timedelta(seconds=self.revision))

    def now_serial(self) -> float:
        """The clock as a Sheets serial number, for TODAY() and NOW()."""
        return serial_from_datetime(self._base)

    def new_file_id(self) -> str:
        """A 44-character id shaped like Drive's (URL-safe base64), from the seed and a counter."""
        self.counter += 1
        digest = hashlib.blake2b(f"{self.seed}\x1f{self.counter}".encode(), digest_size=33).digest()
        return "1" + base64.urlsafe_b64encode(digest).decode("ascii")[:43]

    def changed(self, file_id: str) -> None:
        """Note an edit of ``file_id``: the clock ticks and the file's modifiedTime follows."""
        self.revision += 1
        found = self.files.get(file_id)
        if found is not None:
            found.modified = self.now()

    # ------------------------------------------------------------------ files and spreadsheets
    def file(self, file_id: str) -> DriveFile:
        found = self.files.get(file_id)
        if found is None:
            raise file_not_found(file_id)
        return found

    def spreadsheet(self, spreadsheet_id: str) -> Spreadsheet:
        found = self.spreadsheets.get(spreadsheet_id)
        if found is None:
            raise permission_denied() if spreadsheet_id in self.foreign else not_found()
        return found

    def create_foreign_spreadsheet(self, spreadsheet_id: str, owner_email: str) -> None:
        """Note a spreadsheet owned by ``owner_email`` and not shared with the caller. The caller
        sees only that it exists (Sheets refuses it with 403, as Google does), so nothing else of it is kept."""
        if spreadsheet_id in self.files:
            raise ValueError(f"{spreadsheet_id} is already one of the caller's files")
        self.foreign[spreadsheet_id] = owner_email

    def owner_permission(self) -> dict[str, Any]:
        return {
            "kind": "drive#permission",
            "id": permission_id("user", self.owner_email),
            "type": "user",
            "emailAddress": self.owner_email,
            "role": "owner",
            "displayName": self.owner_email.split("@")[0],
            "deleted": False,
            "pendingOwner": False,
        }

    def add_file(self, name: str, mime_type: str, parents: list[str] | None = None) -> DriveFile:
        created = self.now()
        entry = DriveFile(
            self.new_file_id(),
            name,
            mime_type,
            created,
            created,
            list(parents or []),
            permissions=[self.owner_permission()],
        )
        self.files[entry.file_id] = entry
        return entry

    def create_spreadsheet(
        self, title: str = "Untitled spreadsheet", parents: list[str] | None = None, first_sheet: bool = True
    ) -> Spreadsheet:
        """A new spreadsheet (and its Drive file) with one empty 1000x26 "Sheet1" whose sheetId is 0."""
        entry = self.add_file(title, SPREADSHEET_MIME, parents)
        book = Spreadsheet(entry.file_id, title, time_zone=self.time_zone)
        if first_sheet:
            book.sheets.append(Sheet(0, "Sheet1"))
        self.spreadsheets[entry.file_id] = book
        return book

    def copy_file(self, file_id: str, name: str | None, parents: list[str] | None) -> DriveFile:
        source = self.file(file_id)
        entry = self.add_file(
            name if name else f"Copy of {source.name}",
            source.mime_type,
            parents if parents is not None else source.parents,
        )
        entry.description = source.description
        if file_id in self.spreadsheets:
            self.spreadsheets[entry.file_id] = self.spreadsheets[file_id].clone(entry.file_id, entry.name)
        return entry

    def delete_file(self, file_id: str) -> None:
        self.file(file_id)
        del self.files[file_id]
        self.spreadsheets.pop(file_id, None)

    def rename(self, file_id: str, name: str) -> None:
        """Drive names and spreadsheet titles are one thing: keep both in step."""
        self.file(file_id).name = name
        if file_id in self.spreadsheets:
            self.spreadsheets[file_id].title = name

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> dict[str, Any]:
        """The whole store as plain, picklable data."""
        return {
            "format": SNAPSHOT_FORMAT,
            "seed": self.seed,
            "clock": self.clock,
            "maxCells": self.max_cells,
            "ownerEmail": self.owner_email,
            "timeZone": self.time_zone,
            "counter": self.counter,
            "revision": self.revision,
            "files": [entry.to_data() for entry in self.files.values()],
            "spreadsheets": [book.to_data() for book in self.spreadsheets.values()],
            **({"foreign": dict(self.foreign)} if self.foreign else {}),
        }

    def restore(self, snapshot: dict[str, Any]) -> None:
        """Replace this store's state with ``snapshot`` (objects holding this store see the change)."""
        with self.lock:
            self.seed = snapshot["seed"]
            self.clock = snapshot["clock"]
            self._base = _parse_clock(self.clock)
            self.max_cells = snapshot["maxCells"]
            self.owner_email = snapshot["ownerEmail"]
            self.time_zone = snapshot.get("timeZone", "Etc/GMT")
            self.counter = snapshot["counter"]
            self.revision = snapshot["revision"]
            self.files = {item["id"]: DriveFile.from_data(item) for item in snapshot["files"]}
            self.spreadsheets = {
                item["spreadsheetId"]: Spreadsheet.from_data(item) for item in snapshot["spreadsheets"]
            }
            self.foreign = dict(snapshot.get("foreign", {}))

    @classmethod
    def from_snapshot(cls, snapshot: dict[str, Any]) -> SheetsStore:
        store = cls()
        store.restore(snapshot)
        return store

    def spreadsheet_data(self, spreadsheet_id: str) -> dict[str, Any]:
        """One spreadsheet with its Drive entry, as plain data (to carry a workbook to another store)."""
        return {"file": self.file(spreadsheet_id).to_data(), "spreadsheet": self.spreadsheet(spreadsheet_id).to_data()}

    def load_spreadsheet(self, data: dict[str, Any]) -> Spreadsheet:
        """Add (or replace) a spreadsheet carried by ``spreadsheet_data``, keeping its id."""
        entry = DriveFile.from_data(data["file"])
        book = Spreadsheet.from_data(data["spreadsheet"])
        self.files[entry.file_id] = entry
        self.spreadsheets[book.spreadsheet_id] = book
        return book


def permission_id(kind: str, who: str | None) -> str:
    """Drive-like permission ids: "anyoneWithLink"/"anyone", else 20 digits from the address."""
    if kind == "anyone":
        return "anyone"
    digest = hashlib.blake2b(f"{kind}\x1f{(who or '').lower()}".encode(), digest_size=8).digest()
    return str(int.from_bytes(digest, "big")).rjust(20, "0")[:20]
