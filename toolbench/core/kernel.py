"""Kernel boundaries for a process about to run untrusted code: what it can reach, not what it tries.

Each layer is applied by the process to itself, after everything it needs is open and before the
first line of agent code, and none can be undone:

- ``no_new_privs``: nothing it runs can gain privileges (and seccomp may then be loaded unprivileged);
- an unprivileged uid/gid (``nobody``) when the process runs as root; where ``nobody`` cannot read
  the Python installation (a Python under ``/root``) it keeps one capability, CAP_DAC_READ_SEARCH,
  which Landlock confines to the libraries; without Landlock, root without any capability;
- namespaces of its own where permitted (they need root; one ``unshare`` gives all three for what
  the network's alone costs): network (no interface but a down loopback), IPC (System V shared
  memory, message queues and semaphores and POSIX message queues: it sees none of the host's or
  another run's, and the kernel destroys what it made when it dies) and UTS (the host name is
  ``sandbox``); and, given by the fork (``fork``), PID: it is PID 1 and sees no other process;
- Landlock (Linux 5.13+): the file system is read-only beneath the given paths and closed
  elsewhere; with ABI 4+ no TCP bind or connect; with ABI 6+ no signals to and no abstract Unix
  sockets of processes outside the sandbox. The few syscalls are called through ctypes: no
  Landlock binding on the package index is mature (the best known is a 1.0 development release);
- seccomp (through ``pyseccomp``, a ctypes binding of the maintained libseccomp) refuses with EPERM:
  ``execve``, ``execveat``, new processes (``fork``, ``vfork``, ``clone`` without ``CLONE_THREAD``;
  ``clone3`` answers ENOSYS so threads fall back to ``clone``), sockets; other processes' memory and
  descriptors (``ptrace``, ``process_vm_*``, ``process_madvise``, ``pidfd_getfd``, ``kcmp``), their
  limits and scheduling (``prlimit64`` and ``sched_set*`` for any process but the caller,
  ``setpriority``, ``ioprio_set``); System V IPC and POSIX message queues (so they stay closed
  where the IPC namespace is not permitted); ``memfd_create``; inotify and fanotify;
  ``open_by_handle_at``; namespaces, mounts, keyrings, BPF and ``io_uring``. A system call of
  another architecture (i386's ``int 0x80`` on x86-64, whose ``ipc`` multiplexes System V IPC) is
  not made: the thread that tries one is killed.

What else such a process could share with the host, and what holds it:

- abstract Unix sockets: no ``socket()`` (seccomp), a network namespace of its own (they are per
  network namespace), and Landlock's scoping from ABI 6;
- ``/dev/shm`` (POSIX shared memory and named semaphores are files there): outside Landlock's paths;
- System V IPC and POSIX message queues: the IPC namespace, and seccomp;
- the kernel keyring: a uid's user keyring is shared by all its processes and outlives them, and no
  namespace here separates it (only a user namespace would): seccomp refuses the keyring calls;
- memory outside the address-space budget: ``memfd_create`` is refused (a memfd's pages count in
  RLIMIT_AS only while mapped, not when written with ``write``), as are System V segments (counted
  only while attached) and ``/dev/shm`` files; pipes are bounded by the descriptor limit the
  sandbox sets;
- timers (``timerfd``, POSIX timers, ``alarm``) and their signals, ``eventfd``, epoll: they belong
  to the process, reach only it (a timer's signal goes to a thread of the same process) and die
  with it;
- inotify and fanotify: refused; they would show the file activity of folders anyone may read;
- ``userfaultfd``: refused (it stalls the kernel's own accesses to a page at will);
- the PID space: a PID namespace of its own (as root); without it, Landlock ABI 6 stops signals
  to processes outside the sandbox, seccomp stops renicing, limiting or rescheduling them and
  reaching their memory or descriptors, and ``/proc`` is closed by Landlock; with neither the
  namespace nor Landlock ABI 6 (no root, a kernel before 6.12) it can signal its uid's processes;
- the host name: its own UTS namespace, named ``sandbox`` (a crafted name would need CAP_SYS_ADMIN);
- prctl: every option acts on the caller itself, and those that could reach further need a
  capability it lacks (``PR_SET_MM``, raising ambient capabilities) or ptrace access, which Landlock
  and seccomp refuse (``PR_SET_PTRACER``; ``PR_SCHED_CORE`` with another process);
- a mount namespace is not made: the process cannot mount (no capability, seccomp), and Landlock,
  not the mount table, decides which files it reaches.

The sandbox sets the resource limits (``RLIMIT_NPROC`` 0, ``RLIMIT_NOFILE``, ``RLIMIT_CORE`` 0,
and per run ``RLIMIT_AS`` and ``RLIMIT_CPU``). ``detect()`` says which layers this machine offers
(``toolbench doctor`` prints it).
"""

