"""The sandbox's kernel layers, tested with the Python-level guards assumed fallen.

Through the test-only hook ``sandbox.for_tests.UNGUARDED_FOR_TESTS`` the child runs plain Python with
the real builtins, ``import`` and ``open``: whatever these tests show the code cannot do, it cannot do because
of what the process can reach (Landlock, seccomp, no_new_privs, the uid, the namespaces, the limits),
not because of RestrictedPython or the attribute guards. A test whose layer this machine lacks
skips and says which.
"""

import contextlib
import ctypes
import json
import mmap
import os
import random
import signal
import struct
import subprocess
import time

import pytest

import toolbench
from toolbench.core import kernel, sandbox, worker
from toolbench.core.sandbox import Limits, run_code, run_in_worker

LAYERS = kernel.detect()


def need(layer):
    state = LAYERS.get(layer, "unknown")
    if not state.startswith("available"):
        pytest.skip(f"this machine has no {layer}: {state}")


def need_any(*layers):
    """Skip unless one of ``layers`` is here: each alone keeps what the test checks."""
    if not any(LAYERS.get(layer, "").startswith("available") for layer in layers):
        pytest.skip("this machine has none of: " + "; ".join(f"{layer} ({LAYERS.get(layer)})" for layer in layers))


@pytest.fixture
def unguarded(monkeypatch):
    monkeypatch.setattr(sandbox.for_tests, "UNGUARDED_FOR_TESTS", True)


@pytest.fixture(params=["worker", "fork"])
def probe(request):
    """Run code unguarded, in the clean worker (what the envs use) or in a fork of this process
    (``run_code``); the code leaves what it found in ``result``."""

    def run(code, seconds=20.0, memory_mb=512):
        limits = Limits(seconds=seconds, memory_mb=memory_mb)
        if request.param == "fork":
            return run_code(code, dict, lambda ns: ns.get("result"), limits)
        names, collect = "toolbench.core.sandbox:no_names", "toolbench.core.sandbox:result_variable"
        return run_in_worker(code, names, collect, serve=lambda kind, payload: None, limits=limits)

    return run


TRY = """
def attempt(what, action):
    try:
        action()
    except BaseException as exc:
        result[what] = "refused: " + type(exc).__name__
    else:
        result[what] = "ALLOWED"
result = {}
"""


def refused(outcome):
    assert outcome.ok, outcome.error
    allowed = [what for what, found in outcome.payload.items() if not found.startswith("refused")]
    assert not allowed, f"allowed with the guards gone: {allowed}"


def test_the_hook_really_runs_plain_python(probe, unguarded):
    outcome = probe("import os, builtins\nresult = {'open': builtins.open is open, 'uid': os.getuid()}")
    assert outcome.ok and outcome.payload["open"] is True
    if os.geteuid() == 0 and LAYERS["landlock"].startswith("available"):
        assert outcome.payload["uid"] != 0  # root drops to nobody, whatever it could read


def test_no_file_outside_the_libraries_can_be_read_or_written(probe, unguarded, tmp_path):
    need("landlock")
    fixture = os.path.join(os.path.dirname(toolbench.__file__), "fixtures", "sheets", "test.jsonl")
    assert os.path.isfile(fixture)  # a real answer file: refused because of the layers, not because it is absent
    outcome = probe(
        TRY
        + f"""
import os, sysconfig
attempt("read /etc/passwd", lambda: open("/etc/passwd").read())
attempt("read the task answers", lambda: open({fixture!r}).read())
attempt("list the tests' folder", lambda: os.listdir({str(tmp_path)!r}))
attempt("write a file", lambda: open({str(tmp_path / "x")!r}, "w").write("x"))
attempt("write into site-packages", lambda: open(os.path.join(sysconfig.get_paths()["purelib"], "x.py"), "w"))
attempt("make a folder", lambda: os.mkdir({str(tmp_path / "made")!r}))
attempt("read the env's environment", lambda: open("/proc/%d/environ" % os.getppid()).read())
result["stdlib is readable"] = "refused: no" if not open(os.__file__).read(10) else "refused: yes, as it must be"
"""
    )
    refused(outcome)
    assert not (tmp_path / "x").exists() and not (tmp_path / "made").exists()


