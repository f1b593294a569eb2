"""verifiers plugin id ``toolbench-verifiers``: verifiers imports a taskset by a top-level module name."""

from toolbench.integrations.verifiers import *  # noqa: F403  (the plugin exports exactly that module's classes)
from toolbench.integrations.verifiers import __all__  # noqa: F401
