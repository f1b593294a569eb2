"""The TRL adapter: tools TRL reads from the class match the env's, and a scripted rollout is scored by our scorer."""

import inspect
import json

import pytest

pytest.importorskip("trl", reason="the 'trl' extra is not installed (pip install -e '.[trl]')")
import gymnasium as gym  # noqa: E402
from transformers.utils import get_json_schema  # noqa: E402  (TRL reads tool schemas with it)

from toolbench.integrations.trl import environment_factory, task_rows  # noqa: E402

# Home Search demo task 0's request, as the tool calls a model would make
GOOD = [
    ("set_location", {"value": "Lincoln"}),
    ("set_buy_or_rent", {"value": "rent"}),
    ("select_home_type", {"home_types": ["Townhouse", "Condo"]}),
    ("set_max_price", {"value": 1250}),
    ("set_num_garages", {"value": 2}),
    ("set_num_beds", {"value": 1}),
    ("set_num_swimming_pools", {"value": 1}),
    ("search", {}),
]


def _rollout(calls):
    """What GRPOTrainer does per rollout: one instance, reset with the row, tools by name, then get_reward."""
    factory = environment_factory("toolbench/HomeSearch-v0", split="demo")
    env = factory()
    row = task_rows("HomeSearch", "demo")[0]
    prompt = env.reset(**row)
    tools = {
        name: getattr(env, name)
        for name, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    }
    observations = [tools[name](**arguments) for name, arguments in calls]
    return prompt, observations, env.get_reward(), env


def test_tool_schemas_are_the_envs() -> None:
    _, _, _, env = _rollout([])
    for tool in env.info["tools"]:
        schema = get_json_schema(getattr(env, tool["function"]["name"]))["function"]
        assert schema["name"] == tool["function"]["name"]
        assert schema["parameters"]["properties"].keys() == tool["function"]["parameters"]["properties"].keys()
        assert schema["parameters"].get("required", []) == tool["function"]["parameters"].get("required", [])


def test_scripted_rollout_earns_the_scorers_reward() -> None:
    prompt, observations, reward, _ = _rollout(GOOD)
    assert "Lincoln" in prompt
    assert observations[0].startswith("OK")
    assert reward == 1.0


def test_wrong_rollout_earns_the_scorers_partial_score_and_a_finished_episode_takes_no_calls() -> None:
    wrong = [("set_location", {"value": "Lincoln"}), ("set_buy_or_rent", {"value": "buy"}), ("search", {})]
    _, observations, reward, env = _rollout(wrong)
    direct = gym.make("toolbench/HomeSearch-v0", mode="interactive", split="demo")
    direct.reset(options={"task_id": "home_search-demo-0000"})
    expected = [direct.step(json.dumps({"name": n, "arguments": a}))[1] for n, a in wrong][-1]
    assert reward == expected < 1.0  # the scorer's own partial score
    assert "over" in env.set_num_beds(value=2)
    assert env.get_reward() == reward