def test_a_package_installed_in_site_packages_stays_unreadable(tmp_path):
    """Installed with pip (not editable), this package and its fixtures sit inside site-packages,
    which the code may read: the Landlock rules cover site-packages around it."""
    need("landlock")
    site = tmp_path / "site-packages"
    for folder in ("toolbench/fixtures", "numpy", "toolbench_gym-0.1.dist-info"):
        (site / folder).mkdir(parents=True)
    (site / "toolbench/fixtures/test.jsonl").write_text("answers")
    (site / "numpy/__init__.py").write_text("library")
    (site / "six.py").write_text("module")
    rules = sandbox.paths_except(str(site), str(site / "toolbench"))
    assert sorted(os.path.basename(path) for path in rules) == ["numpy", "six.py", "toolbench_gym-0.1.dist-info"]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # Landlock binds for good: only in a child
        try:
            kernel._no_new_privs()  # what lets a process without CAP_SYS_ADMIN restrict itself
            kernel._landlock(tuple(rules), kernel.landlock_abi())
            found = []
            for path in ("numpy/__init__.py", "six.py", "toolbench/fixtures/test.jsonl"):
                try:
                    found.append((site / path).read_text())
                except OSError:
                    found.append("refused")
            os.write(write, ",".join(found).encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    assert os.read(read, 1000).decode() == "library,module,refused"
    assert sandbox.paths_except(str(site), "/elsewhere/toolbench") == [str(site)]


def test_the_folder_kept_from_the_code_is_this_package_s():
    """What the kernel layers and the audit hook keep out is the toolbench package itself (its
    fixtures hold the answers), wherever the module that computes it sits in the package."""
    from toolbench.core.sandbox import confine

    package = os.path.realpath(os.path.dirname(toolbench.__file__))
    assert package + os.sep == confine._PACKAGE_DIR
    assert not confine._under(os.path.join(package, "fixtures", "sheets", "test.jsonl"), (os.sep,))
    assert all(not path.startswith(package + os.sep) and path != package for path in confine.kernel_read_only())


def test_no_process_or_program_can_be_started(probe, unguarded, tmp_path):
    need("seccomp")
    marker = tmp_path / "ran"
    outcome = probe(
        TRY
        + f"""
import os, subprocess, _posixsubprocess
attempt("fork", os.fork)
attempt("subprocess", lambda: subprocess.run(["/bin/sh", "-c", "touch {marker}"]))
attempt("exec", lambda: os.execv("/bin/sh", ["sh", "-c", "touch {marker}"]))
attempt("posix_spawn", lambda: os.posix_spawn("/bin/sh", ["sh", "-c", "touch {marker}"], {{}}))
attempt("fork_exec", lambda: subprocess.Popen(["/bin/true"]))
"""
    )
    refused(outcome)
    assert not marker.exists()


def test_no_socket_can_be_opened(probe, unguarded):
    need("seccomp")
    outcome = probe(
        TRY
        + """
import socket
attempt("tcp", lambda: socket.create_connection(("127.0.0.1", 22), timeout=1))
attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
attempt("unix", lambda: socket.socket(socket.AF_UNIX))
attempt("socketpair", socket.socketpair)
"""
    )
    refused(outcome)


def test_the_env_process_cannot_be_signalled_traced_or_read(probe, unguarded):
    need("seccomp")
    need("landlock")
    parent = os.getpid()
    outcome = probe(
        TRY
        + f"""
import ctypes, os, signal
libc = ctypes.CDLL(None, use_errno=True)
def syscall_refused(number, *args):
    if libc.syscall(number, *args) != -1:
        raise AssertionError("allowed")
    raise PermissionError(ctypes.get_errno())
attempt("signal", lambda: os.kill({parent}, signal.SIGTERM))
attempt("signal the group", lambda: os.killpg(os.getpgid({parent}), 0))
attempt("read its memory", lambda: open("/proc/{parent}/mem", "rb").read(1))
attempt("read its maps", lambda: open("/proc/{parent}/maps").read())
attempt("ptrace attach", lambda: syscall_refused(101, 16, {parent}, 0, 0))
attempt("process_vm_readv", lambda: syscall_refused(310, {parent}, 0, 0, 0, 0, 0))
"""
    )
    refused(outcome)


@pytest.fixture
def child_pids(monkeypatch):
    """The pids, as this process sees them, of the children runs are given (in a PID namespace of
    its own a child sees itself as 1)."""
    pids = []
    fork, handle = kernel.fork, worker.RunHandle.__init__

    def spied_fork():
        pid = fork()
        if pid:
            pids.append(pid)
        return pid

    def spied_handle(self, pid, pidfd):
        pids.append(pid)
        handle(self, pid, pidfd)

    monkeypatch.setattr(kernel, "fork", spied_fork)
    monkeypatch.setattr(worker.RunHandle, "__init__", spied_handle)
    return pids


def test_nothing_outlives_the_step(probe, unguarded, child_pids):
    need("seccomp")
    outcome = probe(
        """
import os, threading, time
try:
    threading.Thread(target=lambda: time.sleep(600), daemon=False).start()
except RuntimeError:
    pass  # as nobody, RLIMIT_NPROC = 0 refuses threads too
try:
    os.setsid()
except OSError:
    pass
result = "ran"
"""
    )
    assert outcome.payload == "ran" and len(child_pids) == 1
    pid = child_pids[0]
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_the_step_budgets_hold_against_plain_python(probe, unguarded):
    started = time.monotonic()
    outcome = probe("while True:\n    pass", seconds=2)
    assert outcome.timed_out and time.monotonic() - started < 10
    outcome = probe("x = bytearray(4 * 2**30)\nresult = len(x)", memory_mb=256)
    assert not outcome.ok and "MemoryError" in outcome.error


def test_a_forged_reply_costs_the_env_nothing(probe, unguarded):
    """The code writes its own 'reply' into every descriptor it has: a huge flat JSON array."""
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    outcome = probe(
        """
import os
forged = b"[" + b"[]," * (2 * 2**20) + b"[]]"
for fd in range(3, 64):
    try:
        os.write(fd, forged)
    except OSError:
        pass
os._exit(0)
"""
    )
    assert not outcome.ok and ("malformed" in outcome.error or "longer than allowed" in outcome.error)
    assert time.monotonic() - started < 10
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # kB: under 200 MB


# System V IPC and POSIX message queues through libc, run in a child's code and in this process alike.
IPC = """
import ctypes, os, struct

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = (ctypes.c_int, ctypes.c_void_p, ctypes.c_int)
libc.shmdt.argtypes = (ctypes.c_void_p,)
libc.shmget.argtypes = (ctypes.c_int, ctypes.c_size_t, ctypes.c_int)
CREATE, NO_WAIT, READ_ONLY, REMOVE, SET_VALUE, GET_VALUE = 0o1000, 0o4000, 0o10000, 0, 16, 12


def checked(value):
    if value is None or value == -1 or value == ctypes.c_void_p(-1).value:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return value


def make_shm(key, marker, size=4096):
    address = checked(libc.shmat(checked(libc.shmget(key, size, CREATE | 0o600)), None, 0))
    ctypes.memset(address, 1, size)
    ctypes.memmove(address, marker, len(marker))
    libc.shmdt(address)


def make_msg(key, marker):
    message = struct.pack("l", 1) + marker
    checked(libc.msgsnd(checked(libc.msgget(key, CREATE | 0o600)), message, len(marker), NO_WAIT))


def make_sem(key, value):
    checked(libc.semctl(checked(libc.semget(key, 1, CREATE | 0o600)), 0, SET_VALUE, value))


def make_mq(name, marker):
    checked(libc.mq_send(checked(libc.mq_open(name, os.O_CREAT | os.O_RDWR, 0o600, None)), marker, len(marker), 0))


def find_shm(key):
    address = checked(libc.shmat(checked(libc.shmget(key, 0, 0)), None, READ_ONLY))
    found = ctypes.string_at(address, 6)
    libc.shmdt(address)
    return found


def find_msg(key):
    buffer = ctypes.create_string_buffer(64)
    size = checked(libc.msgrcv(checked(libc.msgget(key, 0)), buffer, 56, 0, NO_WAIT))
    return buffer.raw[8 : 8 + size]


def find_sem(key):
    return checked(libc.semctl(checked(libc.semget(key, 0, 0)), 0, GET_VALUE))


def find_mq(name):
    buffer = ctypes.create_string_buffer(1 << 16)
    mq = checked(libc.mq_open(name, os.O_RDONLY | os.O_NONBLOCK, 0, None))
    return buffer.raw[: checked(libc.mq_receive(mq, buffer, 1 << 16, None))]


def remove(key, name):
    for ident, control in ((libc.shmget(key, 0, 0), libc.shmctl), (libc.msgget(key, 0), libc.msgctl)):
        if ident >= 0:
            control(ident, REMOVE, None)
    if (semid := libc.semget(key, 0, 0)) >= 0:
        libc.semctl(semid, 0, REMOVE)
    libc.mq_unlink(name)
"""


def ipc_here():
    """The IPC helpers, working in this process's IPC namespace."""
    helpers = {}
    exec(IPC, helpers)
    return helpers


def ipc_marks():
    """A System V key and a POSIX queue name no other test uses."""
    key = random.randrange(1 << 24, 1 << 30)
    return key, f"/toolbench-test-{key}".encode()


def found_in(helpers, key, name):
    """The kinds of IPC object that hold something under ``key`` and ``name`` in ``helpers``' namespace."""
    found = []
    for kind, find, mark in (
        ("shm", "find_shm", key),
        ("msg", "find_msg", key),
        ("sem", "find_sem", key),
        ("mq", "find_mq", name),
    ):
        with contextlib.suppress(OSError):
            helpers[find](mark)
            found.append(kind)
    return found


def shmem_kb():
    """Shared memory the host holds (System V segments, /dev/shm, memfds...), in kB."""
    with open("/proc/meminfo") as meminfo:
        return next(int(line.split()[1]) for line in meminfo if line.startswith("Shmem:"))


def resident_bytes(key):
    """The memory a System V segment of this process's IPC namespace holds."""
    with open("/proc/sysvipc/shm") as segments:
        header, *rows = (line.split() for line in segments)
    return sum(int(row[header.index("rss")]) for row in rows if int(row[0]) == key)


def settles(condition, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_ipc_objects_reach_no_later_run_and_not_the_host(probe, unguarded):
    """A run leaves a marker in a shared memory segment, a message queue, a semaphore and a POSIX
    message queue; a later run (of another task, say) and this process find none of them."""
    need_any("IPC namespace", "seccomp")
    key, name = ipc_marks()
    here = ipc_here()
    try:
        made = probe(
            TRY
            + IPC
            + f"""
attempt("shm", lambda: make_shm({key}, b"marker"))
attempt("msg", lambda: make_msg({key}, b"marker"))
attempt("sem", lambda: make_sem({key}, 42))
attempt("mq", lambda: make_mq({name!r}, b"marker"))
"""
        )
        assert made.ok, made.error
        later = probe(
            TRY
            + IPC
            + f"""
attempt("find shm", lambda: find_shm({key}))
attempt("find msg", lambda: find_msg({key}))
attempt("find sem", lambda: find_sem({key}))
attempt("find mq", lambda: find_mq({name!r}))
"""
        )
        refused(later)
        assert found_in(here, key, name) == []
    finally:
        here["remove"](key, name)


def test_shared_memory_a_run_takes_does_not_stay_on_the_host(probe, unguarded):
    """A run fills System V segments to four times its memory budget (attached one at a time, so its
    address-space limit never binds) and is killed at its deadline: none stays behind, and the
    host's shared memory comes back to where it was."""
    need_any("IPC namespace", "seccomp")
    key, _ = ipc_marks()
    here = ipc_here()
    before = shmem_kb()
    try:
        outcome = probe(
            IPC
            + f"""
import time
for n in range(8):
    try:
        make_shm({key} + n, b"marker", 64 * 2**20)
    except OSError:
        break
time.sleep(60)
""",
            seconds=3,
            memory_mb=128,
        )
        assert outcome.timed_out
        assert [n for n in range(8) if here["libc"].shmget(key + n, 0, 0) >= 0] == []
        assert settles(lambda: shmem_kb() - before < 64 * 1024), f"{shmem_kb() - before} kB stayed"
    finally:
        for n in range(8):
            here["remove"](key + n, b"/unused")


def test_the_ipc_namespace_alone_keeps_ipc_objects_and_their_memory_to_one_process():
    """Without seccomp: a process in its own IPC namespace makes every kind of object (and 256 MB of
    shared memory); neither this process nor another in a namespace of its own sees them, and
    their memory is freed when the process is killed."""
    need("IPC namespace")
    key, name = ipc_marks()

    def own_namespace():
        if kernel._libc.unshare(kernel._CLONE_NEWIPC) != 0:
            raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWIPC)")
        return ipc_here()

    def holder():
        helpers = own_namespace()
        helpers["make_shm"](key, b"marker")
        helpers["make_shm"](key + 1, b"big", 256 * 2**20)
        for _ in range(2):  # one message of each queue for this check, one for the others
            helpers["make_msg"](key, b"marker")
            helpers["make_mq"](name, b"marker")
        helpers["make_sem"](key, 42)
        return found_in(helpers, key, name), resident_bytes(key + 1)

    before = shmem_kb()
    pid, (seen, resident) = forked(holder)
    try:
        assert seen == ["shm", "msg", "sem", "mq"]
        assert resident == 256 * 2**20  # host memory, while the process lives
        assert found_in(ipc_here(), key, name) == []
        other, found = forked(lambda: found_in(own_namespace(), key, name))
        end(other)
        assert found == []
    finally:
        end(pid)
        ipc_here()["remove"](key, name)
        ipc_here()["remove"](key + 1, name)
    assert settles(lambda: shmem_kb() - before < 64 * 1024), f"{shmem_kb() - before} kB stayed"


def test_seccomp_alone_refuses_ipc():
    """Without the IPC namespace: every System V and POSIX message queue call is refused."""
    need("seccomp")
    key, name = ipc_marks()

    def confined():
        kernel._no_new_privs()
        kernel._seccomp_filter().load()
        helpers, errors = ipc_here(), {}
        for kind, make, mark in (
            ("shm", "make_shm", key),
            ("msg", "make_msg", key),
            ("sem", "make_sem", key),
            ("mq", "make_mq", name),
        ):
            try:
                helpers[make](mark, 1 if kind == "sem" else b"marker")
                errors[kind] = "made"
            except OSError as exc:
                errors[kind] = os.strerror(exc.errno)
        return errors

    pid, errors = forked(confined)
    end(pid)
    here = ipc_here()
    try:
        assert errors == dict.fromkeys(("shm", "msg", "sem", "mq"), os.strerror(1))
        assert found_in(here, key, name) == []
    finally:
        here["remove"](key, name)


def i386_call(number, *args):
    """An i386 system call from this x86-64 process (``int 0x80``), as old 32-bit programs make them."""
    registers = (b"\xbb", b"\xb9", b"\xba", b"\xbe")  # mov ebx, ecx, edx, esi
    code = b"\x53\xb8" + struct.pack("<I", number)  # push rbx; mov eax
    code += b"".join(register + struct.pack("<I", arg) for register, arg in zip(registers, args))
    code += b"\xcd\x80\x5b\xc3"  # int 0x80; pop rbx; ret
    memory = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    memory.write(code)
    return ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(memory)))()


