"""What the env server reads and writes: request parsing with clear errors, and the response bodies.

The shapes follow OpenEnv (``openenv-core``): a step or reset answer is
``{"observation": {...}, "reward": float | null, "done": bool}``, and the observation object holds
what a Gymnasium client needs beside the text: ``info``, ``terminated`` and ``truncated``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from toolbench.core.env import ACTION_MAX_LENGTH, OBSERVATION_MAX_LENGTH
from toolbench.core.jsonsafe import to_json_safe
from toolbench.core.worker import too_many_items

SEED_LIMIT = 2**64  # numpy seeds are non-negative integers; this bounds what a client can make us hash
#: Values one request may hold: an action of ACTION_MAX_LENGTH commas fits, a body of millions of empty
#: objects (which the parser builds with the GIL held, 0.3 s for 10 MiB) does not.
MAX_JSON_ITEMS = 2 * ACTION_MAX_LENGTH
MAX_NUMBER_CHARACTERS = 100  # a seed has 20 digits
ID_LIMIT = 256  # characters of a task or episode id


class BadRequest(Exception):
    """A request we refuse, with its HTTP status and code: 422 (JSON of the wrong shape) unless told."""

    def __init__(
        self,
        message: str,
        status: int = 422,
        code: str = "VALIDATION_ERROR",
        request_id: str | None = None,  # a 500's: the log names it beside what went wrong
    ):
        super().__init__(message)
        self.status = status
        self.code = code
        self.request_id = request_id


def _number(kind: type) -> Any:
    def parse(text: str) -> Any:
        if len(text) > MAX_NUMBER_CHARACTERS:  # converting thousands of digits costs more than its bytes
            raise ValueError(f"a number of {len(text)} characters; the protocol's have at most {MAX_NUMBER_CHARACTERS}")
        return kind(text)

    return parse


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_PARSE_INT, _PARSE_FLOAT = _number(int), _number(float)


def load_json(raw: bytes | str) -> Any:
    """Parsed JSON, at a cost bounded by its size: more values than ``MAX_JSON_ITEMS`` is a 413
    ``TOO_MANY_ITEMS`` before parsing; anything the parser refuses (bad UTF-8, a number over
    ``MAX_NUMBER_CHARACTERS``, NaN, nesting deeper than the stack) is a 400 ``INVALID_JSON`` saying so."""
    if too_many_items(raw, MAX_JSON_ITEMS):
        raise BadRequest(f"the body could hold more than {MAX_JSON_ITEMS} JSON values; a request holds a few",
                         413, "TOO_MANY_ITEMS")  # fmt: skip
    try:
        return json.loads(raw, parse_int=_PARSE_INT, parse_float=_PARSE_FLOAT, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        message = f"the body is not JSON we can read: {type(exc).__name__}: {str(exc)[:200]}"
        raise BadRequest(message, 400, "INVALID_JSON") from None


def refuse_text_that_is_not_unicode(value: Any, where: str) -> None:
    """Every string of ``value``, keys included, must encode as UTF-8, else a 422 ``INVALID_TEXT``: JSON's
    ``\\ud800`` escapes can spell a lone surrogate, which is no text, and would come back in answers
    (an episode id, an error message). An action's text is not held to it: it is the env's to judge, and
    the env answers such an action with an error observation, as in-process."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            strings: Any = (item,)
        elif isinstance(item, dict):
            strings = item.keys()
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
            continue
        else:
            continue
        for text in strings:
            if not text.isascii():
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    raise BadRequest(f"{where} holds a string that is not Unicode text: a lone surrogate (an unpaired "
                                     "\\ud800-\\udfff escape)", 422, "INVALID_TEXT") from None  # fmt: skip


def _dumps(payload: Any, ascii_only: bool = False) -> str:
    return json.dumps(payload, ensure_ascii=ascii_only, allow_nan=False, separators=(",", ":"))


def json_text(payload: Any) -> str:
    """The compact JSON text of an answer (strict: no NaN), always encodable as UTF-8: readable where it
    can be, and where a string holds a lone surrogate (an env's text may) written with ASCII escapes."""
    text = _dumps(payload)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = _dumps(payload, ascii_only=True)
    return text


def json_bytes(payload: Any) -> bytes:
    """``json_text`` as the UTF-8 bytes of an HTTP answer (encoded once)."""
    try:
        return _dumps(payload).encode("utf-8")
    except UnicodeEncodeError:
        return _dumps(payload, ascii_only=True).encode("ascii")


