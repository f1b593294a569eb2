"""toolbench-gym: offline, deterministic Gymnasium environments for tool-using agents.

``import toolbench`` registers every env id (``toolbench/OpenWeather-v0``, ...); the same happens
for ``gym.make("toolbench:toolbench/<Task>-v0")`` without an explicit import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolbench.catalog import (
    TASKS,
    TaskSpec,
    find_task,
    register_envs,
    register_envs_with_gymnasium,
    register_task,
    unregister_task,
)

if TYPE_CHECKING:
    from toolbench.core.ray_vector import RayVectorEnv
    from toolbench.core.tasks import Task, read_task_file
    from toolbench.core.vector import BatchedVectorEnv

__version__ = "0.1.0"

# Loaded on first use, so that ``import toolbench`` stays light (Gymnasium, NumPy and the env
# modules come with the first env).
_LAZY = {
    "BatchedVectorEnv": "toolbench.core.vector",
    "RayVectorEnv": "toolbench.core.ray_vector",
    "Task": "toolbench.core.tasks",
    "read_task_file": "toolbench.core.tasks",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolbench' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def load_tasks(task: str, split: str = "test") -> list[Task]:
    """The Task records of a task's split (``"test"``, ``"demo"``, ...)."""
    env_class = find_task(task).env_class()
    if split not in env_class.splits:
        raise ValueError(f"{env_class.task_name} has splits {list(env_class.splits)}, not {split!r}")
    return env_class.load_split(split)


register_envs_with_gymnasium()

__all__ = [
    "TASKS",
    "BatchedVectorEnv",
    "RayVectorEnv",
    "Task",
    "TaskSpec",
    "__version__",
    "find_task",
    "load_tasks",
    "read_task_file",
    "register_envs",
    "register_task",
    "unregister_task",
]
