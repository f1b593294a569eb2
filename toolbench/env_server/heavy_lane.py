"""The heavy lane: CPU-heavy work of every session runs one job at a time, the sessions served in turn.

Each session has a thread of its own, but they share the process's GIL with the event loop. Work that
is mostly pure Python or one long C call (parsing or encoding megabytes of JSON, a snapshot's get_state
and encoding, a restore's decoding and set_state) takes the GIL for as long as it runs; with N such jobs
at once, the event loop and every light request get about 1/(N+1) of it, so K sessions looping
restores slowed everyone else's steps from milliseconds to seconds. In the lane, at most ``slots`` such
jobs run at once (one by default), so the loop and light requests keep at least about half of the GIL
whatever heavy work is queued. Waiting jobs are granted in turn by key (a session, or a connection for a
body parsed before any session), first come first served within a key: a session with many heavy jobs
queued delays another's by one of its jobs, not all of them.

What remains shared is the CPU itself: a heavy job still delays light requests by the GIL share it takes.
Isolating CPU fully needs the envs in processes of their own.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict, deque
from collections.abc import Hashable, Iterator

#: Bodies, messages and answers larger than this are heavy: parsed, or encoded, in the lane.
HEAVY_BYTES = 64 * 1024


class HeavyLane:
    """At most ``slots`` holders at once; waiters granted round-robin by key."""

    def __init__(self, slots: int = 1):
        self._lock = threading.Lock()
        self._free = slots
        self._waiting: OrderedDict[Hashable, deque[threading.Event]] = OrderedDict()

    @contextlib.contextmanager
    def held(self, key: Hashable) -> Iterator[None]:
        """Hold a slot of the lane (waiting for one, in turn by ``key``) for the ``with`` block."""
        turn: threading.Event | None = None
        with self._lock:
            if self._free and not self._waiting:
                self._free -= 1
            else:
                turn = threading.Event()
                self._waiting.setdefault(key, deque()).append(turn)
        if turn is not None:
            turn.wait()
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        with self._lock:
            if not self._waiting:
                self._free += 1
                return
            key, queue = next(iter(self._waiting.items()))
            turn = queue.popleft()
            if queue:
                self._waiting.move_to_end(key)  # its next job waits for every other key's turn
            else:
                del self._waiting[key]
            turn.set()  # the slot passes straight to it
