"""Comparing a recorded Google response with the emulator's answer to the same request.

Three levels, each stricter than the last (the rules are listed in ``conformance.gspread_replay``):

- structure: the set of key paths, list items merged (``sheets[].properties.title``);
- values: the leaves at the paths both have, list items pairwise, with ids mapped through
  ``IdMap`` and volatile values (timestamps, etags, links, who the account is) not compared;
- ``IdMap`` learns, as the replay goes, which of our ids stands for which of Google's, so that
  a later request naming Google's id is sent with ours.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

#: Keys whose values are ids the server chose: learnt and mapped, never compared as such.
ID_KEYS = frozenset(
    {
        "id",
        "spreadsheetId",
        "sheetId",
        "namedRangeId",
        "protectedRangeId",
        "filterViewId",
        "bandedRangeId",
        "permissionId",
        "newSheetId",
        "destinationSpreadsheetId",
    }
)
#: Keys whose values depend on the clock, the revision, the account or the id: not compared.
VOLATILE_KEYS = frozenset(
    {
        # time
        "createdTime",
        "modifiedTime",
        "createdDate",
        "modifiedDate",
        "modifiedByMeDate",
        "modifiedByMeTime",
        "lastViewedByMeDate",
        "viewedByMeTime",
        "markedViewedByMeDate",
        # revisions and checksums
        "etag",
        "version",
        "headRevisionId",
        # the account (a service account at Google, ours locally)
        "ownerNames",
        "lastModifyingUserName",
        "displayName",
        "emailAddress",
        "domain",
        "photoLink",
        "me",
        "isAuthenticatedUser",
    }
)
#: Keys whose values are links (they embed ids and hosts): not compared.
_LINK_KEY = re.compile(r"(Link|Links|Url|Uri|selfLink)$")
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
#: String ids at least this long are replaced inside other strings (URLs, queries); shorter ones
#: only where a whole value is the id (a 4-character id could be part of any text).
LONG_ID = 20


def key_paths(value: Any, prefix: str = "") -> set[str]:
    """Every key path in a JSON value, list items merged under ``[]``."""
    out: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{prefix}.{key}" if prefix else key
            out.add(path)
            out |= key_paths(item, path)
    elif isinstance(value, list):
        for item in value:
            out |= key_paths(item, f"{prefix}[]")
    return out


def is_volatile(key: str) -> bool:
    return key in VOLATILE_KEYS or bool(_LINK_KEY.search(key))


@dataclass
class IdMap:
    """Google's ids to ours, learnt from pairs of responses, applied to the next requests."""

    ids: dict[Any, Any] = field(default_factory=dict)

    def learn(self, google: Any, ours: Any) -> bool:
        """Record ``google`` -> ``ours`` unless ``google`` is known; True when consistent with what is known."""
        if isinstance(google, bool) or type(google) is not type(ours) or not isinstance(google, (str, int)):
            return google == ours
        known = self.ids.setdefault(google, ours)
        return known == ours

    def seed(self, google: Any) -> None:
        """An id that is the same on both sides (a file the world started with)."""
        self.ids.setdefault(google, google)

    def text(self, text: str) -> str:
        """``text`` with every long Google id in it replaced by ours."""
        for google, ours in self.ids.items():
            if isinstance(google, str) and len(google) >= LONG_ID and google != ours and google in text:
                text = text.replace(google, str(ours))
        return text

    def value(self, key: str | None, value: Any) -> Any:
        """A request's JSON value with Google's ids replaced by ours (ids under id keys, long ids in text)."""
        if isinstance(value, dict):
            return {k: self.value(k, v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(key, v) for v in value]
        if key in ID_KEYS and not isinstance(value, bool) and isinstance(value, (str, int)) and value in self.ids:
            return self.ids[value]
        if isinstance(value, str):
            return self.text(value)
        return value


@dataclass(frozen=True)
class Difference:
    """One way our response differs: ``kind`` is missing/extra (structure) or value/length/type (values)."""

    kind: str
    path: str
    detail: str = ""


def _parents(path: str) -> Iterator[str]:
    """The key paths above ``path``: ``a.b[].c`` -> ``a.b``, ``a``."""
    while "." in path:
        path = path.rsplit(".", 1)[0]
        yield re.sub(r"(\[\])+$", "", path)


def _topmost(paths: set[str]) -> list[str]:
    """The paths none of whose parents is in ``paths`` (a missing object is one difference, not one per field)."""
    return sorted(p for p in paths if not any(parent in paths for parent in _parents(p)))


def structure_differences(google: Any, ours: Any) -> list[Difference]:
    theirs, mine = key_paths(google), key_paths(ours)
    out = [Difference("missing", path) for path in _topmost(theirs - mine)]
    out += [Difference("extra", path) for path in _topmost(mine - theirs)]
    return out


def _merged(path: str) -> str:
    return re.sub(r"\[\d+\]", "[]", path)


def value_differences(
    google: Any, ours: Any, ids: IdMap, path: str = "", key: str | None = None
) -> Iterator[Difference]:
    """Leaf values that differ at the paths both sides have (learning ids on the way)."""
    if key is not None and is_volatile(key):
        return
    if isinstance(google, dict) and isinstance(ours, dict):
        for name, item in google.items():
            if name in ours:
                yield from value_differences(item, ours[name], ids, f"{path}.{name}" if path else name, name)
        return
    if isinstance(google, list) and isinstance(ours, list):
        if len(google) != len(ours):
            yield Difference("length", _merged(path), f"{len(google)} items at Google, {len(ours)} here")
        for index, (left, right) in enumerate(zip(google, ours)):
            yield from value_differences(left, right, ids, f"{path}[{index}]", key)
        return
    if key in ID_KEYS:
        if not ids.learn(google, ours):
            yield Difference("id", _merged(path), f"Google's {google!r} was mapped to another id than {ours!r}")
        return
    if isinstance(google, (dict, list)) or isinstance(ours, (dict, list)):
        yield Difference("type", _merged(path), f"{type(google).__name__} at Google, {type(ours).__name__} here")
        return
    if isinstance(google, str) and isinstance(ours, str):
        if (_TIMESTAMP.match(google) and _TIMESTAMP.match(ours)) or (_EMAIL.match(google) and _EMAIL.match(ours)):
            return  # a time, or an account's address (Google's service account is not ours)
        if ids.text(google) != ours:
            yield Difference("value", _merged(path), f"{_short(google)} at Google, {_short(ours)} here")
        return
    if _same_scalar(google, ours):
        return
    yield Difference("value", _merged(path), f"{_short(google)} at Google, {_short(ours)} here")


def _same_scalar(google: Any, ours: Any) -> bool:
    if isinstance(google, bool) or isinstance(ours, bool):
        return google is ours
    if isinstance(google, (int, float)) and isinstance(ours, (int, float)):
        return float(google) == float(ours)
    return google == ours


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
