"""The RL example learns: a short run raises the policy's reward over the untrained policy's on the same episodes."""

import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "examples" / "train_tool_policy.py"


def _example():
    spec = importlib.util.spec_from_file_location("train_tool_policy", _PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("task", "episodes", "floor"), [("WebShop", 200, 0.2), ("HomeSearch", 3000, 0.2)])
def test_short_run_raises_reward(task: str, episodes: int, floor: float) -> None:
    example = _example()
    run = example.train(task, episodes=episodes, eval_every=episodes, seed=0)
    start, end = run["start"]["reward"], run["end"]["reward"]
    # the start is the untrained (uniform) policy on the same test episodes and sampling seed
    assert end - start > floor, (start, end)
    assert run["end_greedy"]["reward"] > start + floor


def test_untrained_policy_is_uniform_and_reproducible() -> None:
    example = _example()
    first = example.train("WebShop", episodes=20, eval_every=20, seed=3)
    again = example.train("WebShop", episodes=20, eval_every=20, seed=3)
    assert first["curve"] == again["curve"]
