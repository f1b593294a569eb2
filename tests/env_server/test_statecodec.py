"""The data-only state codec: exact round trips, refusals that name the value, bounds on size and nesting."""

from __future__ import annotations

import collections
import math
import subprocess
import sys
import time

import gymnasium as gym
import numpy as np
import pytest

import toolbench
from toolbench.env_server.statecodec import (
    MAX_DEPTH,
    StateCodecError,
    StateTooLarge,
    decode_state,
    encode_state,
)


def round_trip(value):
    text = encode_state(value)
    back = decode_state(text)
    assert encode_state(back) == text
    return back


def test_every_data_type_comes_back_as_itself():
    state = {
        "none": None, "bools": [True, False], "ints": [0, -1, 2**100], "floats": [1.5, -0.0, 1e-300, 0.1 + 0.2],
        "text": "caf\u00e9 \ud800 lone surrogate \"quoted\" \\ [brackets] {braces}",
        "tuple": (1, (2, "x")), "set": {3, 1, 2}, "frozen": frozenset({"a", ("b", 1)}),
        "int keys": {1: "one", (2, 3): "pair", None: "none", frozenset({1}): "f"},
        "$tag-like": {"$tuple": [1, 2]}, "bytes": b"\x00\xff", "empty": [[], {}, (), set(), frozenset()],
    }  # fmt: skip
    back = round_trip(state)
    assert back == state
    assert type(back["tuple"]) is tuple and type(back["tuple"][1]) is tuple
    assert type(back["set"]) is set and type(back["frozen"]) is frozenset
    assert back["$tag-like"] == {"$tuple": [1, 2]} and type(back["$tag-like"]["$tuple"]) is list
    assert math.copysign(1, back["floats"][1]) == -1.0
    assert list(back) == list(state)  # a dict keeps its order


def test_non_finite_floats_are_tagged_and_come_back():
    back = round_trip([math.nan, math.inf, -math.inf])
    assert math.isnan(back[0]) and back[1:] == [math.inf, -math.inf]


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ({"a": [1, object()]}, r"state\['a'\]\[1\]: a builtins.object"),
        ({"n": np.float64(1.0)}, r"state\['n'\]: a numpy.float64"),
        ({"d": collections.OrderedDict()}, r"state\['d'\]: a collections.OrderedDict"),
        ((1, collections.namedtuple("P", "x")(1)), r"state\[1\]: a tests.env_server.test_statecodec.P"),
        ({"f": len}, "builtin_function_or_method"),
    ],
)
def test_anything_but_data_is_refused_naming_where_it_is(value, where):
    with pytest.raises(StateCodecError, match=where):
        encode_state(value)


def test_sets_have_one_text_whatever_the_hash_seed():
    import toolbench.env_server.statecodec as codec

    code = (  # the module alone (it needs numpy only): a fresh interpreter per hash seed, quickly
        "import importlib.util as u, sys; spec = u.spec_from_file_location('c', sys.argv[1]); "
        "c = u.module_from_spec(spec); spec.loader.exec_module(c); "
        "print(c.encode_state({'s': {'b', 'a', 'c', 1, (2, 'x')}, 'f': frozenset({'q', 'p', 'r'})}).decode())"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code, codec.__file__],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed},
        ).stdout  # fmt: skip
        for seed in ("0", "1", "2")
    }
    assert len(outputs) == 1 and '"$set":["a","b","c",1,{"$tuple":[2,"x"]}]' in outputs.pop()


def test_the_encoder_stops_at_its_budget_without_building_the_rest():
    huge = ["x" * 100] * 2_000_000  # 200 MB of text, were it all written
    began = time.perf_counter()
    with pytest.raises(StateTooLarge, match="over the limit of 65536 bytes"):
        encode_state({"rows": huge}, max_bytes=65536)
    assert time.perf_counter() - began < 0.5
    with pytest.raises(StateTooLarge):
        encode_state("y" * 70_000, max_bytes=65536)  # one string over it: refused before it is escaped


def test_nesting_is_bounded_when_writing_and_reading():
    deep: list = []
    for _ in range(MAX_DEPTH + 1):
        deep = [deep]
    with pytest.raises(StateCodecError, match="nested deeper than"):
        encode_state(deep)
    for depth in (MAX_DEPTH + 1, 5000, 200_000):  # past the codec's limit, and past the parser's own guard
        with pytest.raises(StateCodecError, match="nest"):
            decode_state(b"[" * depth + b"]" * depth)
    assert decode_state(b'["[[[[", {"a": "]]}"}]') == ["[[[[", {"a": "]]}"}]  # brackets in strings are text
    with pytest.raises(StateTooLarge):
        decode_state(b"[" + b"1," * 100 + b"1]", max_bytes=100)


def test_reading_a_state_at_its_size_limit_is_linear_and_quick():
    """A pre-scan for nesting with a regular expression held the GIL for seconds on 16 MiB of one string."""
    for text in (encode_state("x" * (16 * 2**20 - 100)), encode_state(['"\\'] * (2 * 2**20))):
        began = time.perf_counter()
        decode_state(text)
        assert time.perf_counter() - began < 1.0


@pytest.mark.parametrize(
    "text", [b"{bad", b'{"$nope": 1}', b'{"$set": [[1]]}', b'{"$dict": [[1]]}', b'{"$bytes": "!"}']
)
def test_text_not_of_the_codecs_form_is_refused(text):
    with pytest.raises(StateCodecError):
        decode_state(text)


def _specs_and_modes():
    return [(spec, mode) for spec in toolbench.TASKS for mode in spec.modes]


@pytest.mark.parametrize(("spec", "mode"), _specs_and_modes(), ids=lambda v: getattr(v, "name", v))
def test_every_env_state_round_trips_exactly_through_the_codec(spec, mode):
    """A future non-data type in any env's state fails here, loudly, rather than in a served /state."""
    env = gym.make(spec.env_id, mode=mode).unwrapped
    try:
        for moment in ("before reset", "after reset", "after steps"):
            if moment == "after reset":
                task = env.tasks[0]
                env.reset(seed=1, options={"task_id": task.id})
            elif moment == "after steps":
                for action in env.oracle_actions(task)[:3]:
                    env.step(action)
            state = env.get_state()
            text = encode_state(state)
            assert decode_state(text) == state, moment
            assert encode_state(decode_state(text)) == text, moment
    finally:
        env.close()
