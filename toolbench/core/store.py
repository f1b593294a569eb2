"""One read-only store of static data per process, shared by every env instance in it.

Task sets, API docs, catalogs, indexes and back ends' world data are loaded once per key and then
shared, so an env instance beyond the first costs little to make (a vector env's worker holds many).
What is stored must be treated as immutable: tuples, frozen dataclasses, ``MappingProxyType``; an
env whose episodes change a world starts each episode from a copy of the shared start.

Two lifetimes:

- ``shared`` keeps a value for the life of the process. For data shipped with the package (a
  split, a catalog), of which there is a fixed, small number.
- ``held`` keeps a value while something references it (a live env), for data from a user's file:
  the key names the file's resolved path, modification time and size (plus the options that shape
  what is read), so an edited or different file never shares, and closed envs' data is freed.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, Generic, TypeVar

T = TypeVar("T")

_shared: dict[Hashable, Any] = {}
_held: weakref.WeakValueDictionary[Hashable, Any] = weakref.WeakValueDictionary()
# Re-entrant: a value's builder may itself read another stored value.
_lock = threading.RLock()


class Holder(Generic[T]):
    """A weakly referenceable box, for a ``held`` value of a type that is not (a tuple, a dict): the
    value is kept while some env keeps the box."""

    __slots__ = ("__weakref__", "value")

    def __init__(self, value: T) -> None:
        self.value = value


def shared(key: Hashable, build: Callable[[], T]) -> T:
    """The value stored under ``key``, built by ``build()`` the first time; kept for the process's life."""
    try:
        return _shared[key]
    except KeyError:
        pass
    with _lock:
        if key not in _shared:
            _shared[key] = build()
        return _shared[key]


def held(key: Hashable, build: Callable[[], T]) -> T:
    """The value stored under ``key`` while anything still references it (it must be weakly
    referenceable: an object of a class of ours, not a bare tuple or dict)."""
    with _lock:
        value = _held.get(key)
        if value is None:
            value = build()
            _held[key] = value
        return value


def file_key(path: str | Path) -> tuple[str, int, int]:
    """What identifies a file's content for the store: its resolved path, modification time and size."""
    resolved = Path(path).resolve()
    stat = os.stat(resolved)
    return str(resolved), stat.st_mtime_ns, stat.st_size
