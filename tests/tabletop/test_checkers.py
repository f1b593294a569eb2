"""Success checks: for every template a final state that passes and final states that must fail.

The failing states include the ones the upstream tester let through: blocks side by side
counted as stacked, blocks in bowls of their own colour counted as mismatched, any near-line
counted as diagonal, untouched blocks free to wander.
"""

import pytest

from toolbench.mock_services.tabletop import TEMPLATE_IDS, check
from toolbench.mock_services.tabletop.checkers import CHECKS
from toolbench.mock_services.tabletop.templates import HELD_OUT_IDS, TESTER_IDS
from toolbench.mock_services.tabletop.world import PLACES

BLOCKS = {
    "red block": (-0.15, -0.35),
    "blue block": (0.02, -0.35),
    "green block": (0.15, -0.35),
    "yellow block": (-0.12, -0.6),
}
BOWLS = {"red bowl": (0.0, -0.6), "blue bowl": (0.15, -0.6)}


def table(xy):
    return (xy[0], xy[1], 0.02)


def level(xy, n):
    """A block n blocks up a stack standing on the table at xy."""
    return (xy[0], xy[1], 0.02 + 0.04 * n)


def bowl_level(xy, n=0):
    """A block in a bowl at xy, n blocks up the pile."""
    return (xy[0], xy[1], 0.025 + 0.04 * n)


def scene(blocks=None, bowls=None):
    blocks = BLOCKS if blocks is None else blocks
    bowls = BOWLS if bowls is None else bowls
    initial = {name: table(xy) for name, xy in blocks.items()} | {name: (*xy, 0.0) for name, xy in bowls.items()}
    return list(initial), initial


def final(initial, **moved):
    return {**initial, **{name.replace("_", " "): xyz for name, xyz in moved.items()}}


def verdict(template_id, variables, objects, initial, end):
    ok, reason = check(template_id, variables, objects, initial, end)
    assert isinstance(reason, str) and reason
    return ok, reason


def assert_passes(template_id, variables, objects, initial, end):
    ok, reason = verdict(template_id, variables, objects, initial, end)
    assert ok, reason


def assert_fails(template_id, variables, objects, initial, end, why):
    ok, reason = verdict(template_id, variables, objects, initial, end)
    assert not ok and why in reason, reason


OBJECTS, INITIAL = scene()
BLUE = BLOCKS["blue block"]
RED_BOWL, BLUE_BOWL = BOWLS["red bowl"], BOWLS["blue bowl"]


def test_si_0_on_a_block_and_in_a_bowl():
    on_block = {"block": "red block", "object1": "blue block"}
    assert_passes("SI_0", on_block, OBJECTS, INITIAL, final(INITIAL, red_block=level((0.025, -0.352), 1)))
    assert_fails("SI_0", on_block, OBJECTS, INITIAL, final(INITIAL, red_block=table((0.06, -0.35))), "not one block")
    assert_fails("SI_0", on_block, OBJECTS, INITIAL, final(INITIAL, red_block=level((0.1, -0.35), 1)), "beside")
    moved_other = final(INITIAL, red_block=level(BLUE, 1), green_block=table((0.2, -0.5)))
    assert_fails("SI_0", on_block, OBJECTS, INITIAL, moved_other, "green block was not to be moved")
    in_bowl = {"block": "red block", "object1": "red bowl"}
    assert_passes("SI_0", in_bowl, OBJECTS, INITIAL, final(INITIAL, red_block=bowl_level((0.01, -0.61))))
    assert_fails("SI_0", in_bowl, OBJECTS, INITIAL, final(INITIAL, red_block=table((0.0, -0.68))), "from the centre")


def test_si_1_stack_means_one_block_on_another():
    tower = final(
        INITIAL,
        red_block=level((0.025, -0.35), 1),
        green_block=level((0.02, -0.353), 2),
        yellow_block=level((0.018, -0.35), 3),
    )
    assert_passes("SI_1", {}, OBJECTS, INITIAL, tower)
    side_by_side = final(
        INITIAL, red_block=level((0.0, -0.35), 1), green_block=level((0.04, -0.35), 1), yellow_block=level(BLUE, 2)
    )
    assert_fails("SI_1", {}, OBJECTS, INITIAL, side_by_side, "not one stack")  # all within 5 cm in xy
    two_stacks = final(INITIAL, red_block=level(BLUE, 1), yellow_block=level(BLOCKS["green block"], 1))
    assert_fails("SI_1", {}, OBJECTS, INITIAL, two_stacks, "not one stack")
    floating = {name: (x, y, z + 0.1) if "block" in name else (x, y, z) for name, (x, y, z) in tower.items()}
    assert_fails("SI_1", {}, OBJECTS, INITIAL, floating, "not resting on the table")


