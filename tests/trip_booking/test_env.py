"""toolbench/TripBooking-v0: both modes, Loc/Date through variables, broken rules, original records."""

import json

import gymnasium as gym
import pytest

import toolbench
from tests.episodes import play

ENV_ID = "toolbench/TripBooking-v0"


@pytest.mark.parametrize("mode", ["program", "interactive"])
@pytest.mark.parametrize("split", ["test", "demo"])
def test_oracle_solves_every_task(mode, split):
    env = gym.make(ENV_ID, mode=mode, split=split)
    for task in toolbench.load_tasks("TripBooking", split):
        _, reward, terminated, _, info = play(env, task.id, env.unwrapped.oracle_actions(task))
        assert terminated and info["success"] and reward == 1.0, task.id


def test_task_sets_cover_the_three_booking_types():
    tests = toolbench.load_tasks("TripBooking")
    assert len(tests) == 120 and len(toolbench.load_tasks("TripBooking", "demo")) == 11
    for kind in ("hotels", "trip tickets", "both"):
        assert sum(f'select_booking_type("{kind}")' in t.references[0] for t in tests) == 40
    env = gym.make(ENV_ID).unwrapped
    for task in tests:  # every part of every search finds something
        env.reset(options={"task_id": task.id})
        env.step(task.references[0])
        assert env._api.found_something(), task.id


REFERENCE = """API.select_booking_type("trip tickets")
API.select_transportation("bus")
API.set_num_adults(2)
location_from = Loc("Austin")
API.set_origin(location_from)
API.set_destination(Loc("Dallas"))
departure_date = Date(6, 14, 2024)
API.set_departure_date(departure_date)
API.search()"""


@pytest.fixture
def austin(tmp_path):
    # The original record shape: {"prompt", "completion"} and no id.
    path = tmp_path / "test.jsonl"
    record = {"prompt": "Bus tickets for 2 adults from Austin to Dallas on June 14, 2024.", "completion": [REFERENCE]}
    path.write_text(json.dumps(record) + "\n")
    return gym.make(ENV_ID, task_file=str(path))


@pytest.mark.parametrize(
    "program",
    [
        REFERENCE,
        """API.select_booking_type(booking_type="trip tickets")
API.set_destination(value=Loc(location="dallas"))
API.set_departure_date(Date(month=6, day=14, year=2024))
API.set_origin(Loc("Austin"))
API.set_num_adults(2)
API.select_transportation("Bus")
API.set_min_ticket_price(0)
API.search()""",
        """day = Date(6, 14, 2024)
here = Loc("Austin")
there = Loc("Dallas")
API.select_booking_type("trip tickets")
API.select_transportation("bus")
API.set_origin(here)
API.set_destination(there)
API.set_departure_date(day)
API.set_num_adults(2)
API.search()""",
    ],
)
def test_equivalent_programs_succeed(austin, program):
    task_id = austin.unwrapped.tasks[0].id
    _, reward, _, _, info = play(austin, task_id, [program])
    assert info["success"] and reward == 1.0, info


@pytest.mark.parametrize(
    "change, message",
    [
        (
            (
                'API.select_booking_type("trip tickets")\nAPI.select_transportation("bus")',
                'API.select_transportation("bus")\nAPI.select_booking_type("trip tickets")',
            ),
            "line 1: select_transportation was called before select_booking_type",
        ),
        (("API.set_origin(location_from)", 'API.set_origin("Austin")'), "line 5: set_origin expects a Loc object"),
        (
            ("API.set_departure_date(departure_date)", "API.set_departure_date('6-14-2024')"),
            "line 8: set_departure_date expects a Date object",
        ),
        (("API.set_departure_date(departure_date)\n", ""), "line 8: search for trip tickets needs the departure date"),
        (("Date(6, 14, 2024)", "Date(6, 31, 2024)"), "line 7: Date(...): Date(6, 31, 2024) is not a real date"),
    ],
)
def test_broken_rules_are_not_executable(austin, change, message):
    program = REFERENCE.replace(*change)
    obs, reward, _, _, info = play(austin, austin.unwrapped.tasks[0].id, [program])
    assert reward == 0.0 and not info["executable"] and message in info["error"], info["error"]


def test_a_different_date_is_wrong(austin):
    _, reward, _, _, info = play(austin, austin.unwrapped.tasks[0].id, [REFERENCE.replace("Date(6, 14", "Date(6, 15")])
    assert info["executable"] and not info["success"] and reward == 0.0 < info["f1"] < 1  # another day's buses


