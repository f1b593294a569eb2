"""The hub's copy of an answer: equal to a deep copy, and sharing nothing mutable with the original."""

import copy
import random

from toolbench.mock_services.rapidapi.hub import json_copy


def _value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return rng.choice(["", "text", "é", None, True, False])
    if kind in (1, 2):
        return rng.choice([0, -3, 2**70, 1.5, float("inf")])
    if kind == 3:
        return (1, [2])  # not JSON-shaped: deep-copied
    if kind == 4:
        return {1, 2}
    if kind in (5, 6):
        return {f"k{n}": _value(rng, depth + 1) for n in range(rng.randrange(4))}
    return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]


def _mutables(value):
    if isinstance(value, (dict, list, set, tuple)):
        yield value
        items = value.values() if isinstance(value, dict) else value
        for item in items:
            yield from _mutables(item)


def test_a_copy_equals_a_deep_copy_and_shares_no_container():
    rng = random.Random(0)
    for _ in range(300):
        original = _value(rng)
        copied = json_copy(original)
        assert copied == copy.deepcopy(original)
        originals = {id(x) for x in _mutables(original) if isinstance(x, (dict, list, set))}
        assert not [x for x in _mutables(copied) if isinstance(x, (dict, list, set)) and id(x) in originals]
