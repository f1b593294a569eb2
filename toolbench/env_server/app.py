"""The env server's ASGI app: any ``toolbench/<Task>-v0`` behind OpenEnv's HTTP and WebSocket protocol.

HTTP (curl, any language): ``POST /reset`` starts a session when the request names none and answers
with its id in the ``X-Session-Id`` header (and a cookie, so cookie-keeping clients such as
``requests.Session`` and ``curl -b/-c`` follow it without code); later requests send that header.
``POST /step``, ``GET /state``, ``POST /restore``, ``GET /render`` and ``DELETE /session`` act on the
named session. ``GET /health``, ``/metadata`` and ``/schema`` (with ``tools`` and ``api_docs``) need none.

WebSocket ``/ws`` is what ``openenv-core``'s ``EnvClient`` speaks: one connection is one session,
messages ``{"type": "reset" | "step" | "state" | "close", "data": ...}`` answered with
``{"type": "observation" | "state" | "error", "data": ...}``; ``restore`` and ``schema`` are ours.

Errors are JSON ``{"detail": message, "code": CODE}`` with a 4xx status: 400 not JSON, 404 unknown
session, 409 a second request on a busy session or a step before reset, 413 a body over the
limit, 422 JSON of the wrong shape, 503 the session cap reached (with ``Retry-After``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import gymnasium as gym
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, HTTPConnection, Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from toolbench import __version__
from toolbench.core.env import ACTION_MAX_LENGTH, OBSERVATION_MAX_LENGTH
from toolbench.core.jsonsafe import to_json_safe
from toolbench.env_server import protocol
from toolbench.env_server.protocol import BadRequest
from toolbench.env_server.sessions import CapacityReached, Session, SessionError, SessionPool
from toolbench.env_server.snapshots import SnapshotError, SnapshotSigner

logger = logging.getLogger("toolbench.env_server")

SESSION_HEADER = "X-Session-Id"
SESSION_COOKIE = "toolbench_session"
MAX_BODY = 10 * 1024 * 1024  # bytes: a maximal action JSON-escaped, or a large snapshot, fits


@dataclass(frozen=True)
class EnvServerConfig:
    """What to serve and the bounds on what clients can cost."""

    env_id: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    max_sessions: int = 64
    idle_timeout: float = 600.0  # seconds before an unused HTTP session (and its env) is closed
    max_body: int = MAX_BODY
    threads: int = 8  # worker threads running env calls
    snapshot_key: bytes | None = None

    @property
    def fingerprint(self) -> str:
        return f"{self.env_id}|{json.dumps(self.env_kwargs, sort_keys=True)}"


def make_env_factory(env_id: str, env_kwargs: dict[str, Any]) -> Callable[[], gym.Env]:
    """``gym.make(env_id, **env_kwargs)``, one build at a time (fixture caches are filled on first use)."""
    lock = threading.Lock()

    def make() -> gym.Env:
        with lock:
            return gym.make(env_id, **env_kwargs)

    return make


class HttpError(Exception):
    def __init__(self, status: int, message: str, code: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.code, self.headers = status, code, headers or {}


def load_json(raw: bytes | str) -> Any:
    """Parsed JSON; anything the parser refuses (bad UTF-8, a 5,000-digit number, nesting deeper than
    the stack) is a ``ValueError`` saying so."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ValueError(f"the body is not JSON we can read: {type(exc).__name__}: {str(exc)[:200]}") from None


