"""RayVectorEnv: the episodes and infos of BatchedVectorEnv (and so of Gymnasium's), its envs in Ray actors."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import toolbench
from toolbench.core.vector import BatchedVectorEnv, WorkerError

from ..core.test_vector import ENV_ID, _play, _same
from .conftest import RAY_GROUP

pytestmark = RAY_GROUP


def _actions_for():
    plans: dict[int, list[str]] = {}
    tasks = {task.prompt: task for task in toolbench.load_tasks("HomeSearch")}

    def actions_for(index: int, step: int, observation: str) -> str:
        if step % 5 == 2:
            return "API.no_such_function()"  # an error step
        if not plans.get(index):
            task = tasks.get(observation)
            plans[index] = list(task.references[0].splitlines()) if task else ["API.search()"]
        return plans[index].pop(0)

    return actions_for


@pytest.mark.parametrize("autoreset_mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_episodes_are_those_of_the_batched_vector_env(ray_instance, autoreset_mode):
    kwargs = {"mode": "interactive", "info_docs": False}
    batched = BatchedVectorEnv(ENV_ID, num_envs=5, workers=2, autoreset_mode=autoreset_mode, **kwargs)
    try:
        expected = _play(batched, 16, _actions_for())
    finally:
        batched.close()
    envs = toolbench.RayVectorEnv(ENV_ID, num_envs=5, workers=2, autoreset_mode=autoreset_mode, **kwargs)
    try:
        got = _play(envs, 16, _actions_for())
        assert envs.metadata["autoreset_mode"] == autoreset_mode
        assert envs.single_action_space == batched.single_action_space
    finally:
        envs.close()
    assert any(result[2].any() for result in got[1:])  # episodes ended, so autoreset was exercised
    for ours, theirs in zip(got, expected):
        assert tuple(ours[0]) == tuple(theirs[0])
        for mine, batch in zip(ours[1:], theirs[1:]):
            assert _same(mine, batch) if isinstance(mine, dict) else np.array_equal(mine, batch)


def test_call_attributes_errors_and_close(ray_instance):
    envs = toolbench.RayVectorEnv(ENV_ID, num_envs=3, workers=2, actor_options={"num_cpus": 0.5}, mode="interactive")
    try:
        _, infos = envs.reset(seed=0)
        assert envs.np_random_seed == (0, 1, 2)
        _, infos = envs.reset(options={"reset_mask": np.array([False, True, False])})
        assert infos["_task_id"].tolist() == [False, True, False]
        envs.set_attr("max_steps", [5, 6, 7])
        assert envs.get_attr("max_steps") == (5, 6, 7)
        snapshots = envs.call("get_state")
        assert len(snapshots) == 3
        with pytest.raises(WorkerError, match="AttributeError"):
            envs.call("no_such_method")
        _, rewards, *_ = envs.step(["API.search()"] * 3)  # the envs keep working after an error
        assert rewards.shape == (3,)
    finally:
        envs.close()
    envs.close()  # twice is fine
    with pytest.raises(gym.error.ClosedEnvironmentError):
        envs.reset()


def test_an_env_that_cannot_be_built_is_a_worker_error(ray_instance):
    with pytest.raises(WorkerError, match="mode"):
        toolbench.RayVectorEnv(ENV_ID, num_envs=2, workers=2, mode="no_such_mode")
    with pytest.raises(ValueError, match="workers"):
        toolbench.RayVectorEnv(ENV_ID, num_envs=1, workers=2)
