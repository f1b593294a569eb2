"""Generators of the shipped task sets and world data (``python -m toolbench.taskgen``).

Every fixture file is a pure function of the code here: running a generator again rewrites the
same bytes, and a test checks that. Prompts come from templates written for this project.
"""

from __future__ import annotations

import importlib
import json
import random
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from toolbench.catalog import TASKS, TaskSpec

T = TypeVar("T")
#: A generator's output: file name (inside the task's fixture folder) -> exact file content.
Files = dict[str, str]


def rng_for(*parts: object) -> random.Random:
    """A ``random.Random`` seeded from ``parts`` (string seeding is stable across processes)."""
    return random.Random("/".join(str(part) for part in parts))


def jsonl(records: Iterable[Mapping[str, Any]]) -> str:
    """Records as JSONL text, formatted exactly as the shipped fixtures."""
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


def spread(total: int, categories: list[str]) -> list[str]:
    """``total`` category labels, as even as possible, in a fixed interleaved order."""
    counts = {c: total // len(categories) + (1 if i < total % len(categories) else 0) for i, c in enumerate(categories)}
    labels: list[str] = []
    while len(labels) < total:
        for category in categories:
            if counts[category] > 0:
                labels.append(category)
                counts[category] -= 1
    return labels


GENERATORS: dict[str, Callable[..., Files]] = {}


def generated_tasks() -> list[TaskSpec]:
    """The catalog's lines that name a generator module (each registers itself with ``@generator``
    when imported)."""
    return [spec for spec in TASKS if spec.generator]


def load_generators() -> dict[str, Callable[[], Files]]:
    """Every registered generator, by task-set slug: the catalog lines' generator modules imported."""
    for spec in generated_tasks():
        importlib.import_module(spec.generator)  # type: ignore[arg-type]
    return GENERATORS


#: Files made from a task set's fixtures once they are written (a model trained on its train split):
#: task-set slug -> a function that writes them and returns where; ``python -m toolbench.taskgen`` runs it
#: after writing the set.
DERIVED: dict[str, Callable[[], Path]] = {}


def generator(
    slug: str, derived: Callable[[], Path] | None = None
) -> Callable[[Callable[[], Files]], Callable[[], Files]]:
    """Register a function that renders the fixture files of task set ``slug``, and ``derived``, what
    is made from them once written (``DERIVED``)."""

    def register(function: Callable[[], Files]) -> Callable[[], Files]:
        GENERATORS[slug] = function
        if derived is not None:
            DERIVED[slug] = derived
        return function

    return register


#: Alignment goals (ToolBench's appendix C): task set slug -> ``f(count, seed)`` (seed: a string) returning that many
#: fresh records in the task's record shape, from the same templates and value pools as the task
#: sets but another random stream (the caller drops any that equal a test or demo task).
ALIGNERS: dict[str, Callable[[int, str], list[dict[str, Any]]]] = {}


def aligner(
    slug: str,
) -> Callable[[Callable[[int, str], list[dict[str, Any]]]], Callable[[int, str], list[dict[str, Any]]]]:
    def register(function: Callable[[int, str], list[dict[str, Any]]]) -> Callable[[int, str], list[dict[str, Any]]]:
        ALIGNERS[slug] = function
        return function

    return register


def load_aligners() -> dict[str, Callable[[int, str], list[dict[str, Any]]]]:
    load_generators()
    return ALIGNERS


#: The splits a trainer can ask for more of: ``train`` (the seen templates, other seeds) and ``unseen``
#: (templates, and where the env has them activities, products, app combinations, instruction types,
#: tools or categories, that no demo, train or alignment task uses).
GROWN_SPLITS = ("train", "unseen")
#: The shipped files' sizes of the grown splits (a task set may ship more) and their seed.
SHIPPED_SIZES = {"train": 1000, "unseen": 100}
SHIPPED_SEED = 0
#: task set slug -> ``f(split, size, seed)``: ``size`` records of ``split`` (one of ``GROWN_SPLITS``)
#: in the task's record shape, each with its ``template`` id (and ``difficulty``, an int, where the
#: env has levels), deterministic in ``seed``; no record is a test, demo or unseen task or a near
#: duplicate of one (``near_duplicates``).
SPLIT_MAKERS: dict[str, Callable[[str, int, int], list[dict[str, Any]]]] = {}


def split_maker(
    slug: str,
) -> Callable[[Callable[[str, int, int], list[dict[str, Any]]]], Callable[[str, int, int], list[dict[str, Any]]]]:
    def register(
        function: Callable[[str, int, int], list[dict[str, Any]]],
    ) -> Callable[[str, int, int], list[dict[str, Any]]]:
        SPLIT_MAKERS[slug] = function
        return function

    return register


def load_split_makers() -> dict[str, Callable[[str, int, int], list[dict[str, Any]]]]:
    load_generators()
    return SPLIT_MAKERS


_NOT_WORD = re.compile(r"[^0-9a-z]+")
#: Two prompts are near duplicates when their normalised texts are this similar (rapidfuzz's
#: ``ratio``, 0-100): "up to 3 places called Springfield" and "up to 4 ..." are, "the weather in
#: Paris" and "the weather in Lyon" are not.
NEAR_DUPLICATE = 95.0


def normalized(prompt: str) -> str:
    """A prompt lowercased, with every run of punctuation and space one space."""
    return _NOT_WORD.sub(" ", prompt.lower()).strip()


def near_duplicates(prompts: Sequence[str], against: Sequence[str], cutoff: float = NEAR_DUPLICATE) -> set[int]:
    """The indexes of ``prompts`` that equal or nearly equal (``cutoff``) one of ``against``."""
    from rapidfuzz import fuzz, process

    if not prompts or not against:
        return set()
    left, right = [normalized(p) for p in prompts], [normalized(p) for p in against]
    exact = set(right)
    scores = process.cdist(left, right, scorer=fuzz.ratio, score_cutoff=cutoff, workers=1)
    return {i for i, row in enumerate(scores) if left[i] in exact or row.max() >= cutoff}


#: ``fresh`` gives up past this many draws per task asked for (a value space that ran out), and
#: compares at most this many candidates with the held prompts at once (memory).
FRESH_DRAWS_PER_TASK = 50
FRESH_BATCH_MAX = 5000


def fresh(
    stream: Iterator[T],
    size: int,
    held: Sequence[str],
    batch: int,
    keep: Callable[[T], bool] = lambda candidate: True,
    prompt_of: Callable[[T], str] = lambda candidate: candidate[0],
) -> list[T]:
    """The first ``size`` candidates of ``stream`` whose prompt is new, no near duplicate of one of
    ``held``, and that ``keep`` accepts. Candidates are drawn in batches of at least ``batch`` (their
    prompts are compared with ``held`` a batch at a time); raises ValueError when the stream runs dry
    of new ones."""
    chosen: list[T] = []
    seen: set[str] = set()
    drawn = 0
    while len(chosen) < size:
        if drawn > FRESH_DRAWS_PER_TASK * size + batch:
            raise ValueError(f"{drawn} draws gave {len(chosen)} new tasks of the {size} asked for: ask for fewer")
        count = min(max(batch, size - len(chosen)), FRESH_BATCH_MAX)
        candidates = [next(stream) for _ in range(count)]
        drawn += count
        dropped = near_duplicates([prompt_of(candidate) for candidate in candidates], held)
        for index, candidate in enumerate(candidates):
            prompt = prompt_of(candidate)
            if len(chosen) == size or index in dropped or prompt in seen or not keep(candidate):
                continue
            seen.add(prompt)
            chosen.append(candidate)
    return chosen


def write_fixtures(slug: str, files: Files) -> list[str]:
    """Write a generator's files into the fixture folder of the task whose line generates ``slug``."""
    spec = next(spec for spec in generated_tasks() if spec.fixture_slug == slug)
    paths = []
    for name, content in files.items():
        path = spec.fixture(name)
        path.write_text(content, encoding="utf-8", newline="\n")
        paths.append(str(path))
    return paths
