"""The random agent: a chance baseline that plays the reference of another task of the same split.

Its actions are well-formed calls to the right service, so it measures how often a plausible but
unrelated call happens to answer the question, rather than how often garbage fails to parse.
"""

from __future__ import annotations

from toolbench.agents.base import ScriptedAgent
from toolbench.core.env import ToolEnv
from toolbench.core.seeding import stable_hash
from toolbench.core.tasks import Task


class RandomAgent(ScriptedAgent):
    name = "random"
    trial = 0  # set by the harness: each trial of a task draws another task's reference

    def __init__(self, seed: int = 0):
        super().__init__()
        self.seed = seed

    def script(self, env: ToolEnv, task: Task) -> list[str]:
        others = [other for other in env.tasks if other.id != task.id] or [task]
        # Trial 0 draws as before trials existed, so single-trial runs keep their numbers.
        draw = ("random-agent", self.seed, task.id, *((self.trial,) if self.trial else ()))
        chosen = others[stable_hash(*draw) % len(others)]
        return env.oracle_actions(chosen)
