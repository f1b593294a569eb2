"""Bounded HTTP connections: uvicorn's httptools protocol with a time limit on every read, and a connection cap
that idle sockets cannot fill.

uvicorn times out only idle keep-alive connections, and only after a first answer: a connection that
sends nothing, or half a request head, or a body that never ends, stays open for ever, and its
``limit_concurrency`` then answers 503 to everyone once such sockets fill it. Here:

- a request head must arrive whole within ``header_timeout`` seconds of the connection (or of the
  first byte of a keep-alive connection's next request): else 408 and the connection closes;
- a request body must arrive whole within ``body_timeout`` seconds of its head, however it trickles:
  else 408 and the connection closes (the app, waiting for the body, sees the client gone);
- a client that stops reading its answers (the server's write buffer full) for ``body_timeout``
  seconds loses the connection, so a request cannot be kept in flight by not reading;
- at ``max_connections``, a new connection closes the open HTTP connection that has been idle longest
  with no request in flight (a keep-alive socket, or one still sending its head), else a WebSocket
  that holds no session; only when every connection has a request in flight or a session is the new
  one refused (503, ``Retry-After``). Clients whose requests are running, and WebSocket sessions, are
  never cut off by connections that send nothing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import resource
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

logger = logging.getLogger("toolbench.env_server")

FD_MARGIN = 256  # descriptors besides the sockets: the envs' files, sandbox pipes, logs
#: Set in a WebSocket's ASGI scope (the dict its protocol holds) once the connection has a session:
#: until then it is as idle as a keep-alive socket, and may be closed at the connection cap.
HOLDS_SESSION = "toolbench.holds_session"


def mark_holds_session(scope: dict[str, Any], holds: bool = True) -> None:
    scope[HOLDS_SESSION] = holds


def _idle_websocket(connection: Any) -> bool:
    scope = getattr(connection, "scope", None)
    return isinstance(scope, dict) and scope.get("type") == "websocket" and not scope.get(HOLDS_SESSION)


@dataclass(frozen=True)
class ConnectionLimits:
    max_connections: int
    header_timeout: float = 10.0
    body_timeout: float = 30.0


def default_max_connections(max_sessions: int) -> int:
    """Room for every session's client to hold a connection (WebSocket or keep-alive HTTP) and a second one
    (a probe, a DELETE beside a step), plus some for clients between sessions."""
    return 2 * max_sessions + 64


def raise_descriptor_limit(connections: int) -> int:
    """Raise the soft limit on open files toward the hard one so ``connections`` sockets fit; returns how
    many connections the limit leaves room for."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = connections + FD_MARGIN
    if soft != resource.RLIM_INFINITY and soft < wanted:
        new = wanted if hard == resource.RLIM_INFINITY else min(hard, wanted)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
            soft = new
        except (ValueError, OSError):
            pass
    return connections if soft == resource.RLIM_INFINITY else min(connections, max(soft - FD_MARGIN, 1))


def _error_response(status: int, reason: str, code: str, detail: str, extra: str = "") -> bytes:
    body = json.dumps({"detail": detail, "code": code}).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
        f"{extra}connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


