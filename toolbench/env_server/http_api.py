"""The env server's endpoints: HTTP routes and the WebSocket ``/ws``.

A request's body is read whole (within ``--max-body``; the connection layer bounds how long it may
take) and parsed before its session is claimed, so a body that never finishes holds no session: the
session stays free for its other requests, ``DELETE /session`` and the idle reaper.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

import anyio
from starlette.requests import ClientDisconnect, HTTPConnection, Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from toolbench.env_server import protocol
from toolbench.env_server.access import AUTHENTICATED
from toolbench.env_server.app import (
    EnvServer,
    error_response,
    internal_error_message,
    json_response,
    logger,
    new_request_id,
)
from toolbench.env_server.connections import mark_holds_session
from toolbench.env_server.protocol import BadRequest, json_bytes, json_text
from toolbench.env_server.sessions import CapacityReached, Session, SessionError
from toolbench.env_server.websocket_connections import ABORT_CONNECTION

SESSION_HEADER = "X-Session-Id"
SESSION_COOKIE = "toolbench_session"
CLEAR_COOKIE = f"{SESSION_COOKIE}=; Path=/; Max-Age=0"
NO_BODY = object()


def _session_id(connection: HTTPConnection) -> str | None:
    return connection.headers.get(SESSION_HEADER) or connection.cookies.get(SESSION_COOKIE) or None


async def _read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BadRequest(f"the body is {declared} bytes; the limit is {limit}", 413, "BODY_TOO_LARGE")
    chunks, size = [], 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise BadRequest(f"the body is over the limit of {limit} bytes", 413, "BODY_TOO_LARGE")
            chunks.append(chunk)
    except ClientDisconnect:  # the client left, or its body was too slow: nobody to answer
        raise BadRequest("the body did not arrive whole", 400, "INCOMPLETE_BODY") from None
    return b"".join(chunks)


def _session_headers(session_id: str) -> dict[str, str]:
    return {
        SESSION_HEADER: session_id,
        "Set-Cookie": f"{SESSION_COOKIE}={session_id}; Path=/; HttpOnly; SameSite=Strict",
    }


def _bytes_response(body: bytes, headers: dict[str, str] | None = None) -> Response:
    return Response(body, headers=headers, media_type="application/json")


def _handler(server: EnvServer, body: str, session_needed: bool, call: Callable[..., Any]) -> Callable[..., Any]:
    """An endpoint: the body (``"json"``, ``"optional"`` or ``"none"``) read and parsed first, then with
    ``session_needed`` the named session claimed for the call; errors become 4xx JSON."""

    async def endpoint(request: Request) -> Response:
        session: Session | None = None
        try:
            parsed: Any = NO_BODY
            if body != "none":
                raw = await _read_body(request, server.config.max_body)
                empty = body == "optional" and (not raw or raw.isspace())
                parsed = None if empty else await server.parse(raw, _session_id(request) or request.scope.get("client"))
            if session_needed:
                session_id = _session_id(request)
                if session_id is None:
                    raise BadRequest(f"no session: send the {SESSION_HEADER} header that /reset returned", 400,
                                     "NO_SESSION")  # fmt: skip
                session = server.pool.claim(session_id)
            return await call(request, session, parsed)
        except BadRequest as exc:
            return error_response(exc.status, str(exc), exc.code, request_id=exc.request_id)
        except SessionError as exc:
            headers = {"Retry-After": "1"} if isinstance(exc, CapacityReached) else {}
            if exc.status == 404:  # a stale cookie would otherwise name the lost session forever
                headers["Set-Cookie"] = CLEAR_COOKIE
            return error_response(exc.status, str(exc), exc.code, headers)
        except asyncio.CancelledError:  # the server stopped before the call ended: an answer, not a traceback
            return error_response(503, "the server is stopping; the request did not finish in time", "SHUTTING_DOWN",
                                  {"Retry-After": "1", "Connection": "close"})  # fmt: skip
        finally:
            if session is not None:
                server.pool.done_with(session)

    return endpoint


def routes(server: EnvServer) -> list[Any]:
    async def reset(request: Request, _: None, body: Any) -> Response:
        params = protocol.parse_reset(body, server.task_ids)
        session_id = _session_id(request)
        created = session_id is None
        if created:
            session = await server.new_session("http")
            session.busy = True
        else:
            session = server.pool.claim(session_id)
        try:
            named = session.id
            answer = await server.call(session, server.reset_call, session, params,
                                     render=lambda result: json_bytes({**result, "session_id": named}))  # fmt: skip
        except BaseException:
            if created:  # its id never reached the client: nobody could use or close it
                server.pool.remove(session.id)
                server.close_in_background(session)
            raise
        finally:
            server.pool.done_with(session)
        return _bytes_response(answer, _session_headers(session.id))

    async def step(request: Request, session: Session, body: Any) -> Response:
        action = protocol.parse_step(body)
        return _bytes_response(await server.call(session, server.step_call, session, action, render=json_bytes))

    async def state(request: Request, session: Session, _: Any) -> Response:
        return _bytes_response(await server.call(session, server.state_call, session, render=json_bytes, heavy=True))

    async def restore(request: Request, session: Session, body: Any) -> Response:
        return _bytes_response(
            await server.call(session, server.restore_call, session, body, render=json_bytes, heavy=True)
        )

    async def render(request: Request, session: Session, _: Any) -> Response:
        return _bytes_response(await server.call(session, server.render_call, session, render=json_bytes, heavy=True))

    async def close(request: Request, _: None, __: Any) -> Response:
        session_id = _session_id(request)
        if session_id is None:
            raise BadRequest(f"no session: send the {SESSION_HEADER} header", 400, "NO_SESSION")
        session = server.pool.claim(session_id)  # not while a call runs on it
        server.pool.remove(session_id)
        await server.close_session(session)
        return json_response({"closed": session_id}, headers={"Set-Cookie": CLEAR_COOKIE})

    async def health(request: Request, _: None, __: Any) -> Response:
        return json_response(server.health(full=bool(request.scope.get(AUTHENTICATED, True))))

    async def schema(request: Request, _: None, __: Any) -> Response:
        session_id = _session_id(request)
        session = server.pool.get(session_id) if session_id else None
        if session is None:
            return json_response(server.schema(None))
        # On the session's thread: after any call it runs, never beside one (the docs may be its task's)
        return _bytes_response(await server.call(session, server.schema, session, render=json_bytes))

    async def metadata(request: Request, _: None, __: Any) -> Response:
        return json_response(server.metadata())

    def route(path: str, call: Callable[..., Any], method: str, body: str = "none", session: bool = False) -> Route:
        return Route(path, _handler(server, body, session, call), methods=[method])

    return [
        route("/reset", reset, "POST", body="optional"),
        route("/step", step, "POST", body="json", session=True),
        route("/state", state, "GET", session=True),
        route("/restore", restore, "POST", body="json", session=True),
        route("/render", render, "GET", session=True),
        route("/session", close, "DELETE"),
        route("/health", health, "GET"),
        route("/schema", schema, "GET"),
        route("/metadata", metadata, "GET"),
        WebSocketRoute("/ws", functools.partial(websocket_session, server)),
    ]


# --------------------------------------------------------------------- WebSocket (openenv-core's EnvClient)
def _ws_error(message: str, code: str, request_id: str | None = None) -> dict[str, Any]:
    return {"type": "error", "data": {"message": message, "code": code, **({"request_id": request_id} if request_id
                                                                            else {})}}  # fmt: skip


SESSION_MESSAGES = ("reset", "step", "state", "restore")


async def _ws_reply(server: EnvServer, session: Session | None, message: Any) -> str:
    """The text of the answer to one parsed message (``close`` is handled by the caller)."""
    if not isinstance(message, dict):
        raise BadRequest('a message is a JSON object {"type": ..., "data": ...}')
    kind, data = message.get("type"), message.get("data")
    protocol.refuse_text_that_is_not_unicode({key: value for key, value in message.items() if key != "data"},
                                             "the message")  # fmt: skip
    if kind == "step" and isinstance(data, dict) and "action" in data:
        protocol.refuse_text_that_is_not_unicode({k: v for k, v in data.items() if k != "action"}, "the step data")
    elif kind not in ("step", "reset", "restore"):  # their own parsers check theirs; the others' data is unused
        protocol.refuse_text_that_is_not_unicode(data, "the message")
    if kind not in ("reset", "step", "state", "restore", "schema"):
        raise BadRequest(f"unknown message type {str(kind)[:64]!r}; known: reset, step, state, restore, schema, close",
                         code="UNKNOWN_TYPE")  # fmt: skip
    if kind == "schema":
        if session is None:
            return json_text({"type": "schema", "data": server.schema(None)})
        return await server.call(
            session, server.schema, session, render=lambda data: json_text({"type": "schema", "data": data})
        )
    assert session is not None  # the caller makes one before any other message

    def envelope(kind: str) -> Callable[[Any], str]:
        return lambda data: json_text({"type": kind, "data": data})

    if kind == "reset":
        params = protocol.parse_reset(data, server.task_ids)
        return await server.call(session, server.reset_call, session, params, render=envelope("observation"))
    if kind == "step":
        action = protocol.parse_action(data["action"] if isinstance(data, dict) and "action" in data else data)
        return await server.call(session, server.step_call, session, action, render=envelope("observation"))
    if kind == "state":
        return await server.call(session, server.state_call, session, render=envelope("state"), heavy=True)
    return await server.call(session, server.restore_call, session, data, render=envelope("state"), heavy=True)


async def websocket_session(server: EnvServer, websocket: WebSocket) -> None:
    """One connection, one session. Its env is built at the first message that needs it, so a full
    server answers that message with a CAPACITY_REACHED error (which OpenEnv's client raises) and the
    client may retry on the same connection. Until it has a session, a connection idle for
    ``connection_idle`` seconds is closed, as an idle keep-alive HTTP connection is."""

    async def send(text: str) -> None:
        # A client that reads nothing leaves send() waiting for ever: past the body timeout the connection
        # is cut, so the handler ends and the session is closed
        try:
            with anyio.fail_after(config.body_timeout):
                await websocket.send({"type": "websocket.send", "text": text})
        except TimeoutError:
            logger.info("a WebSocket client read nothing for %g s: connection cut", config.body_timeout)
            cut = websocket.scope.get(ABORT_CONNECTION)
            if cut is not None:
                cut()
            raise WebSocketDisconnect(1006) from None

    config = server.config
    await websocket.accept()
    session: Session | None = None
    try:
        while True:
            idle_limit = config.idle_timeout if session is not None else config.connection_idle
            try:
                with anyio.fail_after(idle_limit):
                    frame = await websocket.receive()
            except TimeoutError:
                await send(json_text(_ws_error(f"the connection was idle for {idle_limit:g} s and is closed",
                                               "IDLE_TIMEOUT")))  # fmt: skip
                await websocket.close(code=1001)
                return
            if frame["type"] == "websocket.disconnect":
                raise WebSocketDisconnect(frame.get("code", 1000))
            raw = frame.get("text") if frame.get("text") is not None else frame.get("bytes") or b""
            try:
                message = await server.parse(raw, session.id if session is not None else id(websocket))
            except BadRequest as exc:
                await send(json_text(_ws_error(str(exc), exc.code)))
                continue
            if isinstance(message, dict) and message.get("type") == "close":
                break
            try:
                if session is None and isinstance(message, dict) and message.get("type") in SESSION_MESSAGES:
                    mark_holds_session(websocket.scope)  # from here not closed at the connection cap
                    try:
                        session = await server.new_session("ws")
                        session.cut_connection = websocket.scope.get(ABORT_CONNECTION)
                    except BaseException:
                        mark_holds_session(websocket.scope, False)
                        raise
                reply = await _ws_reply(server, session, message)
            except (BadRequest, SessionError) as exc:
                reply = json_text(_ws_error(str(exc), exc.code, getattr(exc, "request_id", None)))
            except Exception:  # a bug of ours: logged, reported to this client by its id; the session goes on
                request_id = new_request_id()
                logger.exception("internal error (request id %s) in a WebSocket session", request_id)
                reply = json_text(_ws_error(internal_error_message(request_id), "EXECUTION_ERROR", request_id))
            await send(reply)
        await websocket.close()
    except WebSocketDisconnect:
        pass
    finally:
        if session is not None:
            server.pool.remove(session.id)
            await server.close_session(session)
