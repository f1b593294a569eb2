"""Per-task generation settings of ToolBench's harness: how long a program may be, where it stops, and
how many API docs and demonstrations a prompt retrieves.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolbench.catalog import find_task


@dataclass(frozen=True)
class GenerationDefaults:
    """Per-task generation settings (``--max-tokens``, ``--stop``, ``--top-k-api``, ``--top-k-example``)."""

    max_tokens: int
    stop: tuple[str, ...]
    top_k_api: int = 10
    top_k_example: int = 3


# The released ToolBench harness (sambanova/toolbench, the README's commands for every task): generation
# length, and the docs and demonstrations retrieved, which each env class keeps (``generation_*``; the
# defaults of ``ToolEnv`` where the harness has no command for a task); the stop sequences end a program
# where a model would start the next block ("------") or the next demonstration ("Task:"). The paper's
# Table 8 has the same generation lengths; for the docs it lists "all" functions for OpenWeather, The
# Cat API, Home Search, Trip Booking and WebShop, 10 for Google Sheets and VirtualHome and none for
# Tabletop, where the harness's commands, kept by the env classes, retrieve 3 for The Cat API and none
# for WebShop. The README's command retrieves no Sheets docs (its prompt came with its own); the
# harness's test_all.sh retrieves 10, the default, which our prompts need to name worksheet, pd and the
# argument order.
HARNESS_STOP = ("------", "Task:")
# Interactive mode: one call per reply and no stop sequences (they would cut a tool call's JSON).
_INTERACTIVE_MAX_TOKENS = 512


def generation_defaults(task_name: str, mode: str) -> GenerationDefaults:
    from toolbench.core.env import ToolEnv

    env_class: type[ToolEnv]
    try:
        env_class = find_task(task_name).env_class()
    except KeyError:  # not a catalog task: the settings of a task the harness has no command for
        env_class = ToolEnv
    program = GenerationDefaults(
        env_class.generation_max_tokens,
        (*HARNESS_STOP, *env_class.generation_extra_stop),
        env_class.generation_top_k_api,
        env_class.generation_top_k_example,
    )
    if mode == "program":
        return program
    return GenerationDefaults(
        max(program.max_tokens, _INTERACTIVE_MAX_TOKENS), (), program.top_k_api, program.top_k_example
    )
