"""The env server's ASGI app: the endpoints of ``http_api`` on an ``app.EnvServer``, behind the access guard.

Built here, above both, because the endpoints are written against the server (``app``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import anyio
import gymnasium as gym
from starlette.applications import Starlette
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import Response

from toolbench.env_server.access import AccessGuard, cors_headers_allowed
from toolbench.env_server.app import (
    EnvServer,
    EnvServerConfig,
    error_response,
    internal_error_response,
    logger,
    new_request_id,
)
from toolbench.env_server.http_api import routes

__all__ = ["create_env_app"]


def create_env_app(config: EnvServerConfig, probe: gym.Env | None = None) -> Any:
    """The ASGI app serving ``config.env_id`` behind ``config.access``'s checks; ``probe``: an env
    already built from the same config. ``app.state.env_server`` is the ``EnvServer``."""
    server = EnvServer(config, probe)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        server.parse_limiter = anyio.CapacityLimiter(4)
        reaper = asyncio.create_task(server.reap_forever())
        try:
            yield
        finally:
            reaper.cancel()
            await server.close_all()

    async def not_found(request: Request, exc: Exception) -> Response:
        return error_response(404, f"no such endpoint: {request.method} {request.url.path[:200]}", "NOT_FOUND")

    async def wrong_method(request: Request, exc: Exception) -> Response:
        return error_response(405, f"{request.method} is not allowed on {request.url.path[:200]}", "METHOD_NOT_ALLOWED")

    async def internal(request: Request, exc: Exception) -> Response:
        # The exception's text may hold paths or state: it goes to the log, the client gets its id there
        request_id = new_request_id()
        logger.error("internal error (request id %s) on %s %s", request_id, request.method, request.url.path[:200],
                     exc_info=exc)  # fmt: skip
        return internal_error_response(request_id)

    app = Starlette(
        routes=routes(server),
        lifespan=lifespan,
        exception_handlers={404: not_found, 405: wrong_method, Exception: internal},
    )
    app.state.env_server = server
    outer: Any = app
    if config.access.allowed_origins:  # pages of an allowed origin may read the answers (CORS)
        outer = CORSMiddleware(outer, allow_origins=list(config.access.allowed_origins),
                               allow_methods=["GET", "POST", "DELETE"], allow_headers=list(cors_headers_allowed()),
                               expose_headers=["X-Session-Id"])  # fmt: skip
    guarded = AccessGuard(outer, config.access)
    guarded.state = app.state  # type: ignore[attr-defined]  # as a Starlette app's, for callers and tests
    return guarded
