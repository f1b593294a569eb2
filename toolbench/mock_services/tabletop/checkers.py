"""Success checks for the 15 Tabletop templates: does the final scene do what the instruction says?

``check(template_id, variables, objects, initial, final)`` takes positions as name -> xyz (a
block's centre; a bowl's base centre, z 0) and returns (success, reason). All distances are in
the table plane unless said otherwise, and the threshold is the tester's 0.05 m.

Shared definitions:

- *at* a place or point: the block's xy is within 0.05 m of it.
- *on* a block (stacked): xy within 0.05 m of that block and z one block (4 cm) higher, +-2 cm.
- *a stack*: the blocks ordered by height, the lowest resting on the table (or a bowl's floor)
  and each other block on the one below it.
- *in* a bowl: xy within 0.05 m of the bowl's centre and either lower than the bowl's rim or
  stacked on a block that is in the bowl (a pile in the bowl).
- *unmoved*: an object the instruction does not ask to move ends within 2 cm (xy) of where it
  started; every template requires this of every object it does not mention.
- directions: left/right compare x (left is smaller x), top/bottom compare y (top is larger y,
  toward the robot). Targets chosen by a property of the scene ("the block closest to ...", "the
  second block from the left", "blocks to the left of ...") are decided on the *initial*
  positions; ties go to the object listed first.

Per template (the docstring of each ``_si_*`` / ``_ui_*`` function says the same in context):

- SI_0 the block is on the object1 block, or in the object1 bowl.
- SI_1 all blocks form one stack.
- SI_2 every block is at the place (side by side or stacked, as long as each is within 0.05 m).
- SI_3 every block is in the bowl.
- SI_4 every block whose colour has a bowl is in that bowl; blocks without one stay unmoved.
- SI_5 the blocks strictly to the direction of the bowl (block x < bowl x for left, ...) at the
  start are at the place.
- SI_6 the block whose centre was closest (farthest) to the bowl's centre is at the place.
- SI_7 the nth block counted from the direction (first from the left = smallest x, from the
  right = largest x, from the top = largest y, from the bottom = smallest y) is at the place.
- UI_0 every block is at one of the four corners, no two at the same corner.
- UI_1 every block is in a bowl of another colour, no two blocks in the same bowl.
- UI_2 all blocks form one stack and every block is at the place.
- UI_3 the block is at the bowl's position moved by the magnitude (10 cm or 0.2 m) in the
  direction (left = -x, right = +x, top = +y, bottom = -y).
- UI_4 the block is at the corner nearest to (farthest from) the bowl's centre.
- UI_5 the blocks rest on the table in a line: horizontal = y values within a 0.05 m band,
  vertical = x values within a 0.05 m band, diagonal = within a 0.05 m band along a 45 degree
  line (x - y or x + y nearly constant); and spread along it, consecutive blocks at least 3.5 cm
  apart along that direction (a line, not a pile). A row along the table's edge is not diagonal.
- UI_6 every block is at one of the four sides (top, right, bottom, left), no two at the same side.

Our own types (``NI_*``, the ``unseen`` split's):

- NI_0 the block is at the middle of the table.
- NI_1 the block is at the midpoint of the two bowls.
- NI_2 each of the two blocks is where the other started.
- NI_3 all blocks form one stack in the given order, bottom first.
- NI_4 the count blocks whose centres were closest to the bowl's are in it.
- NI_5 every block but the named one is in the bowl.
- NI_6 the block that was farthest in the direction (leftmost = smallest x, ...) is in the bowl.
- NI_7 exactly count blocks are in the bowl (any of them).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from toolbench.mock_services.tabletop.templates import (
    ATTRIBUTES,
    COUNT,
    EXTREME,
    MAGNITUDES,
    NTH,
    THRESHOLD,
    slots,
    template,
)
from toolbench.mock_services.tabletop.world import (
    BLOCK_HALF,
    BLOCK_SIZE,
    BOWL_FLOOR,
    BOWL_HEIGHT,
    CORNERS,
    PLACES,
    SIDES,
    blocks_in,
    bowls_in,
    color_of,
    kind_of,
    validate_objects,
)

STACK_Z_TOLERANCE = 0.02
RESTING_Z = BLOCK_HALF + BOWL_FLOOR + 0.01  # the lowest block of a stack sits on the table or a bowl floor
UNMOVED_TOLERANCE = 0.02
LINE_SPACING = 0.035  # blocks may touch (4 cm apart) but not overlap
UNDER_THRESHOLD = f"must be under {THRESHOLD * 100:.0f} cm"
DIRECTION_VECTORS = {"left": (-1.0, 0.0), "right": (1.0, 0.0), "top": (0.0, 1.0), "bottom": (0.0, -1.0)}

Positions = Mapping[str, Sequence[float]]
Result = tuple[bool, str]


class Scene:
    """The objects of one check, with their initial and final positions as float arrays."""

    def __init__(self, objects: Sequence[str], initial: Positions, final: Positions):
        self.objects = validate_objects(list(objects))
        self.initial = {name: _xyz(initial, name, "initial") for name in self.objects}
        self.final = {name: _xyz(final, name, "final") for name in self.objects}
        self.blocks = blocks_in(self.objects)
        self.bowls = bowls_in(self.objects)

    def xy(self, name: str) -> np.ndarray:
        return self.final[name][:2]

    def distance(self, name: str, point: Sequence[float]) -> float:
        return math.dist(self.xy(name), point[:2])

    def at(self, name: str, point: Sequence[float], label: str) -> Result:
        gap = self.distance(name, point)
        if gap < THRESHOLD:
            return True, f"the {name} is at the {label}"
        return False, f"the {name} is {gap * 100:.1f} cm from the {label} ({UNDER_THRESHOLD})"

    def on_block(self, upper: str, lower: str) -> Result:
        gap = math.dist(self.xy(upper), self.xy(lower))
        rise = self.final[upper][2] - self.final[lower][2]
        if gap >= THRESHOLD:
            return False, f"the {upper} is {gap * 100:.1f} cm beside the {lower}, not on it"
        if abs(rise - BLOCK_SIZE) >= STACK_Z_TOLERANCE:
            step = f"one block ({BLOCK_SIZE * 100:.0f} cm) higher"
            return False, f"the {upper} is {rise * 100:.1f} cm above the {lower}, not {step}"
        return True, f"the {upper} is on the {lower}"

    def bowl_contents(self, bowl: str) -> list[str]:
        """The blocks in ``bowl``: resting inside it, or piled on a block that is."""
        centre = self.final[bowl]
        near = sorted(
            (b for b in self.blocks if self.distance(b, centre) < THRESHOLD),
            key=lambda b: (self.final[b][2], self.objects.index(b)),
        )
        inside: list[str] = []
        for block in near:
            if self.final[block][2] - centre[2] < BOWL_HEIGHT or any(
                self.on_block(block, below)[0] for below in inside
            ):
                inside.append(block)
        return inside

    def bowl_of(self, block: str) -> str | None:
        return next((bowl for bowl in self.bowls if block in self.bowl_contents(bowl)), None)

    def in_bowl(self, block: str, bowl: str) -> Result:
        if block in self.bowl_contents(bowl):
            return True, f"the {block} is in the {bowl}"
        gap = self.distance(block, self.final[bowl])
        if gap >= THRESHOLD:
            return False, f"the {block} is {gap * 100:.1f} cm from the centre of the {bowl} ({UNDER_THRESHOLD})"
        return False, f"the {block} is above the {bowl} but not resting in it"

    def stack(self, blocks: Sequence[str]) -> Result:
        ordered = sorted(blocks, key=lambda b: (self.final[b][2], self.objects.index(b)))
        if not ordered:
            return True, "there are no blocks"
        if self.final[ordered[0]][2] > RESTING_Z:
            return False, f"the lowest block, the {ordered[0]}, is not resting on the table"
        for lower, upper in zip(ordered, ordered[1:]):
            ok, reason = self.on_block(upper, lower)
            if not ok:
                return False, f"the blocks are not one stack: {reason}"
        return True, "the blocks are stacked: " + ", ".join(ordered) + " from the bottom"

    def unmoved(self, movable: set[str]) -> Result:
        for name in self.objects:
            if name in movable:
                continue
            shift = math.dist(self.initial[name][:2], self.final[name][:2])
            if shift > UNMOVED_TOLERANCE:
                return False, f"the {name} was not to be moved but moved {shift * 100:.1f} cm"
        return True, "nothing else moved"


def _xyz(positions: Positions, name: str, which: str) -> np.ndarray:
    if not isinstance(positions, Mapping):
        raise ValueError(f"{which} positions must be a mapping of object name -> [x, y, z]")
    if name not in positions:
        raise KeyError(f"{which} positions have no entry for {name!r}")
    try:
        value = np.asarray(positions[name], dtype=float)
    except (TypeError, ValueError):
        value = np.array([])
    if value.shape not in ((2,), (3,)) or not np.all(np.isfinite(value)):
        raise ValueError(f"{which} position of {name!r} must be [x, y] or [x, y, z], got {positions[name]!r}")
    return value if value.shape == (3,) else np.append(value, BLOCK_HALF if kind_of(name) == "block" else 0.0)


def _all(results: Sequence[Result], success: str) -> Result:
    for ok, reason in results:
        if not ok:
            return False, reason
    return True, success


def _then_unmoved(result: Result, scene: Scene, movable: set[str]) -> Result:
    if not result[0]:
        return result
    ok, reason = scene.unmoved(movable)
    return (True, result[1]) if ok else (False, reason)


def _place(variables: Mapping[str, str]) -> tuple[str, tuple[float, float]]:
    name = variables["corner_or_side"]
    return name, PLACES[name]


# ---------------------------------------------------------------------- targets decided at the start
def blocks_toward(scene: Scene, direction: str, bowl: str) -> list[str]:
    """SI_5's targets: blocks strictly to ``direction`` of ``bowl`` at the start."""
    vector = np.array(DIRECTION_VECTORS[direction])
    reference = float(scene.initial[bowl][:2] @ vector)
    return [b for b in scene.blocks if float(scene.initial[b][:2] @ vector) > reference]


