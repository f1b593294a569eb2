"""How the world binds names and replays original programs (``rules="original"``), and how the
two executable checks differ; no reference data needed."""

import json
import os

import gymnasium as gym

from toolbench.mock_services.virtualhome import World, build_home
from toolbench.mock_services.virtualhome.homes import places_for
from toolbench.mock_services.virtualhome.original import goal_alternatives, start_and_goals, weight
from toolbench.mock_services.virtualhome.program import ground, parse_program

ENV_ID = "toolbench/VirtualHome-v0"


def run(world: World, program: str) -> list:
    return [world.do(call.action, call.args) for call in parse_program(program)]


def test_a_name_stays_bound_to_the_object_it_named_first():
    """Home 0 has a faucet on the kitchen sink and one on the bathroom sink: the faucet switched on
    in the bathroom is the faucet the program later switches off, wherever the character is."""
    world = World(build_home(0))
    results = run(world, "Agent.WalkTo(bathroom)\nAgent.Find(faucet)\nAgent.SwitchOn(faucet)\nAgent.WalkTo(kitchen)")
    assert all(result.ok for result in results)
    bathroom_faucet = world.bound["faucet"]
    assert world.room_of(bathroom_faucet) == build_home(0).ids("bathroom")[0]
    world.do("Find", ("sink",))  # the kitchen sink, with the other faucet, is now at hand
    result = world.do("SwitchOff", ("faucet",))
    assert not result.ok and "not close to faucet" in result.message  # not "the faucet is already off"
    restored = World(build_home(0))
    restored.restore(world.snapshot())
    assert restored.bound == world.bound


def test_grabbing_a_body_part_is_refused_not_a_crash():
    result = World(build_home(0)).do("Grab", ("hair",))
    assert not result.ok and "part of the character" in result.message


def test_the_original_rules_are_virtualhomes_where_ours_are_stricter():
    seated = "Agent.WalkTo(couch)\nAgent.SitOn(couch)\nAgent.WalkTo(kitchen)"
    assert not run(World(build_home(0)), seated)[-1].ok  # ours: stand up before walking
    assert run(World(build_home(0), rules="original"), seated)[-1].ok  # VirtualHome never sees the posture
    twice = "Agent.WalkTo(light)\nAgent.SwitchOff(light)\nAgent.SwitchOff(light)"
    assert not run(World(build_home(0)), twice)[-1].ok
    original = World(build_home(0), rules="original")
    last = run(original, twice)[-1]
    assert last.ok and last.fix == "on(light)" and original.holds("off(light)")  # nothing to do
    assert original.holds("did(go_to, light)")  # every action leaves its record under these rules


def test_a_start_is_built_from_what_all_the_programs_presume():
    """One program grabs the cup from the closed cabinet without opening it, the other opens the
    cabinet first: the cup starts on top of the cabinet, and both run and reach the same goals."""
    first = "Agent.WalkTo(kitchen_cabinet)\nAgent.Grab(cup)\nAgent.WalkTo(table)\nAgent.Put(cup, table)"
    second = (
        "Agent.WalkTo(kitchen_cabinet)\nAgent.Open(kitchen_cabinet)\nAgent.Grab(cup)\nAgent.Close(kitchen_cabinet)\n"
        "Agent.WalkTo(table)\nAgent.Put(cup, table)"
    )
    start, alternatives = start_and_goals((first, second))
    assert len(alternatives) == 1  # they agree on what they did: one set of goals
    goals = alternatives[0]
    assert "on(cup, kitchen_cabinet)" in start and "on(cup, table)" in goals
    for program in (first, second):
        world = World(build_home(0), start, rules="original")
        assert all(result.ok for result in run(world, program)), program
        assert all(world.holds(goal) for goal in goals)


def test_references_that_do_different_things_give_goal_alternatives(tmp_path):
    """One reference wipes the table, one washes the plate, one turns to the sink: no fact beyond
    where they went is common, so each group gets its alternative; a program meeting one succeeds,
    and walking to the kitchen meets none."""
    wipe = "Agent.WalkTo(rag)\nAgent.Grab(rag)\nAgent.WalkTo(table)\nAgent.Wipe(table)"
    wash = "Agent.WalkTo(plate)\nAgent.Grab(plate)\nAgent.WalkTo(sink)\nAgent.Wash(plate)"
    look = "Agent.WalkTo(sink)\nAgent.TurnTo(sink)"
    start, alternatives = start_and_goals((wipe, wash, look))
    assert len(alternatives) == 3
    assert any("did(wipe, table)" in facts for facts in alternatives)
    assert any("did(wash, plate)" in facts for facts in alternatives)
    for facts in alternatives:  # each says more than where the character went
        assert any(weight(text) == 2 for text in facts), facts
        assert not all(World(build_home(0), start, rules="original").holds(text) for text in facts)
    path = tmp_path / "available_examples.json"
    path.write_text(json.dumps([f"Task: Clean up\n{program}" for program in (wipe, wash, look)]))
    env = gym.make(ENV_ID, task_file=str(path), reward="goal")
    for program, success in ((wipe, True), (wash, True), (look, True), ("Agent.WalkTo(kitchen)", False)):
        env.reset(options={"task_id": env.unwrapped.tasks[0].id})
        _, reward, _, _, info = env.step(program)
        assert info["success"] is success and (reward == 1.0) is success, program


