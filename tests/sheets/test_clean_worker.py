"""Agent code runs in a clean worker: nothing of the tasks is in its memory, even unguarded."""

import gymnasium as gym

import toolbench
from toolbench.core import sandbox
from toolbench.core.sandbox import Limits, run_code

from ..core.secret_search import search_code


def test_unguarded_code_finds_no_reference_in_its_memory(monkeypatch):
    env = gym.make("toolbench/GoogleSheets-v0")
    tasks = toolbench.load_tasks("GoogleSheets")
    secrets = [reference for task in tasks for reference in task.references]
    env.reset(options={"task_id": tasks[0].id})
    env.unwrapped._reference_book(tasks[0], 0)  # the env holds its references and expected books
    code = search_code(secrets)
    monkeypatch.setattr(sandbox.for_tests, "UNGUARDED_FOR_TESTS", True)
    observation, *_ = env.step(code)
    assert "found 0 records 0" in observation, observation
    # The same search in a fork of this process (the old design) finds them: the test can fail.
    # A process that holds torch and transformers (the trainer tests) has millions of objects to walk.
    forked = run_code(code, dict, lambda ns: None, Limits(seconds=90))
    assert forked.ok and "found 0" not in forked.output and "records 0" not in forked.output


def test_the_workers_warm_up_runs_and_a_waiting_child_builds_the_names_without_a_request():
    """The worker ignores a failing warm-up (runs are then slower, not wrong), so it is checked here."""
    from toolbench.envs import sheets

    sheets.warm_worker()
    args = dict(sheets._WARM_CHILD_ARGS)
    assert args["sheet_name"] == "Sheet1"  # a made-up sheet: the worker holds no task

    def no_request(kind, data):
        raise AssertionError(f"a request was sent: {data}")

    names = sheets.code_names(**{**args, "call": no_request})
    assert names["worksheet"].title == "Sheet1"
