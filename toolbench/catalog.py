"""The list of toolbench tasks: one line per task, from which every env id is registered.

A line also names the task's modes, splits and fixture folder, so ``toolbench list`` and the CLI's
checks need no env module (each imports pandas, Flask or PyBullet); a test checks that every line
agrees with its env class."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

import gymnasium as gym

from toolbench.core.tasks import fixture_file
from toolbench.mock_services.rapidapi import TEST_SETS as RAPIDAPI_TEST_SETS

if TYPE_CHECKING:
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

    @property
    def env_id(self) -> str:
        return f"{NAMESPACE}/{self.name}-v0"

    def env_class(self) -> type[ToolEnv]:
        module, _, attribute = self.entry_point.partition(":")
        return getattr(importlib.import_module(module), attribute)

    def count(self, split: str) -> int:
        """How many tasks a shipped split holds (its JSONL lines), without loading them."""
        parts = dict(self.composite).get(split)
        if parts:
            return sum(self.count(part) for part in parts)
        with open(fixture_file(self.fixture_slug, f"{split}.jsonl"), encoding="utf-8") as handle:
            return sum(1 for line in handle if line.strip())


PROGRAM = ("program",)
BOTH = ("program", "interactive")
TEST_DEMO = ("test", "demo")
TEST_DEMO_TRAIN = ("test", "demo", "train")

TASKS: tuple[TaskSpec, ...] = (
    TaskSpec("OpenWeather", "toolbench.envs.openweather:OpenWeatherEnv", PROGRAM, TEST_DEMO, "openweather"),
    TaskSpec("CatAPI", "toolbench.envs.catapi:CatAPIEnv", PROGRAM, TEST_DEMO, "catapi"),
    TaskSpec("HomeSearch", "toolbench.envs.home_search:HomeSearchEnv", BOTH, TEST_DEMO, "home_search"),
    TaskSpec("TripBooking", "toolbench.envs.trip_booking:TripBookingEnv", BOTH, TEST_DEMO, "trip_booking"),
    TaskSpec("GoogleSheets", "toolbench.envs.sheets:GoogleSheetsEnv", BOTH, TEST_DEMO, "sheets"),
    TaskSpec("Tabletop", "toolbench.envs.tabletop:TabletopEnv", BOTH, ("test", "train", "demo"), "tabletop"),
    TaskSpec("VirtualHome", "toolbench.envs.virtualhome:VirtualHomeEnv", BOTH, TEST_DEMO_TRAIN, "virtualhome"),
    TaskSpec(
        "WebShop", "toolbench.envs.webshop:WebShopEnv", ("interactive", "program"), ("test", "train", "demo"), "webshop"
    ),
    TaskSpec("AppBench", "toolbench.envs.appbench:AppBenchEnv", BOTH, ("test", "train", "demo"), "appbench"),
    TaskSpec(
        "RapidAPI",
        "toolbench.envs.rapidapi:RapidAPIEnv",
        ("interactive",),
        ("test", *RAPIDAPI_TEST_SETS, "train", "demo"),
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
    """Register every task's env id, and the remote env's, with Gymnasium (idempotent)."""
    for spec in TASKS:
        if spec.env_id not in gym.registry:
            gym.register(id=spec.env_id, entry_point=spec.entry_point, disable_env_checker=False)
    if REMOTE_ENV_ID not in gym.registry:
        gym.register(id=REMOTE_ENV_ID, entry_point="toolbench.remote:RemoteEnv", disable_env_checker=False)