def test_the_i386_ipc_multiplexer_is_closed_too():
    """On x86-64 a process can still make i386 system calls, where ``ipc(SHMGET, ...)`` stands for
    shmget: seccomp's filter does not let a call of another architecture through."""
    need("seccomp")
    if os.uname().machine != "x86_64":
        pytest.skip("i386 system calls are an x86-64 matter")
    pid, answer = forked(lambda: i386_call(20))  # getpid
    end(pid)
    if answer is None or answer < 0:
        pytest.skip("this kernel makes no i386 system calls (no IA32 emulation)")
    key, _ = ipc_marks()

    def confined():
        kernel._no_new_privs()
        kernel._seccomp_filter().load()
        return i386_call(117, 23, key, 4096, 0o1600)  # ipc(SHMGET, key, size, IPC_CREAT | 0600)

    pid, answer = forked(confined, keep=False)
    _, status = os.waitpid(pid, 0)
    here = ipc_here()
    try:
        assert answer is None and os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSYS
        assert here["libc"].shmget(key, 0, 0) == -1
    finally:
        here["remove"](key, b"/unused")


def forked(action, keep=True):
    """Run ``action`` in a child of this process: the child's pid and what it returned (None if it
    died first). With ``keep`` the child then waits, holding what it made, until ``end``."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            os.write(write, json.dumps(action()).encode())
            os.close(write)
            while keep:
                time.sleep(60)
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        data = answer.read()
    return pid, json.loads(data) if data else None


def end(pid):
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


def test_posix_shared_memory_and_named_semaphores_are_closed(probe, unguarded):
    """They are files in /dev/shm: a run can neither make one nor read one the host made."""
    need("landlock")
    name = f"toolbench-test-{random.randrange(1 << 30)}"
    with open(f"/dev/shm/{name}-host", "w") as host_file:
        host_file.write("secret")
    try:
        outcome = probe(
            TRY
            + f"""