@dataclass(frozen=True)
class ResetParams:
    seed: int | None = None
    task_id: str | None = None
    episode_id: str | None = None


def _short_text(value: Any, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not 0 < len(value) <= ID_LIMIT:
        raise BadRequest(f"{name} must be a non-empty string of at most {ID_LIMIT} characters")
    return value


def parse_reset(body: Any, task_ids: set[str]) -> ResetParams:
    """``{"seed"?, "task_id"?, "episode_id"?, "options"?: {"task_id"?}}``; ``task_id`` must be a task of the split."""
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise BadRequest(f"the reset body must be a JSON object, not {type(body).__name__}")
    refuse_text_that_is_not_unicode(body, "the reset body")
    unknown = set(body) - {"seed", "task_id", "episode_id", "options"}
    if unknown:
        raise BadRequest(f"unknown reset field(s) {sorted(unknown)}; known: seed, task_id, episode_id, options")
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT):
        raise BadRequest("seed must be an integer from 0 to 2**64 - 1")
    options = body.get("options") or {}
    if not isinstance(options, dict) or set(options) - {"task_id"}:
        raise BadRequest('options must be an object whose only key is "task_id"')
    task_id = _short_text(body.get("task_id", options.get("task_id")), "task_id")
    if task_id is not None and task_id not in task_ids:
        raise BadRequest(f"no task {task_id!r} in the served split (GET /schema names the split)")
    return ResetParams(seed=seed, task_id=task_id, episode_id=_short_text(body.get("episode_id"), "episode_id"))


def parse_action(action: Any) -> str:
    """The action text: a string, or OpenEnv's action object ``{"text": "...", "metadata"?: {...}}``."""
    if isinstance(action, dict):
        refuse_text_that_is_not_unicode({key: value for key, value in action.items() if key != "text"}, "the action")
        extra = set(action) - {"text", "metadata"}
        if "text" not in action or extra:
            raise BadRequest('an action object is {"text": "<action>"} (and OpenEnv\'s optional "metadata")')
        action = action["text"]
    if not isinstance(action, str):
        raise BadRequest(f'the action must be a string or {{"text": string}}, not {type(action).__name__}')
    return action  # its length and content are the env's to judge: a bad action is an observation, not a 4xx


def parse_step(body: Any) -> str:
    """``{"action": ...}``; OpenEnv's optional ``timeout_s`` and ``request_id`` are accepted and ignored
    (each step is bounded by the env's own limit)."""
    if not isinstance(body, dict) or "action" not in body:
        raise BadRequest('the step body must be a JSON object {"action": ...}')
    refuse_text_that_is_not_unicode({key: value for key, value in body.items() if key != "action"}, "the step body")
    unknown = set(body) - {"action", "timeout_s", "request_id"}
    if unknown:
        raise BadRequest(f"unknown step field(s) {sorted(unknown)}; known: action, timeout_s, request_id")
    return parse_action(body["action"])


def step_result(
    observation: str, reward: float | None, terminated: bool, truncated: bool, info: dict[str, Any]
) -> dict[str, Any]:
    return {
        "observation": {
            "text": observation,
            "info": to_json_safe(info, "info"),
            "terminated": bool(terminated),
            "truncated": bool(truncated),
        },
        "reward": None if reward is None else to_json_safe(float(reward), "reward"),
        "done": bool(terminated or truncated),
    }


ACTION_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string", "maxLength": ACTION_MAX_LENGTH}},
    "required": ["text"],
    "description": 'The agent\'s action text; POST /step also takes {"action": "<text>"}',
}
OBSERVATION_SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "maxLength": OBSERVATION_MAX_LENGTH},
        "info": {"type": "object", "description": "the env's info, JSON-safe (toolbench.core.jsonsafe)"},
        "terminated": {"type": "boolean"},
        "truncated": {"type": "boolean"},
    },
}
STATE_SCHEMA = {
    "type": "object",
    "properties": {
        "episode_id": {"type": ["string", "null"]},
        "step_count": {"type": "integer", "minimum": 0},
        "task_id": {"type": ["string", "null"]},
        "done": {"type": "boolean"},
        "snapshot": {"type": "string", "description": "get_state(), signed; POST /restore takes it back"},
    },
}
