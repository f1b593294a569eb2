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


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_mutated_actions_never_raise(env_id):
    rng = random.Random(env_id)
    env = gym.make(env_id, disable_env_checker=True)
    tasks = toolbench.load_tasks(env_id)
    for _ in range(1500):
        task = rng.choice(tasks)
        env.reset(options={"task_id": task.id})
        observation, reward, terminated, truncated, info = env.step(mutate(rng, env.unwrapped.oracle_actions(task)[0]))
        assert isinstance(observation, str) and 0.0 <= reward <= 1.0
        assert info["success"] is (reward == 1.0)
