"""``RemoteEnv``: a Gymnasium env whose episodes run on a ``toolbench serve env`` server.

``gym.make("toolbench/Remote-v0", url="http://host:8000")`` gives an env a trainer steps as if it
were local; ``gym.make_vec("toolbench/Remote-v0", num_envs=8, url=...)`` gives eight, each its own
session (and env) on the server. The server decides the task and its ``gym.make`` arguments.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import math
import os
import re
import time
import zlib
from typing import Any
from urllib.parse import urlsplit

import gymnasium as gym

from toolbench.bounded_http import Answer, BoundedConnection, HttpError, NotSent
from toolbench.core.spaces import UnicodeText
from toolbench.core.worker import too_many_items

SESSION_HEADER = "X-Session-Id"
TOKEN_ENV = "TOOLBENCH_TOKEN"
MAX_RESPONSE_BYTES = 64 * 1024 * 1024  # an answer's bytes on the wire, and decoded: a large snapshot fits
#: JSON values an answer may hold, counted before parsing (a 64 MiB answer of ``{}`` would take 1.7 GB
#: parsed): a maximal observation of commas and an info fit; the served schemas hold under 4,000.
MAX_RESPONSE_ITEMS = 2**19
MAX_SPACE_LENGTH = 2**30  # a served space's maximum length we believe
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")


class RemoteEnvError(RuntimeError):
    """The server refused a request (its status and message are kept) or could not be reached."""

    def __init__(self, message: str, status: int | None = None, code: str | None = None):
        super().__init__(message)
        self.status, self.code = status, code


class RemoteEnv(gym.Env[str, str]):
    """A toolbench env served by ``toolbench serve env``, over HTTP.

    ## Description
    The same episodes as the served ``toolbench/<Task>-v0`` (same task, seed, observations, rewards
    and ``info``, with ``info`` in its JSON form: tuples and arrays as lists, NaN as ``None``).

    ## Action Space / Observation Space
    Text (``UnicodeText``) of the served env's maximum lengths.

    ## Rewards, Starting State, Episode End
    The served env's. ``reset(options={"task_id": ...})`` picks a task, as locally.

    ## Arguments
    - ``url``: the server (``http://host:port``).
    - ``timeout``: seconds one call may take in all, from connecting to the answer's last byte (a step's
      own time is bounded by the env); ``close()`` too.
    - ``headers``: extra HTTP headers (say, one a proxy in front needs).
    - ``token`` / ``token_file``: the server's token (``toolbench serve env --token-file``), sent as
      ``Authorization: Bearer`` to ``url`` whatever it is; without either, the ``TOOLBENCH_TOKEN``
      environment variable, if set, is sent to a loopback ``url`` only (``localhost``, ``127.0.0.1``,
      ``[::1]``), so that a URL to another machine never receives a token it was not given for.
    - ``max_response_bytes``: the most bytes one answer may have, on the wire and decoded (64 MiB).
    - ``max_response_items``: the most JSON values one answer may hold, counted before it is parsed.
    - ``render_mode``: ``"ansi"`` fetches the served env's transcript (serve it with ``render_mode="ansi"``).

    The server's answers are checked as hostile input: the whole call has one deadline (a server that
    drips bytes, or sends endless interim answers or trailers, cannot stretch it), heads and bodies are
    read within bounds, stopped past ``max_response_bytes`` (asked uncompressed; a compressed answer is
    inflated within the same bound) and ``max_response_items``, and held to their shape (the observation
    text within ``observation_space``, a finite reward, boolean ``terminated``/``truncated``, a dict
    ``info``): anything else is a ``RemoteEnvError``.

    ``get_state()`` returns the server's signed snapshot and ``set_state(snapshot)`` restores it, in
    this session or another of the same server. ``close()`` ends the session on the server.

    A request whose connection was reset before it was sent whole (the server closed an idle keep-alive
    connection, say at its connection cap) is sent again once, on a new connection: the server cannot have
    acted on it. Any other failure is a ``RemoteEnvError``: a step is never sent twice.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 60.0,
        headers: dict[str, str] | None = None,
        token: str | None = None,
        token_file: str | os.PathLike[str] | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        max_response_items: int = MAX_RESPONSE_ITEMS,
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, not {render_mode!r}")
        self.url = url.rstrip("/")
        self.timeout = float(timeout)
        self.max_response_bytes = int(max_response_bytes)
        self.max_response_items = int(max_response_items)
        self.render_mode = render_mode
        try:
            self._http = BoundedConnection(self.url)
        except ValueError as exc:
            raise RemoteEnvError(str(exc)) from None
        self._headers = dict(headers or {})
        self._headers["Accept-Encoding"] = "identity"  # a compressed answer's size says nothing of its own
        token, self._token_withheld = client_token(self.url, token, token_file)
        if token is not None:
            self._headers["Authorization"] = f"Bearer {token}"
        self._session_id: str | None = None
        self._schema = self._call("GET", "/schema")
        if not isinstance(self._schema, dict):
            raise RemoteEnvError("GET /schema: the answer is not a JSON object")
        self.env_id: str = _typed(self._schema, "env_id", str, "GET /schema")
        self.mode: str = _typed(self._schema, "mode", str, "GET /schema")
        self.observation_space = UnicodeText(_length(self._schema, "observation_max_length"))
        self.action_space = UnicodeText(_length(self._schema, "action_max_length"))

    # ----------------------------------------------------------------- HTTP
    def _body(self, answer: Answer, what: str) -> bytes:
        """The answer's body, inflated within ``max_response_bytes`` if the server compressed it anyway."""
        limit = self.max_response_bytes
        encoding = answer.headers.get("content-encoding", "identity").strip().lower()
        if encoding in ("identity", ""):
            return answer.body
        if encoding not in ("gzip", "x-gzip", "deflate"):
            raise RemoteEnvError(f"{what}: the answer is encoded as {encoding[:40]!r}, which this client does not read")
        inflate = zlib.decompressobj(zlib.MAX_WBITS | 32)  # a gzip or zlib header, found by itself
        try:
            body = inflate.decompress(answer.body, limit + 1)
        except zlib.error as exc:
            raise RemoteEnvError(f"{what}: the answer does not inflate: {exc}") from None
        if len(body) > limit or inflate.unconsumed_tail:
            raise RemoteEnvError(f"{what}: the answer inflates past {limit} bytes")
        return body

    def _exchange(self, method: str, path: str, data: bytes | None, deadline: float) -> Answer:
        headers = dict(self._headers)
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self._session_id:
            headers[SESSION_HEADER] = self._session_id
        limit = self.max_response_bytes
        try:
            try:
                return self._http.request(method, path, headers, data, deadline, limit)
            except NotSent:  # the server cannot have acted on it: once more, on a new connection
                return self._http.request(method, path, headers, data, deadline, limit)
        except HttpError as exc:
            raise RemoteEnvError(f"{method} {self.url}{path}: {exc}") from None

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        what = f"{method} {path}"
        data = None if body is None and method != "POST" else json.dumps(body).encode()
        answer = self._exchange(method, path, data, time.monotonic() + self.timeout)
        raw = self._body(answer, what)
        payload: Any = None
        if not too_many_items(raw, self.max_response_items):
            try:
                payload = json.loads(raw)
            except (ValueError, RecursionError):
                payload = None
        elif answer.status < 400:
            raise RemoteEnvError(f"{what}: the answer holds more than {self.max_response_items} JSON values")
        if answer.status >= 400:
            detail = payload.get("detail") if isinstance(payload, dict) else raw[:500].decode("utf-8", "replace")
            code = payload.get("code") if isinstance(payload, dict) else None
            detail, code = str(detail)[:2000], (str(code)[:100] if code is not None else None)
            if code == "RESET_NEEDED":
                raise gym.error.ResetNeeded(detail)
            if answer.status == 401 and self._token_withheld:
                detail += (f" ({TOKEN_ENV} is set but sent to loopback URLs only; pass token= or token_file= to "
                           "send it to this one)")  # fmt: skip
            raise RemoteEnvError(f"{what}: {answer.status} {detail}", answer.status, code)
        if payload is None:
            raise RemoteEnvError(f"{what}: the answer is not JSON ({raw[:200]!r})")
        session_id = answer.headers.get(SESSION_HEADER.lower())
        if session_id is not None:
            if not _SESSION_ID.fullmatch(session_id):
                raise RemoteEnvError(f"{what}: the session id {session_id[:40]!r} is not one this server writes")
            self._session_id = session_id
        return payload

    def _result(self, payload: Any, what: str, reset: bool) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """A reset or step answer, held to its shape."""
        if not isinstance(payload, dict) or not isinstance(payload.get("observation"), dict):
            raise RemoteEnvError(f"{what}: the answer has no observation object")
        observation = payload["observation"]
        text = observation.get("text")
        if not self.observation_space.contains(text):
            shown = f"{len(text)} characters" if isinstance(text, str) else type(text).__name__
            raise RemoteEnvError(f"{what}: the observation ({shown}) is not in the observation space "
                                 f"(text of at most {self.observation_space.max_length} characters)")  # fmt: skip
        reward = payload.get("reward")
        if reset and reward is None:
            reward = 0.0
        if isinstance(reward, bool) or not isinstance(reward, (int, float)) or not math.isfinite(reward):
            raise RemoteEnvError(f"{what}: the reward {str(reward)[:40]!r} is not a finite number")
        flags = observation.get("terminated"), observation.get("truncated")
        if not all(isinstance(flag, bool) for flag in flags):
            raise RemoteEnvError(f"{what}: terminated and truncated must be booleans, not {flags!r:.80}")
        info = observation.get("info")
        if not isinstance(info, dict):
            raise RemoteEnvError(f"{what}: info must be a JSON object, not {type(info).__name__}")
        return text, float(reward), flags[0], flags[1], info

    @property
    def session_id(self) -> str | None:
        """This env's session on the server (``None`` before the first reset and after close)."""
        return self._session_id

    # ----------------------------------------------------------------- Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        body: dict[str, Any] = {}
        if seed is not None:
            body["seed"] = seed
        if options:
            body["options"] = options
        try:
            result = self._call("POST", "/reset", body)
        except RemoteEnvError as exc:
            if exc.code != "UNKNOWN_SESSION":
                raise
            # The server closed the session (idle too long, or restarted): nothing of a new episode
            # is lost by starting it in a new session.
            self._session_id = None
            result = self._call("POST", "/reset", body)
        text, _, _, _, info = self._result(result, "POST /reset", reset=True)
        return text, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._session_id is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if not isinstance(action, str):  # JSON could carry it, but the server takes text only
            raise TypeError(f"an action must be a str, not {type(action).__name__}")
        return self._result(self._call("POST", "/step", {"action": action}), "POST /step", reset=False)

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        if self._session_id is None:  # as the served env renders before its first episode
            return f"=== {self.env_id} · (no episode) ===\n"
        answer = self._call("GET", "/render")
        if not isinstance(answer, dict) or not isinstance(answer.get("render"), str):
            raise RemoteEnvError("GET /render: the answer has no render text")
        return answer["render"]

    def close(self) -> None:
        if self._session_id is not None:
            with contextlib.suppress(RemoteEnvError):  # already gone (reaped, server stopped): nothing to free
                self._call("DELETE", "/session")
            self._session_id = None
        self._http.close()
        super().close()

    # ----------------------------------------------------------------- the served env's extras
    def schema(self) -> dict[str, Any]:
        """The server's ``/schema``: env id, mode, split, ``tools``, ``api_docs``, JSON schemas."""
        return self._call("GET", "/schema")

    def api_docs(self) -> str | None:
        return self.schema()["api_docs"]

    def tools(self) -> list[dict[str, Any]] | None:
        return self.schema()["tools"]

    def get_state(self) -> dict[str, Any]:
        """The episode's state on the server: ``task_id``, ``step_count``, ``done`` and the signed ``snapshot``."""
        if self._session_id is None:
            raise gym.error.ResetNeeded("call reset() before get_state()")
        return self._call("GET", "/state")

    def set_state(self, state: dict[str, Any] | str) -> None:
        """Restore a ``get_state()`` result (or its ``snapshot`` text) taken from the same server."""
        snapshot = state["snapshot"] if isinstance(state, dict) else state
        if self._session_id is None:  # restoring into a new env: it needs a session first
            self._call("POST", "/reset", {})
        self._call("POST", "/restore", {"snapshot": snapshot})