def test_si_2_every_block_at_the_place():
    corner = PLACES["top left corner"]
    variables = {"corner_or_side": "top left corner"}
    pile = final(INITIAL, **{f"{c}_block": level(corner, i) for i, c in enumerate(("red", "blue", "green", "yellow"))})
    assert_passes("SI_2", variables, OBJECTS, INITIAL, pile)
    one_off = {**pile, "yellow block": table((corner[0] + 0.06, corner[1]))}
    assert_fails("SI_2", variables, OBJECTS, INITIAL, one_off, "yellow block is 6.0 cm from the top left corner")


def test_si_3_every_block_in_the_bowl():
    variables = {"bowl": "blue bowl"}
    pile = final(
        INITIAL, **{f"{c}_block": bowl_level(BLUE_BOWL, i) for i, c in enumerate(("red", "blue", "green", "yellow"))}
    )
    assert_passes("SI_3", variables, OBJECTS, INITIAL, pile)
    beside = {**pile, "green block": table((0.15, -0.52))}
    assert_fails("SI_3", variables, OBJECTS, INITIAL, beside, "green block is 8.0 cm from the centre of the blue bowl")
    wrong_bowl = {**pile, "yellow block": bowl_level(RED_BOWL)}
    assert_fails("SI_3", variables, OBJECTS, INITIAL, wrong_bowl, "yellow block")


def test_si_4_matching_colours_and_the_rest_stay():
    matched = final(INITIAL, red_block=bowl_level(RED_BOWL), blue_block=bowl_level(BLUE_BOWL))
    assert_passes("SI_4", {}, OBJECTS, INITIAL, matched)
    swapped = final(INITIAL, red_block=bowl_level(BLUE_BOWL), blue_block=bowl_level(RED_BOWL))
    assert_fails("SI_4", {}, OBJECTS, INITIAL, swapped, "red block")
    extra = {**matched, "green block": bowl_level(BLUE_BOWL, 1)}
    assert_fails("SI_4", {}, OBJECTS, INITIAL, extra, "green block was not to be moved")


def test_si_5_blocks_to_the_direction_of_the_bowl():
    # Left of the red bowl (x < 0): red and yellow; blue (x 0.02) and green are to its right.
    variables = {"direction": "left", "bowl": "red bowl", "corner_or_side": "top right corner"}
    corner = PLACES["top right corner"]
    done = final(INITIAL, red_block=level(corner, 0), yellow_block=level(corner, 1))
    assert_passes("SI_5", variables, OBJECTS, INITIAL, done)
    assert_fails("SI_5", variables, OBJECTS, INITIAL, final(INITIAL, red_block=table(corner)), "yellow block")
    too_many = {**done, "blue block": level(corner, 2)}
    assert_fails("SI_5", variables, OBJECTS, INITIAL, too_many, "blue block was not to be moved")
    top = {"direction": "top", "bowl": "red bowl", "corner_or_side": "bottom side"}
    side = PLACES["bottom side"]
    ups = final(INITIAL, **{f"{c}_block": level(side, i) for i, c in enumerate(("red", "blue", "green"))})
    assert_passes("SI_5", top, OBJECTS, INITIAL, ups)


def test_si_6_closest_and_farthest_block():
    # From the blue bowl: green 0.25 m, blue 0.28, yellow 0.27, red 0.39.
    closest = {"distance": "closest", "bowl": "blue bowl", "corner_or_side": "left side"}
    side = PLACES["left side"]
    assert_passes("SI_6", closest, OBJECTS, INITIAL, final(INITIAL, green_block=table(side)))
    assert_fails("SI_6", closest, OBJECTS, INITIAL, final(INITIAL, blue_block=table(side)), "green block")
    farthest = {**closest, "distance": "farthest"}
    assert_passes("SI_6", farthest, OBJECTS, INITIAL, final(INITIAL, red_block=table(side)))
    assert_fails("SI_6", farthest, OBJECTS, INITIAL, final(INITIAL, green_block=table(side)), "red block")


