"""The clean worker hands its ready children to the env ahead of need: a child that died while
waiting is passed over, and a worker that stopped is started again with nothing of it left open."""

import os
import select
import signal
import time

from toolbench.core.sandbox import run_in_worker
from toolbench.core.worker import WorkerServer


def run():
    return run_in_worker("result = 6 * 7", "toolbench.core.sandbox:no_names", "toolbench.core.sandbox:result_variable",
                         serve=lambda kind, payload: None)  # fmt: skip


def test_a_ready_child_that_died_while_waiting_is_passed_over():
    server = WorkerServer.get()
    assert run().payload == 42
    assert select.select([server.control], [], [], 30)[0]  # the replacement for the child taken is offered
    with server._lock:
        server.ready.append(server._receive_offer(timeout=5))
        for pid, _, _ in server.ready:  # every child waiting for a run dies
            os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    result = run()
    assert result.ok and result.payload == 42, result.error


def test_a_worker_that_stopped_is_started_again_with_nothing_of_it_left_open():
    server = WorkerServer.get()
    assert run().payload == 42
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait()
    result = run()
    assert result.ok and result.payload == 42, result.error
    assert WorkerServer.get() is not server
    assert server.control.fileno() == -1 and not server.ready
