"""``run_code``: agent code in a fork of the calling process, for tests of the guards.

The names are built in-process (``setup``), so the child's memory holds whatever the caller's
does: the envs use the clean worker instead (``env_side.run_in_worker``). The child gets the same
layers (``confine``, ``execute``) before the code's first line; the caller enforces the
wall-clock budget, kills the child's whole process group in every case, and reads its reply from
a pipe, bounded in size and checked (``terms.parse_reply``).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import time
from collections.abc import Callable
from typing import Any

from toolbench.core import kernel
from toolbench.core.sandbox import for_tests
from toolbench.core.sandbox.compile_time import AGENT_FILE, compile_code
from toolbench.core.sandbox.confine import (
    clear_environment,
    close_inherited_descriptors,
    drop_privileges,
    first_to_go_when_memory_runs_out,
    limit_memory,
    quiet_stdio,
    seed_libraries,
    single_threaded_libraries,
    thread_pools,
)
from toolbench.core.sandbox.execute import prepare_parent, run_agent_code
from toolbench.core.sandbox.terms import DEFAULT_LIMITS, MAX_REPLY_BYTES, CodeError, Limits, SandboxResult, parse_reply


def _child(
    reply_fd: int,
    code_object: Any,
    setup: Callable[[], dict[str, Any]],
    collect: Callable[[dict[str, Any]], Any],
    limits: Limits,
    seed: int = 0,
) -> None:
    close_inherited_descriptors(reply_fd)
    quiet_stdio()
    clear_environment()
    limit_memory(limits.memory_mb)
    single_threaded_libraries()
    first_to_go_when_memory_runs_out()
    drop_privileges()
    seed_libraries(seed)
    reply = run_agent_code(code_object, setup, collect, limits, for_tests.UNGUARDED_FOR_TESTS)
    try:
        data = memoryview(reply.encode("utf-8"))
        while data:
            data = data[os.write(reply_fd, data) :]
    finally:
        os._exit(0)


def run_code(
    code: str,
    setup: Callable[[], dict[str, Any]],
    collect: Callable[[dict[str, Any]], Any],
    limits: Limits = DEFAULT_LIMITS,
    echo_last_expression: bool = False,
    seed: int = 0,
) -> SandboxResult:
    """Run ``code`` in a forked child with the names ``setup()`` returns; ``collect(namespace)`` (run
    in the child after the code, even if it failed) says what to send back as the payload. ``seed``
    seeds the libraries' global random generators in the child."""
    try:
        if for_tests.UNGUARDED_FOR_TESTS:
            code_object = compile(code, AGENT_FILE, "exec")  # tests only: see UNGUARDED_FOR_TESTS
        else:
            code_object = compile_code(code, echo_last_expression)
    except (CodeError, SyntaxError) as exc:
        return SandboxResult(False, "", str(exc))
    prepare_parent()
    thread_pools()
    # A bare fork, not multiprocessing: it also works inside daemonic workers (AsyncVectorEnv's),
    # which multiprocessing forbids to have children.
    read_fd, write_fd = os.pipe()
    pid = kernel.fork()
    if pid == 0:  # the child never returns
        try:
            os.close(read_fd)
            os.setsid()  # its own process group: the parent can kill everything it started
            _child(write_fd, code_object, setup, collect, limits, seed)
        finally:
            os._exit(1)
    os.close(write_fd)
    deadline = time.monotonic() + limits.seconds
    try:
        data, finished = _read_reply(read_fd, deadline)
    finally:
        os.close(read_fd)
    status = _wait(pid, deadline) if finished else None
    _kill(pid)  # the whole group, in every case: nothing the code started outlives it
    if status is None:
        return SandboxResult(
            False, "", f"the code did not finish within its {limits.seconds:g} s time budget", timed_out=True
        )
    if data is None:
        return SandboxResult(False, "", "the code sent back a result longer than allowed")
    if not data:
        return SandboxResult(False, "", _death(status))
    return parse_reply(data)


def _read_reply(fd: int, deadline: float) -> tuple[bytes | None, bool]:
    """Everything written to the pipe until it closes (None if too long), and whether it closed in time."""
    chunks, size = [], 0
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                return None, False
            chunk = os.read(fd, 1 << 20)
            if not chunk:  # end of file: the child closed the pipe by exiting
                return (b"".join(chunks) if size <= MAX_REPLY_BYTES else None), True
            size += len(chunk)
            if size <= MAX_REPLY_BYTES:
                chunks.append(chunk)


def _wait(pid: int, deadline: float) -> int | None:
    """The child's exit status, or None if it is still running at the deadline (the pipe closing
    does not prove the child exited: the code could have closed it)."""
    while True:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return 0
        if done:
            return status
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.002)


def _kill(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            target()
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def _death(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"the code crashed (signal {os.WTERMSIG(status)}); it may have exceeded its memory budget"
    return f"the code stopped without a result (exit code {os.waitstatus_to_exitcode(status)})"
