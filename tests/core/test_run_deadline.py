"""A run's time budget counts the child's own CPU time and the env's serving, not waits for a core;
the wall-clock backstop still ends every run. (The env's serving time counting is checked by
tests/sheets/test_env.py, with a slow emulator.)"""

import itertools
import time

import pytest

from toolbench.core import sandbox, worker
from toolbench.core.sandbox import Limits, run_in_worker
from toolbench.mock_services.sheets import work

NAMES, COLLECT = "toolbench.core.sandbox:no_names", "toolbench.core.sandbox:result_variable"


def run(code, seconds):
    return run_in_worker(code, NAMES, COLLECT, serve=lambda kind, payload: None, limits=Limits(seconds, 512))


@pytest.fixture
def unguarded(monkeypatch):
    monkeypatch.setattr(sandbox, "UNGUARDED_FOR_TESTS", True)  # plain Python: the child can sleep


def test_a_child_that_waits_without_running_is_not_out_of_time(unguarded):
    # Sleeping stands for a machine too busy to run the child: wall-clock time passes, its CPU time does not.
    result = run("import time\ntime.sleep(1.5)\nresult = 'done'", seconds=1)
    assert result.ok and result.payload == "done", result.error


def test_the_wall_clock_backstop_ends_a_run_that_never_runs_out_of_cpu_time(unguarded):
    started = time.monotonic()
    result = run("import time\ntime.sleep(60)", seconds=1)
    elapsed = time.monotonic() - started
    assert result.timed_out and "1 s time budget" in result.error
    assert worker.WALL_CLOCK_FACTOR - 0.5 < elapsed < worker.WALL_CLOCK_FACTOR + 3


def test_a_busy_child_is_out_of_time_at_its_budget():
    started = time.monotonic()
    result = run("while True:\n    pass", seconds=1)
    assert result.timed_out and time.monotonic() - started < worker.WALL_CLOCK_FACTOR + 1


def test_the_emulators_clock_stops_while_agent_code_runs(monkeypatch):
    ticks = itertools.count()
    monkeypatch.setattr(work, "_now", lambda: float(next(ticks)))  # one second per look at the clock
    with work.budget(10**9, seconds=5.0), work.clock(running=False):
        for _ in range(20):  # twenty looks while stopped: none counted
            work.check_deadline()
        with work.clock(running=True), pytest.raises(work.DeadlineExceeded):
            for _ in range(10):  # counted again while serving: out of time within the budget's five
                work.check_deadline()
