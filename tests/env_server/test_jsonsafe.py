"""The explicit JSON form of an env's info (toolbench.core.jsonsafe)."""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from toolbench.core.jsonsafe import to_json_safe


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: np.int64
    y: tuple[float, float]


def test_numpy_scalars_become_python_numbers_of_the_same_value():
    value = to_json_safe({"i": np.int64(7), "f": np.float32(0.5), "b": np.bool_(True), "u": np.uint8(255)})
    assert value == {"i": 7, "f": 0.5, "b": True, "u": 255}
    assert [type(value[k]) for k in "ifbu"] == [int, float, bool, int]


def test_containers_become_lists_and_string_keyed_dicts():
    value = to_json_safe({1: (1, 2), (3, 4): np.arange(3), "nested": [{np.int64(2): [np.float64(1.5)]}]})
    assert value == {"1": [1, 2], "(3, 4)": [0, 1, 2], "nested": [{"2": [1.5]}]}
    assert to_json_safe({True: 1, None: 2}) == {"true": 1, "null": 2}  # as json.dumps writes such keys


def test_non_finite_floats_become_null_so_strict_parsers_read_the_text():
    value = to_json_safe({"nan": float("nan"), "inf": np.float64("inf"), "neg": -math.inf, "ok": 1.25})
    assert value == {"nan": None, "inf": None, "neg": None, "ok": 1.25}
    json.dumps(value, allow_nan=False)


def test_dataclasses_enums_and_bytes_have_a_stated_form():
    assert to_json_safe(Point(np.int64(1), (2.0, 3.0))) == {"x": 1, "y": [2.0, 3.0]}
    assert to_json_safe([Colour.RED, b"caf\xc3\xa9", b"\xff"]) == ["red", "café", "\\xff"]


def test_unknown_types_are_an_error_naming_where_they_were():
    with pytest.raises(TypeError, match=r"info\['metrics'\]\[1\]: a object has no JSON form"):
        to_json_safe({"metrics": [1, object()]}, "info")


def test_sets_have_one_order_whatever_the_hash_seed():
    code = "from toolbench.core.jsonsafe import to_json_safe; print(to_json_safe({'s': {'b', 'a', 'c', 1, (2, 'x')}}))"
    for seed in ("0", "1"):
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                env={"PYTHONHASHSEED": seed})  # fmt: skip
        assert result.stdout == "{'s': ['a', 'b', 'c', 1, [2, 'x']]}\n"  # sorted by JSON text: '"a"' < '1' < '['
