"""Nothing an agent sees depends on a task's answer: checked for every registered env and mode.

Two tasks share their id, prompt and input fields (``ToolEnv.input_fields``) and differ in their
answer (references, goals, gold plans, category: ``ToolEnv.with_answer_of``). The same actions
played on both must give byte-identical observations, reset infos, step infos and transcripts,
except the numbers of the step that scores the episode (the score is the answer's to decide).
A new env is checked as soon as it is registered.
"""

from __future__ import annotations

import re
from typing import Any

import gymnasium as gym
import pytest

import toolbench
from tests.conftest import ENV_IDS

SCORED = "<number>"
END_LINE = re.compile(r"--- episode end: .* ---")
NUMBER = re.compile(r"(\d+(?:\.\d+)?)")
SLOW = ("GoogleSheets", "Tabletop")  # code run in the sandbox: one pair each


def _masked(value: Any) -> Any:
    """``value`` with every number (and bool) replaced: what the scoring step may change."""
    if isinstance(value, bool | int | float):
        return SCORED
    if isinstance(value, dict):
        return {key: _masked(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_masked(item) for item in value]
    return value


class _ScoringObservation(str):
    """The observation of the step that scores the episode: it may show its own score (WebShop's
    done page), so it equals another that differs from it only where each shows its score."""

    def __new__(cls, text: str, scores: set[str]) -> _ScoringObservation:
        made = super().__new__(cls, text)
        made.scores = scores
        return made

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _ScoringObservation):
            return NotImplemented
        mine, theirs = NUMBER.split(self), NUMBER.split(other)
        return len(mine) == len(theirs) and all(
            a == b or (a in self.scores and b in other.scores) for a, b in zip(mine, theirs)
        )

    __hash__ = str.__hash__


def _transcript(env: gym.Env, actions: list[str]) -> list[Any]:
    """Everything the agent sees in an episode of ``actions`` on the env's one task."""
    observation, info = env.reset(seed=0)
    seen: list[Any] = [observation, info]
    ended, scores = False, set()
    for action in actions:
        observation, reward, terminated, truncated, info = env.step(action)
        if (terminated or truncated) and not ended:
            scores = {str(reward), str(info["score"])}
            observation = _ScoringObservation(observation, scores)
        ended = ended or terminated or truncated
        seen.append([observation, terminated, truncated, _masked([reward, info]) if ended else [reward, info]])
        if terminated or truncated:
            break
    seen.append(_ScoringObservation(END_LINE.sub("--- episode end ---", env.render()), scores))
    return seen


def _pairs(env_class: type, tasks: list[Any], count: int) -> list[tuple[Any, Any]]:
    """Tasks with different answers, the second chosen with the same input where one has it."""
    pairs = []
    for task in tasks[: count * 3 : 3]:
        others = [other for other in tasks if other.references != task.references and other.id != task.id]
        same_input = [o for o in others if all(_field(o, f) == _field(task, f) for f in env_class.input_fields)]
        pairs.append((task, (same_input or others)[len(pairs)]))
    return pairs


def _field(task: Any, name: str) -> Any:
    field, _, key = name.partition(".")
    value = task.get(field)
    return value.get(key) if key and isinstance(value, dict) else value


def _cases() -> list[tuple[str, str]]:
    return [(env_id, mode) for env_id in ENV_IDS for mode in toolbench.find_task(env_id).env_class().modes]


@pytest.mark.parametrize("env_id, mode", _cases())
def test_what_an_agent_sees_does_not_depend_on_the_answer(env_id, mode):
    spec = toolbench.find_task(env_id)
    env_class = spec.env_class()
    tasks = toolbench.load_tasks(spec.name, "test")
    probe = gym.make(env_id, mode=mode).unwrapped
    for task, other in _pairs(env_class, tasks, 1 if spec.name in SLOW else 2):
        counterfeit = env_class.with_answer_of(task, other)
        assert counterfeit.references != task.references
        scripts = [probe.oracle_actions(task), probe.oracle_actions(other)]
        if mode == "interactive":
            scripts.append(["not an action", *probe.oracle_actions(task)])
        for actions in scripts:
            seen = []
            for played in (task, counterfeit):
                env = gym.make(env_id, mode=mode, tasks=[played], render_mode="ansi")
                seen.append(_transcript(env, actions))
                env.close()
            assert seen[0] == seen[1], f"{task.id} with {other.id}'s answer, actions {actions!r}"
    probe.close()


def test_the_check_finds_a_leak():
    """An env that shows its reference in an observation fails the comparison above."""
    spec = toolbench.find_task("CatAPI")
    env_class = spec.env_class()
    tasks = toolbench.load_tasks("CatAPI", "test")
    task, other = _pairs(env_class, tasks, 1)[0]

    class Leaky(env_class):
        def _begin(self, task):
            return super()._begin(task) + task.references[0]

    played = (task, env_class.with_answer_of(task, other))
    seen = [_transcript(Leaky(tasks=[one], render_mode="ansi"), ["x"]) for one in played]
    assert seen[0] != seen[1]
