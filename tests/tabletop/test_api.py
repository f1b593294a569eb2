"""The Code-as-Policies agent API: results, argument errors, and the place-phrase parser."""

import numpy as np
import pytest

from tests.tabletop.helpers import SCENE
from toolbench.mock_services.tabletop import API_NAMES, ArgumentTypeError, TabletopSim, make_agent_api
from toolbench.mock_services.tabletop.world import BLOCK_SIZE, PLACES


@pytest.fixture(scope="module")
def world():
    sim = TabletopSim(list(SCENE), SCENE)
    yield sim
    sim.close()


@pytest.fixture(scope="module")
def api(world):
    return make_agent_api(world)


def test_namespace(api):
    assert set(api) == set(API_NAMES) and api["np"] is np
    assert all(callable(api[name]) for name in API_NAMES if name != "np")


def test_perception(api):
    assert api["get_obj_names"]() == list(SCENE)
    names = api["get_obj_names"]()
    names.append("intruder")
    assert "intruder" not in api["get_obj_names"]()  # a copy, not the simulator's list
    position = api["get_obj_pos"]("red block")
    assert isinstance(position, np.ndarray) and position.shape == (2,)
    assert position == pytest.approx(SCENE["red block"], abs=1e-3)
    assert api["get_obj_pos"]("top left corner") == pytest.approx(PLACES["top left corner"])
    min_x, min_y, max_x, max_y = api["get_bbox"]("red block")
    assert max_x - min_x == pytest.approx(BLOCK_SIZE, abs=2e-3) and min_x < SCENE["red block"][0] < max_x
    assert api["get_bbox"]("green bowl")[2] - api["get_bbox"]("green bowl")[0] == pytest.approx(0.14, abs=5e-3)
    assert api["get_color"]("green bowl") == pytest.approx((89 / 255, 169 / 255, 79 / 255, 1.0))
    assert api["is_obj_visible"]("red block") is True and api["is_obj_visible"]("pink block") is False


def test_place_names(api):
    assert api["get_corner_name"]([-0.2, -0.3]) == "top left corner"
    assert api["get_corner_name"](np.array([0.29, -0.79])) == "bottom right corner"
    assert api["get_corner_name"]("yellow block") == "bottom left corner"
    assert api["get_side_name"]([0.01, -0.22]) == "top side"
    assert api["get_side_name"]([-0.28, -0.52]) == "left side"
    assert api["get_side_name"]("blue block") == "bottom side"


def test_denormalize_xy(api):
    assert api["denormalize_xy"]([0.5, 0.5]) == pytest.approx([0.0, -0.5])
    assert api["denormalize_xy"]([0, 1]) == pytest.approx([-0.3, -0.2])
    assert api["denormalize_xy"](np.array([1, 0])) == pytest.approx([0.3, -0.8])
    assert api["denormalize_xy"]([[0, 0], [1, 1]]) == pytest.approx(np.array([[-0.3, -0.8], [0.3, -0.2]]))


def test_put_first_on_second_and_say():
    sim = TabletopSim(list(SCENE), SCENE)
    api = make_agent_api(sim)
    api["say"]("Ok - stacking the red block on the blue block")
    assert api["put_first_on_second"]("red block", "blue block") is None
    assert sim.get_obj_pos("red block")[2] == pytest.approx(0.06, abs=0.002)
    api["put_first_on_second"](api["get_obj_pos"]("yellow block"), "green bowl")
    assert np.linalg.norm(sim.get_obj_pos("yellow block")[:2] - sim.get_obj_pos("green bowl")[:2]) < 0.01
    api["put_first_on_second"]("red block", "top right corner")
    assert sim.get_obj_pos("red block")[:2] == pytest.approx(PLACES["top right corner"], abs=0.005)
    api["stack_objects_in_order"](["blue block", "red block"])
    assert sim.get_obj_pos("red block")[2] == pytest.approx(0.06, abs=0.002)
    assert sim.messages == ["Ok - stacking the red block on the blue block"] and sim.events == []
    sim.close()