def test_the_reward_pays_only_the_tasks_own_criteria(austin):
    """The booking type and what search() requires of it (transportation, origin, destination,
    departure) earn nothing by themselves: here only the number of adults is the task's own."""
    env = austin.unwrapped
    task = env.tasks[0]
    shared = env.shared_parts_actions(task)
    assert shared == [REFERENCE.replace("API.set_num_adults(2)\n", "")]
    _, reward, _, _, info = play(austin, task.id, shared)
    assert reward == 0.0 and info["f1"] > 0.8
    _, reward, _, _, info = play(austin, task.id, [REFERENCE.replace("set_num_adults(2)", "set_num_adults(3)")])
    assert reward == 0.0 < info["f1"]
    children = REFERENCE.replace("API.set_num_adults(2)", "API.set_num_adults(2)\nAPI.set_num_children(1)")
    _, reward, _, _, info = play(austin, task.id, [children])  # one own criterion right, one not asked for
    assert reward == pytest.approx(2 / 3) and not info["success"]
    env = gym.make(ENV_ID, mode="interactive", tasks=env.tasks).unwrapped
    assert env.shared_parts_actions(task)[-2:] == ["API.set_departure_date(Date(6, 14, 2024))", "API.search()"]


def test_only_a_search_that_passes_its_checks_is_paid(austin):
    """Leaving out search() skips its check of the required criteria; a refused search sets its
    defaults first. Neither may earn more than doing the task."""
    task_id = austin.unwrapped.tasks[0].id
    unchecked = REFERENCE.replace("API.set_departure_date(departure_date)\n", "").replace("API.search()", "")
    _, reward, _, _, info = play(austin, task_id, [unchecked])
    assert info["executable"] and info["f1"] > 0.5 and reward == 0.0
    env = gym.make(ENV_ID, mode="interactive", max_steps=2, tasks=austin.unwrapped.tasks)
    _, reward, _, truncated, info = play(env, task_id, ['API.select_booking_type("trip tickets")', "API.search()"])
    assert truncated and not info["executable"] and reward == 0.0


def test_search_defaults_earn_the_benchmarks_f1_but_no_reward(austin):
    task_id = austin.unwrapped.tasks[0].id
    wrong_everything = (
        REFERENCE.replace("Austin", "Boston").replace("Dallas", "Omaha").replace("Date(6, 14", "Date(7, 1")
    )
    _, reward, _, _, info = play(austin, task_id, [wrong_everything])
    assert info["f1"] > 0 and reward < info["f1"]  # min prices 0: in ToolBench's F1, not in the reward


def test_interactive_json_calls_with_places_and_dates():
    env = gym.make(ENV_ID, mode="interactive")
    env.reset(seed=0)
    steps = [
        {"name": "select_booking_type", "arguments": {"booking_type": "hotels"}},
        {"name": "set_hotel_location", "arguments": {"value": "Denver"}},
        {"name": "set_checkin_date", "arguments": {"value": {"month": 6, "day": 14, "year": 2024}}},
        {"name": "set_checkout_date", "arguments": {"value": "2024-06-16"}},
    ]
    for step in steps:
        obs, reward, terminated, *_ = env.step(json.dumps(step))
        assert obs.startswith("OK:") and not terminated
    obs, *_ = env.step(json.dumps({"name": "set_checkout_date", "arguments": {"value": "June 16"}}))
    assert obs.startswith("Error:") and "a date must be" in obs
    obs, reward, terminated, *_ = env.step('{"name": "search", "arguments": {}}')
    assert terminated and "Hotels:" in obs
    tools = env.unwrapped.tools()
    by_name = {t["function"]["name"]: t["function"] for t in tools}
    assert by_name["set_checkin_date"]["parameters"]["properties"]["value"]["type"] == "string"
    assert by_name["select_room_type"]["parameters"]["properties"]["room_type"]["enum"] == [
        "King Bed",
        "Queen Bed",
        "Double",
        "Luxury",
    ]
    assert "Loc(location: str)" in env.unwrapped.api_docs()


def test_original_records_from_the_reference_data(refdata, tmp_path):
    from tests.conftest import readme_examples

    examples = readme_examples(refdata, "Trip Booking")
    assert len(examples) >= 2
    path = tmp_path / "test.jsonl"
    path.write_text("".join(json.dumps({"prompt": p, "completion": [c]}) + "\n" for p, c in examples))
    for mode in ("program", "interactive"):
        env = gym.make(ENV_ID, task_file=str(path), mode=mode)
        for task in env.unwrapped.tasks:
            assert play(env, task.id, env.unwrapped.oracle_actions(task))[4]["success"], task.prompt


BLOWUP = (
    "a = ["
    + ", ".join(["0"] * 100)
    + "]\n"
    + "".join(f"{n} = [" + ", ".join([p] * 100) + "]\n" for p, n in zip("abcd", "bcde"))
)

