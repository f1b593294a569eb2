"""A run's time budget is wall-clock time, however the child spends it; a run that keeps a core
busy (or its session's runs lately did) goes on at the lowest priority, and its calls to the env
are served in a slow lane."""

import contextlib
import os
import threading
import time

import gymnasium as gym
import pytest

import toolbench
from toolbench.core import sandbox, worker
from toolbench.core.sandbox import Limits, run_in_worker
from toolbench.core.under_way import others_under_way, step_under_way, wait_while_others
from toolbench.core.worker import GRACE, CpuAccount

NAMES, COLLECT = "toolbench.core.sandbox:no_names", "toolbench.core.sandbox:result_variable"


def run(code, seconds, serve=lambda kind, payload: None, account=None):
    return run_in_worker(code, NAMES, COLLECT, serve=serve, limits=Limits(seconds, 512), account=account)


@pytest.fixture
def unguarded(monkeypatch):
    monkeypatch.setattr(sandbox.for_tests, "UNGUARDED_FOR_TESTS", True)  # plain Python: the child can sleep and block


def timed(call):
    started = time.monotonic()
    result = call()
    return result, time.monotonic() - started


@pytest.mark.parametrize(
    "code",
    [
        "import time\ntime.sleep(60)",  # blocked: no CPU time at all
        "import os\nos.read(os.pipe()[0], 1)",  # blocked on a read that never comes
        "while True:\n    pass",  # busy
    ],
)
def test_a_run_ends_within_its_budget_and_the_grace_however_the_child_spends_it(unguarded, code):
    sandbox.start_worker()
    result, elapsed = timed(lambda: run(code, seconds=1))
    assert result.timed_out and "1 s time budget" in result.error
    assert elapsed < 1 + GRACE, elapsed


def test_a_run_that_finishes_in_time_keeps_its_result(unguarded):
    result = run("import time\ntime.sleep(0.3)\nresult = 'done'", seconds=2)
    assert result.ok and result.payload == "done", result.error


PRIORITY = "[os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0)]"


def test_a_spinning_run_is_demoted_and_a_light_one_is_not(unguarded):
    spin = (
        "import os, time\nstarted = time.process_time()\n"
        f"while time.process_time() - started < {worker.DEMOTE_AFTER + 0.3}:\n    pass\n"
        f"time.sleep(2 * {worker.LOOK_EVERY})\nresult = {PRIORITY}"
    )
    assert run(spin, seconds=10).payload == [worker.DEMOTED_NICE, os.SCHED_IDLE]
    light = run(f"import os\nresult = {PRIORITY}", seconds=10).payload
    assert light == [os.getpriority(os.PRIO_PROCESS, 0), os.SCHED_OTHER]


def test_a_demoted_child_cannot_raise_itself_back(unguarded):
    account = CpuAccount()
    account.charge(3.0)  # starts demoted
    code = (
        "import os\nrefused = []\n"
        "for name, back in (('policy', lambda: os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))),"
        " ('nice', lambda: os.setpriority(os.PRIO_PROCESS, 0, 0))):\n"
        "    try:\n        back()\n    except OSError:\n        refused.append(name)\n"
        f"result = [os.geteuid(), refused, {PRIORITY}]"
    )
    uid, refused, priority = run(code, seconds=10, account=account).payload
    if uid == 0:
        pytest.skip("the child runs as root here (no user to drop to): root may raise its priority")
    assert refused == ["policy", "nice"] and priority == [worker.DEMOTED_NICE, os.SCHED_IDLE]


