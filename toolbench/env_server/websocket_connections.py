"""Bounded WebSocket connections: uvicorn's websockets-sansio protocol that stops reading while its writes are
paused, cuts a client that reads nothing, and takes its place in the connection cap's order.

uvicorn answers every ping with a pong at once, whether or not the client reads: a client that sends
pings and reads nothing grows the server's write buffer without bound. And a handler that sends to a
client that reads nothing waits in ``send()`` for ever, holding its session. Here:

- while the write buffer is over its high-water mark, nothing more is read from the client (no more
  pings answered, no more requests taken), so what one connection buffers stays near that mark;
- a connection whose writes stay paused for ``body_timeout`` seconds is cut (``transport.abort()``): a
  handler waiting in ``send()`` then sees the client gone, and its session is closed.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from toolbench.env_server.connections import (
    HOLDS_SESSION,
    JUNK,
    ConnectionGuard,
    ConnectionLimits,
    abort,
    logger,
)

#: Set in a WebSocket's ASGI scope: cuts the connection at once (for a handler whose send cannot finish).
ABORT_CONNECTION = "toolbench.abort_connection"


def bounded_websocket_protocol(limits: ConnectionLimits, guard: ConnectionGuard) -> type[WebSocketsSansIOProtocol]:
    """uvicorn's websockets-sansio protocol with ``limits`` (pass it as ``uvicorn.Config(ws=...)``)."""

    class BoundedWebSocketProtocol(WebSocketsSansIOProtocol):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.opened = self.loop.time()
            self.reading_paused_for_writes = False
            self.write_timer: asyncio.TimerHandle | None = None

        def eviction_rank(self, now: float, limits: ConnectionLimits) -> tuple[int, float] | None:
            scope = getattr(self, "scope", None)
            holds_session = isinstance(scope, dict) and scope.get(HOLDS_SESSION)
            return None if holds_session else (JUNK, self.opened)

        def handle_connect(self, event: Any) -> None:
            super().handle_connect(event)
            scope = getattr(self, "scope", None)
            if isinstance(scope, dict):
                scope[ABORT_CONNECTION] = lambda: abort(self)

        def pause_writing(self) -> None:
            super().pause_writing()
            if not self.transport.is_closing():
                self.transport.pause_reading()
                self.reading_paused_for_writes = True
            if self.write_timer is None:
                self.write_timer = self.loop.call_later(limits.body_timeout, self.write_timed_out)
            guard.check_buffers(self.loop.time())

        def resume_writing(self) -> None:
            super().resume_writing()
            self.stop_timers()
            if self.reading_paused_for_writes:
                self.reading_paused_for_writes = False
                if not self.read_paused and not self.transport.is_closing():
                    self.transport.resume_reading()

        async def receive(self) -> Any:
            # uvicorn's, except that reading stays paused while writes are
            message = await self.queue.get()
            if self.read_paused and self.queue.empty():
                self.read_paused = False
                if not self.reading_paused_for_writes:
                    self.transport.resume_reading()
            return message

        def write_timed_out(self) -> None:
            self.write_timer = None
            logger.info("a WebSocket client read nothing for %g s: connection cut", limits.body_timeout)
            abort(self)

        def stop_timers(self) -> None:
            if self.write_timer is not None:
                self.write_timer.cancel()
                self.write_timer = None

        def connection_lost(self, exc: Exception | None) -> None:
            self.stop_timers()
            super().connection_lost(exc)

    return BoundedWebSocketProtocol
