"""Tabletop task sets: 7 layouts per instruction type for test (105), 10 for train (150), and
one Code-as-Policies style demonstration for each seen type (8).

Layouts are sampled per type from a seeded numpy Generator; a test or train layout is kept only
if our reference program solves it without collisions (``verify=True``; every sampled layout so
far passes, so ``verify=False`` writes the same files much faster).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from toolbench.core.seeding import stable_hash
from toolbench.mock_services.tabletop import TEMPLATE_IDS, reference_program, sample_layout
from toolbench.taskgen import Files, aligner, generator, jsonl

PER_TYPE = {"test": 7, "train": 10, "demo": 1}


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


def generate_split(split: str, verify: bool) -> list[dict[str, Any]]:
    templates = [t for t in TEMPLATE_IDS if split != "demo" or t.startswith("SI")]
    records: list[dict[str, Any]] = []
    for template_id in templates:
        rng = np.random.default_rng(stable_hash("tabletop", split, template_id))
        kept = 0
        while kept < PER_TYPE[split]:
            candidate = _record(split, len(records), sample_layout(template_id, rng))
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
    return {f"{split}.jsonl": jsonl(generate_split(split, verify)) for split in ("test", "train", "demo")}
