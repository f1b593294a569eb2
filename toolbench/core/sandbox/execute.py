"""One run of checked code in a child, behind all the layers; and what the forking parent prepares.

``run_agent_code`` builds the code's names (layer 2's ``restricted_globals`` around the task's
names), applies what the child does not have yet (the library patches of ``disarm``, the kernel
layers and the audit hook of ``confine``), runs the code compiled by layer 1, and returns the
reply as JSON text: the printed output, the error with the agent's own line numbers, and what the
task's collect function returns. It runs in a child only (``fork``, ``clean_worker``).
``prepare_parent`` computes, in the process that forks, what each child would otherwise compute
after its layers made it unreadable.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any

from toolbench.core import kernel, reachable
from toolbench.core.sandbox.compile_time import AGENT_FILE, LAST_VALUE
from toolbench.core.sandbox.confine import apply_kernel_layers, can_drop_to_nobody, install_audit_hook, kernel_read_only
from toolbench.core.sandbox.disarm import disarm_libraries, disarm_plan
from toolbench.core.sandbox.guards import Printer, restricted_globals
from toolbench.core.sandbox.terms import Limits, shown


def _agent_traceback(exc: BaseException) -> str:
    """The error with the agent's own line numbers, without the sandbox's frames."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == AGENT_FILE]
    where = f"line {frames[-1].lineno}: " if frames else ""
    message = shown(exc, str)
    return f"{where}{type(exc).__name__}" + (f": {message}" if message else "")


def run_agent_code(
    code_object: Any,
    setup: Callable[[], dict[str, Any]],
    collect: Callable[[dict[str, Any]], Any],
    limits: Limits,
    unguarded: bool,
    layers_applied: bool = False,
) -> str:
    """Set up the names, apply the layers (unless this process already has them), run the code;
    the reply as JSON text."""
    printer = Printer(limits.output_chars)
    error = None
    namespace: dict[str, Any] = {}
    plain_output = io.StringIO()  # what unguarded test code prints with the real print()
    try:
        if unguarded:
            import builtins

            namespace = {"__builtins__": builtins, **setup()}
            if not layers_applied:
                apply_kernel_layers()
        else:
            namespace = restricted_globals(setup(), printer)
            if not layers_applied:  # a ready child of the worker did both before its run
                disarm_libraries()
                apply_kernel_layers()
            install_audit_hook()
        with contextlib.redirect_stdout(plain_output):
            exec(code_object, namespace)  # compiled by RestrictedPython from checked code (layer 1)
    except MemoryError:
        error = "MemoryError: the code used more memory than its budget"
    except RecursionError:
        error = "RecursionError: maximum recursion depth exceeded"
    except BaseException as exc:  # the agent's own exceptions, SystemExit included
        error = _agent_traceback(exc)
    output = printer.text() + plain_output.getvalue()[: limits.output_chars]
    if error is None and LAST_VALUE in namespace:
        value = namespace[LAST_VALUE]
        if value is not None:
            output += shown(value, repr, limits.output_chars)
    try:
        payload = collect(namespace)
    except BaseException as exc:
        payload, error = None, error or f"could not read the result: {type(exc).__name__}: {shown(exc, str)}"
    try:
        return json.dumps({"ok": error is None, "output": output, "error": error, "payload": payload})
    except (TypeError, ValueError) as exc:
        return json.dumps(
            {
                "ok": False,
                "output": output,
                "payload": None,
                "error": f"the result could not be sent back: {type(exc).__name__}: {exc}",
            }
        )


def prepare_parent() -> None:
    """In the process that forks (the worker, or ``run_code``'s caller): what children would
    otherwise each compute, read while everything is readable."""
    can_drop_to_nobody()
    kernel_read_only()
    reachable.allowlist()  # read now: the children cannot read this package
    kernel.prepare()
    disarm_plan()
    _arrow_on_the_system_allocator()


def _arrow_on_the_system_allocator() -> None:
    """Arrow's default pools (jemalloc, mimalloc) reserve address space in large chunks, so where
    pyarrow is installed (pandas then keeps strings in Arrow) a child's first DataFrame could pass
    the address-space budget without using the memory. The system allocator reserves what it uses."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    arrow = sys.modules.get("pyarrow")
    if arrow is not None:  # loaded already: its pool may have been chosen, so set it for what follows
        with contextlib.suppress(AttributeError, NotImplementedError):
            arrow.set_memory_pool(arrow.system_memory_pool())
