"""The AppBench env: plans run on the
apps' back-ends and are scored as graphs; interactive calls; hostile plans; state."""

from __future__ import annotations

import json

import pytest

from tests.episodes import play
from toolbench.core.tasks import Task
from toolbench.envs.appbench import AppBenchEnv

PLAN = """Restaurants: [restaurant_name, has_seating_outdoors, has_vegetarian_options, phone_number, rating, address, price_range, location, category = findrestaurants(#category='American', #location='San Francisco')]
Weather: [precipitation, humidity, wind, temperature, city, date = getweather(#city='San Francisco', #date='2019-03-08')]
Restaurants: [restaurant_name, date, time, has_seating_outdoors, has_vegetarian_options, phone_number, rating, address, number_of_seats, price_range, location, category = reserverestaurant(#date='2019-03-08', #location=location, #restaurant_name=restaurant_name, #time='19:00')]
Rents: [destination, ride_type, ride_fare, wait_time, number_of_seats = getride(#destination=address, #number_of_seats='2', #ride_type='Pool')]"""
SAID = {"category": "American", "location": "San Francisco", "city": "San Francisco", "date": "2019-03-08",
        "time": "19:00", "number_of_seats": "2", "ride_type": "Pool"}  # fmt: skip


def task() -> Task:
    lines = PLAN.splitlines()
    output = {
        "used_app": [line.split(":", 1)[0] for line in lines],
        "api_results": [line.split(": [", 1)[1][:-1] for line in lines],
        "user_aware_arguments": SAID,
    }
    instruction = "Book an American place in San Francisco for 7pm next Friday, check the weather, then get a Pool ride there for 2."
    return Task("mine-0", instruction, (PLAN,), "MM", {"output": output})


@pytest.fixture
def env():
    return AppBenchEnv(tasks=[task()])


def test_the_gold_plan_runs_and_succeeds(env):
    observation, reward, terminated, _, info = play(env, "mine-0", [PLAN])
    assert terminated and reward == 1.0 and info["succ"] == 1.0 and info["executed"] and info["f1_app"] == 1.0
    assert "4. Rents.getride: destination=" in observation and "error" not in observation
    assert env.apps.bookings  # the reservation exists afterwards


def test_independent_calls_may_swap_but_dependencies_must_hold(env):
    lines = PLAN.splitlines()
    _, reward, *_ = play(env, "mine-0", ["\n".join([lines[1], lines[0], lines[2], lines[3]])])
    assert reward == 1.0
    wrong = PLAN.replace("#destination=address", "#destination='1 Market Street'")
    _, reward, *_, info = play(env, "mine-0", [wrong])
    assert reward == 0.0 and info["succ"] == 0.0


def test_a_call_through_the_wrong_app_is_refused(env):
    observation, reward, *_, info = play(env, "mine-0", [PLAN.replace("Rents: [destination", "Travel: [destination")])
    assert "getride belongs to Rents, not Travel" in observation and reward == 0.0 and not info["executed"]


@pytest.mark.parametrize(
    "plan",
    [
        "import os\nos.system('id')",
        "Weather: [t = getweather(#city=__import__('os'))]",
        "Weather: [t = getweather(#city='x')]\n" * 10_000,
        "A: [x = one(#k=y)]\nA: [y = two(#k=x)]",
        "W: [t = getweather(#city='" + "x" * 1_000_000 + "')]",
        "\x00\xff\x01",
    ],
)
def test_hostile_plans_are_error_observations(env, plan):
    observation, reward, terminated, _, info = play(env, "mine-0", [plan])
    assert observation.startswith("Error:") and reward == 0.0 and terminated and not info["executable"]
    _, reward, *_ = play(env, "mine-0", [PLAN])
    assert reward == 1.0  # nothing leaked into the next episode


def test_interactive_calls_json_or_lines_then_finish():
    env = AppBenchEnv(tasks=[task()], mode="interactive")
    env.reset(options={"task_id": "mine-0"})
    lines = PLAN.splitlines()
    call = {"name": "Restaurants__findrestaurants", "arguments": {"category": "American", "location": "San Francisco"}}
    observation, *_ = env.step(json.dumps(call))
    assert observation.startswith("1. Restaurants.findrestaurants: restaurant_name=")
    for line in lines[1:]:
        observation, reward, terminated, *_ = env.step(line)
        assert not terminated and "error" not in observation
    state = env.get_state()
    _, reward, terminated, _, info = env.step("finish()")
    assert terminated and reward == 1.0
    other = AppBenchEnv(tasks=[task()], mode="interactive")
    other.reset(options={"task_id": "mine-0"})
    other.set_state(state)
    assert other.apps.bookings == env.apps.bookings
    _, reward, *_ = other.step("finish()")
    assert reward == 1.0


