"""Reference programs: Code-as-Policies style Python that solves each template with the agent API.

The programs use only the names of ``make_agent_api`` (no imports, no names starting with an
underscore) so they run unchanged in the sandbox. Most read the scene through the API and would
solve any layout of their template; two need a plan that depends on the whole layout and so are
computed here and written out: UI_1 (which bowl of another colour each block takes, so no block is
left with only its own colour), UI_5 (where the line goes, so that no slot lands on a block
that has not moved yet) and NI_2 (a free spot to set one block down while the other moves).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from toolbench.mock_services.tabletop.checkers import line_axes, stack_order, validate_variables
from toolbench.mock_services.tabletop.templates import COUNT, EXTREME, NTH, instruction
from toolbench.mock_services.tabletop.world import blocks_in, bowls_in, color_of, validate_objects

LINE_STEP = 0.1  # between neighbours on a line: the open fingers (5.25 cm) clear the next block
LINE_REGION = ((-0.24, 0.24), (-0.74, -0.26))  # where line slots may go: on the table, off its very edge
SLOT_CLEARANCE_BLOCK = 0.1
SLOT_CLEARANCE_BOWL = 0.12

BLOCK_NAMES = "block_names = [name for name in get_obj_names() if 'block' in name]"


def mismatched_assignment(blocks: Sequence[str], bowls: Sequence[str]) -> list[tuple[str, str]] | None:
    """Each block paired with a distinct bowl of another colour (first solution in listed order), or None."""

    def extend(index: int, used: list[str]) -> list[str] | None:
        if index == len(blocks):
            return used
        for bowl in bowls:
            if bowl not in used and color_of(bowl) != color_of(blocks[index]):
                found = extend(index + 1, [*used, bowl])
                if found is not None:
                    return found
        return None

    chosen = extend(0, [])
    return None if chosen is None else list(zip(blocks, chosen))


def _in_region(point: np.ndarray) -> bool:
    (x0, x1), (y0, y1) = LINE_REGION
    return x0 <= point[0] <= x1 and y0 <= point[1] <= y1


def _clear(point: np.ndarray, owner: str | None, positions: Mapping[str, np.ndarray]) -> bool:
    for name, where in positions.items():
        if name == owner:
            continue
        limit = SLOT_CLEARANCE_BOWL if "bowl" in name else SLOT_CLEARANCE_BLOCK
        if math.dist(point, where) < limit:
            return False
    return True


def plan_line(
    line: str, objects: Sequence[str], positions: Mapping[str, Sequence[float]]
) -> dict[str, tuple[float, float]] | None:
    """Moves (block -> xy) that put the blocks in a ``line``, or None if none is found.

    Lines through one block that stays put are tried first (one move fewer), then lines through
    a grid of centres. Slots are 10 cm apart inside the table's inner region, and each slot is at
    least 10 cm from every block but the one it receives (12 cm from bowls), so the moves can go in
    any order without landing on or beside a block still waiting to move.
    """
    blocks = blocks_in(objects)
    where = {name: np.asarray(positions[name], dtype=float)[:2] for name in objects}
    count = len(blocks)
    candidates: list[tuple[str | None, np.ndarray]] = []
    for along, _ in line_axes(line):
        for anchor in blocks:
            for index in range(count):
                slots = [where[anchor] + (k - index) * LINE_STEP * along for k in range(count)]
                candidates.append((anchor, np.array(slots)))
    for along, _ in line_axes(line):
        for cx in np.arange(-0.2, 0.2001, 0.02):
            for cy in np.arange(-0.7, -0.2999, 0.02):
                centre = np.array([cx, cy])
                slots = [centre + (k - (count - 1) / 2) * LINE_STEP * along for k in range(count)]
                candidates.append((None, np.array(slots)))
    for anchor, slots in candidates:
        if not all(_in_region(slot) for slot in slots):
            continue
        movers = [b for b in blocks if b != anchor]
        free = [k for k in range(count) if anchor is None or not np.allclose(slots[k], where[anchor])]
        best, best_cost = None, math.inf
        for order in itertools.permutations(free, len(movers)):
            if not all(_clear(slots[k], block, where) for block, k in zip(movers, order)):
                continue
            cost = sum(math.dist(where[block], slots[k]) for block, k in zip(movers, order))
            if cost < best_cost - 1e-12:
                best, best_cost = order, cost
        if best is not None:
            return {
                block: (round(float(slots[k][0]), 4), round(float(slots[k][1]), 4)) for block, k in zip(movers, best)
            }
    return None


def spare_spot(objects: Sequence[str], positions: Mapping[str, Sequence[float]]) -> tuple[float, float] | None:
    """A free point on the table (clear of every object, as line slots are), nearest the middle first."""
    where = {name: np.asarray(positions[name], dtype=float)[:2] for name in objects}
    grid = [np.array([x, y]) for x in np.arange(-0.2, 0.2001, 0.02) for y in np.arange(-0.7, -0.2999, 0.02)]
    grid.sort(key=lambda point: (math.dist(point, (0.0, -0.5)), point[0], point[1]))
    for point in grid:
        if _in_region(point) and _clear(point, None, where):
            return round(float(point[0]), 4), round(float(point[1]), 4)
    return None


def _point(xy: Sequence[float]) -> str:
    return f"[{xy[0]:.4f}, {xy[1]:.4f}]".replace("-0.0000", "0.0000")


def reference_program(
    template_id: str,
    variables: Mapping[str, str],
    objects: Sequence[str],
    positions: Mapping[str, Sequence[float]],
) -> str:
    """Python (Code-as-Policies style) that carries out the instruction in the given layout."""
    names = validate_objects(list(objects))
    v = validate_variables(template_id, variables, names)
    lines = [f"# {instruction(template_id, v)}."]
    if template_id == "SI_0":
        lines.append(f"put_first_on_second({v['block']!r}, {v['object1']!r})")
    elif template_id == "SI_1":
        lines += [
            BLOCK_NAMES,
            "stack_top = block_names[0]",
            "for block_name in block_names[1:]:",
            "    put_first_on_second(block_name, stack_top)",
            "    stack_top = block_name",
        ]
    elif template_id == "SI_2":
        lines += [
            f"target_pos = parse_position('the {v['corner_or_side']}')",
            BLOCK_NAMES,
            "for block_name in block_names:",
            "    put_first_on_second(block_name, target_pos)",
        ]
    elif template_id == "SI_3":
        lines += [
            BLOCK_NAMES,
            "for block_name in block_names:",
            f"    put_first_on_second(block_name, {v['bowl']!r})",
        ]
    elif template_id == "SI_4":
        lines += [
            BLOCK_NAMES,
            "for block_name in block_names:",
            "    bowl_name = block_name.replace('block', 'bowl')",
            "    if bowl_name in get_obj_names():",
            "        put_first_on_second(block_name, bowl_name)",
        ]
    elif template_id == "SI_5":
        axis, compare = {"left": (0, "<"), "right": (0, ">"), "top": (1, ">"), "bottom": (1, "<")}[v["direction"]]
        lines += [
            f"bowl_pos = get_obj_pos({v['bowl']!r})",
            f"target_pos = parse_position('the {v['corner_or_side']}')",
            BLOCK_NAMES,
            f"chosen = [name for name in block_names if get_obj_pos(name)[{axis}] {compare} bowl_pos[{axis}]]",
            "for block_name in chosen:",
            "    put_first_on_second(block_name, target_pos)",
        ]
    elif template_id == "SI_6":
        pick = "argmin" if v["distance"] == "closest" else "argmax"
        lines += [
            f"bowl_pos = get_obj_pos({v['bowl']!r})",
            BLOCK_NAMES,
            "distances = [np.linalg.norm(get_obj_pos(name) - bowl_pos) for name in block_names]",
            f"block_name = block_names[int(np.{pick}(distances))]",
            f"put_first_on_second(block_name, parse_position('the {v['corner_or_side']}'))",
        ]
    elif template_id == "SI_7":
        axis = 0 if v["direction"] in ("left", "right") else 1
        sign = "-" if v["direction"] in ("right", "top") else ""
        lines += [
            BLOCK_NAMES,
            f"order = np.argsort([{sign}get_obj_pos(name)[{axis}] for name in block_names], kind='stable')",
            f"block_name = block_names[int(order[{NTH[v['nth']]}])]",
            f"put_first_on_second(block_name, parse_position('the {v['corner_or_side']}'))",
        ]
    elif template_id in ("UI_0", "UI_6"):
        group = (
            "['top left corner', 'top right corner', 'bottom left corner', 'bottom right corner']"
            if template_id == "UI_0"
            else "['top side', 'right side', 'bottom side', 'left side']"
        )
        lines += [
            f"free_places = {group}",
            BLOCK_NAMES,
            "for block_name in block_names:",
            "    block_pos = get_obj_pos(block_name)",
            "    gaps = [np.linalg.norm(parse_position(place) - block_pos) for place in free_places]",
            "    place = free_places.pop(int(np.argmin(gaps)))",
            "    put_first_on_second(block_name, parse_position(place))",
        ]
    elif template_id == "UI_1":
        pairs = mismatched_assignment(blocks_in(names), bowls_in(names))
        if pairs is None:
            raise ValueError("no assignment of blocks to bowls of other colours exists for these objects")
        lines.append("# each block goes into a bowl of another colour, one block per bowl")
        lines += [f"put_first_on_second({block!r}, {bowl!r})" for block, bowl in pairs]
    elif template_id == "UI_2":
        lines += [
            f"target_pos = parse_position('the {v['corner_or_side']}')",
            BLOCK_NAMES,
            "put_first_on_second(block_names[0], target_pos)",
            "for below, above in zip(block_names, block_names[1:]):",
            "    put_first_on_second(above, below)",
        ]
    elif template_id == "UI_3":
        lines += [
            f"target_pos = parse_position('{v['magnitude']} to the {v['direction']} of the {v['bowl']}')",
            f"put_first_on_second({v['block']!r}, target_pos)",
        ]
    elif template_id == "UI_4":
        lines += [
            f"corner_pos = parse_position('the corner {v['distance']} to the {v['bowl']}')",
            f"put_first_on_second({v['block']!r}, corner_pos)",
        ]
    elif template_id == "UI_5":
        moves = plan_line(v["line"], names, positions)
        if moves is None:
            raise ValueError(f"no {v['line']} line fits this layout")
        lines.append(f"# the line's points, {LINE_STEP * 100:.0f} cm apart, away from blocks that have not moved yet")
        lines.append("line_points = {")
        lines += [f"    {block!r}: {_point(xy)}," for block, xy in moves.items()]
        lines += ["}", "for block_name, point in line_points.items():", "    put_first_on_second(block_name, point)"]
    else:
        lines += _held_out_program(template_id, v, names, positions)
    return "\n".join(lines) + "\n"


def _held_out_program(
    template_id: str, v: Mapping[str, str], names: Sequence[str], positions: Mapping[str, Sequence[float]]
) -> list[str]:
    """The lines of an ``NI_*`` type's program (after its comment)."""
    if template_id == "NI_0":
        return [f"put_first_on_second({v['block']!r}, parse_position('middle'))"]
    if template_id == "NI_1":
        return [
            f"target_pos = (get_obj_pos({v['bowl']!r}) + get_obj_pos({v['bowl2']!r})) / 2",
            f"put_first_on_second({v['block']!r}, target_pos)",
        ]
    if template_id == "NI_2":
        spare = spare_spot(names, positions)
        if spare is None:
            raise ValueError("no free spot to set a block down while swapping")
        return [
            "# set the first block down on a free spot while the second one moves",
            f"first_pos, second_pos = get_obj_pos({v['block']!r}), get_obj_pos({v['block2']!r})",
            f"put_first_on_second({v['block']!r}, {_point(spare)})",
            f"put_first_on_second({v['block2']!r}, first_pos)",
            f"put_first_on_second({v['block']!r}, second_pos)",
        ]
    if template_id == "NI_3":
        return [f"stack_objects_in_order({stack_order(v['order'])!r})"]
    if template_id == "NI_4":
        return [
            f"bowl_pos = get_obj_pos({v['bowl']!r})",
            BLOCK_NAMES,
            "gaps = [np.linalg.norm(get_obj_pos(name) - bowl_pos) for name in block_names]",
            f"for index in np.argsort(gaps, kind='stable')[:{COUNT[v['count']]}]:",
            f"    put_first_on_second(block_names[int(index)], {v['bowl']!r})",
        ]
    if template_id == "NI_5":
        return [
            BLOCK_NAMES,
            "for block_name in block_names:",
            f"    if block_name != {v['block']!r}:",
            f"        put_first_on_second(block_name, {v['bowl']!r})",
        ]
    if template_id == "NI_6":
        direction = EXTREME[v["extreme"]]
        axis, sign = (0 if direction in ("left", "right") else 1), ("-" if direction in ("right", "top") else "")
        return [
            BLOCK_NAMES,
            f"order = np.argsort([{sign}get_obj_pos(name)[{axis}] for name in block_names], kind='stable')",
            f"put_first_on_second(block_names[int(order[0])], {v['bowl']!r})",
        ]
    if template_id == "NI_7":
        return [
            BLOCK_NAMES,
            f"for block_name in block_names[:{COUNT[v['count']]}]:",
            f"    put_first_on_second(block_name, {v['bowl']!r})",
        ]
    raise ValueError(f"no reference program for {template_id}")
