"""A symbolic home for ToolBench's VirtualHome task, usable without the env.

``build_home(k)`` gives one of five homes; ``World(home, start_facts)`` runs actions one at a time
with preconditions and effects (``world.do("Grab", ("cup",))``) and answers facts
(``world.holds("inside(milk, fridge)")``); ``program`` parses, checks and scores ToolBench's
``Agent.<Action>(...)`` programs.
"""

from toolbench.mock_services.virtualhome.homes import HOMES, Home, build_home
from toolbench.mock_services.virtualhome.objects import ACTIONS, ACTIONS_BY_NAME, PROPERTIES, ROOMS
from toolbench.mock_services.virtualhome.program import (
    Call,
    accepted,
    call_from_step,
    call_text,
    clean_lines,
    lcs_score,
    parse_program,
    step_text,
)
from toolbench.mock_services.virtualhome.world import Result, World, fact, start_world

__all__ = [
    "ACTIONS",
    "ACTIONS_BY_NAME",
    "HOMES",
    "PROPERTIES",
    "ROOMS",
    "Call",
    "Home",
    "Result",
    "World",
    "accepted",
    "build_home",
    "call_from_step",
    "call_text",
    "clean_lines",
    "fact",
    "lcs_score",
    "parse_program",
    "start_world",
    "step_text",
]
