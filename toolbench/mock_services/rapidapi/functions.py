"""ToolBench's way of turning RapidAPI APIs into function-calling schemas, rule by rule.

Names: ``standardize`` keeps letters, digits, ``_``, ``^`` and CJK characters, turns every other
character into ``_``, collapses runs of ``_``, lower-cases, trims ``_`` and prefixes ``get_`` to a name
that starts with a digit; ``change_name`` prefixes ``is_`` to a few Python keywords; a function is
``<api>_for_<tool>``, its last 64 characters. Parameter types map NUMBER -> integer, STRING ->
string, BOOLEAN -> boolean (anything else is a string). An observation is the JSON of
``{"error", "response"}``, cut at 1,024 characters with ``...``. The status codes are ToolBench's.
The descriptions are in our own words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

MAX_NAME = 64
MAX_DESCRIPTION = 256
MAX_OBSERVATION = 1024
RENAMED = frozenset({"from", "class", "return", "false", "true", "id", "and"})
TYPES = {"NUMBER": "integer", "STRING": "string", "BOOLEAN": "boolean"}
FINISH = "Finish"

#: ToolBench's status codes of an env step.
STATUS = {
    0: "ok",
    1: "no such function",
    2: "input error",
    3: "final answer",
    4: "gave up and restarted",
    5: "timeout",
    6: "API not working",
    7: "unauthorized",
    8: "unsubscribed",
    9: "too many requests",
    10: "rate limit per minute",
    11: "message error",
    12: "not a JSON response",
}

_NOT_KEPT = re.compile(r"[^\u4e00-\u9fa5^a-zA-Z0-9_]")
_UNDERSCORES = re.compile(r"_+")


def standardize(name: str) -> str:
    """A tool, API or parameter name as ToolBench standardizes it."""
    text = _UNDERSCORES.sub("_", _NOT_KEPT.sub("_", name)).lower().strip("_")
    return "get_" + text if text[:1].isdigit() else text


def change_name(name: str) -> str:
    return "is_" + name if name in RENAMED else name


def function_name(api_name: str, tool_name: str) -> str:
    """``<api>_for_<tool>``, cut to its last 64 characters, as ToolBench names a function."""
    return f"{change_name(standardize(api_name))}_for_{standardize(tool_name)}"[-MAX_NAME:]


def api_function(api: Mapping[str, Any], tool_name: str) -> dict[str, Any]:
    """The OpenAI tool schema of one ``api_list`` entry of a ToolBench tool JSON."""
    name = function_name(str(api.get("name", "")), tool_name)
    description = f'Calls the API "{api.get("name", "")}" of the tool "{tool_name}".'
    if api.get("description"):
        about = str(api["description"]).replace(str(api.get("name", "")), name)[:MAX_DESCRIPTION]
        description += f' What it does: "{about}"'
    properties: dict[str, Any] = {}
    required: list[str] = []
    optional: list[str] = []
    for kind, names in (("required_parameters", required), ("optional_parameters", optional)):
        for parameter in api.get(kind) or []:
            key = change_name(standardize(str(parameter.get("name", ""))))
            entry: dict[str, Any] = {
                "type": TYPES.get(str(parameter.get("type", "")).upper(), "string"),
                "description": str(parameter.get("description") or "")[:MAX_DESCRIPTION],
            }
            if "default" in parameter and len(str(parameter["default"])) != 0:  # 0 and False are examples too
                entry["example_value"] = parameter["default"]
            properties[key] = entry
            names.append(key)
    parameters = {"type": "object", "properties": properties, "required": required, "optional": optional}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


def finish_function() -> dict[str, Any]:
    """The ``Finish`` function every ToolBench task ends with (our wording)."""
    return {
        "type": "function",
        "function": {
            "name": FINISH,
            "description": (
                "End the task. With return_type give_answer, final_answer is what the user will read, so it must hold "
                "the whole answer; with give_up_and_restart, stop this attempt and start again."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "return_type": {"type": "string", "enum": ["give_answer", "give_up_and_restart"]},
                    "final_answer": {"type": "string", "description": "the answer shown to the user"},
                },
                "required": ["return_type"],
            },
        },
    }


def observation(error: str, response: Any) -> str:
    """ToolBench's observation text: the JSON of ``{"error", "response"}``, cut at 1,024 characters."""
    text = json.dumps({"error": error, "response": response})
    return text[:MAX_OBSERVATION] + "..." if len(text) > MAX_OBSERVATION else text