def bounded_protocol(limits: ConnectionLimits) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol with ``limits`` (pass it as ``uvicorn.Config(http=...)``)."""

    class BoundedHttpToolsProtocol(HttpToolsProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.idle_since = self.loop.time()
            self.head_timer: asyncio.TimerHandle | None = None
            self.body_timer: asyncio.TimerHandle | None = None
            self.write_timer: asyncio.TimerHandle | None = None

        # ------------------------------------------------------------- the connection cap
        def in_flight(self) -> bool:
            return bool(self.pipeline) or (self.cycle is not None and not self.cycle.response_complete)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            open_connections = [c for c in self.connections if not c.transport.is_closing()]
            super().connection_made(transport)
            if len(open_connections) >= limits.max_connections:
                idle = [c for c in open_connections if isinstance(c, BoundedHttpToolsProtocol) and not c.in_flight()]
                sessionless = [c for c in open_connections if _idle_websocket(c)]
                if not idle and not sessionless:
                    self.refuse(503, "Service Unavailable", "TOO_MANY_CONNECTIONS",
                                f"the server holds its maximum of {limits.max_connections} connections, each with a "
                                "request running or a session; retry shortly", "retry-after: 1\r\n")  # fmt: skip
                    return
                victim = min(idle, key=lambda c: c.idle_since) if idle else sessionless[0]
                logger.info("connection cap reached: closing the connection idle the longest")
                if isinstance(victim, BoundedHttpToolsProtocol):
                    victim.stop_timers()
                victim.transport.close()
            self.head_timer = self.loop.call_later(limits.header_timeout, self.head_timed_out)

        def refuse(self, status: int, reason: str, code: str, detail: str, extra: str = "") -> None:
            self.stop_timers()
            if self.cycle is not None and not self.cycle.response_started:
                self.cycle.disconnected = True  # the app's answer, if it comes, goes nowhere
                self.cycle.message_event.set()  # and a read of the body returns: the client is gone
            if not self.transport.is_closing():
                self.transport.write(_error_response(status, reason, code, detail, extra))
                self.transport.close()

        # ------------------------------------------------------------- read deadlines
        def stop_timers(self) -> None:
            for timer in (self.head_timer, self.body_timer, self.write_timer):
                if timer is not None:
                    timer.cancel()
            self.head_timer = self.body_timer = self.write_timer = None

        def head_timed_out(self) -> None:
            self.head_timer = None
            if self.in_flight():  # a pipelined head behind a running request: nothing to answer it with
                self.transport.close()
                return
            self.refuse(408, "Request Timeout", "HEADER_TIMEOUT",
                        f"the request head did not arrive within {limits.header_timeout:g} s")  # fmt: skip

        def body_timed_out(self) -> None:
            self.body_timer = None
            if self.cycle is not None and self.cycle.response_started:
                self.transport.close()  # answered without its body: the rest of it is not waited for
                return
            self.refuse(408, "Request Timeout", "BODY_TIMEOUT",
                        f"the request body did not arrive within {limits.body_timeout:g} s")  # fmt: skip

        def pause_writing(self) -> None:
            super().pause_writing()
            if self.write_timer is None:
                self.write_timer = self.loop.call_later(limits.body_timeout, self.write_timed_out)

        def resume_writing(self) -> None:
            super().resume_writing()
            if self.write_timer is not None:
                self.write_timer.cancel()
                self.write_timer = None

        def write_timed_out(self) -> None:
            self.write_timer = None
            logger.info("a client read none of its answer for %g s: connection closed", limits.body_timeout)
            self.transport.abort()  # it reads nothing: what is still buffered for it is dropped

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            # Bytes toward a next request (even ones the parser skips) start that request's head deadline.
            if (
                self.head_timer is None
                and not self.in_flight()
                and self.transport is not None
                and not self.transport.is_closing()
                and self.transport.get_protocol() is self
            ):
                self.head_timer = self.loop.call_later(limits.header_timeout, self.head_timed_out)

        def on_headers_complete(self) -> None:
            if self.head_timer is not None:
                self.head_timer.cancel()
                self.head_timer = None
            super().on_headers_complete()
            upgrading = self.parser.should_upgrade() and self._should_upgrade()
            if not upgrading and self.cycle is not None and self.cycle.more_body:
                self.body_timer = self.loop.call_later(limits.body_timeout, self.body_timed_out)

        def on_message_complete(self) -> None:
            if self.body_timer is not None:
                self.body_timer.cancel()
                self.body_timer = None
            super().on_message_complete()

        def on_response_complete(self) -> None:
            self.idle_since = self.loop.time()
            super().on_response_complete()

        def handle_websocket_upgrade(self) -> None:
            self.stop_timers()  # the WebSocket's own idle limits apply from here
            super().handle_websocket_upgrade()

        def shutdown(self) -> None:
            """The server is stopping: a request still waiting for its body will not get it in time."""
            cycle = self.cycle
            if cycle is not None and cycle.more_body and not cycle.response_started and not cycle.response_complete:
                self.refuse(503, "Service Unavailable", "SHUTTING_DOWN", "the server is stopping", "retry-after: 1\r\n")
                return
            super().shutdown()

        def connection_lost(self, exc: Exception | None) -> None:
            self.stop_timers()
            super().connection_lost(exc)

    return BoundedHttpToolsProtocol
