"""The errors the emulator answers with, in the shapes Google's services use.

Sheets v4 errors are ``{"error": {"code", "message", "status"}}``; Drive v3 errors carry an
``errors`` list with ``domain``/``reason`` instead of ``status`` (gspread's back-off client looks at
``errors[0].domain``). Every handler raises one of these for bad input, so no input reaches a 500.
"""

from __future__ import annotations

import re
from typing import Any

STATUS_BY_CODE = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ALREADY_EXISTS",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    504: "DEADLINE_EXCEEDED",
}

NOT_FOUND_MESSAGE = "Requested entity was not found."


class SheetsError(Exception):
    """An API error: the HTTP status, the message the real service would give, and its status name."""

    def __init__(self, code: int, message: str, status: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status or STATUS_BY_CODE.get(code, "UNKNOWN")

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message, "status": self.status}
        violation = field_violation(self.message) if self.code == 400 else None
        if violation is not None:
            out["details"] = [{"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [violation]}]
        return {"error": out}


#: The JSON transcoder's errors (a body that does not fit the request's schema), which Google
#: explains in ``error.details`` as a ``BadRequest`` field violation; the API's own checks do not.
_TRANSCODER_FIELD = re.compile(
    r"^Invalid value at '([^']*)' \(|^Invalid JSON payload received\. Unknown name .* at '([^']*)'"
)


def field_violation(message: str) -> dict[str, str] | None:
    """The ``fieldViolations`` entry Google adds to a transcoder error, or None for other errors."""
    found = _TRANSCODER_FIELD.match(message)
    if found is not None:
        return {"field": found.group(1) or found.group(2), "description": message}
    if message.startswith("Invalid JSON payload received."):
        return {"description": message}
    return None


class DriveError(SheetsError):
    """A Drive v3 error: ``errors[0]`` names the reason (``notFound``, ``invalid``...)."""

    def __init__(self, code: int, message: str, reason: str, location: str | None = None):
        super().__init__(code, message)
        self.reason = reason
        self.location = location

    def body(self) -> dict[str, Any]:
        detail: dict[str, Any] = {"message": self.message, "domain": "global", "reason": self.reason}
        if self.location:
            detail.update(location=self.location, locationType="parameter")
        return {"error": {"code": self.code, "message": self.message, "errors": [detail]}}


def invalid(message: str) -> SheetsError:
    return SheetsError(400, message)


CELL_TEXT_LIMIT = 50_000


def check_cell_text(text: str) -> str:
    """Text written into one cell (a value or a formula), within the product's limit."""
    if len(text) > CELL_TEXT_LIMIT:
        raise invalid(f"Your input contains more than the maximum of {CELL_TEXT_LIMIT} characters in a single cell.")
    return text


def not_found() -> SheetsError:
    return SheetsError(404, NOT_FOUND_MESSAGE)


def permission_denied() -> SheetsError:
    return SheetsError(403, "The caller does not have permission")


def file_not_found(file_id: str) -> DriveError:
    return DriveError(404, f"File not found: {file_id}.", "notFound", "fileId")
