"""Place phrases -> table points, deterministically (Code as Policies asked a language model).

``parse_position`` understands, case-insensitively and with or without "the", "a point":

- a named place: ``top left corner``, ``top side``, ``middle`` (also ``center``/``centre``),
  ``... of the table``;
- an object: ``the blue bowl`` (its position now);
- a point: ``(0.1, -0.5)`` or ``0.1, -0.5``;
- an offset: ``10cm left of the blue bowl``, ``0.2 m to the top of the red bowl``, ``5 mm
  above the middle``; without a distance (``left of the red block``) it is 10 cm. Left and right
  move along x (left is -x); top/above/up and bottom/below/down along y (top is +y, toward the
  robot);
- a midpoint: ``between the red block and the blue bowl``;
- an extreme: ``the corner closest to the blue bowl``, ``the farthest side from the red
  block`` (closest/nearest, farthest/furthest; to/from), among the four corners or four sides.

Every reference may itself be any of these forms.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

import numpy as np

from toolbench.mock_services.tabletop.world import BOUNDS, CORNERS, PLACES, SIDES, ArgumentTypeError, as_point

DEFAULT_OFFSET = 0.1
MAX_TEXT = 300
UNITS = {
    "m": 1.0,
    "meter": 1.0,
    "meters": 1.0,
    "metre": 1.0,
    "metres": 1.0,
    "cm": 0.01,
    "centimeter": 0.01,
    "centimeters": 0.01,
    "centimetre": 0.01,
    "centimetres": 0.01,
    "mm": 0.001,
    "millimeter": 0.001,
    "millimeters": 0.001,
    "millimetre": 0.001,
    "millimetres": 0.001,
}
DIRECTIONS = {
    "left": (-1.0, 0.0),
    "right": (1.0, 0.0),
    "top": (0.0, 1.0),
    "above": (0.0, 1.0),
    "up": (0.0, 1.0),
    "bottom": (0.0, -1.0),
    "below": (0.0, -1.0),
    "down": (0.0, -1.0),
}
_SYNONYMS = {"center": "middle", "centre": "middle", "middle of the table": "middle", "center of the table": "middle"}
_UNIT = "|".join(sorted(UNITS, key=len, reverse=True))
_DIRECTION = "|".join(DIRECTIONS)
_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)"
_OFFSET = re.compile(
    rf"^(?:(?P<amount>{_NUMBER})\s*(?P<unit>{_UNIT})\s+)?(?:to\s+(?:the\s+)?)?(?P<direction>{_DIRECTION})"
    rf"(?:\s+side)?(?:\s+(?:of|from))?\s+(?P<reference>.+)$"
)
_BETWEEN = re.compile(
    r"^(?:(?:the\s+)?middle\s+of\s+|(?:a\s+point\s+|the\s+point\s+)?between\s+)(?P<a>.+?)\s+and\s+(?P<b>.+)$"
)
_EXTREME_AFTER = re.compile(
    r"^(?P<group>corner|side)\s+(?:that\s+is\s+)?(?P<which>closest|nearest|farthest|furthest)\s+(?:to|from)\s+(?P<reference>.+)$"
)
_EXTREME_BEFORE = re.compile(
    r"^(?P<which>closest|nearest|farthest|furthest)\s+(?P<group>corner|side)\s+(?:to|from)\s+(?P<reference>.+)$"
)
_POINT = re.compile(rf"^[\[(]?\s*(?P<x>{_NUMBER})\s*,\s*(?P<y>{_NUMBER})\s*[\])]?$")

HELP = (
    "say a named place ('top left corner', 'left side', 'middle'), an object ('the blue bowl'), an offset "
    "('10cm left of the blue bowl', '0.2 m to the top of the red bowl'), a midpoint ('between the red block and "
    "the blue bowl') or an extreme ('the corner closest to the blue bowl')"
)


def _normalise(text: str) -> str:
    text = re.sub(r"(?<=[a-z])[-_](?=[a-z])", " ", text.lower())
    text = re.sub(r"\s+", " ", text).strip().rstrip(".").strip()
    for prefix in (
        "a point ",
        "the point ",
        "point ",
        "the position of ",
        "position of ",
        "the position ",
        "the ",
        "a ",
    ):
        if text.startswith(prefix) and not _POINT.match(text):
            text = text[len(prefix) :]
    return text.strip()


def _place(text: str) -> tuple[float, float] | None:
    text = _SYNONYMS.get(text, text)
    text = text.removesuffix(" of the table").removesuffix(" of table")
    text = _SYNONYMS.get(text, text)
    return PLACES.get(text)


def corner_name(point: Sequence[float]) -> str:
    """The nearest of the four corners to ``point``."""
    return _nearest(point, CORNERS)


def side_name(point: Sequence[float]) -> str:
    """The nearest of the four sides (top, right, bottom, left) to ``point``."""
    return _nearest(point, SIDES)


def _nearest(point: Sequence[float], names: Sequence[str]) -> str:
    xy = as_point(point)
    return min(names, key=lambda name: (math.dist(xy, PLACES[name]), names.index(name)))


def _extreme(group: str, which: str, reference: np.ndarray) -> np.ndarray:
    names = CORNERS if group == "corner" else SIDES
    distances = [math.dist(reference, PLACES[name]) for name in names]
    pick = min if which in ("closest", "nearest") else max
    index = distances.index(pick(distances))
    return np.array(PLACES[names[index]], dtype=float)


def parse_position(text: str, locate: Callable[[str], np.ndarray], depth: int = 0) -> np.ndarray:
    """The xy point ``text`` describes; ``locate(name)`` gives an object's xy (KeyError if unknown)."""
    if not isinstance(text, str):
        raise ArgumentTypeError(f"parse_position expects a phrase such as 'the top left corner', got {text!r}")
    if len(text) > MAX_TEXT or depth > 4:
        raise ValueError(f"position phrase too long or too nested: {text[:80]!r}")
    phrase = _normalise(text)
    if not phrase:
        raise ValueError(f"parse_position got an empty phrase; {HELP}")
    place = _place(phrase)
    if place is not None:
        return np.array(place, dtype=float)
    match = _POINT.match(phrase)
    if match:
        return np.array([float(match["x"]), float(match["y"])])
    match = _EXTREME_AFTER.match(phrase) or _EXTREME_BEFORE.match(phrase)
    if match:
        reference = parse_position(match["reference"], locate, depth + 1)
        return _extreme(match["group"], match["which"], reference)
    match = _OFFSET.match(phrase)
    if match:
        reference = parse_position(match["reference"], locate, depth + 1)
        amount = float(match["amount"]) * UNITS[match["unit"]] if match["amount"] else DEFAULT_OFFSET
        return reference + amount * np.array(DIRECTIONS[match["direction"]])
    match = _BETWEEN.match(phrase)
    if match:
        first = parse_position(match["a"], locate, depth + 1)
        second = parse_position(match["b"], locate, depth + 1)
        return (first + second) / 2
    if re.fullmatch(r"[a-z]+ (block|bowl)s?", phrase):
        return np.array(locate(phrase), dtype=float)
    raise ValueError(f"cannot parse the position {text!r}; {HELP}")


def denormalize_xy(point: object) -> np.ndarray:
    """[0, 1]^2 (0, 0 bottom left; 1, 1 top right) -> workspace xy; also an (n, 2) array of points."""
    if isinstance(point, (str, bytes)) or not hasattr(point, "__len__"):
        raise ArgumentTypeError(f"denormalize_xy expects [u, v] with 0 <= u, v <= 1, got {point!r}")
    try:
        array = np.asarray(point, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"denormalize_xy expects [u, v] numbers, got {point!r}") from None
    if array.ndim not in (1, 2) or array.shape[-1] != 2:
        raise ValueError(f"denormalize_xy expects [u, v] or a list of [u, v], got shape {array.shape}")
    if not np.all(np.isfinite(array)) or np.any(array < 0) or np.any(array > 1):
        raise ValueError(f"normalized coordinates must lie in [0, 1], got {point!r}")
    (x0, x1), (y0, y1), _ = BOUNDS
    return np.array([x0, y0]) + array * np.array([x1 - x0, y1 - y0])
