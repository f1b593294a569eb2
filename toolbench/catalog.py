"""The list of toolbench tasks: one line per task, from which every env id is registered.

A line also names the task's modes, splits and fixture folder, so ``toolbench list`` and the CLI's
checks need no env module (each imports pandas, Flask or PyBullet); a test checks that every line
agrees with its env class."""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolbench.mock_services.rapidapi import TEST_SETS as RAPIDAPI_TEST_SETS

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec
    from types import ModuleType

    from toolbench.core.env import ToolEnv

NAMESPACE = "toolbench"


@dataclass(frozen=True)
class TaskSpec:
    name: str
    entry_point: str
    modes: tuple[str, ...]
    splits: tuple[str, ...]
    fixture_slug: str
    #: Splits made of other splits' files (RapidAPI's ``test`` is its six test sets).
    composite: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: The task runs agent code in the sandbox: its env module holds the code-side names, which the
    #: clean worker imports before it forks (with the module's ``warm_worker``/``warm_child``, if any).
    runs_code: bool = False

    @property
    def module(self) -> str:
        return self.entry_point.partition(":")[0]

    @property
    def env_id(self) -> str:
        return f"{NAMESPACE}/{self.name}-v0"

    def env_class(self) -> type[ToolEnv]:
        return getattr(importlib.import_module(self.module), self.entry_point.partition(":")[2])

    def count(self, split: str) -> int:
        """How many tasks a shipped split holds (its JSONL lines), without loading them."""
        parts = dict(self.composite).get(split)
        if parts:
            return sum(self.count(part) for part in parts)
        from toolbench.core.tasks import fixture_file

        with open(fixture_file(self.fixture_slug, f"{split}.jsonl"), encoding="utf-8") as handle:
            return sum(1 for line in handle if line.strip())


PROGRAM = ("program",)
BOTH = ("program", "interactive")
#: Every task's splits: ``test`` (the papers' setting: the templates its demos and train share),
#: ``demo`` (the prompts' examples), ``train`` (more of the seen templates) and ``unseen`` (templates,
#: and what the env has of activities, products, app combinations, tools, held out of all three).
SPLITS = ("test", "demo", "train", "unseen")

TASKS: tuple[TaskSpec, ...] = (
    TaskSpec("OpenWeather", "toolbench.envs.openweather:OpenWeatherEnv", PROGRAM, SPLITS, "openweather"),
    TaskSpec("CatAPI", "toolbench.envs.catapi:CatAPIEnv", PROGRAM, SPLITS, "catapi"),
    TaskSpec("HomeSearch", "toolbench.envs.home_search:HomeSearchEnv", BOTH, SPLITS, "home_search"),
    TaskSpec("TripBooking", "toolbench.envs.trip_booking:TripBookingEnv", BOTH, SPLITS, "trip_booking"),
    TaskSpec("GoogleSheets", "toolbench.envs.sheets:GoogleSheetsEnv", BOTH, SPLITS, "sheets", runs_code=True),
    TaskSpec("Tabletop", "toolbench.envs.tabletop:TabletopEnv", BOTH, SPLITS, "tabletop", runs_code=True),
    TaskSpec("VirtualHome", "toolbench.envs.virtualhome:VirtualHomeEnv", BOTH, SPLITS, "virtualhome"),
    TaskSpec("WebShop", "toolbench.envs.webshop:WebShopEnv", ("interactive", "program"), SPLITS, "webshop"),
    TaskSpec("AppBench", "toolbench.envs.appbench:AppBenchEnv", BOTH, SPLITS, "appbench"),
    TaskSpec(
        "RapidAPI",
        "toolbench.envs.rapidapi:RapidAPIEnv",
        ("interactive",),
        ("test", *RAPIDAPI_TEST_SETS, "demo", "train", "unseen"),
        "rapidapi",
        (("test", RAPIDAPI_TEST_SETS),),
    ),
)


def find_task(name: str) -> TaskSpec:
    """A task by name, case-insensitively; env ids (``toolbench/OpenWeather-v0``) work too."""
    key = name.removeprefix(f"{NAMESPACE}/").removesuffix("-v0").lower()
    for spec in TASKS:
        if spec.name.lower() == key:
            return spec
    raise KeyError(f"unknown task {name!r}; known tasks: {', '.join(spec.name for spec in TASKS)}")


#: The client of ``toolbench serve env``: ``gym.make(REMOTE_ENV_ID, url="http://host:8000")``. Not a task.
REMOTE_ENV_ID = f"{NAMESPACE}/Remote-v0"


def register_envs() -> None:
    """Register every task's env id, and the remote env's, with Gymnasium (idempotent). Entry points
    are strings: no env module is imported until ``gym.make`` needs it."""
    from gymnasium.envs.registration import register, registry

    for spec in TASKS:
        if spec.env_id not in registry:
            register(id=spec.env_id, entry_point=spec.entry_point, disable_env_checker=False)
    if REMOTE_ENV_ID not in registry:
        register(id=REMOTE_ENV_ID, entry_point="toolbench.remote:RemoteEnv", disable_env_checker=False)


def register_envs_with_gymnasium() -> None:
    """Register the env ids now if Gymnasium is loaded, else the moment it is.

    Gymnasium imports NumPy, which alone takes several times an empty interpreter's start; a
    process that imports toolbench for its command line or its task records need not pay that.
    Code that calls ``gym.make`` has imported Gymnasium, and then finds every id registered."""
    if "gymnasium" in sys.modules:
        register_envs()
    elif not any(isinstance(finder, _RegisterOnGymnasiumImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _RegisterOnGymnasiumImport())


class _RegisterOnGymnasiumImport:
    """An import hook that runs ``register_envs`` right after the ``gymnasium`` package has loaded,
    before the import statement that loaded it returns. It finds nothing itself: it asks the other
    finders for Gymnasium's spec and wraps its loader, once."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> ModuleSpec | None:
        if name != "gymnasium":
            return None
        sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find_spec = getattr(finder, "find_spec", None)
            spec = find_spec(name, path, target) if find_spec is not None else None
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _RegisteringLoader(spec.loader)
                return spec
        return None


class _RegisteringLoader:
    """Gymnasium's own loader, then ``register_envs``."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        # Gymnasium sees its own loader (for its resources), as if no hook had been there.
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        register_envs()
