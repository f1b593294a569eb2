"""How ToolBench's env reads one function call, as pure functions.

- ``route``: the function a called name means: the first whose name ends with it (ToolBench's
  ``endswith`` rule, so a short name can reach a longer one), or none (status 1, "No such function
  name").
- ``read_finish``: the ``Finish`` call's arguments, read with ``json.loads(strict=False)`` and, when
  that fails, by looking for the return type and the answer in the text: no return type or a
  ``give_answer`` without an answer is an input error (status 2); ``give_up_and_restart`` is status
  4; an answer is status 3.
- ``status_of``: the status code of an answered call, from its ``error`` as ToolBench's env maps it
  (``"Message error..."`` is 11; an empty or other error is 0).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

NO_FUNCTION, INPUT_ERROR, FINAL_ANSWER, GAVE_UP = 1, 2, 3, 4
_RETURN_TYPE, _FINAL_ANSWER = '"return_type": "', '"final_answer": "'
# ToolBench's observations of a Finish call (protocol strings: agents trained on ToolBench expect them).
GAVE_UP_OBSERVATION = '{"response":"chose to give up and restart"}'
ANSWERED_OBSERVATION = '{"response":"successfully giving the final answer."}'
MUST_HAVE_RETURN_TYPE = '{error:"must have "return_type""}'
MUST_HAVE_FINAL_ANSWER = '{error:"must have "final_answer""}'
NOT_A_RETURN_TYPE = '{error:""return_type" is not a valid choice"}'


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


def read_finish(arguments: str | dict[str, Any]) -> Finish:
    """The outcome of a ``Finish`` call with these (JSON text) arguments, read as ToolBench reads
    them: ``json.loads(strict=False)``; when that fails, the return type is looked up in the text
    (``give_answer`` first) and the answer is everything after ``"final_answer": "``, so an answer
    with unescaped quotes in it keeps its words. A non-text answer counts as its JSON text.
    Arguments already parsed (an action's JSON object) are read as they are."""
    if isinstance(arguments, dict):
        data: Any = arguments
    else:
        try:
            data = json.loads(arguments, strict=False)
        except (ValueError, RecursionError):
            data = None
    if isinstance(data, dict):
        kind, answer = data.get("return_type"), data.get("final_answer")
    else:
        kind = answer = None
        if _RETURN_TYPE in arguments:
            kind = next((k for k in ("give_answer", "give_up_and_restart") if f'{_RETURN_TYPE}{k}"' in arguments), "?")
        if _FINAL_ANSWER in arguments:
            answer = arguments[arguments.find(_FINAL_ANSWER) + len(_FINAL_ANSWER) :]
    if kind is None:
        return Finish(INPUT_ERROR, error=MUST_HAVE_RETURN_TYPE)
    if kind == "give_up_and_restart":
        return Finish(GAVE_UP)
    if kind != "give_answer":
        return Finish(INPUT_ERROR, error=NOT_A_RETURN_TYPE)
    if answer is None:
        return Finish(INPUT_ERROR, error=MUST_HAVE_FINAL_ANSWER)
    return Finish(FINAL_ANSWER, answer if isinstance(answer, str) else json.dumps(answer))


#: ToolBench's status codes of an answered call, by the ``error`` the service gave.
ERROR_CODES = {
    "API not working error...": 6,
    "Unauthorized error...": 7,
    "Unsubscribed error...": 8,
    "Too many requests error...": 9,
    "Rate limit per minute error...": 10,
    "Message error...": 11,
}


def status_of(error: object) -> int:
    return ERROR_CODES.get(error, 0) if isinstance(error, str) else 0