def json_response(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
    return Response(body, status_code=status, headers=headers, media_type="application/json")


class EnvServer:
    """Sessions of one env configuration, and the handlers that drive them."""

    def __init__(self, config: EnvServerConfig, probe: gym.Env | None = None):
        self.config = config
        make_env = make_env_factory(config.env_id, config.env_kwargs)
        self.probe = probe if probe is not None else make_env()  # validates the kwargs before serving
        base = self.probe.unwrapped
        self.task_ids = set(base._tasks_by_id)
        self.pool = SessionPool(make_env, config.max_sessions, config.idle_timeout)
        self.signer = SnapshotSigner(config.fingerprint, config.snapshot_key)
        self.limiter: anyio.CapacityLimiter | None = None  # made on the event loop (lifespan)
        self.docs_per_task = bool(getattr(base, "docs_per_task", False))
        self.shared_docs = None if self.docs_per_task else (base.api_docs(), base.tools())

    # ----------------------------------------------------------------- running env code
    async def run(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``func`` on a worker thread: env calls must not stall the event loop."""
        return await anyio.to_thread.run_sync(functools.partial(func, *args, **kwargs), limiter=self.limiter)

    async def new_session(self, kind: str) -> Session:
        self.pool.reserve()
        try:
            env = await self.run(self.pool.build_env)
        except BaseException:
            self.pool.release()
            raise
        return self.pool.add(env, kind)

    async def close_session(self, session: Session) -> None:
        try:
            await self.run(session.env.close)
        except Exception:  # closing is best effort; the session is gone either way
            logger.exception("closing the env of session %s", session.id)

    async def reap_forever(self) -> None:
        interval = min(max(self.config.idle_timeout / 4, 0.05), 5.0)
        while True:
            await asyncio.sleep(interval)
            for session in self.pool.idle_http_sessions():
                logger.info("session %s idle for %g s: closed", session.id, self.config.idle_timeout)
                await self.close_session(session)

    # ----------------------------------------------------------------- env calls, shared by HTTP and WS
    async def reset(self, session: Session, params: protocol.ResetParams) -> dict[str, Any]:
        options = {"task_id": params.task_id} if params.task_id else None
        observation, info = await self.run(session.base.reset, seed=params.seed, options=options)
        session.episode_id, session.step_count = params.episode_id, 0
        return protocol.step_result(observation, None, False, False, info)

    async def step(self, session: Session, action: str) -> dict[str, Any]:
        if session.base.task is None:
            raise HttpError(409, "the session has no episode yet: POST /reset first", "RESET_NEEDED")
        observation, reward, terminated, truncated, info = await self.run(session.base.step, action)
        session.step_count += 1
        return protocol.step_result(observation, reward, terminated, truncated, info)

    def summary(self, session: Session) -> dict[str, Any]:
        base = session.base
        return {
            "episode_id": session.episode_id,
            "step_count": session.step_count,
            "task_id": base.task.id if base.task is not None else None,
            "done": bool(base._done),
        }

    async def state(self, session: Session) -> dict[str, Any]:
        state = await self.run(session.base.get_state)
        snapshot = {"env": state, "episode_id": session.episode_id, "step_count": session.step_count}
        return {**self.summary(session), "snapshot": await self.run(self.signer.dump, snapshot)}

    async def restore(self, session: Session, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict) or set(body) != {"snapshot"}:
            raise BadRequest('the restore body is {"snapshot": "<the snapshot field of GET /state>"}')
        try:
            snapshot = await self.run(self.signer.load, body["snapshot"])
        except SnapshotError as exc:
            raise BadRequest(str(exc)) from None
        await self.run(session.base.set_state, snapshot["env"])
        session.episode_id, session.step_count = snapshot["episode_id"], snapshot["step_count"]
        return self.summary(session)

    def schema(self, session: Session | None) -> dict[str, Any]:
        base = session.base if session is not None else self.probe.unwrapped
        if self.shared_docs is not None:
            api_docs, tools = self.shared_docs
        elif session is not None and base.task is not None:
            api_docs, tools = base.api_docs(), base.tools()
        else:  # the docs depend on the episode's task: ask with a session that has one
            api_docs, tools = None, None
        return {
            "env_id": self.config.env_id,
            "env_kwargs": to_json_safe(self.config.env_kwargs, "env_kwargs"),
            "mode": base.mode,
            "split": base.split,
            "max_steps": base.max_steps,
            "num_tasks": len(self.task_ids),
            "docs_per_task": self.docs_per_task,
            "action_max_length": ACTION_MAX_LENGTH,
            "observation_max_length": OBSERVATION_MAX_LENGTH,
            "action": protocol.ACTION_SCHEMA,
            "observation": protocol.OBSERVATION_SCHEMA,
            "state": protocol.STATE_SCHEMA,
            "api_docs": api_docs,
            "tools": to_json_safe(tools, "tools"),
        }

    def metadata(self) -> dict[str, Any]:
        doc = (type(self.probe.unwrapped).__doc__ or "").strip()
        return {
            "name": self.config.env_id,
            "description": doc.splitlines()[0] if doc else self.config.env_id,
            "readme_content": None,
            "version": __version__,
            "author": None,
            "documentation_url": None,
        }


# --------------------------------------------------------------------- HTTP
def _session_id(connection: HTTPConnection) -> str | None:
    return connection.headers.get(SESSION_HEADER) or connection.cookies.get(SESSION_COOKIE) or None


async def _read_json(request: Request, limit: int, allow_empty: bool = False) -> Any:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HttpError(413, f"the body is {declared} bytes; the limit is {limit}", "BODY_TOO_LARGE")
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise HttpError(413, f"the body is over the limit of {limit} bytes", "BODY_TOO_LARGE")
            chunks.append(chunk)
    except ClientDisconnect:  # the client left, or the server refused its framing: nobody to answer
        raise HttpError(400, "the body did not arrive whole", "INCOMPLETE_BODY") from None
    raw = b"".join(chunks)
    if not raw.strip() and allow_empty:
        return None
    try:
        return load_json(raw)
    except ValueError as exc:
        raise HttpError(400, str(exc), "INVALID_JSON") from None


def _session_headers(session_id: str) -> dict[str, str]:
    return {
        SESSION_HEADER: session_id,
        "Set-Cookie": f"{SESSION_COOKIE}={session_id}; Path=/; HttpOnly; SameSite=Strict",
    }


def _error(status: int, message: str, code: str, headers: dict[str, str] | None = None) -> Response:
    return json_response({"detail": message, "code": code}, status, headers)


def _handler(server: EnvServer, needs_session: bool, call: Callable[..., Any]) -> Callable[[Request], Any]:
    """An endpoint: errors become 4xx JSON; with ``needs_session`` the named session is claimed for the call."""

    async def endpoint(request: Request) -> Response:
        session: Session | None = None
        try:
            if needs_session:
                session_id = _session_id(request)
                if session_id is None:
                    raise HttpError(400, f"no session: send the {SESSION_HEADER} header that /reset returned",
                                    "NO_SESSION")  # fmt: skip
                session = server.pool.claim(session_id)
            return await call(request, session)
        except HttpError as exc:
            return _error(exc.status, str(exc), exc.code, exc.headers)
        except BadRequest as exc:
            return _error(exc.status, str(exc), exc.code)
        except SessionError as exc:
            headers = {"Retry-After": "1"} if isinstance(exc, CapacityReached) else {}
            if exc.status == 404:  # a stale cookie would otherwise name the lost session forever
                headers["Set-Cookie"] = f"{SESSION_COOKIE}=; Path=/; Max-Age=0"
            return _error(exc.status, str(exc), exc.code, headers)
        finally:
            if session is not None:
                server.pool.done_with(session)

    return endpoint


def _routes(server: EnvServer) -> list[Any]:
    limit = server.config.max_body

    async def reset(request: Request, _: None) -> Response:
        params = protocol.parse_reset(await _read_json(request, limit, allow_empty=True), server.task_ids)
        session_id = _session_id(request)
        created = session_id is None
        if created:
            session = await server.new_session("http")
            session.busy = True
        else:
            session = server.pool.claim(session_id)
        try:
            result = await server.reset(session, params)
        except BaseException:
            if created:  # its id never reached the client: nobody could use or close it
                server.pool.remove(session.id)
                await server.close_session(session)
            raise
        finally:
            server.pool.done_with(session)
        return json_response({**result, "session_id": session.id}, headers=_session_headers(session.id))

    async def step(request: Request, session: Session) -> Response:
        action = protocol.parse_step(await _read_json(request, limit))
        return json_response(await server.step(session, action))

    async def state(request: Request, session: Session) -> Response:
        return json_response(await server.state(session))

    async def restore(request: Request, session: Session) -> Response:
        return json_response(await server.restore(session, await _read_json(request, limit)))

    async def render(request: Request, session: Session) -> Response:
        # The transcript whatever the served render_mode: a client asking for "ansi" gets it.
        return json_response({"render": await server.run(session.base.ansi_transcript)})

    async def close(request: Request, _: None) -> Response:
        session_id = _session_id(request)
        if session_id is None:
            raise HttpError(400, f"no session: send the {SESSION_HEADER} header", "NO_SESSION")
        session = server.pool.claim(session_id)  # not while a step runs on it
        server.pool.remove(session_id)
        await server.close_session(session)
        return json_response({"closed": session_id}, headers={"Set-Cookie": f"{SESSION_COOKIE}=; Path=/; Max-Age=0"})

    async def health(request: Request, _: None) -> Response:
        pool = server.pool
        body = {"status": "healthy", "env_id": server.config.env_id, "sessions": len(pool),
                "max_sessions": pool.max_sessions}  # fmt: skip
        return json_response(body)

    async def schema(request: Request, _: None) -> Response:
        session_id = _session_id(request)
        session = server.pool.get(session_id) if session_id else None
        return json_response(server.schema(session))

    async def metadata(request: Request, _: None) -> Response:
        return json_response(server.metadata())

    def route(path: str, call: Callable[..., Any], method: str, needs_session: bool) -> Route:
        return Route(path, _handler(server, needs_session, call), methods=[method])

    return [
        route("/reset", reset, "POST", False),
        route("/step", step, "POST", True),
        route("/state", state, "GET", True),
        route("/restore", restore, "POST", True),
        route("/render", render, "GET", True),
        route("/session", close, "DELETE", False),
        route("/health", health, "GET", False),
        route("/schema", schema, "GET", False),
        route("/metadata", metadata, "GET", False),
        WebSocketRoute("/ws", functools.partial(_websocket, server)),
    ]


# --------------------------------------------------------------------- WebSocket (openenv-core's EnvClient)
def _ws_error(message: str, code: str) -> dict[str, Any]:
    return {"type": "error", "data": {"message": message, "code": code}}


SESSION_MESSAGES = ("reset", "step", "state", "restore")


async def _ws_reply(server: EnvServer, session: Session | None, message: Any) -> dict[str, Any]:
    """The answer to one parsed message (``close`` is handled by the caller)."""
    if not isinstance(message, dict):
        raise BadRequest('a message is a JSON object {"type": ..., "data": ...}')
    kind, data = message.get("type"), message.get("data")
    if kind not in ("reset", "step", "state", "restore", "schema"):
        raise BadRequest(f"unknown message type {str(kind)[:64]!r}; known: reset, step, state, restore, schema, close",
                         code="UNKNOWN_TYPE")  # fmt: skip
    if kind == "schema":
        return {"type": "schema", "data": server.schema(session)}
    assert session is not None  # the caller makes one before any other message
    if kind == "reset":
        return {"type": "observation", "data": await server.reset(session, protocol.parse_reset(data, server.task_ids))}
    if kind == "step":
        action = data["action"] if isinstance(data, dict) and "action" in data else data
        return {"type": "observation", "data": await server.step(session, protocol.parse_action(action))}
    if kind == "state":
        return {"type": "state", "data": await server.state(session)}
    return {"type": "state", "data": await server.restore(session, data)}


async def _websocket(server: EnvServer, websocket: WebSocket) -> None:
    """One connection, one session. Its env is built at the first message that needs it, so a full
    server answers that message with a CAPACITY_REACHED error (which OpenEnv's client raises) and the
    client may retry on the same connection."""

    async def send(reply: dict[str, Any]) -> None:
        await websocket.send_text(json.dumps(reply, ensure_ascii=False, allow_nan=False, separators=(",", ":")))

    await websocket.accept()
    session: Session | None = None
    try:
        while True:
            try:
                with anyio.fail_after(server.config.idle_timeout):
                    raw = await websocket.receive_text()
            except TimeoutError:
                message = f"the session was idle for {server.config.idle_timeout:g} s and is closed"
                await send(_ws_error(message, "IDLE_TIMEOUT"))
                await websocket.close(code=1001)
                return
            try:
                message = load_json(raw)
            except ValueError as exc:
                await send(_ws_error(str(exc), "INVALID_JSON"))
                continue
            if isinstance(message, dict) and message.get("type") == "close":
                break
            try:
                if session is None and isinstance(message, dict) and message.get("type") in SESSION_MESSAGES:
                    session = await server.new_session("ws")
                reply = await _ws_reply(server, session, message)
            except (BadRequest, HttpError, SessionError) as exc:
                reply = _ws_error(str(exc), exc.code)
            except Exception as exc:  # a bug of ours: reported to this client, the session goes on
                logger.exception("internal error in a WebSocket session")
                reply = _ws_error(f"internal error in the env server ({type(exc).__name__}: {exc})", "EXECUTION_ERROR")
            await send(reply)
        await websocket.close()
    except WebSocketDisconnect:
        pass
    finally:
        if session is not None:
            server.pool.remove(session.id)
            await server.close_session(session)


# --------------------------------------------------------------------- the app
def create_env_app(config: EnvServerConfig, probe: gym.Env | None = None) -> Starlette:
    """The ASGI app serving ``config.env_id``; ``probe``: an env already built from the same config."""
    server = EnvServer(config, probe)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        server.limiter = anyio.CapacityLimiter(config.threads)
        reaper = asyncio.create_task(server.reap_forever())
        try:
            yield
        finally:
            reaper.cancel()
            for session in server.pool.take_all():
                await server.close_session(session)
            await server.run(server.probe.close)

    async def not_found(request: Request, exc: Exception) -> Response:
        return _error(404, f"no such endpoint: {request.method} {request.url.path[:200]}", "NOT_FOUND")

    async def wrong_method(request: Request, exc: Exception) -> Response:
        return _error(405, f"{request.method} is not allowed on {request.url.path[:200]}", "METHOD_NOT_ALLOWED")

    async def internal(request: Request, exc: Exception) -> Response:
        logger.exception("internal error on %s %s", request.method, request.url.path)
        return _error(500, f"internal error in the env server ({type(exc).__name__}: {exc})", "INTERNAL_ERROR")

    app = Starlette(
        routes=_routes(server),
        lifespan=lifespan,
        exception_handlers={404: not_found, 405: wrong_method, Exception: internal},
    )
    app.state.env_server = server
    return app
