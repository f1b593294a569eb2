"""The scene description kept between steps (``World.describe``) is the one built from scratch."""

import random

import gymnasium as gym

from toolbench.mock_services.virtualhome import ACTIONS, PROPERTIES, World, build_home, clean_lines
from toolbench.mock_services.virtualhome.program import accepted
from toolbench.mock_services.virtualhome.scene import build_view, describe_from_scratch

ENV_ID = "toolbench/VirtualHome-v0"
NAMES = sorted(PROPERTIES)
MISTAKES = ["", "Agent.Grab(", "Agent.Fly(cup)", "Agent.Put(cup)", "Agent.Grab(Cup)", "Agent.Sleep()", "Agent.WakeUp()"]


def assert_kept_equals_scratch(world: World) -> None:
    assert world.describe() == describe_from_scratch(world)
    for root, view in world.views.items():  # views kept for rooms not in sight now are used later
        assert view.words == build_view(world, root).words, root


def some_action(rng: random.Random, references: list[str]) -> str:
    """A line of a reference (the home changes), any call of the API (most fail), or a mistake."""
    draw = rng.random()
    if draw < 0.1:
        return rng.choice(MISTAKES)
    if draw < 0.55:
        return rng.choice(references)
    action = rng.choice(ACTIONS)
    objects = [
        rng.choice(sorted(allowed)) if rng.random() < 0.9 else rng.choice(NAMES)
        for allowed in accepted()[f"Agent.{action.name}"]
    ]
    return f"Agent.{action.name}({', '.join(objects)})"


def test_the_kept_description_is_the_one_from_scratch_after_every_step():
    """Varied interactive episodes: references, random calls (most failing), mistakes, a branch
    restored with set_state, a state moved to an env on another task, resets to other tasks."""
    env = gym.make(ENV_ID, mode="interactive", split="train", max_steps=60).unwrapped
    other = gym.make(ENV_ID, mode="interactive", split="train", max_steps=60).unwrapped
    rng = random.Random(7)
    for task in rng.sample(env.tasks, 30):
        references = [line for reference in task.references for line in clean_lines(reference)]
        env.reset(seed=0, options={"task_id": task.id})
        assert_kept_equals_scratch(env._world)
        snapshot = None
        for step in range(40):
            if step == 10:
                snapshot = env.get_state()
            if step == 20 and snapshot is not None:
                env.set_state(snapshot)  # back to step 10, then on another way
                assert_kept_equals_scratch(env._world)
            env.step(some_action(rng, references))
            assert_kept_equals_scratch(env._world)
        other.reset(seed=0, options={"task_id": rng.choice(env.tasks).id})
        other.step(some_action(rng, references))
        other.set_state(env.get_state())
        for _ in range(5):
            other.step(some_action(rng, references))
            assert_kept_equals_scratch(other._world)


def test_what_a_held_container_holds_is_seen_wherever_the_character_goes_unless_it_is_shut():
    world = World(build_home(0), ["on(bag, table)", "on(keys, table)"], rules="original")
    seen = []
    for action, objects in [
        ("WalkTo", ("table",)),
        ("Grab", ("bag",)),
        ("Open", ("bag",)),
        ("Grab", ("keys",)),
        ("PutIn", ("keys", "bag")),
        ("WalkTo", ("bedroom",)),
        ("Close", ("bag",)),
        ("Open", ("bag",)),
        ("Drop", ("bag",)),
        ("WalkTo", ("kitchen",)),
    ]:
        assert world.do(action, objects).ok, (action, objects)
        assert_kept_equals_scratch(world)
        seen.append("keys (in bag)" in world.describe())
    # in the bag on the way to the bedroom, hidden while it is shut, then left behind there
    assert seen == [False, False, False, False, True, True, False, True, True, False]
    copy = world.copy()
    assert copy.do("WalkTo", ("bedroom",)).ok and "keys (in bag)" in copy.describe()
    assert "keys" not in world.describe().split("You see:")[1]  # the copy's walk left the world as it was
