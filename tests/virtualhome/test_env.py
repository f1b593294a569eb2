"""toolbench/VirtualHome-v0: ToolBench's LCS and executability, and the simulated home behind them."""

import json
import os
import subprocess
import sys
import warnings

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import toolbench
from tests.episodes import play
from toolbench.core.tasks import Task

ENV_ID = "toolbench/VirtualHome-v0"

FRIDGE = Task(
    id="milk",
    prompt="Put the milk in the fridge",
    references=(
        "Agent.WalkTo(kitchen)\nAgent.Find(milk)\nAgent.Grab(milk)\nAgent.Find(fridge)\n"
        "Agent.Open(fridge)\nAgent.PutIn(milk, fridge)\nAgent.Close(fridge)",
    ),
    extra={"home": 0, "start": ["on(milk, kitchen_counter)"], "goals": ["inside(milk, fridge)", "closed(fridge)"]},
)


@pytest.mark.parametrize("mode", ["program", "interactive"])
def test_check_env_passes_without_warnings(mode):
    env = gym.make(ENV_ID, mode=mode)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


@pytest.mark.parametrize("mode", ["program", "interactive"])
def test_oracle_scores_full_marks_and_random_far_less(mode):
    env = gym.make(ENV_ID, mode=mode)
    tasks = toolbench.load_tasks("VirtualHome")
    assert len(tasks) == 100
    random_lcs, random_success = [], []
    for index, task in enumerate(tasks):
        _, reward, _, _, info = play(env, task.id, env.unwrapped.oracle_actions(task))
        assert reward == 1.0 and info["lcs"] == 1.0 and info["success"], (task.id, info)
        assert info["executable"] and info["goal_rate"] == 1.0
        other = tasks[(index + 37) % len(tasks)]
        _, reward, _, _, info = play(env, task.id, env.unwrapped.oracle_actions(other))
        random_lcs.append(reward)
        random_success.append(info["success"])
    assert sum(random_lcs) / len(tasks) < 0.5 and sum(random_success) / len(tasks) < 0.1


def test_putting_milk_in_a_closed_fridge_fails_where_it_happens():
    env = gym.make(ENV_ID, tasks=[FRIDGE], reward="lcs")
    lines = FRIDGE.references[0].splitlines()
    broken = "\n".join(line for line in lines if line != "Agent.Open(fridge)")
    _, reward, terminated, _, info = play(env, "milk", [broken])
    assert terminated and info["executable"] and not info["simulated"] and not info["success"]
    assert info["failed_line"] == "5: Agent.PutIn(milk, fridge)" and "fridge is closed" in info["failure"]
    # ToolBench's LCS counts the walking and finding lines too; the reward only the lines that act.
    assert info["lcs"] == pytest.approx(6 / 7) and reward == pytest.approx(3 / 4)
    _, reward, _, _, info = play(env, "milk", [FRIDGE.references[0]])
    assert reward == 1.0 and info["success"] and info["simulated"] and info["failed_line"] is None
    # The default reward pays the goals the program brought about: none (the fridge was closed already).
    _, reward, _, _, info = play(gym.make(ENV_ID, tasks=[FRIDGE]), "milk", [broken])
    assert reward == 0.0 and not info["success"]


def test_an_equivalent_program_in_another_order_succeeds_with_a_lower_lcs():
    env = gym.make(ENV_ID, tasks=[FRIDGE], reward="lcs")
    other = (
        "Agent.Find(fridge)\nAgent.Open(fridge)\nAgent.Find(milk)\nAgent.Grab(milk)\n"
        "Agent.PutIn(milk, fridge)\nAgent.Close(fridge)"
    )
    _, reward, _, _, info = play(env, "milk", [other])
    # The lines that act (Grab, Open, PutIn, Close) are in another order: 3 of 4 in order.
    assert info["success"] and info["goal_rate"] == 1.0 and reward == 3 / 4 and info["lcs"] == pytest.approx(4 / 7)
    env = gym.make(ENV_ID, tasks=[FRIDGE], reward="goal")
    _, reward, _, _, info = play(env, "milk", [other])
    assert reward == 1.0
    _, reward, _, _, info = play(env, "milk", [other + "\nAgent.Dance()"])  # goals met, then junk
    assert info["goal_rate"] == 1.0 and reward == 0.0


def test_grabbing_what_was_never_approached_fails():
    env = gym.make(ENV_ID, tasks=[FRIDGE])
    _, _, _, _, info = play(env, "milk", ["Agent.Grab(milk)\nAgent.PutIn(milk, fridge)"])
    assert info["failed_line"] == "1: Agent.Grab(milk)" and "not close" in info["failure"]
    _, _, _, _, info = play(env, "milk", ["Agent.WalkTo(living_room)\nAgent.SwitchOn(couch)"])
    assert info["executable"] is False and "SwitchOn does not accept 'couch'" in info["failure"]


