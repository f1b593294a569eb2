"""The agent interface used by the evaluation harness."""

from __future__ import annotations

from typing import Any, Protocol

from toolbench.core.env import ToolEnv
from toolbench.core.tasks import Task


class Agent(Protocol):
    """An agent plays one episode at a time: ``begin`` once, then ``act`` until the episode ends."""

    name: str

    def begin(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> None: ...

    def act(self, observation: str, info: dict[str, Any]) -> str: ...


class ScriptedAgent:
    """Plays a fixed list of actions chosen in ``begin`` (the oracle and random agents)."""

    name = "scripted"

    def __init__(self) -> None:
        self._actions: list[str] = []

    def script(self, env: ToolEnv, task: Task) -> list[str]:
        raise NotImplementedError

    def begin(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> None:
        self._actions = list(self.script(env, task))

    def act(self, observation: str, info: dict[str, Any]) -> str:
        # Past the end of the script the agent repeats its last action (the env ends the episode).
        return self._actions.pop(0) if len(self._actions) > 1 else (self._actions[0] if self._actions else "")
