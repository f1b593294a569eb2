"""The clean worker's side of the sandbox: what the fork server loads, and its children's runs.

The fork server (``core.fork_server``) is a fresh interpreter that never holds a task. It loads
agent code's libraries and the modules it is given (``load_agent_libraries``: the env modules
whose code-side names its runs call, as the env that started it listed them), runs their
warm-ups, and forks children ahead of need. A ready child (``ready_child``) puts itself behind
the process layers (``confine``) and the library patches (``disarm``), then waits for one job
from the env: the code, already checked and compiled by the env (layer 1), and the
``module:function`` paths of the task's names and collect functions, which must be in the modules
the server was given or in this package (``import_dotted``). The names are proxies whose calls go
back to the env over the child's link; the reply goes back as JSON text.
"""

from __future__ import annotations

import base64
import contextlib
import importlib
import json
import marshal
import os
import socket
import sys
from collections.abc import Callable, Sequence
from typing import Any

from toolbench.core.sandbox.compile_time import AGENT_FILE
from toolbench.core.sandbox.confine import (
    apply_kernel_layers,
    clear_environment,
    close_inherited_descriptors,
    die_with_the_worker,
    drop_privileges,
    first_to_go_when_memory_runs_out,
    kernel_layers_applied,
    limit_cpu,
    limit_memory,
    mapped_pages,
    quiet_stdio,
    seed_libraries,
)
from toolbench.core.sandbox.disarm import disarm_libraries
from toolbench.core.sandbox.execute import run_agent_code
from toolbench.core.sandbox.terms import PACKAGE, CodeError, Limits
from toolbench.core.worker import Channel, ChannelClosed

#: The libraries agent code uses, imported once by the worker so that every child has them (a child
#: behind Landlock could not read them).
AGENT_LIBRARIES = ("numpy", "pandas", "gspread", "gspread_dataframe", "RestrictedPython")
#: Libraries kept out of agent code's world whether or not they are installed. Where pyarrow is,
#: pandas keeps strings in Arrow and builds arrays from dtypes such as ``"int64[pyarrow]"``: a large
#: native surface, and a world (the allowlist's walk, the code's output) that would differ from one
#: machine to the next.
WITHHELD_LIBRARIES = ("pyarrow",)


def load_agent_libraries(modules: Sequence[str] = ()) -> None:
    """Import agent code's libraries as the worker has them, then ``modules`` (the env modules whose
    code-side names the worker's runs call): in a fresh interpreter, before anything imported
    pandas, the withheld libraries then read as not installed. (A process that imported them
    already keeps them: ``run_code``'s in-process mode, for tests, runs in that world.)"""
    for name in WITHHELD_LIBRARIES:
        if name not in sys.modules:
            sys.modules[name] = None  # ``import`` raises ImportError, as for a library not installed
    for module in (*AGENT_LIBRARIES, *modules):
        importlib.import_module(module)


def run_warm_ups(name: str, modules: Sequence[str]) -> None:
    """Each of ``modules``' ``name`` function (``warm_worker``: run once before the worker forks, to
    fill what children would each fill on first use; ``warm_child``: run by a child while it waits).
    A warm-up saves time: without it runs are slower, not wrong."""
    for module_name in modules:
        warm_up = getattr(sys.modules.get(module_name), name, None)
        if warm_up is not None:
            with contextlib.suppress(Exception):
                warm_up()


def no_names(call: Callable[[str, Any], Any]) -> dict[str, Any]:
    """Names for code that is given nothing (``names="toolbench.core.sandbox:no_names"``)."""
    return {}


def result_variable(namespace: dict[str, Any]) -> Any:
    """What the code left in ``result`` (``collect="toolbench.core.sandbox:result_variable"``)."""
    return namespace.get("result")


def layers_applied(namespace: dict[str, Any]) -> list[str]:
    """The kernel layers the run had (``collect="toolbench.core.sandbox:layers_applied"``; doctor)."""
    return list(kernel_layers_applied)


def import_dotted(path: str, modules: Sequence[str]) -> Any:
    """The function a ``module:function`` path names, if its module is one of ``modules`` (the
    worker's) or this package; a job cannot name anything else."""
    module_name, _, attribute = path.partition(":")
    if module_name not in (*modules, PACKAGE):
        raise ValueError(f"{module_name} is not a module of agent-code names")
    return getattr(sys.modules[module_name], attribute)


class RemoteError(Exception):
    """What the env answered a proxy call with, raised in the code as the named built-in type."""


_ERROR_TYPES = {"ValueError": ValueError, "KeyError": KeyError, "TypeError": TypeError, "RuntimeError": RuntimeError}


def ready_child(link: socket.socket, modules: Sequence[str]) -> None:
    """A child the worker forks ahead of need: it closes what it inherited, applies the kernel
    layers, then waits on ``link`` for its run's job (so a run does not wait for a fork). The
    worker hands the other end of ``link`` to the env, which sends the job straight to it.
    ``modules`` are the worker's (``load_agent_libraries``). Never returns."""
    close_inherited_descriptors(link.fileno())
    quiet_stdio()
    clear_environment()
    pages = mapped_pages()  # before Landlock closes /proc
    die_with_the_worker()
    first_to_go_when_memory_runs_out()
    drop_privileges()
    apply_kernel_layers()
    disarm_libraries()  # the same for every run: done while waiting, not on the step's path
    run_warm_ups("warm_child", modules)
    worker_child(link.detach(), pages, modules)  # the end of its link (the env or the worker gone) ends it


def worker_child(channel_fd: int, pages: int | None, modules: Sequence[str]) -> None:
    """A run in a ready child: read the job, build the names, run, reply; never returns."""
    channel = Channel(socket.socket(fileno=channel_fd))
    try:
        job = channel.receive()
    except (ChannelClosed, OSError):
        os._exit(0)  # no run came: the env (or the worker, before handing the link on) has gone
    limits = Limits(**job["limits"])
    limit_memory(limits.memory_mb, pages)
    limit_cpu(limits.seconds)
    seed_libraries(int(job["seed"]))

    def call(kind: str, payload: Any) -> Any:
        """One request to the env; its answer, or the env's refusal raised here."""
        channel.send({"type": "call", "kind": kind, "payload": payload})
        answer = channel.receive()
        if "error" in answer:
            error = answer["error"]
            raise _ERROR_TYPES.get(error.get("type"), RemoteError)(error.get("message", ""))
        return answer["result"]

    unguarded = bool(job.get("unguarded"))
    try:
        code = job["code"]
        # Compiled and checked by the env (marshal of its code object): the child does not redo it.
        code_object = (
            compile(code, AGENT_FILE, "exec") if unguarded else marshal.loads(base64.b64decode(job["compiled"]))
        )
        names = import_dotted(job["names"], modules)
        collect = import_dotted(job["collect"], modules)
        reply = run_agent_code(
            code_object,
            lambda: names(call, **job["names_args"]),
            lambda namespace: collect(namespace, **job["collect_args"]),
            limits,
            unguarded,
            layers_applied=True,
        )
    except (CodeError, SyntaxError) as exc:
        reply = json.dumps({"ok": False, "output": "", "error": str(exc), "payload": None})
    try:
        # The reply is JSON text already: framed as it is, so the env parses it once.
        channel.send_json_text('{"type": "done", "reply": ' + reply + "}")
    finally:
        os._exit(0)
