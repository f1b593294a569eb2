"""Shortcuts taken on the hot path give what the general code gives, whatever the input."""

from __future__ import annotations

import json
import random

import gymnasium as gym
import pytest

import toolbench  # noqa: F401  (registers the env ids)
from toolbench.core import env as core_env
from toolbench.core.toolcalls import NOT_JSON, is_json_action, json_action, unfenced

TEXTS = [
    "",
    "   ",
    '{"name": "f"}',
    '  \n {"name": "f"}',
    "[1, 2]",
    '```json\n{"name": "f"}\n```',
    "  ```\n[1]\n```  ",
    "\x1c```\n{}",
    "\u2028{}",
    "API.search()",
    "x = {1: 2}",
    "`{}`",
    "{not json",
    "\n\n```\n```\n",
    "select_apps(['Music'])",
]


def _is_json_action_in_full(text: str) -> bool:
    stripped = unfenced(text)
    if not stripped.startswith(("{", "[")):
        return False
    try:
        json.loads(stripped)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("text", TEXTS)
def test_is_json_action_decides_as_reading_the_unfenced_text_does(text):
    assert is_json_action(text) == _is_json_action_in_full(text)


def test_is_json_action_on_random_texts_of_blanks_fences_and_brackets():
    pieces = [" ", "\n", "\t", "\r\n", "\x1c", "\u2028", "```", "```json", "{", "}", "[", "]", '"a"', "1", "x", "`"]
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 8)))
        assert is_json_action(text) == _is_json_action_in_full(text), repr(text)


def test_json_action_gives_what_reading_the_unfenced_text_gives():
    pieces = [" ", "\n", "```", "```json", "{", "}", "[", "]", '"a"', ":", "1", ",", "x"]
    rng = random.Random(3)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 9)))
        data = json_action(text)
        assert (data is not NOT_JSON) == _is_json_action_in_full(text), repr(text)
        if data is not NOT_JSON:
            assert data == json.loads(unfenced(text)), repr(text)


def test_zero_metrics_of_a_step_stay_zero_whatever_a_caller_did_to_an_earlier_info():
    env = gym.make("toolbench/AppBench-v0", mode="interactive").unwrapped
    first, second = env.tasks[0], env.tasks[1]
    env.reset(options={"task_id": first.id})
    actions = env.oracle_actions(first)
    info = env.step(actions[1])[4]  # a call: no metric of its own yet
    assert info["f1_app"] == 0.0
    snapshot = env.get_state()
    info.update(f1_app=99.0, succ=99.0)
    assert env.step(actions[1])[4]["f1_app"] == 0.0
    env.reset(options={"task_id": second.id})
    info = env.step(env.oracle_actions(second)[1])[4]
    assert {name: info[name] for name in env.metric_names} == dict.fromkeys(env.metric_names, 0.0)
    info["executed"] = 7.0
    env.set_state(snapshot)
    info = env.step(actions[1])[4]
    assert {name: info[name] for name in env.metric_names} == dict.fromkeys(env.metric_names, 0.0)


def _valid_text_in_full(value):
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode() if not _encodes(value) else value
    if isinstance(value, list):
        return [_valid_text_in_full(item) for item in value]
    return value


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def test_valid_text_copies_lists_and_escapes_lone_surrogates_at_any_depth():
    inner = ["ok", "\ud800", 3]
    value = [1, 2.5, True, None, "plain", "é", "bad \udfff", {"k": "\ud800"}, (1, "\ud800"), inner, [[inner]]]
    made = core_env._valid_text(value)
    assert made == _valid_text_in_full(value)
    assert made is not value and made[9] is not inner  # the info never shares a list with the env
    assert made[7] is value[7] and made[8] is value[8]  # dicts and tuples pass as they are, as before
