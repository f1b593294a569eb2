"""``toolbench serve env``: a toolbench env served over OpenEnv's HTTP and WebSocket protocol.

Why uvicorn and Starlette, when ``toolbench serve SERVICE`` runs waitress: ``openenv-core``'s client
keeps its session on a WebSocket (``/ws``), which a WSGI server such as waitress cannot carry.
uvicorn (with the ``websockets`` library, and httptools to parse HTTP) is the ASGI server OpenEnv's
own server runs on, and Starlette is the toolkit under OpenEnv's FastAPI app; both are small.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import socket
import threading
from typing import Any

import uvicorn

from toolbench.core.server import _listen
from toolbench.env_server.access import AccessPolicy, is_loopback
from toolbench.env_server.app import MAX_BODY, EnvServerConfig
from toolbench.env_server.asgi import create_env_app
from toolbench.env_server.connections import (
    ConnectionGuard,
    ConnectionLimits,
    bounded_protocol,
    default_max_connections,
    raise_descriptor_limit,
)
from toolbench.env_server.loop_errors import install_accept_error_limiter
from toolbench.env_server.websocket_connections import bounded_websocket_protocol

__all__ = [
    "MAX_BODY",
    "AccessPolicy",
    "EnvServerConfig",
    "ExposureRefused",
    "RunningEnvServer",
    "bound_config",
    "create_env_app",
    "env_server",
]


class ExposureRefused(ValueError):
    """A configuration that would expose the server beyond this machine without a token."""


def _log_config() -> dict[str, Any]:
    """uvicorn's logging with the request lines on stderr, as ``toolbench serve``'s: stdout is the banner's."""
    log_config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    log_config["handlers"]["access"]["stream"] = "ext://sys.stderr"
    return log_config


def bound_config(config: EnvServerConfig, host: str) -> EnvServerConfig:
    """``config`` with its access policy bound to ``host``; refused when ``host`` is not loopback and no
    token is required."""
    access = config.access
    if access.bound != host:
        access = dataclasses.replace(access, bound=host)
    if not is_loopback(host) and access.token is None:
        raise ExposureRefused(
            f"binding {host} exposes the server beyond this machine, where anyone who reaches it could run "
            "episodes and read their state: give it a token (--token-file PATH, or the TOOLBENCH_TOKEN "
            "environment variable), or bind 127.0.0.1"
        )
    return config if access is config.access else dataclasses.replace(config, access=access)


class _Server(uvicorn.Server):
    """uvicorn's server, with accept errors logged once per interval rather than once per attempt."""

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        install_accept_error_limiter(asyncio.get_running_loop())
        await super().serve(sockets)


class RunningEnvServer:
    """A uvicorn server on a socket bound at construction (port 0 gives a free port, read ``.port``)."""

    def __init__(
        self, config: EnvServerConfig, host: str = "127.0.0.1", port: int = 0, *, log: bool = False, app: Any = None
    ):
        self.config = config = bound_config(config, host)
        wanted = config.max_connections or default_max_connections(config.max_sessions)
        self.max_connections = raise_descriptor_limit(wanted)
        self.socket: socket.socket = _listen(host, port)
        # asyncio sets TCP_NODELAY only on sockets whose proto is IPPROTO_TCP, and a socket from
        # socket.create_server has proto 0. Without it, Nagle holds the body of every keep-alive
        # answer (uvicorn writes head and body apart) until the client's delayed ACK: 40 ms a request.
        # Accepted sockets inherit the option from the listening one.
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.app = app if app is not None else create_env_app(config)
        limits = ConnectionLimits(
            self.max_connections,
            config.header_timeout,
            config.body_timeout,
            config.min_body_rate,
            config.body_rate_grace,
            config.max_buffered_output,
        )
        guard = ConnectionGuard(limits)
        self.server = _Server(
            uvicorn.Config(
                self.app,
                lifespan="on",
                log_config=_log_config(),
                log_level="info" if log else "warning",
                access_log=log,
                # uvicorn's httptools protocol, with deadlines on heads and bodies and a connection cap
                # that idle sockets cannot fill (connections.py); h11's parser also races its own 400
                # for a bad body against the app's answer
                http=bounded_protocol(limits, guard),
                # the websockets library without its legacy (deprecated) server, bounded as the HTTP protocol is
                ws=bounded_websocket_protocol(limits, guard),
                ws_max_size=config.max_body,  # a larger WebSocket message closes the connection (1009)
                ws_per_message_deflate=False,  # a message's size on the wire is its size: no 1000x inflation
                timeout_keep_alive=max(1, round(config.connection_idle)),
                timeout_graceful_shutdown=max(1, round(config.shutdown_grace)),
                server_header=False,
            )
        )
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.socket.getsockname()[1])

    @property
    def url(self) -> str:
        host = self.socket.getsockname()[0]
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}"

    def exposure(self) -> dict[str, Any]:
        """What the server lets in, as ``GET /health`` reports it."""
        return {**self.config.exposure(), "port": self.port, "max_connections": self.max_connections}

    def serve_forever(self) -> None:
        """Serve until Ctrl-C or SIGTERM (uvicorn handles both) or ``stop()``."""
        self.server.run(sockets=[self.socket])

    def start(self) -> RunningEnvServer:
        """Serve in a daemon thread (tests, benchmarks); returns once the server accepts connections."""
        self._thread = threading.Thread(target=self.serve_forever, name="toolbench-env-server", daemon=True)
        self._thread.start()
        while not self.server.started and self._thread.is_alive():
            threading.Event().wait(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.socket.close()

    def __enter__(self) -> RunningEnvServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def env_server(config: EnvServerConfig, host: str = "127.0.0.1", port: int = 0, **options: Any) -> RunningEnvServer:
    """A ready-to-run env server (``with env_server(config) as s: ... s.url``)."""
    return RunningEnvServer(config, host, port, **options)
