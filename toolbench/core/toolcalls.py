"""Tool calls written as JSON actions, and the two tools of code tasks.

A model with native function calling answers with ``tool_calls``; an agent turns each one into
the text action ``{"name": ..., "arguments": {...}}``. Envs read that text here, so every env
accepts the same shapes: OpenAI's tool-call object, a bare ``{"name", "arguments"}`` (arguments
as an object or as a JSON string), Llama-style ``parameters`` and Anthropic-style ``input``.

Tasks whose actions are code have two tools in interactive mode: ``run_code`` runs one code cell,
and the task's finishing action ends the episode.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

RUN_CODE = "run_code"


class ToolCallError(ValueError):
    """Text that is a JSON tool call but not a well-formed one."""


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


def _loads(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolCallError(f"{what}: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:  # a 5,000-digit number, absurd nesting
        raise ToolCallError(f"{what}: {type(exc).__name__}") from None


def parse_tool_call(text: str) -> ToolCall:
    """The tool call that ``text`` (JSON) writes; raises ``ToolCallError`` naming what is wrong."""
    return tool_call_of(_loads(text, "not valid JSON"))


def tool_call_of(data: Any) -> ToolCall:
    """The tool call that parsed JSON ``data`` writes (see ``parse_tool_call``)."""
    if isinstance(data, list) and len(data) == 1:  # a list of tool calls holding one call
        data = data[0]
    elif isinstance(data, list) and data and all(isinstance(item, dict) for item in data):
        raise ToolCallError(f"one tool call per step, got {len(data)}")
    if isinstance(data, dict) and isinstance(data.get("function"), dict):
        data = data["function"]  # an OpenAI tool_call object
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise ToolCallError('a JSON tool call must look like {"name": "<function>", "arguments": {...}}')
    arguments = next((data[key] for key in ("arguments", "parameters", "input") if key in data), {})
    if isinstance(arguments, str):  # OpenAI sends arguments as a JSON string
        arguments = _loads(arguments or "{}", "the arguments are not valid JSON")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ToolCallError("the arguments of a tool call must be a JSON object")
    return ToolCall(data["name"], arguments)


def unfenced(text: str) -> str:
    """``text`` without Markdown fence lines (a model may wrap its JSON in ```json ... ```)."""
    return "\n".join(line for line in text.splitlines() if not line.strip().startswith("```")).strip()


def is_json_action(text: str) -> bool:
    """Whether ``text`` (fences aside) is a JSON object or array: a tool call, well-formed or not.

    Code tasks use this to tell a tool call from a code cell: a cell that is only a dict or list
    display would do nothing, so JSON there is always meant as a call."""
    return json_action(text) is not NOT_JSON


#: What ``json_action`` returns for text that is not a JSON object or array.
NOT_JSON: Any = object()


def json_action(text: str) -> Any:
    """The JSON object or array ``text`` (fences aside) holds, parsed, else ``NOT_JSON``: one parse
    for an env that both tells a tool call from other text and reads it (``tool_call_of``)."""
    first = text.lstrip()[:1]
    if not first or first not in "{[`":  # unfenced text starts with the first line's first character
        return NOT_JSON
    stripped = unfenced(text)
    if not stripped.startswith(("{", "[")):
        return NOT_JSON
    try:
        return json.loads(stripped)
    except (ValueError, RecursionError):
        return NOT_JSON


def tool_call_action(name: str, arguments: str | dict[str, Any] | None) -> str:
    """The text action for one native tool call (``arguments`` as the model sent them)."""
    return json.dumps({"name": name, "arguments": arguments if arguments is not None else {}}, ensure_ascii=False)


def code_tools(finish: str, finish_description: str, language: str = "Python") -> list[dict[str, Any]]:
    """The tool schemas of a code task: ``run_code`` and the finishing action."""
    return [
        {
            "type": "function",
            "function": {
                "name": RUN_CODE,
                "description": f"Run one cell of {language} code; returns what it printed, the value of its "
                "last expression and any error. Variables carry over to the next cell.",
                "parameters": {
                    "type": "object",
                    "properties": {"code": {"type": "string", "description": f"the {language} code to run"}},
                    "required": ["code"],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": finish,
                "description": finish_description,
                "parameters": {"type": "object", "properties": {}, "required": []},
            },
        },
    ]


def code_cell(action: str, finish: str) -> str | None:
    """The code an interactive code-task action runs, or ``None`` when the action finishes.

    The action is the finishing word (``submit``), a ``run_code`` or finishing tool call, or code.
    Raises ``ToolCallError`` for a tool call to another tool or with bad arguments."""
    stripped = action.strip()
    if stripped.lower() in ("submit", "done", finish.lower()):
        return None
    if not is_json_action(stripped):
        return action
    call = parse_tool_call(unfenced(stripped))
    if call.name == finish:
        return None
    if call.name != RUN_CODE:
        raise ToolCallError(f"unknown tool {call.name!r}; the tools are {RUN_CODE!r} and {finish!r}")
    code = call.arguments.get("code")
    if not isinstance(code, str):
        raise ToolCallError(f"{RUN_CODE} takes one argument, code, a string")
    return code
