"""Moved to ``toolbench.prompting``; this name stays because the docs show
``from toolbench.eval.prompts import generation_defaults``."""

from __future__ import annotations

from toolbench.prompting import *  # noqa: F403
from toolbench.prompting import __all__  # noqa: F401
