"""BatchedVectorEnv: the same episodes and infos as Gymnasium's vector envs, several envs per worker."""

from __future__ import annotations

import os
import random
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import toolbench
from toolbench.core.vector import BatchedVectorEnv, WorkerError, _columns, _joined

ENV_ID = "toolbench/HomeSearch-v0"


def _same(a: Any, b: Any, ordered: bool = True) -> bool:
    """Equal keys (in equal order if ``ordered``), arrays of equal dtype and contents, recursively."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict)
            and isinstance(b, dict)
            and (list(a) == list(b) if ordered else a.keys() == b.keys())
            and all(_same(a[key], b[key], ordered) for key in a)
        )
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and repr(a.tolist()) == repr(b.tolist())  # NaN (None in a float array) equals itself here
        )
    return type(a) is type(b) and a == b


def _random_info(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    values = [0, 3, 2.5, True, False, None, "text", [1, 2], (3,), np.float32(1.5), np.int64(7), np.zeros(2)]
    info: dict[str, Any] = {}
    for key in rng.sample(["a", "b", "c", "score", "final_obs", "nested", "error"], rng.randint(0, 6)):
        if key == "nested" and depth < 2 and rng.random() < 0.8:
            info[key] = _random_info(rng, depth + 1)
        else:
            info[key] = rng.choice(values)
    return info


@pytest.mark.parametrize("seed", range(300))
def test_merged_infos_are_what_gymnasium_builds_env_by_env(seed):
    rng = random.Random(seed)
    num_envs = rng.randint(1, 6)
    infos = [_random_info(rng) for _ in range(num_envs)]
    vector = BatchedVectorEnv.__new__(BatchedVectorEnv)  # only the merging, no workers
    vector.num_envs = num_envs
    expected: dict[str, Any] = {}
    try:
        for index, info in enumerate(infos):
            expected = vector._add_info(expected, info, index)
    except (TypeError, ValueError, AttributeError):  # a mix Gymnasium cannot merge (text into a float array)
        with pytest.raises((TypeError, ValueError, AttributeError)):  # nor can we (it may fail on another key first)
            vector._merge_infos(_joined([_columns(enumerate(infos))]))
        return
    split = rng.randint(0, num_envs)  # two workers' slices
    parts = [_columns(list(enumerate(infos))[:split]), _columns(list(enumerate(infos))[split:])]
    assert _same(vector._merge_infos(_joined(parts)), expected), infos


def _play(envs: Any, steps: int, actions_for: Any) -> list[Any]:
    """Every step's results, with a mix of oracle and broken actions."""
    record = []
    observations, infos = envs.reset(seed=5)
    record.append((observations, infos))
    for step in range(steps):
        actions = [actions_for(index, step, observations[index]) for index in range(envs.num_envs)]
        result = envs.step(actions)
        observations = result[0]
        record.append(result)
    return record


