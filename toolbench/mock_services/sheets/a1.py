"""A1 notation: column letters, sheet-name quoting, and ranges as the Sheets API reads and writes them.

Inside the emulator a rectangle is a half-open ``Rect(r0, r1, c0, c1)`` of 0-based indexes, like the
API's ``GridRange``. Text ranges may leave sides open (``A:C``, ``2:5``, ``A2:C``, ``A5:5``); those
parse to ``Bounds`` with ``None`` for an open side, and are closed against a sheet's grid later.
"""

from __future__ import annotations

import re
from typing import NamedTuple

MAX_COLUMNS = 18278  # column ZZZ, the real product's limit
MAX_ROWS = 10_000_000

_ENDPOINT = re.compile(r"^\$?([A-Za-z]{1,3})?\$?([0-9]{1,8})?$")
_PLAIN_TITLE = re.compile(r"[^\W\d]\w*")
_CELL_LIKE = re.compile(r"[A-Za-z]{1,3}[0-9]+|[Rr][0-9]*[Cc][0-9]*")


class Rect(NamedTuple):
    """A bounded half-open rectangle: rows ``r0 <= r < r1``, columns ``c0 <= c < c1``."""

    r0: int
    r1: int
    c0: int
    c1: int

    @property
    def rows(self) -> int:
        return self.r1 - self.r0

    @property
    def cols(self) -> int:
        return self.c1 - self.c0

    def contains(self, row: int, col: int) -> bool:
        return self.r0 <= row < self.r1 and self.c0 <= col < self.c1

    def intersects(self, other: Rect) -> bool:
        return self.r0 < other.r1 and other.r0 < self.r1 and self.c0 < other.c1 and other.c0 < self.c1

    def inside(self, other: Rect) -> bool:
        return other.r0 <= self.r0 and self.r1 <= other.r1 and other.c0 <= self.c0 and self.c1 <= other.c1


class Bounds(NamedTuple):
    """A parsed A1 rectangle whose sides may be open (``None``): ``A:C`` has no row bounds."""

    r0: int | None
    r1: int | None
    c0: int | None
    c1: int | None

    def close(self, row_count: int, column_count: int) -> Rect:
        """The rectangle with open sides closed at the grid's edges."""
        return Rect(
            self.r0 if self.r0 is not None else 0,
            self.r1 if self.r1 is not None else row_count,
            self.c0 if self.c0 is not None else 0,
            self.c1 if self.c1 is not None else column_count,
        )

    @property
    def is_single_cell(self) -> bool:
        return None not in self and self.r1 - self.r0 == 1 and self.c1 - self.c0 == 1  # type: ignore[operator]


def column_letters(index: int) -> str:
    """``0 -> "A"``, ``25 -> "Z"``, ``26 -> "AA"``."""
    index += 1
    letters = ""
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


def column_index(letters: str) -> int:
    """``"A" -> 0``, ``"AA" -> 26`` (case-insensitive)."""
    value = 0
    for char in letters.upper():
        value = value * 26 + ord(char) - 64
    return value - 1


def cell_name(row: int, col: int) -> str:
    """``(0, 0) -> "A1"``."""
    return f"{column_letters(col)}{row + 1}"


def needs_quotes(title: str) -> bool:
    """Whether a sheet title must be quoted in A1 text, as the real service decides when it echoes ranges."""
    return not _PLAIN_TITLE.fullmatch(title) or bool(_CELL_LIKE.fullmatch(title))


def quote_title(title: str) -> str:
    if needs_quotes(title):
        return "'" + title.replace("'", "''") + "'"
    return title


