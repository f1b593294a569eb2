"""What every cheap policy is (``agents/cheap.py`` holds them, ``toolbench audit`` plays them), and
the WebShop page reading that several share."""

from __future__ import annotations

import re
from typing import Any, ClassVar

from toolbench.core.env import ToolEnv
from toolbench.core.tasks import Task

ASIN = re.compile(r"[a-z0-9]{10}")


class CheapPolicy:
    """One policy; ``plan`` gives the actions of an episode, or ``act`` answers step by step.
    Past its plan a policy repeats its last action (the env ends the episode)."""

    policy: ClassVar[str]
    about: ClassVar[str]

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.name = f"cheap:{self.policy}"
        self._actions: list[str] = []

    def applies(self, task: str, mode: str, splits: tuple[str, ...]) -> bool:
        """Whether the policy means something for this task (by name), mode and its splits."""
        return True

    def plan(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> list[str]:
        raise NotImplementedError

    def begin(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> None:
        self._actions = list(self.plan(env, task, observation, info))
        if env.mode == "program" and len(self._actions) > 1:
            self._actions = ["\n".join(self._actions)]  # one action is the whole program

    def act(self, observation: str, info: dict[str, Any]) -> str:
        return self._actions.pop(0) if len(self._actions) > 1 else (self._actions[0] if self._actions else "")


def instruction_of(observation: str) -> str:
    """A WebShop page's instruction."""
    parts = observation.split(" [SEP] ")
    return parts[parts.index("Instruction:") + 1] if "Instruction:" in parts else observation


class MovesPolicy(CheapPolicy):
    """A policy that reads each page before its next move: ``begin`` sets ``self._moves``, a
    generator whose every ``yield`` of an action gets back the page and info it led to. Past its
    last move it buys (WebShop's finishing click)."""

    last_move = "click[buy now]"

    def start(self, moves: Any) -> None:
        self._moves, self._started = moves, False

    def act(self, observation: str, info: dict[str, Any]) -> str:
        try:
            if not self._started:
                self._started = True
                return next(self._moves)
            return self._moves.send((observation, info))
        except StopIteration:
            return self.last_move
