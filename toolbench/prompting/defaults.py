"""Per-task generation settings of ToolBench's harness: how long a program may be, where it stops, and
how many API docs and demonstrations a prompt retrieves.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GenerationDefaults:
    """Per-task generation settings (``--max-tokens``, ``--stop``, ``--top-k-api``, ``--top-k-example``)."""

    max_tokens: int
    stop: tuple[str, ...]
    top_k_api: int = 10
    top_k_example: int = 3


# The released ToolBench harness (sambanova/toolbench, the README's commands for every task): generation
# length, and the docs and demonstrations retrieved; the stop sequences end a program where a model
# would start the next block ("------") or the next demonstration ("Task:"). The paper's Table 8 has
# the same generation lengths; for the docs it lists "all" functions for OpenWeather, The Cat API,
# Home Search, Trip Booking and WebShop, 10 for Google Sheets and VirtualHome and none for Tabletop,
# where the harness's commands, kept here, retrieve 3 for The Cat API and none for WebShop.
HARNESS_STOP = ("------", "Task:")
_PROGRAM_DEFAULTS: dict[str, GenerationDefaults] = {
    "OpenWeather": GenerationDefaults(128, HARNESS_STOP, top_k_api=10, top_k_example=3),
    "CatAPI": GenerationDefaults(128, HARNESS_STOP, top_k_api=3, top_k_example=3),
    "HomeSearch": GenerationDefaults(128, HARNESS_STOP, top_k_api=15, top_k_example=3),
    "TripBooking": GenerationDefaults(300, HARNESS_STOP, top_k_api=15, top_k_example=3),
    # The README's command retrieves no Sheets docs (its prompt came with its own); the harness's
    # test_all.sh retrieves 10, which our prompts need to name worksheet, pd and the argument order.
    "GoogleSheets": GenerationDefaults(256, HARNESS_STOP, top_k_api=10, top_k_example=3),
    "VirtualHome": GenerationDefaults(128, HARNESS_STOP, top_k_api=10, top_k_example=3),
    "WebShop": GenerationDefaults(128, HARNESS_STOP, top_k_api=0, top_k_example=3),
    # The harness gives Tabletop no docs or demonstrations because its query is a whole Code-as-Policies
    # prompt with its own examples; our task prompt is only the scene and the instruction, so the API
    # docs and three demonstrations stand in for that prompt. "objects = [" starts the next scene.
    "Tabletop": GenerationDefaults(256, (*HARNESS_STOP, "objects = ["), top_k_api=20, top_k_example=3),
}
_FALLBACK = GenerationDefaults(256, HARNESS_STOP)
# Interactive mode: one call per reply and no stop sequences (they would cut a tool call's JSON).
_INTERACTIVE_MAX_TOKENS = 512


def generation_defaults(task_name: str, mode: str) -> GenerationDefaults:
    program = _PROGRAM_DEFAULTS.get(task_name, _FALLBACK)
    if mode == "program":
        return program
    return GenerationDefaults(
        max(program.max_tokens, _INTERACTIVE_MAX_TOKENS), (), program.top_k_api, program.top_k_example
    )