def test_demoting_a_child_leaves_the_worker_and_its_scheduling_group_as_they_were(unguarded):
    """Children stay in the worker's session (one scheduling group under autogroup) as leaders of
    their own process groups (killed whole); a demotion reaches the child, never the worker that
    forks every session's children."""
    server = worker.WorkerServer.get()

    def worker_priority():
        pid = server.process.pid
        path = f"/proc/{pid}/autogroup"  # where the kernel has autogroups: the group's own nice value
        with open(path) if os.path.exists(path) else open(os.devnull) as group:
            return os.getpriority(os.PRIO_PROCESS, pid), os.sched_getscheduler(pid), group.read()

    before = worker_priority()
    account = CpuAccount()
    account.charge(3.0)
    for _ in range(5):  # children taken as soon as they are offered, demoted at once
        outcome = run(
            "import os\nresult = [os.getsid(0) == os.getpid(), os.getpgid(0) == os.getpid()]", 10, account=account
        )
        assert outcome.payload == [False, True], outcome.error
    assert worker_priority() == before


def test_a_session_that_spun_lately_starts_its_next_run_demoted_until_it_cools_down(unguarded):
    account = CpuAccount(half_life=10.0)
    account.charge(3.0)  # its last run spun to a 3 s budget
    read = "import os\nresult = os.getpriority(os.PRIO_PROCESS, 0)"
    assert run(read, seconds=10, account=account).payload == worker.DEMOTED_NICE
    later = time.monotonic() + 60  # six half-lives: 3 s became 0.05 s
    assert account.recent(later) < worker.DEMOTE_AFTER
    assert run(read, seconds=10, account=CpuAccount()).payload == os.getpriority(os.PRIO_PROCESS, 0)


def test_a_cpu_account_halves_every_half_life():
    account = CpuAccount(half_life=2.0)
    account.charge(4.0, now=100.0)
    assert account.recent(100.0) == 4.0 and account.recent(102.0) == 2.0 and account.recent(106.0) == 0.5
    account.charge(1.0, now=102.0)
    assert account.recent(102.0) == 3.0


@contextlib.contextmanager
def another_step_under_way(lasting: float = 30.0):
    """A step of another thread, under way from the block's start until it ends or ``lasting`` seconds pass."""
    started, done = threading.Event(), threading.Event()

    def step() -> None:
        with step_under_way():
            started.set()
            done.wait(lasting)

    thread = threading.Thread(target=step)
    thread.start()
    started.wait(5)
    try:
        yield
    finally:
        done.set()
        thread.join(5)


def test_a_demoted_runs_calls_are_served_in_the_slow_lane_while_another_step_is_under_way(unguarded):
    def busy_serve(kind, payload):
        ends = time.monotonic() + 0.05
        while time.monotonic() < ends:
            pass
        return ["a block"]

    code = "result = sum(len(get_obj_names()) for _ in range(6))"
    names = "toolbench.envs.tabletop:code_names"  # proxies whose every call the env serves

    def play(account):
        return timed(
            lambda: run_in_worker(code, names, COLLECT, serve=busy_serve, limits=Limits(10, 512), account=account)
        )

    heavy = CpuAccount()
    heavy.charge(5.0)
    with another_step_under_way():
        light, light_time = play(CpuAccount())
        slowed, slowed_time = play(heavy)
    alone, alone_time = play(heavy)  # the process has nothing else to do: no pause
    assert light.payload == slowed.payload == alone.payload == 6, (light, slowed, alone)
    # Six calls of 50 ms: light, about 0.3 s; demoted, each followed by a pause three times as long.
    assert light_time < 0.9 and slowed_time > 6 * 0.05 * (1 + sandbox.SLOW_LANE_PAUSE) * 0.8, (light_time, slowed_time)
    assert alone_time < 0.9, alone_time


def test_the_slow_lanes_pause_lasts_while_another_step_does_and_no_longer():
    with step_under_way():  # the waiting thread's own step is not another
        assert others_under_way() == 0
        _, unhindered = timed(lambda: wait_while_others(5))
        with another_step_under_way():
            assert others_under_way() == 1
            _, paused = timed(lambda: wait_while_others(0.3))
        with another_step_under_way(lasting=0.2):
            _, cut_short = timed(lambda: wait_while_others(5))
        assert others_under_way() == 0
    assert unhindered < 0.1 and 0.25 < paused < 1 and 0.15 < cut_short < 1, (unhindered, paused, cut_short)


