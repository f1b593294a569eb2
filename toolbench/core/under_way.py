"""How many env steps and resets this process is running at once, and which thread runs one.

The sandbox's slow lane yields a demoted run's share of the process to the other steps, and only
while there are others: a process that runs one env (training in-process, a vector env's worker)
runs it at full speed however much CPU its code uses.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

_changed = threading.Condition()
_count = 0
_mine = threading.local()


@contextlib.contextmanager
def step_under_way() -> Iterator[None]:
    """Count the calling thread's step (or reset) as under way while the block runs."""
    global _count
    depth = getattr(_mine, "depth", 0)
    _mine.depth = depth + 1
    if depth == 0:
        with _changed:
            _count += 1
    try:
        yield
    finally:
        _mine.depth = depth
        if depth == 0:
            with _changed:
                _count -= 1
                _changed.notify_all()


def others_under_way() -> int:
    """Steps under way in other threads of this process."""
    with _changed:
        return _count - (1 if getattr(_mine, "depth", 0) else 0)


def wait_while_others(seconds: float) -> None:
    """Sleep up to ``seconds``, and no longer than other threads have steps under way."""
    ends = time.monotonic() + seconds
    with _changed:
        while others_under_way() > 0:  # the condition's lock is reentrant
            left = ends - time.monotonic()
            if left <= 0:
                return
            _changed.wait(left)
