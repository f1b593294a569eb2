"""Run untrusted agent Python with no imports, no dunders, no files, no network, and budgets.

Some tasks' actions are real code (gspread/pandas programs for Google Sheets, Code-as-Policies
programs for Tabletop). Such code runs here, behind layers that each stop a class of escape, one
module each:

1. Compile time (``compile_time``): RestrictedPython rejects names and attributes that start with
   ``_``; our own pass rejects ``import``, ``class`` and assignments to an array's layout, and
   bounds the syntax tree.
2. Names (``guards``, ``disarm``): the code sees only safe builtins and the names the task
   provides; an attribute of anything but a plain value is read only when its owner and name are
   on the reviewed allowlist (``core.surface``); items, iterated values and writes are checked
   too; and in the child, the libraries' own lookups by name and the internals that trust what
   they were given are patched (``disarm``).
3. Process (``confine``): the child's inherited descriptors, environment, address space, CPU time
   and priority are bounded, the kernel layers of ``core.kernel`` are applied before the code's
   first line (read-only libraries, no network, no IPC or process of anyone else in reach, no new
   processes, no tracing, an unprivileged uid), and an audit hook refuses file opens outside the
   libraries, writes, sockets and subprocesses as a further check.
4. Memory (``clean_worker``, ``env_side``): ``run_in_worker`` (what the envs use) runs the code in
   a child of the clean worker (``core.worker``, ``core.fork_server``), a fork server that never
   held a task, so the code's memory holds no answer; its names are proxies whose calls the env
   serves. ``run_code`` (``fork``) runs it in a fork of the caller, for tests of the guards with
   names built in-process. The budget is wall-clock time, enforced by the caller; a run that
   keeps a core busy is moved to the lowest priority (``worker.RunDeadline``), so a session whose
   code spins costs others little.

``execute`` runs the code in the child behind all of them; ``terms`` holds what every layer
shares (the budgets, the result, the reply's checks). The child sends back what the task's
collect function returns, the printed output and the error, as JSON: the caller never unpickles
anything the child wrote, checks the reply's size and counts its items before parsing it, and
treats anything malformed as an error. The switches that turn the guards off for the layers'
own tests are in ``for_tests``.
"""

from __future__ import annotations

from toolbench.core.sandbox.clean_worker import (
    AGENT_LIBRARIES,
    WITHHELD_LIBRARIES,
    RemoteError,
    import_dotted,
    layers_applied,
    load_agent_libraries,
    no_names,
    ready_child,
    result_variable,
    run_warm_ups,
    worker_child,
)
from toolbench.core.sandbox.compile_time import (
    AGENT_FILE,
    LAST_VALUE,
    LAYOUT_ATTRIBUTES,
    MAX_CODE_CHARS,
    MAX_DEPTH,
    MAX_LOOKUP_COST,
    MAX_NODES,
    compile_code,
)
from toolbench.core.sandbox.confine import MAX_DESCRIPTORS, _readable_by_others, paths_except
from toolbench.core.sandbox.disarm import DISARMED
from toolbench.core.sandbox.env_side import CACHED_CODE_CHARS, SLOW_LANE_PAUSE, run_in_worker, start_worker
from toolbench.core.sandbox.execute import prepare_parent
from toolbench.core.sandbox.fork import run_code
from toolbench.core.sandbox.guards import (
    COUNT_BOUND,
    DENIED_NAMES,
    DENIED_TYPE_MODULES,
    ITEM_WRITABLE,
    LIBRARY_IMPORT_ROOTS,
    SETTABLE_ATTRIBUTES,
    _library_import,
    guarded_getattr,
    guarded_getitem,
    restricted_globals,
)
from toolbench.core.sandbox.terms import (
    MAX_ERROR_CHARS,
    MAX_REPLY_BYTES,
    CodeError,
    Limits,
    SandboxResult,
    budgets,
    describe_limits,
)
from toolbench.core.worker import CpuAccount

__all__ = [
    "AGENT_FILE",
    "AGENT_LIBRARIES",
    "CACHED_CODE_CHARS",
    "COUNT_BOUND",
    "DENIED_NAMES",
    "DENIED_TYPE_MODULES",
    "DISARMED",
    "ITEM_WRITABLE",
    "LAST_VALUE",
    "LAYOUT_ATTRIBUTES",
    "LIBRARY_IMPORT_ROOTS",
    "MAX_CODE_CHARS",
    "MAX_DEPTH",
    "MAX_DESCRIPTORS",
    "MAX_ERROR_CHARS",
    "MAX_LOOKUP_COST",
    "MAX_NODES",
    "MAX_REPLY_BYTES",
    "SETTABLE_ATTRIBUTES",
    "SLOW_LANE_PAUSE",
    "WITHHELD_LIBRARIES",
    "CodeError",
    "CpuAccount",
    "Limits",
    "RemoteError",
    "SandboxResult",
    "_library_import",
    "_readable_by_others",
    "budgets",
    "compile_code",
    "describe_limits",
    "guarded_getattr",
    "guarded_getitem",
    "import_dotted",
    "layers_applied",
    "load_agent_libraries",
    "no_names",
    "paths_except",
    "prepare_parent",
    "ready_child",
    "restricted_globals",
    "result_variable",
    "run_code",
    "run_in_worker",
    "run_warm_ups",
    "start_worker",
    "worker_child",
]
