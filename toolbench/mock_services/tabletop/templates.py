"""The 15 instruction templates of the ToolBench Tabletop tester, 8 of our own, and the values their slots take.

The tester's ids, slots and their values are its own (``SI_*`` seen in the demonstrations, ``UI_*``
unseen); the wording is ours. Records of the original test set keep their own instruction text.
The ``NI_*`` types (a middle, a midpoint, a swap, an ordered stack, the n nearest, all but one, an
extreme, exactly n) are in no ToolBench split: they are the ``unseen`` split's, so that split
measures instructions of kinds no demonstration, training or test task shows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from toolbench.mock_services.tabletop.world import TASK_COLORS

TEMPLATES: dict[str, str] = {
    "SI_0": "Move the {block} onto the {object1}",
    "SI_1": "Make one stack of all the blocks",
    "SI_2": "Move every block to the {corner_or_side}",
    "SI_3": "Place the blocks into the {bowl}",
    "SI_4": "Place each block into the bowl of the same color",
    "SI_5": "Move every block that lies to the {direction} of the {bowl} to the {corner_or_side}",
    "SI_6": "Move the block {distance} to the {bowl} to the {corner_or_side}",
    "SI_7": "Counting from the {direction}, move the {nth} block to the {corner_or_side}",
    "UI_0": "Put each block in a different corner",
    "UI_1": "Place each block into a bowl of a different color",
    "UI_2": "Make one stack of all the blocks on the {corner_or_side}",
    "UI_3": "Move the {block} {magnitude} to the {direction} of the {bowl}",
    "UI_4": "Move the {block} to the corner {distance} to the {bowl}",
    "UI_5": "Arrange all the blocks in a {line} line",
    "UI_6": "Put each block on a different side",
    "NI_0": "Move the {block} to the middle of the table",
    "NI_1": "Put the {block} halfway between the {bowl} and the {bowl2}",
    "NI_2": "Swap the places of the {block} and the {block2}",
    "NI_3": "Stack the blocks in the order {order}, bottom to top",
    "NI_4": "Put the {count} blocks closest to the {bowl} into it",
    "NI_5": "Put every block except the {block} into the {bowl}",
    "NI_6": "Move the {extreme} block into the {bowl}",
    "NI_7": "Put exactly {count} blocks into the {bowl}",
}
TEMPLATE_IDS = tuple(TEMPLATES)
#: The ToolBench tester's types (its test set's), and ours (held out for the ``unseen`` split).
TESTER_IDS = tuple(t for t in TEMPLATE_IDS if not t.startswith("NI_"))
HELD_OUT_IDS = tuple(t for t in TEMPLATE_IDS if t.startswith("NI_"))

ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "block": tuple(f"{color} block" for color in TASK_COLORS),
    "bowl": tuple(f"{color} bowl" for color in TASK_COLORS),
    "corner_or_side": (
        "left side",
        "top left corner",
        "top side",
        "top right corner",
        "bottom right corner",
        "bottom side",
        "bottom left corner",
        "right side",
    ),
    "direction": ("top", "left", "bottom", "right"),
    "distance": ("closest", "farthest"),
    "magnitude": ("10 cm", "0.2 m"),
    "nth": ("first", "second", "third", "fourth"),
    "line": ("horizontal", "vertical", "diagonal"),
    "count": ("two", "three"),
    "extreme": ("leftmost", "rightmost", "topmost", "bottommost"),
}
MAGNITUDES = {"10 cm": 0.1, "0.2 m": 0.2}
NTH = {"first": 0, "second": 1, "third": 2, "fourth": 3}
COUNT = {"two": 2, "three": 3}
EXTREME = {"leftmost": "left", "rightmost": "right", "topmost": "top", "bottommost": "bottom"}
THRESHOLD = 0.05


def slots(template_id: str) -> tuple[str, ...]:
    """The variable names a template's text needs, in order of appearance."""
    return tuple(re.findall(r"\{(\w+)\}", template(template_id)))


def template(template_id: str) -> str:
    if not isinstance(template_id, str) or template_id not in TEMPLATES:
        raise ValueError(f"unknown Tabletop template {template_id!r}; templates: {', '.join(TEMPLATES)}")
    return TEMPLATES[template_id]


def instruction(template_id: str, variables: Mapping[str, str]) -> str:
    """The template filled with ``variables`` (extra keys are ignored)."""
    text = template(template_id)
    missing = [slot for slot in slots(template_id) if slot not in variables]
    if missing:
        raise KeyError(f"{template_id} needs the variables {', '.join(missing)}")
    return text.format(**{slot: variables[slot] for slot in slots(template_id)})
