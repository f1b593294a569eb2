"""The env's side of a run in the clean worker: ``run_in_worker`` and ``start_worker``.

Runs in the env's process, which holds the tasks. It checks and compiles the code (layer 1,
``compile_time``; refused code never reaches a child), takes a ready child from this process's
fork server (``worker.WorkerServer``), sends it the job, serves the proxy calls of the code with
the env's own backend (``serve``), and enforces one wall-clock deadline for the whole run
(``worker.RunDeadline``, which also demotes a run that keeps a core busy). It trusts nothing the
child sends: messages are bounded and counted before parsing (``worker.Channel``) and the reply's
fields are checked (``terms.reply_result``). The fork server imports the modules the caller
names (``start_worker``) and those of each run's names and collect functions.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import marshal
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from toolbench.core.sandbox import for_tests
from toolbench.core.sandbox.compile_time import compile_code
from toolbench.core.sandbox.terms import (
    DEFAULT_LIMITS,
    MAX_ERROR_CHARS,
    PACKAGE,
    CodeError,
    Limits,
    SandboxResult,
    reply_result,
)
from toolbench.core.under_way import wait_while_others
from toolbench.core.worker import (
    ChannelClosed,
    ChannelTimeout,
    CpuAccount,
    MessageRefused,
    RunDeadline,
    WorkerServer,
    WorkerUnavailable,
)

#: Programs up to this long keep their compiled form: agents (and references) send the same
#: program again and again, and checking and compiling it costs more than its run's hand-over.
CACHED_CODE_CHARS = 16_384


@functools.lru_cache(maxsize=256)
def _marshalled_cached(code: str, echo_last_expression: bool) -> str:
    return base64.b64encode(marshal.dumps(compile_code(code, echo_last_expression))).decode("ascii")


def _marshalled(code: str, echo_last_expression: bool) -> str:
    """The checked, compiled code as the child receives it (raises ``CodeError``; refusals are not kept)."""
    if len(code) <= CACHED_CODE_CHARS:
        return _marshalled_cached(code, echo_last_expression)
    return _marshalled_cached.__wrapped__(code, echo_last_expression)


def start_worker(modules: Sequence[str] = ()) -> None:
    """Start this process's clean worker now, if it is not running, so that no step pays for its
    start (a second or more on a loaded machine); a failure shows at the first run instead.
    ``modules`` are the modules it imports before it forks: those whose code-side names the runs
    call. A running worker without one of them is replaced by one with both lists, so the callers
    of one process pass one list, and the worker starts once."""
    with contextlib.suppress(WorkerUnavailable, RuntimeError, OSError):
        WorkerServer.get(modules)


def _modules_of(names: str, collect: str) -> tuple[str, ...]:
    """The modules the worker must have imported for a run: those of its names and collect functions,
    but this package, which every worker has."""
    modules = (path.partition(":")[0] for path in (names, collect))
    return tuple(dict.fromkeys(module for module in modules if module != PACKAGE))


def run_in_worker(
    code: str,
    names: str,
    collect: str,
    serve: Callable[[str, Any], Any],
    limits: Limits = DEFAULT_LIMITS,
    echo_last_expression: bool = False,
    seed: int = 0,
    names_args: dict[str, Any] | None = None,
    collect_args: dict[str, Any] | None = None,
    account: CpuAccount | None = None,
) -> SandboxResult:
    """Run ``code`` in a child of the clean worker. ``names`` and ``collect`` are ``module:function``
    paths of the task's code-side helpers (``names(call, **names_args)`` builds the namespace from
    proxies; ``collect(namespace, **collect_args)`` says what to send back); the worker must have
    imported their modules (``start_worker``), or one that has is started. Each proxy call
    arrives here as ``serve(kind, payload)``, which answers it (or raises ValueError, KeyError or
    TypeError with a message for the code). One wall-clock deadline holds for the whole run;
    ``account`` is the session's recent CPU use (``worker.CpuAccount``), which decides how soon a
    busy run is demoted to the lowest priority."""
    compiled = ""
    try:
        if not for_tests.UNGUARDED_FOR_TESTS:  # refused code never reaches a child
            compiled = _marshalled(code, echo_last_expression)
    except CodeError as exc:
        return SandboxResult(False, "", str(exc))
    return _run_in_child(
        code, compiled, echo_last_expression, names, collect, serve, limits, seed, names_args, collect_args,
        account, ends=time.monotonic() + limits.seconds,
    )  # fmt: skip


def _run_in_child(
    code: str,
    compiled: str,
    echo_last_expression: bool,
    names: str,
    collect: str,
    serve: Callable[[str, Any], Any],
    limits: Limits,
    seed: int,
    names_args: dict[str, Any] | None,
    collect_args: dict[str, Any] | None,
    account: CpuAccount | None,
    ends: float,
) -> SandboxResult:
    """``run_in_worker``'s run, ending by ``ends`` (``time.monotonic()``): waiting for a child counts,
    as the child's own time does (``RunDeadline``). Code envs start the clean worker at reset, so
    its start is no step's."""
    try:
        child, channel = WorkerServer.get(_modules_of(names, collect)).fork(ends)
    except (WorkerUnavailable, OSError) as exc:
        return SandboxResult(False, "", f"the sandbox could not start a run ({exc}); try the step again")
    deadline = RunDeadline(max(ends - time.monotonic(), 0.05), child.pid, account)
    try:
        channel.send(
            {
                "code": code,
                "compiled": compiled,
                "echo": echo_last_expression,
                "seed": seed,
                "limits": {
                    "seconds": limits.seconds,
                    "memory_mb": limits.memory_mb,
                    "output_chars": limits.output_chars,
                },
                "names": names,
                "names_args": names_args or {},
                "collect": collect,
                "collect_args": collect_args or {},
                "unguarded": for_tests.UNGUARDED_FOR_TESTS,
            },
            deadline,
        )
        while True:
            message = channel.receive(deadline)
            if not isinstance(message, dict):
                return SandboxResult(False, "", "the code sent back a malformed result")
            if message.get("type") == "done":
                return reply_result(message.get("reply"))
            if message.get("type") != "call" or not isinstance(message.get("kind"), str):
                return SandboxResult(False, "", "the code sent back a malformed result")
            if deadline.remaining() <= 0:
                raise ChannelTimeout()
            channel.send(_serve_call(serve, message, deadline), deadline)
    except ChannelTimeout:
        if deadline.over_memory:
            return SandboxResult(False, "", deadline.over_memory)
        return SandboxResult(
            False, "", f"the code did not finish within its {limits.seconds:g} s time budget", timed_out=True
        )
    except MessageRefused:
        return SandboxResult(False, "", "the code sent back a malformed result")
    except (ChannelClosed, OSError):
        return SandboxResult(False, "", "the code stopped without a result; it may have exceeded its memory budget")
    finally:
        child.kill()
        channel.close()
        deadline.finish()


