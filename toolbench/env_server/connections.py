"""Bounded HTTP connections: uvicorn's httptools protocol with a time limit on every read, a minimum body rate,
a connection cap that junk cannot fill, and no connection that outlives what it costs.

uvicorn times out only idle keep-alive connections, and only after a first answer: a connection that
sends nothing, or half a request head, or a body that never ends, stays open for ever, and its
``limit_concurrency`` then answers 503 to everyone once such sockets fill it. Here:

- a request head must arrive whole within ``header_timeout`` seconds of the connection (or of the
  first byte of a keep-alive connection's next request): else 408 and the connection closes;
- a request body must arrive whole within ``body_timeout`` seconds of its head, however it trickles,
  and after ``body_rate_grace`` seconds it must have averaged ``min_body_rate`` bytes a second since
  its head: else 408 (``BODY_TIMEOUT``, ``BODY_TOO_SLOW``) and the connection closes;
- a client that stops reading its answers (the server's write buffer full, or not shrinking) for
  ``body_timeout`` seconds loses the connection, also once the server has closed its side: closing
  waits for the buffer to drain, so a connection whose client reads nothing would otherwise stay;
- all the answers waiting in write buffers together stay under ``max_buffered_output``: past it the
  connections whose clients do not keep up, largest buffer first, are cut;
- at ``max_connections`` (every open connection counts, closing ones too, until they are gone), a new
  connection cuts one that holds the least (``guard.eviction_rank``): first one already closing, then
  junk (a connection never served, or served only without the token, a body slower than the minimum
  rate, a WebSocket without a session), the one idle the longest first, then a keep-alive connection
  that was served, idle the longest. A connection whose request is running or arriving at a fair rate,
  and a WebSocket holding a session, is never cut; when only those are left the new one is refused
  (503, ``Retry-After``). Cutting is ``transport.abort()``: the connection is gone at once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import resource
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from toolbench.env_server.access import AUTHENTICATED

logger = logging.getLogger("toolbench.env_server")

FD_MARGIN = 256  # descriptors besides the sockets: the envs' files, sandbox pipes, logs
SWEEP_EVERY = 0.5  # seconds between looks at every connection's write buffer
EVICTION_ALLOWANCE = 0.05  # seconds a body may lag behind the minimum rate before it is evictable
#: Set in a WebSocket's ASGI scope (the dict its protocol holds) once the connection has a session:
#: until then it is as idle as a keep-alive socket, and may be closed at the connection cap.
HOLDS_SESSION = "toolbench.holds_session"
#: Eviction tiers: the lower goes first.
CLOSING, JUNK, SERVED = 0, 1, 2


def mark_holds_session(scope: dict[str, Any], holds: bool = True) -> None:
    scope[HOLDS_SESSION] = holds


@dataclass(frozen=True)
class ConnectionLimits:
    """The server's bounds on its connections (``EnvServerConfig`` holds their defaults)."""

    max_connections: int
    header_timeout: float
    body_timeout: float
    min_body_rate: float  # bytes a second a body must average, once past its grace
    body_rate_grace: float  # seconds a body may take before its rate is held to the minimum
    max_buffered_output: int  # bytes of answers waiting in all write buffers together


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


