"""The environments, one module per task family (each registered with gymnasium by ``toolbench``)."""

from __future__ import annotations

from toolbench.core.taskspec import TaskList


def code_env_modules() -> tuple[str, ...]:
    """The env modules whose actions are code (their catalog lines say ``runs_code``): each holds the
    code-side names (``code_names``, ``code_collect``) that the sandbox's clean worker imports before
    it forks. Every code env starts the worker with this one list (``sandbox.start_worker``), so a
    process has one worker, whichever env starts it first; a code task a package registers joins it."""
    return tuple(spec.module for spec in TaskList() if spec.runs_code)


def __getattr__(name: str) -> object:
    """``CODE_ENV_MODULES``: ``code_env_modules()`` when it is read."""
    if name == "CODE_ENV_MODULES":
        return code_env_modules()
    raise AttributeError(name)
