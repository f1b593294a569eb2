"""Worksheets beyond the six of the test set: ones only ``train`` uses, and ones held out for ``unseen``.

Each table has a first column that names its rows (unique text), a text column whose values
repeat (a grouping), and numeric columns. The data, invented for this project, are a data file.
"""

from __future__ import annotations

import json
from typing import Any

from toolbench.core.tasks import fixture_file

_BOOKS = json.loads(fixture_file("sheets", "books.json").read_text(encoding="utf-8"))
#: Worksheets only train uses, and worksheets held out for unseen (``fixtures/sheets/books.json``).
TRAIN_BOOKS: dict[str, list[list[Any]]] = _BOOKS["train"]
UNSEEN_BOOKS: dict[str, list[list[Any]]] = _BOOKS["unseen"]

#: The column that names a row (0-based), as ``KEY`` in the generator.
BOOK_KEYS = {name: 0 for name in (*TRAIN_BOOKS, *UNSEEN_BOOKS)}
#: The column whose values repeat (0-based): what a pivot table or a count groups by.
GROUP_COLUMN = {name: 1 for name in (*TRAIN_BOOKS, *UNSEEN_BOOKS)}
