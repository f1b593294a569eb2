"""Plain-text tables: columns padded to their widest cell, a rule under the header."""

from __future__ import annotations

from collections.abc import Sequence


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """The table's lines."""
    everything = [list(header), *(list(row) for row in rows)]
    widths = [max(len(row[i]) for row in everything) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in everything]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return lines
