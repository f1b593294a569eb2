"""Cheap WebShop policies that play the env through its public actions only (no goal, no reference):
what an RL optimiser finds first if the shop can be passed without reading the pages.

- the rule agent is ``cheap:rule_buyer`` (``toolbench/agents/cheap.py``), which ``toolbench audit`` plays;
- ``blind_copy``: the closest training goal's reference replayed as is (its query, product and
  option clicks), without reading a page.
"""

from __future__ import annotations

from typing import Any

from rapidfuzz import fuzz, process

from toolbench.agents.cheap import instruction_of
from toolbench.core.tasks import Task


def closest(prompt: str, known: list[Task]) -> Task:
    """The training task whose instruction is most like ``prompt``'s."""
    texts = [instruction_of(task.prompt) for task in known]
    _, _, index = process.extractOne(instruction_of(prompt), texts, scorer=fuzz.ratio)
    return known[index]


def blind_copy(env: Any, task_id: str, known: list[Task]) -> dict[str, Any]:
    """Replay the closest training goal's reference in program mode (one program, no page read)."""
    observation, _ = env.reset(options={"task_id": task_id})
    near = closest(observation, known)
    return env.step(near.references[0])[4]
