"""A Gymnasium text space for real agent text: any Unicode string up to a maximum length.

``gymnasium.spaces.Text`` only contains strings over a fixed character set, and its shared-memory
support (used by ``AsyncVectorEnv``) stores characters as indices into that set and reads the
buffer into a snapshot, so observations come back garbled or stale. ``UnicodeText`` accepts every
string up to ``max_length`` and registers shared-memory functions that store Unicode code points
and read them through a live view.
"""

from __future__ import annotations

import multiprocessing as mp
import string
from collections.abc import Sequence
from types import ModuleType
from typing import Any, overload

import numpy as np
from gymnasium.spaces import Text
from gymnasium.vector.utils import shared_memory as gym_shared_memory

# Characters used when *sampling* (e.g. by env checkers): printable ASCII plus a few non-ASCII
# letters, so that random actions exercise Unicode handling too.
SAMPLE_CHARSET = string.ascii_letters + string.digits + string.punctuation + " \n" + "éüßøñ中文日本語Ωж"


class UnicodeText(Text):
    """Any ``str`` of at most ``max_length`` characters (``min_length`` defaults to 0)."""

    def __init__(self, max_length: int, *, min_length: int = 0, seed: int | np.random.Generator | None = None):
        super().__init__(max_length, min_length=min_length, charset=SAMPLE_CHARSET, seed=seed)

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        # Keep random samples short: an env checker only needs a plausible string, and sampling
        # up to max_length characters would make every checker call slow.
        if mask is None and probability is None:
            length = int(self.np_random.integers(self.min_length, min(self.max_length, 64) + 1))
            return "".join(self.np_random.choice(list(self.character_list), size=length))
        return super().sample(mask=mask, probability=probability)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, UnicodeText)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )

    def __hash__(self) -> int:
        return hash((UnicodeText, self.min_length, self.max_length))


# Shared memory layout per env: one int32 holding the length, then max_length code points.


@gym_shared_memory.create_shared_memory.register(UnicodeText)
def _create_shared_memory(space: UnicodeText, n: int = 1, ctx: ModuleType = mp) -> Any:
    return ctx.Array(np.dtype(np.int32).char, n * (space.max_length + 1))


class SharedTextBatch(Sequence[str]):
    """A live, read-only view of the texts in shared memory.

    ``AsyncVectorEnv`` reads its shared observation buffer once, at construction, and relies on
    the result being a view that later writes show through (true for numpy arrays). A tuple of
    strings would be a stale snapshot, so this view decodes each text when it is accessed; a
    ``deepcopy`` (what ``AsyncVectorEnv`` returns by default) is a plain tuple.
    """

    def __init__(self, data: np.ndarray):
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...

    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(len(self))[index])
        row = self._data[index]
        return row[1 : 1 + int(row[0])].astype(np.uint32).tobytes().decode("utf-32-le", "surrogatepass")

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (Sequence, SharedTextBatch)) and tuple(self) == tuple(other)

    def __repr__(self) -> str:
        return f"SharedTextBatch({tuple(self)!r})"


@gym_shared_memory.read_from_shared_memory.register(UnicodeText)
def _read_from_shared_memory(space: UnicodeText, shared_memory: Any, n: int = 1) -> SharedTextBatch:
    return SharedTextBatch(np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape((n, space.max_length + 1)))


@gym_shared_memory.write_to_shared_memory.register(UnicodeText)
def _write_to_shared_memory(space: UnicodeText, index: int, value: str, shared_memory: Any) -> None:
    size = space.max_length + 1
    destination = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)
    codes = np.frombuffer(value.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int32)
    row = destination[index * size : (index + 1) * size]
    row[0] = len(codes)
    row[1 : 1 + len(codes)] = codes