import os, _multiprocessing, _posixshmem
from multiprocessing import shared_memory
attempt("shm_open", lambda: _posixshmem.shm_open("/{name}-a", os.O_CREAT | os.O_RDWR, 0o600))
attempt("SharedMemory", lambda: shared_memory.SharedMemory("{name}-b", create=True, size=4096))
attempt("a named semaphore", lambda: _multiprocessing.SemLock(1, 1, 1, "/{name}-c", False))
attempt("a file", lambda: open("/dev/shm/{name}-d", "w"))
attempt("read the host's", lambda: open("/dev/shm/{name}-host").read())
attempt("open the host's", lambda: _posixshmem.shm_open("/{name}-host", os.O_RDONLY, 0))
attempt("list them", lambda: os.listdir("/dev/shm"))
"""
        )
        refused(outcome)
        assert sorted(entry for entry in os.listdir("/dev/shm") if name in entry) == [f"{name}-host"]
    finally:
        for entry in os.listdir("/dev/shm"):
            if name in entry:
                os.unlink(f"/dev/shm/{entry}")


# add_key and userfaultfd have no libc wrapper: their numbers, by architecture.
SYSCALL_NUMBERS = {"x86_64": {"add_key": 248, "userfaultfd": 323}, "aarch64": {"add_key": 217, "userfaultfd": 282}}


def test_no_memory_past_the_budget_and_no_kernel_object_that_outlives_the_run(probe, unguarded):
    """memfd pages and pipe buffers are memory the address-space limit does not count; a key in
    the user keyring would outlive the run and be seen by every later one of the same uid."""
    need("seccomp")
    numbers = SYSCALL_NUMBERS.get(os.uname().machine)
    if numbers is None:
        pytest.skip(f"no system call numbers here for {os.uname().machine}")
    outcome = probe(
        TRY
        + f"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def call(name, *args):
    if getattr(libc, name)(*args) == -1:
        raise OSError(ctypes.get_errno(), name)
def pipes():
    held = []
    while len(held) < 4096:
        held.extend(os.pipe())
attempt("memfd", lambda: os.memfd_create("toolbench-test"))
attempt("4,096 descriptors of pipes", pipes)
attempt("a key in the user keyring", lambda: call("syscall", {numbers["add_key"]}, b"user", b"toolbench-test", b"marker", 6, -4))
attempt("userfaultfd", lambda: call("syscall", {numbers["userfaultfd"]}, 0))
attempt("inotify", lambda: call("inotify_init1", 0))
attempt("fanotify", lambda: call("fanotify_init", 0, 0))
"""
    )
    refused(outcome)


