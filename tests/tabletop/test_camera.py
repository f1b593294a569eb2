"""Cameras: TinyRenderer RGB arrays, colours where the blocks are, visibility."""

import numpy as np
import pytest

from tests.tabletop.helpers import SCENE
from toolbench.mock_services.tabletop import TabletopSim
from toolbench.mock_services.tabletop.world import BLOCK_HALF, COLORS, color_of

TABLE_RGB = (51, 51, 51)


@pytest.fixture(scope="module")
def sim():
    world = TabletopSim(list(SCENE), SCENE)
    yield world
    world.close()


def rgb255(name):
    return np.array([round(c * 255) for c in COLORS[color_of(name)][:3]])


def pixel_at(sim, image, point, camera):
    column, row = sim.project(point, camera, image.shape[1], image.shape[0])
    return image[int(row), int(column)].astype(int)


@pytest.mark.parametrize("camera", ["front", "top"])
def test_images_are_rgb_uint8_and_repeatable(sim, camera):
    image = sim.render(camera)
    assert image.shape == (240, 240, 3) and image.dtype == np.uint8
    wide = sim.render(camera, width=320, height=200)
    assert wide.shape == (200, 320, 3)
    assert np.array_equal(sim.render(camera), image)
    assert len(np.unique(image.reshape(-1, 3), axis=0)) > 10  # a scene, not a blank frame


@pytest.mark.parametrize("camera", ["front", "top"])
def test_each_block_shows_its_colour_where_it_is(sim, camera):
    image = sim.render(camera)
    for name in ("red block", "yellow block"):
        top_face = sim.get_obj_pos(name) + [0, 0, BLOCK_HALF]
        assert np.abs(pixel_at(sim, image, top_face, camera) - rgb255(name)).max() <= 3, name


def test_a_moved_block_leaves_table_colour_behind():
    world = TabletopSim(list(SCENE), SCENE)
    old = world.get_obj_pos("yellow block") + [0, 0, BLOCK_HALF]
    world.pick_place(old[:2], (-0.2, -0.3))
    image = world.render("top")
    assert np.abs(pixel_at(world, image, old - [0, 0, 2 * BLOCK_HALF], "top") - TABLE_RGB).max() <= 3
    new = world.get_obj_pos("yellow block") + [0, 0, BLOCK_HALF]
    assert np.abs(pixel_at(world, image, new, "top") - rgb255("yellow block")).max() <= 3
    world.close()


def test_top_view_orientation(sim):
    """Left of the table is the image's left, the top edge (toward the robot) the image's top."""
    left, _ = sim.project((-0.25, -0.5, 0), "top")
    right, _ = sim.project((0.25, -0.5, 0), "top")
    _, top = sim.project((0, -0.25, 0), "top")
    _, bottom = sim.project((0, -0.75, 0), "top")
    assert left < 120 < right and top < 120 < bottom


def test_visibility():
    world = TabletopSim(list(SCENE), SCENE)
    assert all(world.is_visible(name) for name in SCENE)
    assert not world.is_visible("pink block") and not world.is_visible(None)
    state = world.get_state()
    state["poses"]["red block"][:3] = [0.6, -0.5, -0.02]  # off the table, on the floor
    world.set_state(state)
    assert not world.is_visible("red block") and world.is_visible("blue block")
    world.close()


def test_camera_errors(sim):
    with pytest.raises(ValueError, match="unknown camera"):
        sim.render("side")
    with pytest.raises(ValueError, match="positive whole number"):
        sim.render("front", width=0)
    with pytest.raises(ValueError, match="limited to"):
        sim.render("front", width=10_000, height=10_000)
