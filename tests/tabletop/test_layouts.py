"""Initial layouts: the sampler's rules, the record loader, and the upstream layouts."""

import itertools
import json
import math

import numpy as np
import pytest

from tests.tabletop.helpers import CAP_DIR
from toolbench.mock_services.tabletop import (
    COUNTS,
    TEMPLATE_IDS,
    TabletopSim,
    check,
    instruction,
    layout_from_record,
    make_agent_api,
    reference_program,
    sample_layout,
)
from toolbench.mock_services.tabletop.layouts import acceptable, target_places
from toolbench.mock_services.tabletop.world import MIN_SPAWN_GAP, SPAWN_BOUNDS, TASK_COLORS


def test_sampling_is_a_function_of_the_generator_state():
    first = sample_layout("SI_5", np.random.default_rng(3))
    again = sample_layout("SI_5", np.random.default_rng(3))
    other = sample_layout("SI_5", np.random.default_rng(4))
    assert first == again and first.positions == again.positions and first.variables == again.variables
    assert first.positions != other.positions


@pytest.mark.parametrize("template_id", TEMPLATE_IDS)
def test_sampled_layouts_follow_the_rules(template_id):
    rng = np.random.default_rng(11)
    (low_blocks, high_blocks), (low_bowls, high_bowls) = COUNTS[template_id]
    for _ in range(15):
        layout = sample_layout(template_id, rng)
        assert low_blocks <= len(layout.blocks) <= high_blocks and low_bowls <= len(layout.bowls) <= high_bowls
        assert list(layout.objects) == layout.blocks + layout.bowls
        assert {name.split()[0] for name in layout.objects} <= set(TASK_COLORS)
        (x0, x1), (y0, y1) = SPAWN_BOUNDS
        for name, (x, y, z) in layout.positions.items():
            assert x0 <= x <= x1 and y0 <= y <= y1 and z == (0.02 if "block" in name else 0.0)
        for a, b in itertools.combinations(layout.positions.values(), 2):
            assert math.dist(a[:2], b[:2]) >= MIN_SPAWN_GAP
        assert acceptable(layout)
        assert not check(template_id, layout.variables, layout.objects, layout.positions, layout.positions)[0]
        for place in target_places(layout):
            assert all(math.dist(place, xyz[:2]) >= 0.1 for xyz in layout.positions.values())
        assert layout.instruction and "{" not in layout.instruction


def test_colour_tasks_have_matching_colours():
    rng = np.random.default_rng(0)
    for template_id in ("SI_4", "UI_1"):
        for _ in range(10):
            layout = sample_layout(template_id, rng)
            shared = {b.split()[0] for b in layout.blocks} & {b.split()[0] for b in layout.bowls}
            assert len(shared) >= 2


def test_record_round_trip():
    layout = sample_layout("UI_3", np.random.default_rng(8))
    record = json.loads(json.dumps(layout.to_record()))
    assert record["tester_id"] == "UI_3" and record["configs"]["instruction"] == layout.instruction
    assert layout_from_record(record) == layout
    by_name = {"tester_id": "UI_3", "configs": {**record["configs"], "positions": dict(layout.positions)}}
    del by_name["configs"]["position_dict"]
    assert layout_from_record(by_name) == layout


def test_record_errors():
    layout = sample_layout("SI_0", np.random.default_rng(1))
    record = layout.to_record()
    # The record's wording (e.g. the upstream text) does not have to be ours: the id and variables rule.
    reworded = {**record, "configs": {**record["configs"], "instruction": "Pick up the block, put it elsewhere"}}
    assert layout_from_record(reworded) == layout
    with pytest.raises(ValueError, match="needs 'tester_id'"):
        layout_from_record({"configs": {}})
    short = {**record["configs"], "position_dict": {"block_pos": [], "bowl_pos": []}}
    with pytest.raises(ValueError, match="positions for"):
        layout_from_record({**record, "configs": short})
    with pytest.raises(KeyError, match="needs the variable"):
        layout_from_record(
            {**record, "configs": {**record["configs"], "instruction_vars_dict": {}, "instruction": None}}
        )


def test_sampler_argument_errors():
    with pytest.raises(ValueError, match="unknown Tabletop template"):
        sample_layout("XI_1", np.random.default_rng(0))
    with pytest.raises(ValueError, match="numpy Generator"):
        sample_layout("SI_1", 42)


# ---------------------------------------------------------------------- the upstream layouts
@pytest.fixture(scope="module")
def valid_positions():
    path = CAP_DIR / "initial_envs.VALID_POSITIONS.json"
    if not path.is_file():
        pytest.skip(f"reference data not found at {path}")
    return json.loads(path.read_text(encoding="utf-8"))


def upstream_record(key, entry, template_id="SI_2", variables=None, block_colours=None, bowl_colours=None):
    """An upstream-shaped test record over one of the upstream layouts."""
    n_blocks, n_bowls = (int(v) for v in key.strip("()").split(","))
    blocks = [f"{c} block" for c in (block_colours or TASK_COLORS[:n_blocks])]
    bowls = [f"{c} bowl" for c in (bowl_colours or TASK_COLORS[::-1][:n_bowls])]
    variables = variables if variables is not None else {"corner_or_side": "top side"}
    return {
        "tester_id": template_id,
        "configs_id": 0,
        "configs": {
            "block_list": blocks,
            "bowl_list": bowls,
            "position_dict": entry,
            "instruction": instruction(template_id, variables),
            "instruction_vars_dict": variables,
        },
    }


def test_every_upstream_layout_loads(valid_positions):
    assert len(valid_positions) == 20 and sum(len(v) for v in valid_positions.values()) == 400
    (x0, x1), (y0, y1) = SPAWN_BOUNDS
    for key, entries in valid_positions.items():
        for entry in entries:
            layout = layout_from_record(upstream_record(key, entry))
            assert f"({len(layout.blocks)}, {len(layout.bowls)})" == key
            for name, raw in zip(layout.blocks + layout.bowls, entry["block_pos"] + entry["bowl_pos"]):
                x, y, z = layout.positions[name]
                assert (x, y) == (float(raw[0]), float(raw[1]))
                assert z == (0.02 if "block" in name else 0.0)  # upstream spawns blocks 1 cm up
                assert x0 - 1e-6 <= x <= x1 + 1e-6 and y0 - 1e-6 <= y <= y1 + 1e-6
            for a, b in itertools.combinations(layout.positions.values(), 2):
                assert math.dist(a[:2], b[:2]) >= MIN_SPAWN_GAP - 1e-3


@pytest.mark.parametrize(
    "key, template_id, variables, block_colours, bowl_colours",
    [
        ("(4, 4)", "SI_1", {}, None, None),
        ("(3, 2)", "SI_1", {}, None, None),
        ("(4, 4)", "SI_4", {}, ("red", "blue", "green", "pink"), ("pink", "green", "red", "blue")),
        ("(2, 1)", "SI_0", {"block": "blue block", "object1": "brown bowl"}, None, None),
    ],
)
def test_upstream_layouts_run_with_our_references(
    valid_positions, key, template_id, variables, block_colours, bowl_colours
):
    entry = valid_positions[key][0]
    layout = layout_from_record(upstream_record(key, entry, template_id, variables, block_colours, bowl_colours))
    sim = TabletopSim(layout.objects, layout.positions)
    exec(reference_program(template_id, layout.variables, layout.objects, layout.positions), make_agent_api(sim))
    ok, reason = check(template_id, layout.variables, layout.objects, layout.positions, sim.positions())
    assert ok and sim.events == [], (reason, sim.events)
    sim.close()