@pytest.fixture
def neighbour():
    """A process of the user runs run as (``nobody`` where this process is root), in its own group."""
    as_run = {}
    if os.geteuid() == 0:
        uid, gid = kernel._nobody()
        as_run = {"user": uid, "group": gid, "extra_groups": []}
    process = subprocess.Popen(["sleep", "60"], start_new_session=True, **as_run)
    yield process
    process.kill()
    process.wait()


def test_a_process_of_the_same_user_cannot_be_limited_reniced_or_rescheduled(probe, unguarded, neighbour):
    need_any("PID namespace", "seccomp")
    pid = neighbour.pid

    def state():
        with open(f"/proc/{pid}/limits") as limits:  # prlimit() of another process may need CAP_SYS_RESOURCE
            return (
                limits.read(),
                os.getpriority(os.PRIO_PROCESS, pid),
                os.sched_getaffinity(pid),
                os.sched_getscheduler(pid),
            )

    before = state()
    outcome = probe(
        TRY
        + f"""
import os, resource
attempt("limit it", lambda: resource.prlimit({pid}, resource.RLIMIT_NOFILE, (3, 3)))
attempt("renice it", lambda: os.setpriority(os.PRIO_PROCESS, {pid}, 19))
attempt("pin it", lambda: os.sched_setaffinity({pid}, {{0}}))
attempt("make it idle", lambda: os.sched_setscheduler({pid}, os.SCHED_IDLE, os.sched_param(0)))
"""
    )
    refused(outcome)
    assert state() == before


