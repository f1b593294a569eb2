"""A budget of work for what a caller asks of the emulator, counted the same on every machine.

Formulas have their own budget (``formula.EVALUATION_BUDGET_CELLS``); this one bounds the rest:
the loops whose length a request sets (cells a range write touches, cells a read renders, formulas
a row insert rewrites, records a pivot table scans). Each charges before it changes anything, so a
refused request leaves the workbook as it was. The env opens one budget for a whole step and one
for the read that scores it (``with work.budget(...)``); a request made outside any budget (the
emulator served on its own) gets ``PER_REQUEST`` for itself. Past the budget a request is answered
429 RESOURCE_EXHAUSTED. A unit is about one cell read (a range write costs five per cell), a few
microseconds: a million units is a few seconds of work.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from toolbench.mock_services.sheets.errors import SheetsError

PER_REQUEST = 1_000_000
#: Units per formula an edit rewrites (parsing and printing it again), per the red team's timings.
FORMULA_REWRITE_COST = 20
_REMAINING: ContextVar[list[int] | None] = ContextVar("sheets_work_remaining", default=None)


class WorkExhausted(SheetsError):
    def __init__(self, limit: int) -> None:
        super().__init__(
            429, f"This request needs more work than the emulator allows ({limit:,} cell operations).", None
        )


@contextmanager
def budget(units: int) -> Iterator[None]:
    """Charge the emulator's work inside the block to one budget of ``units``."""
    token = _REMAINING.set([units, units])
    try:
        yield
    finally:
        _REMAINING.reset(token)


def active() -> bool:
    return _REMAINING.get() is not None


def charge_rewrite(sheets: Iterable[Any]) -> None:
    """Charge visiting every cell of ``sheets`` and rewriting every formula among them."""
    cells = [cell for sheet in sheets for cell in sheet.cells.values()]
    charge(len(cells) + FORMULA_REWRITE_COST * sum(cell.formula is not None for cell in cells))


def charge(units: int) -> None:
    """Spend ``units``; raises ``WorkExhausted`` (a 429) once the budget is spent."""
    remaining = _REMAINING.get()
    if remaining is None:
        return
    remaining[0] -= max(0, int(units))
    if remaining[0] < 0:
        raise WorkExhausted(remaining[1])
