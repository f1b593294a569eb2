"""An agent's private copy of its task (``clone_for``: DFSDT backtracks on it) plays the task as the
scored env does but grades nothing, so a search on it has no reward to climb."""

import gymnasium as gym
import pytest

import toolbench
from tests.episodes import play
from toolbench.agents.cheap import POLICIES
from toolbench.eval.harness import run_episode

CASES = [(spec.name, mode) for spec in toolbench.TASKS for mode in spec.modes]


@pytest.mark.parametrize(("name", "mode"), CASES)
def test_the_private_copy_plays_the_task_and_tells_nothing_of_the_grade(name, mode):
    env = gym.make(f"toolbench/{name}-v0", mode=mode).unwrapped
    task = env.tasks[0]
    private = env.clone_for(task)
    try:
        graded = play(env, task.id, env.oracle_actions(task))
        copied = play(private, task.id, env.oracle_actions(task))
    finally:
        private.close()
        env.close()
    assert graded[1] == 1.0 and graded[4]["success"] is True
    observation, reward, terminated, truncated, info = copied
    assert (terminated, truncated) == graded[2:4]
    assert reward == 0.0
    assert info["success"] is None and info["score"] is None and info["graded"] is False
    grade = {*env.metric_names, *env.score_details, *env.grade_keys}
    assert grade & set(info) == set()
    assert set(info) == set(graded[4]) - grade | {"graded"}
    # What the copy shows is what the scored env shows, less what states the grade: Tabletop's last
    # line, WebShop's score on the done page.
    if name == "WebShop":
        assert observation == graded[0].removesuffix("1.0") + "(not graded in a private copy)"
    else:
        assert observation == graded[0].rsplit("\n", 1)[0] if name == "Tabletop" else observation == graded[0]


def test_webshop_s_done_page_in_a_private_copy_shows_no_score():
    env = gym.make("toolbench/WebShop-v0", mode="interactive").unwrapped
    task = env.tasks[0]
    graded = play(env, task.id, env.oracle_actions(task))[0]
    private = env.clone_for(task)
    copied = play(private, task.id, env.oracle_actions(task))[0]
    assert "Your score (min 0.0, max 1.0) [SEP] 1.0" in graded
    assert copied.endswith("Your score (min 0.0, max 1.0) [SEP] (not graded in a private copy)")


def test_a_reward_search_on_the_private_copy_finds_nothing_to_climb(monkeypatch):
    # Unseen, where the closest copy is rarely right (test shares its templates with train).
    env = gym.make("toolbench/CatAPI-v0", split="unseen").unwrapped
    tasks = env.tasks[::3]

    def success(policy):
        return sum(run_episode(env, policy, task.id).success for task in tasks) / len(tasks)

    copied, searched = success(POLICIES["nearest_copy"]()), success(POLICIES["reward_search"]())
    assert searched == copied
    # The same search on a copy that grades (as the scored env does) climbs: the copy's grade is
    # what the search would have used.
    monkeypatch.setattr(type(env), "clone_for", lambda self, task: type(self)(tasks=[task], split="unseen"))
    assert success(POLICIES["reward_search"]()) > copied + 0.05
