"""An HTTP/1.1 client for servers that may be hostile: one deadline for the whole exchange, bounded reads.

A library client's timeout is per socket read: a server that sends a byte a second, or an endless run of
``100 Continue`` answers or chunked trailers, keeps each read within it and the call going for ever. Here
every read waits at most what is left of the call's deadline, and the exchange stops when it has passed;
heads (with interim answers and trailers) and bodies are bounded in bytes. The parser is httptools's
(llhttp), the one the server uses.

Connections are kept alive between calls. A connection the server closed while it idled is noticed before
it is used again; a request that could not be sent whole (the connection reset under it) is reported as
``NotSent``, the one case where sending it again cannot repeat it.
"""

from __future__ import annotations

import select
import socket
import ssl
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httptools

MAX_HEAD_BYTES = 64 * 1024  # status lines and header fields of one answer, its interim answers and trailers
MAX_INTERIM_ANSWERS = 8  # 1xx answers before the real one
_RECV = 65536


class HttpError(Exception):
    """The exchange failed: no connection, a reset, the deadline, or an answer over its bounds or malformed."""


class NotSent(HttpError):
    """The connection failed before the request was sent whole: the server cannot have acted on it."""


@dataclass
class Answer:
    status: int
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names; a repeated one keeps its first value
    body: bytes = b""


class _Reading:
    """httptools callbacks: one final answer, its interim answers skipped, everything counted."""

    def __init__(self, max_body: int):
        self.parser: httptools.HttpResponseParser | None = None  # the parser these callbacks serve
        self.max_body = max_body
        self.head_bytes = 0
        self.interim = 0
        self.answer: Answer | None = None
        self.headers: dict[str, str] = {}
        self.body: list[bytes] = []
        self.body_bytes = 0
        self.headers_done = False
        self.complete = False

    def _count_head(self, size: int) -> None:
        self.head_bytes += size
        if self.head_bytes > MAX_HEAD_BYTES:
            raise HttpError(f"the answer's head (with interim answers and trailers) is over {MAX_HEAD_BYTES} bytes")

    def on_message_begin(self) -> None:
        self.headers, self.headers_done = {}, False

    def on_status(self, status: bytes) -> None:
        self._count_head(len(status) + 16)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count_head(len(name) + len(value) + 4)
        if not self.headers_done:
            self.headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))

    def on_headers_complete(self) -> None:
        self.headers_done = True
        assert self.parser is not None
        status = self.parser.get_status_code()
        if 100 <= status < 200:
            self.interim += 1
            if self.interim > MAX_INTERIM_ANSWERS:
                raise HttpError(f"more than {MAX_INTERIM_ANSWERS} interim (1xx) answers")
            return
        self.answer = Answer(status, self.headers)

    def on_body(self, body: bytes) -> None:
        self.body_bytes += len(body)
        if self.body_bytes > self.max_body:
            raise HttpError(f"the answer is over {self.max_body} bytes on the wire")
        self.body.append(body)

    def on_message_complete(self) -> None:
        if self.answer is not None:
            self.complete = True


class BoundedConnection:
    """Requests to one server (``http://`` or ``https://`` URL, with an optional base path)."""

    def __init__(self, url: str):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url[:200]!r}")
        self.tls = parts.scheme == "https"
        self.hostname = parts.hostname
        self.port = parts.port or (443 if self.tls else 80)
        self.host_header = parts.netloc.rpartition("@")[2]
        self.base_path = parts.path.rstrip("/")
        self._sock: socket.socket | None = None

    # ----------------------------------------------------------------- the socket
    def _connect(self, deadline: float) -> socket.socket:
        try:
            sock = socket.create_connection((self.hostname, self.port), timeout=_left(deadline))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.tls:
                sock = ssl.create_default_context().wrap_socket(sock, server_hostname=self.hostname)
        except TimeoutError:
            raise HttpError("no connection before the deadline") from None
        except OSError as exc:
            raise NotSent(f"cannot connect: {exc}") from None
        return sock

    def _idle_connection_gone(self, sock: socket.socket) -> bool:
        """Whether the server closed (or wrote to) a connection while it idled: it cannot carry a request."""
        try:
            readable, _, _ = select.select([sock], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def close(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None

    # ----------------------------------------------------------------- one exchange
    def request(
        self, method: str, path: str, headers: dict[str, str], body: bytes | None, deadline: float, max_body: int
    ) -> Answer:
        """The answer to one request, all of it by ``deadline`` (a ``time.monotonic()`` value)."""
        sock = self._sock
        if sock is not None and self._idle_connection_gone(sock):
            self.close()
            sock = None
        if sock is None:
            sock = self._sock = self._connect(deadline)
        try:
            self._send(sock, method, path, headers, body, deadline)
            answer, reusable = self._receive(sock, deadline, max_body)
        except BaseException:
            self.close()
            raise
        if not reusable:
            self.close()
        return answer

    def _send(
        self, sock: socket.socket, method: str, path: str, headers: dict[str, str], body: bytes | None, deadline: float
    ) -> None:
        lines = [f"{method} {self.base_path}{path} HTTP/1.1", f"Host: {self.host_header}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        if body is not None or method in ("POST", "PUT"):
            lines.append(f"Content-Length: {len(body or b'')}")
        data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")
        try:
            sock.settimeout(_left(deadline))
            sock.sendall(data)
        except TimeoutError:
            raise HttpError("the request was not sent before the deadline") from None
        except OSError as exc:
            raise NotSent(f"the connection failed while the request was sent: {exc}") from None

    def _receive(self, sock: socket.socket, deadline: float, max_body: int) -> tuple[Answer, bool]:
        reading = _Reading(max_body)
        parser = reading.parser = httptools.HttpResponseParser(reading)
        received = 0
        while not reading.complete:
            try:
                sock.settimeout(_left(deadline))
                data = sock.recv(_RECV)
            except TimeoutError:
                raise HttpError("no whole answer before the deadline") from None
            except OSError as exc:
                gone = "before any answer" if not received else "in the middle of the answer"
                raise HttpError(f"the connection failed {gone}: {exc}") from None
            if not data:
                if reading.answer is not None and _delimited_by_close(reading.answer):
                    reading.complete = True  # a body without a length ends with the connection
                    break
                raise HttpError("the server closed the connection " + ("before answering" if not received else
                                                                       "in the middle of the answer"))  # fmt: skip
            received += len(data)
            try:
                parser.feed_data(data)
            except httptools.HttpParserUpgrade:
                raise HttpError("the server switched protocols") from None
            except httptools.HttpParserError as exc:
                if isinstance(exc.__context__, HttpError):  # a bound a callback enforced
                    raise exc.__context__ from None
                raise HttpError(f"the answer is not HTTP: {exc}") from None
        assert reading.answer is not None
        reading.answer.body = b"".join(reading.body)
        # Bytes past the answer (or a close) make the socket readable: ``request`` looks before reusing it.
        return reading.answer, parser.should_keep_alive()


def _delimited_by_close(answer: Answer) -> bool:
    return "content-length" not in answer.headers and "chunked" not in answer.headers.get("transfer-encoding", "")


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise HttpError("the deadline passed")
    return left