from __future__ import annotations

import ctypes
import errno
import functools
import operator
import os
import pwd
import sys
from dataclasses import dataclass, field

# Landlock, from <linux/landlock.h>; the syscall numbers are the same on every architecture.
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_FS_EXECUTE, _FS_WRITE_FILE, _FS_READ_FILE, _FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_ALL_V1 = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
_FS_REFER, _FS_TRUNCATE, _FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_PR_SET_NO_NEW_PRIVS = 38
_CLONE_NEWNET, _CLONE_NEWIPC, _CLONE_NEWUTS, _CLONE_NEWPID = 0x40000000, 0x08000000, 0x04000000, 0x20000000
_CLONE_THREAD = 0x00010000
#: The namespaces a process enters by itself (one unshare: together they cost what the network's
#: alone costs), as ``detect`` and ``Applied`` name them.
NAMESPACES = {"network namespace": _CLONE_NEWNET, "IPC namespace": _CLONE_NEWIPC, "UTS namespace": _CLONE_NEWUTS}
#: The host name in a UTS namespace: the same on every machine, and not the host's.
HOSTNAME = b"sandbox"

_libc: ctypes.CDLL | None = ctypes.CDLL(None, use_errno=True)  # None once forget() ran
_libc.syscall.restype = ctypes.c_long


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class KernelLayerError(OSError):
    """A layer that was asked for could not be applied."""


def landlock_abi() -> int:
    """The Landlock ABI version the kernel offers (0: none)."""
    version = _libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(0, int(version))


def _seccomp_module():  # type: ignore[no-untyped-def]
    try:
        import pyseccomp

        pyseccomp.get_api()  # fails where libseccomp.so.2 is missing
    except (ImportError, OSError, RuntimeError, AttributeError):
        return None
    return pyseccomp


def _nobody() -> tuple[int, int] | None:
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        return None
    return entry.pw_uid, entry.pw_gid


@dataclass(frozen=True)
class Plan:
    """Which layers to apply; ``read_only`` are the paths the code may read (nothing is writable)."""

    read_only: tuple[str, ...]
    drop_uid: bool = True
    #: The unprivileged user cannot read the Python installation (a Python under /root): it keeps
    #: CAP_DAC_READ_SEARCH, which Landlock then confines to ``read_only``.
    needs_read_capability: bool = False
    #: NAMESPACES, and a report of the PID namespace ``fork`` gave the process or not.
    namespaces: bool = True
    landlock: bool = True
    seccomp: bool = True


@dataclass
class Applied:
    """What a process got (``layers``) and what it did not, with why (``missing``)."""

    layers: list[str] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)


def _no_new_privs() -> None:
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise KernelLayerError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")


def _namespaces(applied: Applied) -> None:
    """Enter NAMESPACES, all in one call where permitted, else each that is; a new UTS namespace
    gets the neutral HOSTNAME (while the process may still set it)."""
    flags = functools.reduce(operator.or_, NAMESPACES.values())
    if _libc.unshare(flags) == 0:
        entered = list(NAMESPACES)
    else:
        entered = []
        for name, flag in NAMESPACES.items():
            if _libc.unshare(flag) == 0:
                entered.append(name)
            else:
                applied.missing[name] = os.strerror(ctypes.get_errno())
    if "UTS namespace" in entered and _libc.sethostname(HOSTNAME, len(HOSTNAME)) != 0:
        entered.remove("UTS namespace")
        applied.missing["UTS namespace"] = f"the host name could not be set: {os.strerror(ctypes.get_errno())}"
    applied.layers.extend(entered)


