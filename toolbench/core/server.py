"""A production WSGI server for ``toolbench serve``: waitress, with limits and timeouts.

Why waitress: it is pure Python with no C dependencies, well maintained, and runs the same on
Linux, macOS and Windows (gunicorn needs fork and so no Windows), so ``pip install toolbench-gym``
gives every user the same server. It buffers each request's whole body (bounded by ``max_body``)
before calling the app, rejects malformed HTTP itself with 4xx answers, and runs the app on a fixed
pool of threads behind one event loop, so slow or idle clients cannot tie up the workers.

Three small adjustments keep the served fakes identical to the in-process path
(``transport.wsgi_environ``) and keep malformed requests client errors:

- raw non-ASCII bytes in the URI (curl sends ``?q=São`` unencoded) would be a 400 "Bad URI":
  waitress splits URIs with ``urlsplit`` on bytes, which is ASCII only. The parser %-escapes them
  to split the URI, then keeps the raw query and URI, so the app sees WSGI's latin-1 form of the
  bytes sent, as in-process;
- PATH_INFO is rebuilt from the raw request URI, because waitress collapses leading slashes
  (``//x`` becomes ``/x``) where the in-process path and Werkzeug keep them;
- an unsupported ``Transfer-Encoding`` is a 400, not waitress's 501: RFC 9112 (6.3) requires a 400
  when chunked is not the final coding, and a request we cannot frame is the client's error.

The first and last hook into waitress's parser and channel classes (``parser_class``,
``channel_class``); tests/core/test_serve_production.py fails if a waitress release changes them.
"""

from __future__ import annotations

import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import unquote_to_bytes

from waitress import wasyncore
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser, ParsingError, TransferEncodingNotImplemented
from waitress.server import BaseWSGIServer, create_server

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

_NON_ASCII = re.compile(rb"[\x80-\xff]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")

MAX_BODY = 10 * 1024 * 1024  # bytes: Sheets' own limit (MAX_BODY_BYTES), the largest body any fake accepts


def _escape_uri(line: bytes) -> bytes:
    """The request line with its URI's non-ASCII bytes %-escaped: waitress splits URIs as ASCII only."""
    parts = line.split(b" ")
    if len(parts) in (2, 3):
        parts[1] = _NON_ASCII.sub(lambda match: b"%%%02X" % match[0][0], parts[1])
    return b" ".join(parts)


class _Parser(HTTPRequestParser):
    def parse_header(self, header_plus: bytes) -> None:
        line, newline, rest = header_plus.partition(b"\r\n")
        escaped = _escape_uri(line)
        try:
            super().parse_header(escaped + newline + rest)
        except TransferEncodingNotImplemented as exc:  # waitress answers 501; the request cannot be framed: 400
            raise ParsingError(str(exc)) from None
        if escaped != line:  # keep what was sent; the escaped path already decodes to the same bytes
            raw_uri = line.split(b" ")[1]
            self.request_uri = raw_uri.decode("latin-1")
            self.query = raw_uri.partition(b"#")[0].partition(b"?")[2].decode("latin-1")


class _Channel(HTTPChannel):
    parser_class = _Parser


