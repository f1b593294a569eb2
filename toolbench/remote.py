"""``RemoteEnv``: a Gymnasium env whose episodes run on a ``toolbench serve env`` server.

``gym.make("toolbench/Remote-v0", url="http://host:8000")`` gives an env a trainer steps as if it
were local; ``gym.make_vec("toolbench/Remote-v0", num_envs=8, url=...)`` gives eight, each its own
session (and env) on the server. The server decides the task and its ``gym.make`` arguments.
"""

from __future__ import annotations

import contextlib
from typing import Any

import gymnasium as gym
import requests

from toolbench.core.spaces import UnicodeText

SESSION_HEADER = "X-Session-Id"


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
    - ``headers``: extra HTTP headers (say, an ``Authorization`` a proxy in front needs).
    - ``render_mode``: ``"ansi"`` fetches the served env's transcript (serve it with ``render_mode="ansi"``).

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
        render_mode: str | None = None,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, not {render_mode!r}")
        self.url = url.rstrip("/")
        self.timeout = float(timeout)
        self.render_mode = render_mode
        self._http = requests.Session()
        self._http.headers.update(headers or {})
        self._session_id: str | None = None
        self._schema = self._call("GET", "/schema")
        self.env_id: str = self._schema["env_id"]
        self.mode: str = self._schema["mode"]
        self.observation_space = UnicodeText(int(self._schema["observation_max_length"]))
        self.action_space = UnicodeText(int(self._schema["action_max_length"]))

    # ----------------------------------------------------------------- HTTP
    def _call(self, method: str, path: str, body: Any = None) -> Any:
        headers = {SESSION_HEADER: self._session_id} if self._session_id else {}
        try:
            response = self._http.request(
                method, self.url + path, json=body, headers=headers, timeout=self.timeout, allow_redirects=False
            )
        except requests.RequestException as exc:
            raise RemoteEnvError(f"{method} {self.url}{path}: {exc}") from exc
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if response.status_code >= 400:
            detail = payload.get("detail") if isinstance(payload, dict) else response.text[:500]
            code = payload.get("code") if isinstance(payload, dict) else None
            if code == "RESET_NEEDED":
                raise gym.error.ResetNeeded(detail)
            raise RemoteEnvError(f"{method} {path}: {response.status_code} {detail}", response.status_code, code)
        if payload is None:
            raise RemoteEnvError(f"{method} {path}: the answer is not JSON ({response.text[:200]!r})")
        if SESSION_HEADER in response.headers:
            self._session_id = response.headers[SESSION_HEADER]
        return payload

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
        observation = result["observation"]
        return observation["text"], observation["info"]

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._session_id is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if not isinstance(action, str):  # JSON could carry it, but the server takes text only
            raise TypeError(f"an action must be a str, not {type(action).__name__}")
        result = self._call("POST", "/step", {"action": action})
        observation = result["observation"]
        reward = float(result["reward"] or 0.0)
        return observation["text"], reward, observation["terminated"], observation["truncated"], observation["info"]

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        if self._session_id is None:  # as the served env renders before its first episode
            return f"=== {self.env_id} · (no episode) ===\n"
        return self._call("GET", "/render")["render"]

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
