"""Initial layouts: sampled for a template from a numpy Generator, or read from upstream test records.

A ``Layout`` is what an episode starts from: the objects (blocks first, then bowls, as the
upstream tester lists them), their resting positions and the instruction's variables.

Sampling follows the ToolBench tester's object counts per template and Code as Policies' spawn
rule (x in [-0.2, 0.2], y in [-0.7, -0.3], centres at least 0.15 m apart), and then keeps a layout
only if its instruction is meaningful and doable:

- it is not already satisfied (the checker fails on the initial scene);
- its target is unambiguous: a block "to the left" of a bowl is at least 3 cm to the left, the
  closest block is 3 cm closer than the next, the nth block from a side is 3 cm apart from its
  neighbours in that order, the closest corner is 3 cm closer than the next;
- every place a block must go to is free: 10 cm from every block and 12 cm from every bowl
  (room for the block and the open fingers), and inside the table's inner region;
- the colours make the colour tasks non-trivial: at least two blocks share a colour with a bowl
  (SI_4, UI_1);
- a reference plan exists (UI_1's colour assignment, UI_5's line, NI_2's spare spot);
- our own types follow the same rules: the n closest blocks are 3 cm closer than the next (NI_4),
  the extreme block is 3 cm beyond the next (NI_6), fewer blocks are asked for than there are
  (NI_4, NI_7), the middle and the midpoint are free (NI_0, NI_1).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolbench.mock_services.tabletop.checkers import (
    Scene,
    block_by_distance,
    check,
    corner_by_distance,
    offset_target,
    validate_variables,
)
from toolbench.mock_services.tabletop.references import mismatched_assignment, plan_line, spare_spot
from toolbench.mock_services.tabletop.templates import (
    ATTRIBUTES,
    COUNT,
    EXTREME,
    TEMPLATES,
    instruction,
    slots,
    template,
)
from toolbench.mock_services.tabletop.world import (
    BLOCK_HALF,
    CORNERS,
    MIN_SPAWN_GAP,
    PLACES,
    SIDES,
    SPAWN_BOUNDS,
    TASK_COLORS,
    blocks_in,
    bowls_in,
    kind_of,
    validate_objects,
)

# (fewest, most) blocks and bowls per template, as the ToolBench tester draws them.
COUNTS: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {
    "SI_0": ((2, 4), (2, 4)),
    "SI_1": ((2, 4), (1, 4)),
    "SI_2": ((2, 4), (1, 3)),
    "SI_3": ((2, 4), (1, 4)),
    "SI_4": ((4, 4), (4, 4)),
    "SI_5": ((4, 4), (1, 3)),
    "SI_6": ((4, 4), (2, 3)),
    "SI_7": ((4, 4), (1, 3)),
    "UI_0": ((4, 4), (1, 3)),
    "UI_1": ((4, 4), (4, 4)),
    "UI_2": ((2, 4), (1, 3)),
    "UI_3": ((1, 4), (1, 4)),
    "UI_4": ((1, 4), (1, 3)),
    "UI_5": ((3, 4), (0, 0)),
    "UI_6": ((4, 4), (1, 3)),
    "NI_0": ((1, 4), (1, 3)),
    "NI_1": ((1, 3), (2, 3)),
    "NI_2": ((2, 4), (0, 3)),
    "NI_3": ((3, 4), (0, 2)),
    "NI_4": ((3, 4), (1, 3)),
    "NI_5": ((3, 4), (1, 3)),
    "NI_6": ((3, 4), (1, 3)),
    "NI_7": ((3, 4), (1, 3)),
}
AMBIGUITY_MARGIN = 0.03
PLACE_CLEARANCE_BLOCK = 0.10
PLACE_CLEARANCE_BOWL = 0.12
TARGET_REGION = ((-0.25, 0.25), (-0.75, -0.25))
SPAWN_TRIES = 200
LAYOUT_TRIES = 2000


@dataclass(frozen=True)
class Layout:
    """One episode's start: objects, their resting xyz, and the template's variables."""

    template_id: str
    objects: tuple[str, ...]
    positions: dict[str, tuple[float, float, float]] = field(hash=False)
    variables: dict[str, str] = field(hash=False)

    @property
    def instruction(self) -> str:
        return instruction(self.template_id, self.variables)

    @property
    def blocks(self) -> list[str]:
        return blocks_in(self.objects)

    @property
    def bowls(self) -> list[str]:
        return bowls_in(self.objects)

    def to_record(self) -> dict[str, Any]:
        """The upstream test-record shape (positions as numbers)."""
        return {
            "tester_id": self.template_id,
            "configs": {
                "block_list": self.blocks,
                "bowl_list": self.bowls,
                "position_dict": {
                    "block_pos": [list(self.positions[name]) for name in self.blocks],
                    "bowl_pos": [list(self.positions[name]) for name in self.bowls],
                },
                "instruction": self.instruction,
                "instruction_vars_dict": dict(self.variables),
            },
        }


def resting(name: str, xy: Sequence[float]) -> tuple[float, float, float]:
    return (float(xy[0]), float(xy[1]), BLOCK_HALF if kind_of(name) == "block" else 0.0)


def make_layout(
    template_id: str,
    objects: Sequence[str],
    positions: Mapping[str, Sequence[float]],
    variables: Mapping[str, str],
) -> Layout:
    """A checked Layout; z is set to the resting height (blocks 0.02, bowls 0)."""
    template(template_id)
    names = validate_objects(list(objects))
    points = {}
    for name in names:
        if name not in positions:
            raise KeyError(f"no position for {name!r}")
        value = [float(v) for v in positions[name]]
        if len(value) not in (2, 3) or not all(math.isfinite(v) for v in value):
            raise ValueError(f"position of {name!r} must be [x, y] or [x, y, z], got {positions[name]!r}")
        points[name] = resting(name, value)
    return Layout(template_id, names, points, validate_variables(template_id, variables, names))


# ---------------------------------------------------------------------- loading upstream records
def layout_from_record(record: Mapping[str, Any]) -> Layout:
    """Read ``{"tester_id": "SI_0", "configs": {"block_list", "bowl_list", "position_dict" | "positions",
    "instruction", "instruction_vars_dict"}}`` (the upstream shape; numbers may be strings).

    ``position_dict`` is ``{"block_pos": [[x, y, z], ...], "bowl_pos": [...]}`` in list order;
    ``positions`` maps names to [x, y(, z)]. Variables the tester added after sampling
    (``target_blocks``, ``..._initial_pos``) are dropped: the checker derives targets itself.
    """
    if not isinstance(record, Mapping) or "tester_id" not in record or "configs" not in record:
        raise ValueError("a Tabletop record needs 'tester_id' and 'configs'")
    configs = record["configs"]
    template_id = record["tester_id"]
    blocks, bowls = list(configs.get("block_list", [])), list(configs.get("bowl_list", []))
    objects = blocks + bowls
    if "position_dict" in configs:
        table = configs["position_dict"]
        block_pos, bowl_pos = list(table.get("block_pos", [])), list(table.get("bowl_pos", []))
        if len(block_pos) != len(blocks) or len(bowl_pos) != len(bowls):
            raise ValueError(
                f"position_dict has {len(block_pos)} block and {len(bowl_pos)} bowl positions for "
                f"{len(blocks)} blocks and {len(bowls)} bowls"
            )
        positions = dict(zip(blocks, block_pos)) | dict(zip(bowls, bowl_pos))
    elif "positions" in configs:
        positions = dict(configs["positions"])
    else:
        raise ValueError("a Tabletop record's configs need 'position_dict' or 'positions'")
    variables = {
        key: value for key, value in dict(configs.get("instruction_vars_dict", {})).items() if key in slots(template_id)
    }
    # The record's own instruction text (the upstream wording) is the caller's to show; the
    # template id and variables carry its meaning.
    return make_layout(template_id, objects, positions, variables)


# ---------------------------------------------------------------------- sampling
def _colours(rng: np.random.Generator, blocks: int, bowls: int, shared: int | None) -> tuple[list[str], list[str]]:
    block_colours = [str(c) for c in rng.choice(TASK_COLORS, size=blocks, replace=False)]
    if shared is None:
        bowl_colours = [str(c) for c in rng.choice(TASK_COLORS, size=bowls, replace=False)]
    else:
        same = [str(c) for c in rng.choice(block_colours, size=shared, replace=False)]
        others = [c for c in TASK_COLORS if c not in block_colours]
        bowl_colours = same + [str(c) for c in rng.choice(others, size=bowls - shared, replace=False)]
        bowl_colours = [bowl_colours[i] for i in rng.permutation(bowls)]
    return [f"{c} block" for c in block_colours], [f"{c} bowl" for c in bowl_colours]


def _spawn(rng: np.random.Generator, count: int) -> list[tuple[float, float]] | None:
    (x0, x1), (y0, y1) = SPAWN_BOUNDS
    points: list[tuple[float, float]] = []
    for _ in range(count):
        for _ in range(SPAWN_TRIES):
            point = (round(float(rng.uniform(x0, x1)), 4), round(float(rng.uniform(y0, y1)), 4))
            if all(math.dist(point, other) >= MIN_SPAWN_GAP for other in points):
                points.append(point)
                break
        else:
            return None
    return points


def _variables(rng: np.random.Generator, template_id: str, blocks: list[str], bowls: list[str]) -> dict[str, str]:
    chosen: dict[str, str] = {}
    for slot in slots(template_id):
        if slot == "block":
            chosen[slot] = str(rng.choice(blocks))
        elif slot == "bowl":
            chosen[slot] = str(rng.choice(bowls))
        elif slot == "object1":
            chosen[slot] = str(rng.choice([name for name in blocks + bowls if name != chosen.get("block")]))
        elif slot in ("block2", "bowl2"):
            kind = slot[:-1]
            chosen[slot] = str(
                rng.choice([name for name in (blocks if kind == "block" else bowls) if name != chosen[kind]])
            )
        elif slot == "order":
            chosen[slot] = ", ".join(str(name) for name in rng.permutation(blocks))
        else:
            chosen[slot] = str(rng.choice(ATTRIBUTES[slot]))
    return chosen


def target_places(layout: Layout) -> list[tuple[float, float]]:
    """The points blocks must be put down at, where they are fixed by the instruction."""
    v, template_id = layout.variables, layout.template_id
    if template_id in ("SI_2", "SI_5", "SI_6", "SI_7", "UI_2"):
        return [PLACES[v["corner_or_side"]]]
    if template_id == "UI_0":
        return [PLACES[name] for name in CORNERS]
    if template_id == "UI_6":
        return [PLACES[name] for name in SIDES]
    if template_id == "UI_3":
        return [tuple(offset_target(layout.positions[v["bowl"]], v["magnitude"], v["direction"]))]
    if template_id == "UI_4":
        return [PLACES[corner_by_distance(layout.positions[v["bowl"]], v["distance"])]]
    if template_id == "NI_0":
        return [PLACES["middle"]]
    if template_id == "NI_1":
        first, second = layout.positions[v["bowl"]], layout.positions[v["bowl2"]]
        return [((first[0] + second[0]) / 2, (first[1] + second[1]) / 2)]
    return []


def _separated(values: Sequence[float]) -> bool:
    ordered = sorted(values)
    return all(b - a >= AMBIGUITY_MARGIN for a, b in zip(ordered, ordered[1:]))


def _unambiguous(layout: Layout) -> bool:
    v, positions, template_id = layout.variables, layout.positions, layout.template_id
    if template_id == "SI_5":
        axis = 0 if v["direction"] in ("left", "right") else 1
        bowl = positions[v["bowl"]][axis]
        return all(abs(positions[b][axis] - bowl) >= AMBIGUITY_MARGIN for b in layout.blocks)
    if template_id == "SI_6":
        gaps = sorted(math.dist(positions[b][:2], positions[v["bowl"]][:2]) for b in layout.blocks)
        return len(gaps) < 2 or (gaps[1] - gaps[0] >= AMBIGUITY_MARGIN and gaps[-1] - gaps[-2] >= AMBIGUITY_MARGIN)
    if template_id == "SI_7":
        axis = 0 if v["direction"] in ("left", "right") else 1
        return _separated([positions[b][axis] for b in layout.blocks])
    if template_id == "UI_4":
        gaps = sorted(math.dist(PLACES[c], positions[v["bowl"]][:2]) for c in CORNERS)
        return gaps[1] - gaps[0] >= AMBIGUITY_MARGIN and gaps[-1] - gaps[-2] >= AMBIGUITY_MARGIN
    if template_id in ("NI_4", "NI_7") and COUNT[v["count"]] >= len(layout.blocks):
        return False
    if template_id == "NI_4":
        gaps = sorted(math.dist(positions[b][:2], positions[v["bowl"]][:2]) for b in layout.blocks)
        count = COUNT[v["count"]]
        return gaps[count] - gaps[count - 1] >= AMBIGUITY_MARGIN
    if template_id == "NI_6":
        direction = EXTREME[v["extreme"]]
        axis, sign = (0 if direction in ("left", "right") else 1), (-1 if direction in ("right", "top") else 1)
        ordered = sorted(sign * positions[b][axis] for b in layout.blocks)
        return ordered[1] - ordered[0] >= AMBIGUITY_MARGIN
    return True


def _places_free(layout: Layout) -> bool:
    (x0, x1), (y0, y1) = TARGET_REGION
    for place in target_places(layout):
        if not (x0 - 1e-9 <= place[0] <= x1 + 1e-9 and y0 - 1e-9 <= place[1] <= y1 + 1e-9):
            return False
        for name in layout.objects:
            limit = PLACE_CLEARANCE_BOWL if kind_of(name) == "bowl" else PLACE_CLEARANCE_BLOCK
            if math.dist(place, layout.positions[name][:2]) < limit:
                return False
    return True


def acceptable(layout: Layout) -> bool:
    """Whether a layout makes a meaningful, doable task (see the module docstring)."""
    if check(layout.template_id, layout.variables, layout.objects, layout.positions, layout.positions)[0]:
        return False
    if not _unambiguous(layout) or not _places_free(layout):
        return False
    if layout.template_id == "SI_6":
        scene = Scene(layout.objects, layout.positions, layout.positions)
        if block_by_distance(scene, layout.variables["distance"], layout.variables["bowl"]) is None:
            return False
    if layout.template_id == "UI_1":
        return mismatched_assignment(layout.blocks, layout.bowls) is not None
    if layout.template_id == "UI_5":
        return plan_line(layout.variables["line"], layout.objects, layout.positions) is not None
    if layout.template_id == "NI_2":
        return spare_spot(layout.objects, layout.positions) is not None
    return True


def sample_layout(template_id: str, rng: np.random.Generator) -> Layout:
    """A random acceptable layout for ``template_id``; the same Generator state gives the same layout."""
    template(template_id)
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"sample_layout needs a numpy Generator (np.random.default_rng(seed)), got {rng!r}")
    (fewest_blocks, most_blocks), (fewest_bowls, most_bowls) = COUNTS[template_id]
    for _ in range(LAYOUT_TRIES):
        n_blocks = int(rng.integers(fewest_blocks, most_blocks + 1))
        n_bowls = int(rng.integers(fewest_bowls, most_bowls + 1))
        shared = int(rng.integers(2, 5)) if template_id in ("SI_4", "UI_1") else None
        blocks, bowls = _colours(rng, n_blocks, n_bowls, shared)
        variables = _variables(rng, template_id, blocks, bowls)
        points = _spawn(rng, n_blocks + n_bowls)
        if points is None:
            continue
        objects = blocks + bowls
        layout = make_layout(template_id, objects, dict(zip(objects, points)), variables)
        if acceptable(layout):
            return layout
    raise RuntimeError(f"no acceptable {template_id} layout in {LAYOUT_TRIES} tries")


__all__ = [
    "COUNTS",
    "TEMPLATES",
    "Layout",
    "acceptable",
    "layout_from_record",
    "make_layout",
    "sample_layout",
    "target_places",
]
