"""Task records and the JSONL loader.

A fixture file keeps the original benchmark's record shape (``{"prompt": ..., "completion": [...]}``
plus its task-specific keys) with an added ``id`` (and, in our generated sets, ``category``), so
the same loader reads our fixtures and a user's copy of the original ``test.jsonl`` files.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

# Keys with a meaning of their own; every other key of a record is kept in ``Task.extra``.
_CORE_KEYS = ("id", "prompt", "completion", "category")


@dataclass(frozen=True)
class Task:
    """One benchmark task: the prompt shown to the agent and its ground-truth actions."""

    id: str
    prompt: str
    references: tuple[str, ...]
    category: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "extra", MappingProxyType(dict(self.extra)))

    def get(self, key: str, default: Any = None) -> Any:
        """A task-specific field of the original record (``compare_string_only``, ...)."""
        return self.extra.get(key, default)

    def to_record(self) -> dict[str, Any]:
        """The record in the original benchmark's shape, plus ``id`` and ``category``."""
        record: dict[str, Any] = {"id": self.id}
        if self.category is not None:
            record["category"] = self.category
        record["prompt"] = self.prompt
        record["completion"] = list(self.references)
        record.update(self.extra)
        return record

    def __reduce__(self) -> tuple[Any, ...]:
        # MappingProxyType does not pickle; rebuild from a plain dict (needed by worker processes).
        return (Task, (self.id, self.prompt, self.references, self.category, dict(self.extra)))


class TaskSet:
    """The tasks an env plays, in order and by id; read-only, as every env of a process that plays
    the same split or file shares one."""

    __slots__ = ("__weakref__", "by_id", "tasks")

    def __init__(self, tasks: tuple[Task, ...]) -> None:
        self.tasks = tasks
        self.by_id: Mapping[str, Task] = MappingProxyType({task.id: task for task in tasks})

    @classmethod
    def of(cls, tasks: Iterable[Task]) -> TaskSet:
        return cls(tuple(tasks))


class TaskFileError(ValueError):
    """A task file or record is not in the expected shape."""


def task_from_record(record: Mapping[str, Any], default_id: str) -> Task:
    """Build a Task from one JSON record in the original benchmark's shape."""
    if not isinstance(record, Mapping):
        raise TaskFileError(f"{default_id}: a task record must be a JSON object, got {type(record).__name__}")
    prompt = record.get("prompt", "")
    if not isinstance(prompt, str):
        raise TaskFileError(f"{default_id}: 'prompt' must be a string")
    completion = record.get("completion", [])
    references = (completion,) if isinstance(completion, str) else tuple(completion)
    if not all(isinstance(ref, str) for ref in references):
        raise TaskFileError(f"{default_id}: 'completion' must be a string or a list of strings")
    return Task(
        id=str(record.get("id", default_id)),
        prompt=prompt,
        references=references,
        category=record.get("category"),
        extra={k: v for k, v in record.items() if k not in _CORE_KEYS},
    )


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSONL file (one JSON object per non-empty line)."""
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise TaskFileError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
    return records


def tasks_from_records(records: Iterable[Mapping[str, Any]], id_prefix: str) -> list[Task]:
    """Tasks from records; records without an ``id`` get ``<id_prefix>-<line index>``."""
    tasks = [task_from_record(record, f"{id_prefix}-{index:04d}") for index, record in enumerate(records)]
    seen: set[str] = set()
    for task in tasks:
        if task.id in seen:
            raise TaskFileError(f"duplicate task id {task.id!r}")
        seen.add(task.id)
    return tasks


def read_task_file(path: str | Path, id_prefix: str | None = None) -> list[Task]:
    """Load a user's task file, e.g. the original benchmark's ``test.jsonl``."""
    path = Path(path)
    return tasks_from_records(read_records(path), id_prefix or path.stem)


def record_place(path: str | Path, index: int) -> str:
    """Where a task file's ``index``-th record (from 0) is, for messages: ``path:line`` in a JSONL
    file, ``path: record n`` in a JSON list (the originals' ``.json`` formats)."""
    if Path(path).suffix != ".json":
        with open(path, encoding="utf-8") as handle:
            lines = [number for number, line in enumerate(handle, start=1) if line.strip()]
        if index < len(lines):
            return f"{path}:{lines[index]}"
    return f"{path}: record {index + 1}"


def fixture_file(slug: str, filename: str) -> Path:
    """Path of a shipped fixture file, ``toolbench/fixtures/<slug>/<filename>``."""
    return Path(str(resources.files("toolbench.fixtures").joinpath(slug, filename)))
