"""How ToolBench's env reads one function call (spec section 3.5), as pure functions.

- ``route``: the function a called name means: the first whose name ends with it (ToolBench's
  ``endswith`` rule, so a short name can reach a longer one), or none (status 1, "No such function
  name").
- ``read_finish``: the ``Finish`` call's arguments, read with ``json.loads(strict=False)`` and, when
  that fails, by looking for the return type and the answer in the text: no return type or a
  ``give_answer`` without an answer is an input error (status 2); ``give_up_and_restart`` is status
  4; an answer is status 3.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

NO_FUNCTION, INPUT_ERROR, FINAL_ANSWER, GAVE_UP = 1, 2, 3, 4
_ANSWER = re.compile(r'"final_answer"\s*:\s*"((?:[^"\\]|\\.)*)"', re.DOTALL)


def route(name: str, functions: Sequence[str]) -> str | None:
    """The first of ``functions`` whose name ends with ``name`` (ToolBench's rule), else None."""
    if not name:
        return None
    return next((function for function in functions if function.endswith(name)), None)


def no_such_function(name: str) -> dict[str, str]:
    return {"error": f"No such function name: {name}", "response": ""}


@dataclass(frozen=True)
class Finish:
    status: int  # FINAL_ANSWER, GAVE_UP or INPUT_ERROR
    answer: str | None = None
    error: str = ""


def read_finish(arguments: str) -> Finish:
    """The outcome of a ``Finish`` call with these (JSON text) arguments."""
    try:
        data = json.loads(arguments, strict=False)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, dict):
        kind, answer = data.get("return_type"), data.get("final_answer")
    else:  # not JSON: look for the fields in the text, as ToolBench falls back to doing
        kind = next((k for k in ("give_up_and_restart", "give_answer") if k in arguments), None)
        match = _ANSWER.search(arguments)
        answer = json.loads(f'"{match.group(1)}"', strict=False) if match else None
    if kind == "give_up_and_restart":
        return Finish(GAVE_UP)
    if kind != "give_answer":
        return Finish(INPUT_ERROR, error='Finish needs "return_type": "give_answer" or "give_up_and_restart"')
    if not isinstance(answer, str):
        return Finish(INPUT_ERROR, error='give_answer needs a "final_answer" string')
    return Finish(FINAL_ANSWER, answer)
