"""A toolbench env as an openenv-core ``Environment``, served by openenv-core's own server: the other
side of bench_serve_scale.py's comparison.

The adapter is ours (nothing in it comes from openenv-core): ``ToolbenchEnvironment`` wraps
``gym.make("toolbench/<Task>-v0", **env_kwargs)``; an action is ``{"text": "<action>"}``, an
observation carries the env's text, its ``info`` (made JSON-safe the way our server makes it),
``terminated`` and ``truncated`` beside OpenEnv's ``reward`` and ``done``, so both servers answer a
client with the same fields. ``reset`` takes our ``task_id`` beside OpenEnv's ``seed`` and ``episode_id``.

Run as a script it serves the env the way openenv-core's template app runs (``create_app(...)`` on
uvicorn with uvicorn's defaults), with ``max_concurrent_envs`` sessions at most, and prints the
address it bound (``--port 0`` picks a free port) on its first line of stdout::

    python benchmarks/openenv_adapter.py --task HomeSearch --env-kwargs '{"mode": "interactive"}' \\
        --max-concurrent-envs 64 --port 0

The one departure from uvicorn's defaults: no access log line per request (our server is run with
``--no-access-log`` too), so neither server spends the benchmark writing logs.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import sys
import threading
from typing import Any

import gymnasium as gym
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

import toolbench  # noqa: F401 (registers the ids)
from toolbench.core.jsonsafe import to_json_safe

# gym.make fills the fixtures' caches on first use; openenv-core builds each session's env on that
# session's own thread, so builds wait for one another here (our server does the same).
_BUILD_LOCK = threading.Lock()


class ToolbenchAction(Action):
    text: str


class ToolbenchObservation(Observation):
    text: str = ""
    info: dict[str, Any] = {}
    terminated: bool = False
    truncated: bool = False


class ToolbenchEnvironment(Environment[ToolbenchAction, ToolbenchObservation, State]):
    """One toolbench env per openenv-core session."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session builds its own env: nothing is shared

    def __init__(self, env_id: str, env_kwargs: dict[str, Any]):
        super().__init__()
        with _BUILD_LOCK:
            self._env = gym.make(env_id, **env_kwargs)
        self._state = State()

    def reset(
        self, seed: int | None = None, episode_id: str | None = None, task_id: str | None = None, **kwargs: Any
    ) -> ToolbenchObservation:
        text, info = self._env.reset(seed=seed, options={"task_id": task_id} if task_id else None)
        self._state = State(episode_id=episode_id, step_count=0)
        return ToolbenchObservation(text=text, info=to_json_safe(info, "info"), done=False, reward=None)

    def step(self, action: ToolbenchAction, timeout_s: float | None = None, **kwargs: Any) -> ToolbenchObservation:
        text, reward, terminated, truncated, info = self._env.step(action.text)
        self._state.step_count += 1
        return ToolbenchObservation(
            text=text,
            info=to_json_safe(info, "info"),
            terminated=bool(terminated),
            truncated=bool(truncated),
            done=bool(terminated or truncated),
            reward=float(reward),
        )

    @property
    def state(self) -> State:
        return self._state

    def close(self) -> None:
        self._env.close()


def make_app(env_id: str, env_kwargs: dict[str, Any], max_concurrent_envs: int) -> Any:
    """openenv-core's FastAPI app serving the env, at most ``max_concurrent_envs`` WebSocket sessions."""
    factory = functools.partial(ToolbenchEnvironment, env_id, env_kwargs)
    return create_app(factory, ToolbenchAction, ToolbenchObservation, max_concurrent_envs=max_concurrent_envs)


async def serve(app: Any, host: str, port: int) -> None:
    """uvicorn with its defaults (as ``uvicorn.run(app, host=..., port=...)``), announcing the bound port."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, access_log=False, log_level="warning"))
    serving = asyncio.create_task(server.serve())
    while not server.started and not serving.done():
        await asyncio.sleep(0.01)
    if server.started:
        bound = server.servers[0].sockets[0].getsockname()[1]
        print(f"serving {app.title} (openenv-core {_openenv_version()}) on http://{host}:{bound}", flush=True)
    await serving


def _openenv_version() -> str:
    from importlib.metadata import version

    return version("openenv-core")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", default="HomeSearch")
    parser.add_argument("--env-kwargs", default="{}", help="gym.make arguments as a JSON object")
    parser.add_argument("--max-concurrent-envs", type=int, default=64)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    env_id = args.task if "/" in args.task else f"toolbench/{args.task}-v0"
    app = make_app(env_id, json.loads(args.env_kwargs), args.max_concurrent_envs)
    try:
        asyncio.run(serve(app, args.host, args.port))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