def test_goal_alternatives_group_what_agrees_and_leave_out_mere_walks():
    """Two references that wash the plate share an alternative; one that only walked to the kitchen
    gets none while others do more, and one that walked to the sink gets its own."""
    washed = {"did(wash, plate)", "clean(plate)", "did(go_to, sink)", "in_room(kitchen)"}
    washed_too = {"did(wash, plate)", "clean(plate)", "did(go_to, plate)", "in_room(kitchen)"}
    walked = {"did(go_to, kitchen)", "in_room(kitchen)"}
    to_sink = {"did(go_to, sink)", "did(go_to, kitchen)", "in_room(kitchen)"}
    assert goal_alternatives([washed, washed_too, walked]) == [["clean(plate)", "did(wash, plate)", "in_room(kitchen)"]]
    both = goal_alternatives([washed, washed_too, to_sink])
    assert both == [["clean(plate)", "did(wash, plate)", "in_room(kitchen)"], sorted(to_sink)]
    assert goal_alternatives([walked, walked]) == [sorted(walked)]  # where no reference does more
    # An alternative holding another is dropped: meeting it meets the other.
    assert goal_alternatives([to_sink, washed | to_sink]) == [sorted(to_sink)]


def test_the_paper_check_refuses_what_ours_allows(tmp_path):
    assert ground("Agent.WalkTo(kitchen)", "ours").executable
    # ToolBench's WalkTo list is what the original examples walk to: never the kitchen.
    assert not ground("Agent.WalkTo(kitchen)", "paper").executable
    assert ground("Agent.WalkTo(dining_room)", "paper").executable
    fenced = "```\nAgent.WalkTo(dining_room)\n```"
    assert [call.executable for call in parse_program(fenced, "paper")] == [False, True, False]
    assert [call.executable for call in parse_program(fenced, "ours")] == [True]
    assert not parse_program("WalkTo(dining_room)", "paper")[0].executable
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps({"prompt": "Go to the dining room", "completion": ["Agent.WalkTo(dining_room)"]}))
    for check, executable, lcs in (("paper", False, 0.0), ("ours", True, 1.0)):
        env = gym.make(ENV_ID, task_file=str(path), check=check)
        env.reset(options={"task_id": env.unwrapped.tasks[0].id})
        _, _, _, _, info = env.step("WalkTo(dining_room)")
        assert (info["executable"], info["lcs"]) == (executable, lcs), check
    default = gym.make(ENV_ID, task_file=str(path)).unwrapped
    walk_entry = next(entry for entry in default.api_docs().split("\n\n") if entry.endswith("Agent.WalkTo(object)"))
    assert default.check == "paper" and "'dining_room'" in walk_entry and "'kitchen'" not in walk_entry
    assert gym.make(ENV_ID).unwrapped.check == "ours"


def test_a_line_that_cleaning_empties_is_not_executable_under_the_paper_check(tmp_path):
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps({"prompt": "Go to the dining room", "completion": ["Agent.WalkTo(dining_room)"]}))
    env = gym.make(ENV_ID, task_file=str(path))
    env.reset(options={"task_id": env.unwrapped.tasks[0].id})
    _, _, _, _, info = env.step("Agent.WalkTo(dining_room)\n''")
    assert not info["executable"] and info["lcs"] == 1.0  # refused, yet out of the LCS, as in ToolBench


def test_the_cli_measures_an_original_file(tmp_path, capsys):
    from toolbench.cli import main

    path = tmp_path / "available_examples.json"
    examples = [
        "Task: Turn on light\nStep 1: Walk to dining room\nStep 2: Find light\nStep 3: Switch on light",
        "Task: Turn on light\nStep 1: Walk to light\nStep 2: Switch on light\nStep 3: Switch on light",
        "Task: Read book\nStep 1: Walk to novel\nStep 2: Grab novel\nStep 3: Read novel\nStep 4: Dance",
    ]
    path.write_text(json.dumps(examples))
    assert main(["data", "virtualhome-originals", str(path)]) == 0
    out = capsys.readouterr().out
    assert "tasks: 2, reference programs: 3" in out
    assert "executable (paper check): 2 / 3" in out and "execute in the simulator from their task's start: 2 / 3" in out
    assert "tasks with goals: 2 / 2" in out
    assert main(["data", "virtualhome-originals", str(tmp_path / "missing.json")]) == 2


