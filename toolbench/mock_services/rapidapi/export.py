"""The hub and its task sets as ToolBench's data folder, so ToolBench's own code runs on them.

``export(out)`` writes what ToolBench's and StableToolBench's inference scripts read:
``toolenv/tools/<Category>/<tool>.json`` (the tool JSONs, each file named by its standardized tool
name, as ToolBench's white list maps names to files), ``test_instruction/<set>.json`` (the query
files of the six test sets), ``test_query_ids/<set>.json`` (``{"<query_id>": 0}``) and
``instruction/train_query.json``. Queries keep ToolBench's four keys; our solution paths and
answer facts stay in the JSONL task sets.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from toolbench.core.tasks import fixture_file, read_records
from toolbench.mock_services.rapidapi import TEST_SETS
from toolbench.mock_services.rapidapi.catalog import hub, tool_json

QUERY_KEYS = ("api_list", "query", "relevant APIs", "query_id")


def _write(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def queries(split: str) -> list[dict[str, Any]]:
    """A shipped split's tasks as ToolBench query records."""
    return [
        {key: record[key] for key in QUERY_KEYS} for record in read_records(fixture_file("rapidapi", f"{split}.jsonl"))
    ]


def export(out: str | Path) -> dict[str, int]:
    """Write the folder; returns how many tools and queries it holds."""
    root = Path(out)
    for tool in hub().tools:
        _write(root / "toolenv" / "tools" / tool.category / f"{tool.standard_name}.json", tool_json(tool))
    counts = {"tools": len(hub().tools)}
    for name in TEST_SETS:
        records = queries(name)
        _write(root / "test_instruction" / f"{name}.json", records)
        _write(root / "test_query_ids" / f"{name}.json", {str(r["query_id"]): 0 for r in records})
        counts[name] = len(records)
    train = queries("train")
    _write(root / "instruction" / "train_query.json", train)
    counts["train"] = len(train)
    return counts