def test_si_7_nth_block_from_a_side():
    # Left to right: red -0.15, yellow -0.12, blue 0.02, green 0.15.
    side = PLACES["bottom side"]
    second_left = {"nth": "second", "direction": "left", "corner_or_side": "bottom side"}
    assert_passes("SI_7", second_left, OBJECTS, INITIAL, final(INITIAL, yellow_block=table(side)))
    assert_fails("SI_7", second_left, OBJECTS, INITIAL, final(INITIAL, red_block=table(side)), "yellow block")
    second_right = {**second_left, "direction": "right"}
    assert_passes("SI_7", second_right, OBJECTS, INITIAL, final(INITIAL, blue_block=table(side)))
    first_bottom = {**second_left, "nth": "first", "direction": "bottom"}
    assert_passes("SI_7", first_bottom, OBJECTS, INITIAL, final(INITIAL, yellow_block=table(side)))
    three, start = scene(blocks={k: BLOCKS[k] for k in ("red block", "blue block", "green block")})
    fourth = {**second_left, "nth": "fourth"}
    assert_fails("SI_7", fourth, three, start, start, "no fourth block")


def test_ui_0_different_corners():
    corners = ("top left corner", "top right corner", "bottom left corner", "bottom right corner")
    spread = final(
        INITIAL, **{f"{c}_block": table(PLACES[k]) for c, k in zip(("red", "blue", "green", "yellow"), corners)}
    )
    assert_passes("UI_0", {}, OBJECTS, INITIAL, spread)
    doubled = {**spread, "yellow block": level(PLACES["top left corner"], 1)}
    assert_fails("UI_0", {}, OBJECTS, INITIAL, doubled, "both at the top left corner")
    off = {**spread, "green block": table((-0.25 + 0.07, -0.75))}
    assert_fails("UI_0", {}, OBJECTS, INITIAL, off, "green block is at no corner")


def test_ui_1_mismatched_colours_one_per_bowl():
    bowls = {
        "red bowl": (-0.15, -0.6),
        "blue bowl": (0.0, -0.6),
        "green bowl": (0.15, -0.6),
        "yellow bowl": (0.0, -0.45),
    }
    objects, start = scene(bowls=bowls)
    at = {name: bowl_level(xy) for name, xy in bowls.items()}
    mismatched = final(
        start,
        red_block=at["blue bowl"],
        blue_block=at["red bowl"],
        green_block=at["yellow bowl"],
        yellow_block=at["green bowl"],
    )
    assert_passes("UI_1", {}, objects, start, mismatched)
    own = {**mismatched, "green block": at["green bowl"], "yellow block": at["yellow bowl"]}
    assert_fails("UI_1", {}, objects, start, own, "bowl of its own colour")
    shared = {**mismatched, "yellow block": bowl_level(bowls["red bowl"], 1)}
    assert_fails("UI_1", {}, objects, start, shared, "share the red bowl")
    outside = {**mismatched, "yellow block": table((0.25, -0.3))}
    assert_fails("UI_1", {}, objects, start, outside, "yellow block is in no bowl")


def test_ui_2_one_stack_at_the_place():
    corner = PLACES["bottom right corner"]
    variables = {"corner_or_side": "bottom right corner"}
    tower = final(INITIAL, **{f"{c}_block": level(corner, i) for i, c in enumerate(("blue", "red", "green", "yellow"))})
    assert_passes("UI_2", variables, OBJECTS, INITIAL, tower)
    elsewhere = final(
        INITIAL, **{f"{c}_block": level((0.0, -0.5), i) for i, c in enumerate(("blue", "red", "green", "yellow"))}
    )
    assert_fails("UI_2", variables, OBJECTS, INITIAL, elsewhere, "from the bottom right corner")
    heap = {**tower, "yellow block": level((corner[0] - 0.04, corner[1]), 2)}
    assert_fails("UI_2", variables, OBJECTS, INITIAL, heap, "not one stack")


