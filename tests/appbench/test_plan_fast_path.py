"""Shortcuts in AppBench's plan reading and prompts: arguments that are all plainly quoted or bare
names are read in one pass, with the same calls and errors as the general reading (apostrophes inside
values, references, booleans, numbers); a selection's docs and tools are kept, and stay what a fresh build gives."""

from __future__ import annotations

import random
import re

import gymnasium as gym
import pytest

import toolbench  # noqa: F401  (registers the env ids)
from toolbench.envs import appbench
from toolbench.mock_services.apps import plan

ARGUMENTS = [
    "",
    "#category='Korean', #location='San Jose'",
    "#a='', #b=\"\"",
    "#a=\"it's\", #b='x'",
    "#restaurant_name='Mcdonald's', #time='13:30'",
    "#a='x', #A='y'",
    "#a='x' , #b = 'y'",
    "a='x',b='y'",
    "#a='x', #b=ref",
    "#a='x', #b=2",
    "#a='x',",
    "#a='x' #b='y'",
    "#a='x=1', #b='y'",
    "#a='one, #b='two'",
    "#a=ref, #B=True, #c=False, #d='x'",
    "#a = ref ,b=other",
    "#a=ref other",
    "#a=ref, #a='x'",
    "#a=ref'x'",
    "#a=True1, #b=_r2",
]


def _general(text: str, number: int = 1):
    saved = plan._ALL_SIMPLE
    plan._ALL_SIMPLE = re.compile(r"(?!)")  # never matches: the general reading only
    try:
        return plan.parse_args(text, number)
    except plan.PlanError as exc:
        return f"PlanError: {exc}"
    finally:
        plan._ALL_SIMPLE = saved


def _fast(text: str, number: int = 1):
    try:
        return plan.parse_args(text, number)
    except plan.PlanError as exc:
        return f"PlanError: {exc}"


@pytest.mark.parametrize("text", ARGUMENTS)
def test_quoted_arguments_read_in_one_pass_as_in_general(text):
    assert _fast(text) == _general(text)


def test_random_argument_lists_read_alike():
    pieces = ["#", "a", "B", "_x", "=", " ", ",", "'", '"', "v", "1", "'s", "ref", "True", "False"]
    rng = random.Random(11)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 14)))
        assert _fast(text) == _general(text), repr(text)


def test_random_quoted_and_named_argument_lists_read_alike_and_most_take_the_one_pass():
    rng = random.Random(5)
    names, value_chars = ["a", "b", "Cat", "_d"], ["x", " ", ",", "=", "'", '"', "#", "1"]
    bare = ["ref", "True", "False", "r1", "x y", "2", "-1.5", "True1"]
    one_pass = 0
    for _ in range(3000):
        parts = []
        for _ in range(rng.randint(1, 4)):
            quote = rng.choice("'\"")
            value = "".join(rng.choice(value_chars) for _ in range(rng.randint(0, 4)))
            value = f"{quote}{value}{quote}" if rng.random() < 0.7 else rng.choice(bare)
            parts.append(f"{rng.choice(['#', '', ' # '])}{rng.choice(names)}{rng.choice(['=', ' = '])}{value}")
        text = rng.choice([",", ", ", " ,"]).join(parts)
        one_pass += bool(plan._ALL_SIMPLE.fullmatch(text.strip()))
        assert _fast(text) == _general(text), repr(text)
    assert one_pass > 1000


def test_kept_selection_docs_and_tools_equal_fresh_ones_and_stay_bounded(monkeypatch):
    env = gym.make("toolbench/AppBench-v0", mode="interactive").unwrapped
    fresh = gym.make("toolbench/AppBench-v0", mode="interactive").unwrapped
    program = gym.make("toolbench/AppBench-v0", mode="program", prompting="hierarchical").unwrapped
    apps = list(appbench.APP_DESCRIPTIONS)
    monkeypatch.setattr(appbench, "MAX_SELECTIONS_KEPT", 3)
    rng = random.Random(2)
    for _ in range(12):
        chosen = rng.sample(apps, rng.randint(1, 3))
        env.reset(options={"task_id": env.tasks[0].id})
        observation, _, _, _, info = env.step(f"select_apps({chosen!r})")
        assert observation == appbench.docs_for(chosen)
        assert info["tools"] == fresh._tools_for(chosen)
        assert len(appbench._SHOWN) <= 3
        # Another env of the process gets the same schemas (objects); one of another mode gets its own tools.
        fresh.reset(options={"task_id": fresh.tasks[0].id})
        tools = fresh.step(f"select_apps({chosen!r})")[4]["tools"]
        assert len(tools) == len(info["tools"]) and all(a is b for a, b in zip(tools, info["tools"]))
        program.reset(options={"task_id": program.tasks[0].id})
        assert program.step(f"select_apps({chosen!r})")[0] == observation
        assert program._shown_for(tuple(chosen))[1] == program._tools_for(chosen) != info["tools"]
