"""The simulator: pick-and-place by physics, collisions, state snapshots and determinism."""

import json
import math
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.tabletop.helpers import SCENE, rounded
from toolbench.mock_services.tabletop import TabletopSim
from toolbench.mock_services.tabletop.world import BLOCK_SIZE, PLACES

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def sim():
    world = TabletopSim(list(SCENE), SCENE)
    yield world
    world.close()


def xy(sim, name):
    return sim.get_obj_pos(name)[:2]


def test_objects_rest_where_they_were_put(sim):
    assert sim.objects == tuple(SCENE)
    for name, (x, y) in SCENE.items():
        position = sim.get_obj_pos(name)
        assert position == pytest.approx([x, y, 0.02 if "block" in name else 0.0], abs=2e-4)
    low, high = sim.get_aabb("red block")
    assert high - low == pytest.approx([BLOCK_SIZE] * 3, abs=2e-3)
    assert sim.get_color("red block") == pytest.approx((1.0, 87 / 255, 89 / 255, 1.0))


def test_stacking_a_block_on_a_block(sim):
    result = sim.pick_place(xy(sim, "red block"), xy(sim, "blue block"))
    assert result.picked == "red block" and result.collisions == () and result.clean
    red, blue = sim.get_obj_pos("red block"), sim.get_obj_pos("blue block")
    assert np.linalg.norm(red[:2] - blue[:2]) < 0.005
    assert red[2] - blue[2] == pytest.approx(BLOCK_SIZE, abs=0.002)
    assert result.sim_seconds > 1.0 and sim.sim_time == pytest.approx(sim.steps / 240)


def test_a_block_goes_into_a_bowl_and_a_second_piles_on_it(sim):
    sim.pick_place(xy(sim, "red block"), xy(sim, "green bowl"))
    sim.pick_place(xy(sim, "yellow block"), xy(sim, "green bowl"))
    bowl = sim.get_obj_pos("green bowl")
    red, yellow = sim.get_obj_pos("red block"), sim.get_obj_pos("yellow block")
    assert np.linalg.norm(red[:2] - bowl[:2]) < 0.005 and red[2] < 0.03  # on the bowl's floor
    assert np.linalg.norm(yellow[:2] - bowl[:2]) < 0.01 and yellow[2] == pytest.approx(red[2] + BLOCK_SIZE, abs=0.002)
    assert sim.events == []


def test_four_block_tower_and_the_topmost_is_picked(sim):
    extra = {**SCENE, "pink block": (-0.2, -0.45)}
    world = TabletopSim(list(extra), extra)
    for name in ("red block", "yellow block", "pink block"):
        world.pick_place(xy(world, name), xy(world, "blue block"))
    heights = sorted(world.get_obj_pos(n)[2] for n in ("blue block", "red block", "yellow block", "pink block"))
    assert np.diff(heights) == pytest.approx([BLOCK_SIZE] * 3, abs=0.003)
    result = world.pick_place(xy(world, "blue block"), PLACES["top left corner"])
    assert result.picked == "pink block" and world.events == []
    world.close()


def test_places_across_the_table(sim):
    for place in ("top left corner", "bottom right corner", "top side", "bottom left corner", "right side"):
        result = sim.pick_place(xy(sim, "red block"), PLACES[place])
        assert result.clean, result
        assert np.linalg.norm(xy(sim, "red block") - PLACES[place]) < 0.005


def test_a_turned_block_is_gripped_square_and_stacked_aligned(sim):
    state = sim.get_state()
    state["poses"]["red block"][3:] = [0, 0, math.sin(0.35), math.cos(0.35)]  # 40 degrees
    state["poses"]["blue block"][3:] = [0, 0, math.sin(-0.15), math.cos(-0.15)]  # -17 degrees
    sim.set_state(state)
    result = sim.pick_place(xy(sim, "red block"), xy(sim, "blue block"))
    assert result.clean
    red = sim.get_obj_orientation("red block")
    blue = sim.get_obj_orientation("blue block")
    assert abs(abs(np.dot(red, blue)) - 1) < 1e-4  # same orientation: the top block sits square
    assert sim.get_obj_pos("red block")[2] == pytest.approx(0.06, abs=0.002)