HOSTILE = [
    BLOWUP + "API.select_booking_type(e)",
    'API.select_booking_type("hotels")\nAPI.set_hotel_location(Loc("Denver"))\nAPI.set_checkin_date(Date(1, 1, 1900))\n'
    "API.set_checkout_date(Date(1, 1, 2100))\nAPI.search()",
    'API.select_booking_type("trip tickets")\nAPI.select_transportation("flight")\nAPI.set_origin(Loc("Laredo"))\n'
    'API.set_destination(Loc("Boston"))\nAPI.set_departure_date(Date(12, 31, 9999))\nAPI.search()',
    'API.select_booking_type("hotels")\nAPI.set_num_rooms(' + "9" * 4000 + ")",
    "import os",
    "API.set_origin(Loc(().__class__))",
]


@pytest.mark.parametrize("action", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize("mode", ["program", "interactive"])
def test_hostile_programs_are_fast_errors(action, mode):
    import time

    env = gym.make(ENV_ID, mode=mode, disable_env_checker=True)
    env.reset(seed=0)
    start = time.perf_counter()
    for line in [action] if mode == "program" else action.splitlines():
        obs, reward, terminated, truncated, info = env.step(line)
        if terminated:
            break
    assert time.perf_counter() - start < 2.0
    assert "internal error" not in obs and reward < 1.0


def test_interactive_variables_fences_and_call_aliases():
    env = gym.make(ENV_ID, mode="interactive")
    env.reset(seed=0)
    assert env.step('API.select_booking_type("hotels")')[0].startswith("OK")
    assert env.step('home = Loc("Denver")')[0] == "OK: home = Loc('Denver')"
    assert env.step("API.set_hotel_location(home)")[0] == "OK: location = 'Denver'"
    fenced = '```json\n{"name": "set_checkin_date", "parameters": {"value": "2024-06-14"}}\n```'
    assert env.step(fenced)[0] == "OK: checkin_date = '6-14-2024'"
    listed = '[{"name": "set_checkout_date", "input": {"value": {"month": 6, "day": 16, "year": 2024}}}]'
    assert env.step(listed)[0] == "OK: checkout_date = '6-16-2024'"
    huge = env.step('{"name": "set_num_rooms", "arguments": {"value": ' + "9" * 5000 + "}}")[0]
    assert huge.startswith("Error: not valid JSON")
    obs, reward, terminated, *_ = env.step("results = API.search()")
    assert terminated and "Hotels:" in obs


def test_truncation_keeps_the_last_error():
    env = gym.make(ENV_ID, mode="interactive", max_steps=2)
    env.reset(seed=0)
    env.step('API.select_booking_type("hotels")')
    obs, reward, terminated, truncated, info = env.step("API.set_hotel_location('Denver')")
    assert truncated and not terminated and not info["executable"] and "expects a Loc" in info["error"]


def test_tools_are_independent_copies():
    first = gym.make(ENV_ID).unwrapped.tools()
    date = next(t for t in first if t["function"]["name"] == "set_checkin_date")
    date["function"]["parameters"]["properties"]["value"]["description"] += " and an hour"
    again = next(t for t in gym.make(ENV_ID).unwrapped.tools() if t["function"]["name"] == "set_checkin_date")
    assert "hour" not in again["function"]["parameters"]["properties"]["value"]["description"]


def test_tool_dates_are_iso_strings_and_the_object_form_still_plays():
    """The tools offer a date as "YYYY-MM-DD" text; a call with that text, or the older
    {"month", "day", "year"} object, books the same criteria; program mode keeps Date(m, d, y)."""
    env = gym.make(ENV_ID, mode="interactive")
    _, info = env.reset(seed=0)
    schema = {t["function"]["name"]: t["function"] for t in info["tools"]}["set_departure_date"]
    value = schema["parameters"]["properties"]["value"]
    assert value["type"] == "string" and "YYYY-MM-DD" in value["description"] and "properties" not in value

    def criteria(date):
        env.reset(seed=0)
        for step in (
            {"name": "select_booking_type", "arguments": {"booking_type": "trip tickets"}},
            {"name": "set_departure_date", "arguments": {"value": date}},
        ):
            obs, *_ = env.step(json.dumps(step))
        return obs, dict(env.unwrapped._api.criteria)

    text, as_text = criteria("2024-06-14")
    obj, as_object = criteria({"month": 6, "day": 14, "year": 2024})
    assert text.startswith("OK:") and obj.startswith("OK:") and as_text == as_object
    for bad in ("06/14/2024", "2024-13-01", "2024-06"):
        obs, *_ = criteria(bad)
        assert obs.startswith("Error:"), bad
    assert "Date(month: int, day: int, year: int)" in gym.make(ENV_ID, mode="program").unwrapped.api_docs()


def test_print_and_assigned_calls_run_the_call(austin):
    program = REFERENCE.replace("API.search()", "print(API.search())").replace(
        "API.set_num_adults(2)", "confirmation = API.set_num_adults(2)"
    )
    assert play(austin, austin.unwrapped.tasks[0].id, [program])[4]["success"]
