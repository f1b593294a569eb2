"""AppBench's train and unseen splits: a parser fitted to the seen instructions reads the test split but
not the unseen one, the closest seen task's plan does not carry over, the held-out combinations and
templates stay out of every seen split, the oracle solves them, and the parts every plan of a kind
shares earn no score."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from functools import cache

import gymnasium as gym
import pytest

import toolbench  # noqa: F401  (registers the env ids)
from tests.appbench.seen_parser import parse
from tests.episodes import play
from toolbench.core.tasks import fixture_file
from toolbench.mock_services.apps.records import gold_calls
from toolbench.taskgen import appbench, appbench_common

ENV_ID = "toolbench/AppBench-v0"


@cache
def records(split: str) -> tuple[dict, ...]:
    text = fixture_file("appbench", f"{split}.jsonl").read_text(encoding="utf-8")
    return tuple(json.loads(line) for line in text.splitlines())


def make(split: str, mode: str = "program"):
    return gym.make(ENV_ID, split=split, mode=mode, disable_env_checker=True).unwrapped


def solved_share(split: str, plans) -> float:
    """The share of ``split``'s tasks whose plan (``plans(task)``, None: no answer) succeeds."""
    env = make(split)
    try:
        wins = 0
        for task in env.tasks:
            plan = plans(task)
            if plan is not None:
                wins += bool(play(env, task.id, [plan])[4]["success"])
        return wins / len(env.tasks)
    finally:
        env.close()


def test_the_seen_parser_reads_test_but_not_unseen():
    """Regular expressions over the seen phrasings solve over half the test split (the papers'
    setting shares its templates with demo and train) and none of the unseen split."""
    reading = {split: solved_share(split, lambda task: parse(task.prompt)) for split in ("demo", "test", "unseen")}
    assert reading["demo"] >= 0.45 and reading["test"] >= 0.5, reading
    assert reading["unseen"] <= 0.10, reading


def test_the_closest_seen_plan_with_words_swapped_fails_on_unseen():
    from toolbench.agents.cheap import NearestCopy

    for mode in ("program", "interactive"):
        env, policy = make("unseen", mode), NearestCopy()
        try:
            wins = []
            for task in env.tasks:
                observation, info = env.reset(options={"task_id": task.id})
                policy.begin(env, task, observation, info)
                for _ in range(env.max_steps):
                    observation, _, terminated, truncated, info = env.step(policy.act(observation, info))
                    if terminated or truncated:
                        break
                wins.append(bool(info["success"]))
            assert statistics.mean(wins) <= 0.10, (mode, statistics.mean(wins))
        finally:
            env.close()


def test_unseen_holds_out_its_combinations_and_templates():
    unseen = records("unseen")
    assert Counter(r["category"] for r in unseen) == {kind: len(unseen) // 4 for kind in appbench.CATEGORIES}
    for r in unseen:
        assert r["template"].startswith(f"unseen/{r['category']}/"), r["id"]
        assert appbench.held_out(r["category"], gold_calls(r["output"])), r["id"]
    for split in ("test", "demo", "train"):
        for r in records(split):
            assert not r["template"].startswith("unseen/") and not appbench.held_out(
                r["category"], gold_calls(r["output"])
            )
    several = {frozenset(r["output"]["used_app"]) for r in unseen if r["category"] in ("MS", "MM")}
    assert all(any(pair <= apps for apps in several) for pair in appbench_common.HELD_OUT_PAIRS)  # every pair is asked
    assert {r["combination"].split(":")[0] for r in unseen if r["category"] == "SM"} >= {"Travel", "Payment", "Music"}


def test_unseen_instructions_use_none_of_the_seen_framing():
    seen = json.loads(fixture_file("appbench", "phrases.json").read_text(encoding="utf-8"))
    seen_phrases = [*seen["openings"], *seen["closings"]]
    joints = (", then ", ". After that, ", ". Also, ", "; then ", ". Next, ", "Please ", "Could you ", "Help me ")
    for r in records("unseen"):
        assert not [p for p in (*seen_phrases, *joints) if p in r["prompt"]], r["prompt"]
    # ... and they read: distractors and values in formats the seen grammar never writes.
    prompts = " ".join(r["prompt"] for r in records("unseen"))
    for phrase in ("but this has nothing to do with her", " hours", "the two of us", "bucks", " bd / "):
        assert phrase in prompts, phrase


@pytest.mark.parametrize("mode", ["program", "interactive"])
def test_the_oracle_solves_every_unseen_task_and_a_spread_of_train(mode):
    for split, step in (("unseen", 1), ("train", 40)):
        env = make(split, mode)
        try:
            for task in env.tasks[::step]:
                _, reward, _, _, info = play(env, task.id, env.oracle_actions(task))
                assert info["success"] is True and reward == 1.0, (split, task.id, info)
        finally:
            env.close()


@pytest.mark.parametrize("mode", ["program", "interactive"])
@pytest.mark.parametrize("split", ["test", "unseen"])
def test_the_parts_every_plan_shares_earn_no_score(split, mode):
    """The gold apps, APIs and references without the task's values: AppBench's own F1 pays for
    them, ``score`` (``succ``) does not."""
    env = make(split, mode)
    try:
        scores, wins, f1s = [], [], []
        for task in env.tasks:
            _, reward, _, _, info = play(env, task.id, env.shared_parts_actions(task))
            scores.append(info["score"])
            wins.append(info["success"])
            f1s.append(info["f1_api"])
        assert statistics.mean(scores) <= 0.15 and not any(wins)
        if mode == "program":
            assert statistics.mean(f1s) == 1.0  # the right APIs, each once
        for task in env.tasks[:: max(1, len(env.tasks) // 40)]:
            _, reward, _, _, info = play(env, task.id, env.oracle_actions(task))
            assert info["score"] == reward == 1.0
    finally:
        env.close()


def test_a_grown_train_split_keeps_out_of_the_held_out_tasks():
    grown = appbench.make_split("train", 80, 5)
    assert [r["id"] for r in grown[:2]] == ["appbench-train-s5-0000", "appbench-train-s5-0001"]
    shipped = {r["prompt"] for split in ("test", "demo", "unseen") for r in records(split)}
    for r in grown:
        assert r["prompt"] not in shipped and not appbench.held_out(r["category"], gold_calls(r["output"]))
        assert appbench.states_its_values(r["prompt"], gold_calls(r["output"]))
    more = appbench.make_split("unseen", 8, 5)
    assert [r["category"] for r in more] == ["SS", "SM", "MS", "MM"] * 2
    assert not {r["prompt"] for r in more} & {r["prompt"] for r in records("unseen")}