def test_a_process_of_the_same_user_cannot_be_signalled(probe, unguarded, neighbour):
    if not LAYERS.get("PID namespace", "").startswith("available") and kernel.landlock_abi() < 6:
        pytest.skip(f"this machine has no PID namespace ({LAYERS['PID namespace']}) and no Landlock ABI 6")
    pid = neighbour.pid
    outcome = probe(
        TRY
        + f"""
import os, signal
attempt("stop it", lambda: os.kill({pid}, signal.SIGSTOP))
attempt("stop its group", lambda: os.killpg({pid}, signal.SIGSTOP))
"""
    )
    refused(outcome)
    assert os.waitpid(pid, os.WNOHANG | os.WUNTRACED) == (0, 0)  # neither stopped nor gone


def test_the_host_name_is_not_the_hosts(probe, unguarded):
    need("UTS namespace")
    outcome = probe("import os, socket\nresult = [os.uname().nodename, socket.gethostname()]")
    assert outcome.ok and outcome.payload == [kernel.HOSTNAME.decode()] * 2


def test_guarded_code_keeps_the_layers_too():
    """With the guards in place (the normal case), the kernel layers are on under them."""
    need("seccomp")
    names, collect = "toolbench.core.sandbox:no_names", "toolbench.core.sandbox:layers_applied"
    outcome = run_in_worker("x = 1", names, collect, serve=lambda kind, payload: None, limits=Limits(seconds=10))
    assert outcome.ok and "seccomp" in outcome.payload and "no_new_privs" in outcome.payload
    if LAYERS["landlock"].startswith("available"):
        assert any(layer.startswith("landlock") for layer in outcome.payload)


