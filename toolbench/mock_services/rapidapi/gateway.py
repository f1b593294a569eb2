"""The hub as RapidAPI's gateway serves it: ``GET https://<host><path>?<query>`` with the headers
``X-RapidAPI-Host`` (which tool) and ``X-RapidAPI-Key`` (whose session), so a client written for a
RapidAPI tool's endpoint (the url in its tool JSON) works against the served hub unchanged.

The answer is the API's own: its HTTP status and JSON body (``{"message": ...}`` for an error), not
ToolBench's ``{"error", "response"}`` wrapper. A path no API of the tool has is a 404 with
``{"message": "Endpoint '<path>' does not exist"}``, as RapidAPI's gateway answers it.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from flask import Flask, Response, abort, request

from toolbench.mock_services.rapidapi.catalog import hub
from toolbench.mock_services.rapidapi.hub import Api, Tool, call


@cache
def _routes() -> dict[str, list[tuple[str, re.Pattern[str], Api, Tool]]]:
    """Per host, each API's method and path pattern (``{name}`` segments become named groups)."""
    routes: dict[str, list[tuple[str, re.Pattern[str], Api, Tool]]] = {}
    for tool in hub().tools:
        for api in tool.apis:
            pattern = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(api.path))
            routes.setdefault(tool.host, []).append((api.method, re.compile(pattern + "/?"), api, tool))
    return routes


def match(host: str, method: str, path: str) -> tuple[Tool, Api, dict[str, str]] | None:
    for verb, pattern, api, tool in _routes().get(host.strip().lower(), []):
        found = pattern.fullmatch(path)
        if found and verb == method:
            return tool, api, found.groupdict()
    return None


def add_gateway(app: Flask, state_of: Any, json_response: Any) -> None:
    """Serve every tool's endpoints on ``app``; ``state_of(key)`` gives a session's state (with its
    lock held by the caller), ``json_response(body, status)`` writes the answer."""

    @app.route("/<path:path>", methods=["GET", "POST", "DELETE"])
    def endpoint(path: str) -> Response:
        host = request.headers.get("X-RapidAPI-Host", "")
        if not host:  # not a gateway request: the virtual server's own 404
            abort(404)
        if host.strip().lower() not in _routes():
            return json_response({"message": "API doesn't exists"}, 404)
        found = match(host, request.method, "/" + path)
        if found is None:
            return json_response({"message": f"Endpoint '/{path[:200]}' does not exist"}, 404)
        tool, api, arguments = found
        arguments = {**request.args.to_dict(), **arguments}
        if request.method == "POST":
            try:
                body = request.get_json(silent=True) if request.is_json else request.form.to_dict()
            except RecursionError:  # JSON nested almost to the parser's limit
                return json_response({"message": "The request body nests too deeply"}, 400)
            if isinstance(body, dict):
                arguments = {**body, **arguments}
        with state_of.lock:
            state = state_of.state(request.headers.get("X-RapidAPI-Key", "")).setdefault(tool.standard_name, {})
            status, answer = call(tool, api, arguments, state)
        return json_response(answer, status)
