"""verifiers adapter (verifiers 0.4, its ``verifiers.v1`` stack): a Taskset over any toolbench envs
and the Env that plays them, built on ``integrations.session.Session``.

verifiers loads an environment from a taskset id: the id names an importable module whose
``__all__`` exports one ``vf.Taskset`` subclass and one ``vf.Env`` subclass. The top-level module
``toolbench_verifiers`` re-exports this one as that plugin, so ``vf-eval toolbench-verifiers`` (or
``vf.load_environment``) finds it.

Tasks. The taskset's rows are ``session.task_rows``: one env or several (``tasks`` names them, or
maps each to a weight), with ``split``, ``size`` and ``seed``; each row names its own env.

Rollouts. Each rollout opens a ``Session`` for its row. The model is offered the session's tools
as native tools: verifiers hands a model tools only through MCP servers, so the Env serves one
in-process MCP endpoint that lists each rollout's ``session.tools`` (reached through the task's
``tools_url``). A native tool call is played by ``Session.call`` from the task's ``@vf.intercept``
hook, at verifiers' tool gate, so the harness never runs it itself (an unknown tool is an error
observation from the session, not an endless "unknown tool" loop); a reply without tool calls
ends the harness segment and is played by ``Session.reply``, its observation being the next user
turn. The episode ends when the session is done (a ``@vf.stop`` halts the harness) or at the
session's caps. The session's reward is the trace's ``toolbench_score`` reward, with
``toolbench_success`` as a metric and ``trace.info["toolbench"]`` naming the row and actions.

The player defaults to what runs on one machine: the ``null`` harness (a plain chat loop with the
env's tools only, not the coding agent with bash and edit) in the ``subprocess`` runtime.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import socket
from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf
from pydantic import field_validator
from verifiers.v1.harnesses.null import NullHarnessConfig
from verifiers.v1.mcp import Toolset, ToolsetConfig

from toolbench.integrations.session import Limits, Session, task_rows

#: The reply a tool result may not be: an empty verdict at verifiers' tool gate means "run it".
_EMPTY_OBSERVATION = "(no output)"


class ToolbenchConfig(vf.TasksetConfig):
    """Which episodes the taskset holds, and the caps every episode plays under."""

    tasks: list[str] | dict[str, float] = ["HomeSearch"]
    """The envs (``toolbench.TASKS`` names), or each mapped to its weight in the mix."""
    split: str = "train"
    size: int | None = None
    """Rows in all, drawn by weight; None: every task of every named env's split."""
    seed: int = 0
    modes: dict[str, str] = {}
    """A mode per env where it should not be ``training_mode``'s (interactive where it exists)."""
    max_turns: int = Limits.max_turns
    max_calls_per_reply: int = Limits.max_calls_per_reply
    max_reply_chars: int = Limits.max_reply_chars
    max_episode_chars: int = Limits.max_episode_chars
    pay: str = "score"
    """What the reward pays: the env's partial score (``score``) or success only (``success``)."""

    @field_validator("tasks", mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        """On a command line: JSON, or ``HomeSearch,WebShop`` / ``HomeSearch=2,WebShop=1``."""
        if not isinstance(value, str):
            return value
        if value.lstrip().startswith(("[", "{")):
            return json.loads(value)
        names = [part.strip() for part in value.split(",") if part.strip()]
        if any("=" in name for name in names):
            return {name.split("=")[0].strip(): float(name.split("=")[1]) if "=" in name else 1.0 for name in names}
        return names

    def limits(self) -> Limits:
        return Limits(self.max_turns, self.max_calls_per_reply, self.max_reply_chars, self.max_episode_chars)


class ToolbenchTaskConfig(vf.TaskConfig):
    tools_url: str | None = None
    """The MCP endpoint listing this rollout's tools; set by the Env per rollout."""


class ToolbenchData(vf.TaskData):
    row: dict[str, Any]
    """``task_rows``' row: task, env_id, split, mode, task_id."""
    limits: dict[str, int]
    pay: str = "score"


class OfferedTools(Toolset[ToolsetConfig, vf.State]):
    """The Env's MCP endpoint, as the harness reaches it: listing only, calls go to the gate."""

    TOOL_PREFIX = None  # the env's own tool names, unprefixed


class ToolbenchTask(vf.Task[ToolbenchData, vf.State, ToolbenchTaskConfig]):
    session: Session | None = None

    @classmethod
    def toolsets(cls, config: vf.TaskConfig) -> list[vf.Toolset]:
        # verifiers also asks with the taskset's plain TaskConfig, before any rollout.
        url = getattr(config, "tools_url", None)
        return [OfferedTools(ToolsetConfig(url=url))] if url else []

    @vf.intercept
    def play_tool_call(self, request: vf.Request) -> vf.Request | None:
        """At the tool gate (a probe result, empty, after the assistant's call): play the call in
        the session and put its observation in the result, so the harness does not run it."""
        *history, probe = request.messages
        if self.session is None or not isinstance(probe, vf.ToolMessage) or probe.content:
            return None
        call = next(
            (c for m in reversed(history) if isinstance(m, vf.AssistantMessage) for c in m.tool_calls or []
             if c.id == probe.tool_call_id),
            None,
        )  # fmt: skip
        if call is None:
            return None
        observation = self.session.call(call.name, call.arguments) or _EMPTY_OBSERVATION
        messages = [*history, probe.model_copy(update={"content": observation})]
        return request.model_copy(update={"messages": messages})

    @vf.stop
    def episode_over(self, trace: vf.Trace) -> bool:
        return self.session is not None and self.session.done

    @vf.reward
    async def toolbench_score(self, trace: vf.Trace) -> float:
        return self.session.reward if self.session is not None else 0.0

    @vf.metric
    async def toolbench_success(self, trace: vf.Trace) -> float:
        return float(self.session is not None and self.session.success)

    @vf.metric
    async def toolbench_calls(self, trace: vf.Trace) -> float:
        """Calls the episode took: with ``toolbench_finished``, how a dead signal shows."""
        return self.session.stats()["calls"] if self.session is not None else 0.0

    @vf.metric
    async def toolbench_finished(self, trace: vf.Trace) -> float:
        """1.0 when the agent ended the episode itself, 0.0 when a cap did."""
        return self.session.stats()["finished"] if self.session is not None else 0.0


class ToolbenchTaskset(vf.Taskset[ToolbenchTask, ToolbenchConfig]):
    def load(self) -> Iterator[ToolbenchTask]:
        config = self.config
        tasks = dict(config.tasks) if isinstance(config.tasks, dict) else list(config.tasks)
        limits = config.limits().__dict__
        for row in task_rows(tasks, config.split, config.size, config.seed, config.modes or None):
            name = f"{row['task']}/{row['task_id']}"
            data = ToolbenchData(id=name, name=name, row=row, limits=dict(limits), pay=config.pay)
            yield ToolbenchTask(data, ToolbenchTaskConfig(**config.task.model_dump()))


class ToolbenchEnvConfig(vf.EnvConfig):
    player: vf.AgentConfig = vf.AgentConfig(harness=NullHarnessConfig(id="null"), runtime=vf.SubprocessConfig())


class _QuietServer:
    """uvicorn serving inside the Env's event loop, leaving signal handling to verifiers."""

    def __init__(self, app: Any, sock: socket.socket) -> None:
        import uvicorn

        class Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:
                yield

        self.server = Server(uvicorn.Config(app, log_level="critical", lifespan="on"))
        self.task = asyncio.create_task(self.server.serve(sockets=[sock]))

    async def close(self) -> None:
        self.server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


class ToolbenchEnv(vf.Env[ToolbenchEnvConfig]):
    """Plays one row's episode: the model's native calls at the tool gate, its replies between
    harness segments, all through one ``Session``."""

    def __init__(self, config: ToolbenchEnvConfig) -> None:
        super().__init__(config)
        self._offers: dict[str, Session] = {}
        self._server: _QuietServer | None = None
        self._url: str | None = None

    async def start(self) -> None:
        from mcp import types
        from mcp.server.lowlevel import Server

        async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
            session = self._offers.get(ctx.request.query_params.get("rollout", "") if ctx.request else "")
            tools = session.tools if session is not None else []
            return types.ListToolsResult(
                tools=[
                    types.Tool.model_validate(
                        {"name": f["name"], "description": f.get("description", ""), "inputSchema": f["parameters"]}
                    )
                    for f in (tool["function"] for tool in tools)
                ]
            )

        app = Server("toolbench", on_list_tools=list_tools).streamable_http_app(json_response=True, stateless_http=True)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self._url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        self._server = _QuietServer(app, sock)
        while not self._server.server.started:
            if self._server.task.done():
                await self._server.task  # raises the startup error
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        if self._server is not None:
            await self._server.close()
        self._server, self._url = None, None

    async def run(self, task: ToolbenchTask, agents: vf.Agents) -> None:
        row = task.data.row
        session = Session(
            row["task"], row["task_id"], row["split"], row["mode"], limits=Limits(**task.data.limits), pay=task.data.pay
        )
        token = secrets.token_hex(8)
        try:
            messages = session.open()
            system = "\n\n".join(m["content"] for m in messages if m["role"] == "system") or None
            prompt = "\n\n".join(m["content"] for m in messages if m["role"] != "system")
            played = task.with_data(system_prompt=system, prompt=prompt)
            played.config = task.config.model_copy(
                update={"tools_url": f"{self._url}?rollout={token}" if self._url else None}
            )
            played.session = session
            self._offers[token] = session
            async with agents.player.interaction(played) as interaction:
                segment = await interaction.turn()
                # Every model turn is a session turn (a call at the gate, or this reply), so the
                # session's turn cap bounds the loop.
                while not segment.terminated and not session.done:
                    observation = session.reply(segment.last_reply)
                    if session.done:
                        break
                    segment = await interaction.turn(observation)
                session.end("verifiers ended the rollout")  # scored as it stands, as the env truncates
                interaction.trace.info["toolbench"] = {**row, "actions": list(session.actions), "turns": session.turns}
        finally:
            self._offers.pop(token, None)
            session.close()


__all__ = [
    "ToolbenchConfig",
    "ToolbenchData",
    "ToolbenchEnv",
    "ToolbenchEnvConfig",
    "ToolbenchTask",
    "ToolbenchTaskConfig",
    "ToolbenchTaskset",
]