HOSTILE = [
    "Agent.Fly(kitchen)",
    "Agent.Grab(spaceship)",
    "import os\nos.system('id')",
    "__import__('os').system('id')",
    "Agent.Grab(__class__)",
    "print(open('/etc/passwd').read())",
    "Agent.WalkTo(kitchen)\n" * 600,
    "Agent.Grab(" + "x" * 100_000 + ")",
    "A" * (2**20),
    "\x00\x01\xff binary \x00",
    "Agent.Grab(cup, cup, cup)",
    "Agent.Sleep",
    "",
]


@pytest.mark.parametrize("mode", ["program", "interactive"])
def test_hostile_programs_are_error_observations_and_the_env_keeps_working(mode):
    env = gym.make(ENV_ID, mode=mode, tasks=[FRIDGE])
    for action in HOSTILE:
        env.reset(options={"task_id": "milk"})
        observation, reward, _, _, info = env.step(action)
        assert reward == 0.0 and not info["success"], action[:40]
        assert "internal error" not in observation and "Traceback" not in observation
        assert info["error"] or not info["executable"] or mode == "interactive" and not action.strip()
    _, reward, _, _, info = play(env, "milk", env.unwrapped.oracle_actions(FRIDGE))
    assert reward == 1.0 and info["success"]


def test_interactive_failures_are_observations_and_done_ends_the_episode():
    env = gym.make(ENV_ID, mode="interactive", tasks=[FRIDGE])
    env.reset(options={"task_id": "milk"})
    observation, reward, terminated, _, info = env.step("Agent.Grab(milk)")
    assert not terminated and observation.startswith("Failed: cannot grab milk") and "You are in" in observation
    observation, _, terminated, _, _ = env.step("Find(milk)")  # the Agent. prefix may be left out
    assert not terminated and "Close to:" in observation and "milk" in observation
    _, reward, terminated, _, info = env.step("Agent.Done()")
    assert terminated and not info["success"] and not info["simulated"] and info["failed_line"] == "1: Agent.Grab(milk)"


def test_state_snapshots_branch_and_restore_an_interactive_episode_exactly():
    env = gym.make(ENV_ID, mode="interactive", tasks=[FRIDGE]).unwrapped
    actions = env.oracle_actions(FRIDGE)
    env.reset(options={"task_id": "milk"})
    for action in actions[:3]:
        env.step(action)
    snapshot = env.get_state()
    first = [env.step(action) for action in actions[3:]]
    env.set_state(snapshot)
    second = [env.step(action) for action in actions[3:]]
    assert first == second and second[-1][1] == 1.0
    env.set_state(snapshot)
    env.step("Agent.Find(television)")  # a branch elsewhere
    other = gym.make(ENV_ID, mode="interactive", tasks=[FRIDGE]).unwrapped
    other.reset()
    other.set_state(snapshot)
    assert [other.step(action) for action in actions[3:]] == first


def test_render_shows_the_transcript_and_the_objects_the_program_touches():
    env = gym.make(ENV_ID, tasks=[FRIDGE], render_mode="ansi")
    _, _, _, _, info = play(env, "milk", [FRIDGE.references[0]])
    text = env.render()
    assert "Agent.PutIn(milk, fridge)" in text and "milk: in fridge" in text
    # The goals are the answer: only run records (diagnostics) show them.
    assert "goals" not in text and "closed(fridge)" not in text and "goals_met" not in info
    env = gym.make(ENV_ID, tasks=[FRIDGE], render_mode="ansi", diagnostics=True)
    _, _, _, _, info = play(env, "milk", [FRIDGE.references[0]])
    assert "✓ closed(fridge)" in env.render() and "closed(fridge)" in info["goals_met"]


def test_api_docs_list_the_objects_each_function_accepts():
    docs = gym.make(ENV_ID).unwrapped.api_docs()
    assert docs.count("\nAgent.") + docs.startswith("Agent.") == 40
    assert "Agent.PutIn(object1, object2)" in docs and "Agent.StandUp()" in docs
    open_entry = next(entry for entry in docs.split("\n\n") if entry.endswith("Agent.Open(object)"))
    assert "'fridge'" in open_entry and "'couch'" not in open_entry


