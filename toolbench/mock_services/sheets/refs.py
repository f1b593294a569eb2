"""References inside formula text: find them, and rewrite them when the grid changes.

Inserting a row above ``A1`` turns ``=A1`` into ``=A2``; deleting the row makes it ``=#REF!``;
copying a formula one row down shifts its relative parts; renaming a sheet renames it in
formulas. All of that is a rewrite of the reference tokens, which this module finds by scanning
the text (string literals skipped, function names such as ``LOG10(`` excluded).

A ``Ref``'s bounds are 0-based and *inclusive* (as written in A1), with ``None`` for an open side
(``A:A`` has no rows, ``A2:A`` no last row).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from toolbench.mock_services.sheets.a1 import MAX_COLUMNS, column_index, column_letters, quote_title, split_sheet

_SHEET = r"(?:'(?:[^']|'')+'|[^\W\d][\w.]*)!"
_CELL = r"\$?[A-Za-z]{1,3}\$?[0-9]{1,7}"
_COL = r"\$?[A-Za-z]{1,3}"
_ROW = r"\$?[0-9]{1,7}"
_REF = re.compile(
    rf"(?P<sheet>{_SHEET})?(?:(?P<a>{_CELL})(?::(?P<b>{_CELL}|{_COL}|{_ROW}))?|(?P<c1>{_COL}):(?P<c2>{_COL})|(?P<r1>{_ROW}):(?P<r2>{_ROW}))(?![\w(.!$])"
)
_PART = re.compile(r"^(\$?)([A-Za-z]{0,3})(\$?)([0-9]*)$")
_FUNCTION = re.compile(r"(?<![\w.$])([A-Za-z_][\w.]*)(?=\s*\()")


@dataclass(frozen=True)
class Ref:
    """One reference as written: ``Sheet2!$A$1:B``."""

    sheet: str | None
    r0: int | None
    c0: int | None
    r1: int | None
    c1: int | None
    abs_r0: bool = False
    abs_c0: bool = False
    abs_r1: bool = False
    abs_c1: bool = False
    is_range: bool = False

    def text(self) -> str:
        def endpoint(row: int | None, col: int | None, abs_row: bool, abs_col: bool) -> str:
            out = ""
            if col is not None:
                out += ("$" if abs_col else "") + column_letters(col)
            if row is not None:
                out += ("$" if abs_row else "") + str(row + 1)
            return out

        body = endpoint(self.r0, self.c0, self.abs_r0, self.abs_c0)
        if self.is_range:
            body += ":" + endpoint(self.r1, self.c1, self.abs_r1, self.abs_c1)
        return (quote_title(self.sheet) + "!" if self.sheet is not None else "") + body


def _part(text: str) -> tuple[int | None, int | None, bool, bool]:
    match = _PART.match(text)
    assert match is not None
    abs_col, letters, abs_row, digits = match.groups()
    col = column_index(letters) if letters else None
    row = int(digits) - 1 if digits else None
    return row, col, bool(abs_row), bool(abs_col)


def _ref_from_match(match: re.Match[str]) -> Ref | None:
    sheet_text = match.group("sheet")
    sheet = None
    if sheet_text:
        try:
            sheet, _ = split_sheet(sheet_text[:-1] + "!")
        except ValueError:
            return None
    if match.group("a"):
        r0, c0, ar0, ac0 = _part(match.group("a"))
        if match.group("b") is None:
            ref = Ref(sheet, r0, c0, r0, c0, ar0, ac0, ar0, ac0, False)
        else:
            r1, c1, ar1, ac1 = _part(match.group("b"))
            ref = Ref(sheet, r0, c0, r1, c1, ar0, ac0, ar1, ac1, True)
    elif match.group("c1"):
        _, c0, _, ac0 = _part(match.group("c1"))
        _, c1, _, ac1 = _part(match.group("c2"))
        ref = Ref(sheet, None, c0, None, c1, False, ac0, False, ac1, True)
    else:
        r0, _, ar0, _ = _part(match.group("r1"))
        r1, _, ar1, _ = _part(match.group("r2"))
        ref = Ref(sheet, r0, None, r1, None, ar0, False, ar1, False, True)
    if any(v is not None and v < 0 for v in (ref.r0, ref.r1)):
        return None
    if any(v is not None and v >= MAX_COLUMNS for v in (ref.c0, ref.c1)):
        return None
    return ref


Segment = str | Ref


def tokenize(formula: str) -> list[Segment]:
    """The formula as verbatim text pieces and ``Ref``s (string literals stay inside text pieces)."""
    segments: list[Segment] = []
    text: list[str] = []
    index, length = 0, len(formula)
    while index < length:
        char = formula[index]
        if char == '"':
            end = index + 1
            while end < length:
                if formula[end] == '"':
                    if formula[end + 1 : end + 2] == '"':
                        end += 2
                        continue
                    break
                end += 1
            text.append(formula[index : end + 1])
            index = end + 1
            continue
        previous = formula[index - 1] if index else ""
        if not (previous.isalnum() or previous in "_.$'!"):
            match = _REF.match(formula, index)
            if match:
                ref = _ref_from_match(match)
                if ref is not None:
                    if text:
                        segments.append("".join(text))
                        text = []
                    segments.append(ref)
                    index = match.end()
                    continue
        text.append(char)
        index += 1
    if text:
        segments.append("".join(text))
    return segments


def refs_of(formula: str) -> list[Ref]:
    return [segment for segment in tokenize(formula) if isinstance(segment, Ref)]


def rewrite(formula: str, change: Callable[[Ref], Ref | None]) -> str:
    """``formula`` with each reference replaced by ``change(ref)``; None becomes ``#REF!``.

    References are written back in the stored (normalised) spelling.
    """
    out: list[str] = []
    for segment in tokenize(formula):
        if isinstance(segment, str):
            out.append(segment)
            continue
        new = change(segment)
        out.append("#REF!" if new is None else new.text())
    return "".join(out)


def normalize(formula: str) -> str:
    """The formula as the product stores it: references and function names in upper case."""
    out: list[str] = []
    for segment in tokenize(formula):
        if isinstance(segment, Ref):
            out.append(segment.text())
        else:
            pieces = re.split(r'("(?:[^"]|"")*"?)', segment)
            out.append(
                "".join(
                    piece if piece.startswith('"') else _FUNCTION.sub(lambda m: m.group(1).upper(), piece)
                    for piece in pieces
                )
            )
    return "".join(out)


# ---------------------------------------------------------------------------------- transforms
def _targets(ref: Ref, host_title: str, sheet_title: str) -> bool:
    """Whether ``ref`` (in a formula on ``host_title``) points at ``sheet_title``."""
    target = ref.sheet if ref.sheet is not None else host_title
    return target.casefold() == sheet_title.casefold()


def shift_for_insert(ref: Ref, rows: bool, at: int, count: int) -> Ref:
    """Inserting ``count`` rows (or columns) before index ``at``: later references move, spans grow."""

    def moved(value: int | None) -> int | None:
        return value + count if value is not None and value >= at else value

    if rows:
        return replace(ref, r0=moved(ref.r0), r1=moved(ref.r1))
    return replace(ref, c0=moved(ref.c0), c1=moved(ref.c1))


def shift_for_delete(ref: Ref, rows: bool, start: int, count: int) -> Ref | None:
    """Deleting ``count`` rows (or columns) from ``start``: None when everything referenced is gone."""
    end = start + count
    low, high = (ref.r0, ref.r1) if rows else (ref.c0, ref.c1)
    if low is None and high is None:
        return ref
    new_low, new_high = low, high
    if low is not None:
        new_low = low if low < start else (low - count if low >= end else start)
    if high is not None:
        new_high = high if high < start else (high - count if high >= end else start - 1)
    if new_low is not None and new_high is not None and new_high < new_low:
        return None
    return replace(ref, r0=new_low, r1=new_high) if rows else replace(ref, c0=new_low, c1=new_high)


def offset(ref: Ref, rows: int, cols: int) -> Ref | None:
    """A copied formula's reference: relative parts move by (rows, cols); None when pushed off the grid."""

    def move(value: int | None, absolute: bool, delta: int) -> int | None:
        return value if value is None or absolute else value + delta

    new = replace(
        ref,
        r0=move(ref.r0, ref.abs_r0, rows),
        r1=move(ref.r1, ref.abs_r1, rows),
        c0=move(ref.c0, ref.abs_c0, cols),
        c1=move(ref.c1, ref.abs_c1, cols),
    )
    if any(v is not None and v < 0 for v in (new.r0, new.r1, new.c0, new.c1)):
        return None
    if any(v is not None and v >= MAX_COLUMNS for v in (new.c0, new.c1)):
        return None
    return new


def for_sheet(host_title: str, sheet_title: str, change: Callable[[Ref], Ref | None]) -> Callable[[Ref], Ref | None]:
    """Apply ``change`` only to references that point at ``sheet_title``."""

    def apply(ref: Ref) -> Ref | None:
        return change(ref) if _targets(ref, host_title, sheet_title) else ref

    return apply


def renamed(old_title: str, new_title: str) -> Callable[[Ref], Ref | None]:
    def apply(ref: Ref) -> Ref | None:
        if ref.sheet is not None and ref.sheet.casefold() == old_title.casefold():
            return replace(ref, sheet=new_title)
        return ref

    return apply
