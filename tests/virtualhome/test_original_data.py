"""The language-planner's 5,088 examples (../shared/refdata), ToolBench's VirtualHome task: its 204
activities with 1,121 distinct programs. They must pass ToolBench's executable check as its
evaluator applies it, run in the simulator from their task's start, and have goals."""

import json
import re

import gymnasium as gym
import pytest

from tests.conftest import REFDATA
from toolbench.agents.cheap import POLICIES
from toolbench.envs.virtualhome import VirtualHomeEnv
from toolbench.eval.audit import ceiling
from toolbench.mock_services.virtualhome import World, build_home, clean_lines, parse_program
from toolbench.mock_services.virtualhome.homes import PLACING_FILE, places_for
from toolbench.mock_services.virtualhome.original import goal_sets, program_from_steps, replay, weight
from toolbench.mock_services.virtualhome.program import PAPER_VOCABULARY_FILE, ground, paper_vocabulary
from toolbench.taskgen.virtualhome_paper import placing, vocabulary

EXAMPLES = ("language-planner", "src", "available_examples.json")
#: A policy held to another's ceilings: nearest_copy plays the program of the closest demo or train
#: task, as train_answer does, with the words where the two prompts differ swapped in.
HELD_AS = {"nearest_copy": "train_answer", "reward_search": "train_answer"}


@pytest.fixture(scope="module")
def original_tasks():
    """Read once for the module (building 204 starts takes seconds)."""
    if not REFDATA.is_dir():
        pytest.skip(f"reference data not found at {REFDATA}")
    return VirtualHomeEnv.tasks_from_file(REFDATA.joinpath(*EXAMPLES))


def test_the_original_programs_run_from_their_tasks_start_and_have_goals(original_tasks):
    measured = replay(original_tasks)
    print(measured.report("paper"))
    assert (measured.tasks, measured.programs) == (204, 1121)  # distinct (activity, program) pairs
    assert measured.executable == measured.programs
    assert measured.executing / measured.programs >= 0.975
    assert measured.with_goals == measured.tasks
    assert measured.reaching == measured.executing  # every reference that runs meets its task's goals
    assert measured.agreed / measured.tasks >= 0.9  # the rest have no reference that runs


def test_every_goal_alternative_asks_for_more_than_the_start_holds(original_tasks):
    """An alternative is never met before the first action, and says more than which room to be in
    unless the task has no other (its references only walk somewhere)."""
    for task in original_tasks:
        alternatives = goal_sets(task)
        assert alternatives, task.prompt
        world = World(build_home(task.get("home")), task.get("start"), task.get("rules"))
        for facts in alternatives:
            assert not all(world.holds(text) for text in facts), (task.prompt, facts)
            assert len(alternatives) == 1 or max(map(weight, facts)) > 0, (task.prompt, facts)


@pytest.mark.parametrize("mode", ["program", "interactive"])
def test_no_cheap_policy_reaches_the_original_goals(refdata, original_tasks, mode):
    """The audit's cheap policies that apply to VirtualHome, on the original tasks scored by goals:
    held to the audit's ceilings for VirtualHome, as on our split."""
    env = gym.make("toolbench/VirtualHome-v0", task_file=str(refdata.joinpath(*EXAMPLES)), reward="goal", mode=mode)
    played = 0
    for name, policy_class in POLICIES.items():
        policy = policy_class()
        if not policy.applies("VirtualHome", mode, env.unwrapped.splits):
            continue
        successes = score = 0.0
        for task in env.unwrapped.tasks:
            observation, info = env.reset(options={"task_id": task.id})
            policy.begin(env.unwrapped, task, observation, info)
            done = False
            while not done:
                observation, reward, terminated, truncated, info = env.step(policy.act(observation, info))
                done = terminated or truncated
            successes += info["success"]
            score += reward
        tasks = len(env.unwrapped.tasks)
        held_as = HELD_AS.get(name, name)
        assert successes / tasks <= ceiling(held_as, "VirtualHome", "success_rate"), name
        assert score / tasks <= ceiling(held_as, "VirtualHome", "score"), name
        played += 1
    assert played >= 5  # empty, give_up, finish_words, echo, the demonstration and training answers


def test_an_original_task_plays_through_the_env(refdata, original_tasks):
    env = gym.make("toolbench/VirtualHome-v0", task_file=str(refdata.joinpath(*EXAMPLES)))
    assert env.unwrapped.check == "paper"
    played = 0
    for task in env.unwrapped.tasks:
        env.reset(options={"task_id": task.id})
        _, reward, _, _, info = env.step(task.references[0])
        assert reward == 1.0 and info["lcs"] == 1.0 and info["executable"]
        runs = all(result.ok for result in replay_world(task, task.references[0]))
        assert info["success"] == runs, task.prompt  # a reference that runs meets its task's goals
        played += info["success"]
    assert played / len(env.unwrapped.tasks) >= 0.85


def replay_world(task, program: str) -> list:
    world = World(build_home(task.get("home")), task.get("start"), task.get("rules"))
    return [world.do(call.action or "", call.args) for call in parse_program(program)]


