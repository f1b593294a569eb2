"""Response helpers shared by the Flask fakes."""

from __future__ import annotations

import json
from typing import Any

from flask import Response


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """Compact UTF-8 JSON with no trailing newline, in the caller's key order, as real APIs send it."""
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    response = Response(text, status=status, content_type="application/json; charset=utf-8")
    response.headers.update(headers or {})
    return response


def text_response(text: str, status: int, content_type: str = "text/plain; charset=utf-8") -> Response:
    return Response(text, status=status, content_type=content_type)
