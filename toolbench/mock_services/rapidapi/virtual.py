"""The hub behind StableToolBench's virtual API server protocol, offline.

``create_app()`` answers ``POST /virtual`` with a JSON body ``{category, tool_name, api_name,
tool_input, strip, toolbench_key}`` (``tool_input`` a JSON string or an object) as StableToolBench's
server does, with HTTP 200 and ``{"error", "response"}``:

- ``api_name`` ``chat_with_user`` (after normalization): ``"Chat with user."``;
- ``tool_input`` ``""`` is ``{}``; a string that is not a JSON object: ``"Tool input parse error...\\n"``;
- a tool and API of our hub (names raw, standardized, ``<api>_for_<tool>`` function names and
  ``<tool>_for_<category>`` tool names alike): the hub's answer, ``reply(*call(...))``, with a session
  state per ``toolbench_key`` (the latest 256 keys are kept);
- else, with ``cache_dir``, a hit in StableToolBench's response cache, returned as stored;
- else ToolBench's answer for an API it does not have, ``{"message": "API doesn't exists"}``.

Our addition: the header ``X-Response-Source`` says where an API's answer came from (``simulated``:
the hub, ``cache``, ``placeholder``: neither), so a client can tell recorded responses from the rest.

There is no real RapidAPI server and no GPT simulation behind it; ``strip`` is accepted and ignored,
as StableToolBench's server ignores it. A request body that is not such an object gets a 422 (a
body over 1 MB a 413) with ``{"error": <why>, "response": ""}``; no request makes a 500.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

from toolbench.mock_services.errors import answer_unreadable_requests
from toolbench.mock_services.rapidapi.catalog import hub
from toolbench.mock_services.rapidapi.functions import change_name, standardize
from toolbench.mock_services.rapidapi.gateway import add_gateway
from toolbench.mock_services.rapidapi.hub import Api, Tool, call, reply
from toolbench.mock_services.rapidapi.original import (
    CACHE,
    PLACEHOLDER,
    SIMULATED,
    ResponseCache,
    standard_category,
)

MAX_BODY = 1024 * 1024  # bytes of a request body
MAX_SESSIONS = 256  # toolbench_keys whose state is kept (least recently used ones are dropped)
FIELDS = ("category", "tool_name", "api_name", "tool_input", "strip", "toolbench_key")
CHAT = {"error": "", "response": "Chat with user."}
PARSE_ERROR = {"error": "Tool input parse error...\n", "response": ""}
NO_SUCH_API = {"error": "", "response": {"message": "API doesn't exists"}}  # ToolBench's words


class Sessions:
    """Hub state per ``toolbench_key``: ``{tool standard name: state}``, the latest keys kept."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self.limit = limit
        self._states: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.lock = threading.Lock()  # held for a whole call: handlers change the state in place

    def forget(self, key: str) -> None:
        """Drop one key's state (call with ``lock`` held)."""
        self._states.pop(key, None)

    def state(self, key: str) -> dict[str, Any]:
        """The state of one key (call with ``lock`` held)."""
        state = self._states.pop(key, None)
        self._states[key] = state if state is not None else {}
        while len(self._states) > self.limit:
            self._states.popitem(last=False)
        return self._states[key]


def parse_info(raw: bytes) -> dict[str, Any] | str:
    """The request's fields, or why the body is not a StableToolBench ``Info`` object."""
    try:
        info = json.loads(raw)
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        return f"the request body is not JSON ({str(error)[:200]})"
    if not isinstance(info, dict):
        return f"the request body must be a JSON object, got {type(info).__name__}"
    missing = [name for name in FIELDS if name not in info]
    if missing:
        return f"missing field(s): {', '.join(missing)}"
    wrong = [name for name in FIELDS if name != "tool_input" and not isinstance(info[name], str)]
    if wrong:
        return f"field(s) must be strings: {', '.join(wrong)}"
    if not isinstance(info["tool_input"], (str, dict)):
        return "field tool_input must be a string or an object"
    return info


def tool_arguments(tool_input: str | dict[str, Any]) -> dict[str, Any] | None:
    """The call's arguments: an object as given, a JSON object string parsed, ``""`` as ``{}``; else None."""
    if isinstance(tool_input, dict):
        return tool_input
    if tool_input == "":
        return {}
    try:
        parsed = json.loads(tool_input)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


