"""Trip Booking's train and unseen splits: the oracle solves them, a parser of the seen phrasings
solves test but not unseen, and the parts every task shares earn no reward."""

import datetime as dt
import re
from statistics import mean

import gymnasium as gym
import pytest

import toolbench
from tests.episodes import assert_the_oracle_solves, play, solved_share
from toolbench.mock_services.trip_booking.travel import load_cities

ENV_ID = "toolbench/TripBooking-v0"
NAMES = sorted((c.name for c in load_cities()), key=len, reverse=True)
CITY = "(" + "|".join(re.escape(n) for n in NAMES) + ")"
# The demo and train date formats: 2024/07/26, July 26, 2024, Jul 26, 2024, 7/26/2024, 2024-07-26.
DATE = re.compile(
    r"(\d{4})/(\d\d)/(\d\d)|([A-Z][a-z]+) (\d{1,2}), (\d{4})|(\d{1,2})/(\d{1,2})/(\d{4})|(\d{4})-(\d\d)-(\d\d)"
)


def _dates(prompt):
    found = []
    for m in DATE.finditer(prompt):
        g = m.groups()
        if g[0]:
            found.append(dt.date(int(g[0]), int(g[1]), int(g[2])))
        elif g[3]:
            month = dt.datetime.strptime(g[3][:3], "%b").month
            found.append(dt.date(int(g[5]), month, int(g[4])))
        elif g[6]:
            found.append(dt.date(int(g[8]), int(g[6]), int(g[7])))
        else:
            found.append(dt.date(int(g[9]), int(g[10]), int(g[11])))
    return [f"Date({d.month}, {d.day}, {d.year})" for d in found]


def _first(pattern, prompt):
    found = re.search(pattern, prompt)
    return next((g for g in found.groups() if g), None) if found else None


def parse(prompt):
    """The program a regular-expression reader of the seen prompts writes."""
    hotel = re.search(r"hotel|place to stay", prompt)
    kind = ("both" if "ticket" in prompt or "trip" in prompt else "hotels") if hotel else "trip tickets"
    lines = [f'API.select_booking_type("{kind}")']
    dates = _dates(prompt) + ["Date(1, 1, 2024)"] * 2
    if kind != "hotels":
        mode = _first(r"\b(flight|train|bus|cruise)\b", prompt) or "flight"
        origin = _first(rf"from {CITY} to|I live in {CITY}", prompt)
        destination = _first(rf"(?:to|trip to) {CITY}", prompt)
        lines += [f'API.select_transportation("{mode}")', f'API.set_origin(Loc("{origin}"))']
        lines += [f'API.set_destination(Loc("{destination}"))']
        if adults := _first(r"(\d+) adults?", prompt):
            lines.append(f"API.set_num_adults({adults})")
        if children := _first(r"(\d+) child", prompt):
            lines.append(f"API.set_num_children({children})")
        if limit := _first(r"up to \$(\d+) per ticket|cost at most \$(\d+)|No ticket over \$(\d+)", prompt):
            lines.append(f"API.set_max_ticket_price({limit})")
    if kind == "trip tickets":
        lines.append(f"API.set_departure_date({dates[0]})")
        if "round-trip" in prompt:
            lines.append(f"API.set_return_date({dates[1]})")
    else:
        city = _first(rf"hotels? in {CITY}|visiting {CITY}|a trip to {CITY}", prompt)
        lines += [f'API.set_hotel_location(Loc("{city}"))', f"API.set_checkin_date({dates[0]})"]
        lines.append(f"API.set_checkout_date({dates[1]})")
        if rooms := _first(r"(\d+) rooms?\b", prompt):
            lines.append(f"API.set_num_rooms({rooms})")
        if room := _first(r"(king bed|queen bed|double|luxury) rooms?", prompt):
            lines.append(f'API.select_room_type("{room.title()}")')
        if limit := _first(r"at most \$(\d+) a night|up to \$(\d+) per night", prompt):
            lines.append(f"API.set_max_room_price({limit})")
    return "\n".join(lines + ["API.search()"])


def success_rate(split, solver):
    env = gym.make(ENV_ID, split=split, disable_env_checker=True)
    return solved_share(env, toolbench.load_tasks("TripBooking", split), solver)


def test_a_parser_of_the_seen_phrasings_solves_test_but_not_unseen():
    assert success_rate("test", parse) >= 0.8
    assert success_rate("unseen", parse) <= 0.10


@pytest.mark.parametrize("mode", ["program", "interactive"])
def test_the_oracle_solves_unseen_and_a_spread_of_train(mode):
    env = gym.make(ENV_ID, mode=mode, split="unseen")
    assert_the_oracle_solves(env, env.unwrapped.tasks)
    env = gym.make(ENV_ID, mode=mode, split="train")
    tasks = env.unwrapped.tasks
    assert_the_oracle_solves(env, tasks[:: len(tasks) // 50])


def only_shared(task):
    """Whether the task sets nothing beyond its booking type's required criteria (a hotel stay with
    no rooms, room type or price said): reading those is the whole task."""
    return task.get("difficulty", None) == 0 or not re.search(
        r"set_num_adults|set_num_children|set_return_date|set_num_rooms\((?!1\))|room_type|price", task.references[0]
    )


@pytest.mark.parametrize("mode", ["program", "interactive"])
@pytest.mark.parametrize("split", ["test", "unseen"])
def test_the_shared_parts_earn_nothing(split, mode):
    """The booking type and the criteria search() requires of it, with the task's own values: ToolBench's
    F1 pays them 0.87; the reward pays nothing where the task has criteria of its own, and the tasks
    without any (8 hotel stays of test's 120, one of them asking for one room, the default; none of
    unseen) are all-or-nothing."""
    env = gym.make(ENV_ID, mode=mode, split=split)
    tasks = env.unwrapped.tasks
    results = {t.id: play(env, t.id, env.unwrapped.shared_parts_actions(t)) for t in tasks}
    assert mean(r[1] for r in results.values()) <= 0.15
    assert mean(r[4]["f1"] for r in results.values()) > 0.8  # what the benchmark's own F1 would have paid
    for task in tasks:
        _, reward, _, _, info = results[task.id]
        assert info["success"] == only_shared(task) and reward == float(only_shared(task)), task.id
    assert sum(only_shared(t) for t in tasks) == (8 if split == "test" else 0)


def test_difficulty_counts_the_tasks_own_criteria():
    tasks = toolbench.load_tasks("TripBooking", "unseen")
    assert all(task.get("difficulty") >= 1 for task in tasks)
    assert {task.get("difficulty") for task in tasks} >= {1, 2, 3, 4}
