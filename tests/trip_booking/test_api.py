"""The Trip Booking backend: the travel database, Loc/Date values and the API's rules."""

import datetime as dt

import pytest

from toolbench.core.program import RuleError
from toolbench.mock_services.trip_booking import Date, Loc, TripBookingAPI, load_travel_db


@pytest.fixture(scope="module")
def db():
    return load_travel_db()


def test_travel_database(db):
    assert len(db.cities) >= 40
    assert {r.mode for r in db.routes} == {"flight", "train", "bus", "cruise"}
    assert len({r.origin for r in db.routes}) >= 40
    assert {room.room_type for room in db.rooms} == {"King Bed", "Queen Bed", "Double", "Luxury"}
    assert all(r.weekdays.count("1") == 1 for r in db.routes if r.mode == "cruise")


def test_departures_and_stays_are_deterministic_and_sorted(db):
    day = dt.date(2024, 6, 14)
    flights = db.departures("Denver", "Chicago", "flight", day)
    assert flights and flights == db.departures("Denver", "Chicago", "flight", day)
    assert [f.price for f in flights] == sorted(f.price for f in flights)
    assert all(0 <= f.seats <= f.route.capacity for f in flights)
    other_day = db.departures("Denver", "Chicago", "flight", day + dt.timedelta(days=1))
    assert [f.price for f in flights] != [f.price for f in other_day]  # fares move with the date
    stays = db.stays("Denver", day, day + dt.timedelta(days=3))
    assert stays and all(s.nights == 3 for s in stays)
    assert db.stays("Denver", day, day) == []


def test_values():
    assert Date(8, 25, 2023).text == "8-25-2023" and repr(Loc("Denver")) == "Loc('Denver')"
    for bad in [(2, 30, 2024), (13, 1, 2024), ("8", 25, 2023), (8.0, 25, 2023)]:
        with pytest.raises(ValueError):
            Date(*bad)
    with pytest.raises(ValueError):
        Loc("")


def test_both_fills_its_defaults():
    api = TripBookingAPI()
    api.select_booking_type("Both")
    api.select_transportation("Flight")
    api.set_origin(Loc("denver"))
    api.set_destination(Loc("Chicago, IL"))
    api.set_hotel_location(Loc("Chicago"))
    api.set_checkin_date(Date(6, 14, 2024))
    api.set_checkout_date(Date(6, 17, 2024))
    api.select_room_type("king bed")
    api.search()
    assert api.criteria == {
        "booking_type": "both",
        "means_of_transportation": "flight",
        "location_from": "Denver",
        "location_to": "Chicago",
        "location": "Chicago",
        "checkin_date": "6-14-2024",
        "checkout_date": "6-17-2024",
        "room_type": "King Bed",
        "min_price_ticket": 0,
        "min_price_room": 0,
        "departure_date": "6-14-2024",
        "return_date": "6-17-2024",
        "num_rooms": 1,
    }
    assert api.trips is not None and api.returns is not None and api.stays is not None


@pytest.mark.parametrize(
    "calls, message",
    [
        ([("set_num_adults", 2)], "before select_booking_type"),
        ([("select_booking_type", "hotels"), ("select_booking_type", "both")], "must be the first call"),
        ([("select_booking_type", "vacation")], "expects one of"),
        ([("select_booking_type", "trip tickets"), ("select_transportation", "rocket")], "expects one of flight"),
        ([("select_booking_type", "trip tickets"), ("set_origin", "Denver")], "expects a Loc object"),
        ([("select_booking_type", "trip tickets"), ("set_departure_date", "8-25-2023")], "expects a Date object"),
        ([("select_booking_type", "hotels"), ("select_room_type", "Suite")], "expects one of King Bed"),
        ([("select_booking_type", "hotels"), ("set_num_rooms", 1.5)], "whole number"),
        ([("select_booking_type", "trip tickets"), ("search",)], "needs the transportation"),
        (
            [("select_booking_type", "hotels"), ("set_hotel_location", Loc("Denver")), ("search",)],
            "needs the check-in date",
        ),
        (
            [
                ("select_booking_type", "both"),
                ("select_transportation", "bus"),
                ("set_origin", Loc("Austin")),
                ("set_destination", Loc("Dallas")),
                ("search",),
            ],
            "needs the hotel location",
        ),
    ],
)
def test_broken_rules_name_the_rule(calls, message):
    api = TripBookingAPI()
    with pytest.raises(RuleError, match=message):
        for name, *args in calls:
            getattr(api, name)(*args)


def test_a_date_beyond_a_c_long_is_an_error_not_an_internal_error():
    import gymnasium as gym

    import toolbench  # noqa: F401

    env = gym.make("toolbench/TripBooking-v0").unwrapped
    env.reset(seed=0)
    *_, info = env.step("API.set_departure_date(Date(12345678901234567890, 1, 2026))")
    assert info["error"] and "internal error" not in info["error"] and "not a real date" in info["error"]


def test_kept_searches_are_the_callers_own_lists(db):
    """Departures and stays are kept per database; a caller that edits what it got changes nothing."""
    day = dt.date(2024, 6, 14)
    flights = db.departures("Denver", "Chicago", "flight", day)
    flights.clear()
    assert db.departures("Denver", "Chicago", "flight", day)
    stays = db.stays("Denver", day, day + dt.timedelta(days=2))
    stays.pop()
    assert len(db.stays("Denver", day, day + dt.timedelta(days=2))) == len(stays) + 1


def test_unknown_places_are_not_kept(db):
    """An agent can name any place: searches for places the database lacks answer [] and are not kept."""
    day = dt.date(2024, 6, 14)
    kept = db._departures.cache_info().currsize, db._stays.cache_info().currsize
    assert db.departures("Atlantis" * 100, "Denver", "flight", day) == []
    assert db.stays("Atlantis" * 100, day, day + dt.timedelta(days=2)) == []
    assert (db._departures.cache_info().currsize, db._stays.cache_info().currsize) == kept
