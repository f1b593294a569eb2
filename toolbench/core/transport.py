"""HTTP between agents' clients and the mock services, without a network.

A ``Router`` maps host names to Flask apps and answers an ``HttpRequest`` by calling the app's
WSGI entry point, in-process. ``Router.session()`` gives a ``requests.Session`` whose adapter
does the same, so Python clients built on ``requests`` (gspread among them) reach the fakes
unmodified. ``ServedApp`` serves one app on 127.0.0.1 for outside clients such as real curl.
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any
from urllib.parse import SplitResult, unquote_to_bytes, urlsplit

import requests
from flask import Flask
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

Headers = tuple[tuple[str, str], ...]


def find_header(headers: Headers, name: str) -> str | None:
    """The first value of header ``name`` (case-insensitive), or None."""
    name = name.lower()
    return next((value for key, value in headers if key.lower() == name), None)


@dataclass(frozen=True)
class HttpRequest:
    method: str
    url: str
    headers: Headers = ()
    body: bytes = b""

    @property
    def host(self) -> str:
        return (urlsplit(self.url).hostname or "").lower()

    def header(self, name: str) -> str | None:
        return find_header(self.headers, name)

    def with_default_header(self, name: str, value: str) -> HttpRequest:
        """This request with header ``name`` added unless it is already set."""
        if self.header(name) is not None:
            return self
        return HttpRequest(self.method, self.url, self.headers + ((name, value),), self.body)


@dataclass(frozen=True)
class HttpResponse:
    status: int
    headers: Headers
    body: bytes

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 400

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.body)

    def header(self, name: str) -> str | None:
        return find_header(self.headers, name)

    def head_text(self) -> str:
        """Status line and headers as curl ``-i`` prints them."""
        try:
            reason = HTTPStatus(self.status).phrase
        except ValueError:
            reason = ""
        lines = [f"HTTP/1.1 {self.status} {reason}".rstrip()]
        lines += [f"{key}: {value}" for key, value in self.headers]
        return "\r\n".join(lines) + "\r\n\r\n"


class HostNotServed(LookupError):
    """The request names a host that no mock service answers for."""


class Router:
    """Routes requests to Flask apps by host name, in-process."""

    def __init__(self, apps: Mapping[str, Flask]):
        self._apps = {host.lower(): app for host, app in apps.items()}

    @property
    def hosts(self) -> tuple[str, ...]:
        return tuple(self._apps)

    def send(self, request: HttpRequest) -> HttpResponse:
        parts = urlsplit(request.url)
        host = (parts.hostname or "").lower()
        app = self._apps.get(host)
        if app is None:
            served = ", ".join(self._apps) or "none"
            raise HostNotServed(f"host {host or '(none)'!r} is not served here (served: {served})")
        started: list[Any] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            started[:] = [status, headers]
            return lambda data: None

        try:
            body = read_body(app(wsgi_environ(request, parts), start_response))
            return HttpResponse(int(started[0].split(" ", 1)[0]), tuple(started[1]), body)
        except Exception as exc:  # a bug in a fake must look like a server error, not crash the caller
            return HttpResponse(
                500, (("Content-Type", "text/plain; charset=utf-8"),), f"Internal Server Error: {exc}".encode()
            )

    def session(self) -> requests.Session:
        """A ``requests.Session`` whose http(s) traffic goes to these apps in-process."""
        return session_for(self)


def read_body(chunks: Iterable[bytes]) -> bytes:
    """A WSGI answer's whole body; the iterable is closed afterwards, as PEP 3333 asks of a server."""
    try:
        return b"".join(chunks)
    finally:
        if hasattr(chunks, "close"):
            chunks.close()


def _latin1(text: str) -> str:
    """WSGI's str-of-bytes form of text (PEP 3333): its UTF-8 bytes, one character each."""
    return text.encode("utf-8", "surrogateescape").decode("latin-1")