def test_a_home_gets_one_more_object_where_two_programs_need_it_in_two_rooms():
    """One program takes the novel in the bedroom and puts it back there, the other does so in the
    home office: one novel cannot start in both, so the home gets a second, where VirtualHome may
    place a novel; each program binds "novel" to the one in its room, and both run."""
    bedroom = (
        "Agent.WalkTo(bedroom)\nAgent.Find(novel)\nAgent.Grab(novel)\nAgent.WalkTo(kitchen)\nAgent.WalkTo(bedroom)"
    )
    office = bedroom.replace("bedroom", "home_office")
    programs = (f"{bedroom}\nAgent.PutBack(novel)", f"{office}\nAgent.PutBack(novel)")
    start, _ = start_and_goals(programs)
    extras = [text for text in start if text.startswith("extra_")]
    assert len(extras) == 1 and extras[0].startswith("extra_on(novel, ")
    assert ("on", extras[0].split(", ")[1].rstrip(")")) in places_for("novel")
    bound = set()
    for program in programs:
        world = World(build_home(0), start, rules="original")
        assert len(world.home.ids("novel")) == len(build_home(0).ids("novel")) + 1
        assert all(result.ok for result in run(world, program)), program
        bound.add(world.bound["novel"])
    assert len(bound) == 2  # each program took the novel in its own room


def test_an_extra_object_survives_a_snapshot_and_binds_after_the_homes_own():
    world = World(build_home(0), ["extra_on(cup, table)"], rules="original")
    own, extra = world.home.ids("cup")
    assert world.place[extra] == ("on", build_home(0).ids("table")[0])
    restored = World(build_home(0), rules="original")
    restored.restore(world.snapshot())
    assert restored.home.ids("cup") == (own, extra) and restored.place[extra] == world.place[extra]
    sinks = build_home(0).ids("sink")
    assert len(sinks) == 2  # the kitchen's and the bathroom's
    for room in ("kitchen", "bathroom"):
        placed = World(build_home(0), [f"extra_in(water, sink, {room})"], rules="original")
        assert placed.name(placed.room_of(placed.home.ids("water")[-1])) == room
    plain = World(build_home(0), rules="original")
    plain.restore(World(build_home(0), rules="original").snapshot())
    assert len(plain.home.ids("cup")) == 1
    try:
        World(build_home(0), ["extra_on(cup, spaceship)"])
    except ValueError as exc:
        assert "spaceship" in str(exc)
    else:
        raise AssertionError("an extra placed on nothing the home has must be refused")


def test_putting_a_thing_where_it_is_does_nothing_under_the_original_rules():
    """ "Put cup on table" twice, as programs that name two cups alike write it."""
    program = "Agent.WalkTo(cup)\nAgent.Grab(cup)\nAgent.WalkTo(table)\nAgent.Put(cup, table)\nAgent.Put(cup, table)"
    start = ["on(cup, kitchen_counter)"]
    original = run(World(build_home(0), start, rules="original"), program)
    assert all(result.ok for result in original) and original[-1].message.startswith("Nothing to do")
    ours = run(World(build_home(0), start), program)
    assert all(result.ok for result in ours[:-1]) and not ours[-1].ok  # ours: the cup is no longer held


def test_virtualhomes_dining_room_is_its_kitchen_under_the_original_rules():
    """VirtualHome's class-name equivalences make its dining room the kitchen and its home office
    the living room: the original programs walk to the dining room to use the fridge."""
    program = "Agent.WalkTo(cup)\nAgent.Grab(cup)\nAgent.WalkTo(dining_room)\nAgent.PutBack(cup)"
    start = ["on(cup, kitchen_counter)"]
    original = World(build_home(0), start, rules="original")
    results = run(original, program)
    assert all(result.ok for result in results), results[-1].message  # put back in the room it came from
    assert original.holds("in_room(kitchen)") and original.holds("in_room(dining_room)")
    ours = World(build_home(0), start)
    assert not run(ours, program)[-1].ok and not ours.holds("in_room(kitchen)")


def test_starts_and_goals_are_the_same_in_every_process():
    """Built by searches over sets of facts: the order must not follow Python's string hashing."""
    import subprocess
    import sys

    code = (
        "from toolbench.mock_services.virtualhome.original import start_and_goals\n"
        "a = 'Agent.WalkTo(bedroom)\\nAgent.Find(novel)\\nAgent.Grab(novel)\\nAgent.WalkTo(kitchen)\\n"
        "Agent.WalkTo(bedroom)\\nAgent.PutBack(novel)'\n"
        "b = a.replace('bedroom', 'home_office')\n"
        "c = 'Agent.WalkTo(rag)\\nAgent.Grab(rag)\\nAgent.WalkTo(table)\\nAgent.Wipe(table)'\n"
        "print(start_and_goals((a, b)), start_and_goals((a, c)))\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, text=True
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outputs) == 1 and "extra_on(novel" in outputs.pop()
