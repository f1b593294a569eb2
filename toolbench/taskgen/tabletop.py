"""Tabletop task sets: 7 layouts per instruction type for test (105), one Code-as-Policies style
demonstration for each seen type (8), and up to 10 layouts per seen type for train.

Train holds the seen types only (the unseen ones test generalization) and no instruction a test
task has: the program of an instruction does not depend on the scene, so a test instruction in
train would be its answer. Two seen types name no object ("stack all the blocks"), so every one
of their instructions is a test instruction and train has none of them (60 tasks in all).

Layouts are sampled per type from a seeded numpy Generator; a test or train layout is kept only
if our reference program solves it without collisions (``verify=True``; every sampled layout so
far passes, so ``verify=False`` writes the same files much faster).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolbench.core.seeding import stable_hash
from toolbench.mock_services.tabletop import TEMPLATE_IDS, layout_from_record, reference_program, sample_layout
from toolbench.taskgen import Files, aligner, generator, jsonl

PER_TYPE = {"test": 7, "train": 10, "demo": 1}
DRAWS = 200  # layouts drawn per type before a type whose instructions are all taken is left out


def _record(split: str, index: int, layout: Any) -> dict[str, Any]:
    from toolbench.envs.tabletop import prompt_for

    program = reference_program(layout.template_id, layout.variables, layout.objects, layout.positions)
    return {
        "id": f"tabletop-{split}-{index:04d}",
        "category": layout.template_id,
        "prompt": prompt_for(list(layout.objects), layout.instruction),
        "completion": [program],
        **layout.to_record(),
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


def generate_split(split: str, verify: bool, avoid: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """The split's records; none has an instruction in ``avoid``."""
    templates = [t for t in TEMPLATE_IDS if split == "test" or t.startswith("SI")]
    records: list[dict[str, Any]] = []
    for template_id in templates:
        rng = np.random.default_rng(stable_hash("tabletop", split, template_id))
        kept = 0
        for _ in range(DRAWS):
            if kept == PER_TYPE[split]:
                break
            layout = sample_layout(template_id, rng)
            if layout.instruction in avoid:
                continue
            candidate = _record(split, len(records), layout)
            if not verify or candidate["id"] in _verified([candidate]):
                records.append(candidate)
                kept += 1
    return records


@aligner("tabletop")
def alignment_records(count: int, seed: str) -> list[dict[str, Any]]:
    """Layouts of the seen instruction types only: the unseen ones test generalization."""
    seen = [t for t in TEMPLATE_IDS if t.startswith("SI")]
    generators = {t: np.random.default_rng(stable_hash("tabletop", "align", seed, t)) for t in seen}
    return [
        _record(f"align-{seed}", index, sample_layout(seen[index % len(seen)], generators[seen[index % len(seen)]]))
        for index in range(count)
    ]


@generator("tabletop")
def generate(verify: bool = True) -> Files:
    test = generate_split("test", verify)
    asked = frozenset(layout_from_record(record).instruction for record in test)
    return {
        "test.jsonl": jsonl(test),
        "train.jsonl": jsonl(generate_split("train", verify, avoid=asked)),
        "demo.jsonl": jsonl(generate_split("demo", verify)),
    }
