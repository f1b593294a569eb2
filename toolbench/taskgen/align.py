"""Alignment training data (ToolBench, Xu et al. 2023, appendix C): ``toolbench data align``.

A training sample is "all-shot" (Figure 6): the tool's whole API documentation, then several
goal/action pairs of that one tool back to back, with the loss on every action (``action_spans``
gives each action's characters in ``text``). How the pairs are made follows C.1:

- OpenWeather, the Cat API, Home Search and Trip Booking: goals filled from templates and value
  pools, here each task's own generator with a random stream of its own (``<seed>-<round>``); a
  goal whose text or answer equals a test or demonstration task's is dropped;
- Google Sheets, VirtualHome, WebShop and Tabletop: the task's demonstration examples (its demo
  split, with its train split when it has one) formatted directly, each sample a seeded draw of
  distinct examples, every example used before any repeats; an example equal to a test task is
  dropped.

Either way no test task is ever trained on. By default a task gets Table 9's number of samples
(templates x repeat); tasks Table 9 does not list get ``OTHER_SAMPLES``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolbench.catalog import TaskSpec, find_task
from toolbench.prompting import SEPARATOR
from toolbench.taskgen import load_aligners

ROUND = 500  # goals asked of a generator at once

#: Table 9: (templates, repeat) per task; templates x repeat is its number of training samples.
TABLE9: dict[str, tuple[int, int]] = {
    "OpenWeather": (90, 20),
    "CatAPI": (40, 45),
    "HomeSearch": (100, 18),
    "TripBooking": (30, 60),
    "GoogleSheets": (1, 118),
    "VirtualHome": (1, 512),
    "WebShop": (2, 900),
    "Tabletop": (1, 74),
}
#: C.1: the tasks whose samples are their demonstration examples, formatted directly.
FROM_DEMONSTRATIONS = frozenset({"GoogleSheets", "VirtualHome", "WebShop", "Tabletop"})
OTHER_SAMPLES = 1000
SHOTS = 3


def default_samples(task: str) -> int:
    """Table 9's templates x repeat for ``task`` (``OTHER_SAMPLES`` for a task it does not list)."""
    name = find_task(task).name
    templates, repeat = TABLE9.get(name, (OTHER_SAMPLES, 1))
    return templates * repeat


def _template_pairs(spec: TaskSpec, needed: int, seed: int) -> list[tuple[str, str]]:
    aligners = load_aligners()
    if spec.fixture_slug not in aligners:
        raise ValueError(f"{spec.name} has no alignment-data generator")
    env_class = spec.env_class()
    held_out = [t for split in spec.splits for t in env_class.load_split(split)]
    # A goal is held out when its text or its answer is a test's or a demonstration's: "Delete my vote
    # 1161170." is the test "Remove vote number 1161170 from my history." in other words.
    held_out_prompts = {t.prompt for t in held_out}
    held_out_actions = {reference for t in held_out for reference in t.references}
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
    return pairs[:needed]


def _demonstration_pairs(spec: TaskSpec, samples: int, shots: int, seed: int) -> list[tuple[str, str]]:
    env_class = spec.env_class()
    tests = env_class.load_split("test")
    test_prompts = {t.prompt for t in tests}
    test_actions = {reference for t in tests for reference in t.references}
    pool = [
        (t.prompt, t.references[0])
        for split in ("demo", "train")
        if split in spec.splits
        for t in env_class.load_split(split)
        if t.references and t.prompt not in test_prompts and t.references[0] not in test_actions
    ]
    if len(pool) < shots:
        raise ValueError(f"{spec.name}: only {len(pool)} demonstration examples for {shots} per sample")
    # One seeded order of the pool, walked round and round: every example is used before any is used
    # twice, and a sample's shots (consecutive places, shots <= pool size) are distinct examples.
    random.Random(f"align-{spec.name}-{seed}").shuffle(pool)
    return [pool[place % len(pool)] for place in range(samples * shots)]


def alignment_samples(
    task: str, samples: int | None = None, shots: int = SHOTS, seed: int = 0
) -> Iterator[dict[str, Any]]:
    """``samples`` (default: Table 9's count) all-shot training samples of ``shots`` pairs each."""
    spec = find_task(task)
    samples = default_samples(spec.name) if samples is None else samples
    if samples < 1 or shots < 1:
        raise ValueError("--samples and --shots must be at least 1")
    if spec.name in FROM_DEMONSTRATIONS:
        pairs = _demonstration_pairs(spec, samples, shots, seed)
    else:
        pairs = _template_pairs(spec, samples * shots, seed)
    env = spec.env_class()()
    docs = env.api_docs().strip()
    env.close()
    for index in range(samples):
        chosen = pairs[index * shots : (index + 1) * shots]
        text = f"{docs}\n{SEPARATOR}\n"
        spans = []
        for number, (goal, action) in enumerate(chosen):
            text += ("\n\n" if number else "") + f"Task: {goal}\nAction:\n"
            spans.append([len(text), len(text) + len(action)])
            text += action
        yield {
            "id": f"{spec.fixture_slug}-align-{seed}-{index:05d}",
            "task": spec.name,
            "text": text + "\n",
            "goals": [goal for goal, _ in chosen],
            "actions": [action for _, action in chosen],
            "action_spans": spans,
        }


def write_alignment_data(
    task: str, out: str | Path, samples: int | None = None, shots: int = SHOTS, seed: int = 0
) -> list[dict[str, Any]]:
    """Write the samples as JSONL; returns them."""
    with open(out, "w", encoding="utf-8") as handle:  # opened first: a bad --out fails before the work
        written = list(alignment_samples(task, samples, shots, seed))
        handle.writelines(json.dumps(sample, ensure_ascii=False) + "\n" for sample in written)
    return written