def split_sheet(text: str) -> tuple[str | None, str]:
    """``"'My Sheet'!A1:B2" -> ("My Sheet", "A1:B2")``; ``"A1" -> (None, "A1")``; ``"'S'" -> ("S", "")``.

    Raises ValueError on an unterminated quote or an empty sheet part.
    """
    if text.startswith("'"):
        index, title = 1, []
        while True:
            end = text.find("'", index)
            if end < 0:
                raise ValueError("unterminated quote")
            title.append(text[index:end])
            if text[end + 1 : end + 2] == "'":
                title.append("'")
                index = end + 2
                continue
            rest = text[end + 1 :]
            if rest and not rest.startswith("!"):
                raise ValueError("text after the quoted sheet name")
            name = "".join(title)
            if not name:
                raise ValueError("empty sheet name")
            return name, rest[1:]
    if "!" in text:
        sheet, _, rest = text.rpartition("!")
        if not sheet:
            raise ValueError("empty sheet name")
        return sheet, rest
    return None, text


def _endpoint(text: str) -> tuple[int | None, int | None] | None:
    """``"B3" -> (2, 1)``, ``"B" -> (None, 1)``, ``"3" -> (2, None)`` as (row, col); None if not A1."""
    match = _ENDPOINT.match(text)
    if not match or not (match.group(1) or match.group(2)):
        return None
    letters, digits = match.groups()
    row = int(digits) - 1 if digits else None
    if row is not None and (row < 0 or row >= MAX_ROWS):
        return None
    col = column_index(letters) if letters else None
    if col is not None and col >= MAX_COLUMNS:
        return None
    return row, col


def parse_bounds(text: str) -> Bounds | None:
    """The rectangle named by the cell part of an A1 range, or None when it is not A1 notation."""
    text = text.strip()
    start_text, colon, end_text = text.partition(":")
    start = _endpoint(start_text)
    if start is None:
        return None
    if not colon:
        row, col = start
        if row is not None and col is not None:
            return Bounds(row, row + 1, col, col + 1)
        if col is not None:  # "B": the whole column, as gspread's own parser reads it
            return Bounds(None, None, col, col + 1)
        return Bounds(row, row + 1, None, None)  # type: ignore[operator]
    end = _endpoint(end_text)
    if end is None:
        return None
    (sr, sc), (er, ec) = start, end
    if (sr is None and ec is None) or (sc is None and er is None):
        return None  # "A:5" and "5:A" mix a column-only end with a row-only end
    if sr is None and er is None:
        r0, r1 = None, None
    else:
        r0 = sr if sr is not None else 0
        r1 = er + 1 if er is not None else None
    if sc is None and ec is None:
        c0, c1 = None, None
    else:
        c0 = sc if sc is not None else 0
        c1 = ec + 1 if ec is not None else None
    if r0 is not None and r1 is not None and r1 <= r0:
        r0, r1 = r1 - 1, r0 + 1
    if c0 is not None and c1 is not None and c1 <= c0:
        c0, c1 = c1 - 1, c0 + 1
    return Bounds(r0, r1, c0, c1)


def format_rect(rect: Rect) -> str:
    """``Rect(0, 1000, 0, 26) -> "A1:Z1000"``; a single cell is just ``"A1"``."""
    start = cell_name(rect.r0, rect.c0)
    if rect.rows == 1 and rect.cols == 1:
        return start
    return f"{start}:{cell_name(rect.r1 - 1, rect.c1 - 1)}"


def format_range(title: str, rect: Rect) -> str:
    """``"Sheet1!A1:B2"``, with the title quoted only when needed."""
    return f"{quote_title(title)}!{format_rect(rect)}"


def grid_range_json(sheet_id: int, rect: Rect) -> dict[str, int]:
    """A ``GridRange`` object as the API writes it: every index present, zeros included (they are
    optional fields, and gspread reads ``merge["startRowIndex"]`` without a default), but ``sheetId``
    left out when it is 0 (a plain proto3 int, which JSON omits at its default)."""
    return {
        **({"sheetId": sheet_id} if sheet_id else {}),
        "startRowIndex": rect.r0,
        "endRowIndex": rect.r1,
        "startColumnIndex": rect.c0,
        "endColumnIndex": rect.c1,
    }
