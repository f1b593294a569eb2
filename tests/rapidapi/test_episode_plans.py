"""What an episode of a task is offered is built once per task and kept (for the process's envs); it
must stay what a fresh env builds, across resets to other tasks, set_state and played episodes."""

from __future__ import annotations

import json
import random

import gymnasium as gym

import toolbench  # noqa: F401  (registers the env ids)
from toolbench.envs import rapidapi as rapidapi_env
from toolbench.mock_services.rapidapi import passrule
from toolbench.mock_services.rapidapi.passrule import NeededCalls, made_the_calls


def _fresh_reset(task_id: str) -> dict:
    return gym.make("toolbench/RapidAPI-v0").unwrapped.reset(options={"task_id": task_id})[1]


def test_kept_docs_and_tools_equal_a_fresh_envs_after_other_tasks_and_set_state():
    env = gym.make("toolbench/RapidAPI-v0").unwrapped
    first, second = env.tasks[0], env.tasks[7]
    _, info = env.reset(options={"task_id": first.id})
    snapshot = env.get_state()
    for action in env.oracle_actions(first):
        env.step(action)
    env.reset(options={"task_id": second.id})
    _, again = env.reset(options={"task_id": first.id})
    assert again["tools"] == info["tools"] == _fresh_reset(first.id)["tools"]
    assert again["api_docs"] == _fresh_reset(first.id)["api_docs"]
    env.reset(options={"task_id": second.id})
    env.set_state(snapshot)  # back on the first task: its functions route again
    assert env._plan_now == env._plan(first) and env.tools() == info["tools"]
    observation = env.step(env.oracle_actions(first)[0])[0]
    assert "No such function" not in observation


def test_kept_plans_equal_freshly_built_ones_after_every_test_task_is_played():
    # Other tests in this process may have filled the store to its bound, so that the plans played
    # here could be evicted again as the oldest: start from an empty one.
    rapidapi_env._PLANS.clear()
    env = gym.make("toolbench/RapidAPI-v0").unwrapped
    tasks = random.Random(3).sample(env.tasks, 40)
    for task in tasks:
        env.reset(options={"task_id": task.id})
        for action in env.oracle_actions(task):
            if any(env.step(action)[2:4]):
                break
    for task in tasks:
        assert rapidapi_env._PLANS[(id(task), None, env.top_k)][1] == env._plan(task)


def test_needed_calls_read_once_decide_as_made_the_calls_reads_them_each_time():
    env = gym.make("toolbench/RapidAPI-v0").unwrapped
    rng = random.Random(9)
    for task in rng.sample(env.tasks, 60):
        plan = env._plan(task)
        solution = list(task.get("solution") or [])
        calls = []
        for action in env.oracle_actions(task):
            for item in (lambda data: data if isinstance(data, list) else [data])(json.loads(action)):
                arguments = item.get("arguments", {})
                calls.append((item["name"], json.loads(arguments) if isinstance(arguments, str) else arguments))
        for tried in (calls, calls[:1], [], [(name, {}) for name, _ in calls]):
            answered = tried[: rng.randint(0, len(tried))]
            for solvable in (True, False):
                once = NeededCalls.of(solution, plan.key_of).made(answered, tried, plan.key_of, solvable)
                assert once == made_the_calls(solution, answered, tried, plan.key_of, solvable)


def test_fact_forms_read_once_decide_as_fresh_reading():
    facts = ["505.24", "United Kingdom", "March 8, 2026", "$", "+05:30", "12 km", "Zoë", "-3", " 42 "]
    answers = ["It is 505.2 and UTC+5:30 in the united kingdom", "2026-03-08, 12km, $5", "zoe said -3; 42"]
    cached = [[passrule.states(answer, fact) for fact in facts] for answer in answers]
    passrule._fact_form.cache_clear()
    assert cached == [[passrule.states(answer, fact) for fact in facts] for answer in answers]


def test_a_run_of_words_is_found_as_a_scan_of_every_position_finds_it():
    rng = random.Random(1)
    for _ in range(2000):
        haystack = [rng.choice("abc") for _ in range(rng.randint(0, 8))]
        needle = [rng.choice("abc") for _ in range(rng.randint(0, 3))]
        scanned = bool(needle) and any(
            haystack[i : i + len(needle)] == needle for i in range(len(haystack) - len(needle) + 1)
        )
        assert passrule._contains(haystack, needle) == scanned


def test_a_process_keeps_a_bounded_number_of_plans_and_a_dropped_one_is_built_again_alike(monkeypatch):
    monkeypatch.setattr(rapidapi_env, "MAX_PLANS_KEPT", 64)
    monkeypatch.setattr(rapidapi_env, "_PLANS", {})  # plans earlier tests in this process kept would be hits
    env = gym.make("toolbench/RapidAPI-v0").unwrapped
    infos = {}
    for task in env.tasks[:150]:
        infos[task.id] = env.reset(options={"task_id": task.id})[1]
    assert len(rapidapi_env._PLANS) <= 64 and (id(env.tasks[0]), None, env.top_k) not in rapidapi_env._PLANS
    _, info = env.reset(options={"task_id": env.tasks[0].id})
    assert info["tools"] == infos[env.tasks[0].id]["tools"] and info["api_docs"] == infos[env.tasks[0].id]["api_docs"]


def test_the_first_look_for_scaled_numbers_misses_none():
    rng = random.Random(3)
    pieces = ["1", "-2", "3.5", "12", " ", "  ", "k", "m", "b", "bn", "mn", "million", "thousand", "billion", "km", "x",
              ".", ",", "-"]  # fmt: skip
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 8)))
        if passrule._SCALED.findall(text):
            assert passrule._ANY_SCALED.search(text), text