class ConnectionGuard:
    """What the connections of one server share: the cap and whom it cuts, and a periodic look at every
    write buffer (a stalled one is cut; the total is held under its limit)."""

    def __init__(self, limits: ConnectionLimits):
        self.limits = limits
        self.connections: set[Any] | None = None  # uvicorn's set of open connections, known at the first one
        self._sweeper: asyncio.TimerHandle | None = None
        self._progress: dict[int, tuple[int, float]] = {}  # id(transport) -> (buffered bytes, since when)

    # ------------------------------------------------------------- the cap
    def admit(self, newcomer: Any) -> bool:
        """Whether ``newcomer`` may stay: at the cap, the connection holding the least is cut for it."""
        self.connections = newcomer.connections
        self._start_sweeping(newcomer.loop)
        others = [c for c in self.connections if c is not newcomer]
        if len(others) < self.limits.max_connections:
            return True
        now = newcomer.loop.time()
        ranked = [(rank, c) for c in others if (rank := eviction_rank(c, now, self.limits)) is not None]
        if not ranked:
            return False
        _, victim = min(ranked, key=lambda pair: pair[0])
        logger.info("connection cap reached: cutting the connection that holds the least")
        abort(victim)
        return True

    # ------------------------------------------------------------- write buffers
    def _start_sweeping(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._sweeper is None:
            self._sweeper = loop.call_later(SWEEP_EVERY, self._sweep, loop)

    def _sweep(self, loop: asyncio.AbstractEventLoop) -> None:
        self._sweeper = loop.call_later(SWEEP_EVERY, self._sweep, loop)
        self.check_buffers(loop.time())

    def check_buffers(self, now: float) -> None:
        """Cut a connection whose write buffer has not shrunk for ``body_timeout`` seconds (its client reads
        nothing), and, while all buffers together hold more than ``max_buffered_output``, the paused ones
        (clients not keeping up), the largest first."""
        live = [c for c in (self.connections or ()) if getattr(c, "transport", None) is not None]
        progress: dict[int, tuple[int, float]] = {}
        total = 0
        for connection in live:
            transport = connection.transport
            size = transport.get_write_buffer_size()
            total += size
            if not size:
                continue
            before, since = self._progress.get(id(transport), (size + 1, now))
            since = now if size < before else since
            progress[id(transport)] = (size, since)
            if now - since >= self.limits.body_timeout:
                logger.info("a client read none of its answer for %g s: connection cut", self.limits.body_timeout)
                abort(connection)
                total -= size
        self._progress = progress
        if total > self.limits.max_buffered_output:
            paused = sorted((c for c in live if _writes_paused(c) and not c.transport.is_closing()),
                            key=lambda c: c.transport.get_write_buffer_size(), reverse=True)  # fmt: skip
            for connection in paused:
                if total <= self.limits.max_buffered_output:
                    break
                total -= connection.transport.get_write_buffer_size()
                logger.warning("answers waiting for slow readers passed %d bytes: cutting the largest",
                               self.limits.max_buffered_output)  # fmt: skip
                abort(connection)


def _writes_paused(connection: Any) -> bool:
    flow = getattr(connection, "flow", None)
    if flow is not None:
        return bool(flow.write_paused)
    writable = getattr(connection, "writable", None)  # a WebSocket protocol
    return writable is not None and not writable.is_set()


def abort(connection: Any) -> None:
    """The connection gone at once, whatever its buffer holds (``close()`` would wait for it to drain)."""
    stop = getattr(connection, "stop_timers", None)
    if stop is not None:
        stop()
    transport = connection.transport
    if transport is not None:
        transport.abort()


def eviction_rank(connection: Any, now: float, limits: ConnectionLimits) -> tuple[int, float] | None:
    """Where ``connection`` stands in the order of eviction (lowest first), or ``None`` if it is never cut."""
    transport = getattr(connection, "transport", None)
    if transport is None:
        return None
    if transport.is_closing():
        return (CLOSING, 0.0)
    rank = getattr(connection, "eviction_rank", None)
    return rank(now, limits) if rank is not None else None


def bounded_protocol(limits: ConnectionLimits, guard: ConnectionGuard) -> type[HttpToolsProtocol]:
    """uvicorn's httptools protocol with ``limits`` (pass it as ``uvicorn.Config(http=...)``)."""

    class BoundedHttpToolsProtocol(HttpToolsProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.idle_since = self.loop.time()
            self.served = False  # a request of this connection was answered (with the token, where one is set)
            self.body_began = 0.0
            self.body_received = 0
            self.head_timer: asyncio.TimerHandle | None = None
            self.body_timer: asyncio.TimerHandle | None = None
            self.rate_timer: asyncio.TimerHandle | None = None
            self.write_timer: asyncio.TimerHandle | None = None

        # ------------------------------------------------------------- the connection cap
        def in_flight(self) -> bool:
            return bool(self.pipeline) or (self.cycle is not None and not self.cycle.response_complete)

        def receiving_body(self) -> bool:
            cycle = self.cycle
            return cycle is not None and cycle.more_body and not cycle.response_complete and self.body_timer is not None

        def body_too_slow(self, now: float) -> bool:
            elapsed = now - self.body_began
            return not self.flow.read_paused and self.body_received < limits.min_body_rate * elapsed

        def eviction_rank(self, now: float, limits: ConnectionLimits) -> tuple[int, float] | None:
            if self.in_flight():
                # Not after a second only: flooders that reconnect as fast as they are cut would all be younger
                slow = self.receiving_body() and self.body_too_slow(now - EVICTION_ALLOWANCE)
                return (JUNK, self.body_began) if slow else None
            return (SERVED if self.served else JUNK, self.idle_since)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if not guard.admit(self):
                self.refuse(503, "Service Unavailable", "TOO_MANY_CONNECTIONS",
                            f"the server holds its maximum of {limits.max_connections} connections, each with a "
                            "request running or a session; retry shortly", "retry-after: 1\r\n")  # fmt: skip
                return
            self.head_timer = self.loop.call_later(limits.header_timeout, self.head_timed_out)

        def refuse(self, status: int, reason: str, code: str, detail: str, extra: str = "") -> None:
            """Answer ``status`` and close; the guard cuts the connection if its client does not read it."""
            self.stop_timers()
            if self.cycle is not None and not self.cycle.response_started:
                self.cycle.disconnected = True  # the app's answer, if it comes, goes nowhere
                self.cycle.message_event.set()  # and a read of the body returns: the client is gone
            if not self.transport.is_closing():
                self.transport.write(_error_response(status, reason, code, detail, extra))
                self.transport.close()

        # ------------------------------------------------------------- read deadlines
        def stop_timers(self) -> None:
            for timer in (self.head_timer, self.body_timer, self.rate_timer, self.write_timer):
                if timer is not None:
                    timer.cancel()
            self.head_timer = self.body_timer = self.rate_timer = self.write_timer = None

        def head_timed_out(self) -> None:
            self.head_timer = None
            if self.in_flight():  # a pipelined head behind a running request: nothing to answer it with
                abort(self)
                return
            self.refuse(408, "Request Timeout", "HEADER_TIMEOUT",
                        f"the request head did not arrive within {limits.header_timeout:g} s")  # fmt: skip

        def body_timed_out(self) -> None:
            self.body_timer = None
            if self.cycle is not None and self.cycle.response_started:
                abort(self)  # answered without its body: the rest of it is not waited for
                return
            self.refuse(408, "Request Timeout", "BODY_TIMEOUT",
                        f"the request body did not arrive within {limits.body_timeout:g} s")  # fmt: skip

        def check_body_rate(self) -> None:
            self.rate_timer = None
            if not self.receiving_body():
                return
            if not self.body_too_slow(self.loop.time()):
                self.rate_timer = self.loop.call_later(1.0, self.check_body_rate)
                return
            if self.cycle is not None and self.cycle.response_started:
                abort(self)
                return
            self.refuse(408, "Request Timeout", "BODY_TOO_SLOW",
                        f"the request body arrived slower than {limits.min_body_rate:g} bytes a second")  # fmt: skip

        def pause_writing(self) -> None:
            super().pause_writing()
            if self.write_timer is None:
                self.write_timer = self.loop.call_later(limits.body_timeout, self.write_timed_out)
            guard.check_buffers(self.loop.time())

        def resume_writing(self) -> None:
            super().resume_writing()
            if self.write_timer is not None:
                self.write_timer.cancel()
                self.write_timer = None

        def write_timed_out(self) -> None:
            self.write_timer = None
            logger.info("a client read none of its answer for %g s: connection cut", limits.body_timeout)
            abort(self)  # it reads nothing: what is still buffered for it is dropped

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
                self.body_began, self.body_received = self.loop.time(), 0
                self.body_timer = self.loop.call_later(limits.body_timeout, self.body_timed_out)
                self.rate_timer = self.loop.call_later(limits.body_rate_grace, self.check_body_rate)

        def on_body(self, body: bytes) -> None:
            self.body_received += len(body)
            super().on_body(body)

        def on_message_complete(self) -> None:
            for timer in (self.body_timer, self.rate_timer):
                if timer is not None:
                    timer.cancel()
            self.body_timer = self.rate_timer = None
            super().on_message_complete()

        def on_response_complete(self) -> None:
            self.idle_since = self.loop.time()
            if self.cycle is not None and self.cycle.scope.get(AUTHENTICATED):
                self.served = True
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
