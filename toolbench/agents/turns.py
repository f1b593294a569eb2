"""What a model is offered, and how its reply becomes env actions: one rule for every trainer
adapter (``integrations/``) and for ``toolbench eval``.

Tools. An interactive env with tool schemas (``info["tools"]``) offers them as they are. A program
episode offers one tool, ``submit_program``, whose argument is the whole program (or call); an
interactive env whose actions are lines of text and that has no schemas (VirtualHome) offers
``take_action``, whose argument is one such line. Either way the env's own grammar is in the
tool's description, with an example.

Replies. A reply may hold prose before and after its calls, Markdown fences and a model's
end-of-turn markers. Its actions, in order, are
1. each ``<tool_call>{...}</tool_call>`` block (the Hermes format most chat templates emit), else
2. the JSON tool calls of its fenced blocks or of the whole reply, else
3. in an interactive episode, the lines that match the env's action grammar
   (``ToolEnv.action_line``: ``Agent.WalkTo(x)``, ``search[...]``, ``API.set_location(...)``), else
4. the code in the reply (its fenced blocks, else every line) as one action: a program (whose
   statements may span lines), or a code cell.
A reply with none of these is refused with ``ReplyError``; its message is the observation every
adapter shows the model, and the turn counts.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from typing import Any

from toolbench.core.env import ToolEnv
from toolbench.core.replies import code_in_reply
from toolbench.core.toolcalls import NOT_JSON, ToolCallError, json_action, tool_call_action, tool_call_of

PROGRAM_TOOL = "submit_program"
ACTION_TOOL = "take_action"
#: How many calls of one reply are played; the rest are refused (a reply is one turn).
MAX_CALLS_PER_REPLY = 8

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
_FENCED = re.compile(r"```[\w+-]*[ \t]*\n(.*?)```", re.DOTALL)
# Chat templates' end-of-turn and special tokens a decoded reply may keep (<|im_end|>, </s>, ...).
_MARKERS = re.compile(r"<\|[A-Za-z0-9_]{1,40}\|>|</s>|<eos>|<end_of_turn>|<\|eot_id\|>")
_EXAMPLE_CHARS = 400


class ReplyError(ValueError):
    """A reply that holds no action the env can take; the message tells the model what to write."""


def _function(name: str, description: str, parameter: str, about: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {parameter: {"type": "string", "description": about}},
                "required": [parameter],
            },
        },
    }


def _example(env: ToolEnv) -> str:
    """A demonstration's first action, as the grammar's example (what a few-shot prompt shows too)."""
    key = (type(env), env.mode)
    if key not in _EXAMPLES:  # read once per env class and mode: every episode's tools show it
        _EXAMPLES[key] = ""
        for task in (env.shared_split("demo").tasks if "demo" in env.splits else ())[:1]:
            actions = env.oracle_actions(task)
            if actions:
                example = actions[0]
                _EXAMPLES[key] = example if len(example) <= _EXAMPLE_CHARS else example[:_EXAMPLE_CHARS] + " ..."
    return _EXAMPLES[key]


_EXAMPLES: dict[tuple[type, str], str] = {}


def model_tools(env: ToolEnv, info: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The tools a model is offered for ``env``'s episode (``info`` is the reset's)."""
    tools = info.get("tools")
    if env.mode == "interactive" and tools:
        return [json.loads(json.dumps(tool)) for tool in tools]  # a copy: the env's are shared
    example = _example(env)
    shown = f" For example:\n{example}" if example else ""
    if env.mode == "program":
        return [
            _function(
                PROGRAM_TOOL,
                f"Run your whole answer to the task: one {env.task_name} program, in the API the prompt "
                f"documents, run once; it ends the episode.{shown}",
                "program",
                "the whole program, one statement or call per line",
            )
        ]
    finish = f" {env.finishing_action} ends the episode." if env.finishing_action else ""
    return [
        _function(
            ACTION_TOOL,
            f"Take one action of the {env.task_name} API the prompt documents and read what it returns.{finish}{shown}",
            "action",
            "one action, as the API writes it",
        )
    ]


def call_action(name: str, arguments: Any) -> str:
    """The env action of one tool call (``arguments`` as the model sent them: an object or JSON text)."""
    if name in (PROGRAM_TOOL, ACTION_TOOL):
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments or "{}")
            except ValueError:
                raise ReplyError(f"the arguments of {name} are not valid JSON") from None
        key = "program" if name == PROGRAM_TOOL else "action"
        value = arguments.get(key) if isinstance(arguments, dict) else None
        if not isinstance(value, str):
            raise ReplyError(f'{name} takes one argument, "{key}", a string')
        return value
    if isinstance(arguments, str):  # as OpenAI sends them: the action reads as the env's own call
        with contextlib.suppress(ValueError):  # not JSON: the env refuses it and says why
            arguments = json.loads(arguments or "{}")
    return tool_call_action(name, arguments)


def _json_calls(data: Any) -> list[str]:
    items = data if isinstance(data, list) else [data]
    actions = []
    for item in items:
        try:
            call = tool_call_of(item)
        except ToolCallError as exc:
            raise ReplyError(str(exc)) from None
        actions.append(call_action(call.name, call.arguments))
    return actions


def reply_actions(env: ToolEnv, reply: str) -> list[str]:
    """The env actions a model's reply text holds, in order (see the module's docstring)."""
    if not isinstance(reply, str):
        raise ReplyError(f"a reply must be text, not {type(reply).__name__}")
    text = _MARKERS.sub("", reply)
    blocks = _TOOL_CALL.findall(text)
    if blocks:
        actions = []
        for block in blocks:
            data = json_action(block)
            if data is NOT_JSON:
                raise ReplyError('a <tool_call> block must hold {"name": ..., "arguments": {...}} as JSON')
            actions += _json_calls(data)
        return actions
    fenced = _FENCED.findall(text)
    parsed = [json_action(chunk) for chunk in fenced or [text]]
    if all(data is not NOT_JSON for data in parsed):
        return [action for data in parsed for action in _json_calls(data)]
    if env.action_line is not None and env.mode == "interactive":
        pattern = re.compile(env.action_line)
        lines = [line.strip() for line in text.splitlines() if pattern.fullmatch(line.strip())]
        if lines:
            return lines
        example = _example(env).splitlines()[:1]
        raise ReplyError(
            f"the reply holds no action: write one call{f' (such as {example[0]!r})' if example else ''} or a "
            '<tool_call>{"name": ..., "arguments": {...}}</tool_call> block'
        )
    code = code_in_reply(text)
    if not code.strip():
        raise ReplyError("the reply is empty: write a call or a program")
    return [code.strip("\n")]
