"""The Drive v2 File resource, which the v2 upload (gspread's ``import_csv``) answers with.

v2 names things differently from v3 (``title``, ``createdDate``, ``labels.starred``,
``alternateLink``, parents as ``ParentReference`` objects) and adds fields v3 dropped
(``userPermission``, ``ownerNames``, ``exportLinks``...). Everything here derives from the Drive
entry and the store, so it is as deterministic as the rest: links and tokens are built from ids
and stable hashes, ``etag`` from the modification time, as Drive's are.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
from typing import Any

from toolbench.mock_services.sheets.store import SPREADSHEET_MIME, DriveFile, SheetsStore

DRIVE_V2 = "https://www.googleapis.com/drive/v2/files"
#: What Drive reports as the size of a Sheets file (it takes no quota of its own beyond this).
SHEETS_FILE_SIZE = "1024"
#: A spreadsheet's export formats, in the order Drive lists them, with the ``exportFormat`` of each link.
SPREADSHEET_EXPORTS = (
    ("application/x-vnd.oasis.opendocument.spreadsheet", "ods"),
    ("text/tab-separated-values", "tsv"),
    ("application/pdf", "pdf"),
    ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"),
    ("text/csv", "csv"),
    ("application/zip", "zip"),
    ("application/vnd.oasis.opendocument.spreadsheet", "ods"),
)
#: ``markedViewedByMeDate`` of a file never marked viewed: the epoch.
NEVER = "1970-01-01T00:00:00.000Z"


def _digest(*parts: str, size: int = 16) -> bytes:
    return hashlib.blake2b("\x1f".join(parts).encode(), digest_size=size).digest()


def root_folder_id(store: SheetsStore) -> str:
    """The id of the caller's "My Drive" (Drive's look: ``0A`` and 17 more characters)."""
    return "0A" + base64.urlsafe_b64encode(_digest("root", store.owner_email)).decode("ascii")[:17]


def user_number(store: SheetsStore) -> str:
    """The caller's numeric account id (21 digits), as in ``ouid=`` parameters."""
    return "1" + str(int.from_bytes(_digest("user", store.owner_email, size=8), "big")).rjust(20, "0")[:20]


def etag(modified: str) -> str:
    """Drive's etag: the modification time in epoch milliseconds, base64 without padding, in quotes."""
    moment = dt.datetime.strptime(modified[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=dt.timezone.utc)
    millis = int(moment.timestamp()) * 1000 + int(modified[20:23] or 0)
    return '"' + base64.b64encode(str(millis).encode()).decode("ascii").rstrip("=") + '"'


def _user(store: SheetsStore) -> dict[str, Any]:
    owner = store.owner_permission()
    return {
        "displayName": owner["displayName"],
        "kind": "drive#user",
        "isAuthenticatedUser": True,
        "permissionId": owner["id"],
        "emailAddress": owner["emailAddress"],
        "picture": {"url": "https://lh3.googleusercontent.com/a/default-user=s64"},
    }


def _parents(store: SheetsStore, entry: DriveFile) -> list[dict[str, Any]]:
    root = root_folder_id(store)
    return [
        {
            "selfLink": f"{DRIVE_V2}/{entry.file_id}/parents/{parent}",
            "id": parent,
            "isRoot": parent == root,
            "kind": "drive#parentReference",
            "parentLink": f"{DRIVE_V2}/{parent}",
        }
        for parent in (entry.parents or [root])
    ]


def file_v2_json(store: SheetsStore, entry: DriveFile) -> dict[str, Any]:
    """The full v2 File resource of ``entry``, in Drive's field order."""
    tag = etag(entry.modified)
    owner_email = store.owner_email
    out: dict[str, Any] = {
        "kind": "drive#file",
        "userPermission": {
            "id": "me",
            "type": "user",
            "role": "owner",
            "kind": "drive#permission",
            "selfLink": f"{DRIVE_V2}/{entry.file_id}/permissions/me",
            "etag": '"' + base64.urlsafe_b64encode(_digest("me", entry.file_id, size=20)).decode("ascii")[:27] + '"',
            "pendingOwner": False,
        },
        "selfLink": f"{DRIVE_V2}/{entry.file_id}",
        "ownerNames": [owner_email],
        "lastModifyingUserName": owner_email,
        "editable": True,
        "writersCanShare": True,
        "mimeType": entry.mime_type,
    }
    if entry.mime_type == SPREADSHEET_MIME:
        out["exportLinks"] = {
            mime: f"https://docs.google.com/spreadsheets/export?id={entry.file_id}&exportFormat={kind}"
            for mime, kind in SPREADSHEET_EXPORTS
        }
    token = base64.urlsafe_b64encode(_digest("thumb", entry.file_id, entry.modified, size=30)).decode("ascii")
    out.update(
        parents=_parents(store, entry),
        thumbnailLink=f"https://docs.google.com/feeds/vt?gd=true&id={entry.file_id}&v=1&s={token}&sz=s220",
        appDataContents=False,
        iconLink=f"https://drive-thirdparty.googleusercontent.com/16/type/{entry.mime_type}",
        shared=len(entry.permissions) > 1,
        lastModifyingUser=_user(store),
        owners=[_user(store)],
        copyable=True,
        etag=tag,
        alternateLink=f"https://docs.google.com/spreadsheets/d/{entry.file_id}/edit?usp=drivesdk",
        embedLink=f"https://docs.google.com/spreadsheets/d/{entry.file_id}/htmlembed?ouid={user_number(store)}",
        fileSize=SHEETS_FILE_SIZE,
        copyRequiresWriterPermission=False,
        spaces=["drive"],
        id=entry.file_id,
        title=entry.name,
    )
    if entry.description:
        out["description"] = entry.description
    out.update(
        labels={
            "viewed": True,
            "restricted": False,
            "starred": entry.starred,
            "hidden": False,
            "trashed": entry.trashed,
        },
        explicitlyTrashed=entry.trashed,
        createdDate=entry.created,
        modifiedDate=entry.modified,
        modifiedByMeDate=entry.modified,
        lastViewedByMeDate=entry.modified,
        markedViewedByMeDate=NEVER,
        quotaBytesUsed=SHEETS_FILE_SIZE,
        version=str(store.revision + 1),
        capabilities={"canEdit": True, "canCopy": True},
    )
    return out
