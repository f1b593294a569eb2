"""A bounded, seeded fuzz of every env and mode: 200 actions per text env, 8 per code env, half of the
episodes generated from the env's grammar (``make fuzz`` runs 10,000 and 1,000)."""

from __future__ import annotations

import random

import gymnasium as gym
import pytest

import toolbench
from tests.fuzz_actions import generator_for
from tests.fuzzing import CODE_TASKS, fuzz
from toolbench.envs.home_search import HomeSearchEnv

CASES = [(spec.env_id, mode, spec.name in CODE_TASKS) for spec in toolbench.TASKS for mode in spec.modes]


@pytest.mark.parametrize("env_id, mode, code", CASES, ids=[f"{e.split('/')[1]}-{m}" for e, m, _ in CASES])
def test_mutated_actions_never_raise_or_break_the_env(env_id, mode, code):
    report = fuzz(env_id, mode, 8 if code else 200, memory=False)  # the memory's growth: make fuzz
    assert not report.failures and report.reference_still_works, report


class _LeakyHomeSearch(HomeSearchEnv):
    """Home Search that carries a count of its steps into every later episode: a leak."""

    steps_ever = 0

    def _act(self, action):
        outcome = super()._act(action)
        _LeakyHomeSearch.steps_ever += 1
        outcome.observation += f" ({_LeakyHomeSearch.steps_ever} steps so far)"
        return outcome


def test_the_fuzzer_reports_leaks_and_slow_actions():
    gym.register("toolbench-test/LeakyHomeSearch-v0", entry_point=_LeakyHomeSearch)
    try:
        report = fuzz("toolbench-test/LeakyHomeSearch-v0", "program", 40, memory=False)
    finally:
        gym.registry.pop("toolbench-test/LeakyHomeSearch-v0")
    assert report.leaks == 20 and any(failure.startswith("leak:") for failure in report.failures)
    assert report.actions == 40 and report.slowest_s > 0 and report.slowest_action
    assert report.exceptions == report.internal_errors == report.server_errors == 0


TEXT_CASES = [case[:2] for case in CASES if not case[2]]


@pytest.mark.parametrize("env_id, mode", TEXT_CASES, ids=[f"{e.split('/')[1]}-{m}" for e, m in TEXT_CASES])
def test_actions_as_long_as_the_action_space_allows_are_observations(env_id, mode):
    """(How long they take is in make fuzz's report: under a second each is the target.)"""
    report = fuzz(env_id, mode, 0, long_actions=True, memory=False)
    assert not report.failures and report.reference_still_works, report


GENERATED_CASES = [(env_id, mode) for env_id, mode, code in CASES if not code]


@pytest.mark.parametrize("env_id, mode", GENERATED_CASES, ids=[f"{e.split('/')[1]}-{m}" for e, m in GENERATED_CASES])
def test_generated_actions_are_seeded_and_reach_the_backend(env_id, mode):
    """The same seed gives the same actions, and some of them are calls the env reads without an
    error, carries out or scores: the generator speaks the env's grammar rather than only making
    parse errors."""
    env = gym.make(env_id, mode=mode).unwrapped
    grammar = generator_for(env, mode)
    played, executed = [], 0
    for rng, step in ((random.Random(7), True), (random.Random(7), False)):
        actions = []
        for episode in range(40):
            _, info = env.reset(seed=episode)
            actions.append(grammar.episode(rng, info))
            for action in actions[-1] if step else []:
                *_, terminated, truncated, step_info = env.step(action)
                executed += bool(step_info["executable"] or step_info["score"] > 0 or step_info["error"] is None)
                if terminated or truncated:
                    break
        played.append(actions)
    assert played[0] == played[1]
    assert executed > 0
