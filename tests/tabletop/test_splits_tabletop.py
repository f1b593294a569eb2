"""Tabletop's train and unseen splits: a parser fitted to the seen wordings solves the seen types of
test, not unseen; the oracle solves unseen and train; test keeps the paper's seen/unseen types."""

import ast
import re

import gymnasium as gym
import pytest

import toolbench
from tests.episodes import play
from toolbench.mock_services.tabletop import reference_program
from toolbench.mock_services.tabletop.templates import HELD_OUT_IDS
from toolbench.taskgen.tabletop import HELD_OUT_KEYS

ENV_ID = "toolbench/Tabletop-v0"
PLACE = (
    r"(top left corner|top right corner|bottom left corner|bottom right corner|top side|bottom side|left side"
    r"|right side)"
)


# ---------------------------------------------------------------------- a parser of the seen wordings
def parse(prompt):
    """(type, variables, objects) for a prompt in one of the demo and train wordings, or None."""
    head, instruction = prompt.split("\n", 1)
    objects = ast.literal_eval(head.removeprefix("objects = "))
    text = instruction.removeprefix("# ")
    found = re.search(
        r"^(?:Move|Put|Place|Pick up) the (\w+ block)(?: and set it)? (?:onto|on top of|on) the (\w+ (?:block|bowl))",
        text,
    )
    if found:
        return "SI_0", {"block": found[1], "object1": found[2]}, objects
    if re.search(r"Make one stack|Stack all the blocks|Pile every block|Put all the blocks in one tower", text):
        return "SI_1", {}, objects
    if re.search(r"same color|matches its color|own colors", text):
        return "SI_4", {}, objects
    found = re.search(
        rf"blocks (?:that lies |that are )?(?:to the )?(top|left|bottom|right) of the (\w+ bowl) (?:to|at) the {PLACE}",
        text,
    )  # noqa: E501
    found = found or re.search(
        rf"block that lies to the (top|left|bottom|right) of the (\w+ bowl) to the {PLACE}", text
    )
    if found:
        return "SI_5", {"direction": found[1], "bowl": found[2], "corner_or_side": found[3]}, objects
    found = re.search(rf"block (?:that is )?(closest|farthest) to the (\w+ bowl) (?:to|at) the {PLACE}", text)
    if found:
        return "SI_6", {"distance": found[1], "bowl": found[2], "corner_or_side": found[3]}, objects
    nth, side, place = (
        re.search(r"(first|second|third|fourth) block", text),
        re.search(r"from the (top|left|bottom|right)", text, re.IGNORECASE),
        re.search(rf"(?:to|at) the {PLACE}", text),
    )
    if nth and side and place:
        return "SI_7", {"nth": nth[1], "direction": side[1], "corner_or_side": place[1]}, objects
    found = re.search(rf"(?:every block|all the blocks|the blocks) (?:to|at) the {PLACE}", text)
    if found:
        return "SI_2", {"corner_or_side": found[1]}, objects
    found = re.search(r"(?:the blocks|every block) (?:into|in) the (\w+ bowl)", text)
    if found:
        return "SI_3", {"bowl": found[1]}, objects
    return None


def program_for(prompt):
    parsed = parse(prompt)
    if parsed is None:
        return None
    template_id, variables, objects = parsed
    try:  # the seen types' programs read the scene through the API: no positions needed
        return reference_program(template_id, variables, objects, {name: (0.0, 0.0, 0.0) for name in objects})
    except (KeyError, ValueError):
        return None


def solved_share(split, step=1):
    """The share of every ``step``-th task of ``split`` that the parser's program solves."""
    env = gym.make(ENV_ID, split=split, disable_env_checker=True).unwrapped
    tasks = env.tasks[::step]
    solved = 0
    for task in tasks:
        program = program_for(task.prompt)
        if program is not None:
            solved += bool(play(env, task.id, [program])[4]["success"])
    env.close()
    return solved / len(tasks)


def test_the_parser_reads_the_seen_wordings():
    for split in ("demo", "train"):
        tasks = toolbench.load_tasks("Tabletop", split)
        assert all(parse(t.prompt) and parse(t.prompt)[0] == t.category for t in tasks), split


def test_a_parser_of_the_seen_wordings_solves_test_not_unseen():
    assert solved_share("test", step=3) >= 0.5  # the seen types, 56 of 105
    assert solved_share("unseen") <= 0.1


# ---------------------------------------------------------------------- oracle, held-out types
def test_the_oracle_solves_unseen_and_train_samples():
    # Three tasks of each held-out type here; the generator verifies every unseen reference.
    env = gym.make(ENV_ID, split="unseen", disable_env_checker=True).unwrapped
    by_type: dict[str, list] = {}
    for task in env.tasks:
        by_type.setdefault(task.get("template"), []).append(task)
    for task in [t for tasks in by_type.values() for t in tasks[:3]]:
        _, reward, *_, info = play(env, task.id, [task.references[0]])
        assert reward == 1.0 and info["collisions"] == 0, (task.id, info)
    env.close()
    env = gym.make(ENV_ID, split="train", mode="interactive", disable_env_checker=True).unwrapped
    for task in env.tasks[::100]:
        _, reward, *_, info = play(env, task.id, env.oracle_actions(task))
        assert reward == 1.0 and info["collisions"] == 0, (task.id, info)
    env.close()


def test_test_records_say_whether_their_type_is_seen():
    tests = toolbench.load_tasks("Tabletop")
    seen = [t for t in tests if t.get("type_seen")]
    assert len(seen) == 56 and len(tests) - len(seen) == 49
    train_types = {t.category for t in toolbench.load_tasks("Tabletop", "train")}
    assert {t.get("template") for t in seen} == train_types
    assert not {t.get("template") for t in tests if not t.get("type_seen")} & train_types


def test_unseen_holds_out_its_instruction_types():
    unseen = toolbench.load_tasks("Tabletop", "unseen")
    assert {t.get("template") for t in unseen} == set(HELD_OUT_IDS)
    for key in ("template", *HELD_OUT_KEYS):
        for split in ("test", "demo", "train"):
            other = {t.get(key) for t in toolbench.load_tasks("Tabletop", split)}
            assert not {t.get(key) for t in unseen} & other, (key, split)
    assert all(isinstance(t.get("difficulty"), int) and t.get("difficulty") >= 1 for t in unseen)


@pytest.mark.parametrize("split", ["train", "unseen"])
def test_difficulty_is_the_moves_the_reference_makes(split):
    env = gym.make(ENV_ID, split=split, disable_env_checker=True).unwrapped
    env.unwrapped.record_frames = True  # a frame per move: their count is the moves made
    for task in env.tasks[:: len(env.tasks) // 8]:
        play(env, task.id, [task.references[0]])
        assert len(env.frames) - 1 == task.get("difficulty"), task.id
    env.close()
