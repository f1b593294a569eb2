import copy

import numpy as np
import pytest
from gymnasium.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

from toolbench.core.spaces import UnicodeText


def test_contains_any_unicode_string_up_to_max_length():
    space = UnicodeText(10)
    for text in ["", "plain", "中文日本語", "emoji 🐱", "tab\tnl\n", "\x00\x01", "é" * 10]:
        assert space.contains(text), text
    assert not space.contains("x" * 11)
    assert not space.contains(b"bytes")
    assert not space.contains(None)


def test_samples_are_members():
    space = UnicodeText(1000, seed=3)
    samples = [space.sample() for _ in range(20)]
    assert all(space.contains(s) for s in samples)
    assert len(set(samples)) > 1


def test_shared_memory_round_trip_keeps_every_character():
    space = UnicodeText(32)
    values = ["héllo wörld", "猫 API 🐱", "", "\ud800 lone surrogate"]
    memory = create_shared_memory(space, n=len(values))
    for index, value in enumerate(values):
        write_to_shared_memory(space, index, value, memory)
    view = read_from_shared_memory(space, memory, n=len(values))
    assert tuple(view) == tuple(values) and view[1:3] == tuple(values[1:3])
    write_to_shared_memory(space, 0, "changed later", memory)
    assert view[0] == "changed later"  # a live view, as AsyncVectorEnv expects
    assert copy.deepcopy(view) == ("changed later", *values[1:])


def test_equality_and_hash():
    assert UnicodeText(5) == UnicodeText(5)
    assert UnicodeText(5) != UnicodeText(6)
    assert len({UnicodeText(5), UnicodeText(5)}) == 1


@pytest.mark.parametrize("length", [0, 1, 32])
def test_shared_memory_handles_full_length(length):
    space = UnicodeText(32)
    memory = create_shared_memory(space, n=1)
    value = "猫" * length
    write_to_shared_memory(space, 0, value, memory)
    assert tuple(read_from_shared_memory(space, memory, n=1)) == (value,)
    assert np.frombuffer(memory.get_obj(), dtype=np.int32)[0] == length