@pytest.mark.parametrize(
    "name, args, error, match",
    [
        ("get_obj_pos", ("purple block",), KeyError, "no object named 'purple block'"),
        ("get_obj_pos", (3,), ValueError, "object name"),
        ("get_bbox", ("table",), KeyError, "no object named"),
        ("get_color", (None,), TypeError, "object name"),
        ("is_obj_visible", (["red block"],), ValueError, "object name"),
        ("denormalize_xy", ([1.5, 0.5],), ValueError, r"\[0, 1\]"),
        ("denormalize_xy", ("middle",), ValueError, "expects"),
        ("denormalize_xy", ([1, 2, 3],), ValueError, "shape"),
        ("get_corner_name", ([1.0, 1.0],), ValueError, "outside the workspace"),
        ("get_side_name", ([0.1],), ValueError, "pair"),
        ("put_first_on_second", ("red block", "red block"), ValueError, "on itself"),
        ("put_first_on_second", ("green bowl", "top side"), ValueError, "fixed to the table"),
        ("put_first_on_second", ("top side", "red block"), ValueError, "is a place"),
        ("put_first_on_second", ("pink block", "red block"), KeyError, "no object named"),
        ("put_first_on_second", ("red block", [0.0, 0.1]), ValueError, "outside the workspace"),
        ("put_first_on_second", ("red block", [np.inf, -0.5]), ValueError, "finite"),
        ("put_first_on_second", ({"x": 1}, "red block"), ValueError, "pair of numbers"),
        ("put_first_on_second", ("red block", ["a", "b"]), ValueError, "pair of numbers"),
        ("stack_objects_in_order", ("red block",), ValueError, "list of names"),
        ("say", (42,), ValueError, "string"),
        ("parse_position", (None,), ValueError, "phrase"),
        ("parse_position", ("somewhere over the rainbow",), ValueError, "cannot parse"),
        ("parse_position", ("10 cm left of the purple bowl",), KeyError, "purple bowl"),
        ("parse_position", ("",), ValueError, "empty"),
        ("parse_position", ("left of " * 80,), ValueError, "too long"),
    ],
)
def test_argument_errors(api, world, name, args, error, match):
    before = world.get_state()
    with pytest.raises(error, match=match):
        api[name](*args)
    assert world.get_state() == before  # a refused call changes nothing


def test_wrong_types_are_both_type_and_value_errors(api):
    with pytest.raises(ArgumentTypeError) as caught:
        api["get_obj_pos"](None)
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, ValueError)


def test_say_is_bounded():
    sim = TabletopSim(list(SCENE), SCENE)
    api = make_agent_api(sim)
    for _ in range(1000):
        api["say"]("x" * 5000)
    assert len(sim.messages) == 200 and all(len(m) == 1000 for m in sim.messages)
    sim.close()


@pytest.mark.parametrize(
    "phrase, expected",
    [
        ("top left corner", (-0.25, -0.25)),
        ("the Top-Right corner.", (0.25, -0.25)),
        ("the bottom side of the table", (0.0, -0.75)),
        ("middle", (0.0, -0.5)),
        ("the center", (0.0, -0.5)),
        ("left side", (-0.25, -0.5)),
        ("the blue block", None),
        ("(0.1, -0.45)", (0.1, -0.45)),
        ("10cm left of the green bowl", (0.0, -0.4)),
        ("10 cm to the left of the green bowl", (0.0, -0.4)),
        ("0.2 m to the top of the blue block", (0.1, -0.4)),
        ("0.2m to the bottom of the green bowl", (0.1, -0.6)),
        ("5 cm right of the red block", (-0.05, -0.4)),
        ("20 millimeters above the middle", (0.0, -0.48)),
        ("a point 3 cm below the top side", (0.0, -0.28)),
        ("left of the green bowl", (0.0, -0.4)),
        ("a point between the red block and the green bowl", (0.0, -0.4)),
        ("the middle of the top left corner and the top right corner", (0.0, -0.25)),
        ("the corner closest to the green bowl", (0.25, -0.25)),
        ("the corner farthest from the green bowl", (-0.25, -0.75)),
        ("the closest corner to the yellow block", (-0.25, -0.75)),
        ("the side nearest to the blue block", (0.0, -0.75)),
        ("the furthest side from the red block", (0.25, -0.5)),
        ("10 cm right of the corner closest to the red block", (-0.15, -0.25)),
    ],
)
def test_parse_position(api, phrase, expected):
    result = api["parse_position"](phrase)
    assert isinstance(result, np.ndarray) and result.shape == (2,)
    if expected is None:
        expected = api["get_obj_pos"]("blue block")
    assert result == pytest.approx(expected, abs=2e-3)
