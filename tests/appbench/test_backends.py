"""AppBench's app back-ends: every API answers from the world, results chain into later calls, and
permission, validation and availability rules hold; the world is the same in every process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolbench.mock_services.apps.backend import AppError, Apps, check_args, money
from toolbench.mock_services.apps.generator import build_world, world_summary
from toolbench.mock_services.apps.model import TODAY
from toolbench.mock_services.apps.registry import apis, by_app

ROOT = Path(__file__).resolve().parents[2]
W = build_world()
DAY = "2019-03-12"


@pytest.fixture
def apps() -> Apps:
    return Apps()


def _song():
    return W.songs[5]


def _free_event():
    return next(e for e in W.events if e.tickets_left >= 4)


def _streamed():
    return next(f for f in W.films if not f.in_cinemas)


def valid_calls() -> dict[str, tuple[str, str, dict[str, str]]]:
    """One valid call per API (``App__api``), built from world data."""
    sj = "San Jose"
    restaurant = next(r for r in W.restaurants if r.city == sj)
    event = _free_event()
    showing = next(s for s in W.showings if DAY not in s.sold_out)
    home = W.properties[0]
    stylist, therapist = W.stylists[0], W.therapists[0]
    film = _streamed()
    location = W.pickup_locations[0]
    return {
        "Hotels__bookhouse": ("Hotels", "bookhouse", {"where_to": sj, "number_of_adults": "2", "check_in_date": "2019-03-08", "check_out_date": "2019-03-10"}),
        "Hotels__searchhouse": ("Hotels", "searchhouse", {"where_to": sj, "rating": "4.0"}),
        "Rents__getcarsavailable": ("Rents", "getcarsavailable", {"city": sj, "start_date": "2019-03-08", "pickup_time": "10:00", "end_date": "2019-03-10"}),
        "Rents__reservecar": ("Rents", "reservecar", {"pickup_location": location.name, "start_date": "2019-03-02", "pickup_time": "10:00", "end_date": "2019-03-03", "car_type": "Compact", "add_insurance": "False"}),
        "Rents__getride": ("Rents", "getride", {"destination": restaurant.address, "number_of_seats": "2", "ride_type": "Pool"}),
        "Buses__findbus": ("Buses", "findbus", {"from_city": "Los Angeles", "to_city": "San Diego", "departure_date": DAY}),
        "Buses__buybusticket": ("Buses", "buybusticket", {"from_city": "Los Angeles", "to_city": "San Diego", "departure_date": "2019-03-01", "departure_time": _route("bus", "Los Angeles", "San Diego").departures[0].time, "num_passengers": "2"}),
        "Events__findevents": ("Events", "findevents", {"event_type": "Music", "city": sj}),
        "Events__buyeventtickets": ("Events", "buyeventtickets", {"event_name": event.name, "number_of_tickets": "2", "date": event.date, "city": event.city}),
        "Flights__searchonewayflight": ("Flights", "searchonewayflight", {"origin_airport": "SFO", "destination_airport": "Chicago", "departure_date": DAY}),
        "Flights__searchroundtripflights": ("Flights", "searchroundtripflights", {"origin_airport": "Seattle", "destination_airport": "London", "departure_date": DAY, "return_date": "2019-03-20", "seating_class": "Business", "number_of_tickets": "2"}),
        "Homes__findhomebyarea": ("Homes", "findhomebyarea", {"area": "Austin", "intent": "rent", "number_of_beds": "2", "number_of_baths": "1"}),
        "Homes__schedulevisit": ("Homes", "schedulevisit", {"property_name": home.name, "visit_date": next(d.isoformat() for d in _days() if d.isoformat() not in home.closed_dates)}),
        "Media__findmovies": ("Media", "findmovies", {"genre": film.genre}),
        "Media__playmovie": ("Media", "playmovie", {"title": film.title}),
        "Movies__buymovietickets": ("Movies", "buymovietickets", {"movie_name": showing.movie, "number_of_tickets": "3", "show_date": DAY, "location": showing.city, "show_time": showing.time, "show_type": showing.show_type}),
        "Movies__findmovies": ("Movies", "findmovies", {"location": "Denver"}),
        "Movies__gettimesformovie": ("Movies", "gettimesformovie", {"movie_name": showing.movie, "location": showing.city, "show_date": DAY}),
        "Movies__reviewmovies": ("Movies", "reviewmovies", {"genre": "Comedy"}),
        "Music__playmedia": ("Music", "playmedia", {"track": _song().track, "device": "Kitchen"}),
        "Music__lookupmusic": ("Music", "lookupmusic", {"genre": "Jazz"}),
        "Payment__requestpayment": ("Payment", "requestpayment", {"receiver": W.contacts[0], "amount": "42.5"}),
        "Payment__makepayment": ("Payment", "makepayment", {"payment_method": "debit card", "amount": "30", "receiver": W.contacts[1], "private_visibility": "True"}),
        "Restaurants__reserverestaurant": ("Restaurants", "reserverestaurant", {"restaurant_name": restaurant.name, "location": sj, "time": "19:30", "date": "2019-03-02", "number_of_seats": "4"}),
        "Restaurants__findrestaurants": ("Restaurants", "findrestaurants", {"category": "Korean", "location": sj}),
        "Services__book_stylist_appointment": ("Services", "book_stylist_appointment", {"stylist_name": stylist.name, "appointment_time": _free_time(stylist), "appointment_date": DAY}),
        "Services__find_stylist_provider": ("Services", "find_stylist_provider", {"city": "Boston", "is_unisex": "True"}),
        "Services__book_therapist_appointment": ("Services", "book_therapist_appointment", {"therapist_name": therapist.name, "appointment_time": _free_time(therapist), "appointment_date": DAY}),
        "Services__find_therapist_provider": ("Services", "find_therapist_provider", {"city": "Paris", "type": "Psychologist"}),
        "Trains__gettraintickets": ("Trains", "gettraintickets", {"from": "London", "to": "Paris", "date_of_journey": "2019-03-01", "journey_start_time": _route("train", "London", "Paris").departures[0].time, "number_of_adults": "2", "trip_protection": "True", "class": "Business"}),
        "Trains__findtrains": ("Trains", "findtrains", {"from": "Seattle", "to": "Portland", "date_of_journey": DAY}),
        "Travel__findattractions": ("Travel", "findattractions", {"location": "Phoenix", "category": "Museum"}),
        "Weather__getweather": ("Weather", "getweather", {"city": "London", "date": DAY}),
    }  # fmt: skip


def _days():
    from toolbench.mock_services.apps.model import DAYS

    return DAYS


def _route(mode, a, b):
    return next(r for r in W.routes if (r.mode, r.from_city, r.to_city) == (mode, a, b))


def _free_time(provider) -> str:
    return next(t for t in ("10:00", "11:00", "14:30", "16:00") if (DAY, t) not in provider.booked)


CALLS = valid_calls()


def test_every_api_has_a_valid_call():
    assert sorted(CALLS) == sorted(api.key for api in apis()) and len(CALLS) == 33


@pytest.mark.parametrize("key", sorted(CALLS))
def test_every_api_answers_a_valid_call_with_its_returned_arguments(apps, key):
    app, api, args = CALLS[key]
    result = apps.call(app, api, args)
    spec = by_app()[app][api]
    assert list(result) == list(spec.returns)
    assert all(isinstance(value, str) and value for value in result.values())
    booked = len(apps.snapshot()["bookings"])
    assert booked == (1 if spec.transactional or api == "buyeventtickets" else 0)


def test_values_are_written_as_appbench_writes_them(apps):
    bus = apps.call(*CALLS["Buses__buybusticket"])
    assert bus["departure_date"] == "2019-03-01" and bus["num_passengers"] == "2"
    assert bus["additional_luggage"] == "False" and ":" in bus["departure_time"]
    pay = apps.call(*CALLS["Payment__requestpayment"])
    assert pay == {"amount": "42.5", "receiver": W.contacts[0], "private_visibility": "False"}
    assert money(45.0) == "45" and money(18.456) == "18.46" and money(12.5) == "12.5"


# -- chains ---------------------------------------------------------------------------------------------------------


def test_restaurant_found_is_reserved_and_ridden_to(apps):
    found = apps.call("Restaurants", "findrestaurants", {"category": "Korean", "location": "san jose "})
    booked = apps.call(
        "Restaurants", "reserverestaurant",
        {"restaurant_name": found["restaurant_name"], "location": found["location"], "time": "13:00", "date": "2019-03-05"},
    )  # fmt: skip
    assert booked["restaurant_name"] == found["restaurant_name"] and booked["number_of_seats"] == "2"
    ride = apps.call(
        "Rents", "getride", {"destination": found["address"], "number_of_seats": "2", "ride_type": "Regular"}
    )
    assert ride["destination"] == found["address"] and float(ride["ride_fare"]) > 0


def test_available_car_is_reserved(apps):
    found = apps.call(
        "Rents", "getcarsavailable",
        {"city": "Denver", "start_date": "2019-03-08", "pickup_time": "09:00", "end_date": "2019-03-11", "car_type": "SUV"},
    )  # fmt: skip
    assert found["car_type"] == "SUV"
    args = {k: found[k] for k in ("pickup_location", "start_date", "pickup_time", "end_date", "car_type")}
    reserved = apps.call("Rents", "reservecar", {**args, "add_insurance": "True"})
    assert reserved["car_name"] == found["car_name"] and reserved["add_insurance"] == "True"


def test_found_bus_and_train_departures_are_bought(apps):
    bus = apps.call(
        "Buses", "findbus", {"from_city": "NYC", "to_city": "Boston", "departure_date": DAY, "num_passengers": "3"}
    )
    ticket = apps.call(
        "Buses", "buybusticket",
        {"from_city": bus["from_city"], "to_city": bus["to_city"], "departure_date": bus["departure_date"],
         "departure_time": bus["departure_time"], "num_passengers": "3", "additional_luggage": "True"},
    )  # fmt: skip
    assert ticket["from_station"] == bus["from_station"] and int(ticket["price"]) > int(bus["price"])
    train = apps.call("Trains", "findtrains", {"from": "San Francisco", "to": "Los Angeles", "date_of_journey": DAY})
    bought = apps.call(
        "Trains", "gettraintickets",
        {"from": train["from"], "to": train["to"], "date_of_journey": train["date_of_journey"],
         "journey_start_time": train["journey_start_time"], "number_of_adults": "1", "trip_protection": "False"},
    )  # fmt: skip
    assert bought["total"] == train["total"] and bought["journey_start_time"] == train["journey_start_time"]


def test_the_sgd_sibling_argument_names_of_appbench_records_are_taken(apps):
    mine = {"from_city": "NYC", "to_city": "Boston", "departure_date": DAY, "num_passengers": "3"}
    theirs = {
        "origin": "NYC",
        "destination": "Boston",
        "departure_date": DAY,
        "group_size": "3",
        "fare_type": "Economy",
    }
    assert apps.call("Buses", "findbus", theirs) == apps.call("Buses", "findbus", mine)
    event = apps.call("Events", "findevents", {"category": "Music", "city": "Chicago"})
    assert event["event_type"] == "Music"
    # Given with our name, the sibling's says the same and is dropped, whatever it holds.
    both = apps.call("Events", "findevents", {"category": "Italian", "event_type": "Music", "city": "Chicago"})
    assert both == event
    _refused(apps, "Events", "buyeventtickets", {"category": "Music", "event_name": "x", "city": "Chicago",
             "date": DAY, "number_of_tickets": "1"}, "takes no argument category")  # fmt: skip


def test_found_event_tickets_are_bought(apps):
    found = apps.call("Events", "findevents", {"event_type": "Theater", "city": "Chicago"})
    bought = apps.call(
        "Events", "buyeventtickets",
        {"event_name": found["event_name"], "number_of_tickets": "1", "date": found["date"], "city": found["city"]},
    )  # fmt: skip
    assert bought["venue"] == found["venue"] and bought["time"] == found["time"]
    concert = apps.call("Events", "findevents", {"event_type": "concert", "city": "Chicago"})
    assert concert["event_type"] == "Music"


def test_found_showtime_is_bought(apps):
    movie = apps.call("Movies", "findmovies", {"location": "Seattle", "show_type": "regular"})
    times = apps.call(
        "Movies", "gettimesformovie",
        {"movie_name": movie["movie_name"], "location": movie["location"], "show_date": DAY, "theater_name": movie["theater_name"]},
    )  # fmt: skip
    bought = apps.call(
        "Movies", "buymovietickets",
        {"movie_name": times["movie_name"], "number_of_tickets": "2", "show_date": times["show_date"],
         "location": times["location"], "show_time": times["show_time"], "show_type": times["show_type"]},
    )  # fmt: skip
    assert bought["theater_name"] == times["theater_name"]
    assert float(bought["price"]) == 2 * float(times["price"])


def test_stylist_and_therapist_found_are_booked(apps):
    stylist = apps.call("Services", "find_stylist_provider", {"city": "Atlanta"})
    booked = apps.call(
        "Services", "book_stylist_appointment",
        {"stylist_name": stylist["stylist_name"], "appointment_time": "09:00", "appointment_date": "2019-03-02"},
    )  # fmt: skip
    assert booked["street_address"] == stylist["street_address"]
    therapist = apps.call("Services", "find_therapist_provider", {"city": "Atlanta", "type": "family counselor"})
    seen = apps.call(
        "Services", "book_therapist_appointment",
        {"therapist_name": therapist["therapist_name"], "appointment_time": "09:00", "appointment_date": "2019-03-02"},
    )  # fmt: skip
    assert seen["address"] == therapist["address"] and therapist["type"] == "Family Counselor"


def test_home_found_is_visited(apps):
    home = apps.call(
        "Homes", "findhomebyarea", {"area": "Boston", "intent": "buy", "number_of_beds": "3", "number_of_baths": "2"}
    )
    record = next(p for p in W.properties if p.name == home["property_name"])
    day = next(d.isoformat() for d in _days() if d.isoformat() not in record.closed_dates)
    visit = apps.call("Homes", "schedulevisit", {"property_name": home["property_name"], "visit_date": day})
    assert visit["address"] == home["address"] and visit["price"] == home["price"]


def test_streamed_movie_is_played_and_song_found_is_played(apps):
    film = _streamed()
    found = apps.call("Media", "findmovies", {"genre": film.genre, "starring": film.cast[1]})
    assert found["starring"] == film.cast[1]
    other = film.subtitles[-1]
    played = apps.call("Media", "playmovie", {"title": found["title"], "subtitle_language": other})
    assert played["subtitle_language"] == other
    song = apps.call("Music", "lookupmusic", {"artist": _song().artist, "year": _song().year})
    playing = apps.call(
        "Music", "playmedia", {"track": song["track"], "artist": song["artist"], "album": song["album"]}
    )
    assert playing["device"] == "Living room" and playing["album"] == song["album"]


def test_houses_and_flights_and_weather_agree_on_city_names(apps):
    house = apps.call(
        "Hotels", "searchhouse", {"where_to": "NYC", "number_of_adults": "5", "has_laundry_service": "True"}
    )
    assert house["where_to"] == "New York" and int(house["number_of_adults"]) == 5
    flight = apps.call(
        "Flights", "searchonewayflight", {"origin_airport": "LAX", "destination_airport": "JFK", "departure_date": DAY}
    )
    assert flight["origin_airport"].startswith("Los Angeles") and flight["is_nonstop"] in ("True", "False")
    weather = apps.call("Weather", "getweather", {"city": "new york, ny"})
    assert weather["city"] == "New York" and weather["date"] == TODAY.isoformat()


# -- errors ---------------------------------------------------------------------------------------------------------


def _refused(apps, app, api, args, *words):
    with pytest.raises(AppError) as error:
        apps.call(app, api, args)
    message = str(error.value)
    assert all(word in message for word in words), message
    return message


def test_permission(apps):
    _refused(apps, "Travel", "getride", CALLS["Rents__getride"][2], "getride belongs to Rents, not Travel")
    _refused(apps, "Music", "findmovies", {"genre": "Comedy"}, "belongs to Media and Movies, not Music")
    _refused(apps, "Email", "send", {}, "unknown app")
    _refused(apps, "Travel", "teleport", {}, "unknown API")
    assert apps.snapshot()["bookings"] == []


@pytest.mark.parametrize(
    ("key", "change", "words"),
    [
        ("Weather__getweather", {"city": None}, ("needs city",)),
        ("Weather__getweather", {"units": "metric"}, ("no argument units",)),
        ("Buses__findbus", {"num_passengers": "two"}, ("num_passengers='two'", "whole number")),
        ("Payment__makepayment", {"amount": "$30"}, ("number",)),
        ("Rents__reservecar", {"add_insurance": "yes"}, ("'True' or 'False'",)),
        ("Weather__getweather", {"date": "03/12/2019"}, ("YYYY-MM-DD",)),
        ("Weather__getweather", {"date": "2019-02-30"}, ("not a real date",)),
        ("Weather__getweather", {"date": "2019-02-27"}, ("from 2019-03-01",)),
        ("Restaurants__reserverestaurant", {"time": "7pm"}, ("HH:MM",)),
        ("Restaurants__reserverestaurant", {"time": "25:00"}, ("HH:MM",)),
        ("Restaurants__reserverestaurant", {"number_of_seats": "12"}, ("between 1 and 10",)),
        ("Restaurants__reserverestaurant", {"time": "04:00"}, ("takes tables from",)),
        ("Hotels__bookhouse", {"check_out_date": "2019-03-08"}, ("must be after",)),
        ("Rents__getcarsavailable", {"end_date": "2019-03-07"}, ("must be after",)),
        ("Rents__getride", {"ride_type": "Helicopter"}, ("Pool, Regular, Luxury",)),
        ("Rents__getride", {"ride_type": "Pool", "number_of_seats": "5"}, ("between 1 and 4",)),
        ("Rents__getride", {"destination": "Nowhere In Particular"}, ("no place",)),
        ("Flights__searchonewayflight", {"seating_class": "Cargo"}, ("Economy",)),
        ("Flights__searchroundtripflights", {"return_date": "2019-03-02"}, ("before departure_date",)),
        ("Payment__makepayment", {"receiver": "Stranger"}, ("not among your contacts",)),
        ("Payment__makepayment", {"amount": "0"}, ("from 0.01",)),
        ("Payment__makepayment", {"amount": "4000"}, ("has only",)),
        ("Media__playmovie", {"subtitle_language": "Klingon"}, ("subtitles in",)),
        ("Buses__findbus", {"to_city": "Denver"}, ("no bus runs",)),
        ("Trains__gettraintickets", {"journey_start_time": "03:33"}, ("nothing leaves", "departures:")),
    ],
)
def test_validation(apps, key, change, words):
    app, api, args = CALLS[key]
    args = {k: v for k, v in {**args, **change}.items() if v is not None}
    _refused(apps, app, api, args, *words)


def test_no_match_names_the_filters(apps):
    message = _refused(
        apps, "Restaurants", "findrestaurants", {"category": "Klingon", "location": "Boston"}, "no restaurant matched"
    )
    assert "category='Klingon'" in message and "location='Boston'" in message
    _refused(apps, "Weather", "getweather", {"city": "Atlantis"}, "no city called 'Atlantis'")
    _refused(apps, "Music", "lookupmusic", {"artist": "Nobody", "genre": "Jazz"}, "artist='Nobody'", "genre='Jazz'")


def test_optional_dontcare_means_no_filter():
    spec = by_app()["Restaurants"]["findrestaurants"]
    values = check_args(spec, {"category": "Thai", "location": "Austin", "price_range": "dontcare"})
    assert values["price_range"] is None and values["has_seating_outdoors"] is None


def test_sold_out_events_and_showings_fail(apps):
    sold = next(e for e in W.events if e.tickets_left == 0)
    args = {"event_name": sold.name, "number_of_tickets": "1", "date": sold.date, "city": sold.city}
    _refused(apps, "Events", "buyeventtickets", args, "sold out")
    few = next(e for e in W.events if 0 < e.tickets_left <= 8)
    args = {"event_name": few.name, "number_of_tickets": str(few.tickets_left), "date": few.date, "city": few.city}
    apps.call("Events", "buyeventtickets", args)
    _refused(apps, "Events", "buyeventtickets", {**args, "number_of_tickets": "1"}, "sold out")
    showing = next(s for s in W.showings if s.sold_out)
    _refused(
        apps, "Movies", "buymovietickets",
        {"movie_name": showing.movie, "number_of_tickets": "1", "show_date": showing.sold_out[0],
         "location": showing.city, "show_time": showing.time, "show_type": showing.show_type},
        "sold out",
    )  # fmt: skip
    route = next(r for r in W.routes if r.mode == "bus" and any(d.sold_out for d in r.departures))
    departure = next(d for d in route.departures if d.sold_out)
    _refused(
        apps, "Buses", "buybusticket",
        {"from_city": route.from_city, "to_city": route.to_city, "departure_date": departure.sold_out[0],
         "departure_time": departure.time, "num_passengers": "1"},
        "sold out",
    )  # fmt: skip


def test_full_slots_and_taken_appointments_fail(apps):
    place = W.restaurants[3]
    day, slot = place.full_slots[0]
    args = {"restaurant_name": place.name, "location": place.city, "time": slot, "date": day}
    _refused(apps, "Restaurants", "reserverestaurant", args, "fully booked")
    stylist = W.stylists[2]
    day, slot = stylist.booked[0]
    args = {"stylist_name": stylist.name, "appointment_time": slot, "appointment_date": day}
    _refused(apps, "Services", "book_stylist_appointment", args, "already booked")
    app, api, args = CALLS["Services__book_therapist_appointment"]
    apps.call(app, api, args)
    _refused(apps, app, api, args, "already booked")
    home = W.properties[4]
    _refused(
        apps, "Homes", "schedulevisit", {"property_name": home.name, "visit_date": home.closed_dates[0]}, "no visits"
    )


def test_cars_and_houses_are_not_let_twice(apps):
    location = W.pickup_locations[5]
    args = {"pickup_location": location.name, "start_date": "2019-03-02", "pickup_time": "12:00",
            "end_date": "2019-03-03", "car_type": "Standard", "add_insurance": "False"}  # fmt: skip
    cars = [
        c for c in W.cars
        if c.location == location.name and c.car_type == "Standard"
        and not any(first <= "2019-03-03" and last >= "2019-03-02" for first, last in c.busy)
    ]  # fmt: skip
    assert cars
    for _ in cars:
        apps.call("Rents", "reservecar", args)
    _refused(apps, "Rents", "reservecar", args, "rented out")
    biggest = max(h.max_adults for h in W.houses if h.city == "Paris")
    args = {
        "where_to": "Paris",
        "number_of_adults": str(biggest),
        "check_in_date": "2019-03-04",
        "check_out_date": "2019-03-06",
    }
    first = apps.call("Hotels", "bookhouse", args)
    assert int(first["total_price"]) > 0
    _refused(apps, "Hotels", "bookhouse", args, "taken")
    apps.call("Hotels", "bookhouse", {**args, "check_in_date": "2019-03-06", "check_out_date": "2019-03-07"})
    _refused(apps, "Hotels", "bookhouse", {**args, "number_of_adults": "9"}, "sleeps 9")


# -- state ----------------------------------------------------------------------------------------------------------


def test_snapshot_restore_and_reset(apps):
    apps.call(*CALLS["Payment__makepayment"])
    saved = apps.snapshot()
    assert json.loads(json.dumps(saved)) == saved
    assert saved["balances"]["debit card"] == 2370
    apps.call(*CALLS["Services__book_stylist_appointment"])
    _refused(apps, *CALLS["Services__book_stylist_appointment"], "already booked")
    apps.restore(saved)
    assert apps.snapshot() == saved
    apps.call(*CALLS["Services__book_stylist_appointment"])  # free again after the restore
    apps.reset()
    assert apps.snapshot()["bookings"] == [] and apps.snapshot()["balances"]["debit card"] == 2400
    with pytest.raises(AppError):
        apps.restore({"nonsense": 1})


# -- the world ------------------------------------------------------------------------------------------------------


def test_the_world_is_consistent_across_apps():
    summary = world_summary()
    assert len(summary["cities"]) == 20 and summary["counts"]["restaurants"] >= 200
    for city in summary["cities"]:
        assert {r.category for r in W.restaurants if r.city == city} == set(summary["cuisines"])
        assert {e.event_type for e in W.events if e.city == city and e.tickets_left} == set(summary["event_types"])
        assert sum(f.city == city for f in W.forecasts) == 31
        assert any(a.city == city for a in W.attractions) and any(t.city == city for t in W.theaters)
    names = [s.name for s in W.stylists] + [t.name for t in W.therapists]
    assert len(names) == len(set(names))  # booking takes only the name
    assert len({p.name for p in W.properties}) == len(W.properties)
    assert len({p.name for p in W.pickup_locations}) == len(W.pickup_locations)
    assert Apps.world is W


_DUMP = """
import json
from toolbench.mock_services.apps.backend import Apps
from toolbench.mock_services.apps.generator import build_world, world_summary
apps = Apps()
calls = [("Restaurants", "findrestaurants", {"category": "Thai", "location": "Toronto"}),
         ("Flights", "searchroundtripflights", {"origin_airport": "Paris", "destination_airport": "Austin",
          "departure_date": "2019-03-09", "return_date": "2019-03-16"}),
         ("Events", "findevents", {"event_type": "Sports", "city": "Boston"}),
         ("Rents", "getride", {"destination": build_world().attractions[7].name, "number_of_seats": "3", "ride_type": "Luxury"}),
         ("Weather", "getweather", {"city": "Seattle", "date": "2019-03-30"})]
