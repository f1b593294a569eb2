"""The fork server of the clean worker: a fresh interpreter that imports what agent code uses, then only forks.

``WorkerServer`` (``core.worker``) starts it with ``python -I -m toolbench.core.fork_server`` before
any task reaches the env's process, and never sends it one. It imports the libraries the code
uses (numpy, pandas, gspread, the task modules' code-side helpers), keeps two children forked
ahead of need, already behind their kernel layers, and forks new ones while no request waits;
each request hands it one end of a socket pair, which it passes to a waiting child.
"""

from __future__ import annotations

import contextlib
import gc
import os
import select
import signal
import socket
import sys

from toolbench.core import kernel, sandbox
from toolbench.core.worker import LENGTH

READY_CHILDREN = 2
# The libraries agent code uses, imported once so that every child has them (a child behind
# Landlock could not read them).
PRELOAD = ("numpy", "pandas", "gspread", "gspread_dataframe", "RestrictedPython")


def serve(control_fd: int) -> None:
    """The server's loop: for each request on the control socket, fork a child for the run."""
    control = socket.socket(fileno=control_fd)
    for module in (*PRELOAD, *sandbox.WORKER_PRELOAD):
        __import__(module)
    for warm_up in sandbox.WORKER_WARM_UPS:
        with contextlib.suppress(Exception):  # a warm-up saves time; without it runs are slower, not wrong
            sandbox.import_dotted(warm_up)()
    sandbox.prepare_parent()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    # What is loaded now stays as it is: the collector of a child then never walks (and so never
    # copies, page by page) the libraries' objects it shares with this process.
    gc.collect()
    gc.freeze()

    def fork_ready() -> tuple[int, socket.socket]:
        """A child forked ahead of need, already behind its kernel layers, waiting for a channel."""
        ours, theirs = socket.socketpair()
        pid = kernel.fork()
        if pid == 0:
            try:
                control.close()
                ours.close()
                os.setsid()  # its own session and group: the env kills the whole group
                sandbox.ready_child(theirs)
            finally:
                os._exit(1)
        theirs.close()
        return pid, ours

    # Children forked ahead of need. A fork takes milliseconds, so new ones are forked only while
    # no request waits: two runs in a row (an answer, then its reference) both find one ready.
    ready = [fork_ready()]
    control.sendall(b"R")  # ready
    while True:
        while len(ready) < READY_CHILDREN and not select.select([control], [], [], 0)[0]:
            ready.append(fork_ready())
        try:
            message, fds, _, _ = socket.recv_fds(control, 16, 1)
        except OSError:
            return
        if not message or not fds:
            return  # the env's process closed the socket: it has gone
        pid, link = ready.pop(0) if ready else fork_ready()
        try:
            socket.send_fds(link, [b"C"], [fds[0]])
        except OSError:
            pid = 0  # the ready child died: the env sees the run fail and goes on
        link.close()
        os.close(fds[0])
        control.sendall(LENGTH.pack(pid))


if __name__ == "__main__":
    serve(int(sys.argv[1]))