# ----------------------------------------------------------------------------- the paper check
def toolbench_verdicts(text: str, lists: dict) -> tuple[list[str], list[str]]:
    """ToolBench's evaluator's rule, written out here: per line of the text, strip;
    stop at "Task:"; skip empty lines; remove quotes and semicolons, a leading "1." numbering;
    strip. The function (text before the first "(") must have a list; the first "(...)" group,
    split on ",", must name objects of its lists, one per argument; "()" fits a function without
    objects. Returns (lines refused, lines kept for the LCS)."""
    refused, kept = [], []
    for raw in text.split("\n"):
        line = raw.strip()
        if line.startswith("Task:"):
            break
        if not line:
            continue
        line = re.sub(r"^\d+\. *", "", line.replace('"', "").replace("'", "").replace(";", "")).strip()
        entry = lists.get(line.split("(")[0])
        group = re.search(r"\((.*?)\)", line)
        ok = entry is not None and group is not None
        if ok:
            objects = [part.strip() for part in group.group(1).split(",")]
            if objects == [""]:
                ok = entry == {}
            elif len(objects) == 1:
                ok = objects[0] in entry.get("object", ())
            elif len(objects) == 2:
                ok = set(entry) == {"object1", "object2"} and all(
                    objects[i] in entry[f"object{i + 1}"] for i in range(2)
                )
            else:
                ok = False
        if not ok:
            refused.append(line)
        if line:
            kept.append(line)
    return refused, kept


def variants(line: str, other_object: str) -> list[str]:
    """The original line and ways a model might write it, some of which ToolBench refuses."""
    name, _, rest = line.partition("(")
    return [
        line,
        line.removeprefix("Agent."),  # no prefix
        f"```\n{line}\n```",  # in a Markdown fence
        f"1. {line}",
        f'{name}("{rest[:-1]}")',
        f"{name} ({rest}",
        f"{name}({other_object})",
        f"{name}({rest[:-1]}, {other_object})",
        f"{name}",
        f"{line};",
        "''",
    ]


def test_the_paper_check_is_toolbenchs_on_every_original_line(refdata, original_tasks):
    with open(PAPER_VOCABULARY_FILE, encoding="utf-8") as handle:
        lists = json.load(handle)
    lines = sorted({line for task in original_tasks for ref in task.references for line in clean_lines(ref, "paper")})
    everything = sorted({obj for entry in lists.values() for objects in entry.values() for obj in objects})
    checked = refused = 0
    for index, line in enumerate(lines):
        assert ground(line, "paper").executable, line  # ToolBench asserts its labels are executable
        for text in variants(line, everything[index % len(everything)]):
            expected_refused, expected_kept = toolbench_verdicts(text, lists)
            ours = [ground(cleaned, "paper") for cleaned in clean_lines(text, "paper")]
            assert [call.line for call in ours if not call.executable] == expected_refused, text
            assert [call.line for call in ours if call.line] == expected_kept, text
            checked += 1
            refused += bool(expected_refused)
    assert len(lines) > 1000 and refused > checked / 2  # the variants do test refusals


def test_the_paper_lists_are_toolbenchs(refdata):
    """The shipped lists are what the examples give, and equal the lists in ToolBench's README."""
    assert json.loads(PAPER_VOCABULARY_FILE.read_text(encoding="utf-8")) == vocabulary(refdata.joinpath(*EXAMPLES))
    readme = (refdata / "sambanova_toolbench" / "README.md").read_text(encoding="utf-8")
    published = re.findall(r"'object' can only be: (\[[^\]]*\])\.\s*\n\s*(Agent\.\w+)\(object\)", readme)
    assert len(published) >= 5
    for objects, function in published:
        assert paper_vocabulary()[function] == (frozenset(json.loads(objects.replace("'", '"'))),), function
    sizes = {name: len(paper_vocabulary()[f"Agent.{name}"][0]) for name in ("WalkTo", "RunTo", "Open", "SitOn")}
    assert sizes == {"WalkTo": 107, "RunTo": 12, "Open": 24, "SitOn": 5}  # the published lists' sizes


def test_the_placing_fixture_is_virtualhomes(refdata):
    """Where extra objects may go: derived from VirtualHome's own placing table by our script."""
    path = refdata / "virtualhome" / "virtualhome" / "resources" / "object_script_placing.json"
    if not path.is_file():
        pytest.skip(f"VirtualHome's resources not found at {path}")
    derived = placing(path)
    assert json.loads(PLACING_FILE.read_text(encoding="utf-8")) == derived
    assert ["on", "couch"] in derived["novel"] and "kitchen" not in derived  # rooms are not placed
    assert {("on", "nightstand"), ("on", "couch")} <= set(places_for("novel"))  # our homes' and VirtualHome's


def test_our_check_accepts_every_original_line(original_tasks):
    """Push(filing_cabinet), LookAt(face), ...: objects the properties alone would not allow."""
    for task in original_tasks:
        for reference in task.references:
            for line in clean_lines(reference):
                assert ground(line, "ours").executable, line


def test_eval_plays_the_original_examples_file(refdata, capsys):
    from toolbench.cli import main

    path = refdata.joinpath(*EXAMPLES)
    assert main(["eval", "--agent", "oracle", "--task", "VirtualHome", "--task-file", str(path)]) == 0
    table = capsys.readouterr().out
    assert "VirtualHome  program  204" in table


def test_the_english_steps_become_the_paper_lines(refdata):
    """ "Step 2: Walk to dining room" is ToolBench's "Agent.WalkTo(dining_room)"."""
    examples = json.loads(refdata.joinpath(*EXAMPLES).read_text(encoding="utf-8"))
    program = program_from_steps(examples[0].partition("\n")[2])
    assert all(line.startswith("Agent.") and ground(line, "paper").executable for line in program.splitlines())
