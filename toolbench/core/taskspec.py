"""A task's catalog line (``TaskSpec``) and the lines registered so far.

``toolbench.catalog`` registers the shipped lines here when it is imported, which ``import toolbench``
does before any env module can load; ``toolbench.catalog.register_task`` adds a package's own. The
register sits in core, below the envs, so that ``ToolEnv`` can give an env class the name, modes,
splits and fixture folder of the line that names it: an env module never imports the catalog, which
sits above the envs. Nothing here names a task.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

NAMESPACE = "toolbench"
#: The package whose folders hold the shipped tasks' fixtures (``toolbench/fixtures/<slug>``).
SHIPPED_FIXTURES = "toolbench.fixtures"


def resolve(reference: str) -> Any:
    """The object a ``"package.module:name"`` reference names, its module imported."""
    module, _, name = reference.partition(":")
    return getattr(importlib.import_module(module), name)


def fixture_path(package: str, slug: str, filename: str) -> Path:
    """``<package's folder>/<slug>/<filename>``."""
    from importlib import resources

    return Path(str(resources.files(package).joinpath(slug, filename)))


@dataclass(frozen=True)
class TaskSpec:
    """One task: its env id's name, its env class, and what the command line and the env class read
    from it before (or without) importing the env module."""

    name: str
    #: ``"package.module:Class"``: the env class, which takes ``task_name``, ``modes``, ``splits``,
    #: ``fixture_slug`` and ``fixture_package`` from this line (the first mode is the default).
    entry_point: str
    modes: tuple[str, ...]
    splits: tuple[str, ...]
    fixture_slug: str
    #: Splits made of other splits' files (RapidAPI's ``test`` is its six test sets).
    composite: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: The task runs agent code in the sandbox: its env module holds the code-side names, which the
    #: clean worker imports before it forks (with the module's ``warm_worker``/``warm_child``, if any).
    runs_code: bool = False
    #: The package whose folder ``fixture_slug`` holds the split files (``<split>.jsonl``).
    fixture_package: str = SHIPPED_FIXTURES
    #: ``"module:function"``: ``function(api_key)`` builds the Flask app that ``toolbench serve
    #: <fixture_slug>`` serves (``None``: the task has no service of its own to serve).
    service: str | None = None
    #: ``"module:NAME"``: the API key the served app accepts when none is given (``None``: it needs none).
    service_key: str | None = None
    #: The module that registers the task's fixture generator (``@toolbench.taskgen.generator(fixture_slug)``)
    #: when imported: ``python -m toolbench.taskgen`` imports every line's (``None``: fixtures made elsewhere).
    generator: str | None = None

    @property
    def module(self) -> str:
        return self.entry_point.partition(":")[0]

    @property
    def env_id(self) -> str:
        return f"{NAMESPACE}/{self.name}-v0"

    def env_class(self) -> type[Any]:
        """The env class, a ``ToolEnv`` subclass (``toolbench.core.env`` imports this module, so the
        type is not named here), its module imported."""
        env_class: type[Any] = resolve(self.entry_point)
        return env_class

    def fixture(self, filename: str) -> Path:
        """A file of the task's fixture folder."""
        return fixture_path(self.fixture_package, self.fixture_slug, filename)

    def count(self, split: str) -> int:
        """How many tasks a shipped split holds (its JSONL lines), without loading them."""
        parts = dict(self.composite).get(split)
        if parts:
            return sum(self.count(part) for part in parts)
        with open(self.fixture(f"{split}.jsonl"), encoding="utf-8") as handle:
            return sum(1 for line in handle if line.strip())


#: The lines in registration order, and by entry point (how an env class finds its own).
_LINES: list[TaskSpec] = []
_BY_ENTRY_POINT: dict[str, TaskSpec] = {}
#: What an env class takes from its line: (class attribute, line field).
FROM_LINE = (
    ("task_name", "name"),
    ("modes", "modes"),
    ("splits", "splits"),
    ("fixture_slug", "fixture_slug"),
    ("fixture_package", "fixture_package"),
)


def add(spec: TaskSpec) -> None:
    """Register a line; a name (in any case), an entry point or a service taken already is an error."""
    for line in _LINES:
        if line.name.lower() == spec.name.lower() or line.entry_point == spec.entry_point:
            raise ValueError(f"task {spec.name!r} ({spec.entry_point}) clashes with the line of {line.name!r}")
        if spec.service and line.service and line.fixture_slug == spec.fixture_slug:
            raise ValueError(f"task {spec.name!r}: the service {spec.fixture_slug!r} is {line.name!r}'s")
    _LINES.append(spec)
    _BY_ENTRY_POINT[spec.entry_point] = spec


def remove(name: str) -> TaskSpec:
    """Unregister the line of task ``name`` and return it."""
    spec = next((line for line in _LINES if line.name == name), None)
    if spec is None:
        raise KeyError(f"no task {name!r} is registered")
    _LINES.remove(spec)
    del _BY_ENTRY_POINT[spec.entry_point]
    return spec


def line_of(entry_point: str) -> TaskSpec | None:
    """The line whose entry point is ``"module:Class"``, if one is registered."""
    return _BY_ENTRY_POINT.get(entry_point)


def take_line(env_class: type, spec: TaskSpec) -> None:
    """Give ``env_class`` its line's name, modes, splits and fixture folder. A class that sets one of
    them itself to another value contradicts its line: an error, so that the line stays the one source."""
    for attribute, line_field in FROM_LINE:
        value = getattr(spec, line_field)
        own = env_class.__dict__.get(attribute, value)
        if own != value:
            raise TypeError(
                f"{spec.entry_point} sets {attribute} = {own!r}, but its catalog line says {value!r}: "
                "leave it to the line"
            )
        setattr(env_class, attribute, value)


class TaskList(Sequence[TaskSpec]):
    """The registered lines, in order, as a read-only sequence that sees every later registration:
    modules that imported ``TASKS`` find a task a package registers afterwards."""

    @overload
    def __getitem__(self, index: int) -> TaskSpec: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[TaskSpec, ...]: ...

    def __getitem__(self, index: int | slice) -> TaskSpec | tuple[TaskSpec, ...]:
        return tuple(_LINES[index]) if isinstance(index, slice) else _LINES[index]

    def __len__(self) -> int:
        return len(_LINES)

    def __iter__(self) -> Iterator[TaskSpec]:
        return iter(tuple(_LINES))  # a copy: a registration while iterating does not disturb the loop

    def __repr__(self) -> str:
        return f"TaskList({', '.join(spec.name for spec in _LINES)})"
