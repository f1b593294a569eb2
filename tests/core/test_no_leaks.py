"""Nothing an agent sees depends on a task's answer: checked for every registered env and mode.

Two tasks share their id, prompt and input fields (``ToolEnv.input_fields``) and differ in their
answer (references, goals, gold plans, category: ``ToolEnv.with_answer_of``). The same actions
played on both must give byte-identical observations, reset infos, step infos and transcripts,
except the numbers of the step that scores the episode (the score is the answer's to decide).
Where the two episodes score the same, their scoring infos must hold the same keys and the same
values, numbers aside only under the env's metrics and score details (partial scores): a verdict
says how well the actions did, not what the answer is (whether the task can be done, how many facts
it has); run records (``diagnostics=True``) may.
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
SLOW = tuple(spec.name for spec in toolbench.TASKS if spec.runs_code)  # code run in the sandbox: one pair each


def _masked(value: Any) -> Any:
    """``value`` with every number (and bool) replaced."""
    if isinstance(value, bool | int | float):
        return SCORED
    if isinstance(value, dict):
        return {key: _masked(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_masked(item) for item in value]
    return value


def _numbers_masked(value: Any) -> Any:
    """``value`` with every number (not bool) replaced."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return SCORED
    if isinstance(value, dict):
        return {key: _numbers_masked(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_numbers_masked(item) for item in value]
    return value


def _verdict(info: dict[str, Any], scored: set[str]) -> dict[str, Any]:
    """A scoring step's info as two episodes that score the same must show it: its metrics and the
    numbers of its score details masked (partial scores), everything else as it is (a flag inside a
    verdict, such as whether the task can be done, is not a score)."""
    return {
        key: (SCORED if isinstance(value, bool | int | float) else _numbers_masked(value)) if key in scored else value
        for key, value in info.items()
    }


def _scored_info(info: dict[str, Any], scored: set[str]) -> dict[str, Any]:
    """The scoring step's info with the numbers of its score keys masked: they are the answer's
    to decide. Any other key, and any text under a score key, must be the same."""
    return {key: _masked(value) if key in scored else value for key, value in info.items()}


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


def _transcript(env: gym.Env, actions: list[str], verdicts: list[Any] | None = None) -> list[Any]:
    """Everything the agent sees in an episode of ``actions`` on the env's one task; the scoring
    step's reward and info are added to ``verdicts``."""
    verdicts = [] if verdicts is None else verdicts
    scored = {"success", "score", "executable", *env.unwrapped.metric_names, *env.unwrapped.score_details}
    observation, info = env.reset(seed=0)
    seen: list[Any] = [observation, info]
    ended, scores = False, set()
    for action in actions:
        observation, reward, terminated, truncated, info = env.step(action)
        if (terminated or truncated) and not ended:
            scores = {str(reward), str(info["score"])}
            observation = _ScoringObservation(observation, scores)
        if (terminated or truncated) and not ended:
            verdicts.append((reward, _verdict(info, scored - {"success", "score"})))
        ended = ended or terminated or truncated
        seen.append(
            [observation, terminated, truncated, [SCORED, _scored_info(info, scored)] if ended else [reward, info]]
        )
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
        # A third task's answer fails on both: the two verdicts must then be the same.
        third = next(t for t in tasks if t.references not in (task.references, other.references))
        scripts = [probe.oracle_actions(task), probe.oracle_actions(other), probe.oracle_actions(third)]
        if mode == "interactive":
            scripts.append(["not an action", *probe.oracle_actions(task)])
        for actions in scripts:
            seen, verdicts = [], []
            for played in (task, counterfeit):
                env = gym.make(env_id, mode=mode, tasks=[played], render_mode="ansi")
                seen.append(_transcript(env, actions, verdicts))
                env.close()
            assert seen[0] == seen[1], f"{task.id} with {other.id}'s answer, actions {actions!r}"
            if actions is scripts[2]:  # a third task's answer: the two verdicts must be compared
                assert len(verdicts) == 2 and verdicts[0][0] == verdicts[1][0], (task.id, other.id, verdicts)
            if len(verdicts) == 2 and verdicts[0][0] == verdicts[1][0]:
                assert verdicts[0][1] == verdicts[1][1], (
                    f"{task.id} with {other.id}'s answer: the verdict tells more",
                    verdicts,
                )
    probe.close()


def _leaky_pair(method: str, leak) -> list[list[Any]]:
    """What an agent sees on a task and on its counterfeit, in a Cat API env whose ``method``
    (``_begin`` or ``_act``) is changed by ``leak(result, task)``."""
    env_class = toolbench.find_task("CatAPI").env_class()
    task, other = _pairs(env_class, toolbench.load_tasks("CatAPI", "test"), 1)[0]

    def leaking(self, *args):
        return leak(getattr(env_class, method)(self, *args), self.task)

    leaky = type("Leaky", (env_class,), {method: leaking})
    played = (task, env_class.with_answer_of(task, other))
    return [_transcript(leaky(tasks=[one], render_mode="ansi"), [task.references[0]]) for one in played]


def test_the_check_finds_a_leak_in_an_observation():
    seen = _leaky_pair("_begin", lambda prompt, task: prompt + task.references[0])
    assert seen[0] != seen[1]


def test_the_check_finds_a_verdict_detail_of_the_answer():
    def leak(outcome, task):  # a failing verdict that tells whether the answer is a listing
        outcome.metrics["reading"] = "GET" in task.references[0]
        return outcome

    env_class = toolbench.find_task("CatAPI").env_class()
    task, other = _pairs(env_class, toolbench.load_tasks("CatAPI", "test"), 1)[0]
    leaky = type("Leaky", (env_class,), {"_act": lambda self, action: leak(env_class._act(self, action), self.task)})
    verdicts: list[Any] = []
    for played in (task, env_class.with_answer_of(task, other)):
        _transcript(
            leaky(tasks=[played], render_mode="ansi"), ["curl -X GET 'https://api.thecatapi.com/v1/votes'"], verdicts
        )
    assert verdicts[0][0] == verdicts[1][0] and verdicts[0][1] != verdicts[1][1]


def test_the_check_finds_an_answer_dependent_number_that_is_not_part_of_the_score():
    def leak(outcome, task):
        outcome.metrics["hint"] = len(task.references[0])
        return outcome

    seen = _leaky_pair("_act", leak)
    assert seen[0] != seen[1]
