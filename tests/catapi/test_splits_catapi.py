"""The Cat API's train and unseen splits: a parser fitted to the seen phrasings reads test, not unseen.

The parser is what an optimiser writes after reading the demo and train prompts: keywords for the
category, regular expressions for the ids, counts, order, sub-account and vote, and the reference
format to write the call in.
"""

import json
import re

import gymnasium as gym
import pytest

import toolbench
from tests.episodes import assert_the_oracle_solves, play
from toolbench.taskgen import SHIPPED_SIZES

ENV_ID = "toolbench/CatAPI-v0"
BASE = "https://api.thecatapi.com/v1"
IMAGE = re.compile(r"(?:picture|image|photo with id|photo|id) ([A-Za-z0-9]{3,9})\b")
SUB = re.compile(r"sub(?:-account| id) '?([a-z-]+)'?")
COUNT = re.compile(r"\b([1-9])\b")


def category_of(words):
    if re.search(r"vote (?:up|down)|thumbs (?:up|down)|upvote|downvote|down vote", words):
        return "vote"
    if re.search(r"remove|delete|take it off|take back|no longer", words):
        return "delete_vote" if "vote" in words else "delete_favourite"
    if re.search(r"\bsave\b|\badd\b|favourite the|bookmark|love image", words):
        return "add_favourite"
    return "list_votes" if "vote" in words else "list_favourites"


def curl(method, path, body=None):
    command = f"curl -X {method} '{BASE}{path}'"
    return command + (f" --data '{json.dumps(body)}'" if body is not None else "")


def parser_action(prompt):
    """The call the seen phrasings say ``prompt`` asks for, or no call."""
    words = prompt.lower()
    category = category_of(words)
    sub = SUB.search(prompt)
    if category.startswith("list_"):
        path = "/votes" if category == "list_votes" else "/favourites"
        count = COUNT.search(prompt)
        if sub:
            return curl("GET", f"{path}?sub_id={sub.group(1)}")
        if count and re.search(r"recent|newest|last", words):
            return curl("GET", f"{path}?order=DESC&limit={count.group(1)}")
        return curl("GET", f"{path}?limit={count.group(1)}" if count else path)
    if category.startswith("delete_"):
        number = re.search(r"\b(\d{7})\b" if category == "delete_vote" else r"\b(\d{9})\b", prompt)
        path = "/votes" if category == "delete_vote" else "/favourites"
        return curl("DELETE", f"{path}/{number.group(1)}") if number else "no call"
    image = IMAGE.search(prompt)
    if not image:
        return "no call"
    body = {"image_id": image.group(1), **({"sub_id": sub.group(1)} if sub else {})}
    if category == "add_favourite":
        return curl("POST", "/favourites", body)
    down = re.search(r"vote down|thumbs down|downvote|down vote", words)
    return curl("POST", "/votes", {**body, "value": -1 if down else 1})


def solved_share(split):
    env = gym.make(ENV_ID, split=split, disable_env_checker=True).unwrapped
    solved = [play(env, task.id, [parser_action(task.prompt)])[4]["success"] for task in env.tasks]
    return sum(solved) / len(solved)


def test_the_seen_parser_solves_most_of_test_and_demo():
    assert solved_share("test") >= 0.8
    assert solved_share("demo") >= 0.8


def test_the_seen_parser_solves_almost_none_of_unseen():
    assert solved_share("unseen") <= 0.10


@pytest.mark.parametrize("split", ["train", "unseen"])
def test_the_oracle_solves_every_unseen_task_and_a_spread_of_train(split):
    env = gym.make(ENV_ID, split=split, disable_env_checker=True).unwrapped
    assert_the_oracle_solves(env, env.tasks if split == "unseen" else env.tasks[::10])


def test_splits_are_shipped_with_their_templates_and_difficulty():
    train, unseen = toolbench.load_tasks("CatAPI", "train"), toolbench.load_tasks("CatAPI", "unseen")
    assert len(train) >= SHIPPED_SIZES["train"] and len(unseen) >= SHIPPED_SIZES["unseen"]
    train_templates = {t.get("template") for t in train}
    seen = {t.get("template") for split in ("test", "demo") for t in toolbench.load_tasks("CatAPI", split)}
    # Train has no test answer, and test asks for every vote listing by sub-account: train has none of those.
    assert len(seen & train_templates) >= 0.75 * len(seen)
    assert not any(template.startswith("unseen/") for template in train_templates)
    assert not train_templates & {t.get("template") for t in unseen}
    assert {t.category for t in unseen} == {t.category for t in train}  # every category, in new words
    assert all(isinstance(t.get("difficulty"), int) for t in [*train, *unseen])


def test_train_answers_no_test_task():
    test = {t.references[0] for t in toolbench.load_tasks("CatAPI")}
    assert not test & {t.references[0] for t in toolbench.load_tasks("CatAPI", "train")}


def test_copying_the_closest_seen_answer_does_not_pass_unseen():
    from toolbench.agents.cheap import POLICIES

    policy = POLICIES["nearest_copy"]()
    env = gym.make(ENV_ID, split="unseen", disable_env_checker=True).unwrapped
    solved = 0
    for task in env.tasks:
        observation, info = env.reset(options={"task_id": task.id})
        policy.begin(env, task, observation, info)
        solved += env.step(policy.act(observation, info))[4]["success"]
    assert solved / len(env.tasks) <= 0.10