def test_toolbench_records_without_our_keys_are_completed(tmp_path):
    """ToolBench's test.jsonl: {"prompt": activity, "completion": [programs]}; start facts are
    inferred and goals derived from what the references achieve."""
    program = "Agent.WalkTo(bedroom)\nAgent.Find(light)\nAgent.SwitchOn(light)"
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps({"prompt": "Turn on the light", "completion": [program]}) + "\n")
    env = gym.make(ENV_ID, task_file=str(path))
    task = env.unwrapped.tasks[0]
    # Home 0's lights start on: the program presumes them off.
    assert "off(light)" in task.get("start") and "on(light)" in task.get("goals")
    assert task.get("rules") == "original" and env.unwrapped.check == "paper"
    _, reward, _, _, info = play(env, task.id, [program])
    assert reward == 1.0 and info["success"]


def test_language_planner_examples_load_as_tasks(tmp_path):
    path = tmp_path / "available_examples.json"
    examples = [
        "Task: Turn off the light\nStep 1: Walk to bedroom\nStep 2: Find light\nStep 3: Switch off light",
        "Task: Turn off the light\nStep 1: Walk to bedroom\nStep 2: Find light\nStep 3: Switch off light",
        "Task: Drink water\nStep 1: Walk to dining room\nStep 2: Find cup\nStep 3: Dance wildly",
    ]
    path.write_text(json.dumps(examples))
    env = gym.make(ENV_ID, task_file=str(path))
    tasks = env.unwrapped.tasks
    assert [t.prompt for t in tasks] == ["Turn off the light", "Drink water"]
    assert tasks[0].references == ("Agent.WalkTo(bedroom)\nAgent.Find(light)\nAgent.SwitchOff(light)",)
    _, _, _, _, info = play(env, tasks[1].id, [tasks[1].references[0]])
    assert info["lcs"] == 1.0 and not info["executable"] and info["failed_line"] == "3: Dance wildly"


SCRIPT = """
import json, gymnasium as gym, toolbench
out = []
for mode in ("program", "interactive"):
    env = gym.make("toolbench/VirtualHome-v0", mode=mode)
    for seed in (1, 2, 3):
        obs, info = env.reset(seed=seed)
        task = env.unwrapped.task
        steps = [obs]
        for action in env.unwrapped.oracle_actions(task):
            obs, reward, term, trunc, info = env.step(action)
            steps.append([obs, reward, info])
            if term or trunc:
                break
        out.append(steps)
print(json.dumps(out, sort_keys=True))
"""