@pytest.mark.parametrize("autoreset_mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_episodes_are_those_of_gymnasiums_sync_vector_env(autoreset_mode):
    plans: dict[int, list[str]] = {}

    def actions_for(index: int, step: int, observation: str) -> str:
        if step % 7 == 3:
            return "API.no_such_function()"  # an error step
        if not plans.get(index):
            plans[index] = ["API.set_location('Nowhere')", "API.search()"]
        return plans[index].pop(0)

    kwargs = {"mode": "interactive", "info_docs": False}
    sync = gym.make_vec(
        ENV_ID, num_envs=3, vectorization_mode="sync", vector_kwargs={"autoreset_mode": autoreset_mode}, **kwargs
    )
    expected = _play(sync, 12, actions_for)
    sync.close()
    plans.clear()
    batched = BatchedVectorEnv(ENV_ID, num_envs=3, workers=2, autoreset_mode=autoreset_mode, **kwargs)
    try:
        got = _play(batched, 12, actions_for)
    finally:
        batched.close()
    for ours, theirs in zip(got, expected):
        assert tuple(ours[0]) == tuple(theirs[0])
        for mine, gyms in zip(ours[1:], theirs[1:]):
            # Gymnasium's sync and async envs order final_obs and final_info differently; we follow async
            assert _same(mine, gyms, ordered=False) if isinstance(mine, dict) else np.array_equal(mine, gyms)


def test_oracle_episodes_score_one_in_every_env():
    envs = BatchedVectorEnv(ENV_ID, num_envs=4, workers=2, autoreset_mode="SameStep", mode="program")
    try:
        _, infos = envs.reset(seed=1)
        tasks = {task.id: task for task in toolbench.load_tasks("HomeSearch")}
        actions = [tasks[task_id].references[0] for task_id in infos["task_id"]]
        _, rewards, terminated, truncated, infos = envs.step(actions)
        assert rewards.tolist() == [1.0] * 4 and terminated.all() and not truncated.any()
        assert infos["_final_info"].all() and infos["final_info"]["success"].all()
        assert len(set(envs.get_attr("np_random_seed"))) == 4  # seeds 1..4, one per env
    finally:
        envs.close()


def test_reset_mask_call_set_attr_errors_and_close():
    envs = BatchedVectorEnv(ENV_ID, num_envs=3, workers=2, mode="interactive")
    processes = list(envs._processes)
    try:
        observations, infos = envs.reset(seed=0, options={"task_id": toolbench.load_tasks("HomeSearch")[0].id})
        assert len(set(observations)) == 1 and infos["_task_id"].all()
        observations, infos = envs.reset(options={"reset_mask": np.array([False, True, False])})
        assert infos["_task_id"].tolist() == [False, True, False]
        envs.set_attr("max_steps", [5, 6, 7])
        assert envs.get_attr("max_steps") == (5, 6, 7)
        with pytest.raises(WorkerError, match="AttributeError"):
            envs.call("no_such_method")
        with pytest.raises(ValueError):
            envs.step(["API.search()"])  # one action for three envs
        _, rewards, *_ = envs.step(["API.search()"] * 3)  # the envs keep working after an error
        assert rewards.shape == (3,)
    finally:
        envs.close()
    assert all(not process.is_alive() for process in processes)


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="CPU affinity needs Linux's sched_getaffinity")
def test_pinned_workers_each_keep_to_one_cpu():
    cpus = sorted(os.sched_getaffinity(0))
    envs = BatchedVectorEnv(ENV_ID, num_envs=4, workers=2, pin_workers=True, mode="program")
    try:
        pinned = [os.sched_getaffinity(process.pid) for process in envs._processes]
        assert pinned == [{cpus[0]}, {cpus[1 % len(cpus)]}]
        _, infos = envs.reset(seed=0)
        assert infos["_task_id"].all()  # and they work
    finally:
        envs.close()
    assert os.sched_getaffinity(0) == set(cpus)  # the main process is not pinned


def test_an_env_that_cannot_be_built_is_a_worker_error():
    with pytest.raises(WorkerError, match="mode"):
        BatchedVectorEnv(ENV_ID, num_envs=2, workers=2, mode="no_such_mode")
    with pytest.raises(ValueError, match="workers"):
        BatchedVectorEnv(ENV_ID, num_envs=1, workers=2)


def test_an_interrupted_round_trip_leaves_the_pipes_in_step():
    envs = BatchedVectorEnv(ENV_ID, num_envs=2, workers=2, mode="program")
    try:
        first, _ = envs.reset(seed=3)
        gather = envs._gather
        envs._gather = lambda: (_ for _ in ()).throw(KeyboardInterrupt)  # Ctrl-C while waiting
        with pytest.raises(KeyboardInterrupt):
            envs.step(["API.search()"] * 2)
        envs._gather = gather
        with pytest.raises(TypeError):  # an action that cannot be sent: nothing is sent
            envs.step(["API.search()", lambda: None])
        again, _ = envs.reset(seed=3)
        assert again == first  # this reset's own answers, not the interrupted step's
        assert envs.np_random_seed == (3, 4)
    finally:
        envs.close()


def test_closed_or_broken_envs_say_so():
    envs = BatchedVectorEnv(ENV_ID, num_envs=2, workers=2, mode="program")
    envs.reset(seed=0)
    envs._processes[1].kill()
    envs._processes[1].join()
    with pytest.raises(WorkerError):
        envs.step(["API.search()"] * 2)
    envs.close()
    envs.close()  # twice is fine
    with pytest.raises(gym.error.ClosedEnvironmentError):
        envs.reset()