def test_ui_3_offset_from_the_bowl():
    left = {"block": "red block", "magnitude": "10 cm", "direction": "left", "bowl": "blue bowl"}
    assert_passes("UI_3", left, OBJECTS, INITIAL, final(INITIAL, red_block=table((0.05, -0.6))))
    assert_fails("UI_3", left, OBJECTS, INITIAL, final(INITIAL, red_block=table((0.15, -0.5))), "14.1 cm")
    top = {**left, "magnitude": "0.2 m", "direction": "top"}
    assert_passes("UI_3", top, OBJECTS, INITIAL, final(INITIAL, red_block=table((0.16, -0.4))))
    nudged = final(INITIAL, red_block=table((0.15, -0.4)), blue_block=table((0.02, -0.45)))
    assert_fails("UI_3", top, OBJECTS, INITIAL, nudged, "blue block was not to be moved")


def test_ui_4_corner_closest_or_farthest_from_the_bowl():
    farthest = {"block": "red block", "distance": "farthest", "bowl": "blue bowl"}
    assert_passes("UI_4", farthest, OBJECTS, INITIAL, final(INITIAL, red_block=table(PLACES["top left corner"])))
    closest = {**farthest, "distance": "closest"}
    assert_fails(
        "UI_4", closest, OBJECTS, INITIAL, final(INITIAL, red_block=table(PLACES["top left corner"])), "bottom right"
    )
    assert_passes("UI_4", closest, OBJECTS, INITIAL, final(INITIAL, red_block=table(PLACES["bottom right corner"])))


def test_ui_5_lines():
    objects, start = scene(blocks={k: BLOCKS[k] for k in ("red block", "blue block", "green block")}, bowls={})

    def blocks(*points):
        return final(start, **{f"{c}_block": table(p) for c, p in zip(("red", "blue", "green"), points)})

    horizontal = blocks((-0.1, -0.5), (0.0, -0.5), (0.1, -0.51))
    vertical = blocks((0.1, -0.3), (0.1, -0.45), (0.11, -0.6))
    diagonal = blocks((-0.1, -0.4), (0.0, -0.5), (0.1, -0.6))
    other_diagonal = blocks((-0.1, -0.6), (0.0, -0.5), (0.1, -0.4))
    assert_passes("UI_5", {"line": "horizontal"}, objects, start, horizontal)
    assert_passes("UI_5", {"line": "vertical"}, objects, start, vertical)
    assert_passes("UI_5", {"line": "diagonal"}, objects, start, diagonal)
    assert_passes("UI_5", {"line": "diagonal"}, objects, start, other_diagonal)
    assert_fails("UI_5", {"line": "diagonal"}, objects, start, horizontal, "stray")
    assert_fails("UI_5", {"line": "horizontal"}, objects, start, diagonal, "stray")
    assert_fails("UI_5", {"line": "vertical"}, objects, start, horizontal, "stray")
    crowded = blocks((0.0, -0.5), (0.03, -0.5), (0.1, -0.5))
    assert_fails("UI_5", {"line": "horizontal"}, objects, start, crowded, "3.0 cm apart")
    stacked = {**horizontal, "green block": level((0.0, -0.5), 1)}
    assert_fails("UI_5", {"line": "horizontal"}, objects, start, stacked, "not on the table")


def test_ui_6_different_sides():
    sides = ("top side", "right side", "bottom side", "left side")
    spread = final(
        INITIAL, **{f"{c}_block": table(PLACES[s]) for c, s in zip(("red", "blue", "green", "yellow"), sides)}
    )
    assert_passes("UI_6", {}, OBJECTS, INITIAL, spread)
    middle = {**spread, "green block": table(PLACES["middle"])}
    assert_fails("UI_6", {}, OBJECTS, INITIAL, middle, "green block is at no side")
    doubled = {**spread, "green block": level(PLACES["top side"], 1)}
    assert_fails("UI_6", {}, OBJECTS, INITIAL, doubled, "both at the top side")


def test_every_template_has_a_check():
    assert len(TESTER_IDS) == 15 and len(HELD_OUT_IDS) == 8 and set(CHECKS) == set(TEMPLATE_IDS)