def wsgi_environ(request: HttpRequest, parts: SplitResult) -> dict[str, Any]:
    """The WSGI environ a server builds for ``request``, as Werkzeug's test client builds it. The
    app is called with it directly, at a fraction of the test client's cost (Sheets' agent code
    makes thousands of requests per minute)."""
    secure = parts.scheme == "https"
    environ: dict[str, Any] = {
        "REQUEST_METHOD": request.method,
        "SCRIPT_NAME": "",
        # The path exactly as a server would see it ("//x" is a path, not a host; WSGI wants latin-1).
        "PATH_INFO": unquote_to_bytes(parts.path or "/").decode("latin-1"),
        "QUERY_STRING": _latin1(parts.query),
        "SERVER_NAME": parts.hostname or "localhost",
        "SERVER_PORT": str(parts.port or (443 if secure else 80)),
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": parts.netloc,
        "CONTENT_LENGTH": str(len(request.body)),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "https" if secure else "http",
        "wsgi.input": io.BytesIO(request.body),
        "wsgi.errors": io.StringIO(),
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    combined: dict[str, list[str]] = {}
    for name, value in request.headers:
        key = name.upper().replace("-", "_")
        if key == "CONTENT_TYPE":
            environ[key] = value
        elif key != "CONTENT_LENGTH":  # the body's real length holds
            combined.setdefault(f"HTTP_{key}", []).append(value)
    environ.update((key, ", ".join(values)) for key, values in combined.items())
    return environ


def session_for(router: Any) -> requests.Session:
    """A ``requests.Session`` whose http(s) traffic goes to ``router.send`` (no socket)."""
    session = requests.Session()
    session.trust_env = False  # never pick up proxies from the environment
    adapter = RouterAdapter(router)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


class RemoteRouter:
    """A router in another process: ``forward(request data)`` returns the response's data (or
    ``{"unserved": message}``). Sandboxed code's clients talk to the env's apps through it.

    ``ahead`` maps ``"METHOD url"`` to the data of the response the env computed before the run
    (what the names' set-up will ask for); such requests are answered here, without a round trip
    to the env, until ``ahead`` is cleared."""

    def __init__(self, forward: Any, ahead: Mapping[str, Any] | None = None) -> None:
        self._forward = forward
        self.ahead = dict(ahead or {})

    def send(self, request: HttpRequest) -> HttpResponse:
        answer = self.ahead.get(f"{request.method} {request.url}") if self.ahead else None
        if answer is None:
            answer = self._forward(request_to_data(request))
        if isinstance(answer, dict) and "unserved" in answer:
            raise HostNotServed(str(answer["unserved"]))
        return response_from_data(answer)

    def session(self) -> requests.Session:
        return session_for(self)


def request_to_data(request: HttpRequest) -> dict[str, Any]:
    """A request as JSON-able data (the body's bytes kept exactly, as latin-1 text)."""
    return {
        "method": request.method,
        "url": request.url,
        "headers": [list(h) for h in request.headers],
        "body": request.body.decode("latin-1"),
    }


def request_from_data(data: Any) -> HttpRequest:
    """The inverse of ``request_to_data``; raises ValueError on anything malformed."""
    try:
        headers = tuple((str(k), str(v)) for k, v in data["headers"])
        method, url, body = data["method"], data["url"], data["body"]
        if not (isinstance(method, str) and isinstance(url, str) and isinstance(body, str)):
            raise TypeError
        return HttpRequest(method, url, headers, body.encode("latin-1"))
    except (KeyError, TypeError, ValueError, UnicodeEncodeError) as exc:
        raise ValueError("not a recorded request") from exc


def response_to_data(response: HttpResponse) -> dict[str, Any]:
    return {
        "status": response.status,
        "headers": [list(h) for h in response.headers],
        "body": response.body.decode("latin-1"),
    }


def response_from_data(data: Any) -> HttpResponse:
    """The inverse of ``response_to_data``; raises ValueError on anything malformed."""
    try:
        headers = tuple((str(k), str(v)) for k, v in data["headers"])
        status, body = data["status"], data["body"]
        if not (isinstance(status, int) and isinstance(body, str)):
            raise TypeError
        return HttpResponse(status, headers, body.encode("latin-1"))
    except (KeyError, TypeError, ValueError, UnicodeEncodeError) as exc:
        raise ValueError("not a response") from exc


class RouterAdapter(BaseAdapter):
    """A ``requests`` transport adapter that answers from a Router instead of a socket."""

    def __init__(self, router: Any):
        super().__init__()
        self.router = router

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        body = request.body or b""
        if isinstance(body, str):
            body = body.encode("utf-8")
        elif not isinstance(body, bytes):  # a generator or file-like upload
            body = b"".join(chunk if isinstance(chunk, bytes) else chunk.encode("utf-8") for chunk in body)
        ours = HttpRequest(request.method or "GET", request.url or "", tuple(request.headers.items()), body)
        try:
            answer = self.router.send(ours)
        except HostNotServed as exc:
            raise requests.ConnectionError(str(exc), request=request) from exc
        response = requests.Response()
        response.status_code = answer.status
        response.headers = CaseInsensitiveDict(dict(answer.headers))
        response._content = answer.body
        response.url = request.url or ""
        response.request = request
        try:
            response.reason = HTTPStatus(answer.status).phrase
        except ValueError:
            response.reason = ""
        response.encoding = requests.utils.get_encoding_from_headers(response.headers)
        return response

    def close(self) -> None:
        pass


class RawUrlRequestHandler(WSGIRequestHandler):
    """Werkzeug's dev-server handler, but raw non-ASCII bytes in the URL reach the app intact.

    curl sends ``?q=São`` as raw UTF-8 bytes; the stock handler decodes them twice, so the app
    would see mojibake where the in-process path sees the right text.
    """

    def make_environ(self) -> dict[str, Any]:
        environ = super().make_environ()
        raw = urlsplit(self.path)  # http.server decoded the request line as latin-1: these are the raw bytes
        environ["QUERY_STRING"] = raw.query  # already the WSGI form: raw bytes as latin-1
        environ["PATH_INFO"] = unquote_to_bytes(raw.path.encode("latin-1")).decode("latin-1")
        return environ


class _QuietHandler(RawUrlRequestHandler):
    def log_request(self, *args: Any, **kwargs: Any) -> None:
        pass


def make_loopback_server(
    app: Flask, host: str = "127.0.0.1", port: int = 0, log_requests: bool = False
) -> BaseWSGIServer:
    """A threaded HTTP server for ``app`` (call ``serve_forever``)."""
    handler = RawUrlRequestHandler if log_requests else _QuietHandler
    return make_server(host, port, app, threaded=True, request_handler=handler)


class ServedApp:
    """Serve a WSGI app on a loopback port in a background thread (``with ServedApp(app) as s:``)."""

    def __init__(self, app: Flask, host: str = "127.0.0.1", port: int = 0, log_requests: bool = False):
        self._server: BaseWSGIServer = make_loopback_server(app, host, port, log_requests)
        self._thread = threading.Thread(target=self._server.serve_forever, name="toolbench-serve", daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_port

    @property
    def url(self) -> str:
        return f"http://{self._server.server_address[0]}:{self.port}"

    def start(self) -> ServedApp:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ServedApp:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
