"""The fork server of the clean worker: a fresh interpreter that imports what agent code uses, then only forks.

``WorkerServer`` (``core.worker``) starts it with ``python -I -m toolbench.core.fork_server FD MODULE...``
before any task reaches the env's process, and never sends it one. It imports the libraries the
code uses (numpy, pandas, gspread) and the modules it is given (the env modules whose code-side
names the runs call, as the env's process listed them) and forks children ahead of
need, each already behind its kernel layers. It hands each child's link to the env (with the
child's pid and a pidfd) as soon as the child is forked, and forks a replacement for each child
the env takes: a run then starts without a round trip to this process, and this process forks
while the run goes on.
"""

from __future__ import annotations

import gc
import os
import signal
import socket
import sys

from toolbench.core import kernel, sandbox
from toolbench.core.worker import LENGTH

#: Children the env holds ready: two runs in a row (an answer, then its reference) both find one.
READY_CHILDREN = 2


def serve(control_fd: int, modules: tuple[str, ...] = ()) -> None:
    """The server's loop: offer READY_CHILDREN children, then one more for each the env takes.
    ``modules`` are imported (and warmed up) before the first fork."""
    control = socket.socket(fileno=control_fd)
    sandbox.load_agent_libraries(modules)
    sandbox.run_warm_ups("warm_worker", modules)
    sandbox.prepare_parent()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    # What is loaded now stays as it is: the collector of a child then never walks (and so never
    # copies, page by page) the libraries' objects it shares with this process.
    gc.collect()
    gc.freeze()

    def offer() -> None:
        """Fork a child ahead of need, already behind its kernel layers, and hand its link to the env."""
        ours, theirs = socket.socketpair()
        pid = kernel.fork()
        if pid == 0:
            try:
                control.close()
                ours.close()
                # A process group of its own (the env kills the whole group), in this server's session:
                # where the kernel groups scheduling by session (autogroup), a child in a session of
                # its own would weigh as much as the env's whole process, however it is demoted.
                os.setpgid(0, 0)
                sandbox.ready_child(theirs, modules)
            finally:
                os._exit(1)
        theirs.close()
        # A pidfd names the child for good, whenever the env ends it (the pid alone could be reused
        # by then); the child is alive now: it spends milliseconds behind its layers before it waits.
        pidfd = _pidfd(pid)
        try:
            socket.send_fds(control, [LENGTH.pack(pid)], [ours.fileno()] + ([pidfd] if pidfd is not None else []))
        finally:
            ours.close()
            if pidfd is not None:
                os.close(pidfd)

    taken = READY_CHILDREN
    while True:
        try:
            for _ in range(taken):
                offer()
            message = control.recv(64)
        except OSError:
            return
        if not message:
            return  # the env's process closed the socket: it has gone
        taken = len(message)  # one byte for each child the env took


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid) if hasattr(os, "pidfd_open") else None
    except OSError:
        return None


if __name__ == "__main__":
    serve(int(sys.argv[1]), tuple(sys.argv[2:]))