def test_same_seed_same_episode_in_processes_with_different_hash_seeds():
    outputs = []
    for hash_seed in ("1", "2"):
        environment = {**os.environ, "PYTHONHASHSEED": hash_seed}
        run = subprocess.run(
            [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=environment, check=True
        )
        outputs.append(run.stdout)
    assert outputs[0] == outputs[1] and len(outputs[0]) > 1000


def test_things_inside_a_closed_fridge_cannot_be_used_and_nothing_goes_inside_itself():
    from toolbench.mock_services.virtualhome import World, build_home

    world = World(build_home(0))
    assert world.do("WalkTo", ("fridge",)).ok
    for action in ("Eat", "Cut", "Touch"):
        result = world.do(action, ("food_cheese",))
        assert not result.ok and "inside the closed fridge" in result.message, action
    assert world.do("WalkTo", ("mop_bucket",)).ok and world.do("Grab", ("mop_bucket",)).ok
    result = world.do("Put", ("mop_bucket", "mop"))  # the mop is in the bucket
    assert not result.ok and "mop is in or on the mop_bucket" in result.message
    assert world.do("Grab", ("mop",)).ok


def test_an_unclosed_parenthesis_costs_linear_time():
    import time

    env = gym.make(ENV_ID, tasks=[FRIDGE])
    for mode_action in ["Agent.Grab" + "(" * 120_000, ("Agent.Grab(" * 10_000 + "\n") * 12]:
        env.reset(options={"task_id": "milk"})
        started = time.perf_counter()
        _, reward, *_ = env.step(mode_action)
        assert reward == 0.0 and time.perf_counter() - started < 5


def test_interactive_mistakes_are_feedback_even_for_the_goal_reward():
    env = gym.make(ENV_ID, mode="interactive", tasks=[FRIDGE], reward="goal")
    actions = ["Agent.PutIn(milk, spaceship)", "Agent.WalkTo(kitchen) Agent.Grab(milk)", "Agent.Grab(Milk)"]
    env.reset(options={"task_id": "milk"})
    observations = [env.step(action)[0] for action in actions]
    assert "does not accept 'spaceship'" in observations[0] and "nothing may follow" in observations[1]
    assert "lower case with underscores: 'milk'" in observations[2]
    for action in env.unwrapped.oracle_actions(FRIDGE):
        _, reward, terminated, _, info = env.step(action)
    assert terminated and info["success"] and not info["executable"] and reward == 1.0


def test_reset_info_describes_where_the_character_starts():
    env = gym.make(ENV_ID, mode="interactive")
    task = next(t for t in env.unwrapped.tasks if "asleep()" in t.get("start"))
    _, info = env.reset(options={"task_id": task.id})
    assert "asleep" in info["scene"] and "Holding:" in info["scene"]


def test_api_docs_start_with_the_rules_of_the_home():
    docs = gym.make(ENV_ID).unwrapped.api_docs()
    assert docs.startswith("# How the home works") and "Agent.Done()" in docs.split("\n\n")[0]


SHOTGUN = [
    "WakeUp()",
    "StandUp()",
    "WalkTo(television)",
    "SwitchOn(television)",
    "Watch(television)",
    "WalkTo(cat)",
    "LookAt(cat)",
    "Grab(cat)",
    "WalkTo(couch)",
    "SitOn(couch)",
    "StandUp()",
    "WalkTo(man)",
    "Greet(man)",
    "WalkTo(woman)",
    "Greet(woman)",
    "WalkTo(child)",
    "Greet(child)",
    "WalkTo(light)",
    "PlugIn(light)",
    "SwitchOn(light)",
    "WalkTo(floor_lamp)",
    "SwitchOn(floor_lamp)",
    "WalkTo(oven)",
    "Open(oven)",
    "WalkTo(bathroom_cabinet)",
    "Open(bathroom_cabinet)",
    "WalkTo(phone)",
    "PlugOut(phone)",
    "Grab(phone)",
]


def test_doing_everything_in_the_home_meets_no_goal_that_counts():
    """One fixed run of many actions, whatever the activity: goal facts stay true once reached, so
    it meets whole activities' goals, but far past the actions a solution needs."""
    passed, paid = 0, 0.0
    env = gym.make(ENV_ID, mode="interactive", max_steps=len(SHOTGUN) + 1, reward="goal")
    for task in toolbench.load_tasks("VirtualHome"):
        *_, info = play(env, task.id, [f"Agent.{call}" for call in SHOTGUN] + ["Agent.Done()"])
        passed += info["success"]
        paid += info["score"]
        if info["goal_rate"] == 1.0:
            assert not info["success"] and info["score"] == 0.0
    assert passed == 0 and paid == 0.0


def test_walking_to_the_activitys_places_earns_nothing():
    """The shared-parts answer (the reference's walking and finding lines) earns ToolBench's LCS
    but no reward: every program walks and finds."""
    env = gym.make(ENV_ID, tasks=[FRIDGE])
    actions = env.unwrapped.shared_parts_actions(FRIDGE)
    assert actions == ["Agent.WalkTo(kitchen)\nAgent.Find(milk)\nAgent.Find(fridge)"]
    _, reward, _, _, info = play(env, "milk", actions)
    assert reward == 0.0 and info["lcs"] == pytest.approx(3 / 7) and not info["success"]
    # Nor the goal reward: the fridge that was closed at the start and still is was not closed by it.
    goal = gym.make(ENV_ID, tasks=[FRIDGE], reward="goal")
    _, reward, _, _, info = play(goal, "milk", actions)
    assert reward == 0.0 and info["goal_rate"] > 0 and not info["success"]


def test_in_interactive_mode_failed_calls_count_against_the_action_budget():
    """Retrying costs actions: the goals of an episode that tried more than twice the solution's
    actions and four more count for nothing, failed attempts included."""
    env = gym.make(ENV_ID, tasks=[FRIDGE], mode="interactive", reward="goal")
    lines = FRIDGE.references[0].splitlines()
    failing = ["Agent.PutIn(milk, fridge)"] * 12  # the milk is not held yet: each one fails
    _, reward, _, _, info = play(env, "milk", failing + lines + ["Agent.Done()"])  # 19 > 2 * 7 + 4
    assert info["goal_rate"] == 1.0 and not info["success"] and reward == 0.0
    _, reward, _, _, info = play(env, "milk", failing[:4] + lines + ["Agent.Done()"])
    assert info["success"] and reward == 1.0


@pytest.mark.parametrize("split", ["test", "unseen"])
@pytest.mark.parametrize("mode", ["program", "interactive"])
@pytest.mark.parametrize("reward", ["lcs", "goal"])
def test_the_shared_parts_answer_earns_at_most_a_sixth(split, mode, reward):
    env = gym.make(ENV_ID, split=split, mode=mode, reward=reward).unwrapped
    scores, successes = [], 0
    for task in env.tasks:
        *_, info = play(env, task.id, env.shared_parts_actions(task))
        scores.append(info["score"])
        successes += info["success"]
        *_, info = play(env, task.id, env.oracle_actions(task))
        assert info["score"] == 1.0 and info["success"], task.id
    assert sum(scores) / len(scores) <= 0.15 and successes == 0
