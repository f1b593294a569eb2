"""The Tabletop world's facts: workspace, named places, objects and their colours.

Numbers come from Code as Policies and the ToolBench tester: the workspace and the nine named
places (5 cm inside the table's edges), 4 cm blocks of 10 g, and the Tableau-10 colours CaP draws
its objects in. Coordinates are metres in the robot base frame: x runs left (-) to right (+),
y runs from the bottom edge (-0.8) to the top edge (-0.2) nearest the robot, z is up from the
table top.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

BOUNDS = ((-0.3, 0.3), (-0.8, -0.2), (0.0, 0.15))  # x, y, z
TABLE_CENTER = (0.0, -0.5)
TABLE_HALF_SIZE = 0.3
SPAWN_BOUNDS = ((-0.2, 0.2), (-0.7, -0.3))
MIN_SPAWN_GAP = 0.15

# z = 0 at every place: they are points on the table top.
PLACES: dict[str, tuple[float, float]] = {
    "top left corner": (-0.25, -0.25),
    "top side": (0.0, -0.25),
    "top right corner": (0.25, -0.25),
    "left side": (-0.25, -0.5),
    "middle": (0.0, -0.5),
    "right side": (0.25, -0.5),
    "bottom left corner": (-0.25, -0.75),
    "bottom side": (0.0, -0.75),
    "bottom right corner": (0.25, -0.75),
}
CORNERS = ("top left corner", "top right corner", "bottom left corner", "bottom right corner")
SIDES = ("top side", "right side", "bottom side", "left side")

BLOCK_SIZE = 0.04
BLOCK_HALF = BLOCK_SIZE / 2
BLOCK_MASS = 0.01

# An open bowl: a floor plate and a ring of wall segments, wide enough for a block and the open
# fingers around it (open fingers reach 5.25 cm from the gripper's centre line).
BOWL_RADIUS = 0.07
BOWL_WALL = 0.008
BOWL_FLOOR = 0.005
BOWL_HEIGHT = 0.04
BOWL_SEGMENTS = 16

# 0-255 RGB of Code as Policies' palette (Tableau 10).
_RGB255: dict[str, tuple[int, int, int]] = {
    "blue": (78, 121, 167),
    "red": (255, 87, 89),
    "green": (89, 169, 79),
    "orange": (242, 142, 43),
    "yellow": (237, 201, 72),
    "purple": (176, 122, 161),
    "pink": (255, 157, 167),
    "cyan": (118, 183, 178),
    "brown": (156, 117, 95),
    "gray": (186, 176, 172),
}
COLORS: dict[str, tuple[float, float, float, float]] = {
    name: (r / 255, g / 255, b / 255, 1.0) for name, (r, g, b) in _RGB255.items()
}
COLOR_NAMES = tuple(COLORS)
# The ToolBench templates draw from these eight (not purple, not gray).
TASK_COLORS = ("blue", "red", "green", "orange", "yellow", "pink", "cyan", "brown")
KINDS = ("block", "bowl")
ALL_BLOCKS = tuple(f"{color} block" for color in COLOR_NAMES)
ALL_BOWLS = tuple(f"{color} bowl" for color in COLOR_NAMES)
MAX_PER_KIND = 4


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong type. It is a TypeError, and also a ValueError so that callers
    handling bad input with ``except ValueError`` see every malformed argument."""


def parse_object_name(name: str) -> tuple[str, str]:
    """``"red block"`` -> ``("red", "block")``; ValueError for anything that is not colour + kind."""
    if not isinstance(name, str):
        raise ArgumentTypeError(f"an object name must be a string such as 'red block', got {type(name).__name__}")
    parts = name.split()
    if len(parts) != 2 or parts[0] not in COLORS or parts[1] not in KINDS:
        raise ValueError(
            f"{name!r} is not an object name: use '<colour> block' or '<colour> bowl' with a colour from "
            f"{', '.join(COLOR_NAMES)}"
        )
    return parts[0], parts[1]


def kind_of(name: str) -> str:
    return parse_object_name(name)[1]


def color_of(name: str) -> str:
    return parse_object_name(name)[0]


def blocks_in(names: Iterable[str]) -> list[str]:
    return [name for name in names if kind_of(name) == "block"]


def bowls_in(names: Iterable[str]) -> list[str]:
    return [name for name in names if kind_of(name) == "bowl"]


def validate_objects(names: Sequence[str]) -> tuple[str, ...]:
    """The names as a tuple, after checking they are known, distinct and at most 4 of a kind."""
    if isinstance(names, str) or not isinstance(names, Sequence):
        raise ArgumentTypeError("objects must be a list of names such as ['red block', 'blue bowl']")
    for name in names:
        parse_object_name(name)
    if len(set(names)) != len(names):
        raise ValueError(f"object names must be distinct, got {list(names)}")
    for kind in KINDS:
        count = sum(kind_of(name) == kind for name in names)
        if count > MAX_PER_KIND:
            raise ValueError(f"at most {MAX_PER_KIND} {kind}s fit the table, got {count}")
    return tuple(names)


def in_workspace(xy: Sequence[float], margin: float = 0.0) -> bool:
    (x0, x1), (y0, y1), _ = BOUNDS
    return x0 - margin <= xy[0] <= x1 + margin and y0 - margin <= xy[1] <= y1 + margin


def as_point(value: object, what: str = "point") -> np.ndarray:
    """An xy (or xyz, keeping xy) sequence of finite numbers as a float array of shape (2,)."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise ArgumentTypeError(f"{what} must be an [x, y] pair of numbers, got {value!r}")
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"{what} must be an [x, y] pair of numbers, got {value!r}") from None
    if array.shape not in ((2,), (3,)):
        raise ValueError(f"{what} must be an [x, y] pair, got shape {array.shape}: {value!r}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{what} must be finite, got {value!r}")
    return array[:2].copy()
