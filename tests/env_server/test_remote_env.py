"""``toolbench.remote.RemoteEnv``: a Gymnasium env whose episodes run on a ``toolbench serve env`` server."""

from __future__ import annotations

import time
import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

from tests.env_server.conftest import serve
from tests.env_server.test_http import TASK_IDS, local_episode
from toolbench.remote import RemoteEnv, RemoteEnvError


def test_remote_env_passes_check_env_without_warnings(server):
    env = gym.make("toolbench/Remote-v0", url=server.url)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    env.close()


def test_remote_episodes_equal_local_ones_and_close_frees_the_session(server):
    expected = local_episode(TASK_IDS[1])
    env = gym.make("toolbench/Remote-v0", url=server.url)
    observation, info = env.reset(seed=0, options={"task_id": TASK_IDS[1]})
    got = [[observation, info]]
    local = gym.make("toolbench/HomeSearch-v0", mode="interactive").unwrapped
    for action in local.oracle_actions(local._tasks_by_id[TASK_IDS[1]]):
        got.append(list(env.step(action)))
    assert got == expected
    pool = server.app.state.env_server.pool
    sessions = len(pool)
    env.close()
    assert len(pool) == sessions - 1


def test_get_state_and_set_state_branch_across_remote_envs(server):
    first = RemoteEnv(server.url)
    first.reset(options={"task_id": TASK_IDS[0]})
    first.step("API.set_location('Raleigh')")
    state = first.get_state()
    branch_a = first.step("API.set_buy_or_rent('rent')")
    second = RemoteEnv(server.url)  # a new env: set_state starts its session
    second.set_state(state)
    assert second.get_state()["step_count"] == 1
    assert second.step("API.set_buy_or_rent('rent')") == branch_a
    first.set_state(state["snapshot"])
    assert first.step("API.set_buy_or_rent('rent')") == branch_a
    first.close()
    second.close()


def test_make_vec_gives_distinct_sessions_sync_and_async(server):
    for mode in ("sync", "async"):
        envs = gym.make_vec("toolbench/Remote-v0", num_envs=2, vectorization_mode=mode, url=server.url)
        observations, infos = envs.reset(seed=[0, 1])
        local = [gym.make("toolbench/HomeSearch-v0", mode="interactive").reset(seed=s) for s in (0, 1)]
        assert list(observations) == [obs for obs, _ in local]
        assert list(infos["task_id"]) == [info["task_id"] for _, info in local]
        _, rewards, terminated, truncated, infos = envs.step(["API.set_location('Raleigh')"] * 2)
        assert list(infos["executable"]) == [True, True]
        envs.close()


def test_a_reaped_session_is_replaced_at_reset_but_a_step_says_it_was_lost():
    quick = serve(idle_timeout=0.3)
    try:
        env = RemoteEnv(quick.url)
        env.reset(options={"task_id": TASK_IDS[0]})
        old = env.session_id
        time.sleep(0.8)
        with pytest.raises(RemoteEnvError, match="404 no session") as lost:
            env.step("API.set_location('Raleigh')")
        assert lost.value.code == "UNKNOWN_SESSION"
        observation, info = env.reset(options={"task_id": TASK_IDS[0]})
        assert env.session_id != old and info["task_id"] == TASK_IDS[0]
        env.close()
    finally:
        quick.stop()


def test_remote_errors_are_clear(server):
    with pytest.raises(RemoteEnvError, match="Connection refused|Failed to establish"):
        RemoteEnv("http://127.0.0.1:9", timeout=2)
    env = RemoteEnv(server.url)
    with pytest.raises(gym.error.ResetNeeded):
        env.step("x")
    env.reset()
    with pytest.raises(RemoteEnvError, match="422 no task 'nope'"):
        env.reset(options={"task_id": "nope"})
    with pytest.raises(TypeError):
        env.step(3)  # type: ignore[arg-type]
    env.close()


def test_render_ansi_fetches_the_served_transcript():
    ansi = serve(env_kwargs={"mode": "interactive", "render_mode": "ansi"})
    try:
        env = RemoteEnv(ansi.url, render_mode="ansi")
        env.reset(options={"task_id": TASK_IDS[0]})
        env.step("API.set_location('Raleigh')")
        text = env.render()
        assert text.startswith(f"=== toolbench/HomeSearch-v0 · {TASK_IDS[0]} ===")
        assert "API.set_location('Raleigh')" in text
        env.close()
    finally:
        ansi.stop()
