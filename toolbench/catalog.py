"""The list of toolbench tasks: one line per task, from which every env id is registered.

A line names the task's env class, modes, splits, fixture folder and served app, so ``toolbench
list``, ``toolbench serve`` and the CLI's checks need no env module (each imports pandas, Flask or
PyBullet). The env class reads its name, modes, splits and fixture folder from its line (``ToolEnv``
finds it in ``toolbench.core.taskspec``, where this module registers the lines on import). A package
adds its own task with ``register_task``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from toolbench.core import taskspec
from toolbench.core.taskspec import NAMESPACE, TaskList, TaskSpec
from toolbench.mock_services.rapidapi import TEST_SETS as RAPIDAPI_TEST_SETS

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec
    from types import ModuleType

PROGRAM = ("program",)
BOTH = ("program", "interactive")
#: Every task's splits: ``test`` (the papers' setting: the templates its demos and train share),
#: ``demo`` (the prompts' examples), ``train`` (more of the seen templates) and ``unseen`` (templates,
#: and what the env has of activities, products, app combinations, tools, held out of all three).
SPLITS = ("test", "demo", "train", "unseen")
#: The served apps of ``toolbench serve NAME`` are built in ``toolbench.mock_services``.
_SERVED = "toolbench.mock_services"
_GENERATORS = "toolbench.taskgen"

SHIPPED: tuple[TaskSpec, ...] = (
    TaskSpec(
        "OpenWeather",
        "toolbench.envs.openweather:OpenWeatherEnv",
        PROGRAM,
        SPLITS,
        "openweather",
        service=f"{_SERVED}:openweather_app",
        service_key=f"{_SERVED}.openweather:DEMO_API_KEY",
        generator=f"{_GENERATORS}.openweather",
    ),
    TaskSpec(
        "CatAPI",
        "toolbench.envs.catapi:CatAPIEnv",
        PROGRAM,
        SPLITS,
        "catapi",
        service=f"{_SERVED}:catapi_app",
        service_key=f"{_SERVED}.catapi:DEMO_API_KEY",
        generator=f"{_GENERATORS}.catapi",
    ),
    TaskSpec(
        "HomeSearch",
        "toolbench.envs.home_search:HomeSearchEnv",
        BOTH,
        SPLITS,
        "home_search",
        generator=f"{_GENERATORS}.home_search",
    ),
    TaskSpec(
        "TripBooking",
        "toolbench.envs.trip_booking:TripBookingEnv",
        BOTH,
        SPLITS,
        "trip_booking",
        generator=f"{_GENERATORS}.trip_booking",
    ),
    TaskSpec(
        "GoogleSheets",
        "toolbench.envs.sheets:GoogleSheetsEnv",
        BOTH,
        SPLITS,
        "sheets",
        runs_code=True,
        service=f"{_SERVED}:sheets_app",
        generator=f"{_GENERATORS}.sheets",
    ),
    TaskSpec(
        "Tabletop",
        "toolbench.envs.tabletop:TabletopEnv",
        BOTH,
        SPLITS,
        "tabletop",
        runs_code=True,
        generator=f"{_GENERATORS}.tabletop",
    ),
    TaskSpec(
        "VirtualHome",
        "toolbench.envs.virtualhome:VirtualHomeEnv",
        BOTH,
        SPLITS,
        "virtualhome",
        generator=f"{_GENERATORS}.virtualhome",
    ),
    TaskSpec(
        "WebShop",
        "toolbench.envs.webshop:WebShopEnv",
        ("interactive", "program"),
        SPLITS,
        "webshop",
        service=f"{_SERVED}:webshop_app",
        generator=f"{_GENERATORS}.webshop",
    ),
    TaskSpec(
        "AppBench",
        "toolbench.envs.appbench:AppBenchEnv",
        BOTH,
        SPLITS,
        "appbench",
        generator=f"{_GENERATORS}.appbench",
    ),
    TaskSpec(
        "RapidAPI",
        "toolbench.envs.rapidapi:RapidAPIEnv",
        ("interactive",),
        ("test", *RAPIDAPI_TEST_SETS, "demo", "train", "unseen"),
        "rapidapi",
        (("test", RAPIDAPI_TEST_SETS),),
        service=f"{_SERVED}:rapidapi_app",
        generator=f"{_GENERATORS}.rapidapi",
    ),
)
for _spec in SHIPPED:
    if taskspec.line_of(_spec.entry_point) is None:
        taskspec.add(_spec)

#: Every registered task, the shipped ones first: a live view, so a task ``register_task`` adds later
#: is in it for every module that imported it.
TASKS: TaskList = TaskList()


def register_task(spec: TaskSpec) -> TaskSpec:
    """Add a task of another package to the catalog: its env id is registered with Gymnasium (now,
    or when Gymnasium loads), ``toolbench serve``, ``toolbench eval`` and ``toolbench audit`` know it,
    and its env class takes its name, modes, splits and fixture folder from ``spec``. Register before
    the env module loads (say, in the package's ``__init__``); a class loaded already takes them now."""
    if spec.env_id == REMOTE_ENV_ID:
        raise ValueError(f"{spec.env_id} is the remote env's id, not a task's")
    taskspec.add(spec)
    module = sys.modules.get(spec.module)
    loaded = getattr(module, spec.entry_point.partition(":")[2], None) if module is not None else None
    if loaded is not None:
        try:
            taskspec.take_line(loaded, spec)
        except TypeError:
            taskspec.remove(spec.name)
            raise
    if "gymnasium" in sys.modules:
        register_envs()
    return spec


def unregister_task(name: str) -> TaskSpec:
    """Take a task ``register_task`` added out of the catalog and out of Gymnasium's registry."""
    spec = find_task(name)
    if spec in SHIPPED:
        raise ValueError(f"{spec.name} is a shipped task: it cannot be unregistered")
    taskspec.remove(spec.name)
    if "gymnasium" in sys.modules:
        from gymnasium.envs.registration import registry

        registry.pop(spec.env_id, None)
    return spec


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