def with_raw_path(app: WsgiApp) -> WsgiApp:
    """``app`` seeing PATH_INFO decoded from the raw request URI, leading slashes kept (``//x``)."""

    def app_with_raw_path(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        uri = environ.get("REQUEST_URI", "")
        if uri.startswith("/"):  # origin form; an absolute URI (``GET http://host/x``) is left as parsed
            path = uri.partition("?")[0].partition("#")[0]
            environ["PATH_INFO"] = unquote_to_bytes(path.encode("latin-1")).decode("latin-1")
        return app(environ, start_response)

    return app_with_raw_path


def _request_line(environ: dict[str, Any]) -> str:
    uri = environ.get("REQUEST_URI") or environ.get("PATH_INFO", "")
    text = uri.encode("latin-1", "replace").decode("utf-8", "backslashreplace")  # raw bytes, shown as sent
    line = f"{environ.get('REQUEST_METHOD', '')} {text} {environ.get('SERVER_PROTOCOL', '')}"
    # A client's control characters (ESC sequences, CR, LF) must not reach the operator's terminal
    # or forge log lines: they are written as escapes, as Werkzeug's server did.
    return _CONTROL.sub(lambda match: f"\\x{ord(match[0]):02x}", line)


def with_request_log(app: WsgiApp, stream: Any = None) -> WsgiApp:
    """``app`` writing one line per request to ``stream`` (stderr), as Werkzeug's dev server did."""

    def logged_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            moment = time.strftime("%d/%b/%Y %H:%M:%S")
            line = f'{environ.get("REMOTE_ADDR", "-")} - - [{moment}] "{_request_line(environ)}" {status[:3]} -\n'
            (stream or sys.stderr).write(line)  # one write per line: lines from worker threads do not interleave
            return start_response(status, headers, exc_info)

        return app(environ, start)

    return logged_app


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on the first address ``host`` resolves to (one socket: one real port, even for 0)."""
    family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    return socket.create_server(address, family=family)  # SO_REUSEADDR where it is safe (not on Windows)


class ProductionServer:
    """A running-or-ready waitress server: ``serve_forever()`` here, or ``with ... as s:`` in a thread."""

    def __init__(self, server: BaseWSGIServer, socket_map: dict[int, Any]):
        self._server = server
        self._map = socket_map
        self._thread: threading.Thread | None = None

    @property
    def host(self) -> str:
        return str(self._server.effective_host)

    @property
    def port(self) -> int:
        """The real port (the one the OS picked when asked for port 0)."""
        return int(self._server.effective_port)

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def serve_forever(self) -> None:
        """Serve until ``shutdown()`` (from another thread) or Ctrl-C."""
        self._server.run()

    def shutdown(self) -> None:
        """Stop serving: close every socket from the event loop's own thread, then the worker threads.
        Where the loop can no longer be woken (its trigger already closed), the sockets are closed
        from here: the loop ends once its map is empty."""
        try:
            self._server.trigger.pull_trigger(lambda: wasyncore.close_all(self._map))
        except OSError:
            wasyncore.close_all(self._map)
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server.task_dispatcher.shutdown(timeout=5)

    def close(self) -> None:
        """Release the sockets and threads of a server whose loop has stopped (``serve_forever`` returned)."""
        wasyncore.close_all(self._map)
        self._server.task_dispatcher.shutdown(timeout=5)

    def start(self) -> ProductionServer:
        """Serve in a daemon thread (tests, benchmarks)."""
        self._thread = threading.Thread(target=self.serve_forever, name="toolbench-waitress", daemon=True)
        self._thread.start()
        return self

    def __enter__(self) -> ProductionServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


def make_production_server(
    app: WsgiApp,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    threads: int = 8,
    connection_limit: int = 100,
    max_body: int = MAX_BODY,
    timeout: int = 30,
    log_requests: bool = False,
) -> ProductionServer:
    """A waitress server for ``app`` on ``host:port`` (0: a free port, then read ``.port``).

    ``threads`` run the app; at most ``connection_limit`` connections are open at once (more wait in
    the listen backlog); a body over ``max_body`` bytes is a 413 before the app sees it; a
    connection idle for ``timeout`` seconds is closed."""
    app = with_raw_path(app)
    if log_requests:
        app = with_request_log(app)
    socket_map: dict[int, Any] = {}
    server = create_server(
        app,
        map=socket_map,
        sockets=[_listen(host, port)],  # we bind, so port 0 gives one socket whose port we can read
        threads=threads,
        connection_limit=connection_limit,
        max_request_body_size=max_body + 1,  # waitress refuses a body of exactly this size; allow max_body
        channel_timeout=timeout,
        cleanup_interval=max(1, min(30, timeout // 2)),  # idle channels are closed on this sweep
        asyncore_use_poll=True,  # no FD_SETSIZE limit where poll() exists; waitress falls back to select
        clear_untrusted_proxy_headers=False,  # no proxy in front: the app sees X-Forwarded-* as sent, as in-process
    )
    server.channel_class = _Channel
    return ProductionServer(server, socket_map)