#: In a process ``fork`` made: why it shares its parent's PID namespace (None: it has its own).
_shared_pid_namespace: str | None = "it was not forked by kernel.fork"


def fork() -> int:
    """``os.fork()``, with the child in a new PID namespace where permitted: there it is PID 1 and no
    other process exists for it, so it can signal, renice, limit or look up none. Only the fork
    can give this (unshare(CLONE_NEWPID) moves a process's future children, not the process); the
    forking process enters the new namespace for that one fork and returns to its own."""
    global _shared_pid_namespace
    own, reason = _pid_namespace_for_the_next_child()
    try:
        pid = os.fork()
    except OSError:
        _return_to_pid_namespace(own)
        raise
    if pid == 0:
        _shared_pid_namespace = reason
        if own >= 0:
            os.close(own)
        return 0
    _return_to_pid_namespace(own)
    return pid


def _pid_namespace_for_the_next_child() -> tuple[int, str | None]:
    """A descriptor of this process's PID namespace, to return to after the fork, once the next
    child is to get a new one; else -1 and why not."""
    try:
        own = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        return -1, f"/proc/self/ns/pid: {exc.strerror}"
    # Entering the namespace it is in changes nothing and shows that the way back is open (in a
    # user namespace it may not be); only then is a new one made.
    if _libc.setns(own, _CLONE_NEWPID) != 0 or _libc.unshare(_CLONE_NEWPID) != 0:
        reason = os.strerror(ctypes.get_errno())
        os.close(own)
        return -1, reason
    return own, None


def _return_to_pid_namespace(own: int) -> None:
    if own < 0:
        return
    try:
        # Left in the new namespace, every later fork would join this one child's namespace.
        if _libc.setns(own, _CLONE_NEWPID) != 0:
            raise KernelLayerError(ctypes.get_errno(), "setns(CLONE_NEWPID)")
    finally:
        os.close(own)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _set_capabilities(keep: int = 0) -> None:
    """Leave only the capabilities in the mask ``keep`` (none by default): root without any has no
    bypassing file permissions, no raw sockets, no mounts."""
    header, data = _CapHeader(0x20080522, 0), (_CapData * 2)()  # _LINUX_CAPABILITY_VERSION_3
    data[0].effective = data[0].permitted = keep
    if _libc.capset(ctypes.byref(header), data) != 0:
        raise KernelLayerError(ctypes.get_errno(), "capset")


_PR_SET_KEEPCAPS = 8
_CAP_DAC_READ_SEARCH = 2


def _drop_uid(uid: int, gid: int, keep_read: bool = False) -> None:
    if keep_read and _libc.prctl(_PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0:
        raise KernelLayerError(ctypes.get_errno(), "prctl(PR_SET_KEEPCAPS)")
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    # Only the right to read (and list) what file modes would hide, when kept; Landlock confines it.
    _set_capabilities(1 << _CAP_DAC_READ_SEARCH if keep_read else 0)


def _landlock(read_only: tuple[str, ...], abi: int) -> None:
    handled = _FS_ALL_V1 | (_FS_REFER if abi >= 2 else 0) | (_FS_TRUNCATE if abi >= 3 else 0)
    handled |= _FS_IOCTL_DEV if abi >= 5 else 0
    attr = _RulesetAttr(
        handled_access_fs=handled,
        handled_access_net=(_NET_BIND_TCP | _NET_CONNECT_TCP) if abi >= 4 else 0,
        scoped=(_SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL) if abi >= 6 else 0,
    )
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else (16 if abi >= 4 else 8)
    ruleset = _libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        raise KernelLayerError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        for path in read_only:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue  # a path this machine does not have
            try:
                is_dir = os.path.isdir(path)
                allowed = _FS_READ_FILE | _FS_EXECUTE | (_FS_READ_DIR if is_dir else 0)
                rule = _PathBeneathAttr(allowed_access=allowed & handled, parent_fd=fd)
                if _libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0) != 0:
                    raise KernelLayerError(ctypes.get_errno(), f"landlock_add_rule({path})")
            finally:
                os.close(fd)
        if _libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
            raise KernelLayerError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)


