"""``toolbench serve env``: a toolbench env served over OpenEnv's HTTP and WebSocket protocol.

Why uvicorn and Starlette, when ``toolbench serve SERVICE`` runs waitress: ``openenv-core``'s client
keeps its session on a WebSocket (``/ws``), which a WSGI server such as waitress cannot carry.
uvicorn (with the ``websockets`` library, and httptools to parse HTTP) is the ASGI server OpenEnv's
own server runs on, and Starlette is the toolkit under OpenEnv's FastAPI app; both are small.
"""

from __future__ import annotations

import copy
import socket
import threading
from typing import Any

import uvicorn

from toolbench.core.server import _listen
from toolbench.env_server.app import MAX_BODY, EnvServerConfig, create_env_app

__all__ = ["MAX_BODY", "EnvServerConfig", "RunningEnvServer", "create_env_app", "env_server"]


def _log_config() -> dict[str, Any]:
    """uvicorn's logging with the request lines on stderr, as ``toolbench serve``'s: stdout is the banner's."""
    log_config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    log_config["handlers"]["access"]["stream"] = "ext://sys.stderr"
    return log_config


def _uvicorn_config(app: Any, config: EnvServerConfig, connection_limit: int, keep_alive: int, log: bool) -> Any:
    return uvicorn.Config(
        app,
        lifespan="on",
        log_config=_log_config(),
        log_level="info" if log else "warning",
        access_log=log,
        http="httptools",  # uvicorn's h11 parser races its own 400 for a bad body against the app's answer
        ws="websockets-sansio",  # the websockets library without its legacy (deprecated) server
        ws_max_size=config.max_body,  # a larger WebSocket message closes the connection (1009)
        limit_concurrency=connection_limit,  # more connections or tasks at once get a 503
        timeout_keep_alive=keep_alive,
        server_header=False,
    )


class RunningEnvServer:
    """A uvicorn server on a socket bound at construction (port 0 gives a free port, read ``.port``)."""

    def __init__(
        self,
        config: EnvServerConfig,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        connection_limit: int = 1000,
        keep_alive: int = 30,
        log: bool = False,
        app: Any = None,
    ):
        self.socket: socket.socket = _listen(host, port)
        # asyncio sets TCP_NODELAY only on sockets whose proto is IPPROTO_TCP, and a socket from
        # socket.create_server has proto 0. Without it, Nagle holds the body of every keep-alive
        # answer (uvicorn writes head and body apart) until the client's delayed ACK: 40 ms a request.
        # Accepted sockets inherit the option from the listening one.
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.app = app if app is not None else create_env_app(config)
        self.server = uvicorn.Server(_uvicorn_config(self.app, config, connection_limit, keep_alive, log))
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.socket.getsockname()[1])

    @property
    def url(self) -> str:
        host = self.socket.getsockname()[0]
        return f"http://{f'[{host}]' if ':' in host else host}:{self.port}"

    def serve_forever(self) -> None:
        """Serve until Ctrl-C (uvicorn handles the signal) or ``stop()``."""
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
