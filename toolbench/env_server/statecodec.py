"""An env's ``get_state()`` as data: a tagged JSON text that carries exactly what it holds, and nothing that runs.

``get_state()`` of every toolbench env is plain data. JSON has fewer types than Python, so the ones it
lacks are written as one-key objects whose key starts with ``$`` (a tag):

- ``None``, ``bool``, ``int``, ``str`` and finite ``float``: JSON's own (a float is written as its
  ``repr``, which reads back to the same float, ``-0.0`` included);
- ``list``: an array; a ``dict`` whose keys are all strings: an object in the dict's order;
- ``tuple``, ``set``, ``frozenset``: ``{"$tuple": [...]}``, ``{"$set": [...]}``, ``{"$frozenset": [...]}``,
  a set's elements sorted by their encoded text, so the same state gives the same text whatever
  ``PYTHONHASHSEED`` is;
- a dict with any other key (or whose one key starts with ``$``): ``{"$dict": [[key, value], ...]}``;
- NaN and ±infinity: ``{"$float": "nan" | "inf" | "-inf"}``; ``bytes``: ``{"$bytes": "<base64>"}``.

Types are matched exactly: anything else, a subclass included (a numpy number, an ``OrderedDict``, a
named tuple, an enum), is a ``StateCodecError`` naming where it was, so a future non-data value in an
env's state fails loudly instead of coming back as something else.

Encoding walks the state with a byte budget and stops as soon as the text would pass it, before
building the rest (``StateTooLarge``); decoding refuses text over the budget before parsing it, and a
value nested deeper than ``MAX_DEPTH`` after (the parser's recursion guard bounds the parse itself).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from json.encoder import encode_basestring_ascii as _quote
from typing import Any

DEFAULT_MAX_STATE_BYTES = 16 * 1024 * 1024  # the encoded text; a step's state is far smaller
MAX_DEPTH = 100  # nesting of containers; the envs' states nest less than 15 deep
_TAGS = ("$tuple", "$set", "$frozenset", "$dict", "$float", "$bytes")
_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class StateCodecError(ValueError):
    """A value the codec does not carry, or text that is not a state it wrote."""


class StateTooLarge(StateCodecError):
    """The state's text would be over the byte budget."""


