"""verifiers plugin id ``toolbench-verifiers``: verifiers imports a taskset by a top-level module name."""

from toolbench.integrations.verifiers import (
    ToolbenchConfig,
    ToolbenchData,
    ToolbenchEnv,
    ToolbenchEnvConfig,
    ToolbenchTask,
    ToolbenchTaskset,
)

__all__ = [
    "ToolbenchConfig",
    "ToolbenchData",
    "ToolbenchEnv",
    "ToolbenchEnvConfig",
    "ToolbenchTask",
    "ToolbenchTaskset",
]