def test_doctor_reports_the_layers(capsys):
    from toolbench.cli import main

    assert main(["doctor", "--json"]) == 0
    import json

    report = json.loads(capsys.readouterr().out)
    namespaces = {"network namespace", "IPC namespace", "UTS namespace", "PID namespace"}
    assert set(report["layers"]) == {"landlock", "seccomp", "no_new_privs", "unprivileged uid", *namespaces}
    for layer in namespaces:
        assert (layer in report["applied_in_a_run"]) == report["layers"][layer].startswith("available")
    for layer in ("seccomp", "landlock"):
        if report["layers"][layer].startswith("available"):
            assert any(applied.startswith(layer) for applied in report["applied_in_a_run"])
    assert main(["doctor"]) == 0
    assert "A run here gets:" in capsys.readouterr().out


def test_a_child_that_stops_reading_cannot_hold_the_env(unguarded):
    """The code asks for a large answer and never reads it: the env's send gives up at the deadline."""
    asked = """
import json, os, socket, time
message = json.dumps({"type": "call", "kind": "big", "payload": None}).encode()
for fd in range(3, 32):
    try:
        socket.socket(fileno=os.dup(fd)).sendall(len(message).to_bytes(4, "big") + message)
    except OSError:
        pass
time.sleep(600)
"""
    names, collect = "toolbench.core.sandbox:no_names", "toolbench.core.sandbox:result_variable"
    started = time.monotonic()
    outcome = run_in_worker(asked, names, collect, serve=lambda kind, payload: "x" * 2**25, limits=Limits(seconds=3))
    assert outcome.timed_out and time.monotonic() - started < 10
