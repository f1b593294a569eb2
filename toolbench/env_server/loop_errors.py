"""The event loop's errors in accepting connections, logged once per interval instead of once per attempt.

Out of descriptors (EMFILE) or memory, asyncio's accept loop logs a traceback for every attempt, up to the
listen backlog each time the socket is readable: hundreds of megabytes of the same traceback a minute,
which fill the disk while the server can do nothing about the cause. One line per interval says the same.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

logger = logging.getLogger("toolbench.env_server")

ACCEPT_ERROR = "socket.accept() out of system resource"  # asyncio's message for EMFILE, ENFILE, ENOBUFS, ENOMEM


class AcceptErrorLimiter:
    """A loop exception handler: accept errors logged at most once per ``interval`` seconds (with how many
    there were); every other error to the handler it replaces."""

    def __init__(self, loop: asyncio.AbstractEventLoop, interval: float = 10.0):
        self.loop = loop
        self.interval = interval
        self.previous = loop.get_exception_handler()
        self.last_logged: float | None = None
        self.unlogged = 0

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") != ACCEPT_ERROR:
            if self.previous is not None:
                self.previous(loop, context)
            else:
                loop.default_exception_handler(context)
            return
        self.unlogged += 1
        now = loop.time()
        if self.last_logged is not None and now - self.last_logged < self.interval:
            return
        logger.error("cannot accept connections: %s (%d time(s) since the last report); new clients wait until "
                     "connections close", context.get("exception"), self.unlogged)  # fmt: skip
        self.last_logged, self.unlogged = now, 0


def install_accept_error_limiter(loop: asyncio.AbstractEventLoop, interval: float = 10.0) -> AcceptErrorLimiter:
    limiter = AcceptErrorLimiter(loop, interval)
    loop.set_exception_handler(limiter)
    return limiter
