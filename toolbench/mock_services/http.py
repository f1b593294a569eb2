"""Response helpers shared by the Flask fakes."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from flask import Flask, Response

from toolbench.core.transport import read_body


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    """Compact UTF-8 JSON with no trailing newline, in the caller's key order, as real APIs send it."""
    try:
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate a client sent (JSON "\ud83d"): send it escaped, as JSON allows
        data = json.dumps(body, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    response = Response(data, status=status, content_type="application/json; charset=utf-8")
    response.headers.update(headers or {})
    return response


def parse_int(text: str) -> int | None:
    """An ASCII decimal integer (``"12"``, ``"-3"``), or None: ``int()`` alone accepts "²" or "١٢"."""
    text = text.strip()
    digits = text[1:] if text[:1] in "+-" else text
    if not digits or not (digits.isascii() and digits.isdigit()) or len(digits) > 18:
        return None
    return int(text)


def new_app(name: str) -> Flask:
    """A Flask app for a fake: errors become responses even under FLASK_DEBUG, never exceptions.

    A request that cannot be read is the client's error, a 400: a query string that is not UTF-8
    (Werkzeug decodes it when a view first reads an argument) or a body whose chunked encoding is
    broken (the server's reader raises ``OSError``)."""
    app = Flask(name)
    app.config["PROPAGATE_EXCEPTIONS"] = False

    @app.errorhandler(UnicodeDecodeError)
    def not_utf8(error: UnicodeDecodeError) -> Response:
        return json_response({"message": "Bad Request: the request is not valid UTF-8"}, 400)

    @app.errorhandler(OSError)
    def unreadable(error: OSError) -> Response:
        if "chunk" not in str(error).lower():  # not the request's fault: a server error, as before
            return json_response({"message": "Internal Server Error"}, 500)
        return json_response({"message": f"Bad Request: the request body cannot be read ({error})"[:200]}, 400)

    return app


class ResponseCache:
    """WSGI middleware keeping a stateless app's answers to GET requests, least recently used
    dropped first. The app must answer from the path and query string alone (no headers, no state):
    then a kept answer is byte for byte the one the app would give again. Redirects are not kept:
    their ``Location`` is built from the Host header and the scheme (Werkzeug's ``//`` merging)."""

    def __init__(
        self,
        app: Callable[..., Iterable[bytes]],
        size: int = 256,
        max_body: int = 64 * 1024,
        max_key: int = 2048,
    ):
        self.app = app
        self.size = size
        # Longer URLs and bigger answers are not kept: the cache holds at most size x (max_key + max_body).
        self.max_body = max_body
        self.max_key = max_key
        self._answers: OrderedDict[tuple[str, str], tuple[str, list[tuple[str, str]], bytes]] = OrderedDict()
        self._lock = threading.Lock()  # served fakes answer from several threads

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        key = (environ.get("PATH_INFO", ""), environ.get("QUERY_STRING", ""))
        if environ.get("REQUEST_METHOD") != "GET" or len(key[0]) + len(key[1]) > self.max_key:
            return self.app(environ, start_response)
        with self._lock:
            kept = self._answers.get(key)
            if kept is not None:
                self._answers.move_to_end(key)
        if kept is not None:
            status, headers, body = kept
            start_response(status, list(headers))
            return [body]
        started: list[Any] = []

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], Any]:
            started[:] = [status, list(headers)]
            return start_response(status, headers, exc_info)

        body = read_body(self.app(environ, capture))
        redirect = started and any(name.lower() == "location" for name, _ in started[1])
        if started and not redirect and len(body) <= self.max_body:
            with self._lock:
                self._answers[key] = (started[0], started[1], body)
                if len(self._answers) > self.size:
                    self._answers.popitem(last=False)
        return [body]


#: The WSGI environ key that names the state a request works on, for an app shared by many envs of
#: a process (building a Flask app costs milliseconds; each env keeps only its own state).
STATE_KEY = "toolbench.state"


def with_state(app: Callable[..., Iterable[bytes]], state: Any) -> Callable[..., Iterable[bytes]]:
    """``app`` answering every request on ``state`` (an app that reads ``STATE_KEY``)."""

    def app_on_state(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        environ[STATE_KEY] = state
        return app(environ, start_response)

    return app_on_state


def serialized(
    app: Callable[..., Iterable[bytes]], lock_of: Callable[[dict[str, Any]], Any]
) -> Callable[..., Iterable[bytes]]:
    """WSGI middleware answering one request at a time under the lock ``lock_of(environ)`` gives:
    for a fake whose state is plain Python data, served by several threads (``toolbench serve``), so
    a check and the change it guards (no duplicate favourite; the next id) happen together."""

    def serialized_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        with lock_of(environ):
            return [read_body(app(environ, start_response))]

    return serialized_app


def text_response(text: str, status: int, content_type: str = "text/plain; charset=utf-8") -> Response:
    return Response(text, status=status, content_type=content_type)
