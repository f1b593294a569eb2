"""What a computed spreadsheet answers: the interface between the formula engine and pivot tables.

``formula.Calculator`` provides it; ``pivot`` reads its source ranges through it, so neither
module needs the other's names to describe what passes between them.
"""

from __future__ import annotations

from typing import Any, Protocol

from toolbench.mock_services.sheets.model import Sheet, Spreadsheet


class ComputedValues(Protocol):
    """Effective values and displayed number formats of one spreadsheet version."""

    book: Spreadsheet

    def value(self, sheet: Sheet, row: int, col: int) -> Any:
        """The effective value of a cell: its literal, its formula's result, or a pivot table's output."""
        ...

    def number_format(self, sheet: Sheet, row: int, col: int) -> dict[str, Any] | None:
        """The number format the cell displays with."""
        ...