def is_loopback_url(url: str) -> bool:
    """Whether ``url`` names this machine by a loopback name or address."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def client_token(
    url: str, token: str | None = None, token_file: str | os.PathLike[str] | None = None
) -> tuple[str | None, bool]:
    """The token to send to ``url``, and whether ``TOOLBENCH_TOKEN`` was withheld from it: a token given
    (``token`` or ``token_file``) goes to ``url`` whatever it is; the environment's, to loopback URLs only."""
    if token is not None and token_file is not None:
        raise ValueError("give token or token_file, not both")
    if token_file is not None:
        with open(os.path.expanduser(token_file), encoding="ascii") as file:
            token = file.read().strip()
        if not token:
            raise ValueError(f"token file {token_file} is empty")
    if token is not None:
        return token, False
    from_environment = os.environ.get(TOKEN_ENV) or None
    if from_environment is not None and not is_loopback_url(url):
        return None, True
    return from_environment, False


def _typed(payload: dict[str, Any], key: str, kind: type, what: str) -> Any:
    value = payload.get(key)
    if not isinstance(value, kind):
        raise RemoteEnvError(f"{what}: {key} must be a {kind.__name__}, not {type(value).__name__}")
    return value


def _length(schema: dict[str, Any], key: str) -> int:
    value = schema.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_SPACE_LENGTH:
        raise RemoteEnvError(f"GET /schema: {key} must be an integer from 1 to {MAX_SPACE_LENGTH}, not {value!r:.40}")
    return value
