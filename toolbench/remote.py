"""``RemoteEnv``: a Gymnasium env whose episodes run on a ``toolbench serve env`` server.

``gym.make("toolbench/Remote-v0", url="http://host:8000")`` gives an env a trainer steps as if it
were local; ``gym.make_vec("toolbench/Remote-v0", num_envs=8, url=...)`` gives eight, each its own
session (and env) on the server. The server decides the task and its ``gym.make`` arguments.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import zlib
from typing import Any

import gymnasium as gym
import requests

from toolbench.core.spaces import UnicodeText

SESSION_HEADER = "X-Session-Id"
TOKEN_ENV = "TOOLBENCH_TOKEN"
MAX_RESPONSE_BYTES = 64 * 1024 * 1024  # an answer's bytes on the wire, and decoded: a large snapshot fits
MAX_SPACE_LENGTH = 2**30  # a served space's maximum length we believe
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,128}")
_CHUNK = 64 * 1024


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
    - ``timeout``: seconds to wait for one answer (a step's own time is bounded by the env).
    - ``headers``: extra HTTP headers (say, one a proxy in front needs).
    - ``token`` / ``token_file``: the server's token (``toolbench serve env --token-file``), sent as
      ``Authorization: Bearer``; without either, the ``TOOLBENCH_TOKEN`` environment variable, if set.
    - ``max_response_bytes``: the most bytes one answer may have, on the wire and decoded (64 MiB).
    - ``render_mode``: ``"ansi"`` fetches the served env's transcript (serve it with ``render_mode="ansi"``).

    The server's answers are checked as hostile input: read as a stream, stopped past
    ``max_response_bytes`` (asked uncompressed; a compressed answer is inflated within the same
    bound), and held to their shape (the observation text within ``observation_space``, a finite
    reward, boolean ``terminated``/``truncated``, a dict ``info``): anything else is a ``RemoteEnvError``.

    ``get_state()`` returns the server's signed snapshot and ``set_state(snapshot)`` restores it, in
    this session or another of the same server. ``close()`` ends the session on the server.
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
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, not {render_mode!r}")
        self.url = url.rstrip("/")
        self.timeout = float(timeout)
        self.max_response_bytes = int(max_response_bytes)
        self.render_mode = render_mode
        self._http = requests.Session()
        self._http.headers.update(headers or {})
        self._http.headers["Accept-Encoding"] = "identity"  # a compressed answer's size says nothing of its own
        token = _client_token(token, token_file)
        if token is not None:
            self._http.headers["Authorization"] = f"Bearer {token}"
        self._session_id: str | None = None
        self._schema = self._call("GET", "/schema")
        if not isinstance(self._schema, dict):
            raise RemoteEnvError("GET /schema: the answer is not a JSON object")
        self.env_id: str = _typed(self._schema, "env_id", str, "GET /schema")
        self.mode: str = _typed(self._schema, "mode", str, "GET /schema")
        self.observation_space = UnicodeText(_length(self._schema, "observation_max_length"))
        self.action_space = UnicodeText(_length(self._schema, "action_max_length"))

    # ----------------------------------------------------------------- HTTP
    def _read(self, response: requests.Response, what: str) -> bytes:
        """The body, counted as it arrives and as it is inflated; stopped past ``max_response_bytes``."""
        limit = self.max_response_bytes
        encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
        if encoding in ("gzip", "x-gzip", "deflate"):
            inflate: Any = zlib.decompressobj(zlib.MAX_WBITS | 32)  # a gzip or zlib header, found by itself
        elif encoding in ("identity", ""):
            inflate = None
        else:
            raise RemoteEnvError(f"{what}: the answer is encoded as {encoding[:40]!r}, which this client does not read")
        received, parts, size = 0, [], 0
        try:
            while True:
                chunk = response.raw.read(_CHUNK, decode_content=False)
                if not chunk:
                    break
                received += len(chunk)
                if received > limit:
                    raise RemoteEnvError(f"{what}: the answer is over {limit} bytes on the wire")
                if inflate is not None:
                    chunk = inflate.decompress(chunk, limit - size + 1)
                    if inflate.unconsumed_tail:
                        raise RemoteEnvError(f"{what}: the answer inflates past {limit} bytes")
                size += len(chunk)
                if size > limit:
                    raise RemoteEnvError(f"{what}: the answer is over {limit} bytes")
                parts.append(chunk)
        except zlib.error as exc:
            raise RemoteEnvError(f"{what}: the answer does not inflate: {exc}") from None
        except requests.RequestException as exc:
            raise RemoteEnvError(f"{what}: {exc}") from exc
        except OSError as exc:  # urllib3's protocol and read errors
            raise RemoteEnvError(f"{what}: {type(exc).__name__}: {exc}") from exc
        finally:
            response.close()
        return b"".join(parts)

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        headers = {SESSION_HEADER: self._session_id} if self._session_id else {}
        what = f"{method} {path}"
        try:
            response = self._http.request(method, self.url + path, json=body, headers=headers, timeout=self.timeout,
                                          allow_redirects=False, stream=True)  # fmt: skip
        except requests.RequestException as exc:
            raise RemoteEnvError(f"{method} {self.url}{path}: {exc}") from exc
        raw = self._read(response, what)
        try:
            payload = json.loads(raw)
        except (ValueError, RecursionError):
            payload = None
        if response.status_code >= 400:
            detail = payload.get("detail") if isinstance(payload, dict) else raw[:500].decode("utf-8", "replace")
            code = payload.get("code") if isinstance(payload, dict) else None
            detail, code = str(detail)[:2000], (str(code)[:100] if code is not None else None)
            if code == "RESET_NEEDED":
                raise gym.error.ResetNeeded(detail)
            raise RemoteEnvError(f"{what}: {response.status_code} {detail}", response.status_code, code)
        if payload is None:
            raise RemoteEnvError(f"{what}: the answer is not JSON ({raw[:200]!r})")
        session_id = response.headers.get(SESSION_HEADER)
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


def _client_token(token: str | None, token_file: str | os.PathLike[str] | None) -> str | None:
    if token is not None and token_file is not None:
        raise ValueError("give token or token_file, not both")
    if token_file is not None:
        with open(os.path.expanduser(token_file), encoding="ascii") as file:
            token = file.read().strip()
        if not token:
            raise ValueError(f"token file {token_file} is empty")
    return token if token is not None else os.environ.get(TOKEN_ENV) or None


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