_REFUSED_SYSCALLS = (
    # programs, processes, the network
    "execve",
    "execveat",
    "fork",
    "vfork",
    "socket",
    "socketpair",
    # other processes' memory and descriptors
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "process_madvise",
    "pidfd_getfd",
    "kcmp",
    # other processes' scheduling (a sibling of the same uid could be slowed past its budget)
    "setpriority",
    "ioprio_set",
    # System V IPC and POSIX message queues: objects that outlive the process, seen by every process
    # of the IPC namespace (``ipc`` where an architecture multiplexes them through it)
    "shmget",
    "shmat",
    "shmctl",
    "shmdt",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "ipc",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
    # memory that RLIMIT_AS does not count once unmapped
    "memfd_create",
    "memfd_secret",
    # watching the file system's activity, and files by handle past path-based rules
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    "fanotify_init",
    "fanotify_mark",
    "open_by_handle_at",
    # the kernel's own state
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "keyctl",
    "add_key",
    "request_key",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "kexec_load",
    "init_module",
    "finit_module",
)
# Calls whose first argument names a process: refused for any but the caller (0).
_OWN_PROCESS_ONLY = ("prlimit64", "sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr")


@functools.cache
def _seccomp_filter():  # type: ignore[no-untyped-def]
    """The filter, built once (6 ms of libseccomp work) in the process that forks; a child loads it."""
    module = _seccomp_module()
    if module is None:
        return None
    refuse = module.ERRNO(errno.EPERM)
    rules = module.SyscallFilter(defaction=module.ALLOW)
    not_the_caller = module.Arg(0, module.NE, 0)
    for name, conditions in [(name, ()) for name in _REFUSED_SYSCALLS] + [
        (name, (not_the_caller,)) for name in _OWN_PROCESS_ONLY
    ]:
        try:
            rules.add_rule(refuse, name, *conditions)
        except (ValueError, RuntimeError, OSError):
            continue  # a syscall this architecture does not have
    rules.add_rule(refuse, "clone", module.Arg(0, module.MASKED_EQ, _CLONE_THREAD, 0))
    rules.add_rule(module.ERRNO(errno.ENOSYS), "clone3")  # glibc then makes threads with clone()
    return rules


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_BPF_INSTRUCTION_BYTES = 8


@functools.cache
def _seccomp_program() -> ctypes.Array[ctypes.c_char] | None:
    """The filter as the kernel's BPF program, generated once: libseccomp's load generates it again
    in every child (a millisecond each), and loading the same program is the same filter."""
    rules = _seccomp_filter()
    if rules is None:
        return None
    read_end, write_end = os.pipe()  # a program is at most 4,096 instructions: it fits a pipe's buffer
    try:
        with os.fdopen(write_end, "wb", closefd=True) as sink:
            rules.export_bpf(sink)
        with os.fdopen(read_end, "rb", closefd=False) as source:
            program = source.read()
    except (OSError, RuntimeError, ValueError):
        return None
    finally:
        os.close(read_end)
    if not program or len(program) % _BPF_INSTRUCTION_BYTES:
        return None
    return ctypes.create_string_buffer(program, len(program))


