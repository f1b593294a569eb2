"""Describe an API's functions once; render them as ToolBench-style docs and as OpenAI tool schemas."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

# Parameter kinds: how a value is written in Python programs, and its JSON schema in tool calls.
JSON_SCHEMAS: dict[str, dict[str, Any]] = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "List[str]": {"type": "array", "items": {"type": "string"}},
    "Loc": {"type": "string", "description": 'a place name; in Python programs write Loc("<name>")'},
    "Date": {
        "type": "object",
        "properties": {"month": {"type": "integer"}, "day": {"type": "integer"}, "year": {"type": "integer"}},
        "required": ["month", "day", "year"],
        "description": "a date; in Python programs write Date(month, day, year)",
    },
}


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # a key of JSON_SCHEMAS
    description: str = ""
    enum: tuple[str, ...] = ()


@dataclass(frozen=True)
class FunctionSpec:
    name: str
    description: str
    params: tuple[Param, ...] = ()

    def doc_block(self, receiver: str = "API") -> str:
        """``# description`` then the signature, as in ToolBench's API docs."""
        signature = ", ".join(f"{p.name}: {p.kind}" for p in self.params)
        return f"# {self.description}\n{receiver}.{self.name}({signature})"

    def schema(self) -> dict[str, Any]:
        """The function as an OpenAI function-calling tool."""
        properties = {}
        for p in self.params:
            prop = copy.deepcopy(JSON_SCHEMAS[p.kind])  # callers may edit the schemas they get
            if p.description:
                prop["description"] = p.description + (f"; {prop['description']}" if "description" in prop else "")
            if p.enum:
                prop["enum"] = list(p.enum)
            properties[p.name] = prop
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {"type": "object", "properties": properties, "required": [p.name for p in self.params]},
            },
        }


def api_docs(functions: tuple[FunctionSpec, ...], receiver: str = "API") -> str:
    return "\n\n".join(spec.doc_block(receiver) for spec in functions) + "\n"
