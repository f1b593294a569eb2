"""Reference programs: plain API code that solves every template in sampled layouts, cleanly.

The programs are run here with a bare ``exec`` over the API namespace; the product runs agent
code in the core sandbox, so they are also checked to compile under RestrictedPython.
"""

import numpy as np
import pytest
from RestrictedPython import compile_restricted_exec

from toolbench.mock_services.tabletop import (
    TEMPLATE_IDS,
    TabletopSim,
    check,
    make_agent_api,
    reference_program,
    sample_layout,
)
from toolbench.mock_services.tabletop.references import mismatched_assignment, plan_line

LAYOUTS_PER_TEMPLATE = 3


def run(layout, program):
    sim = TabletopSim(layout.objects, layout.positions)
    exec(program, make_agent_api(sim))
    verdict = check(layout.template_id, layout.variables, layout.objects, layout.positions, sim.positions())
    events = list(sim.events)
    sim.close()
    return verdict, events


@pytest.mark.parametrize("template_id", TEMPLATE_IDS)
def test_reference_programs_succeed_without_collisions(template_id):
    rng = np.random.default_rng(sum(map(ord, template_id)))
    for _ in range(LAYOUTS_PER_TEMPLATE):
        layout = sample_layout(template_id, rng)
        program = reference_program(template_id, layout.variables, layout.objects, layout.positions)
        (ok, reason), events = run(layout, program)
        assert ok and events == [], f"{layout.instruction}\n{program}\n{reason}\n{events}"


@pytest.mark.parametrize("template_id", TEMPLATE_IDS)
def test_reference_programs_are_sandbox_safe(template_id):
    layout = sample_layout(template_id, np.random.default_rng(1))
    program = reference_program(template_id, layout.variables, layout.objects, layout.positions)
    assert "import" not in program and "__" not in program and "\n_" not in program
    assert program.startswith(f"# {layout.instruction}.\n")
    compiled = compile_restricted_exec(program, "<reference>")
    assert compiled.errors == () and compiled.code is not None


def test_a_block_six_centimetres_off_fails():
    layout = sample_layout("UI_3", np.random.default_rng(2))
    program = reference_program("UI_3", layout.variables, layout.objects, layout.positions)
    assert program.count(", target_pos)") == 1
    inward = "np.array([0.06 if target_pos[0] < 0 else -0.06, 0.0])"  # toward the middle: stays on the table
    (ok, reason), _ = run(layout, program.replace(", target_pos)", f", target_pos + {inward})"))
    assert not ok and "6.0 cm from the point" in reason, reason


def test_mismatched_assignment_backtracks():
    blocks = ["red block", "blue block"]
    assert mismatched_assignment(blocks, ["blue bowl", "red bowl"]) == [
        ("red block", "blue bowl"),
        ("blue block", "red bowl"),
    ]
    # Greedy would give the red block the green bowl and leave the blue block only its own colour.
    assert mismatched_assignment(blocks, ["green bowl", "blue bowl"]) == [
        ("red block", "blue bowl"),
        ("blue block", "green bowl"),
    ]
    assert mismatched_assignment(["red block"], ["red bowl"]) is None


def test_line_plan_keeps_an_anchor_when_it_can():
    positions = {"red block": (-0.1, -0.5, 0.02), "blue block": (0.1, -0.35, 0.02), "green block": (0.15, -0.65, 0.02)}
    moves = plan_line("horizontal", list(positions), positions)
    assert moves is not None and len(moves) == 2
    final = {name: moves.get(name, positions[name][:2]) for name in positions}
    assert np.ptp([xy[1] for xy in final.values()]) < 1e-9