def test_an_env_dropped_without_close_ends_its_workers():
    envs = BatchedVectorEnv(ENV_ID, num_envs=2, workers=2, mode="program")
    processes = list(envs._processes)
    keep = BatchedVectorEnv(ENV_ID, num_envs=2, workers=2, mode="program")  # holds copies of the first's pipes
    try:
        del envs
        for process in processes:
            process.join(timeout=10)
        assert not any(process.is_alive() for process in processes)
    finally:
        keep.close()


def test_the_vector_api_details_gymnasium_has():
    envs = BatchedVectorEnv(ENV_ID, num_envs=2, workers=2, mode="program", render_mode="ansi")
    try:
        assert envs.metadata["render_fps"] == 1 and envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
        envs.reset(seed=1)
        for mask in ([True, False], np.array([0, 1]), np.array([False, False]), np.array([True])):
            with pytest.raises((TypeError, ValueError)):
                envs.reset(options={"reset_mask": mask})
        with pytest.raises(ValueError, match="directly"):
            envs.call("reset")
        assert all(text.startswith("=== toolbench/HomeSearch-v0") for text in envs.render())
    finally:
        envs.close()


@pytest.mark.parametrize("autoreset_mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_program_episodes_with_docs_in_infos_are_those_of_the_envs_one_by_one(autoreset_mode):
    # Every step ends every episode (program mode) and the reset infos carry api_docs: the columns of
    # infos that all envs share, nested final infos, and a mix of oracle and broken actions.
    env_id, num_envs = "toolbench/OpenWeather-v0", 5
    references = {task.id: task.references[0] for task in toolbench.load_tasks("OpenWeather")}

    def play(envs: Any) -> list[Any]:
        observations, infos = envs.reset(seed=11)
        record: list[Any] = [(observations, infos)]
        task_ids = list(infos["task_id"])
        for step in range(6):
            actions = [
                "curl 'https://example.com/'" if (index + step) % 3 == 0 else references[task_ids[index]]
                for index in range(num_envs)
            ]
            result = envs.step(actions)
            record.append(result)
            task_ids = [
                new if mask else old for old, new, mask in zip(task_ids, result[4]["task_id"], result[4]["_task_id"])
            ]
        return record

    vector_kwargs = {"autoreset_mode": autoreset_mode}
    sync = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync", vector_kwargs=vector_kwargs)
    expected = play(sync)
    sync.close()
    batched = BatchedVectorEnv(env_id, num_envs=num_envs, workers=2, autoreset_mode=autoreset_mode)
    try:
        got = play(batched)
    finally:
        batched.close()
    assert got[0][1]["_api_docs"].all()
    rewards = np.concatenate([result[1] for result in got[1:]])
    assert rewards.max() == 1.0 and rewards.min() == 0.0  # oracle and broken actions both played
    for ours, theirs in zip(got, expected):
        assert tuple(ours[0]) == tuple(theirs[0])
        for mine, gyms in zip(ours[1:], theirs[1:]):
            assert _same(mine, gyms, ordered=False) if isinstance(mine, dict) else np.array_equal(mine, gyms)


def _batch_policy_allowed() -> bool:
    """Whether this process may take SCHED_BATCH (a container's seccomp profile may refuse it)."""
    if not hasattr(os, "SCHED_BATCH"):
        return False
    pid = os.fork()
    if pid == 0:
        try:
            os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
        except OSError:
            os._exit(1)
        os._exit(0)
    return os.waitpid(pid, 0)[1] == 0


def test_workers_run_as_batch_work_so_their_wakeups_do_not_preempt_the_main_process():
    if not _batch_policy_allowed():
        pytest.skip("this system does not let a process take SCHED_BATCH (not Linux, or refused by a sandbox)")
    envs = BatchedVectorEnv(ENV_ID, num_envs=2, workers=2)
    try:
        assert [os.sched_getscheduler(process.pid) for process in envs._processes] == [os.SCHED_BATCH] * 2
        assert os.sched_getscheduler(0) != os.SCHED_BATCH  # the main process keeps its own policy
    finally:
        envs.close()
