"""The verifiers adapter: verifiers loads it by taskset id, and a scripted rollout earns our scorer's reward.

The rollout runs the adapter's ``run`` with the model replaced by a scripted interaction that hands
back verifiers' own ``Segment`` objects (the library's real agent needs a harness program and a model
endpoint); the reward it records is checked against the env's scorer.
"""

import asyncio
import json
from contextlib import asynccontextmanager

import pytest

vf = pytest.importorskip(
    "verifiers.v1", reason="the 'verifiers' extra is not installed (pip install -e '.[verifiers]')"
)
from verifiers.v1.agent import Segment  # noqa: E402

import toolbench  # noqa: E402


class ScriptedTrace:
    def __init__(self) -> None:
        self.rewards: dict[str, float] = {}
        self.info: dict = {}

    def record_reward(self, name: str, value: float, weight: float = 1.0) -> None:
        self.rewards[name] = value


class ScriptedInteraction:
    """Answers each turn with the next scripted reply, and records the user turns the env sent."""

    def __init__(self, replies: list[str]) -> None:
        self.replies, self.user_turns, self.trace = list(replies), [], ScriptedTrace()

    async def turn(self, message: str | None = None) -> Segment:
        if message is not None:
            self.user_turns.append(message)
        if not self.replies:
            return Segment(messages=[], terminated=True)
        return Segment(messages=[], root_reply=self.replies.pop(0))


class ScriptedAgents:
    def __init__(self, replies: list[str]) -> None:
        self.interaction_ = ScriptedInteraction(replies)
        self.player = self

    @asynccontextmanager
    async def interaction(self, task):
        yield self.interaction_


def _load(env_id: str):
    config = vf.resolve_env_config({"taskset": {"id": "toolbench-verifiers", "env_id": env_id, "split": "demo"}})
    return vf.load_environment(config)


def _play(env_id: str, replies: list[str]) -> ScriptedInteraction:
    env = _load(env_id)
    task = next(iter(env.taskset))
    agents = ScriptedAgents(replies)
    asyncio.run(env.run(task, agents))
    return agents.interaction_


def test_loads_by_taskset_id_with_the_splits_tasks() -> None:
    env = _load("toolbench/WebShop-v0")
    tasks = list(env.taskset)
    assert [t.data.info["task_id"] for t in tasks] == [t.id for t in toolbench.load_tasks("WebShop", "demo")]
    assert "search[" in tasks[0].data.system_prompt


@pytest.mark.parametrize(
    ("task", "env_id"), [("HomeSearch", "toolbench/HomeSearch-v0"), ("WebShop", "toolbench/WebShop-v0")]
)
def test_oracle_replies_earn_one(task: str, env_id: str) -> None:
    replies = toolbench.load_tasks(task, "demo")[0].references[0].splitlines()
    interaction = _play(env_id, replies)
    assert interaction.trace.rewards == {"toolbench_score": 1.0}
    assert interaction.trace.info["success"] is True
    assert len(interaction.user_turns) == len(replies) - 1  # every step but the finishing one answered


def test_wrong_tool_calls_earn_the_scorers_partial_score() -> None:
    calls = [
        {"name": "set_location", "arguments": {"value": "Lincoln"}},
        {"name": "set_buy_or_rent", "arguments": {"value": "buy"}},
        {"name": "search", "arguments": {}},
    ]
    interaction = _play("toolbench/HomeSearch-v0", [f"<tool_call>{json.dumps(c)}</tool_call>" for c in calls])
    import gymnasium as gym

    direct = gym.make("toolbench/HomeSearch-v0", mode="interactive", split="demo")
    direct.reset(options={"task_id": toolbench.load_tasks("HomeSearch", "demo")[0].id})
    expected = [direct.step(json.dumps(c))[1] for c in calls][-1]
    assert interaction.trace.rewards["toolbench_score"] == expected < 1.0
    assert interaction.trace.info["success"] is False
