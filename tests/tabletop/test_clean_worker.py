"""Agent code runs in a clean worker: nothing of the tasks is in its memory, even unguarded."""

import gymnasium as gym

import toolbench
from toolbench.core import sandbox

from ..core.secret_search import search_code


def test_unguarded_code_finds_no_reference_in_its_memory(monkeypatch):
    env = gym.make("toolbench/Tabletop-v0", mode="interactive")
    tasks = toolbench.load_tasks("Tabletop")
    env.reset(options={"task_id": tasks[0].id})
    monkeypatch.setattr(sandbox.for_tests, "UNGUARDED_FOR_TESTS", True)
    observation, *_ = env.step(search_code([task.references[0] for task in tasks]))
    assert "found 0 records 0" in observation, observation
