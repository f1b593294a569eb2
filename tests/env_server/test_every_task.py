"""Every task served: an oracle episode through RemoteEnv equals the same episode played locally."""

from __future__ import annotations

import gymnasium as gym
import pytest

import toolbench
from tests.env_server.conftest import serve
from toolbench.core.jsonsafe import to_json_safe
from toolbench.remote import RemoteEnv


@pytest.mark.parametrize("spec", toolbench.TASKS, ids=lambda spec: spec.name)
def test_a_served_oracle_episode_equals_the_local_one(spec):
    mode = spec.modes[-1]  # interactive where the task has it: the most steps
    server = serve(spec.env_id, {"mode": mode})
    local, remote = gym.make(spec.env_id, mode=mode), RemoteEnv(server.url)
    try:
        task = local.unwrapped.tasks[1]
        observation, info = local.reset(seed=3, options={"task_id": task.id})
        assert remote.reset(seed=3, options={"task_id": task.id}) == (observation, to_json_safe(info))
        for action in local.unwrapped.oracle_actions(task):
            observation, reward, terminated, truncated, info = local.step(action)
            assert remote.step(action) == (observation, reward, terminated, truncated, to_json_safe(info))
            if terminated or truncated:
                break
        assert reward == 1.0
        schema = remote.schema()  # with a session: the episode's own docs where they change per task
        assert schema["api_docs"] == local.unwrapped.api_docs()
        assert schema["tools"] == to_json_safe(local.unwrapped.tools())
    finally:
        remote.close()
        local.close()
        server.stop()
