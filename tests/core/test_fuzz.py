"""Mutated reference actions never raise: every env answers with an observation."""

import random

import gymnasium as gym
import pytest

import toolbench
from tests.conftest import ENV_IDS

ALPHABET = list("abc;&|$`'\"\\ \n\t-{}[]()<>#%?=/:.,@~*!+") + [
    "\udcff",
    "\x00",
    "é",
    "猫",
    "\u2028",
    "\r",
    "%00",
    "%ff",
    "\x7f",
    "\\\n",
]


def mutate(rng: random.Random, text: str) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 8)):
        position = rng.randrange(len(chars) + 1)
        roll = rng.random()
        if roll < 0.4:
            chars.insert(position, rng.choice(ALPHABET))
        elif chars and roll < 0.7:
            chars.pop(min(position, len(chars) - 1))
        elif chars:
            chars[min(position, len(chars) - 1)] = rng.choice(ALPHABET)
    return "".join(chars)


EDGE_CASES = [
    "curl 'https://api.openweathermap.org/data/2.5/weather?id=²&appid={API_KEY}'",
    "curl 'https://api.openweathermap.org/data/2.5/forecast?q=Rome&cnt=1" + "0" * 5000 + "&appid={API_KEY}'",
    "curl 'https://api.openweathermap.org/geo/1.0/direct?q=Rome&limit=٣&appid={API_KEY}'",
    "curl 'https://api.thecatapi.com/v1/images/search?category_ids=١'",
    "curl -X POST https://api.thecatapi.com/v1/favourites -H 'Content-Type: application/json' -d '"
    + "[" * 100000
    + "'",
    "curl -X POST https://api.thecatapi.com/v1/votes --json '" + '{"a":' * 50000 + "'",
    "curl 'https://api.thecatapi.com//anything/v1/favourites?limit=3'",
]


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("action", EDGE_CASES, ids=range(len(EDGE_CASES)))
def test_edge_cases_are_observations(env_id, action):
    env = gym.make(env_id, disable_env_checker=True)
    for compare_string_only in (False, True):
        task = env.unwrapped.tasks[0]
        if compare_string_only:
            task = toolbench.Task(
                task.id, task.prompt, task.references, extra={**task.extra, "compare_string_only": True}
            )
            env = gym.make(env_id, tasks=[task], disable_env_checker=True)
        env.reset(options={"task_id": task.id})
        observation, reward, *_, info = env.step(action)
        assert "internal error" not in observation and reward == 0.0, observation[:200]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_mutated_actions_never_raise(env_id):
    rng = random.Random(env_id)
    env = gym.make(env_id, disable_env_checker=True)
    tasks = toolbench.load_tasks(env_id)
    # Tabletop runs each action in a sandboxed child with a physics simulation: fewer, slower rounds.
    for _ in range(60 if "Tabletop" in env_id else 150 if "Sheets" in env_id else 1500):
        task = rng.choice(tasks)
        env.reset(options={"task_id": task.id})
        observation, reward, terminated, truncated, info = env.step(mutate(rng, env.unwrapped.oracle_actions(task)[0]))
        assert isinstance(observation, str) and 0.0 <= reward <= 1.0
        assert "internal error" not in observation
        if "VirtualHome" in env_id:  # success is the activity's goals met; the reward is ToolBench's LCS
            assert info["success"] is (info.get("simulated", False) and info["goal_rate"] == 1.0)
        else:
            assert info["success"] is (reward == 1.0)
