"""The SkyRL-gym adapter: skyrl_gym.make builds it from a dataset row, and a scripted rollout earns our scorer's reward."""

import json

import pytest

skyrl_gym = pytest.importorskip("skyrl_gym", reason="the 'skyrl' extra is not installed (pip install -e '.[skyrl]')")

import gymnasium as gym  # noqa: E402

import toolbench  # noqa: E402
from toolbench.integrations.skyrl import register, task_rows  # noqa: E402


def _direct_reward(actions: list[str]) -> float:
    env = gym.make("toolbench/HomeSearch-v0", mode="interactive", split="demo")
    env.reset(options={"task_id": toolbench.load_tasks("HomeSearch", "demo")[0].id})
    return [env.step(a)[1] for a in actions][-1]


def _play(task: str, env_id: str, replies: list[str]) -> tuple[float, list, dict]:
    """What SkyRL-train's generator does: make the env from the row, init with the prompt, step each model turn."""
    register()
    row = task_rows(env_id, task, "demo")[0]
    env = skyrl_gym.make(row["env_class"], env_config=None, extras=row)
    prompt, _ = env.init(row["prompt"])
    total, outputs = 0.0, []
    for reply in replies:
        out = env.step(reply)
        outputs.append(out)
        total += out["reward"]
        if out["done"]:
            break
    return total, outputs, {"prompt": prompt, "metrics": env.get_metrics()}


@pytest.mark.parametrize(
    ("task", "env_id"), [("HomeSearch", "toolbench/HomeSearch-v0"), ("WebShop", "toolbench/WebShop-v0")]
)
def test_oracle_replies_earn_one(task: str, env_id: str) -> None:
    env = toolbench.load_tasks(task, "demo")[0]
    scripted = env.references[0].splitlines()  # the fake model: the reference's calls, one per turn
    total, outputs, extra = _play(task, env_id, scripted)
    assert outputs[-1]["done"] and total == 1.0
    assert extra["metrics"]["success"] == 1.0
    assert all(o["observations"] for o in outputs[:-1])


def test_tool_call_blocks_and_a_wrong_answer() -> None:
    calls = [
        {"name": "set_location", "arguments": {"value": "Lincoln"}},
        {"name": "set_buy_or_rent", "arguments": {"value": "buy"}},
        {"name": "search", "arguments": {}},
    ]
    replies = [f"I will call it.\n<tool_call>{json.dumps(c)}</tool_call>" for c in calls]
    total, outputs, extra = _play("HomeSearch", "toolbench/HomeSearch-v0", replies)
    assert outputs[0]["observations"][0]["content"].startswith("OK")
    assert outputs[-1]["done"]
    assert total == _direct_reward([json.dumps(c) for c in calls]) < 1.0  # the scorer's own partial score
    assert extra["metrics"]["success"] == 0.0