def test_docs_and_tools_follow_the_prompting(env):
    # Program mode documents every app and API (flat), whatever the task's own (gold) apps.
    _, info = env.reset(options={"task_id": "mine-0"})
    assert env.prompting == "flat" and len(info["tools"]) == 33 and "Hotels.bookhouse" in info["api_docs"]
    assert info["api_docs"].count("\n# ") == 33  # after the rules, one paragraph per API
    # Hierarchical: the apps, never an API, before the agent chooses.
    hierarchical = AppBenchEnv(tasks=[task()], prompting="hierarchical")
    _, info = hierarchical.reset(options={"task_id": "mine-0"})
    assert [t["function"]["name"] for t in info["tools"]] == ["select_apps"]
    assert "findrestaurants" not in info["api_docs"] and "# Restaurants:" in info["api_docs"]
    assert all(f"# {app}:" in info["api_docs"] for app in info["apps"])
    assert AppBenchEnv(tasks=[task()], mode="interactive").prompting == "hierarchical"
    with pytest.raises(ValueError, match="prompting"):
        AppBenchEnv(tasks=[task()], prompting="deep")


def test_hierarchical_program_mode_selects_apps_then_plans():
    env = AppBenchEnv(tasks=[task()], prompting="hierarchical")
    observation, _ = env.reset(options={"task_id": "mine-0"})
    observation, reward, terminated, truncated, info = env.step("select_apps(['Restaurants', 'Weather', 'Rents'])")
    assert not (terminated or truncated) and reward == 0.0 and info["error"] is None
    assert "Restaurants.findrestaurants" in observation and "Hotels.bookhouse" not in observation
    _, reward, terminated, *_ = env.step(PLAN)
    assert terminated and reward == 1.0
    assert env.oracle_actions(task())[0] == "select_apps(['Rents', 'Restaurants', 'Weather'])"  # the apps' order
    # Two selections and no plan: cut off at the second action, scored as an empty plan.
    env.reset(options={"task_id": "mine-0"})
    env.step("select_apps(['Rents'])")
    _, reward, terminated, truncated, info = env.step("select_apps(['Weather'])")
    assert truncated and reward == 0.0 and info["f1_api"] == 0.0
    # A plan sent at once ends the episode at once.
    _, reward, terminated, *_ = play(env, "mine-0", [PLAN])
    assert terminated and reward == 1.0


def test_the_released_records_load_and_their_gold_plans_succeed(refdata):
    env = AppBenchEnv(task_file=str(refdata / "appbench" / "data" / "test" / "test_sm.json"))
    assert len(env.tasks) == 200 and env.tasks[0].category == "SM"
    rewards = [play(env, t.id, env.oracle_actions(t))[1] for t in env.tasks]
    assert sum(rewards) == 200
    paper = AppBenchEnv(task_file=str(refdata / "appbench" / "data" / "test" / "test_sm.json"), scorer="paper")
    assert play(paper, paper.tasks[0].id, paper.oracle_actions(paper.tasks[0]))[1] == 1.0


@pytest.mark.parametrize("value", ["9" * 5000, "1" * 400 + ".5", "-" + "0" * 40])
def test_absurd_numbers_are_call_errors_not_internal_errors(value):
    env = AppBenchEnv(tasks=[task()], mode="interactive")
    env.reset(options={"task_id": "mine-0"})
    call = {"name": "Rents__getride", "arguments": {"destination": "x", "number_of_seats": value, "ride_type": "Pool"}}
    observation, reward, terminated, _, info = env.step(json.dumps(call))
    assert ("too long" in observation or "characters long" in observation) and "internal error" not in observation
    assert not terminated


def test_hierarchical_interactive_shows_apps_first_and_apis_after_select_apps():
    env = AppBenchEnv(tasks=[task()], mode="interactive")
    _, info = env.reset(options={"task_id": "mine-0"})
    assert "select_apps" in info["api_docs"] and "findrestaurants" not in info["api_docs"]
    assert set(info["apps"]) >= {"Restaurants", "Rents", "Weather"} and len(info["apps"]) == 15
    assert [t["function"]["name"] for t in info["tools"]] == ["select_apps", "finish"]
    observation, _, _, _, info = env.step("select_apps(['Restaurants', 'Rents'])")
    assert "Restaurants.findrestaurants" in observation and "Rents.getride" in observation
    assert "Weather.getweather" not in observation and info["error"] is None
    # The apps' descriptions are docs: info_docs=False leaves them out with the others.
    quiet = AppBenchEnv(tasks=[task()], mode="interactive", info_docs=False)
    assert not {"apps", "api_docs", "tools"} & set(quiet.reset(options={"task_id": "mine-0"})[1])
    names = [t["function"]["name"] for t in info["tools"]]
    assert "Restaurants__findrestaurants" in names and "Rents__getride" in names and "Weather__getweather" not in names
    assert names[-2:] == ["select_apps", "finish"]
    _, _, _, _, info = env.step("select_apps(['Bank'])")
    assert "unknown apps" in info["error"] and "tools" not in info


