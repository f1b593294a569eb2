"""The process-wide task store: envs share their tasks and static data, and no episode changes them."""

import gc
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import toolbench  # noqa: F401
from toolbench.core import store
from toolbench.core.seeding import stable_hash

ROOT = Path(__file__).resolve().parents[2]
# Every task whose episodes change a world: favourites and votes, bookings, carts and purchases,
# the apps' records, the hub's files and carts, a worksheet, a home. Tabletop's scene is its own
# physics client per env, shared with nothing. Google Sheets plays one episode (its code runs in a
# sandbox worker, seconds per episode).
TASKS = tuple(spec.name for spec in toolbench.TASKS if not spec.runs_code)


def _canonical(value):
    """``value`` with its sets in a fixed order: a set's order depends on the process's hash seed."""
    if isinstance(value, (set, frozenset)):
        return sorted((_canonical(item) for item in value), key=repr)
    if isinstance(value, dict):
        return {repr(key): _canonical(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(item) for item in value]
    return value


def _episode_digest(env, task_id, actions):
    obs, info = env.reset(seed=0, options={"task_id": task_id})
    parts = [repr((obs, sorted(info.items())))]
    for action in actions:
        result = env.step(action)
        parts.append(repr(result))
        if result[2] or result[3]:
            break
    parts.append(repr(_canonical(env.unwrapped.get_state())))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _tasks_digest(env):
    records = [task.to_record() for task in env.unwrapped.tasks]
    return hashlib.sha256(json.dumps(records, sort_keys=True, default=repr).encode()).hexdigest()


def play(task, episodes, skip=0, others=True):
    """Digests of the shared tasks and of ``episodes`` episodes (the oracle's and, with ``others``,
    another task's reference, as the random agent plays) in a new env, from the ``skip``-th task."""
    env = gym.make(f"toolbench/{task}-v0")
    unwrapped = env.unwrapped
    digests = []
    for task_record in unwrapped.tasks[skip : skip + episodes]:
        other = unwrapped.tasks[stable_hash("store-test", task_record.id) % len(unwrapped.tasks)]
        for actions in (unwrapped.oracle_actions(task_record), unwrapped.oracle_actions(other))[: 2 if others else 1]:
            digests.append(_episode_digest(env, task_record.id, actions))
    result = {"tasks": _tasks_digest(env), "episodes": digests}
    env.close()
    return result


def fresh_digests():
    """What a fresh process sees: the second set of episodes, with nothing played before."""
    found = {task: play(task, 2, skip=3) for task in TASKS}
    found["GoogleSheets"] = play("GoogleSheets", 1, skip=1, others=False)
    return found


def test_mutating_episodes_leave_shared_data_and_other_envs_as_a_fresh_process_sees_them():
    # This process: envs that change everything their episodes can, left open.
    busy = [gym.make(f"toolbench/{task}-v0") for task in TASKS]
    for env in busy:
        for task in env.unwrapped.tasks[:3]:
            play_all = env.unwrapped.oracle_actions(task)
            _episode_digest(env, task.id, play_all)
    sheets = gym.make("toolbench/GoogleSheets-v0")
    first = sheets.unwrapped.tasks[0]
    _episode_digest(sheets, first.id, sheets.unwrapped.oracle_actions(first))
    here = {task: play(task, 2, skip=3) for task in TASKS}
    here["GoogleSheets"] = play("GoogleSheets", 1, skip=1, others=False)
    for env in [*busy, sheets]:
        env.close()

    code = "import json; from tests.core.test_task_store import fresh_digests; print(json.dumps(fresh_digests()))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    fresh = json.loads(done.stdout.strip().splitlines()[-1])
    for task in here:
        assert here[task] == fresh[task], task


def test_envs_of_a_split_share_one_task_set():
    first, second = gym.make("toolbench/RapidAPI-v0").unwrapped, gym.make("toolbench/RapidAPI-v0").unwrapped
    assert first.tasks is second.tasks and first._tasks_by_id is second._tasks_by_id
    assert isinstance(first.tasks, tuple)
    with pytest.raises(TypeError):
        first._tasks_by_id["x"] = first.tasks[0]
    assert gym.make("toolbench/RapidAPI-v0", split="demo").unwrapped.tasks is not first.tasks


def _write_tasks(path, prompts):
    lines = [json.dumps({"id": f"t{n}", "prompt": p, "completion": ["API.search()"]}) for n, p in enumerate(prompts)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_task_files_share_only_the_same_content_and_are_freed_with_their_envs(tmp_path):
    one, two = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _write_tasks(one, ["Find a house in Austin."])
    _write_tasks(two, ["Find a house in Boston."])
    env = gym.make("toolbench/HomeSearch-v0", task_file=one).unwrapped
    same = gym.make("toolbench/HomeSearch-v0", task_file=str(one)).unwrapped
    other = gym.make("toolbench/HomeSearch-v0", task_file=two).unwrapped
    assert env.tasks is same.tasks and other.tasks is not env.tasks
    assert other.tasks[0].prompt == "Find a house in Boston."

    _write_tasks(one, ["Find a house in Denver.", "Find a flat in Denver."])  # edited: another key
    os.utime(one, ns=(1, 1))
    edited = gym.make("toolbench/HomeSearch-v0", task_file=one).unwrapped
    assert [task.prompt for task in edited.tasks] == ["Find a house in Denver.", "Find a flat in Denver."]
    assert env.tasks[0].prompt == "Find a house in Austin."  # a live env keeps what it was made with

    key = ("tasks", type(edited), *store.file_key(one))
    assert store._held.get(key) is not None
    del edited
    gc.collect()
    assert store._held.get(key) is None


@pytest.mark.parametrize("task", ["HomeSearch", "CatAPI"])
def test_envs_playing_the_same_tasks_share_their_references_results_and_score_alike(task):
    first, second = gym.make(f"toolbench/{task}-v0"), gym.make(f"toolbench/{task}-v0")
    played = first.unwrapped.tasks[0]
    oracle = first.unwrapped.oracle_actions(played)
    first.reset(seed=0, options={"task_id": played.id})
    expected = first.step(oracle[0])
    what = {"HomeSearch": "reference criteria", "CatAPI": "references"}[task]
    cache = first.unwrapped._task_set.derived((type(first.unwrapped), what))
    assert (played.id, 0) in cache
    second.reset(seed=0, options={"task_id": played.id})
    assert repr(second.step(oracle[0])) == repr(expected)  # found in the cache: the same result


def test_references_of_different_task_files_are_not_shared(tmp_path):
    one, two = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path, city in ((one, "Austin"), (two, "Boston")):
        record = {
            "id": "t0",
            "prompt": "Find a house.",
            "completion": [f'API.set_location("{city}")\nAPI.set_buy_or_rent("buy")\nAPI.search()'],
        }
        path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    answer = 'API.set_location("Austin")\nAPI.set_buy_or_rent("buy")\nAPI.search()'
    scores = []
    for path in (one, two):
        env = gym.make("toolbench/HomeSearch-v0", task_file=path)
        env.reset(seed=0)
        scores.append(env.step(answer)[4]["score"])
    assert scores[0] > scores[1]  # the same task id, another reference: scored against its own
