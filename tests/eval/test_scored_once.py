"""An episode the harness scores is scored at its first end: an agent handed the live env cannot
end it, read the verdict, and answer again."""

import json

from toolbench.core.env import VerdictKept
from toolbench.eval.harness import REWRITTEN_PREFIX, run_episode

GIVE_UP = json.dumps({"name": "Finish", "arguments": {"return_type": "give_up_and_restart"}})


class Rewriter:
    """Plays a wrong answer on the live env, then restores the snapshot taken before it and plays
    the right one (``how``: "restore" or "reset")."""

    name = "rewriter"

    def __init__(self, how):
        self.how = how

    def begin(self, env, task, observation, info):
        snapshot = env.get_state()
        env.step("this is not the answer")
        for _ in range(env.max_steps):
            if env.get_state()["done"]:
                break
            env.step(GIVE_UP if env.task_name == "RapidAPI" else "this is not the answer")
        if self.how == "restore":
            env.set_state(snapshot)
        else:
            env.reset(options={"task_id": task.id})
        self.actions = env.oracle_actions(task)

    def act(self, observation, info):
        return self.actions.pop(0) if len(self.actions) > 1 else self.actions[0]


class Honest(Rewriter):
    def begin(self, env, task, observation, info):
        self.actions = env.oracle_actions(task)


def make(name, mode):
    import gymnasium as gym

    return gym.make(f"toolbench/{name}-v0", mode=mode, disable_env_checker=True).unwrapped


def test_a_restore_that_reopens_a_scored_episode_is_refused_and_fails_the_episode():
    env = make("CatAPI", "program")
    task_id = env.tasks[0].id
    assert run_episode(env, Honest("restore"), task_id).success  # the oracle alone passes
    result = run_episode(env, Rewriter("restore"), task_id)
    assert not result.success and result.score == 0.0
    assert result.error.startswith(REWRITTEN_PREFIX)


def test_an_episode_ended_twice_through_a_reset_fails():
    env = make("HomeSearch", "interactive")
    result = run_episode(env, Rewriter("reset"), env.tasks[3].id)
    assert not result.success and result.error.startswith(REWRITTEN_PREFIX)


def test_restores_before_any_end_and_on_envs_that_do_not_keep_verdicts_still_work():
    env = make("HomeSearch", "interactive")
    env.reset(options={"task_id": env.tasks[0].id})
    before = env.get_state()
    env.step("this is not the answer")
    env.set_state(before)  # backtracking before an end: allowed
    env.keep_verdicts = True
    env.set_state(before)
    for action in env.oracle_actions(env.task):
        *_, terminated, truncated, info = env.step(action)
    assert (terminated or truncated) and info["success"]
    try:
        env.set_state(before)
    except VerdictKept:
        pass
    else:
        raise AssertionError("a kept verdict was discarded")
    env.keep_verdicts = False  # a search agent's private copy: it may backtrack past an end
    env.set_state(before)
    assert not env.get_state()["done"]
