"""The hub's APIs as ToolBench's retriever reads them, and what both retrievers share: an API's
document and text, the words of a text, and the ranking of scored keys.

The corpus is every API of the RapidAPI hub, as ToolBench's retriever data holds one (the
``api_list`` entry of a query record), or a ToolBench ``corpus.tsv`` (``toolbench.retrieval.data``).
Both retrievers read an API as ToolBench's retriever reads it (``document_text``): category, tool
name, API name, description, required and optional parameters, and the response's shape.
"""

from __future__ import annotations

import json
import re
from collections.abc import Hashable, Sequence
from functools import cache
from typing import Any

import numpy as np

from toolbench.mock_services.rapidapi.catalog import api_record, hub

Key = tuple[str, str]  # (tool name, API name)
_WORD = re.compile(r"[a-z0-9]+")
STOP_WORDS = [
    "a",
    "an",
    "and",
    "are",
    "as",
    "at",
    "be",
    "by",
    "for",
    "from",
    "in",
    "is",
    "it",
    "of",
    "on",
    "or",
    "the",
    "to",
    "with",
    "what",
    "which",
    "me",
    "my",
    "i",
    "you",
    "can",
    "could",
    "please",
    "tell",
]


def document(record: dict[str, Any]) -> str:
    """An API's ``corpus.tsv`` entry as ToolBench's preprocessing writes it: its record as JSON."""
    fields = ("category_name", "tool_name", "api_name", "api_description", "required_parameters",
              "optional_parameters", "method", "template_response")  # fmt: skip
    return json.dumps({name: record[name] for name in fields if name in record}, ensure_ascii=False)


def document_text(record: dict[str, Any]) -> str:
    """The text ToolBench's retriever encodes for an API: its names and description, then its
    parameters and response shape as JSON."""
    return (
        f"{record.get('category_name') or ''}, {record.get('tool_name') or ''}, {record.get('api_name') or ''}, "
        f"{record.get('api_description') or ''}, "
        f"required_params: {json.dumps(record.get('required_parameters', ''))}, "
        f"optional_params: {json.dumps(record.get('optional_parameters', ''))}, "
        f"return_schema: {json.dumps(record.get('template_response', ''))}"
    )


@cache
def corpus() -> tuple[tuple[Key, ...], tuple[dict[str, Any], ...]]:
    """Every hub API's key and record."""
    keys, records = [], []
    for tool in hub().tools:
        for api in tool.apis:
            keys.append((tool.name, api.name))
            records.append(api_record(tool, api))
    return tuple(keys), tuple(records)


def words(text: str) -> list[str]:
    """Lower-case words, camelCase and snake_case split (``getCurrentWeather`` -> get current weather)."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).replace("_", " ")
    return _WORD.findall(spaced.lower())


def ranked(keys: Sequence[Hashable], scores: np.ndarray, k: int) -> list[Any]:
    """The ``k`` best-scored keys, best first (ties in corpus order)."""
    order = np.lexsort((np.arange(len(scores)), -scores))
    return [keys[i] for i in order[:k]]
