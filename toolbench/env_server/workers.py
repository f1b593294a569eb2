"""One worker thread per session: a session's env calls never wait behind another session's.

A shared pool of N threads lets N slow steps (a long program, a big state) hold every thread while the
other sessions' calls queue behind them. A session already runs one call at a time, so a thread of its
own costs nothing in parallelism it did not have, and makes fairness structural: a slow call delays
only its own session. The thread is a daemon, so a call that never returns cannot keep the process
from exiting when the server stops; an abandoned call's answer is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.done():  # the caller stopped waiting (its request was cancelled)
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class SessionWorker:
    """A daemon thread that runs the calls given to ``run``, one at a time, in order."""

    def __init__(self, name: str):
        self._calls: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.running = False  # a call is running on the thread (its caller may have stopped waiting)
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    async def run(self, func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``func(*args, **kwargs)`` on this worker's thread, awaited on the event loop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._calls.put((loop, future, functools.partial(func, *args, **kwargs)))
        return await future

    def _serve(self) -> None:
        while True:
            item = self._calls.get()
            if item is None:
                return
            loop, future, call = item
            self.running = True
            try:
                outcome = (True, call())
            except Exception as exc:
                outcome = (False, exc)
            finally:
                self.running = False
            with contextlib.suppress(RuntimeError):  # a closed event loop: nobody waits for this answer
                loop.call_soon_threadsafe(_settle, future, *outcome)
            del item, loop, future, call, outcome  # drop references to the result while waiting

    def stop(self) -> None:
        """End the thread once the calls already given have run."""
        self._calls.put(None)
