"""A bounded, seeded fuzz of every env and mode (``make fuzz`` runs the long version)."""

from __future__ import annotations

import pytest

import toolbench
from tests.fuzzing import CODE_TASKS, fuzz

CASES = [(spec.env_id, mode, spec.name in CODE_TASKS) for spec in toolbench.TASKS for mode in spec.modes]


@pytest.mark.parametrize("env_id, mode, code", CASES, ids=[f"{e.split('/')[1]}-{m}" for e, m, _ in CASES])
def test_mutated_actions_never_raise_or_break_the_env(env_id, mode, code):
    report = fuzz(env_id, mode, 6 if code else 40)
    assert not report.failures and report.reference_still_works, report
