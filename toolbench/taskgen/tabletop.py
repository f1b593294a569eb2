"""Tabletop task sets: 7 layouts per tester instruction type for test (105), one Code-as-Policies
style demonstration for each seen type (8), train (the seen types in more wordings) and unseen
(instruction types of our own, ``NI_*``, in wordings of their own).

Test records carry ``template`` (the instruction type) and ``type_seen`` (whether demonstrations
and train show that type: the ToolBench paper reports its seen and unseen types apart). Train holds
the seen types ``SI_*`` only; unseen holds the ``NI_*`` types, which no demo, train, test or
alignment task has, in sentences with synonyms, other number formats and asides.

The program of an instruction does not depend on the scene, so train never repeats a test task's
instruction: for a type with variables it draws no variables a test task has; the three types
with at most 8 instructions (SI_1, SI_2, SI_4) appear in train only in other wordings than the test
set's (their one program per instruction is also their demonstration's).

Layouts are sampled per type from a seeded numpy Generator. Test and demo layouts are kept only if
our reference program solves them without collisions (``verify=True``); train and unseen records
are made without the simulator (so a trainer gets more quickly), and ``verify=True`` checks that
every unseen reference and every tenth train reference succeeds without a collision, failing
otherwise (every sampled layout so far passes, so ``verify=False`` writes the same files).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from toolbench.core.seeding import stable_hash
from toolbench.mock_services.tabletop import layout_from_record, reference_program, sample_layout
from toolbench.mock_services.tabletop.checkers import Scene, blocks_toward
from toolbench.mock_services.tabletop.layouts import Layout
from toolbench.mock_services.tabletop.templates import COUNT, HELD_OUT_IDS, TEMPLATES, TESTER_IDS
from toolbench.mock_services.tabletop.world import TASK_COLORS, color_of
from toolbench.taskgen import (
    SHIPPED_SEED,
    SHIPPED_SIZES,
    Files,
    aligner,
    generator,
    jsonl,
    near_duplicates,
    rng_for,
    split_maker,
    spread,
)

PER_TYPE = {"test": 7, "demo": 1}
DRAWS = 200  # layouts drawn per type before a type whose instructions are all taken is left out
SEEN_IDS = tuple(t for t in TESTER_IDS if t.startswith("SI_"))
#: Record keys whose values ``unseen`` holds out: its instruction types are in no other split.
HELD_OUT_KEYS = ("tester_id",)
HAS_DIFFICULTY = True
FEW_INSTRUCTIONS = ("SI_1", "SI_2", "SI_4")  # at most 8 instructions each: all may be test ones
VERIFY_EVERY = 10  # verify=True runs every tenth train reference (all of them take many minutes)

#: Train's wordings of each seen type; the first is the test set's (the template's own text).
TRAIN_PHRASES: dict[str, list[str]] = {
    "SI_0": [
        "Put the {block} on the {object1}",
        "Place the {block} on top of the {object1}",
        "Pick up the {block} and set it on the {object1}",
    ],
    "SI_1": [
        "Stack all the blocks on top of each other",
        "Pile every block into a single stack",
        "Put all the blocks in one tower",
    ],
    "SI_2": ["Put all the blocks at the {corner_or_side}", "Gather the blocks at the {corner_or_side}"],
    "SI_3": ["Put all the blocks in the {bowl}", "Drop every block into the {bowl}"],
    "SI_4": [
        "Put every block in the bowl that matches its color",
        "Sort the blocks into the bowls of their own colors",
    ],
    "SI_5": [
        "Put the blocks that are to the {direction} of the {bowl} at the {corner_or_side}",
        "Take all blocks {direction} of the {bowl} to the {corner_or_side}",
    ],
    "SI_6": [
        "Put the block {distance} to the {bowl} at the {corner_or_side}",
        "Take the block that is {distance} to the {bowl} to the {corner_or_side}",
    ],
    "SI_7": [
        "Move the {nth} block from the {direction} to the {corner_or_side}",
        "Take the {nth} block counting from the {direction} and put it at the {corner_or_side}",
    ],
}

#: Unseen's wordings of each held-out type. Slots: ``{block}``/``{block2}``/``{bowl}``/``{bowl2}`` are
#: noun phrases ("the red cube"), ``{count}`` a number in some form, ``{extreme}`` a direction phrase,
#: ``{order}`` the stacking order in words.
UNSEEN_PHRASES: dict[str, list[str]] = {
    "NI_0": [
        "Bring {block} to the center of the table",
        "{Block} belongs in the very centre of the workspace, so put it there",
        "Place {block} right in the middle",
    ],
    "NI_1": [
        "Set {block} down midway between {bowl} and {bowl2}",
        "Find the point exactly between {bowl} and {bowl2} and move {block} there",
        "{Block} should end up equally far from {bowl} and {bowl2}, on the line that joins them",
    ],
    "NI_2": [
        "Exchange {block} with {block2}",
        "{Block} and {block2} should trade spots",
        "Put {block} where {block2} is now, and {block2} where {block} is now",
    ],
    "NI_3": [
        "Build a tower: {order}",
        "Pile up every block so that, from the base up, it reads {order}",
        "I want a single column of blocks, {order}",
    ],
    "NI_4": [
        "Which {count} blocks are nearest {bowl}? Drop them in it",
        "Fill {bowl} with the {count} blocks sitting closest to it",
        "Take the {count} blocks next to {bowl}, the nearest ones, and put them inside",
    ],
    "NI_5": [
        "All blocks go into {bowl}, apart from {block}",
        "Leave {block} alone and put the rest of the blocks in {bowl}",
        "Everything but {block} should end up inside {bowl}",
    ],
    "NI_6": [
        "Drop the block lying farthest {extreme} into {bowl}",
        "Whichever block is farthest {extreme} goes into {bowl}",
        "Look for the block that is the furthest {extreme} and put it in {bowl}",
    ],
    "NI_7": [
        "Fill {bowl} with {count} blocks, any you like",
        "{Bowl} should hold {count} blocks, no more and no fewer",
        "Choose {count} blocks and put them in {bowl}; the rest stay put",
    ],
}
EXTREME_WORDS = {"leftmost": "to the left", "rightmost": "to the right", "topmost": "up", "bottommost": "down"}
COUNT_WORDS = {"two": ["two", "2"], "three": ["three", "3"]}
#: Where no article comes before the count ("a pair of blocks", not "the a pair of blocks").
GROUP_WORDS = {"two": "a pair of", "three": "a trio of"}
KIND_WORDS = {"block": ["block", "cube"], "bowl": ["bowl", "dish"]}
#: Asides that mention objects the instruction is not about (absent colours or untouched objects).
ASIDES = [
    "My {colour} {kind} is in the other room, so don't look for it.",
    "Ignore the {other}.",
    "The {other} is only there for decoration.",
    "Yesterday I asked about the {colour} {kind}; today it's a different job.",
]


def _record(split: str, index: int, layout: Layout, text: str | None = None) -> dict[str, Any]:
    """A task record; ``text`` is the instruction as worded (the template's own text by default)."""
    from toolbench.envs.tabletop import prompt_for

    program = reference_program(layout.template_id, layout.variables, layout.objects, layout.positions)
    record = layout.to_record()
    if text is not None:
        record["configs"]["instruction"] = text
    return {
        "id": f"tabletop-{split}-{index:04d}",
        "category": layout.template_id,
        "prompt": prompt_for(list(layout.objects), text or layout.instruction),
        "completion": [program],
        **record,
        "template": layout.template_id,
    }


def _verified(records: list[dict[str, Any]]) -> set[str]:
    """Ids of the records whose reference succeeds without collisions."""
    from toolbench.core.tasks import tasks_from_records
    from toolbench.envs.tabletop import TabletopEnv

    env = TabletopEnv(tasks=tasks_from_records(records, "tabletop"))
    good = set()
    for task in env.tasks:
        env.reset(options={"task_id": task.id})
        _, reward, _, _, info = env.step(task.references[0])
        if reward == 1.0 and info["collisions"] == 0:
            good.add(task.id)
    env.close()
    return good


def generate_split(split: str, verify: bool) -> list[dict[str, Any]]:
    """The test or demo records: ``PER_TYPE`` verified layouts of each tester type (demo: the seen ones)."""
    templates = [t for t in TESTER_IDS if split == "test" or t.startswith("SI")]
    records: list[dict[str, Any]] = []
    for template_id in templates:
        rng = np.random.default_rng(stable_hash("tabletop", split, template_id))
        kept = 0
        for _ in range(DRAWS):
            if kept == PER_TYPE[split]:
                break
            candidate = _record(split, len(records), sample_layout(template_id, rng))
            if not verify or candidate["id"] in _verified([candidate]):
                records.append(candidate)
                kept += 1
    if split == "test":
        records = [{**record, "type_seen": record["template"] in SEEN_IDS} for record in records]
    return records


def moves_needed(layout: Layout) -> int:
    """Pick-and-place moves the instruction takes at least: the task's difficulty."""
    v, blocks, template_id = layout.variables, layout.blocks, layout.template_id
    if template_id in ("SI_1", "NI_3"):
        return len(blocks) - 1
    if template_id in ("SI_2", "SI_3"):
        return len(blocks)
    if template_id == "SI_4":
        return sum(f"{color_of(b)} bowl" in layout.bowls for b in blocks)
    if template_id == "SI_5":
        return len(blocks_toward(Scene(layout.objects, layout.positions, layout.positions), v["direction"], v["bowl"]))
    if template_id == "NI_2":
        return 3
    if template_id in ("NI_4", "NI_7"):
        return COUNT[v["count"]]
    if template_id == "NI_5":
        return len(blocks) - 1
    return 1


# ---------------------------------------------------------------------- train and unseen
def _noun(rng: random.Random, name: str) -> str:
    colour, kind = name.split()
    return f"the {colour} {rng.choice(KIND_WORDS[kind])}"


def _order_words(rng: random.Random, names: list[str]) -> str:
    colours = [name.split()[0] for name in names]
    style = rng.randrange(3)
    if style == 0:
        return f"{colours[0]} at the bottom, then " + ", then ".join(colours[1:]) + " on top"
    if style == 1:
        return ", ".join(colours) + " (bottom to top)"
    return f"with {colours[-1]} on top, resting on " + ", on ".join(reversed(colours[:-1]))


def _unseen_text(rng: random.Random, layout: Layout) -> tuple[int, str]:
    """(wording index, instruction) for a held-out type, with an aside half of the time."""
    v = layout.variables
    index = rng.randrange(len(UNSEEN_PHRASES[layout.template_id]))
    values = {slot: _noun(rng, v[slot]) for slot in ("block", "block2", "bowl", "bowl2") if slot in v}
    values.update({slot.capitalize(): phrase[0].upper() + phrase[1:] for slot, phrase in values.items()})
    if "count" in v:
        bare = layout.template_id == "NI_7"
        values["count"] = rng.choice(COUNT_WORDS[v["count"]] + ([GROUP_WORDS[v["count"]]] if bare else []))
    if "extreme" in v:
        values["extreme"] = EXTREME_WORDS[v["extreme"]]
    if "order" in v:
        values["order"] = _order_words(rng, [name.strip() for name in v["order"].split(",")])
    text = UNSEEN_PHRASES[layout.template_id][index].format(**values)
    if rng.random() < 0.5:
        named = {value for key, value in v.items() if key in ("block", "block2", "bowl", "bowl2")}
        # Other bowls are never involved; other blocks only where the instruction leaves them be.
        movable = layout.template_id in ("NI_0", "NI_1", "NI_2")
        others = [name for name in layout.objects if name not in named and (movable or "bowl" in name)]
        # Purple and gray are never on the table, so some colour is always absent.
        absent = [c for c in ("purple", "gray", *TASK_COLORS) if not any(name.startswith(c) for name in layout.objects)]
        aside = rng.choice(ASIDES if others else ASIDES[:1] + ASIDES[3:])
        aside = aside.format(
            colour=rng.choice(absent), kind=rng.choice(["block", "bowl"]), other=rng.choice(others or ["table"])
        )
        text = f"{text}. {aside}" if rng.random() < 0.5 else f"{aside} {text}"
    return index, text.rstrip(".")


def _train_text(rng: random.Random, layout: Layout) -> tuple[int, str]:
    frames = [TEMPLATES[layout.template_id], *TRAIN_PHRASES[layout.template_id]]
    first = 1 if layout.template_id in FEW_INSTRUCTIONS else 0
    index = rng.randrange(first, len(frames))
    return index, frames[index].format(**layout.variables)


def _instruction_key(layout: Layout) -> tuple[str, tuple[tuple[str, str], ...]]:
    return layout.template_id, tuple(sorted(layout.variables.items()))


@split_maker("tabletop")
def make_split(split: str, size: int, seed: int) -> list[dict[str, Any]]:
    """``size`` records of ``train`` (seen types, more wordings, no test instruction) or ``unseen``
    (held-out types), made without the simulator."""
    if split not in ("train", "unseen"):
        raise ValueError(f"no generated split {split!r}")
    test = generate_split("test", verify=False)
    demo = generate_split("demo", verify=False)
    types = HELD_OUT_IDS if split == "unseen" else SEEN_IDS
    taken = {_instruction_key(layout_from_record(r)) for r in test if r["template"] not in FEW_INSTRUCTIONS}
    held = [r["prompt"] for r in test + demo]
    if split == "train":
        held += [r["prompt"] for r in make_split("unseen", SHIPPED_SIZES["unseen"], SHIPPED_SEED)]
    layouts = {t: np.random.default_rng(stable_hash("tabletop", split, seed, t)) for t in types}
    wording = rng_for("tabletop", split, seed, "wording")
    records: list[dict[str, Any]] = []
    for template_id in spread(size, list(types)):
        for _ in range(DRAWS):
            layout = sample_layout(template_id, layouts[template_id])
            if split == "train" and _instruction_key(layout) in taken:
                continue
            index, text = (_unseen_text if split == "unseen" else _train_text)(wording, layout)
            record = _record(split, len(records), layout, text)
            if not near_duplicates([record["prompt"]], held):
                break
        else:
            raise RuntimeError(f"no new {template_id} task in {DRAWS} draws")
        records.append({**record, "phrasing": index, "difficulty": moves_needed(layout)})
    return records


@aligner("tabletop")
def alignment_records(count: int, seed: str) -> list[dict[str, Any]]:
    """Layouts of the seen instruction types only: the unseen ones test generalization."""
    generators = {t: np.random.default_rng(stable_hash("tabletop", "align", seed, t)) for t in SEEN_IDS}
    types = [SEEN_IDS[index % len(SEEN_IDS)] for index in range(count)]
    return [_record(f"align-{seed}", index, sample_layout(t, generators[t])) for index, t in enumerate(types)]


def check_references(records: list[dict[str, Any]]) -> None:
    """Every reference succeeds without a collision (a sampling or reference bug otherwise)."""
    failed = sorted({r["id"] for r in records} - _verified(records))
    if failed:
        raise AssertionError(f"references that fail or collide: {failed[:10]}")


@generator("tabletop")
def generate(verify: bool = True) -> Files:
    train = make_split("train", SHIPPED_SIZES["train"], SHIPPED_SEED)
    unseen = make_split("unseen", SHIPPED_SIZES["unseen"], SHIPPED_SEED)
    if verify:
        check_references(unseen + train[::VERIFY_EVERY])
    return {
        "test.jsonl": jsonl(generate_split("test", verify)),
        "train.jsonl": jsonl(train),
        "unseen.jsonl": jsonl(unseen),
        "demo.jsonl": jsonl(generate_split("demo", verify)),
    }
