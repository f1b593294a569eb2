"""The env's side of the clean worker for agent code, and the channel both sides speak.

The env's process holds tasks, references and expected states; a fork of it would carry them
into the code's memory. So agent code runs in children of a separate server process
(``core.fork_server``), started from a fresh interpreter before any task reaches it and never
sent one. The server forks children ahead of need and hands the env one end of each child's
socket pair; for a run the env takes a waiting child and sends its job (the code and the names it
may use) on that socket, and the child runs the code. The names are proxies: each call goes back
over the socket to the env, whose backend answers it, so the world changes once, in the env's
process, and nothing is replayed.

Messages are JSON with a 4-byte length in front; the env refuses a message longer than
``MAX_MESSAGE`` before reading it and counts its items before parsing it (see ``sandbox``).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from typing import Any

MAX_MESSAGE = 8 * 2**20
MAX_ITEMS = 2_000_000
#: The length in front of each message, and the server's answer to a request (a child's pid).
LENGTH = struct.Struct(">I")
# Settings the interpreter and numpy read at start-up; anything else of the env's environment
# (API keys, tokens) stays out of the worker.
_PASSED_ENVIRONMENT = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "LANG", "LC_ALL", "TZ")
#: One thread in numpy's and OpenMP's pools (and in any BLAS a library loads later, scipy's):
#: children may not start threads where RLIMIT_NPROC binds, and one thread keeps results the same
#: on every machine.
SINGLE_THREADED = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


class WorkerUnavailable(RuntimeError):
    """The fork server could not give a child for a run."""


class ChannelClosed(EOFError):
    """The other side closed the socket (the child exited, or was killed)."""


class ChannelTimeout(TimeoutError):
    """Nothing came before the deadline."""


class MessageRefused(ValueError):
    """A message too long, too big to parse, or not JSON."""


def too_many_items(data: bytes | str, limit: int = MAX_ITEMS) -> bool:
    """Whether parsing ``data`` as JSON could build more than ``limit`` values: its ``[``, ``{``, ``,``
    and ``:`` counted (at the speed of a memory scan), an upper bound whatever the strings hold."""
    marks = (b"[", b"{", b",", b":") if isinstance(data, bytes) else ("[", "{", ",", ":")
    return sum(data.count(mark) for mark in marks) > limit  # type: ignore[arg-type]


#: What a step may take beyond its budget: ending the child and answering.
GRACE = 0.5
#: A run whose session has used this much CPU lately (its child's, and the env's serving it) goes on
#: at the lowest priority: a session whose code spins costs the others little beyond its share.
DEMOTE_AFTER = 0.25
#: How often a run not yet demoted is looked at (its child's CPU time read).
LOOK_EVERY = 0.05
#: The nice value of a demoted run's child (the lowest priority a process can have).
DEMOTED_NICE = 19


class CpuAccount:
    """The CPU time one session's runs used lately: seconds charged, halving every ``half_life``
    seconds. An env keeps one for its lifetime (a served session's), so a session whose last runs
    spun starts its next one demoted, while a session of light steps never is."""

    def __init__(self, half_life: float = 10.0) -> None:
        self.half_life = half_life
        self._charged = 0.0
        self._at = time.monotonic()

    def recent(self, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        return self._charged * 0.5 ** (max(0.0, now - self._at) / self.half_life)

    def charge(self, seconds: float, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self._charged = self.recent(now) + max(0.0, seconds)
        self._at = now


class MemoryWatch:
    """The memory the runs of this process use at once, and the capacity they share: each child's
    own budget (RLIMIT_AS) bounds only itself, so many sessions at once could together exhaust the
    machine. A run that has lasted ``MEMORY_LOOK_AFTER`` seconds reports its child's proportional set
    size (shared pages split among their sharers) every ``MEMORY_LOOK_EVERY`` seconds; when the
    reported total passes the capacity, the run using the most is ended (a short run is never
    looked at, nor waits for anyone). The capacity is ``TOOLBENCH_SANDBOX_MEMORY_MB`` or 80% of the
    machine's memory."""

    def __init__(self, capacity_mb: int) -> None:
        self.capacity_mb = capacity_mb
        self._used: dict[int, int] = {}  # pid -> bytes
        self._lock = threading.Lock()

    def report(self, pid: int, used: int) -> bool:
        """Record a run's use; True when the runs' total is over the capacity and this run uses the most."""
        with self._lock:
            self._used[pid] = used
            over = sum(self._used.values()) > self.capacity_mb * 2**20
            return over and used >= max(self._used.values())

    def forget(self, pid: int) -> None:
        with self._lock:
            self._used.pop(pid, None)


def _memory_capacity_mb() -> int:
    given = os.environ.get("TOOLBENCH_SANDBOX_MEMORY_MB", "")
    if given.isdigit() and int(given) > 0:
        return int(given)
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            total_kb = next(int(line.split()[1]) for line in handle if line.startswith("MemTotal:"))
        return max(int(total_kb / 1024 * 0.8), 256)
    except (OSError, StopIteration, ValueError, IndexError):
        return 16 * 1024  # not Linux: a workstation's worth


MEMORY = MemoryWatch(_memory_capacity_mb())
MEMORY_LOOK_AFTER = 0.5
MEMORY_LOOK_EVERY = 0.5


def proportional_set_size(pid: int) -> int | None:
    """A process's proportional set size in bytes (``/proc/PID/smaps_rollup``), None where unknown."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as handle:
            for line in handle:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


class RunDeadline:
    """When a run's time is up: ``seconds`` of wall-clock time after it began, however the child
    spends them (running, blocked, waiting for a core) and however long the env takes to serve
    its calls. Meanwhile it watches the child's CPU time (and the env's serving time, added to
    ``served``): once the session's recent use (``account``) and this run's pass ``DEMOTE_AFTER``,
    the child is moved to the lowest priority (``demoted``). Without ``/proc`` only the serving counts."""

    def __init__(self, seconds: float, pid: int | None = None, account: CpuAccount | None = None) -> None:
        self.seconds = seconds
        self.pid = pid
        self.account = account if account is not None else CpuAccount()
        self.served = 0.0  # the env's time answering the child's calls
        self.started = time.monotonic()
        self.ends = self.started + seconds
        self._ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self._before = self._child_cpu()  # what the child spent getting ready is not the run's
        self.demoted = False
        self.over_memory: str | None = None  # why the run was ended for the runs' shared memory
        self._next_look = self.started
        self._next_memory_look = self.started + MEMORY_LOOK_AFTER
        self._look()

    def _child_cpu(self) -> float | None:
        if self.pid is None:
            return None
        try:
            with open(f"/proc/{self.pid}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / self._ticks  # utime and stime
        except (OSError, ValueError, IndexError):
            return None

    def used(self) -> float:
        """The child's CPU time in this run (where known) plus the env's serving time."""
        spent = self._child_cpu()
        child = spent - self._before if spent is not None and self._before is not None else 0.0
        return max(0.0, child) + self.served

    def _look(self) -> None:
        now = time.monotonic()
        self._next_look = now + LOOK_EVERY
        if not self.demoted and self.account.recent(now) + self.used() > DEMOTE_AFTER:
            self.demote()

    def demote(self) -> None:
        """The child at the lowest priority from now on: nice 19 and ``SCHED_IDLE``, so any other
        runnable process of its scheduling group (the fork server, other sessions' children) takes
        the core from it at once; its own seccomp filter and RLIMIT_NICE 0 keep it there. Children
        stay in the fork server's session, hence in one scheduling group where the kernel groups by
        session (autogroup): a child in a group of its own would weigh as much as the env's whole
        process, whatever its nice value."""
        self.demoted = True
        if self.pid is None:
            return
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, self.pid, DEMOTED_NICE)
        with contextlib.suppress(OSError, AttributeError):  # AttributeError: not Linux
            os.sched_setscheduler(self.pid, os.SCHED_IDLE, os.sched_param(0))

    def _look_at_memory(self, now: float) -> None:
        self._next_memory_look = now + MEMORY_LOOK_EVERY
        used = proportional_set_size(self.pid) if self.pid is not None else None
        if used is not None and MEMORY.report(self.pid, used):
            self.over_memory = (
                f"the sandbox's memory for runs at once ({MEMORY.capacity_mb} MB) ran out, and this run used "
                f"the most of it ({used / 2**20:.0f} MB): it was ended"
            )

    def remaining(self) -> float:
        """Seconds to wait before looking again; 0 once the run's time is up (or its memory is)."""
        now = time.monotonic()
        if now >= self.ends or self.over_memory:
            return 0.0
        if not self.demoted and now >= self._next_look:
            self._look()
        if now >= self._next_memory_look:
            self._look_at_memory(now)
            if self.over_memory:
                return 0.0
        wake = min(self.ends, self._next_memory_look, self.ends if self.demoted else self._next_look)
        return max(wake - now, 1e-3)

    def finish(self) -> None:
        """Charge the run's use to the session's account (called once, when the run ends)."""
        self.account.charge(self.used())
        if self.pid is not None:
            MEMORY.forget(self.pid)


def _wait_until_ready(
    readable: list[socket.socket], writable: list[socket.socket], deadline: float | RunDeadline
) -> None:
    """Wait until a socket is ready; ``ChannelTimeout`` once the deadline has passed."""
    while True:
        remaining = deadline.remaining() if isinstance(deadline, RunDeadline) else deadline - time.monotonic()
        if remaining <= 0:
            raise ChannelTimeout()
        if any(select.select(readable, writable, [], remaining)[:2]):
            return


class Channel:
    """Length-prefixed JSON messages over a stream socket. A deadline is a ``time.monotonic()``
    time or a ``RunDeadline``."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def send(self, message: Any, deadline: float | RunDeadline | None = None) -> None:
        """Send one message; with a deadline, a peer that stops reading cannot hold the sender."""
        self.send_json_text(json.dumps(message, ensure_ascii=False, allow_nan=False), deadline)

    def send_json_text(self, text: str, deadline: float | RunDeadline | None = None) -> None:
        """Send a message already encoded as JSON text."""
        body = text.encode("utf-8")
        data = LENGTH.pack(len(body)) + body
        if deadline is None:
            self.sock.sendall(data)
            return
        view = memoryview(data)
        while view:
            _wait_until_ready([], [self.sock], deadline)
            try:  # never blocking: a blocking send waits until the whole message is taken
                view = view[self.sock.send(view, socket.MSG_DONTWAIT) :]
            except BlockingIOError:
                continue

    def _read(self, size: int, deadline: float | RunDeadline | None) -> bytes:
        chunks, left = [], size
        while left:
            if deadline is not None:
                _wait_until_ready([self.sock], [], deadline)
            chunk = self.sock.recv(min(left, 1 << 20))
            if not chunk:
                raise ChannelClosed()
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def receive(self, deadline: float | RunDeadline | None = None, limit: int = MAX_MESSAGE) -> Any:
        """The next message; its length is checked before its body is read, its items before it is parsed."""
        (size,) = LENGTH.unpack(self._read(LENGTH.size, deadline))
        if size > limit:
            raise MessageRefused(f"a message of {size} bytes (the limit is {limit})")
        data = self._read(size, deadline)
        if too_many_items(data):
            raise MessageRefused("a message with too many items")
        try:
            return json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise MessageRefused(f"a message that is not JSON ({type(exc).__name__})") from None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


# ----------------------------------------------------------------------------- the env's side
class WorkerServer:
    """The env process's handle on its fork server (one per process; started on first use).
    ``modules`` are what the server imports before it forks, besides agent code's libraries: the
    modules whose code-side names its children's runs call (the caller's list)."""

    _instance: WorkerServer | None = None
    _lock = threading.Lock()

    def __init__(self, modules: tuple[str, ...] = ()) -> None:
        self.modules = modules
        # Packets: each child the server offers (its pid, its link and pidfd) arrives whole.
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        environment = {name: os.environ[name] for name in _PASSED_ENVIRONMENT if name in os.environ}
        # One thread in numpy's and OpenMP's pools: children may not start threads where
        # RLIMIT_NPROC binds, and one thread keeps results the same on every machine.
        environment.update(SINGLE_THREADED, PYTHONHASHSEED="0")
        environment["PATH"] = "/usr/bin:/bin"
        self.pid_owner = os.getpid()
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-m", "toolbench.core.fork_server", str(theirs.fileno()), *modules],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env=environment,
            start_new_session=True,
        )
        theirs.close()
        self.control = ours
        self.ready: list[tuple[int, int | None, socket.socket]] = []  # children offered, not yet taken
        try:
            self.ready.append(self._receive_offer(timeout=120))
        except WorkerUnavailable:
            self.close()
            raise RuntimeError("the worker for agent code did not start") from None

    @classmethod
    def get(cls, modules: Iterable[str] = ()) -> WorkerServer:
        """This process's server, started (again) if it is missing, belongs to a parent process, or
        has not imported one of ``modules``; a new server imports the old one's modules too."""
        with cls._lock:
            server = cls._instance
            wanted = tuple(dict.fromkeys((*(server.modules if server is not None else ()), *modules)))
            if server is not None and server.pid_owner == os.getpid():
                if server.process.poll() is not None:
                    server.close()  # it has stopped: the descriptors of the children it offered go too
                    server = None
                elif server.modules != wanted:
                    # A run whose names it has not imported: its runs in progress end with it (one
                    # process's callers pass one list, so that this happens before any run).
                    server.close()
                    server = None
            if server is None or server.pid_owner != os.getpid():
                cls._instance = server = WorkerServer(wanted)
            return server

    def fork(self, ends: float | None = None) -> tuple[RunHandle, Channel]:
        """A new child for one run: a handle to kill it by, and the channel to it. The server has
        offered it already (forked ahead, behind its kernel layers): taking it is no round trip.
        ``ends`` (``time.monotonic()``) bounds the wait when none is ready: ``WorkerUnavailable``."""
        ends = time.monotonic() + 30 if ends is None else ends
        if not self._lock.acquire(timeout=max(ends - time.monotonic(), 0.001)):  # envs in threads share it
            raise WorkerUnavailable("no child was free within the run's time")
        try:
            while True:
                while select.select([self.control], [], [], 0)[0]:  # offers that came meanwhile
                    self.ready.append(self._receive_offer(timeout=30))
                if self.ready:
                    pid, pidfd, link = self.ready.pop(0)
                else:
                    pid, pidfd, link = self._receive_offer(timeout=max(ends - time.monotonic(), 0.001))
                child, channel = RunHandle(pid, pidfd), Channel(link)
                try:
                    self.control.send(b"T")  # a replacement, forked while this run goes on
                except OSError:
                    child.kill()
                    channel.close()
                    raise WorkerUnavailable("the worker for agent code stopped") from None
                # A child waiting for its job never writes: a readable link is one that ended.
                if not select.select([link], [], [], 0)[0]:
                    return child, channel
                child.kill()
                channel.close()
        finally:
            self._lock.release()

    def _receive_offer(self, timeout: float) -> tuple[int, int | None, socket.socket]:
        """The next child the server offers: its pid, a pidfd where the kernel has them, its link."""
        self.control.settimeout(timeout)
        try:
            data, fds, _, _ = socket.recv_fds(self.control, LENGTH.size, 2)
        except TimeoutError:
            raise WorkerUnavailable("no child was free within the run's time") from None
        except OSError:
            raise WorkerUnavailable("the worker for agent code stopped") from None
        pid = LENGTH.unpack(data)[0] if len(data) == LENGTH.size else 0
        if pid <= 0 or not fds:
            for fd in fds:
                os.close(fd)
            raise WorkerUnavailable("the worker for agent code stopped")
        return pid, (fds[1] if len(fds) > 1 else None), socket.socket(fileno=fds[0])

    def close(self) -> None:
        for pid, pidfd, link in self.ready:
            RunHandle(pid, pidfd).kill()
            link.close()
        self.ready.clear()
        with contextlib.suppress(OSError):
            self.control.close()
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)


class RunHandle:
    """One run's child: its pid, and a pidfd where the kernel has them."""

    def __init__(self, pid: int, pidfd: int | None) -> None:
        self.pid, self.pidfd = pid, pidfd

    def kill(self) -> None:
        """Kill the child and, while it was still there, its process group (it leads its own
        session; seccomp stops it from starting processes, this is for machines without seccomp)."""
        if self.pidfd is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGKILL)
            return
        try:
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            alive = True
        except (ProcessLookupError, PermissionError):
            alive = False
        finally:
            os.close(self.pidfd)
            self.pidfd = None
        if alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