def test_nothing_to_pick(sim):
    result = sim.pick_place((0.0, -0.5), (0.2, -0.3))
    assert result.picked is None and not result.clean
    assert "no block there" in result.notes[0]
    assert rounded(sim.positions(), 3) == rounded(
        {**{n: (*p, 0.02) for n, p in SCENE.items()}, "green bowl": (0.1, -0.4, 0)}, 3
    )
    bowl = sim.pick_place(xy(sim, "green bowl"), (0.2, -0.3))
    assert bowl.picked is None and "fixed to the table" in bowl.notes[0]
    assert np.allclose(xy(sim, "green bowl"), SCENE["green bowl"])
    assert len(sim.events) == 2


def test_crowded_pick_reports_the_fingers_hitting_a_neighbour():
    crowded = {"red block": (0.0, -0.5), "blue block": (0.05, -0.5), "green block": (0.0, -0.45)}
    world = TabletopSim(list(crowded), crowded)
    result = world.pick_place(crowded["red block"], (-0.2, -0.7))
    assert result.collisions, result
    assert any("finger touched the" in text for text in result.collisions)
    assert world.events[-len(result.collisions) :] == list(result.collisions)
    world.close()


def test_pick_place_argument_errors(sim):
    with pytest.raises(ValueError, match="outside the workspace"):
        sim.pick_place((0.5, -0.5), (0, -0.5))
    with pytest.raises(ValueError, match="outside the workspace"):
        sim.pick_place((0, -0.5), (0, 0))
    with pytest.raises(TypeError):
        sim.pick_place("red block", (0, -0.5))
    with pytest.raises(ValueError, match="finite"):
        sim.pick_place((math.nan, -0.5), (0, -0.5))
    with pytest.raises(KeyError, match="no object named"):
        sim.get_obj_pos("purple block")
    with pytest.raises(ValueError, match="not an object name"):
        TabletopSim(["red cube"], {"red cube": (0, -0.5)})
    with pytest.raises(ValueError, match="at most 4"):
        TabletopSim([f"{c} block" for c in ("red", "blue", "green", "pink", "cyan")], {})
    with pytest.raises(KeyError, match="no position"):
        TabletopSim(["red block"], {})


def test_state_is_plain_data_and_round_trips_exactly(sim):
    sim.pick_place(xy(sim, "red block"), xy(sim, "blue block"))
    state = sim.get_state()
    assert json.loads(json.dumps(state)) == state
    assert pickle.loads(pickle.dumps(state)) == state
    follow = (xy(sim, "yellow block"), xy(sim, "green bowl"))
    sim.pick_place(*follow)
    after_original = sim.get_state()

    other = TabletopSim()
    other.set_state(json.loads(json.dumps(state)))
    assert other.get_state() == state
    other.pick_place(*follow)
    assert other.get_state() == after_original  # bit for bit: poses, velocities, joints, steps

    sim.set_state(state)  # and back in time on the same simulator
    assert sim.get_state() == state
    sim.pick_place(*follow)
    assert sim.get_state() == after_original
    other.close()


def test_set_state_rejects_foreign_data(sim):
    with pytest.raises(ValueError, match="not a Tabletop state"):
        sim.set_state({"objects": []})
    state = sim.get_state()
    state["joints"] = state["joints"][:3]
    with pytest.raises(ValueError, match="joint states"):
        sim.set_state(state)


SCRIPT = """
from toolbench.mock_services.tabletop import TabletopSim
scene = {scene!r}
sim = TabletopSim(list(scene), scene)
sim.pick_place(sim.get_obj_pos("red block")[:2], sim.get_obj_pos("blue block")[:2])
sim.pick_place(sim.get_obj_pos("yellow block")[:2], sim.get_obj_pos("green bowl")[:2])
print(repr(sorted(sim.get_state()["poses"].items())))
"""


def test_same_moves_give_identical_floats_in_any_process():
    code = SCRIPT.format(scene=SCENE)
    local: dict = {}
    exec(compile(code.replace("print(", "result = ("), "<determinism>", "exec"), local)
    outputs = set()
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        run = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
        )
        assert run.returncode == 0, run.stderr
        outputs.add(run.stdout.strip())
    assert outputs == {local["result"]}
