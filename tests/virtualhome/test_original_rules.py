"""How the world binds names and replays original programs (``rules="original"``), and how the
two executable checks differ; no reference data needed."""

import json

import gymnasium as gym

from toolbench.mock_services.virtualhome import World, build_home
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
    """One reference wipes the table, one washes the plate, one walks to the sink: no fact beyond
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
