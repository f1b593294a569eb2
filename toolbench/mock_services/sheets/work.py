"""A budget of work for what a caller asks of the emulator, counted the same on every machine.

Formulas have their own budget (``formula.EVALUATION_BUDGET_CELLS``); this one bounds the rest:
the loops whose length a request sets (cells a range write touches, cells a read renders, formulas
a row insert rewrites, records a pivot table scans). Each charges before it changes anything, so a
refused request leaves the workbook as it was. The env opens one budget for a whole step and one
for the read that scores it (``with work.budget(...)``); a request made outside any budget (the
emulator served on its own) gets ``PER_REQUEST`` for itself. Past the budget a request is answered
429 RESOURCE_EXHAUSTED. A unit is about one cell read (a range write costs five per cell), a few
microseconds: a million units is a few seconds of work.

A budget may also carry the step's deadline (``seconds``). It is checked wherever work is charged
and before each formula is computed, so the deadline holds inside a single request too, to within
one charged piece of work: past it a request is answered 504 DEADLINE_EXCEEDED. The unit count is
the same on every machine; the deadline is the backstop for a slow one.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from toolbench.mock_services.sheets.errors import SheetsError

PER_REQUEST = 1_000_000
#: Units per formula an edit rewrites (parsing and printing it again), per the red team's timings.
FORMULA_REWRITE_COST = 20


@dataclass
class _Budget:
    remaining: int
    limit: int
    ends: float  # the wall-clock time (``_now()``) past which no more work is done


_BUDGET: ContextVar[_Budget | None] = ContextVar("sheets_work_budget", default=None)
_now = time.monotonic  # the clock deadlines are read from (tests drive it step by step)


class WorkExhausted(SheetsError):
    def __init__(self, limit: int) -> None:
        super().__init__(
            429, f"This request needs more work than the emulator allows ({limit:,} cell operations).", None
        )


class DeadlineExceeded(SheetsError):
    def __init__(self) -> None:
        super().__init__(504, "The request did not finish within the time its caller allows.", None)


@contextmanager
def budget(units: int, seconds: float | None = None) -> Iterator[None]:
    """Charge the emulator's work inside the block to one budget of ``units``, done within ``seconds``
    of wall-clock time from now (the step's deadline: the time its code spends counts too)."""
    current = _Budget(units, units, math.inf if seconds is None else _now() + seconds)
    token = _BUDGET.set(current)
    try:
        yield
    finally:
        _BUDGET.reset(token)


def active() -> bool:
    return _BUDGET.get() is not None


def charge_rewrite(sheets: Iterable[Any]) -> None:
    """Charge visiting every cell of ``sheets`` and rewriting every formula among them."""
    cells = [cell for sheet in sheets for cell in sheet.cells.values()]
    charge(len(cells) + FORMULA_REWRITE_COST * sum(cell.formula is not None for cell in cells))


def charge(units: int) -> None:
    """Spend ``units``; raises ``WorkExhausted`` (a 429) once the budget is spent and
    ``DeadlineExceeded`` (a 504) once its time is up."""
    current = _BUDGET.get()
    if current is None:
        return
    current.remaining -= max(0, int(units))
    if current.remaining < 0:
        raise WorkExhausted(current.limit)
    if _now() > current.ends:
        raise DeadlineExceeded()


def check_deadline() -> None:
    """Raise ``DeadlineExceeded`` if the current budget's time is up."""
    charge(0)