class _Refused(StateCodecError):
    """A value of a type the codec does not carry; ``path`` grows as the error leaves each container."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what
        self.path: list[str] = []

    def __str__(self) -> str:
        return f"state{''.join(reversed(self.path))}: {self.what}"


class _Encoder:
    def __init__(self, max_bytes: int, max_depth: int):
        self.max_bytes = max_bytes
        self.max_depth = max_depth
        self.size = 0

    def over(self) -> None:
        raise StateTooLarge(f"the state's text is over the limit of {self.max_bytes} bytes")

    def add(self, out: list[str], text: str) -> None:
        out.append(text)
        self.size += len(text)
        if self.size > self.max_bytes:
            self.over()

    def write(self, value: Any, out: list[str], depth: int) -> None:
        kind = type(value)
        if kind is str:
            if len(value) > self.max_bytes:  # before escaping it: its text is at least that long
                self.over()
            self.add(out, _quote(value))
        elif value is None:
            self.add(out, "null")
        elif kind is bool:
            self.add(out, "true" if value else "false")
        elif kind is int:
            try:
                self.add(out, int.__repr__(value))
            except ValueError:  # more digits than int-to-text conversion allows
                raise _Refused("an int too large to write as text") from None
        elif kind is float:
            if math.isfinite(value):
                self.add(out, float.__repr__(value))
            else:
                name = "nan" if value != value else "inf" if value > 0 else "-inf"
                self.add(out, f'{{"$float":"{name}"}}')
        elif kind is bytes:
            if len(value) * 4 // 3 > self.max_bytes:
                self.over()
            self.add(out, f'{{"$bytes":"{base64.b64encode(value).decode("ascii")}"}}')
        elif kind in (list, tuple, dict, set, frozenset):
            if depth >= self.max_depth:
                raise _Refused(f"nested deeper than {self.max_depth} containers")
            if kind is list:
                self.items(value, out, depth + 1)
            elif kind is tuple:
                self.add(out, '{"$tuple":')
                self.items(value, out, depth + 1)
                self.add(out, "}")
            elif kind is dict:
                self.mapping(value, out, depth + 1)
            else:
                self.add(out, '{"$set":' if kind is set else '{"$frozenset":')
                self.members(value, out, depth + 1)
                self.add(out, "}")
        else:
            raise _Refused(f"a {kind.__module__}.{kind.__qualname__} is not data the codec carries")

    def items(self, values: Any, out: list[str], depth: int) -> None:
        self.add(out, "[")
        for index, item in enumerate(values):
            if index:
                self.add(out, ",")
            try:
                self.write(item, out, depth)
            except _Refused as exc:
                exc.path.append(f"[{index}]")
                raise
        self.add(out, "]")

    def members(self, values: Any, out: list[str], depth: int) -> None:
        texts = []
        for item in values:
            part: list[str] = []
            try:
                self.write(item, part, depth)
            except _Refused as exc:
                exc.path.append("{...}")
                raise
            texts.append("".join(part))
        texts.sort()
        self.add(out, "[")
        self.add(out, ",".join(texts))
        self.add(out, "]")

    def mapping(self, value: dict[Any, Any], out: list[str], depth: int) -> None:
        plain = all(type(key) is str for key in value)
        if plain and len(value) == 1 and next(iter(value)).startswith("$"):
            plain = False  # its object would read back as a tag
        if plain:
            self.add(out, "{")
            for index, (key, item) in enumerate(value.items()):
                self.add(out, f"{',' if index else ''}{_quote(key)}:")
                try:
                    self.write(item, out, depth)
                except _Refused as exc:
                    exc.path.append(f"[{key[:40]!r}]")
                    raise
            self.add(out, "}")
            return
        self.add(out, '{"$dict":[')
        for index, (key, item) in enumerate(value.items()):
            self.add(out, ",[" if index else "[")
            try:
                self.write(key, out, depth)
                self.add(out, ",")
                self.write(item, out, depth)
            except _Refused as exc:
                exc.path.append(f"[{str(key)[:40]!r}]")
                raise
            self.add(out, "]")
        self.add(out, "]}")


def encode_state(state: Any, max_bytes: int = DEFAULT_MAX_STATE_BYTES, max_depth: int = MAX_DEPTH) -> bytes:
    """The state's tagged JSON text (ASCII); ``StateTooLarge`` past ``max_bytes``, ``StateCodecError``
    for a value that is not data."""
    out: list[str] = []
    _Encoder(max_bytes, max_depth).write(state, out, 0)
    return "".join(out).encode("ascii")


def _nests_deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value``'s containers nest more than ``limit`` deep: a walk of the parsed value, linear in
    its containers, that stops at the first path too deep."""
    pending = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        kind = type(item)
        if kind in (list, tuple, set, frozenset):
            members: Any = item
        elif kind is dict:
            members = item.values()  # keys are hashable: tuples and frozensets, walked as values are
            pending.extend((key, depth + 1) for key in item if type(key) in (tuple, frozenset))
        else:
            continue
        if depth + 1 > limit:
            return True
        pending.extend((member, depth + 1) for member in members)
    return False


def _untag(obj: dict[str, Any]) -> Any:
    if len(obj) != 1:
        return obj
    ((key, value),) = obj.items()
    if not key.startswith("$"):
        return obj
    if key == "$tuple" and type(value) is list:
        return tuple(value)
    if key == "$set" and type(value) is list:
        return set(value)
    if key == "$frozenset" and type(value) is list:
        return frozenset(value)
    if key == "$dict" and type(value) is list:
        if not all(type(pair) is list and len(pair) == 2 for pair in value):
            raise StateCodecError('a "$dict" holds [key, value] pairs')
        return {pair[0]: pair[1] for pair in value}
    if key == "$float" and value in _NON_FINITE:
        return _NON_FINITE[value]
    if key == "$bytes" and type(value) is str:
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise StateCodecError('a "$bytes" is not base64') from None
    raise StateCodecError(f"unknown tag {key[:40]!r} (known: {', '.join(_TAGS)}) or a wrong value under it")


def decode_state(text: bytes, max_bytes: int = DEFAULT_MAX_STATE_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """The state ``encode_state`` wrote; ``StateCodecError`` for text over the limits or not of its form."""
    if len(text) > max_bytes:
        raise StateTooLarge(f"the state's text is {len(text)} bytes, over the limit of {max_bytes}")
    try:
        # The parser's own guard stops nesting at the interpreter's recursion limit, in linear time
        state = json.loads(text, object_hook=_untag)
    except StateCodecError:
        raise
    except RecursionError:
        raise StateCodecError(f"the state's text nests deeper than the parser goes; the limit is {max_depth}") from None
    except (ValueError, TypeError) as exc:  # bad JSON, bad UTF-8, an unhashable set member
        raise StateCodecError(f"not a state's text: {type(exc).__name__}: {str(exc)[:200]}") from None
    if _nests_deeper_than(state, max_depth):
        raise StateCodecError(f"the state nests deeper than {max_depth} containers, which the codec never writes")
    return state
