"""The Code-as-Policies agent API over a ``TabletopSim``: the names agent programs call.

``make_agent_api(sim)`` returns a dict of plain functions (plus ``np``) for a sandbox namespace.
Every function checks its arguments and raises ValueError (wrong value or type; type errors are
``ArgumentTypeError``, both a TypeError and a ValueError) or KeyError (unknown object) with a
message an agent can act on; none of them can run for long: a pick-and-place is a bounded number
of simulation steps.

Positions are xy numpy arrays in metres (x left to right, y bottom to top). Where a function
takes a position it also takes an object's name, and ``put_first_on_second`` and
``get_obj_pos`` accept the named places (``'top left corner'``) too, as Code as Policies' did.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from toolbench.mock_services.tabletop import places
from toolbench.mock_services.tabletop.sim import TabletopSim
from toolbench.mock_services.tabletop.world import PLACES, ArgumentTypeError, as_point, in_workspace, kind_of

MAX_MESSAGES = 200
MAX_MESSAGE_CHARS = 1000
API_NAMES = (
    "get_obj_names",
    "get_obj_pos",
    "get_bbox",
    "get_color",
    "is_obj_visible",
    "denormalize_xy",
    "put_first_on_second",
    "stack_objects_in_order",
    "get_corner_name",
    "get_side_name",
    "say",
    "parse_position",
    "np",
)


class AgentAPI:
    """The functions, bound to one simulator. ``functions()`` is what agent code sees."""

    def __init__(self, sim: TabletopSim):
        self.sim = sim

    def _name(self, name: object, what: str = "object") -> str:
        if not isinstance(name, str):
            raise ArgumentTypeError(f"{what} must be an object name such as 'red block', got {name!r}")
        if name not in self.sim.objects:
            raise KeyError(f"no object named {name!r}; objects: {', '.join(self.sim.objects)}")
        return name

    def _position(self, target: object, what: str) -> np.ndarray:
        """An object's or named place's xy, or a given point (checked to lie in the workspace)."""
        if isinstance(target, str):
            if target in PLACES:
                return np.array(PLACES[target], dtype=float)
            return self.sim.get_obj_pos(self._name(target, what))[:2]
        point = as_point(target, what)
        if not in_workspace(point, margin=1e-9):
            raise ValueError(
                f"{what} {[round(float(v), 4) for v in point]} is outside the workspace x [-0.3, 0.3], y [-0.8, -0.2]"
            )
        return point

    # ------------------------------------------------------------------ perception
    def get_obj_names(self) -> list[str]:
        """The names of the objects on the table."""
        return list(self.sim.objects)

    def get_obj_pos(self, name: str) -> np.ndarray:
        """xy of an object (or a named place), as a numpy array."""
        if isinstance(name, str) and name in PLACES:
            return np.array(PLACES[name], dtype=float)
        return self.sim.get_obj_pos(self._name(name))[:2].copy()

    def get_bbox(self, name: str) -> np.ndarray:
        """The object's axis-aligned bounding box seen from above: [min_x, min_y, max_x, max_y]."""
        low, high = self.sim.get_aabb(self._name(name))
        return np.array([low[0], low[1], high[0], high[1]])

    def get_color(self, name: str) -> tuple[float, float, float, float]:
        """RGBA in [0, 1] of an object."""
        return self.sim.get_color(self._name(name))

    def is_obj_visible(self, name: str) -> bool:
        """Whether the object is on the table, in the front camera's view. False for unknown names."""
        if not isinstance(name, str):
            raise ArgumentTypeError(f"is_obj_visible expects an object name, got {name!r}")
        return bool(self.sim.is_visible(name))

    def denormalize_xy(self, point: Sequence[float]) -> np.ndarray:
        """[0, 1]^2 -> workspace xy: [0, 0] is the bottom left corner of the table, [1, 1] the top right."""
        return places.denormalize_xy(point)

    def get_corner_name(self, point: object) -> str:
        """The corner nearest to a point (or object): 'top left corner', ..."""
        return places.corner_name(self._position(point, "point"))

    def get_side_name(self, point: object) -> str:
        """The side nearest to a point (or object): 'top side', 'right side', 'bottom side' or 'left side'."""
        return places.side_name(self._position(point, "point"))

    def parse_position(self, text: str) -> np.ndarray:
        """xy of a place phrase: see ``toolbench.mock_services.tabletop.places``."""
        return places.parse_position(text, lambda name: self.sim.get_obj_pos(self._name(name))[:2])

    # ------------------------------------------------------------------ action
    def put_first_on_second(self, first: object, second: object) -> None:
        """Pick up ``first`` (a block's name or an xy point) and put it on ``second`` (a name or an xy point).

        A block put on a block is stacked on it; put on a bowl it goes into the bowl.
        """
        if isinstance(first, str) and isinstance(second, str) and first == second:
            raise ValueError(f"cannot put the {first} on itself")
        if isinstance(first, str) and first in self.sim.objects and kind_of(first) == "bowl":
            raise ValueError(f"the {first} is fixed to the table; only blocks can be picked up")
        if isinstance(first, str) and first in PLACES:
            raise ValueError(f"{first!r} is a place, not an object: say which block to pick up")
        pick = self._position(first, "the first argument")
        place = self._position(second, "the second argument")
        self.sim.pick_place(pick, place)

    def stack_objects_in_order(self, object_names: Sequence[str]) -> None:
        """Stack the objects bottom to top in the order given (the first stays where it is)."""
        if isinstance(object_names, str) or not isinstance(object_names, Sequence):
            raise ArgumentTypeError(f"stack_objects_in_order expects a list of names, got {object_names!r}")
        names = [self._name(name) for name in object_names]
        for below, above in zip(names, names[1:]):
            self.put_first_on_second(above, below)

    def say(self, message: str) -> None:
        """Say something to the user (recorded in ``sim.messages``)."""
        if not isinstance(message, str):
            raise ArgumentTypeError(f"say expects a string, got {type(message).__name__}")
        if len(self.sim.messages) < MAX_MESSAGES:
            self.sim.messages.append(message[:MAX_MESSAGE_CHARS])

    def functions(self) -> dict[str, Callable[..., Any] | Any]:
        table: dict[str, Any] = {name: getattr(self, name) for name in API_NAMES if name != "np"}
        table["np"] = np
        return table


def make_agent_api(sim: TabletopSim) -> dict[str, Any]:
    """The agent namespace: ``get_obj_names``, ``get_obj_pos``, ..., ``say``, ``parse_position`` and ``np``."""
    return AgentAPI(sim).functions()
