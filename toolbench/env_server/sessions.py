"""One env per client session, a cap on sessions, and the reaping of idle ones.

The cap protects the machine, not any one client from another: anyone who may start sessions (every
local user, or every token holder) can fill it, and the server cannot tell one holder of the token from
another. What it can do is not let a session that was started and never played keep its slot: at the
cap, one that has never stepped nor restored and has been idle for ``fresh_idle_timeout`` seconds is
closed for the newcomer. A session in use (stepped, restored, or running a call) is never closed for
another.

Every method here runs on the server's event loop thread, so the table needs no lock; the env's own
calls run on the session's own worker thread (``workers``), one at a time (``busy``), so a session's
env never sees two calls at once, two sessions never share an env, and no session waits for another's.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolbench.env_server.workers import SessionWorker


class SessionError(Exception):
    """A request the session table refuses; ``status`` is its HTTP status."""

    status = 400
    code = "SESSION_ERROR"


class UnknownSession(SessionError):
    status = 404
    code = "UNKNOWN_SESSION"


class SessionBusy(SessionError):
    status = 409
    code = "SESSION_BUSY"


class CapacityReached(SessionError):
    status = 503
    code = "CAPACITY_REACHED"


@dataclass
class Session:
    id: str
    env: Any  # the gym.make result; calls go to env.unwrapped
    kind: str  # "http" or "ws" (a WebSocket connection is its own session and reaps itself)
    worker: SessionWorker  # the thread that runs this session's env calls
    last_active: float = field(default_factory=time.monotonic)
    busy: bool = False
    episode_id: str | None = None
    step_count: int = 0
    used: bool = False  # it stepped or restored: a client plays on it (until then its slot may go, see below)
    cut_connection: Callable[[], None] | None = None  # a WebSocket session's: ends its connection

    @property
    def base(self) -> Any:
        return self.env.unwrapped


class SessionPool:
    """Sessions by id; at most ``max_sessions``; HTTP sessions idle for ``idle_timeout`` s are closed."""

    def __init__(self, make_env: Callable[[], Any], max_sessions: int, idle_timeout: float):
        self._make_env = make_env
        self.max_sessions = max_sessions
        self.idle_timeout = idle_timeout
        self._sessions: dict[str, Session] = {}
        self._reserved = 0  # slots held while a worker thread makes an env

    def __len__(self) -> int:
        return len(self._sessions)

    def reserve(self) -> None:
        """Hold a slot for a new session (before building its env, which may take a while)."""
        if len(self._sessions) + self._reserved >= self.max_sessions:
            raise CapacityReached(
                f"the server holds its maximum of {self.max_sessions} sessions; close one (DELETE /session) "
                f"or retry after idle ones are reaped ({self.idle_timeout:g} s idle)"
            )
        self._reserved += 1

    def release(self) -> None:
        self._reserved -= 1

    def build_env(self) -> Any:
        """A fresh env (called on the new session's worker thread)."""
        return self._make_env()

    def add(self, env: Any, kind: str, worker: SessionWorker) -> Session:
        """Register a built env under a new unguessable id (the id names the session; with a token
        the server also knows the client may use it)."""
        self._reserved -= 1
        session = Session(id=secrets.token_urlsafe(18), env=env, kind=kind, worker=worker)
        self._sessions[session.id] = session
        return session

    def get(self, session_id: str) -> Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise UnknownSession(
                f"no session {session_id[:64]!r}: it was closed, reaped after {self.idle_timeout:g} s idle, "
                "or never created; POST /reset without a session starts a new one"
            )
        return session

    def claim(self, session_id: str) -> Session:
        """The session, marked busy for one call; a second call while one runs is refused."""
        session = self.get(session_id)
        if session.busy:
            raise SessionBusy("another request on this session is still running; send one request at a time")
        session.busy = True
        session.last_active = time.monotonic()
        return session

    @staticmethod
    def done_with(session: Session) -> None:
        session.busy = False
        session.last_active = time.monotonic()

    def remove(self, session_id: str) -> Session | None:
        return self._sessions.pop(session_id, None)

    def idle_http_sessions(self, now: float | None = None) -> list[Session]:
        """HTTP sessions not busy and idle longer than the timeout, taken out of the table."""
        now = time.monotonic() if now is None else now
        stale = [
            s
            for s in self._sessions.values()
            if s.kind == "http" and not s.busy and now - s.last_active > self.idle_timeout
        ]
        for session in stale:
            del self._sessions[session.id]
        return stale

    def unused_idle_since(self, seconds: float, now: float | None = None) -> Session | None:
        """The session that has never stepped nor restored, is not busy, and has been idle the longest, if
        for ``seconds`` or more: at the cap it gives its slot to a new session (it holds nothing yet)."""
        now = time.monotonic() if now is None else now
        unused = [s for s in self._sessions.values() if not s.used and not s.busy and now - s.last_active >= seconds]
        return min(unused, key=lambda s: s.last_active) if unused else None

    def take_all(self) -> list[Session]:
        sessions = list(self._sessions.values())
        self._sessions.clear()
        return sessions
