"""``toolbench list``: every env id with its modes, splits and task counts.

The parser in ``toolbench.cli`` calls the ``cmd_*`` function; heavy modules load inside it.
"""

from __future__ import annotations

import argparse

from toolbench.catalog import TASKS


def cmd_list(args: argparse.Namespace) -> int:
    """``toolbench list``: every env id with its modes, splits and task counts."""
    from toolbench.eval.tables import text_table

    rows = []
    for spec in TASKS:
        splits = ", ".join(f"{split} ({spec.count(split)})" for split in spec.splits)
        rows.append((spec.env_id, ", ".join(spec.modes), splits))
    print("\n".join(text_table(("id", "modes", "splits"), rows)))
    return 0
