"""What the pass verdict tells an agent, and what it does not pass.

Whether a task is solvable and how many facts its answer has are the answer's shape: an agent that
replays a task privately (``clone_for``) and reads them knows to give up on an unsolvable task before
it looks. Only run records (``diagnostics=True``) carry them; an agent's info says passed or failed.
A dump of every field the calls returned states each fact too, but it is not an answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import pytest

import toolbench  # noqa: F401  (registers the env ids)
from tests.episodes import play
from toolbench.envs.rapidapi import RapidAPIEnv
from toolbench.mock_services.rapidapi.passrule import Reading, states

#: Verdict details only run records carry, at any depth of an info.
DETAILS = {"solvable", "facts_found", "facts_total", "made_the_calls", "listed", "answer_facts", "unsolvable_reason"}


def finish(answer: str, kind: str = "give_answer") -> str:
    return json.dumps({"name": "Finish", "arguments": {"return_type": kind, "final_answer": answer}})


def keys(value: Any) -> Iterator[str]:
    """Every key of a nested info."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from keys(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from keys(item)


def leaves(value: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for name, item in value.items():
            yield from leaves(item, str(name))
    elif isinstance(value, list):
        for item in value:
            yield from leaves(item, key)
    else:
        yield key, value


def dump_answer(env: RapidAPIEnv, task: Any) -> str:
    """Play the task's calls; the answer that lists every field they returned as ``key: value`` lines
    (read whole from the env: an observation is cut at 1,024 characters)."""
    env.reset(options={"task_id": task.id})
    for action in env.oracle_actions(task)[:-1]:
        env.step(action)
    lines = [f"{name}: {value}" for _, response in env._returned for name, value in leaves(response)]
    return "\n".join(dict.fromkeys(lines))


def episodes(env: RapidAPIEnv) -> Iterator[dict[str, Any]]:
    """Every info of a few kinds of episode: the oracle's, a dump, giving up, a wrong answer, and
    one cut off by ``max_steps``, on solvable and unsolvable tasks."""
    solvable = next(t for t in env.tasks if t.get("solvable"))
    unsolvable = next(t for t in env.tasks if not t.get("solvable"))
    for task in (solvable, unsolvable):
        calls = env.oracle_actions(task)[:-1]
        scripts = [env.oracle_actions(task), [*calls, finish("", "give_up_and_restart")], [*calls, finish("42")],
                   [*calls, finish(dump_answer(env, task))], ["not json"] * (env.max_steps + 1)]  # fmt: skip
        for actions in scripts:
            yield env.reset(options={"task_id": task.id})[1]
            for action in actions:
                *_, terminated, truncated, info = env.step(action)
                yield info
                if terminated or truncated:
                    break


def test_an_agents_infos_say_passed_or_failed_only():
    env = gym.make("toolbench/RapidAPI-v0", split="test", max_steps=6).unwrapped
    assert not env.diagnostics and "facts_found" not in env.metric_names
    seen = [info for info in episodes(env)]
    assert any("passed" in info for info in seen)
    assert not [sorted(DETAILS & set(keys(info))) for info in seen if DETAILS & set(keys(info))]
    # A private copy of a task (a search agent's) is no run record either: it grades nothing.
    clone = env.clone_for(env.tasks[0])
    *_, info = play(clone, clone.tasks[0].id, clone.oracle_actions(clone.tasks[0]))
    assert info["success"] is None and "passed" not in info and not DETAILS & set(keys(info))


def test_run_records_keep_the_details():
    env = gym.make("toolbench/RapidAPI-v0", split="test", diagnostics=True).unwrapped
    task = next(t for t in env.tasks if t.get("solvable"))
    *_, info = play(env, task.id, env.oracle_actions(task))
    assert info["passed"] is True and info["made_the_calls"] is True
    assert info["facts_found"] == info["facts_total"] == len(task.get("answer_facts"))
    assert info["verdict"]["solvable"] is True and info["verdict"]["test_set"] == task.category
    summary = RapidAPIEnv.summarize_episodes([info])
    assert summary[f"pass_{task.category}"] == 1.0 and summary["pass_solvable"] == 1.0


@pytest.fixture(scope="module")
def test_env() -> RapidAPIEnv:
    return gym.make("toolbench/RapidAPI-v0", split="test").unwrapped


def test_a_dump_of_every_returned_field_is_not_an_answer(test_env):
    """The calls of the oracle, then every field they returned as ``key: value`` lines: each fact is
    there, with everything else. At most 10% of the test tasks pass (a task whose calls return
    little more than its facts, or an unsolvable one whose call's refusal says so); the oracle's
    answers all pass."""
    env, passed = test_env, []
    for task in env.tasks:
        info = env.step(finish(dump_answer(env, task)))[4]
        passed.append(info["passed"])
        *_, oracle = play(env, task.id, env.oracle_actions(task))
        assert oracle["passed"] is True, task.id
    assert len(env.tasks) == 790 and sum(passed) <= 0.10 * len(env.tasks), sum(passed)


def test_an_answer_may_name_its_facts_fields_and_a_detail(test_env):
    """What the bound leaves room for: a label per fact, and one more returned value per two facts
    (the title of the row a question was about, say); one more than that fails."""
    env = test_env
    for task in [t for t in env.tasks if t.get("solvable") and len(t.get("answer_facts")) in (2, 3)]:
        facts = [f if isinstance(f, str) else f[0] for f in task.get("answer_facts")]
        calls = env.oracle_actions(task)[:-1]
        env.reset(options={"task_id": task.id})
        for action in calls:
            env.step(action)
        labelled = [(name, str(value)) for _, response in env._returned for name, value in leaves(response)]
        said = Reading.of(task.prompt + " " + " ".join(facts))
        extras = [v for _, v in labelled if len(v) > 3 and not states(said, v)]
        named = {fact: name for name, value in labelled for fact in facts if value == fact and "_" not in name}
        if len(set(extras)) < 2 or len(named) < len(facts):
            continue
        labels = "; ".join(f"{named[fact]}: {fact}" for fact in facts)
        *_, info = play(env, task.id, [*calls, finish(f"{labels} (that is for {extras[0]})")])
        assert info["passed"] is True, (task.id, labels, extras[0])
        two = " and ".join(dict.fromkeys(extras))
        *_, info = play(env, task.id, [*calls, finish(f"{labels} (that is for {two})")])
        assert info["passed"] is False, (task.id, two)
        *_, info = play(env, task.id, [*calls, finish(dump_answer(env, task))])
        assert info["passed"] is False
        return
    raise AssertionError("no test task with two facts, their fields named and two details to add")