#: Demoted runs' calls are served one at a time in the process and, while another step of the process
#: is under way, each is followed by a pause of up to this many times its length: a session whose code
#: keeps the env itself busy (Tabletop's simulator) takes at most a quarter of the time from the
#: others, however long its calls; a process with nothing else to do serves it at full speed.
SLOW_LANE_PAUSE = 3.0
_SLOW_LANE = threading.Lock()


def _serve_call(serve: Callable[[str, Any], Any], message: dict[str, Any], deadline: RunDeadline) -> dict[str, Any]:
    """The env's answer to one call of the code (its result, or its refusal as an error), its time
    charged to the run; a demoted run's call waits for the slow lane, and after it gives the other steps
    of the process their turn."""
    if not deadline.demoted:
        return _timed_answer(serve, message, deadline)
    if not _SLOW_LANE.acquire(timeout=max(deadline.ends - time.monotonic(), 0.0)):
        raise ChannelTimeout()
    try:
        started = time.monotonic()
        answer = _timed_answer(serve, message, deadline)
    finally:
        _SLOW_LANE.release()
    pause = min((time.monotonic() - started) * SLOW_LANE_PAUSE, max(deadline.ends - time.monotonic(), 0.0))
    wait_while_others(pause)
    return answer


def _timed_answer(serve: Callable[[str, Any], Any], message: dict[str, Any], deadline: RunDeadline) -> dict[str, Any]:
    started = time.monotonic()
    try:
        return {"result": serve(message["kind"], message.get("payload"))}
    except (ValueError, KeyError, TypeError) as exc:
        # Raised in the code as the built-in type it is (KeyError, TypeError or ValueError).
        kind = next(k for k in (KeyError, TypeError, ValueError) if isinstance(exc, k)).__name__
        text = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        return {"error": {"type": kind, "message": str(text)[:MAX_ERROR_CHARS]}}
    except (ArithmeticError, IndexError, RecursionError, MemoryError) as exc:
        # Arguments a backend did not foresee (10**400 as a coordinate): the code's error.
        return {"error": {"type": "ValueError", "message": f"{type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS]}}
    finally:
        deadline.served += time.monotonic() - started
