"""The oracle agent: plays each task's first reference."""

from __future__ import annotations

from toolbench.agents.base import ScriptedAgent
from toolbench.core.env import ToolEnv
from toolbench.core.tasks import Task


class OracleAgent(ScriptedAgent):
    name = "oracle"

    def script(self, env: ToolEnv, task: Task) -> list[str]:
        return env.oracle_actions(task)
