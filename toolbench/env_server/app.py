"""The env server: any ``toolbench/<Task>-v0`` behind OpenEnv's HTTP and WebSocket protocol.

HTTP (curl, any language): ``POST /reset`` starts a session when the request names none and answers
with its id in the ``X-Session-Id`` header (and a cookie, so cookie-keeping clients such as
``requests.Session`` and ``curl -b/-c`` follow it without code); later requests send that header.
``POST /step``, ``GET /state``, ``POST /restore``, ``GET /render`` and ``DELETE /session`` act on the
named session. ``GET /health``, ``/metadata`` and ``/schema`` (with ``tools`` and ``api_docs``) need none.

WebSocket ``/ws`` is what ``openenv-core``'s ``EnvClient`` speaks: one connection is one session,
messages ``{"type": "reset" | "step" | "state" | "close", "data": ...}`` answered with
``{"type": "observation" | "state" | "error", "data": ...}``; ``restore`` and ``schema`` are ours.

Errors are JSON ``{"detail": message, "code": CODE}`` with a 4xx status: 400 not JSON, 401 no token,
403 a foreign Origin, 404 unknown session, 408 a request head or body too slow, 409 a second request
on a busy session or a step before reset, 413 a body or a state over its limit, 415 a body not
declared JSON, 421 a foreign Host, 422 JSON of the wrong shape or a snapshot that does not restore,
503 the session or connection cap reached (with ``Retry-After``).

Each session's env calls run on its own thread (``workers``), and so do the JSON encoding of its
answers and its snapshots: the event loop only moves bytes, so no session's slowness delays another's.
What they share is the GIL: snapshots, restores, transcripts and large parses take the heavy lane
(``heavy_lane``), one at a time across sessions, so light requests keep most of it.

This module holds the server's state (``EnvServer``) and its configuration; the endpoints are in
``http_api``, and ``asgi.create_env_app`` builds the app from both.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import gymnasium as gym
from starlette.responses import Response

from toolbench import __version__
from toolbench.core.env import ACTION_MAX_LENGTH, OBSERVATION_MAX_LENGTH
from toolbench.core.jsonsafe import to_json_safe
from toolbench.env_server import protocol
from toolbench.env_server.access import AccessPolicy
from toolbench.env_server.heavy_lane import HEAVY_BYTES, HeavyLane
from toolbench.env_server.protocol import BadRequest, json_bytes
from toolbench.env_server.sessions import CapacityReached, Session, SessionPool
from toolbench.env_server.snapshots import SnapshotError, SnapshotSigner
from toolbench.env_server.statecodec import DEFAULT_MAX_STATE_BYTES, StateCodecError, StateTooLarge
from toolbench.env_server.workers import SessionWorker

logger = logging.getLogger("toolbench.env_server")

MAX_BODY = 10 * 1024 * 1024  # bytes: a maximal action JSON-escaped, or a large snapshot, fits
PARSE_ON_THREAD = HEAVY_BYTES  # bytes: larger bodies and messages are parsed off the event loop, in the heavy lane
SNAPSHOT_ENVELOPE = 256  # bytes around a snapshot in a restore request: it must fit --max-body with them


@dataclass(frozen=True)
class EnvServerConfig:
    """What to serve and the bounds on what clients can cost."""

    env_id: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    max_sessions: int = 64
    idle_timeout: float = 600.0  # seconds before an unused session (and its env) is closed
    fresh_idle_timeout: float = 30.0  # at the cap: seconds idle after which a never-stepped session gives way
    max_body: int = MAX_BODY
    max_state_bytes: int = DEFAULT_MAX_STATE_BYTES  # a snapshot's encoded state
    snapshot_key: bytes | None = None  # None: random per process
    snapshot_key_source: str = "random per process"
    access: AccessPolicy = field(default_factory=AccessPolicy)
    connection_idle: float = 30.0  # seconds an idle keep-alive connection, or a WebSocket with no session, stays
    header_timeout: float = 10.0  # seconds for a request head to arrive whole
    body_timeout: float = 30.0  # seconds for a request body to arrive whole (and for a client to read anything)
    min_body_rate: float = 1024.0  # bytes a second a body must average once past its grace
    body_rate_grace: float = 5.0  # seconds before a body's rate is held to the minimum
    max_buffered_output: int = 256 * 1024 * 1024  # bytes of answers waiting for slow readers, all together
    max_connections: int | None = None  # None: derived from max_sessions (connections.default_max_connections)
    shutdown_grace: float = 2.0  # seconds running requests get to finish when the server stops

    def exposure(self) -> dict[str, Any]:
        """Who may talk to the server and how its snapshots are signed, as ``GET /health`` reports it."""
        return {**self.access.exposure(), "snapshot_key": self.snapshot_key_source}

    @property
    def fingerprint(self) -> str:
        # The version too: another release's env may read the same state differently
        return f"{self.env_id}|{json.dumps(self.env_kwargs, sort_keys=True)}|toolbench {__version__}"


def make_env_factory(env_id: str, env_kwargs: dict[str, Any]) -> Callable[[], gym.Env]:
    """``gym.make(env_id, **env_kwargs)``, one build at a time (fixture caches are filled on first use)."""
    lock = threading.Lock()

    def make() -> gym.Env:
        with lock:
            return gym.make(env_id, **env_kwargs)

    return make


class RestoreFailed(BadRequest):
    def __init__(self, message: str):
        super().__init__(message, 422, "RESTORE_FAILED")


class EnvServer:
    """Sessions of one env configuration, and what each request does to them.

    The ``*_call`` methods run on the session's worker thread: the env call and the encoding of its
    answer (``render``) together, so the event loop never holds a large payload's CPU time.
    """

    def __init__(self, config: EnvServerConfig, probe: gym.Env | None = None):
        self.config = config
        make_env = make_env_factory(config.env_id, config.env_kwargs)
        self.probe = probe if probe is not None else make_env()  # validates the kwargs before serving
        base = self.probe.unwrapped
        self.task_ids = set(base._tasks_by_id)
        self.pool = SessionPool(make_env, config.max_sessions, config.idle_timeout)
        self.signer = SnapshotSigner(config.fingerprint, config.snapshot_key, config.max_state_bytes)
        self.parse_limiter: anyio.CapacityLimiter | None = None  # made on the event loop (lifespan)
        self.lane = HeavyLane(slots=1)  # snapshots, restores, transcripts and large parses: one at a time
        self.docs_per_task = bool(getattr(base, "docs_per_task", False))
        self.shared_docs = None if self.docs_per_task else (base.api_docs(), base.tools())
        self._background: set[asyncio.Task[Any]] = set()

    # ----------------------------------------------------------------- sessions
    async def new_session(self, kind: str) -> Session:
        try:
            self.pool.reserve()
        except CapacityReached:
            unused = self.pool.unused_idle_since(self.config.fresh_idle_timeout)
            if unused is None:
                raise
            logger.info("session cap reached: closing session %s, never stepped and idle for %g s or more",
                        unused.id, self.config.fresh_idle_timeout)  # fmt: skip
            self.pool.remove(unused.id)
            if unused.cut_connection is not None:  # a WebSocket's: its handler closes the env as it ends
                unused.cut_connection()
            else:
                self.close_in_background(unused)
            self.pool.reserve()
        worker = SessionWorker(f"toolbench-session-{kind}")
        try:
            env = await worker.run(self.pool.build_env)
        except BaseException:
            self.pool.release()
            worker.stop()
            raise
        return self.pool.add(env, kind, worker)

    async def close_session(self, session: Session) -> None:
        """Close the session's env on its own thread, after any call it is running."""
        try:
            await session.worker.run(session.env.close)
        except Exception:  # closing is best effort; the session is gone either way
            logger.exception("closing the env of session %s", session.id)
        finally:
            session.worker.stop()

    def close_in_background(self, session: Session) -> None:
        task = asyncio.get_running_loop().create_task(self.close_session(session))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def reap_forever(self) -> None:
        interval = min(max(self.config.idle_timeout / 4, 0.05), 5.0)
        while True:
            await asyncio.sleep(interval)
            for session in self.pool.idle_http_sessions():
                logger.info("session %s idle for %g s: closed", session.id, self.config.idle_timeout)
                self.close_in_background(session)

    async def close_all(self) -> None:
        """At shutdown: every session's env closed at once, within ``shutdown_grace`` seconds. A session
        whose call is still running is closed from another thread (closing a code task's env ends the
        sandbox child its call waits for); a call that ignores it is left to the daemon thread's end."""

        def close_quietly(env: gym.Env) -> None:
            try:
                env.close()
            except Exception:
                logger.exception("closing an env at shutdown")

        async def close_on_a_new_thread(env: gym.Env) -> None:
            worker = SessionWorker("toolbench-close")  # a daemon: a close that hangs cannot hold the exit
            try:
                await worker.run(close_quietly, env)
            finally:
                worker.stop()

        waits = []
        for session in self.pool.take_all():
            if session.worker.running:
                waits.append(asyncio.ensure_future(close_on_a_new_thread(session.env)))
                session.worker.stop()
            else:
                waits.append(asyncio.ensure_future(self.close_session(session)))
        waits.append(asyncio.ensure_future(close_on_a_new_thread(self.probe)))
        waits.extend(self._background)
        _, pending = await asyncio.wait(waits, timeout=self.config.shutdown_grace)
        if pending:
            logger.warning("%d env(s) did not close within %g s of the shutdown", len(pending),
                           self.config.shutdown_grace)  # fmt: skip

    # ----------------------------------------------------------------- env calls, on the session's thread
    async def call(
        self, session: Session, func: Callable[..., Any], *args: Any, render: Callable[[Any], Any], heavy: bool = False
    ) -> Any:
        """``render(func(*args))`` on the session's worker thread; with ``heavy``, in the heavy lane."""
        if not heavy:
            return await session.worker.run(lambda: render(func(*args)))

        def in_the_lane() -> Any:
            with self.lane.held(session.id):
                return render(func(*args))

        return await session.worker.run(in_the_lane)

    def reset_call(self, session: Session, params: protocol.ResetParams) -> dict[str, Any]:
        options = {"task_id": params.task_id} if params.task_id else None
        observation, info = session.base.reset(seed=params.seed, options=options)
        session.episode_id, session.step_count = params.episode_id, 0
        return protocol.step_result(observation, None, False, False, info)

    def step_call(self, session: Session, action: str) -> dict[str, Any]:
        if session.base.task is None:
            raise BadRequest("the session has no episode yet: POST /reset first", 409, "RESET_NEEDED")
        session.used = True
        observation, reward, terminated, truncated, info = session.base.step(action)
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

    def state_call(self, session: Session) -> dict[str, Any]:
        snapshot = {"env": session.base.get_state(), "episode_id": session.episode_id, "step_count": session.step_count}
        try:
            text = self.signer.dump(snapshot)
        except StateTooLarge as exc:
            raise BadRequest(f"{exc}: the episode's state is too large to snapshot (--max-state-bytes)", 413,
                             "STATE_TOO_LARGE") from None  # fmt: skip
        except StateCodecError as exc:  # an env's state holds a type the codec does not carry: our bug
            request_id = new_request_id()
            logger.error("GET /state (request id %s): %s", request_id, exc)
            raise BadRequest(f"this env's state cannot be snapshotted (a bug, logged under request id {request_id})",
                             500, "STATE_NOT_DATA", request_id=request_id) from None  # fmt: skip
        if len(text) + SNAPSHOT_ENVELOPE > self.config.max_body:
            raise BadRequest(f"the snapshot is {len(text)} bytes, more than a restore request may carry "
                             f"(--max-body {self.config.max_body})", 413, "STATE_TOO_LARGE")  # fmt: skip
        return {**self.summary(session), "snapshot": text}

    def restore_call(self, session: Session, body: Any) -> dict[str, Any]:
        protocol.refuse_text_that_is_not_unicode(body, "the restore body")
        if not isinstance(body, dict) or set(body) != {"snapshot"}:
            raise BadRequest('the restore body is {"snapshot": "<the snapshot field of GET /state>"}')
        try:
            snapshot = self.signer.load(body["snapshot"])
        except SnapshotError as exc:
            raise BadRequest(str(exc), 422, "INVALID_SNAPSHOT") from None
        base = session.base
        previous = base.get_state()
        try:
            base.set_state(snapshot["env"])
        except Exception as exc:
            try:
                base.set_state(previous)
            except Exception:  # the env cannot take back even its own state: start it afresh
                logger.exception("restoring the previous state of session %s", session.id)
                base.reset()
                session.episode_id, session.step_count = None, 0
            raise RestoreFailed(f"the env refused the snapshot ({type(exc).__name__}: {str(exc)[:200]}); "
                                "the session keeps its state") from None  # fmt: skip
        session.episode_id, session.step_count = snapshot["episode_id"], snapshot["step_count"]
        session.used = True
        return self.summary(session)

    def render_call(self, session: Session) -> dict[str, Any]:
        # The transcript whatever the served render_mode: a client asking for "ansi" gets it.
        return {"render": session.base.ansi_transcript()}

    # ----------------------------------------------------------------- what needs no env call
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

    def health(self, full: bool) -> dict[str, Any]:
        """Liveness; with ``full`` (the request carried the token, or none is set) the sessions and exposure."""
        if not full:
            return {"status": "healthy"}
        return {
            "status": "healthy",
            "env_id": self.config.env_id,
            "sessions": len(self.pool),
            "max_sessions": self.pool.max_sessions,
            "exposure": self.config.exposure(),
        }

    async def parse(self, raw: bytes | str, key: Any) -> Any:
        """The JSON of a body or message; a large one is parsed on a worker thread, in the heavy lane in
        ``key``'s turn (its session's, or its connection's before it has one)."""
        if len(raw) <= PARSE_ON_THREAD:
            return protocol.load_json(raw)
        if protocol.too_many_items(raw, protocol.MAX_JSON_ITEMS):  # refused at once, not after waiting for the lane
            return protocol.load_json(raw)

        def in_the_lane() -> Any:
            with self.lane.held(key):
                return protocol.load_json(raw)

        return await anyio.to_thread.run_sync(in_the_lane, limiter=self.parse_limiter)


def json_response(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(json_bytes(payload), status_code=status, headers=headers, media_type="application/json")


def error_response(
    status: int, message: str, code: str, headers: dict[str, str] | None = None, request_id: str | None = None
) -> Response:
    body = {"detail": message, "code": code, **({"request_id": request_id} if request_id else {})}
    return json_response(body, status, headers)


def new_request_id() -> str:
    """An id naming one failed request in the log and in its answer."""
    return secrets.token_hex(8)


def internal_error_message(request_id: str) -> str:
    return f"internal error in the env server; it is logged under request id {request_id}"


def internal_error_response(request_id: str) -> Response:
    return error_response(500, internal_error_message(request_id), "INTERNAL_ERROR", request_id=request_id)
