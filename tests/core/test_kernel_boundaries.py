"""The sandbox's kernel layers, tested with the Python-level guards assumed fallen.

Through the test-only hook ``sandbox.UNGUARDED_FOR_TESTS`` the child runs plain Python with the real
builtins, ``import`` and ``open``: whatever these tests show the code cannot do, it cannot do because
of what the process can reach (Landlock, seccomp, no_new_privs, the uid, the network namespace),
not because of RestrictedPython or the attribute guards. A test whose layer this machine lacks
skips and says which.
"""

import os
import time

import pytest

from toolbench.core import kernel, sandbox, worker
from toolbench.core.sandbox import Limits, run_code, run_in_worker

LAYERS = kernel.detect()


def need(layer):
    state = LAYERS.get(layer, "unknown")
    if not state.startswith("available"):
        pytest.skip(f"this machine has no {layer}: {state}")


@pytest.fixture
def unguarded(monkeypatch):
    monkeypatch.setattr(sandbox, "UNGUARDED_FOR_TESTS", True)


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
    fixture = os.path.join(os.path.dirname(sandbox.__file__), "..", "fixtures", "sheets", "test.jsonl")
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