def _load_seccomp() -> bool:
    """Load the filter (no_new_privs is set already); False where there is none."""
    program = _seccomp_program()
    if program is None:
        rules = _seccomp_filter()
        if rules is None:
            return False
        rules.load()
        return True
    fprog = _SockFprog(len(program) // _BPF_INSTRUCTION_BYTES, ctypes.addressof(program))
    if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise KernelLayerError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")
    return True


def prepare() -> None:
    """Do the costly part once, before forking children that ``apply``."""
    _seccomp_program()
    landlock_abi_cached()


@functools.cache
def landlock_abi_cached() -> int:
    return landlock_abi()


def apply(plan: Plan) -> Applied:
    """Apply the plan's layers to this process, strongest-first order permitting; never undone."""
    applied = Applied()
    _no_new_privs()
    applied.layers.append("no_new_privs")
    if plan.namespaces:
        _namespaces(applied)
        if _shared_pid_namespace is None:
            applied.layers.append("PID namespace")
        else:
            applied.missing["PID namespace"] = _shared_pid_namespace
    nobody = _nobody() if plan.drop_uid else None
    abi = landlock_abi_cached() if plan.landlock else 0
    if os.geteuid() != 0:
        applied.layers.append("unprivileged uid")
    elif nobody is not None and not plan.needs_read_capability:
        _drop_uid(*nobody)
        applied.layers.append("unprivileged uid")
    elif nobody is not None and abi:
        _drop_uid(*nobody, keep_read=True)
        applied.layers.append("unprivileged uid (reading the libraries through CAP_DAC_READ_SEARCH)")
    else:
        applied.missing["unprivileged uid"] = "stays root: nobody cannot read the Python installation"
        _set_capabilities()
        applied.layers.append("root without capabilities")
    if abi:
        _landlock(plan.read_only, abi)
        applied.layers.append(f"landlock (ABI {abi})")
    elif plan.landlock:
        applied.missing["landlock"] = "the kernel has no Landlock"
    if plan.seccomp and _load_seccomp():
        applied.layers.append("seccomp")
    elif plan.seccomp:
        applied.missing["seccomp"] = "pyseccomp or libseccomp.so.2 is missing"
    return applied


def forget() -> None:
    """Drop this process's handle on the C library and libseccomp's binding, once its layers are
    applied (nothing here is used again): code that got past every Python guard then finds no
    ready-made object that makes raw system calls without an audit event."""
    global _libc
    _libc = None
    _seccomp_program.cache_clear()
    _seccomp_filter.cache_clear()
    for name in [name for name in sys.modules if name == "pyseccomp" or name.startswith("pyseccomp.")]:
        del sys.modules[name]


def detect() -> dict[str, str]:
    """Each layer and whether this machine has it (checked in a throw-away child process)."""
    report: dict[str, str] = {}
    abi = landlock_abi()
    report["landlock"] = f"available (ABI {abi})" if abi else "unavailable: the kernel has no Landlock"
    if abi and abi < 4:
        report["landlock"] += "; TCP rules need ABI 4"
    if abi and abi < 6:
        report["landlock"] += "; signal and abstract-socket scoping need ABI 6"
    report["seccomp"] = (
        "available" if _seccomp_module() is not None else "unavailable: pyseccomp or libseccomp.so.2 missing"
    )
    report["no_new_privs"] = "available"
    if os.geteuid() == 0:
        report["unprivileged uid"] = (
            "available (root drops to nobody)" if _nobody() else "unavailable: no user 'nobody'"
        )
    else:
        report["unprivileged uid"] = f"available (runs as uid {os.geteuid()})"
    tried = {**NAMESPACES, "PID namespace": _CLONE_NEWPID}
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # try the namespaces where they cannot harm the caller
        try:
            os.close(read)
            codes = [0 if _libc.unshare(flag) == 0 else ctypes.get_errno() for flag in tried.values()]
            os.write(write, " ".join(map(str, codes)).encode())
        finally:
            os._exit(0)
    os.close(write)
    answer = os.read(read, 256).decode().split()
    os.close(read)
    os.waitpid(pid, 0)
    codes = [int(code) for code in answer] if len(answer) == len(tried) else [None] * len(tried)
    for name, code in zip(tried, codes):
        if code is None:
            report[name] = "unavailable: the probe did not answer"
        else:
            report[name] = "available" if code == 0 else f"unavailable: {os.strerror(code)}"
    return report
