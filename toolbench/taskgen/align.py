"""Alignment training data (ToolBench, Xu et al. 2023, appendix C): ``toolbench data align``.

ToolBench aligns a model to a tool with programmatically generated goals: templates filled from
value pools, each with its API-call program. A training sample is "all-shot": the tool's whole
API documentation, then several goal/action pairs of that one tool, so a model learns to read the
docs and answer in the API's own form. Here the goals come from each task's own generator with a
random stream of their own (``align-<seed>``), and any goal whose text or answer equals a test or
demonstration task's is dropped, so no test task is ever trained on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolbench.catalog import find_task
from toolbench.eval.prompts import SEPARATOR
from toolbench.taskgen import load_aligners

ROUND = 500  # goals asked of a generator at once


def alignment_samples(task: str, samples: int, shots: int = 3, seed: int = 0) -> Iterator[dict[str, Any]]:
    """``samples`` training samples of ``shots`` goal/action pairs each, for ``task``."""
    if samples < 1 or shots < 1:
        raise ValueError("--samples and --shots must be at least 1")
    spec = find_task(task)
    aligners = load_aligners()
    if spec.fixture_slug not in aligners:
        raise ValueError(f"{spec.name} has no alignment-data generator")
    env_class = spec.env_class()
    held_out = [t for split in spec.splits for t in env_class.load_split(split)]
    # A goal is held out when its text or its answer is a test's or a demonstration's: "Delete my vote
    # 1161170." is the test "Remove vote number 1161170 from my history." in other words.
    held_out_prompts = {t.prompt for t in held_out}
    held_out_actions = {reference for t in held_out for reference in t.references}
    env = env_class()
    docs = env.api_docs().strip()
    env.close()
    needed = samples * shots
    pairs: list[tuple[str, str]] = []
    seen: set[str] = set()
    idle = 0
    # Rounds of at most ROUND goals, each from its own random stream (a generator may draw without
    # replacement from a pool), until enough fresh goals are found or rounds stop adding any.
    for round_number in range(10_000):
        if len(pairs) >= needed or idle >= 5:
            break
        batch = aligners[spec.fixture_slug](min(ROUND, needed - len(pairs) + 10), f"{seed}-{round_number}")
        fresh = [
            (r["prompt"], r["completion"][0])
            for r in batch
            if r.get("completion")
            and r["prompt"] not in held_out_prompts
            and r["completion"][0] not in held_out_actions
            and r["prompt"] not in seen
        ]
        for prompt, _ in fresh:
            seen.add(prompt)
        pairs.extend(fresh)
        idle = 0 if fresh else idle + 1
    if len(pairs) < needed:
        raise ValueError(f"{spec.name}: only {len(pairs)} distinct goals for {needed} pairs; ask for fewer")
    for index in range(samples):
        chosen = pairs[index * shots : (index + 1) * shots]
        shown = "\n\n".join(f"Task: {goal}\nAction:\n{action}" for goal, action in chosen)
        yield {
            "id": f"{spec.fixture_slug}-align-{seed}-{index:05d}",
            "task": spec.name,
            "text": f"{docs}\n{SEPARATOR}\n{shown}\n",
            "goals": [goal for goal, _ in chosen],
            "actions": [action for _, action in chosen],
        }


def write_alignment_data(task: str, out: str | Path, samples: int, shots: int = 3, seed: int = 0) -> int:
    """Write the samples as JSONL; returns how many."""
    count = 0
    with open(out, "w", encoding="utf-8") as handle:
        for sample in alignment_samples(task, samples, shots, seed):
            handle.write(json.dumps(sample, ensure_ascii=False) + "\n")
            count += 1
    return count
