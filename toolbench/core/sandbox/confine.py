"""Layer 3 of the sandbox, the process: what the child running agent code can reach at all.

Before the code's first line the child closes every descriptor it inherited but its link, clears
its environment (no API keys), silences stdio, caps its address space, CPU time, descriptors and
priority, offers itself first to the OOM killer, and applies the kernel layers of
``core.kernel``: read-only libraries (``kernel_read_only``, never this package, whose fixtures
hold the answers), no network, no IPC or process of anyone else in reach, no new processes, no
tracing, an unprivileged uid. An audit hook (``install_audit_hook``) refuses file opens outside
the libraries, writes, sockets and subprocesses as a further check. The wall-clock budget is the
caller's (``worker.RunDeadline``, ``fork``).

This layer trusts nothing of the code: it holds even with the guards of layers 1 and 2 switched
off (``for_tests.UNGUARDED_FOR_TESTS``), which is how its tests run.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import stat
import sys
import sysconfig
from collections.abc import Callable
from typing import Any

from threadpoolctl import ThreadpoolController

from toolbench.core import kernel
from toolbench.core.worker import SINGLE_THREADED

# sys._getframe stays allowed: libraries call it to place their warnings, and the agent cannot
# spell it (leading underscore); whatever a frame exposes is still behind this hook.
_DENIED_EVENT_PREFIXES = (
    "os.",
    "shutil.",
    "subprocess.",
    "socket.",
    "ctypes.",
    "urllib.",
    "http.",
    "ftplib.",
    "smtplib.",
    "webbrowser.",
    "pty.",
    "glob.",
    "tempfile.",
    "sqlite3.",
    "fcntl.",
    "mmap.",
    "resource.",
    "winreg.",
    "msvcrt.",
    "_winapi.",
    "sys.settrace",
    "sys.setprofile",
    "sys.addaudithook",
    "gc.get_",
    "signal.",
)


@functools.cache
def _readable_roots() -> tuple[str, ...]:
    """Where libraries may lazily load their own files from: the standard library and site-packages.
    Not sys.path wholesale (it holds the working directory and the project), and never this package,
    whose fixtures hold the tasks' answers. Called first in the parent: sysconfig loads its data
    module lazily, which the child may no longer be able to read."""
    import site

    paths = {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths.update(p for p in site.getsitepackages() if os.path.isdir(p))
    return tuple(sorted(os.path.realpath(p) + os.sep for p in paths if p))


#: The toolbench package's folder (this file is toolbench/core/sandbox/confine.py): never readable by the code.
_PACKAGE_DIR = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir)) + os.sep


def _under(
    path: Any,
    roots: tuple[str, ...],
    realpath: Callable[[str], str] = os.path.realpath,
    fsdecode: Callable[[Any], str] = os.fsdecode,
) -> bool:
    # realpath and fsdecode are bound when this is defined: code that rebinds os.path.realpath
    # must not turn the audit hook's file check into "yes".
    if not isinstance(path, (str, bytes, os.PathLike)):
        return False  # a file descriptor or nothing: refuse
    try:
        real = realpath(fsdecode(path)) + os.sep
    except (OSError, ValueError):  # e.g. a relative path where the working directory is unreadable
        return False
    return real.startswith(roots) and not real.startswith(_PACKAGE_DIR)


def _readable_by_others(path: str) -> bool:
    """Whether a user with no relation to the owner can reach and list ``path``: every folder on
    the way must be searchable by others (a Python under /root/.pyenv is not)."""
    try:
        current = os.path.realpath(path)
        if not os.stat(current).st_mode & stat.S_IROTH:
            return False
        while True:
            if not os.stat(current).st_mode & stat.S_IXOTH:
                return False
            parent = os.path.dirname(current)
            if parent == current:
                return True
            current = parent
    except OSError:
        return False


@functools.cache
def can_drop_to_nobody() -> bool:
    """Dropping root is only safe for the run when the unprivileged user can still import the
    libraries the code uses lazily; otherwise every late import would fail."""
    return all(_readable_by_others(root) for root in _readable_roots())


def install_audit_hook() -> None:
    # Everything the hook uses is bound here, not looked up in the module at call time: rebinding
    # the module's names must not switch the hook off.
    roots, under, denied_prefixes = _readable_roots(), _under, _DENIED_EVENT_PREFIXES
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = args[0], args[1], args[2] if len(args) > 2 else None
            writing = isinstance(mode, str) and any(c in mode for c in "wax+")
            if isinstance(flags, int):  # os.open: the mode is None and the flags say it all
                writing = writing or bool(flags & write_flags)
            if writing or not under(path, roots):
                raise PermissionError(
                    f"file access is not allowed here: {os.fsdecode(path)!r}"
                    if isinstance(path, (str, bytes))
                    else "file access is not allowed here"
                )
        elif event in ("os.listdir", "os.scandir") and under(args[0], roots):
            return  # the import system lists package folders when a library loads a submodule lazily
        elif event.startswith(denied_prefixes):
            raise PermissionError(f"not allowed here: {event}")

    sys.addaudithook(hook)


def mapped_pages() -> int | None:
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def limit_memory(extra_mb: int, pages: int | None = None) -> None:
    """Cap the address space at what is mapped now (or at ``pages``, counted earlier) plus ``extra_mb``."""
    try:
        import resource

        pages = pages if pages is not None else mapped_pages()
        if pages is None:
            return
        ceiling = pages * os.sysconf("SC_PAGE_SIZE") + extra_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (ceiling, ceiling))
    except (ImportError, OSError, ValueError):
        pass  # not Linux: the wall-clock budget still applies


def close_inherited_descriptors(keep: int) -> None:
    """Close every descriptor but stdio and the reply pipe: nothing else the parent holds (sockets,
    a vector env's pipes, log files) may be reachable from agent code."""
    try:
        import resource

        highest = min(resource.getrlimit(resource.RLIMIT_NOFILE)[0], 65536)
    except (ImportError, ValueError, OSError):
        highest = 4096
    os.closerange(3, keep)
    os.closerange(keep + 1, highest)


def clear_environment() -> None:
    """Nothing of the env's environment (API keys, tokens) for the code; only the settings that keep
    a native library loaded later (scipy's BLAS) to one thread."""
    os.environ.clear()
    os.environ.update(SINGLE_THREADED)


def quiet_stdio() -> None:
    """The code must not read the parent's stdin or write into its stdout (e.g. a --json report)."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)


#: Descriptors a child may hold: a handful is all a run uses, and each pipe holds kernel memory
#: that its address-space budget does not count.
MAX_DESCRIPTORS = 256


def first_to_go_when_memory_runs_out() -> None:
    """The kernel's OOM killer takes this child before anything else of the machine's (a process may
    raise its own score without privileges)."""
    with contextlib.suppress(OSError), open("/proc/self/oom_score_adj", "w", encoding="ascii") as handle:
        handle.write("1000")


def drop_privileges() -> None:
    """No new processes: RLIMIT_NPROC = 0 stops fork for an unprivileged user (seccomp, applied
    later, stops it for root too). At most MAX_DESCRIPTORS descriptors, and no core dump for the
    host to keep. No raising its own priority again once the env has lowered it (RLIMIT_NICE 0).
    Relative paths never name the user's working directory."""
    try:
        import resource

        os.chdir("/")
        for limit, value in (
            (resource.RLIMIT_NPROC, 0),
            (resource.RLIMIT_NOFILE, MAX_DESCRIPTORS),
            (resource.RLIMIT_CORE, 0),
            (resource.RLIMIT_NICE, 0),
        ):
            with contextlib.suppress(ValueError, OSError):  # one refused limit leaves the others
                resource.setrlimit(limit, (value, value))
    except (ImportError, OSError, AttributeError):
        pass  # not POSIX: the other layers remain


def apply_kernel_layers() -> None:
    """The kernel boundaries (``core.kernel``): read-only file system beneath the standard library,
    site-packages and the system's shared libraries; no network, no IPC shared with other
    processes, no new processes or programs, no tracing, no signals outside; ``nobody`` (with
    the right to read the libraries where it could not otherwise). Applied before the first
    line of agent code."""
    applied = kernel.apply(kernel.Plan(read_only=kernel_read_only(), needs_read_capability=not can_drop_to_nobody()))
    kernel_layers_applied[:] = applied.layers
    kernel.forget()


_SYSTEM_LIBRARIES = ("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/share/zoneinfo", "/etc/ld.so.cache")
kernel_layers_applied: list[str] = []  # in a child: the layers it runs under (for tests and doctor)


@functools.cache
def kernel_read_only() -> tuple[str, ...]:
    """What the code may read: the Python installation's libraries and the system's shared ones;
    not the working directory, not this package (its fixtures hold the answers), nothing writable."""
    roots = tuple(root.rstrip(os.sep) for root in _readable_roots()) + _SYSTEM_LIBRARIES
    return tuple(path for root in roots for path in paths_except(root, _PACKAGE_DIR.rstrip(os.sep)))


def paths_except(root: str, excluded: str) -> list[str]:
    """Paths whose trees cover ``root`` but not ``excluded``: ``[root]`` when ``excluded`` is not in it,
    else the entries of each folder on the way down except the one leading to ``excluded``.
    Landlock only grants, so a package installed in site-packages is kept out this way."""
    if not excluded.startswith(root + os.sep):
        return [root]
    paths, current = [], root
    for part in os.path.relpath(excluded, root).split(os.sep):
        try:
            entries = sorted(os.listdir(current))
        except OSError:
            return paths
        paths.extend(os.path.join(current, entry) for entry in entries if entry != part)
        current = os.path.join(current, part)
    return paths


@functools.cache
def thread_pools() -> ThreadpoolController | None:
    """The native thread pools (BLAS, OpenMP), found once in the parent: finding them takes tens of
    milliseconds, which every run would otherwise pay again."""
    try:
        return ThreadpoolController()
    except Exception:  # noqa: BLE001 - it inspects native libraries; the budgets apply regardless
        return None


def single_threaded_libraries() -> None:
    """One BLAS/OpenMP thread (in ``run_code``'s fork; the worker starts with one): the child runs as
    an ordinary user, where RLIMIT_NPROC = 0 holds and OpenBLAS would wait until the deadline for
    a thread it cannot start."""
    pools = thread_pools()
    if pools is not None:
        with contextlib.suppress(Exception):
            pools.limit(limits=1)


def seed_libraries(seed: int) -> None:
    """numpy's global generator (np.random.*, DataFrame.sample) would otherwise carry the parent's
    entropy-seeded state into every run."""
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % 2**32)


def die_with_the_worker() -> None:
    """SIGKILL when the fork server exits (it exits when the env's process goes): a child the env
    could not kill (the env was killed itself) does not live on."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
        # The server was already gone. In a PID namespace of its own the child sees no parent (0);
        # there the end of file on its link ends it (the worker, gone, never handed the link on).
        if os.getppid() == 1:
            os._exit(0)


def limit_cpu(seconds: float) -> None:
    """A CPU-time ceiling as a backstop to the caller's wall-clock deadline."""
    with contextlib.suppress(ImportError, OSError, ValueError):
        import resource

        limit = int(seconds) + 2
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1))