def block_by_distance(scene: Scene, distance: str, bowl: str) -> str | None:
    """SI_6's target: the block whose initial centre is closest to (farthest from) the bowl's."""
    if not scene.blocks:
        return None
    gaps = [math.dist(scene.initial[b][:2], scene.initial[bowl][:2]) for b in scene.blocks]
    pick = min(gaps) if distance == "closest" else max(gaps)
    return scene.blocks[gaps.index(pick)]


def nth_block(scene: Scene, nth: str, direction: str) -> str | None:
    """SI_7's target: the nth block counted from ``direction`` at the start (None if there are fewer)."""
    axis = 0 if direction in ("left", "right") else 1
    descending = direction in ("right", "top")
    order = sorted(
        scene.blocks,
        key=lambda b: ((-1 if descending else 1) * scene.initial[b][axis], scene.objects.index(b)),
    )
    index = NTH[nth]
    return order[index] if index < len(order) else None


def corner_by_distance(point: Sequence[float], distance: str) -> str:
    """UI_4's target: the corner nearest to (farthest from) ``point``; ties go to the first listed corner."""
    gaps = [math.dist(PLACES[name], point[:2]) for name in CORNERS]
    pick = min(gaps) if distance == "closest" else max(gaps)
    return CORNERS[gaps.index(pick)]