def api_base_name(api_name: str, tool_name: str) -> str:
    """The API name as StableToolBench's server normalizes it (a function's ``_for_<tool>`` cut)."""
    return change_name(standardize(api_name)).split(f"_for_{tool_name}")[0]


def cached_api_name(info: dict[str, Any]) -> str:
    """The API name with a function's ``_for_<tool>`` cut even where the tool name came as
    ``<tool>_for_<category>`` (StableToolBench's server cuts only ``_for_`` + the name as sent)."""
    suffix = f"_for_{standardize(standard_category(info['category']))}"
    tool = standardize(info["tool_name"]).removesuffix(suffix)
    return api_base_name(info["api_name"], info["tool_name"]).split(f"_for_{tool}")[0]


def find(category: str, tool_name: str, api_name: str) -> tuple[Tool, Api] | None:
    """The hub's tool and API these request names mean, if the hub has them in that category."""
    wanted = standard_category(category).lower()
    suffix = f"_for_{standardize(standard_category(category))}"
    names = (tool_name, standardize(tool_name).removesuffix(suffix))
    tool = next((t for t in map(hub().tool, names) if t is not None), None)
    if tool is None or standard_category(tool.category).lower() != wanted:
        return None
    short = change_name(standardize(api_name))
    candidates = [api_name, *(short.split(f"_for_{name}")[0] for name in (tool_name, tool.standard_name))]
    api = next((a for a in map(tool.api, candidates) if a is not None), None)
    if api is None:  # a function name ToolBench cut to its last 64 characters
        found = hub().functions.get(api_name)
        api = found[1] if found is not None and found[0] is tool else None
    return (tool, api) if api is not None else None


def _json(body: Any, status: int = 200) -> Response:
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))  # key order kept, as FastAPI sends
    return Response(text, status=status, mimetype="application/json")


def create_app(cache_dir: str | Path | None = None) -> Flask:
    """The virtual server: ``POST /virtual``; ``cache_dir`` is a StableToolBench response cache."""
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY
    cache = ResponseCache(cache_dir) if cache_dir is not None else None
    sessions = Sessions()
    app.extensions["rapidapi_sessions"] = sessions

    def answer(info: dict[str, Any]) -> tuple[Any, str | None]:
        """The body, and where an API's answer came from (None: no API was asked)."""
        if api_base_name(info["api_name"], info["tool_name"]) == "chat_with_user":
            return CHAT, None
        arguments = tool_arguments(info["tool_input"])
        if arguments is None:
            return PARSE_ERROR, None
        found = find(info["category"], info["tool_name"], info["api_name"])
        if found is not None:
            tool, api = found
            with sessions.lock:
                state = sessions.state(info["toolbench_key"]).setdefault(tool.standard_name, {})
                return reply(*call(tool, api, arguments, state)), SIMULATED
        if cache is not None:
            for api_name in dict.fromkeys((info["api_name"], cached_api_name(info))):
                hit = cache.lookup(info["category"], info["tool_name"], api_name, arguments)
                if hit is not None:
                    return hit, CACHE
        return NO_SUCH_API, PLACEHOLDER

    @app.post("/rapidapi")  # ToolBench's own service speaks the same protocol at this path
    @app.post("/virtual")
    def virtual() -> Response:
        info = parse_info(request.get_data(cache=False))
        if isinstance(info, str):
            return _json({"error": f"Invalid request: {info}", "response": ""}, 422)
        try:
            body, source = answer(info)
            response = _json(body)
            if source is not None:
                response.headers["X-Response-Source"] = source
            return response
        except RecursionError:  # a tool_input object nested almost to the parser's limit
            return _json({"error": "Invalid request: tool_input nests too deeply", "response": ""}, 422)

    @app.post("/reset")
    def reset() -> Response:
        """Forget one key's session (our addition: ToolBench sends one key for a whole run, so a
        client that wants each query to start fresh resets between queries)."""
        key = request.headers.get("toolbench_key") or (request.get_json(silent=True) or {}).get("toolbench_key", "")
        with sessions.lock:
            sessions.forget(str(key))
        return _json({"error": "", "response": "session reset"})

    add_gateway(app, sessions, _json)
    answer_unreadable_requests(app, lambda status, message: _json({"error": message, "response": ""}, status))

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> Response:  # 404, 405, 413 ... as JSON, in the protocol's shape
        status = error.code or 500
        return _json({"error": f"{status} {error.name}: {error.description}", "response": ""}, status)

    return app