@pytest.mark.parametrize(
    "env_id, code",
    [
        ("toolbench/GoogleSheets-v0", "while True:\n    pass"),
        ("toolbench/GoogleSheets-v0", "while True:\n    worksheet.get_all_values()"),
        ("toolbench/Tabletop-v0", "while True:\n    pass"),
        ("toolbench/Tabletop-v0", "while True:\n    get_obj_pos(get_obj_names()[0])"),
        # One call, a hundred moves: the deadline holds between the moves of a call too.
        ("toolbench/Tabletop-v0", "n = get_obj_names()[:2]\nstack_objects_in_order([n[i % 2] for i in range(102)])"),
    ],
)
def test_no_code_env_step_outlasts_its_budget_and_the_grace(env_id, code):
    env = gym.make(env_id, time_limit=1.0)
    task = toolbench.load_tasks(env_id.split("/")[1].split("-")[0])[0]
    env.reset(options={"task_id": task.id})
    (observation, reward, *_), elapsed = timed(lambda: env.step(code))
    # Ended by the sandbox, or by the env's own deadline for what one request or call does.
    assert reward == 0.0 and ("time budget" in observation or "[504]" in observation), observation
    assert elapsed < 1.0 + GRACE, elapsed
    env.close()


def test_the_run_using_most_of_the_shared_memory_is_the_one_ended():
    watch = worker.MemoryWatch(capacity_mb=1000)
    assert not watch.report(1, 400 * 2**20) and not watch.report(2, 500 * 2**20)
    assert not watch.report(1, 450 * 2**20)  # over 1,000 MB, but run 2 uses more
    assert watch.report(2, 600 * 2**20)
    watch.forget(2)
    assert not watch.report(1, 900 * 2**20)


def test_runs_that_together_pass_the_memory_capacity_end_the_largest_with_a_clear_error(unguarded, monkeypatch):
    monkeypatch.setattr(worker, "MEMORY", worker.MemoryWatch(capacity_mb=150))
    code = "import time\nblock = bytearray(200 * 2**20)\nfor i in range(0, len(block), 4096):\n    block[i] = 1\ntime.sleep(10)"
    result, elapsed = timed(lambda: run(code, seconds=5))
    assert not result.ok and "this run used the most of it" in result.error and elapsed < 3, (result.error, elapsed)
    assert run("result = 1", seconds=5).payload == 1  # a short run is not looked at


def test_a_child_is_the_first_process_the_kernel_ends_when_memory_runs_out():
    def setup():  # in the child, before its layers close /proc
        with open("/proc/self/oom_score_adj") as handle:
            return {"score": handle.read().strip()}

    result = sandbox.run_code("x = 1", setup, lambda ns: ns["score"], Limits(5, 512))
    assert result.payload == "1000", result


def test_a_move_the_deadline_stops_is_undone_within_the_grace(monkeypatch):
    """A move is many simulation steps, slow when many sessions share the process (here each step
    is made to take 5 ms): the deadline stops it between two of them, and the world is put back as
    it was before the move."""
    from toolbench.mock_services.tabletop import sim as tabletop_sim

    env = gym.make("toolbench/Tabletop-v0", mode="interactive", time_limit=1.0)
    task = toolbench.load_tasks("Tabletop")[0]
    env.reset(options={"task_id": task.id})
    world = env.unwrapped._sim
    before = world.positions()
    step = tabletop_sim.TabletopSim._step

    def slow_step(self):
        time.sleep(0.005)
        step(self)

    monkeypatch.setattr(tabletop_sim.TabletopSim, "_step", slow_step)
    code = "```python\nn = get_obj_names()\nput_first_on_second(n[0], n[1])\n```"
    (observation, reward, *_), elapsed = timed(lambda: env.step(code))
    assert reward == 0.0 and "time budget" in observation, observation  # the env's words or the sandbox's
    assert elapsed < 1.0 + GRACE, elapsed
    assert world.positions() == before and world.deadline is None
    env.close()