def test_unanswered_references_are_refused_not_filled_with_hidden_values(env):
    bare = PLAN.replace("#category='American'", "#category=category").replace("#time='19:00'", "#time=time")
    observation, reward, *_, info = play(env, "mine-0", [bare])
    assert observation.startswith("Error:") and "no earlier call returns" in observation and reward == 0.0


def test_json_calls_can_refer_to_earlier_results_and_refused_calls_are_not_in_the_plan():
    env = AppBenchEnv(tasks=[task()], mode="interactive")
    env.reset(options={"task_id": "mine-0"})
    find = {"name": "Restaurants__findrestaurants", "arguments": {"category": "American", "location": "San Francisco"}}
    env.step(json.dumps(find))
    _, _, _, _, info = env.step(json.dumps({"name": "Rents__getride", "arguments": {"destination": "x"}}))
    assert info["error"] and not info["executable"]  # refused: feedback only
    weather = {"name": "Weather__getweather", "arguments": {"city": "San Francisco", "date": "2019-03-08"}}
    env.step(json.dumps(weather))
    reserve = {"name": "Restaurants__reserverestaurant", "arguments": {
        "restaurant_name": {"ref": "restaurant_name"}, "location": {"ref": "location"}, "time": "19:00", "date": "2019-03-08"}}  # fmt: skip
    env.step(json.dumps(reserve))
    ride = {
        "name": "Rents__getride",
        "arguments": {"destination": {"ref": "address"}, "number_of_seats": 2, "ride_type": "Pool"},
    }
    env.step(json.dumps(ride))
    _, reward, terminated, _, info = env.step(json.dumps({"name": "finish", "arguments": {}}))
    assert terminated and reward == 1.0 and info["succ"] == 1.0


def test_the_paper_scorer_is_only_the_reward_when_asked_and_stays_fast():
    import time

    env = AppBenchEnv(tasks=[task()])
    _, _, _, _, info = play(env, "mine-0", [PLAN])
    assert "paper_complete_match" not in info
    paper = AppBenchEnv(tasks=[task()], scorer="paper")
    _, reward, *_, info = play(paper, "mine-0", [PLAN])
    assert reward == 1.0 and info["paper_complete_match"]
    slow = "\n".join(f"Weather: [t = getweather(#city='{'a' * 900}={'b' * 900}')]" for _ in range(50))
    started = time.perf_counter()
    play(paper, "mine-0", [slow])
    assert time.perf_counter() - started < 2  # 2.45 s before: the paper parser's pattern was quadratic


def test_the_eval_summary_has_micro_f1_and_with_the_paper_scorer_its_table(capsys):
    from toolbench.cli import main
    from toolbench.eval.harness import evaluate

    report, _ = evaluate("oracle", ["AppBench"], limit=40, env_options={"scorer": "paper"})
    row = report["tasks"]["AppBench"]
    assert row["micro_f1_app"] == 1.0 and row["succ"] == 1.0
    assert {"paper_app_hit_f1", "paper_complete_match", "paper_argu_hit_f1", "paper_app_exact_match"} <= row.keys()
    assert row["paper_app_hit_f1"] < 1.0  # the paper's one-hit matching caps multi-call tasks
    plain, _ = evaluate("random", ["AppBench"], limit=40)
    assert "paper_app_hit_f1" not in plain["tasks"]["AppBench"] and plain["tasks"]["AppBench"]["micro_f1_app"] < 0.3
    assert main(["eval", "--agent", "oracle", "--task", "CatAPI", "--scorer", "paper"]) == 2
    assert "--scorer applies to --task AppBench only" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["program", "interactive"])
def test_the_gold_apps_are_not_shown_at_reset(mode):
    """appbench-test-0300 needs Events: what reset shows is what any other task's reset shows."""
    import gymnasium as gym

    import toolbench  # noqa: F401  (registers the env ids)

    env = gym.make("toolbench/AppBench-v0", mode=mode)
    _, info = env.reset(options={"task_id": "appbench-test-0300"})
    assert env.unwrapped.task.get("output")["used_app"] == ["Events"]
    names = [tool["function"]["name"] for tool in info["tools"]]
    if mode == "program":  # flat: every app's APIs
        assert len(names) == 33 and info["api_docs"].count("# Events.") == 2
    else:  # hierarchical: the apps, and select_apps to choose among them
        assert names == ["select_apps", "finish"] and "Events__" not in info["api_docs"]
    _, other = env.reset(options={"task_id": "appbench-test-0000"})
    assert (other["api_docs"], other["tools"]) == (info["api_docs"], info["tools"])
