"""Shared metrics.

``dict_f1`` is ToolBench's comparison of two API responses (or two sets of criteria): a key
counts as matched when both sides have it with deeply equal values.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PRF:
    """Precision, recall and F1 of one prediction against one reference."""

    precision: float
    recall: float
    f1: float

    def as_dict(self) -> dict[str, float]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1}


ZERO = PRF(0.0, 0.0, 0.0)


def dict_f1(prediction: Mapping[Any, Any], reference: Mapping[Any, Any]) -> PRF:
    """Key-level precision/recall/F1: a key matches when both dicts hold equal values for it.

    An empty reference matches only an empty prediction (both empty is a perfect match: the
    upstream evaluator asserts the reference is never empty, we make the edge case well-defined).
    """
    if not reference and not prediction:
        return PRF(1.0, 1.0, 1.0)
    if not reference or not prediction:
        return ZERO
    overlap = sum(1 for key, value in prediction.items() if key in reference and deep_equal(value, reference[key]))
    if overlap == 0:
        return ZERO
    precision = overlap / len(prediction)
    recall = overlap / len(reference)
    return PRF(precision, recall, 2 * precision * recall / (precision + recall))


_PLAIN = (str, int, float)  # exact types: bool is not among them
_SEQUENCES = (list, tuple)


def deep_equal(a: Any, b: Any) -> bool:
    """Structural equality that, unlike ``==``, keeps ``True`` and ``1`` apart."""
    # Fast paths for JSON's own types (scoring compares whole responses); the general rules follow.
    kind_a, kind_b = type(a), type(b)
    if kind_a in _PLAIN and kind_b in _PLAIN:
        return bool(a == b)
    if kind_a is dict and kind_b is dict:
        return a.keys() == b.keys() and all(deep_equal(value, b[key]) for key, value in a.items())
    if kind_a in _SEQUENCES and kind_b in _SEQUENCES:
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(deep_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b))
    return bool(a == b)


def best_prf(scores: list[PRF]) -> tuple[int, PRF]:
    """Index and value of the best F1 among per-reference scores (first one wins ties)."""
    best_index, best = 0, ZERO
    for index, score in enumerate(scores):
        if score.f1 > best.f1:
            best_index, best = index, score
    return best_index, best


def f1_without(prediction: Mapping[Any, Any], reference: Mapping[Any, Any], shared: Collection[Any]) -> PRF:
    """The dict F1 without the ``shared`` keys (those an answer to another input has too). Where every
    reference key is shared, only the whole answer counts."""
    own_reference = {key: value for key, value in reference.items() if key not in shared}
    if not own_reference:
        return PRF(1.0, 1.0, 1.0) if deep_equal(dict(prediction), dict(reference)) else ZERO
    return dict_f1({key: value for key, value in prediction.items() if key not in shared}, own_reference)