w = build_world()
print(json.dumps({"calls": [apps.call(*c) for c in calls], "summary": world_summary(),
                  "sample": [repr(x) for x in (w.events[::17], w.showings[::97], w.songs[::13], w.cars[::23])]},
                 sort_keys=True))
"""


def test_the_world_is_the_same_in_every_process():
    outputs = []
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _DUMP], cwd=ROOT, env=env, capture_output=True, text=True, check=True
        )
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] and len(outputs[0]) > 1000


def test_the_world_builds_quickly():
    from toolbench.mock_services.apps import generator

    start = time.perf_counter()
    generator.build_world.__wrapped__()
    assert time.perf_counter() - start < 1.0


@pytest.mark.parametrize(
    ("app", "api", "args", "why"),
    [
        ("Hotels", "searchhouse", {"where_to": "Paris", "number_of_adults": "-3"}, "number_of_adults"),
        ("Payment", "requestpayment", {"receiver": "Amara", "amount": "0.004"}, "from 0.01"),
        ("Weather", "getweather", {"city": "Paris", "date": "٢٠١٩-03-05"}, "YYYY-MM-DD"),
    ],
)
def test_edge_values_the_red_team_found_are_refused(app, api, args, why):
    with pytest.raises(AppError, match=why):
        Apps().call(app, api, args)
