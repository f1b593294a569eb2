"""Turning an env's ``info`` (and other results) into values that JSON can carry, by explicit rules.

An env's ``info`` is mostly JSON already, but a task may put numpy numbers, tuples, sets or arrays
in it, and ``json.dumps`` either fails on those or (for NaN) writes text that strict parsers
reject. The rules, so that a client on another machine or in another language reads the same
values every time:

- ``None``, ``bool``, ``int``, ``str``: as they are; a finite ``float`` as it is;
- NaN and ±infinity: ``None`` (what JavaScript's ``JSON.stringify`` writes; JSON has no such numbers);
- numpy scalars: the Python number (``np.bool_`` to ``bool``, integers to ``int``, floats as floats);
- numpy arrays, tuples and lists: lists; sets and frozensets: lists sorted by their JSON text, so the
  order does not depend on ``PYTHONHASHSEED``;
- dicts: dicts whose keys are strings (``str(key)`` for others, as ``json.dumps`` does for numbers);
- dataclasses: their fields as a dict; enums: their value; bytes: text (UTF-8, bad bytes escaped);
- anything else: a ``TypeError`` naming the type and where it was, so a new kind of value is a
  visible decision here rather than a silent ``str()``.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from typing import Any

import numpy as np

JsonValue = None | bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"]


def to_json_safe(value: Any, where: str = "value") -> JsonValue:
    """``value`` as plain JSON types by the rules above; ``where`` names it in errors."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)  # an IntEnum or bool subclass would keep its type otherwise
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.generic):
        return to_json_safe(value.item(), where)
    if isinstance(value, dict):
        return {_key(key): to_json_safe(item, f"{where}[{key!r}]") for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json_safe(item, f"{where}[{index}]") for index, item in enumerate(value)]
    if isinstance(value, np.ndarray):
        return to_json_safe(value.tolist(), where)
    if isinstance(value, (set, frozenset)):
        items = [to_json_safe(item, f"{where} (a set)") for item in value]
        return sorted(items, key=lambda item: json.dumps(item, sort_keys=True))
    if isinstance(value, enum.Enum):
        return to_json_safe(value.value, where)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_json_safe({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, where)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "backslashreplace")
    raise TypeError(f"{where}: a {type(value).__name__} has no JSON form (see toolbench.core.jsonsafe)")


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, np.generic):
        key = key.item()
    if isinstance(key, enum.Enum):
        key = key.value
    return json.dumps(key) if isinstance(key, (bool, type(None))) else str(key)
