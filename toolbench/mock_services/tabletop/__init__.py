"""The Tabletop backend: a PyBullet UR5e pick-and-place world with the Code-as-Policies agent API.

- ``TabletopSim`` (``sim``): the world, ``pick_place``, queries, cameras, ``get_state``/``set_state``.
- ``make_agent_api`` (``api``): the functions agent programs call; ``parse_position`` (``places``).
- ``check`` (``checkers``): success for the 15 ToolBench templates (``templates``).
- ``sample_layout``, ``layout_from_record`` (``layouts``): initial scenes; ``reference_program``
  (``references``): a program that solves one.

Usable on its own: nothing here knows about prompts, sandboxes or Gymnasium.
"""

from toolbench.mock_services.tabletop.api import API_NAMES, AgentAPI, make_agent_api
from toolbench.mock_services.tabletop.checkers import check
from toolbench.mock_services.tabletop.layouts import COUNTS, Layout, layout_from_record, make_layout, sample_layout
from toolbench.mock_services.tabletop.places import parse_position
from toolbench.mock_services.tabletop.references import reference_program
from toolbench.mock_services.tabletop.sim import PickPlaceResult, TabletopSim
from toolbench.mock_services.tabletop.templates import ATTRIBUTES, TEMPLATE_IDS, TEMPLATES, THRESHOLD, instruction
from toolbench.mock_services.tabletop.world import ArgumentTypeError

__all__ = [
    "API_NAMES",
    "ATTRIBUTES",
    "COUNTS",
    "TEMPLATES",
    "TEMPLATE_IDS",
    "THRESHOLD",
    "AgentAPI",
    "ArgumentTypeError",
    "Layout",
    "PickPlaceResult",
    "TabletopSim",
    "check",
    "instruction",
    "layout_from_record",
    "make_agent_api",
    "make_layout",
    "parse_position",
    "reference_program",
    "sample_layout",
]
