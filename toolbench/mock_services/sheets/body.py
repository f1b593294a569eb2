"""Typed reads of request JSON, failing the way Google's JSON transcoder fails.

A request body is hostile input: ``"sheetId": "abc"`` or ``"rows": 5`` must become
``Invalid value at 'requests[0].delete_sheet.sheet_id' (TYPE_INT32), "abc"`` (400), never a Python
exception. ``Obj`` wraps one JSON object with the path used in those messages.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import Any

from toolbench.mock_services.sheets.errors import SheetsError, invalid

INT32_MAX = 2**31 - 1
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def snake(name: str) -> str:
    return _CAMEL.sub("_", name).lower()


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 200 else text[:197] + "..."


def bad_value(path: str, kind: str, value: Any) -> SheetsError:
    return invalid(f"Invalid value at '{path}' ({kind}), {_shown(value)}")


def _as_int(value: Any) -> int | None:
    """An int from a JSON value the transcoder accepts for int32: 5, 5.0, "5" (not true, 5.5, "five")."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str) and re.fullmatch(r"[+-]?[0-9]{1,10}", value.strip()):
        return int(value)
    return None


class Obj:
    """One JSON object of a request, with its path (``requests[0].update_cells``) for error messages."""

    def __init__(self, data: Any, path: str, kind: str = "type.googleapis.com/google.protobuf.Struct"):
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise bad_value(path, kind, data)
        self.data = data
        self.path = path

    def at(self, key: str) -> str:
        return f"{self.path}.{snake(key)}" if self.path else snake(key)

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def raw(self, key: str, default: Any = None) -> Any:
        value = self.data.get(key)
        return default if value is None else value

    def integer(self, key: str, default: int | None = None, low: int | None = None) -> int | None:
        value = self.data.get(key)
        if value is None:
            return default
        number = _as_int(value)
        if number is None or abs(number) > INT32_MAX:
            raise bad_value(self.at(key), "TYPE_INT32", value)
        if low is not None and number < low:
            raise invalid(f"Invalid value at '{self.at(key)}': must be at least {low}, got {number}")
        return number

    def required_integer(self, key: str, low: int | None = None) -> int:
        number = self.integer(key, None, low)
        if number is None:
            raise invalid(f"Invalid value at '{self.at(key)}': required field missing")
        return number

    def number(self, key: str, default: float | None = None) -> float | None:
        value = self.data.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad_value(self.at(key), "TYPE_DOUBLE", value)
        return float(value)

    def flag(self, key: str, default: bool = False) -> bool:
        value = self.data.get(key)
        if value is None:
            return default
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise bad_value(self.at(key), "TYPE_BOOL", value)

    def text(self, key: str, default: str | None = None) -> str | None:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, str):
            raise bad_value(self.at(key), "TYPE_STRING", value)
        return value

    def enum(self, key: str, allowed: Iterable[str], type_name: str, default: str | None = None) -> str | None:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, str) or value not in allowed:
            raise bad_value(self.at(key), f"type.googleapis.com/google.apps.sheets.v4.{type_name}", value)
        return value

    def obj(self, key: str) -> Obj | None:
        value = self.data.get(key)
        if value is None:
            return None
        return Obj(value, self.at(key))

    def required_obj(self, key: str) -> Obj:
        found = self.obj(key)
        if found is None:
            raise invalid(f"Invalid value at '{self.at(key)}': required field missing")
        return found

    def array(self, key: str) -> list[Any]:
        value = self.data.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            raise bad_value(self.at(key), "type.googleapis.com/google.protobuf.ListValue", value)
        return value

    def objs(self, key: str) -> list[Obj]:
        return [Obj(item, f"{self.at(key)}[{i}]") for i, item in enumerate(self.array(key))]


class _NotJsonNumber(ValueError):
    """NaN, Infinity or a number too large for a double: Python's json reads them, JSON has none."""


def _refuse_constant(name: str) -> Any:
    raise _NotJsonNumber(name)


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise _NotJsonNumber(text)
    return number


def _whole(text: str) -> int:
    """A JSON integer, refused when no double holds it (Google reads JSON numbers as doubles)."""
    digits = text.lstrip("-")
    if len(digits) > 308:
        raise _NotJsonNumber(text[:40] + "...")
    return int(text)


def parse_json_body(raw: bytes) -> Any:
    """A request body as JSON, with the transcoder's error for anything else."""
    if not raw.strip():
        return {}
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant, parse_float=_finite, parse_int=_whole)
    except _NotJsonNumber as exc:
        raise invalid(f"Invalid JSON payload received. Unexpected token.\n{exc}") from None
    except UnicodeDecodeError:
        raise invalid("Invalid JSON payload received. Invalid UTF-8.") from None
    except json.JSONDecodeError as exc:
        raise invalid(f"Invalid JSON payload received. Unexpected token.\n{exc.msg} at position {exc.pos}") from None
    except RecursionError:
        raise invalid("Invalid JSON payload received. Nesting too deep.") from None