def offset_target(bowl_xy: Sequence[float], magnitude: str, direction: str) -> np.ndarray:
    """UI_3's target point."""
    return np.asarray(bowl_xy[:2], dtype=float) + MAGNITUDES[magnitude] * np.array(DIRECTION_VECTORS[direction])


def line_axes(line: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """(direction along the line, direction across it) pairs a ``line`` may take."""
    root = 1 / math.sqrt(2)
    if line == "horizontal":
        return [(np.array([1.0, 0.0]), np.array([0.0, 1.0]))]
    if line == "vertical":
        return [(np.array([0.0, 1.0]), np.array([1.0, 0.0]))]
    return [(np.array([root, root]), np.array([root, -root])), (np.array([root, -root]), np.array([root, root]))]


def in_line(points: Sequence[Sequence[float]], line: str) -> Result:
    """Whether xy ``points`` form a ``line`` as UI_5 defines it."""
    array = np.asarray(points, dtype=float)[:, :2]
    best = ""
    for along, across in line_axes(line):
        spread = float(np.ptp(array @ across)) if len(array) else 0.0
        steps = np.diff(np.sort(array @ along))
        if spread >= THRESHOLD:
            best = best or f"the blocks stray {spread * 100:.1f} cm across the {line} line ({UNDER_THRESHOLD})"
            continue
        if len(steps) and steps.min() < LINE_SPACING:
            best = (
                f"two blocks are only {steps.min() * 100:.1f} cm apart along the line: a line needs them side by side"
            )
            continue
        return True, f"the blocks are in a {line} line"
    return False, best


# ---------------------------------------------------------------------- the 15 checks
def _si_0(scene: Scene, v: Mapping[str, str]) -> Result:
    """The block is on object1: stacked on it if it is a block, in it if it is a bowl."""
    block, target = v["block"], v["object1"]
    result = scene.on_block(block, target) if kind_of(target) == "block" else scene.in_bowl(block, target)
    return _then_unmoved(result, scene, {block})


def _si_1(scene: Scene, v: Mapping[str, str]) -> Result:
    """All blocks form one stack (anywhere)."""
    return _then_unmoved(scene.stack(scene.blocks), scene, set(scene.blocks))


def _si_2(scene: Scene, v: Mapping[str, str]) -> Result:
    """Every block is within 0.05 m of the place."""
    label, point = _place(v)
    result = _all([scene.at(b, point, label) for b in scene.blocks], f"all blocks are at the {label}")
    return _then_unmoved(result, scene, set(scene.blocks))


def _si_3(scene: Scene, v: Mapping[str, str]) -> Result:
    """Every block is in the bowl."""
    bowl = v["bowl"]
    result = _all([scene.in_bowl(b, bowl) for b in scene.blocks], f"all blocks are in the {bowl}")
    return _then_unmoved(result, scene, set(scene.blocks))


def _si_4(scene: Scene, v: Mapping[str, str]) -> Result:
    """Every block with a bowl of its colour is in that bowl; the others stay where they were."""
    pairs = [(b, f"{color_of(b)} bowl") for b in scene.blocks if f"{color_of(b)} bowl" in scene.bowls]
    result = _all([scene.in_bowl(b, bowl) for b, bowl in pairs], "every block is in the bowl of its colour")
    return _then_unmoved(result, scene, {b for b, _ in pairs})


def _si_5(scene: Scene, v: Mapping[str, str]) -> Result:
    """The blocks that started strictly to the direction of the bowl are at the place; the rest stay."""
    label, point = _place(v)
    targets = blocks_toward(scene, v["direction"], v["bowl"])
    result = _all(
        [scene.at(b, point, label) for b in targets],
        f"the blocks {v['direction']} of the {v['bowl']} are at the {label}",
    )
    return _then_unmoved(result, scene, set(targets))


def _si_6(scene: Scene, v: Mapping[str, str]) -> Result:
    """The block that started closest to (farthest from) the bowl is at the place; the rest stay."""
    label, point = _place(v)
    target = block_by_distance(scene, v["distance"], v["bowl"])
    if target is None:
        return False, "there is no block"
    return _then_unmoved(scene.at(target, point, label), scene, {target})


def _si_7(scene: Scene, v: Mapping[str, str]) -> Result:
    """The nth block from the direction (at the start) is at the place; the rest stay."""
    label, point = _place(v)
    target = nth_block(scene, v["nth"], v["direction"])
    if target is None:
        return False, f"there is no {v['nth']} block from the {v['direction']}: only {len(scene.blocks)} blocks"
    return _then_unmoved(scene.at(target, point, label), scene, {target})


def _distinct_places(scene: Scene, names: Sequence[str], what: str) -> Result:
    used: dict[str, str] = {}
    for block in scene.blocks:
        nearest = min(names, key=lambda name: (scene.distance(block, PLACES[name]), names.index(name)))
        ok, reason = scene.at(block, PLACES[nearest], nearest)
        if not ok:
            return False, f"the {block} is at no {what}: {reason}"
        if nearest in used:
            return False, f"the {used[nearest]} and the {block} are both at the {nearest}"
        used[nearest] = block
    return _then_unmoved((True, f"every block is at a different {what}"), scene, set(scene.blocks))


def _ui_0(scene: Scene, v: Mapping[str, str]) -> Result:
    """Every block at a corner, no two at the same corner."""
    return _distinct_places(scene, CORNERS, "corner")


def _ui_1(scene: Scene, v: Mapping[str, str]) -> Result:
    """Every block in a bowl of another colour, one block per bowl."""
    holder: dict[str, str] = {}
    for block in scene.blocks:
        bowl = scene.bowl_of(block)
        if bowl is None:
            return False, f"the {block} is in no bowl"
        if color_of(bowl) == color_of(block):
            return False, f"the {block} is in the bowl of its own colour"
        if bowl in holder:
            return False, f"the {holder[bowl]} and the {block} share the {bowl}"
        holder[bowl] = block
    return _then_unmoved((True, "every block is in a bowl of another colour"), scene, set(scene.blocks))


def _ui_2(scene: Scene, v: Mapping[str, str]) -> Result:
    """All blocks form one stack, and every block is within 0.05 m of the place."""
    label, point = _place(v)
    result = _all(
        [scene.stack(scene.blocks)] + [scene.at(b, point, label) for b in scene.blocks],
        f"the blocks are stacked at the {label}",
    )
    return _then_unmoved(result, scene, set(scene.blocks))


def _ui_3(scene: Scene, v: Mapping[str, str]) -> Result:
    """The block is at the bowl's position shifted by the magnitude in the direction."""
    target = offset_target(scene.xy(v["bowl"]), v["magnitude"], v["direction"])
    label = f"point {v['magnitude']} {v['direction']} of the {v['bowl']}"
    return _then_unmoved(scene.at(v["block"], target, label), scene, {v["block"]})


def _ui_4(scene: Scene, v: Mapping[str, str]) -> Result:
    """The block is at the corner nearest to (farthest from) the bowl."""
    corner = corner_by_distance(scene.xy(v["bowl"]), v["distance"])
    return _then_unmoved(scene.at(v["block"], PLACES[corner], corner), scene, {v["block"]})


def _ui_5(scene: Scene, v: Mapping[str, str]) -> Result:
    """The blocks rest on the table in a horizontal / vertical / 45 degree line, spread along it."""
    for block in scene.blocks:
        if scene.final[block][2] > RESTING_Z:
            return False, f"the {block} is not on the table (it is {scene.final[block][2] * 100:.1f} cm up)"
    result = in_line([scene.xy(b) for b in scene.blocks], v["line"])
    return _then_unmoved(result, scene, set(scene.blocks))


def _ui_6(scene: Scene, v: Mapping[str, str]) -> Result:
    """Every block at a side (top, right, bottom, left), no two at the same side."""
    return _distinct_places(scene, SIDES, "side")


def closest_blocks(scene: Scene, count: str, bowl: str) -> list[str]:
    """NI_4's targets: the ``count`` blocks whose initial centres are closest to the bowl's."""
    gaps = {b: math.dist(scene.initial[b][:2], scene.initial[bowl][:2]) for b in scene.blocks}
    return sorted(scene.blocks, key=lambda b: (gaps[b], scene.objects.index(b)))[: COUNT[count]]


def stack_order(order: str) -> list[str]:
    """NI_3's block names, bottom first, from the ``order`` variable ("red block, blue block")."""
    return [name.strip() for name in order.split(",")]


def _into(scene: Scene, blocks: Sequence[str], bowl: str, success: str) -> Result:
    return _then_unmoved(_all([scene.in_bowl(b, bowl) for b in blocks], success), scene, set(blocks))


def _ni_0(scene: Scene, v: Mapping[str, str]) -> Result:
    """The block is at the middle of the table."""
    return _then_unmoved(scene.at(v["block"], PLACES["middle"], "middle"), scene, {v["block"]})


def _ni_1(scene: Scene, v: Mapping[str, str]) -> Result:
    """The block is halfway between the two bowls."""
    middle = (scene.xy(v["bowl"]) + scene.xy(v["bowl2"])) / 2
    label = f"midpoint of the {v['bowl']} and the {v['bowl2']}"
    return _then_unmoved(scene.at(v["block"], middle, label), scene, {v["block"]})


def _ni_2(scene: Scene, v: Mapping[str, str]) -> Result:
    """Each of the two blocks is where the other one started."""
    first, second = v["block"], v["block2"]
    result = _all(
        [
            scene.at(first, scene.initial[second], f"{second}'s starting place"),
            scene.at(second, scene.initial[first], f"{first}'s starting place"),
        ],
        f"the {first} and the {second} have swapped places",
    )
    return _then_unmoved(result, scene, {first, second})


def _ni_3(scene: Scene, v: Mapping[str, str]) -> Result:
    """All blocks form one stack, in the given order from the bottom."""
    ok, reason = scene.stack(scene.blocks)
    if ok:
        wanted = stack_order(v["order"])
        ordered = sorted(scene.blocks, key=lambda b: (scene.final[b][2], scene.objects.index(b)))
        if ordered != wanted:
            ok, reason = False, f"the stack is {', '.join(ordered)} from the bottom, not {', '.join(wanted)}"
    return _then_unmoved((ok, reason), scene, set(scene.blocks))


def _ni_4(scene: Scene, v: Mapping[str, str]) -> Result:
    """The count blocks that started closest to the bowl are in it; the rest stay."""
    return _into(
        scene, closest_blocks(scene, v["count"], v["bowl"]), v["bowl"], f"the nearest blocks are in the {v['bowl']}"
    )


def _ni_5(scene: Scene, v: Mapping[str, str]) -> Result:
    """Every block but the named one is in the bowl; that one stays."""
    others = [b for b in scene.blocks if b != v["block"]]
    return _into(scene, others, v["bowl"], f"every block but the {v['block']} is in the {v['bowl']}")


def _ni_6(scene: Scene, v: Mapping[str, str]) -> Result:
    """The block that started farthest in the direction is in the bowl; the rest stay."""
    target = nth_block(scene, "first", EXTREME[v["extreme"]])
    if target is None:
        return False, "there is no block"
    return _into(scene, [target], v["bowl"], f"the {v['extreme']} block is in the {v['bowl']}")


def _ni_7(scene: Scene, v: Mapping[str, str]) -> Result:
    """Exactly count blocks are in the bowl; the blocks outside it stay where they were."""
    inside = scene.bowl_contents(v["bowl"])
    if len(inside) != COUNT[v["count"]]:
        return False, f"{len(inside)} blocks are in the {v['bowl']}, not {COUNT[v['count']]}"
    return _then_unmoved((True, f"{v['count']} blocks are in the {v['bowl']}"), scene, set(inside))


CHECKS: dict[str, Callable[[Scene, Mapping[str, str]], Result]] = {
    "SI_0": _si_0,
    "SI_1": _si_1,
    "SI_2": _si_2,
    "SI_3": _si_3,
    "SI_4": _si_4,
    "SI_5": _si_5,
    "SI_6": _si_6,
    "SI_7": _si_7,
    "UI_0": _ui_0,
    "UI_1": _ui_1,
    "UI_2": _ui_2,
    "UI_3": _ui_3,
    "UI_4": _ui_4,
    "UI_5": _ui_5,
    "UI_6": _ui_6,
    "NI_0": _ni_0,
    "NI_1": _ni_1,
    "NI_2": _ni_2,
    "NI_3": _ni_3,
    "NI_4": _ni_4,
    "NI_5": _ni_5,
    "NI_6": _ni_6,
    "NI_7": _ni_7,
}


def validate_variables(template_id: str, variables: Mapping[str, str], objects: Sequence[str]) -> dict[str, str]:
    """The template's variables, checked against its slots and the objects; extra keys are dropped."""
    if not isinstance(variables, Mapping):
        raise ValueError("variables must be a mapping of slot name -> value")
    clean = {}
    for slot in slots(template_id):
        if slot not in variables:
            raise KeyError(f"{template_id} needs the variable {slot!r}")
        value = variables[slot]
        if slot in ("block2", "bowl2"):
            kind = slot[:-1]
            if value not in objects or kind_of(value) != kind or value == clean.get(kind):
                raise ValueError(f"{slot} must name another {kind} of the objects, got {value!r}")
        elif slot == "order":
            names = stack_order(value) if isinstance(value, str) else []
            if sorted(names) != sorted(blocks_in(objects)):
                raise ValueError(f"order must list every block once, separated by commas, got {value!r}")
        elif slot in ("block", "bowl", "object1"):
            if value not in objects:
                raise ValueError(f"{slot} {value!r} is not one of the objects {list(objects)}")
            if slot != "object1" and kind_of(value) != slot:
                raise ValueError(f"{slot} must name a {slot}, got {value!r}")
        elif slot == "corner_or_side":
            if value not in PLACES:
                raise ValueError(f"corner_or_side must be a named place, got {value!r}")
        elif value not in ATTRIBUTES[slot]:
            raise ValueError(f"{slot} must be one of {', '.join(ATTRIBUTES[slot])}, got {value!r}")
        clean[slot] = value
    if "block" in clean and clean.get("object1") == clean["block"]:
        raise ValueError("object1 must be another object than the block")
    return clean


def check(
    template_id: str,
    variables: Mapping[str, str],
    objects: Sequence[str],
    initial: Positions,
    final: Positions,
) -> Result:
    """(success, reason) for a final scene under one instruction; see the module docstring."""
    template(template_id)
    scene = Scene(objects, initial, final)
    clean = validate_variables(template_id, variables, scene.objects)
    return CHECKS[template_id](scene, clean)
