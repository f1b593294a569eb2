"""The list of toolbench tasks: one line per task, from which every env id is registered."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

import gymnasium as gym

from toolbench.core.env import ToolEnv

NAMESPACE = "toolbench"


@dataclass(frozen=True)
class TaskSpec:
    name: str
    entry_point: str

    @property
    def env_id(self) -> str:
        return f"{NAMESPACE}/{self.name}-v0"

    def env_class(self) -> type[ToolEnv]:
        module, _, attribute = self.entry_point.partition(":")
        return getattr(importlib.import_module(module), attribute)


TASKS: tuple[TaskSpec, ...] = (
    TaskSpec("OpenWeather", "toolbench.envs.openweather:OpenWeatherEnv"),
    TaskSpec("CatAPI", "toolbench.envs.catapi:CatAPIEnv"),
    TaskSpec("HomeSearch", "toolbench.envs.home_search:HomeSearchEnv"),
    TaskSpec("TripBooking", "toolbench.envs.trip_booking:TripBookingEnv"),
    TaskSpec("GoogleSheets", "toolbench.envs.sheets:GoogleSheetsEnv"),
    TaskSpec("Tabletop", "toolbench.envs.tabletop:TabletopEnv"),
)


def find_task(name: str) -> TaskSpec:
    """A task by name, case-insensitively; env ids (``toolbench/OpenWeather-v0``) work too."""
    key = name.removeprefix(f"{NAMESPACE}/").removesuffix("-v0").lower()
    for spec in TASKS:
        if spec.name.lower() == key:
            return spec
    raise KeyError(f"unknown task {name!r}; known tasks: {', '.join(spec.name for spec in TASKS)}")


def register_envs() -> None:
    """Register every task's env id with Gymnasium (idempotent)."""
    for spec in TASKS:
        if spec.env_id not in gym.registry:
            gym.register(id=spec.env_id, entry_point=spec.entry_point, disable_env_checker=False)
