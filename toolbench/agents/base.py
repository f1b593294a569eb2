"""The agent interface used by the evaluation harness."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol

from toolbench.core.env import ToolEnv
from toolbench.core.tasks import Task


@dataclass(frozen=True)
class EpisodeLimits:
    """What one episode may use; ``None`` is no limit. An episode that reaches one ends as a
    failure with the limit as its reason (``LimitReached``)."""

    max_turns: int | None = None  # model replies (a scripted agent's: its actions)
    max_tokens: int | None = None  # tokens the model used over the episode (prompt and completion)
    timeout_s: float | None = None  # wall time of the episode
    max_cost: float | None = None  # the cost the endpoint reports in its usage (``usage.cost``)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class Agent(Protocol):
    """An agent plays one episode at a time: ``begin`` once, then ``act`` until the episode ends.

    Before each ``begin`` the harness sets ``agent.trial`` (which of a task's trials this is: model
    agents key their reply cache on it) and ``agent.limits`` (an ``EpisodeLimits``)."""

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