def test_our_own_types():
    objects, initial = scene()
    red, blue, green, yellow = (initial[f"{c} block"][:2] for c in ("red", "blue", "green", "yellow"))
    assert_passes("NI_0", {"block": "red block"}, objects, initial, final(initial, red_block=table(PLACES["middle"])))
    assert_fails("NI_0", {"block": "red block"}, objects, initial, initial, "from the middle")
    midpoint = (0.075, -0.6)
    variables = {"block": "green block", "bowl": "red bowl", "bowl2": "blue bowl"}
    assert_passes("NI_1", variables, objects, initial, final(initial, green_block=table(midpoint)))
    swap = {"block": "red block", "block2": "blue block"}
    assert_passes("NI_2", swap, objects, initial, final(initial, red_block=table(blue), blue_block=table(red)))
    assert_fails("NI_2", swap, objects, initial, final(initial, red_block=table(blue)), "from the red block's starting")
    order = {"order": "blue block, red block, green block, yellow block"}
    stacked = final(initial, red_block=level(blue, 1), green_block=level(blue, 2), yellow_block=level(blue, 3))
    assert_passes("NI_3", order, objects, initial, stacked)
    upside_down = final(initial, red_block=level(blue, 1), yellow_block=level(blue, 2), green_block=level(blue, 3))
    assert_fails("NI_3", order, objects, initial, upside_down, "not blue block, red block")
    # yellow (0.12 m) and blue (0.25 m) are the red bowl's two nearest blocks
    nearest = final(initial, yellow_block=bowl_level(BOWLS["red bowl"]), blue_block=bowl_level(BOWLS["red bowl"], 1))
    assert_passes("NI_4", {"count": "two", "bowl": "red bowl"}, objects, initial, nearest)
    assert_passes("NI_7", {"count": "two", "bowl": "red bowl"}, objects, initial, nearest)
    assert_fails("NI_7", {"count": "three", "bowl": "red bowl"}, objects, initial, nearest, "2 blocks are in")
    wrong = final(initial, yellow_block=bowl_level(BOWLS["red bowl"]), red_block=bowl_level(BOWLS["red bowl"], 1))
    assert_fails("NI_4", {"count": "two", "bowl": "red bowl"}, objects, initial, wrong, "blue block")
    leftmost = final(initial, red_block=bowl_level(BOWLS["blue bowl"]))
    assert_passes("NI_6", {"extreme": "leftmost", "bowl": "blue bowl"}, objects, initial, leftmost)
    assert_fails("NI_6", {"extreme": "rightmost", "bowl": "blue bowl"}, objects, initial, leftmost, "green block")
    all_but = final(
        initial, red_block=bowl_level(BOWLS["red bowl"]), blue_block=bowl_level(BOWLS["red bowl"], 1),
        green_block=bowl_level(BOWLS["red bowl"], 2),
    )  # fmt: skip
    assert_passes("NI_5", {"block": "yellow block", "bowl": "red bowl"}, objects, initial, all_but)
    assert_fails("NI_5", {"block": "red block", "bowl": "red bowl"}, objects, initial, all_but, "yellow block")


@pytest.mark.parametrize(
    "template_id, variables, error, match",
    [
        ("SI_9", {}, ValueError, "unknown Tabletop template"),
        ("SI_0", {"block": "red block"}, KeyError, "object1"),
        ("SI_0", {"block": "red bowl", "object1": "blue block"}, ValueError, "must name a block"),
        ("SI_0", {"block": "red block", "object1": "red block"}, ValueError, "another object"),
        ("SI_3", {"bowl": "pink bowl"}, ValueError, "not one of the objects"),
        ("SI_2", {"corner_or_side": "the moon"}, ValueError, "named place"),
        ("UI_5", {"line": "wavy"}, ValueError, "horizontal, vertical, diagonal"),
        ("NI_2", {"block": "red block", "block2": "red block"}, ValueError, "another block"),
        ("NI_3", {"order": "red block, blue block"}, ValueError, "every block once"),
    ],
)
def test_bad_arguments(template_id, variables, error, match):
    with pytest.raises(error, match=match):
        check(template_id, variables, OBJECTS, INITIAL, INITIAL)


def test_missing_positions():
    with pytest.raises(KeyError, match="final positions have no entry"):
        check("SI_1", {}, OBJECTS, INITIAL, {"red block": (0, -0.5, 0.02)})
    with pytest.raises(ValueError, match=r"\[x, y\]"):
        check("SI_1", {}, OBJECTS, INITIAL, {**INITIAL, "red block": (0, "a")})
