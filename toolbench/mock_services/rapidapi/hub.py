"""The hub's model: tools, their APIs and parameters, and one call from arguments to an HTTP answer.

A ``Tool`` is what RapidAPI lists (name, category, description, host) with its ``Api`` entries; an
``Api`` has a method, a path, typed parameters and a handler over the shared world. ``call`` checks
the arguments as a RapidAPI back-end does (a missing required parameter, a value of the wrong type,
an unknown choice: a 400 with a message) and runs the handler, which may answer 404 for an unknown
id. Handlers get a ``Context``: the world (read-only) and the session's ``state`` (what POST
APIs create: files, messages, orders, points), a plain JSON dict so an env can snapshot it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from functools import cached_property
from typing import Any

from toolbench.mock_services.rapidapi.functions import change_name, function_name, standardize
from toolbench.mock_services.rapidapi.world import World, build_world

MAX_TEXT = 2000  # characters of one text argument (a longer one is refused: bounded work per call)
TYPES = ("STRING", "NUMBER", "BOOLEAN", "DATE", "ENUM")


class ApiError(Exception):
    """An HTTP error answer of an API: its status and JSON body."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"message": message}


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # one of TYPES
    description: str
    default: Any = ""
    choices: tuple[str, ...] = ()

    def record(self) -> dict[str, Any]:
        """The parameter as a ToolBench tool JSON lists it."""
        return {"name": self.name, "type": self.type, "description": self.description, "default": self.default}


@dataclass
class Context:
    world: World
    state: dict[str, Any]

    def counter(self, name: str) -> int:
        """The next number of a per-session sequence (message ids, order numbers)."""
        counters = self.state.setdefault("counters", {})
        counters[name] = counters.get(name, 0) + 1
        return counters[name]


Handler = Callable[[Context, dict[str, Any]], Any]


@dataclass(frozen=True)
class Api:
    name: str
    method: str
    path: str
    description: str
    handler: Handler
    required: tuple[Param, ...] = ()
    optional: tuple[Param, ...] = ()
    key: str = ""  # what the API does, the same for every tool that offers it ("weather.current")

    def params(self) -> tuple[Param, ...]:
        return self.required + self.optional

    @cached_property
    def standard_params(self) -> tuple[tuple[Param, str, bool], ...]:
        """Each parameter with its name as ToolBench standardizes it and whether it is required, worked
        out once per API instead of at every call."""
        return tuple((param, change_name(standardize(param.name)), param in self.required) for param in self.params())


@dataclass
class Tool:
    name: str
    category: str  # RapidAPI's category, as ToolBench's directory names write it ("Video_Images")
    description: str
    host: str
    apis: list[Api]
    collections: tuple[str, ...] = ()

    @cached_property
    def standard_name(self) -> str:
        return standardize(self.name)

    def function(self, api: Api) -> str:
        return function_name(api.name, self.name)

    @cached_property
    def _standard_api_names(self) -> list[tuple[Api, str]]:
        return [(api, change_name(standardize(api.name))) for api in self.apis]

    def api(self, name: str) -> Api | None:
        """An API by its name, or by its name as ToolBench standardizes it."""
        wanted = change_name(standardize(name))
        return next((api for api, standard in self._standard_api_names if api.name == name or standard == wanted), None)


# ---------------------------------------------------------------------- checking arguments
_NUMBER = re.compile(r"-?\d+(\.\d+)?")


def _unencodable(text: str) -> bool:
    """Text with a lone surrogate (JSON's ``"\\ud800"``): it cannot be hashed, stored or sent."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _coerce(param: Param, value: Any) -> Any:
    """``value`` as ``param``'s type, or an ApiError(400) that says why not."""
    where = f"parameter '{param.name}'"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        raise ApiError(400, f"Invalid value for {where}: the number is too large")
    if isinstance(value, str) and _unencodable(value):
        raise ApiError(400, f"Invalid value for {where}: not valid Unicode text")
    if param.type == "NUMBER":
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ApiError(400, f"Invalid value for {where}: expected a number")
        text = str(value).strip()
        if not _NUMBER.fullmatch(text) or len(text) > 18:
            raise ApiError(400, f"Invalid value for {where}: expected a number, got {text[:40]!r}")
        number = float(text)
        return int(number) if number.is_integer() else number
    if param.type == "BOOLEAN":
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower() if isinstance(value, (str, int)) else ""
        if text in ("true", "1", "yes"):
            return True
        if text in ("false", "0", "no"):
            return False
        raise ApiError(400, f"Invalid value for {where}: expected true or false")
    if isinstance(value, (dict, list)) or value is None:
        raise ApiError(400, f"Invalid value for {where}: expected text")
    text = value if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
    if len(text) > MAX_TEXT:
        raise ApiError(400, f"Invalid value for {where}: longer than {MAX_TEXT} characters")
    if param.type == "DATE":
        try:
            date.fromisoformat(text.strip())
        except ValueError:
            raise ApiError(400, f"Invalid value for {where}: expected a date as YYYY-MM-DD") from None
        return text.strip()
    if param.choices:
        chosen = text.strip().lower()
        if chosen not in param.choices:
            raise ApiError(400, f"Invalid value for {where}: expected one of {', '.join(param.choices)}")
        return chosen
    return text


def checked_arguments(api: Api, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments an API's handler gets: names as given or as ToolBench standardizes them, each
    value of its parameter's type, defaults for the optional ones left out; unknown ones are ignored,
    as a RapidAPI back-end ignores an unknown query parameter."""
    if not isinstance(arguments, Mapping):
        raise ApiError(400, "The parameters must be a JSON object")
    given: dict[str, Any] | None = None  # the arguments by standardized name, when a name is not found as given
    checked: dict[str, Any] = {}
    for param, key, required in api.standard_params:
        if param.name in arguments:
            value = arguments[param.name]
        else:
            if given is None:
                given = {change_name(standardize(str(name))): value for name, value in arguments.items()}
            value = given.get(key)
        if value is None or value == "":
            if required:
                raise ApiError(400, f"Missing required parameter '{param.name}'")
            if param.default == "":
                continue
            value = param.default
        checked[param.name] = _coerce(param, value)
    return checked


def call(tool: Tool, api: Api, arguments: Mapping[str, Any], state: dict[str, Any]) -> tuple[int, Any]:
    """One call: ``(HTTP status, JSON body)``. The body is the caller's own copy: changing it changes
    neither the world nor the session (handlers may hand out rows and stored objects)."""
    try:
        body = api.handler(Context(build_world(), state), checked_arguments(api, arguments))
    except ApiError as exc:
        return exc.status, exc.body
    return 200, json_copy(body)


def json_copy(value: Any) -> Any:
    """A copy of a JSON-shaped value (dicts, lists, scalars) at a fraction of ``copy.deepcopy``'s cost;
    anything else is deep-copied."""
    kind = type(value)
    if kind is dict:
        return {key: json_copy(item) for key, item in value.items()}
    if kind is list:
        return [json_copy(item) for item in value]
    if kind in _IMMUTABLE:
        return value
    return copy.deepcopy(value)


_IMMUTABLE = frozenset({str, int, float, bool, type(None)})


MESSAGE_ERROR = "Message error..."


def reply(status: int, body: Any) -> dict[str, Any]:
    """An answer in ToolBench's ``{"error", "response"}`` shape: ``error`` is empty for a 200; an
    API's error answer is ``"Message error..."`` (as ToolBench's service marks it; its env reads
    status 11) with the API's error body as the response."""
    return {"error": "" if status == 200 else MESSAGE_ERROR, "response": body}
