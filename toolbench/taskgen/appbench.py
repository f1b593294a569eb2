"""AppBench task sets: instructions that need API calls across the 15 mobile apps, with their gold plans.

What it generates: ``test.jsonl`` (800), ``train.jsonl`` (4,000), ``demo.jsonl`` (100) and
``unseen.jsonl`` (200, ``appbench_unseen``) records in AppBench's output shape (``used_app``,
``used_api``, ``result_arguments``, ``api_results``, ``middle_arguments``, ``user_aware_arguments``)
plus our ``id``, ``category``, ``template`` (the units a seen instruction was written from, or the
unseen grammar's recipe and frame), ``combination`` (what the plan combines, ``HELD_OUT_KEYS``),
``difficulty`` (its number of calls), ``prompt`` and ``completion`` (the gold plan, one
``App: [r1, r2 = api(#a='v', #b=r1)]`` line per call). No seen record (test, demo, train,
alignment) combines what the unseen split holds out (``held_out``: pairs of apps, one app's chains,
sets of filters); train holds no test or unseen instruction nor a near duplicate of one. The four
categories are AppBench's: SS (one app, one call), SM (one app, 2-4 dependent calls), MS (2-4 apps,
one call each) and MM (3-7 calls over 2-4 apps, chains mixed with cross-app dependencies).

How: a record is drawn from its own string-seeded random stream (``rng_for``), so every file is a
pure function of this code. A draw picks values from the apps' world (cities, restaurants, events,
showings, timetables ...), builds the calls with *units* (one app's call or chain of calls, each with
several phrasings of its own) and joins the units' clauses into one instruction. A later call takes
a value an earlier call returns as a reference (a restaurant's name from ``findrestaurants``, a
pickup location from ``getcarsavailable``, a show time from ``gettimesformovie``), as AppBench's gold
plans do; every literal the plan uses is stated in the instruction. Each draw is checked before it
is kept: the plan text parses and resolves to the intended references, every call succeeds when run
in order on a fresh ``Apps()``, no reference could be matched by a wrong value the user stated, the
category's shape holds, and the instruction is new; a draw that fails any check is redrawn.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cache
from typing import Any

from toolbench.core.tasks import fixture_file
from toolbench.mock_services.apps.backend import MAX_RIDE_SEATS
from toolbench.mock_services.apps.model import (
    CUISINES,
    DEVICES,
    PAYMENT_METHODS,
    SEATING_CLASSES,
    THERAPIST_TYPES,
    TODAY,
    TRAIN_CLASSES,
    fold,
)
from toolbench.mock_services.apps.plan import Call, Ref
from toolbench.mock_services.apps.registry import APP_DESCRIPTIONS
from toolbench.taskgen import (
    GROWN_SPLITS,
    SHIPPED_SEED,
    Files,
    aligner,
    generator,
    jsonl,
    near_duplicates,
    rng_for,
    split_maker,
)
from toolbench.taskgen.appbench_common import (
    CATEGORIES,
    MAX_ATTEMPTS,
    WEEKDAYS,
    Builder,
    Ctx,
    Redraw,
    _routes,
    cities,
    held_out,
    of_city,
    ordinal,
    record,
    refer_within_apps,
    references_fair,
    resolves_as_meant,
    run,
    shape_ok,
    split_id,
    world,
)
from toolbench.taskgen.appbench_unseen import unseen_records

SIZES = {"test": 800, "train": 4000, "demo": 100, "unseen": 200}
# Calls per task (AppBench: SM avg 2.21, MS 2.73, MM 3.64): target sizes are drawn with these weights.
SM_SIZES = {2: 0.79, 3: 0.17, 4: 0.04}
MS_SIZES = {2: 0.4, 3: 0.45, 4: 0.15}
MM_SIZES = {3: 0.56, 4: 0.29, 5: 0.1, 6: 0.04, 7: 0.01}

NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


# ---------------------------------------------------------------------------------------------------------------
# Phrasing of values
# ---------------------------------------------------------------------------------------------------------------


def bare_day(r: random.Random, day: date) -> str:
    """A date as a noun phrase ("March 14th", "the 14th", "Thursday, March 14th")."""
    return r.choice(
        (f"March {ordinal(day.day)}", f"the {ordinal(day.day)}", f"{WEEKDAYS[day.weekday()]}, March {ordinal(day.day)}")
    )


def on_day(r: random.Random, day: date) -> str:
    """A date as an adverbial, often relative to today (Friday 2019-03-01), as people say them."""
    delta = (day - TODAY).days
    options = [f"on March {ordinal(day.day)}", f"on the {ordinal(day.day)}", f"on {bare_day(r, day)}"]
    if delta == 0:
        options += ["today", "later today"]
    elif delta == 1:
        options += ["tomorrow", "this Saturday"]
    elif delta == 2:
        options += ["the day after tomorrow", "this Sunday"]
    elif 3 <= delta <= 7:
        options += [f"next {WEEKDAYS[day.weekday()]}"] * 2
    if delta == 7:
        options.append("a week from today")
    if delta == 14:
        options.append("two weeks from today")
    if 3 <= delta <= 10:
        options.append(f"in {delta} days")
    return r.choice(options)


def say_time(r: random.Random, time: str) -> str:
    """``19:30`` as "7:30 pm", "19:30" or "half past 7 in the evening"."""
    hours, minutes = map(int, time.split(":"))
    twelve = hours % 12 or 12
    half = "am" if hours < 12 else "pm"
    part = "in the morning" if hours < 12 else "in the afternoon" if hours < 17 else "in the evening"
    options = [time, f"{twelve}:{minutes:02d} {half}"]
    if minutes == 0:
        options += [f"{twelve} {half}", f"{twelve} o'clock {part}"]
    elif minutes == 30:
        options.append(f"half past {twelve} {part}")
    return r.choice(options)


def say_number(r: random.Random, n: int) -> str:
    return r.choice((str(n), NUMBER_WORDS[n])) if n < len(NUMBER_WORDS) else str(n)


def many(r: random.Random, n: int, noun: str) -> str:
    """``n`` of a noun: "one ticket", "3 tickets" ("people" for more than one person)."""
    plural = "people" if noun == "person" else f"{noun}s"
    return f"{say_number(r, n)} {noun if n == 1 else plural}"


def article(word: str) -> str:
    return f"{'an' if word[:1].upper() in 'AEIOU' else 'a'} {word}"


def say_money(amount: str) -> str:
    return f"${amount}"


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]


# ---------------------------------------------------------------------------------------------------------------
# The plan being drawn (``Builder`` and ``Ctx``, the world it draws from: ``appbench_common``)
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class Part:
    """One unit's calls, as a clause of the instruction, and what later units may use."""

    clause: str
    app: str
    target: tuple[Ref, str] | None = None  # a place a ride can go to, and how the instruction names it
    price: tuple[Ref, str] | None = None  # an amount someone could pay back, and what it is for


def pick_day(r: random.Random, low: int = 0, high: int = 21) -> date:
    return TODAY + timedelta(days=r.randint(low, high))


def say_city(r: random.Random, city: str) -> str:
    """A city as people write it: mostly its name, sometimes an alias (the apps know them all)."""
    aliases = next(c.aliases for c in world().cities if c.name == city)
    return r.choice(aliases) if aliases and r.random() < 0.15 else city


# ---------------------------------------------------------------------------------------------------------------
# Units: one app's call or chain of calls, with its clause
# ---------------------------------------------------------------------------------------------------------------


def restaurants(c: Ctx, size: int) -> Part:
    r, b = c.r, c.b
    place = r.choice(of_city("restaurants", c.city))
    args: dict[str, str | Ref] = {"category": place.category, "location": c.loc()}
    extra = ""
    roll = r.random()
    if roll < 0.2:
        args["has_seating_outdoors"] = str(place.outdoor)
        extra = " with outdoor seating" if place.outdoor else " with indoor seating only"
    elif roll < 0.35 and place.vegetarian:
        args["has_vegetarian_options"] = "True"
        extra = r.choice((" with vegetarian options", " that serves vegetarian dishes"))
    elif roll < 0.5:
        args["price_range"] = place.price_range
        extra = f" in the {place.price_range} price range"
    where = c.where()
    found = b.add("Restaurants", "findrestaurants", args)
    cuisine = place.category
    if size == 1:
        clause = r.choice(
            (
                f"find {article(cuisine)} restaurant{where}{extra}",
                f"look up a good {cuisine} place to eat{where}{extra}",
                f"search for {cuisine} food{where}{extra}",
                f"suggest {article(cuisine)} restaurant{where}{extra}",
            )
        )
        return Part(clause, "Restaurants", (b.ref(found, "address"), r.choice(("the restaurant", "that place"))))
    time = r.choice(("18:00", "18:30", "19:00", "19:30", "20:00", "20:30"))
    seats = str(c.people)
    booked = b.add(
        "Restaurants",
        "reserverestaurant",
        {
            "restaurant_name": b.ref(found, "restaurant_name"),
            "location": b.ref(found, "location"),
            "time": time,
            "number_of_seats": seats,
            "date": c.day.isoformat(),
        },
    )
    at, day, n = say_time(r, time), on_day(r, c.day), say_number(r, c.people)
    clause = r.choice(
        (
            f"find {article(cuisine)} restaurant{where}{extra} and book a table there for {n} at {at} {day}",
            f"look for {article(cuisine)} place{where}{extra}, then reserve a table for {many(r, c.people, 'person')} "
            f"{day} at {at}",
            f"get us a table for {n} at {article(cuisine)} restaurant{where}{extra} {day} at {at}",
            f"pick {article(cuisine)} restaurant{where}{extra} and make a reservation for {n} at {at} {day}",
        )
    )
    return Part(clause, "Restaurants", (b.ref(booked, "address"), r.choice(("the restaurant", "the place"))))


def attractions(c: Ctx, size: int) -> Part:
    r, b = c.r, c.b
    spot = r.choice(of_city("attractions", c.city))
    args: dict[str, str | Ref] = {"location": c.loc()}
    what = "something to see"
    roll = r.random()
    if roll < 0.35:
        args["category"] = spot.category
        what = f"{article(spot.category.lower())} to visit"
    elif roll < 0.55 and spot.free_entry:
        args["free_entry"] = "True"
        what = r.choice(("an attraction with free entry", "a place to visit that costs nothing to get in"))
    elif roll < 0.75 and spot.good_for_kids:
        args["good_for_kids"] = "True"
        what = r.choice(("a kid-friendly attraction", "somewhere to visit that is good for children"))
    where = c.where()
    found = b.add("Travel", "findattractions", args)
    clause = r.choice(
        (
            f"find {what}{where}",
            f"look up {what}{where}",
            f"suggest {what}{where}",
            f"tell me about {what}{where}",
        )
    )
    return Part(clause, "Travel", (b.ref(found, "attraction_name"), r.choice(("the attraction", "it"))))


def weather(c: Ctx, size: int) -> Part:
    r, b = c.r, c.b
    args: dict[str, str | Ref] = {"city": c.loc()}
    if c.day != TODAY or r.random() < 0.5:
        args["date"] = c.day.isoformat()
        day = on_day(r, c.day)
    else:
        day = r.choice(("today", "for today"))
    where = c.where()
    b.add("Weather", "getweather", args)
    clause = r.choice(
        (
            f"check the weather{where} {day}",
            f"tell me the forecast{where} {day}",
            f"find out what the weather will be like{where} {day}",
            f"get the weather forecast{where} {day}",
        )
    )
    return Part(clause, "Weather")


def events(c: Ctx, size: int) -> Part:
    r, b = c.r, c.b
    choices = [e for e in of_city("events", c.city) if e.tickets_left >= c.people]
    if not choices:
        raise Redraw("no event with tickets")
    event = r.choice(choices)
    kind = {"Music": "concert", "Sports": "game", "Theater": "play"}[event.event_type]
    args: dict[str, str | Ref] = {"event_type": event.event_type, "city": c.loc()}
    where = c.where()
    found = b.add("Events", "findevents", args)
    if size == 1:
        clause = r.choice(
            (
                f"find a {kind} happening{where}",
                f"look for {event.event_type.lower()} events{where}",
                f"see if there is a {kind} on{where}",
            )
        )
        return Part(
            clause,
            "Events",
            (b.ref(found, "venue_address"), "the venue"),
            (b.ref(found, "price_per_ticket"), "a ticket"),
        )
    bought = b.add(
        "Events",
        "buyeventtickets",
        {
            "event_name": b.ref(found, "event_name"),
            "number_of_tickets": str(c.people),
            "date": b.ref(found, "date"),
            "city": b.ref(found, "city"),
        },
    )
    tickets = many(r, c.people, "ticket")
    clause = r.choice(
        (
            f"find a {kind}{where} and buy {tickets} for it",
            f"look for {event.event_type.lower()} events{where}, then get {tickets} to the first one",
            f"get me {tickets} to a {kind}{where}",
        )
    )
    return Part(
        clause, "Events", (b.ref(bought, "venue_address"), "the venue"), (b.ref(found, "price_per_ticket"), "a ticket")
    )


def stylists(c: Ctx, size: int) -> Part:
    r, b = c.r, c.b
    args: dict[str, str | Ref] = {"city": c.loc()}
    what = "a hair stylist"
    if r.random() < 0.35:
        unisex = r.random() < 0.6
        args["is_unisex"] = str(unisex)
        what = "a unisex salon" if unisex else "a salon that is not unisex"
    where = c.where()
    found = b.add("Services", "find_stylist_provider", args)
    if size == 1:
        clause = r.choice((f"find {what}{where}", f"look for {what}{where}", f"search for {what}{where}"))
        return Part(clause, "Services", (b.ref(found, "street_address"), "the salon"))
    time = r.choice(("09:30", "10:00", "11:00", "12:30", "14:00", "15:30", "16:00"))
    b.add(
        "Services",
        "book_stylist_appointment",
        {"stylist_name": b.ref(found, "stylist_name"), "appointment_time": time, "appointment_date": c.day.isoformat()},
    )
    at, day = say_time(r, time), on_day(r, c.day)
    clause = r.choice(
        (
            f"find {what}{where} and book me a haircut there {day} at {at}",
            f"look for {what}{where}, then make an appointment for {at} {day}",
            f"book a hair appointment {day} at {at} with {what}{where}",
        )
    )
    return Part(clause, "Services", (b.ref(found, "street_address"), "the salon"))


def therapists(c: Ctx, size: int) -> Part:
    r, b = c.r, c.b
    kind = r.choice(THERAPIST_TYPES)
    where = c.where()
    found = b.add("Services", "find_therapist_provider", {"city": c.loc(), "type": kind})
    article = "an" if kind[0] in "AEIOU" else "a"
    if size == 1:
        clause = r.choice((f"find {article} {kind.lower()}{where}", f"look for {article} {kind.lower()}{where}"))
        return Part(clause, "Services", (b.ref(found, "address"), "the office"))
    time = r.choice(("09:00", "10:30", "11:30", "13:00", "14:30", "16:00"))
    b.add(
        "Services",
        "book_therapist_appointment",
        {
            "therapist_name": b.ref(found, "therapist_name"),
            "appointment_time": time,
            "appointment_date": c.day.isoformat(),
        },
    )
    at, day = say_time(r, time), on_day(r, c.day)
    clause = r.choice(
        (
            f"find {article} {kind.lower()}{where} and book an appointment {day} at {at}",
            f"look for {article} {kind.lower()}{where}, then schedule a session for {at} {day}",
        )
    )
    return Part(clause, "Services", (b.ref(found, "address"), "the office"))


def cinemas(c: Ctx, size: int) -> Part:
    r, b = c.r, c.b
    showing = r.choice(of_city("showings", c.city))
    film = world().film(showing.movie)
    assert film is not None
    args: dict[str, str | Ref] = {"location": c.loc()}
    what = "a movie"
    roll = r.random()
    if roll < 0.4:
        args["genre"] = film.genre
        what = f"{article(film.genre.lower())} movie" if film.genre != "Animation" else "an animated movie"
    elif roll < 0.55 and showing.show_type != "regular":
        args["show_type"] = showing.show_type
        what = f"a movie in {showing.show_type.upper() if showing.show_type == '3d' else 'IMAX'}"
    where = c.where()
    found = b.add("Movies", "findmovies", args)
    if size == 1:
        clause = r.choice(
            (f"find {what} showing{where}", f"see if {what} is playing{where}", f"look for {what} in cinemas{where}")
        )
        return Part(clause, "Movies", (b.ref(found, "street_address"), "the cinema"))
    times_args: dict[str, str | Ref] = {
        "movie_name": b.ref(found, "movie_name"),
        "location": b.ref(found, "location"),
        "show_date": c.day.isoformat(),
    }
    if r.random() < 0.5:
        times_args["theater_name"] = b.ref(found, "theater_name")
    times = b.add("Movies", "gettimesformovie", times_args)
    day = on_day(r, c.day)
    if size == 2:
        clause = r.choice(
            (
                f"find {what} showing{where} and tell me when it plays {day}",
                f"look for {what} in cinemas{where}, then get its showtimes {day}",
            )
        )
        return Part(clause, "Movies", (b.ref(times, "street_address"), "the cinema"))
    bought = b.add(
        "Movies",
        "buymovietickets",
        {
            "movie_name": b.ref(times, "movie_name"),
            "number_of_tickets": str(c.people),
            "show_date": b.ref(times, "show_date"),
            "location": b.ref(times, "location"),
            "show_time": b.ref(times, "show_time"),
            "show_type": b.ref(times, "show_type"),
        },
    )
    tickets = many(r, c.people, "ticket")
    clause = r.choice(
        (
            f"find {what} showing{where}, check its showtimes {day} and buy {tickets} for the first one",
            f"look for {what}{where}, get the times it plays {day}, and book {many(r, c.people, 'seat')}",
            f"get {tickets} for {what}{where} {day}: find the movie, its showtimes, then buy them",
        )
    )
    return Part(
        clause, "Movies", (b.ref(bought, "street_address"), "the cinema"), (b.ref(bought, "price"), "the tickets")
    )


def houses(c: Ctx, size: int) -> Part:
    r, b = c.r, c.b
    adults = c.people
    args: dict[str, str | Ref] = {"where_to": c.loc(), "number_of_adults": str(adults)}
    extra = ""
    roll = r.random()
    if roll < 0.25:
        args["has_laundry_service"] = "True"
        extra = " with laundry service"
    elif roll < 0.45:
        args["rating"] = r.choice(("3.5", "4.0"))
        extra = f" rated at least {args['rating']}"
    where = c.where()
    n = say_number(r, adults)
    found = b.add("Hotels", "searchhouse", args)
    if size == 1:
        clause = r.choice(
            (
                f"find a house for a stay{where} for {many(r, adults, 'adult')}{extra}",
                f"search for a place to stay{where}{extra} that sleeps {n}",
            )
        )
        return Part(clause, "Hotels", (b.ref(found, "address"), "the house"), (b.ref(found, "total_price"), "a night"))
    nights = r.randint(1, 5)
    check_out = c.day + timedelta(days=nights)
    if check_out.month != 3:
        raise Redraw("stay runs past March")
    booked = b.add(
        "Hotels",
        "bookhouse",
        {
            "where_to": b.ref(found, "where_to"),
            "number_of_adults": b.ref(found, "number_of_adults"),
            "check_in_date": c.day.isoformat(),
            "check_out_date": check_out.isoformat(),
        },
    )
    stay = r.choice(
        (
            f"from {bare_day(r, c.day)} to {bare_day(r, check_out)}",
            f"checking in {on_day(r, c.day)} and out on {bare_day(r, check_out)}",
        )
    )
    clause = r.choice(
        (
            f"find a house{where} for {many(r, adults, 'adult')}{extra} and book it {stay}",
            f"look for a place to stay{where}{extra} for {many(r, adults, 'person')}, then reserve it {stay}",
        )
    )
    return Part(clause, "Hotels", (b.ref(booked, "address"), "the house"), (b.ref(booked, "total_price"), "the stay"))


def homes(c: Ctx, size: int) -> Part:
    r, b = c.r, c.b
    home = r.choice(of_city("properties", c.city))
    args: dict[str, str | Ref] = {
        "area": c.loc(),
        "intent": home.intent,
        "number_of_beds": str(home.beds),
        "number_of_baths": str(home.baths),
    }
    extra = ""
    if r.random() < 0.3:
        args["has_garage"] = str(home.garage)
        extra = " with a garage" if home.garage else " without a garage"
    elif r.random() < 0.3:
        args["in_unit_laundry"] = str(home.laundry)
        extra = " with in-unit laundry" if home.laundry else " without in-unit laundry"
    where = c.where()
    found = b.add("Homes", "findhomebyarea", args)
    beds, baths = say_number(r, home.beds), say_number(r, home.baths)
    rooms = f"{beds}-bedroom, {baths}-bathroom" if r.random() < 0.5 else f"{beds} bedroom and {baths} bath"
    verb = "rent" if home.intent == "rent" else "buy"
    if size == 1:
        clause = r.choice(
            (
                f"find a {rooms} home to {verb}{where}{extra}",
                f"look for a {rooms} place{where}{extra} that I can {verb}",
            )
        )
        return Part(clause, "Homes", (b.ref(found, "address"), "the property"))
    b.add("Homes", "schedulevisit", {"property_name": b.ref(found, "property_name"), "visit_date": c.day.isoformat()})
    day = on_day(r, c.day)
    clause = r.choice(
        (
            f"find a {rooms} home to {verb}{where}{extra} and schedule a visit {day}",
            f"look for a {rooms} place to {verb}{where}{extra}, then book a viewing {day}",
        )
    )
    return Part(clause, "Homes", (b.ref(found, "address"), "the property"))


def cars(c: Ctx, size: int) -> Part:
    r, b = c.r, c.b
    days = r.randint(1, 6)
    end = c.day + timedelta(days=days)
    if end.month != 3:
        raise Redraw("rental runs past March")
    time = r.choice(("09:00", "10:00", "11:30", "13:00", "14:30", "16:00", "17:30"))
    car_type = r.choice(world().car_types()) if r.random() < 0.6 else None
    args: dict[str, str | Ref] = {
        "city": c.loc(),
        "start_date": c.day.isoformat(),
        "pickup_time": time,
        "end_date": end.isoformat(),
    }
    if car_type:
        args["car_type"] = car_type
    what = f"{article(car_type)} car" if car_type else "a car"
    where = c.where()
    found = b.add("Rents", "getcarsavailable", args)
    period = r.choice(
        (
            f"from {bare_day(r, c.day)} at {say_time(r, time)} until {bare_day(r, end)}",
            f"picked up {on_day(r, c.day)} at {say_time(r, time)} and returned on {bare_day(r, end)}",
        )
    )
    if size == 1:
        kind = f"{car_type} " if car_type else ""  # the car type a plan asks for is always named
        clause = r.choice((f"find {what}{where} {period}", f"see which {kind}cars are available{where} {period}"))
        return Part(clause, "Rents", (b.ref(found, "pickup_location"), "the rental office"))
    insurance = r.random() < 0.5
    b.add(
        "Rents",
        "reservecar",
        {
            "pickup_location": b.ref(found, "pickup_location"),
            "start_date": b.ref(found, "start_date"),
            "pickup_time": b.ref(found, "pickup_time"),
            "end_date": b.ref(found, "end_date"),
            "car_type": b.ref(found, "car_type"),
            "add_insurance": str(insurance),
        },
    )
    cover = (
        r.choice(("with insurance", "including insurance"))
        if insurance
        else r.choice(("without insurance", "with no insurance"))
    )
    clause = r.choice(
        (
            f"find {what}{where} {period} and reserve it {cover}",
            f"rent {what}{where} {period}, {cover}",
            f"check for {what}{where} {period}, then book it {cover}",
        )
    )
    return Part(clause, "Rents", (b.ref(found, "pickup_location"), "the rental office"))


#: City units: name -> (app, the call counts it can make, builder).
CITY_UNITS: dict[str, tuple[str, tuple[int, ...], Callable[[Ctx, int], Part]]] = {
    "restaurants": ("Restaurants", (1, 2), restaurants),
    "attractions": ("Travel", (1,), attractions),
    "weather": ("Weather", (1,), weather),
    "events": ("Events", (1, 2), events),
    "stylists": ("Services", (1, 2), stylists),
    "therapists": ("Services", (1, 2), therapists),
    "cinemas": ("Movies", (1, 2, 3), cinemas),
    "houses": ("Hotels", (1, 2), houses),
    "homes": ("Homes", (1, 2), homes),
    "cars": ("Rents", (1, 2), cars),
}


def travel(c: Ctx, size: int, mode: str) -> Part:
    """A train or bus trip (find, or find and buy); its destination and date become the draw's
    city and day, as references later units use."""
    r, b = c.r, c.b
    route = r.choice(_routes(mode))
    c.city, c.day = route.to_city, pick_day(r, 0, 20)
    n, day = say_number(r, c.people), on_day(r, c.day)
    origin, destination = say_city(r, route.from_city), say_city(r, route.to_city)
    if mode == "train":
        args: dict[str, str | Ref] = {"from": origin, "to": destination, "date_of_journey": c.day.isoformat()}
        if c.people > 1 or r.random() < 0.3:
            args["number_of_adults"] = str(c.people)
        found = b.add("Trains", "findtrains", args)
        c.city_ref, c.city_said = b.ref(found, "to"), True
        who = f" for {n}" if "number_of_adults" in args else ""
        if size == 1:
            clause = r.choice(
                (
                    f"find a train from {origin} to {destination} {day}{who}",
                    f"check trains from {origin} to {destination}{who} {day}",
                )
            )
            return Part(clause, "Trains", price=(b.ref(found, "total"), "the train fare"))
        protection = r.random() < 0.5
        bought = b.add(
            "Trains",
            "gettraintickets",
            {
                "from": b.ref(found, "from"),
                "to": b.ref(found, "to"),
                "date_of_journey": b.ref(found, "date_of_journey"),
                "journey_start_time": b.ref(found, "journey_start_time"),
                "number_of_adults": b.ref(found, "number_of_adults"),
                "trip_protection": str(protection),
            },
        )
        cover = "with trip protection" if protection else "without trip protection"
        people = f"{n} " if c.people > 1 else "a "
        tickets = "tickets" if c.people > 1 else "ticket"
        clause = r.choice(
            (
                f"find a train from {origin} to {destination} {day} and buy {people}{tickets} {cover}",
                f"book the first train from {origin} to {destination} {day}{who}, {cover}",
            )
        )
        return Part(clause, "Trains", price=(b.ref(bought, "total"), "the train tickets"))
    args = {"from_city": origin, "to_city": destination, "departure_date": c.day.isoformat()}
    if c.people > 1 or r.random() < 0.3:
        args["num_passengers"] = str(c.people)
    found = b.add("Buses", "findbus", args)
    c.city_ref, c.city_said = b.ref(found, "to_city"), True
    who = f" for {n}" if "num_passengers" in args else ""
    if size == 1:
        clause = r.choice(
            (
                f"find a bus from {origin} to {destination} {day}{who}",
                f"look up buses from {origin} to {destination}{who} {day}",
            )
        )
        return Part(clause, "Buses", price=(b.ref(found, "price"), "the bus fare"))
    bought = b.add(
        "Buses",
        "buybusticket",
        {
            "from_city": b.ref(found, "from_city"),
            "to_city": b.ref(found, "to_city"),
            "departure_date": b.ref(found, "departure_date"),
            "departure_time": b.ref(found, "departure_time"),
            "num_passengers": b.ref(found, "num_passengers"),
        },
    )
    clause = r.choice(
        (
            f"find a bus from {origin} to {destination} {day}{who} and buy the tickets",
            f"book the first direct bus from {origin} to {destination} {day}{who}",
        )
    )
    return Part(clause, "Buses", price=(b.ref(bought, "price"), "the bus tickets"))


def ride(c: Ctx, target: tuple[Ref, str]) -> Part:
    r = c.r
    kind = r.choice(("Pool", "Regular", "Luxury"))
    seats = min(c.people, MAX_RIDE_SEATS[kind])
    c.b.add("Rents", "getride", {"destination": target[0], "number_of_seats": str(seats), "ride_type": kind})
    n, place = say_number(r, seats), target[1]
    clause = r.choice(
        (
            f"get me a {kind} ride to {place} for {n}",
            f"book a {kind.lower()} ride with {n} seat{'s' if seats > 1 else ''} to {place}",
            f"call a {kind} cab to {place} for {n} {'people' if seats > 1 else 'person'}",
        )
    )
    return Part(clause, "Rents", price=(c.b.ref(len(c.b.calls) - 1, "ride_fare"), "the ride"))


def payback(c: Ctx, price: tuple[Ref, str]) -> Part:
    r = c.r
    who = r.choice(world().contacts)
    args: dict[str, str | Ref] = {"receiver": who, "amount": price[0]}
    private = r.random() < 0.25
    if private:
        args["private_visibility"] = "True"
    c.b.add("Payment", "requestpayment", args)
    quietly = " privately" if private else ""
    clause = r.choice(
        (
            f"ask {who}{quietly} to pay me back for {price[1]}",
            f"send {who} a payment request{quietly} for the cost of {price[1]}",
            f"request the price of {price[1]} from {who}{quietly}",
        )
    )
    return Part(clause, "Payment")


# ---------------------------------------------------------------------------------------------------------------
# Units that need no city: streaming, music, critics, flights, payments
# ---------------------------------------------------------------------------------------------------------------


def streaming(c: Ctx, size: int) -> Part:
    r, b = c.r, c.b
    film = r.choice([f for f in world().films if not f.in_cinemas])
    args: dict[str, str | Ref] = {"genre": film.genre}
    starring = ""
    if r.random() < 0.4:
        args["starring"] = r.choice(film.cast)
        starring = f" starring {args['starring']}"
    genre = "an animated" if film.genre == "Animation" else f"a {film.genre.lower()}"
    found = b.add("Media", "findmovies", args)
    if size == 1:
        clause = r.choice(
            (f"find {genre} movie{starring} to stream", f"look up {genre} film{starring} I can watch at home")
        )
        return Part(clause, "Media")
    play: dict[str, str | Ref] = {"title": b.ref(found, "title")}
    subtitles = ""
    if r.random() < 0.5:
        play["subtitle_language"] = "English"
        subtitles = " with English subtitles"
    b.add("Media", "playmovie", play)
    clause = r.choice(
        (
            f"find {genre} movie{starring} and play it{subtitles}",
            f"put on {genre} film{starring}{subtitles}",
            f"look for {genre} movie{starring} to stream, then start it{subtitles}",
        )
    )
    return Part(clause, "Media")


def music(c: Ctx, size: int) -> Part:
    r, b = c.r, c.b
    song = r.choice(world().songs)
    key = r.choice(("artist", "genre", "album", "year"))
    value = getattr(song, key)
    what = {
        "artist": f"a song by {value}",
        "genre": f"some {value} music",
        "album": f"a track from the album {value}",
        "year": f"a song from {value}",
    }[key]
    found = b.add("Music", "lookupmusic", {key: value})
    if size == 1:
        return Part(r.choice((f"find {what}", f"look up {what}", f"search for {what}")), "Music")
    device = r.choice(DEVICES)
    b.add("Music", "playmedia", {"track": b.ref(found, "track"), "artist": b.ref(found, "artist"), "device": device})
    room = f"the {device.lower()}" if device != "Living room" else "the living room"
    clause = r.choice(
        (
            f"find {what} and play it in {room}",
            f"play {what} on the speaker in {room}",
            f"look up {what}, then play it in {room}",
        )
    )
    return Part(clause, "Music")


def critics(c: Ctx, size: int) -> Part:
    r, b = c.r, c.b
    film = r.choice(world().films)
    key = r.choice(("directed_by", "genre", "cast"))
    value = {"directed_by": film.director, "genre": film.genre, "cast": r.choice(film.cast)}[key]
    b.add("Movies", "reviewmovies", {key: value})
    what = {
        "directed_by": f"a movie directed by {value}",
        "genre": f"a well-reviewed {value.lower()} movie",
        "cast": f"a movie with {value} in it",
    }[key]
    clause = r.choice((f"look up the critics' rating of {what}", f"find {what} and how critics rated it"))
    return Part(clause, "Movies")


def flights(c: Ctx, size: int) -> Part:
    r, b = c.r, c.b
    origin, destination = r.sample(cities(), 2)
    out = pick_day(r, 1, 18)
    n = r.choice((1, 1, 2, 3))
    args: dict[str, str | Ref] = {
        "origin_airport": origin,
        "destination_airport": destination,
        "departure_date": out.isoformat(),
    }
    extras = []
    if n > 1:
        args["number_of_tickets"] = str(n)
        extras.append(f"for {say_number(r, n)} people")
    if r.random() < 0.3:
        args["seating_class"] = r.choice(SEATING_CLASSES[1:])
        extras.append(f"in {args['seating_class']}")
    if r.random() < 0.25:
        airlines = sorted({f.airline for f in world().flights if (f.origin, f.destination) == (origin, destination)})
        args["airlines"] = r.choice(airlines)
        extras.append(f"on {args['airlines']}")
    extra = (" " + " ".join(extras)) if extras else ""
    o, d = say_city(r, origin), say_city(r, destination)
    if r.random() < 0.5:
        back = out + timedelta(days=r.randint(2, 9))
        if back.month != 3:
            raise Redraw("return past March")
        args["return_date"] = back.isoformat()
        found = b.add("Flights", "searchroundtripflights", args)
        clause = r.choice(
            (
                f"find a round trip flight from {o} to {d}{extra}, leaving {on_day(r, out)} and coming back on "
                f"{bare_day(r, back)}",
                f"search for return flights from {o} to {d}{extra} departing {bare_day(r, out)} and returning "
                f"{bare_day(r, back)}",
            )
        )
    else:
        found = b.add("Flights", "searchonewayflight", args)
        clause = r.choice(
            (
                f"find a one-way flight from {o} to {d} {on_day(r, out)}{extra}",
                f"search for flights from {o} to {d}{extra} {on_day(r, out)}",
                f"look up a one-way ticket from {o} to {d}{extra} leaving {bare_day(r, out)}",
            )
        )
    return Part(clause, "Flights", price=(b.ref(found, "price"), "the flight"))


def payment(c: Ctx, size: int) -> Part:
    r, b = c.r, c.b
    who = r.choice(world().contacts)
    amount = r.choice(("12", "18.5", "25", "30", "42", "55", "60", "75", "80", "120", "150", "200", "36.75"))
    quietly = ""
    args: dict[str, str | Ref] = {"receiver": who, "amount": amount}
    if r.random() < 0.25:
        args["private_visibility"] = "True"
        quietly = r.choice((" privately", " as a private transaction"))
    if r.random() < 0.5:
        b.add("Payment", "requestpayment", args)
        clause = r.choice(
            (
                f"ask {who} for {say_money(amount)}{quietly}",
                f"request {say_money(amount)} from {who}{quietly}",
                f"send {who} a request for {say_money(amount)}{quietly}",
            )
        )
    else:
        method = r.choice(tuple(PAYMENT_METHODS))
        args["payment_method"] = method
        b.add("Payment", "makepayment", args)
        clause = r.choice(
            (
                f"send {say_money(amount)} to {who} from my {method}{quietly}",
                f"pay {who} {say_money(amount)} with my {method}{quietly}",
                f"transfer {say_money(amount)} to {who} using my {method}{quietly}",
            )
        )
    return Part(clause, "Payment")


FREE_UNITS: dict[str, tuple[str, tuple[int, ...], Callable[[Ctx, int], Part]]] = {
    "streaming": ("Media", (1, 2), streaming),
    "music": ("Music", (1, 2), music),
    "critics": ("Movies", (1,), critics),
    "flights": ("Flights", (1,), flights),
    "payment": ("Payment", (1,), payment),
}


# ---------------------------------------------------------------------------------------------------------------
# Single calls of the second step of a chain, with the values the user names (SS)
# ---------------------------------------------------------------------------------------------------------------


def ss_reserverestaurant(c: Ctx) -> Part:
    r = c.r
    place = r.choice(of_city("restaurants", c.city))
    time = r.choice(("12:00", "12:30", "13:00", "18:00", "18:30", "19:00", "19:30", "20:00"))
    args: dict[str, str | Ref] = {"restaurant_name": place.name, "location": c.city, "time": time}
    n = ""
    if r.random() < 0.8:
        args["number_of_seats"] = str(c.people)
        n = f" for {say_number(r, c.people)}"
    day = "today"
    if c.day != TODAY or r.random() < 0.5:
        args["date"] = c.day.isoformat()
        day = on_day(r, c.day)
    c.b.add("Restaurants", "reserverestaurant", args)
    at = say_time(r, time)
    clause = r.choice(
        (
            f"reserve a table{n} at {place.name} in {c.city} at {at} {day}",
            f"book {place.name} in {c.city}{n} {day} at {at}",
            f"make a dinner reservation{n} at {place.name}, {c.city}, {day} at {at}",
        )
    )
    return Part(clause, "Restaurants")


def ss_reservecar(c: Ctx) -> Part:
    r = c.r
    location = r.choice(of_city("pickup_locations", c.city))
    kinds = sorted({car.car_type for car in world().cars if car.location == location.name})
    kind = r.choice(kinds)
    end = c.day + timedelta(days=r.randint(1, 5))
    if end.month != 3:
        raise Redraw("rental runs past March")
    time = r.choice(("09:00", "10:30", "12:00", "14:00", "16:30"))
    insurance = r.random() < 0.5
    c.b.add(
        "Rents",
        "reservecar",
        {
            "pickup_location": location.name,
            "start_date": c.day.isoformat(),
            "pickup_time": time,
            "end_date": end.isoformat(),
            "car_type": kind,
            "add_insurance": str(insurance),
        },
    )
    cover = "with insurance" if insurance else "without insurance"
    a = "an" if kind == "SUV" else "a"
    clause = r.choice(
        (
            f"reserve {a} {kind} car {cover} at {location.name}, picking it up {on_day(r, c.day)} at "
            f"{say_time(r, time)} and returning it on {bare_day(r, end)}",
            f"rent {a} {kind} from {location.name} from {bare_day(r, c.day)} at {say_time(r, time)} to "
            f"{bare_day(r, end)}, {cover}",
        )
    )
    return Part(clause, "Rents")


def ss_getride(c: Ctx) -> Part:
    r = c.r
    w = world()
    pool = [p.name for p in of_city("restaurants", c.city)] + [a.name for a in of_city("attractions", c.city)]
    pool += [t.name for t in of_city("theaters", c.city)]
    city = next(x for x in w.cities if x.name == c.city)
    pool += [city.airport_name, city.train_station, city.bus_station]
    place = r.choice(sorted(pool))
    kind = r.choice(("Pool", "Regular", "Luxury"))
    seats = min(c.people, MAX_RIDE_SEATS[kind])
    c.b.add("Rents", "getride", {"destination": place, "number_of_seats": str(seats), "ride_type": kind})
    n = say_number(r, seats)
    clause = r.choice(
        (
            f"get me a {kind} ride to {place} for {n}",
            f"book a {kind.lower()} ride to {place} with {n} seat{'s' if seats > 1 else ''}",
            f"call a {kind} cab for {n} to {place}",
        )
    )
    return Part(clause, "Rents")


def ss_buybusticket(c: Ctx) -> Part:
    r = c.r
    route = r.choice(_routes("bus"))
    departure = r.choice(route.departures)
    args: dict[str, str | Ref] = {
        "from_city": route.from_city,
        "to_city": route.to_city,
        "departure_date": c.day.isoformat(),
        "departure_time": departure.time,
        "num_passengers": str(c.people),
    }
    bags = ""
    if r.random() < 0.3:
        args["additional_luggage"] = "True"
        bags = " with extra luggage"
    c.b.add("Buses", "buybusticket", args)
    n = say_number(r, c.people)
    clause = r.choice(
        (
            f"buy {n} bus tickets{bags} from {route.from_city} to {route.to_city} for the "
            f"{say_time(r, departure.time)} departure {on_day(r, c.day)}",
            f"book the {say_time(r, departure.time)} bus from {route.from_city} to {route.to_city} {on_day(r, c.day)} "
            f"for {n}{bags}",
        )
    )
    return Part(clause, "Buses")


def ss_gettraintickets(c: Ctx) -> Part:
    r = c.r
    route = r.choice(_routes("train"))
    departure = r.choice(route.departures)
    protection = r.random() < 0.5
    args: dict[str, str | Ref] = {
        "from": route.from_city,
        "to": route.to_city,
        "date_of_journey": c.day.isoformat(),
        "journey_start_time": departure.time,
        "number_of_adults": str(c.people),
        "trip_protection": str(protection),
    }
    fare = ""
    if r.random() < 0.3:
        args["class"] = r.choice(TRAIN_CLASSES)
        fare = f" in {args['class']} class"
    c.b.add("Trains", "gettraintickets", args)
    cover = "with trip protection" if protection else "without trip protection"
    n = say_number(r, c.people)
    clause = r.choice(
        (
            f"buy {n} train tickets{fare} from {route.from_city} to {route.to_city} for the "
            f"{say_time(r, departure.time)} train {on_day(r, c.day)}, {cover}",
            f"book the {say_time(r, departure.time)} train from {route.from_city} to {route.to_city} "
            f"{on_day(r, c.day)} for {many(r, c.people, 'adult')}{fare}, {cover}",
        )
    )
    return Part(clause, "Trains")


def ss_buyeventtickets(c: Ctx) -> Part:
    r = c.r
    event = r.choice([e for e in world().events if e.tickets_left >= 4])
    n = r.randint(1, 4)
    c.b.add(
        "Events",
        "buyeventtickets",
        {"event_name": event.name, "number_of_tickets": str(n), "date": event.date, "city": event.city},
    )
    day = on_day(r, date.fromisoformat(event.date))
    k = say_number(r, n)
    clause = r.choice(
        (
            f"buy {k} ticket{'s' if n > 1 else ''} for {event.name} in {event.city} {day}",
            f"get me {k} ticket{'s' if n > 1 else ''} to {event.name} {day} in {event.city}",
        )
    )
    return Part(clause, "Events")


def ss_findevents_on_day(c: Ctx) -> Part:
    """``findevents`` with a date: a day some event of the kind is on."""
    r = c.r
    event = r.choice([e for e in world().events if e.tickets_left > 0])
    kind = {"Music": "concerts", "Sports": "games", "Theater": "plays"}[event.event_type]
    c.b.add("Events", "findevents", {"event_type": event.event_type, "city": event.city, "date": event.date})
    day = on_day(r, date.fromisoformat(event.date))
    clause = r.choice((f"find {kind} in {event.city} {day}", f"see what {kind} are on in {event.city} {day}"))
    return Part(clause, "Events")


def ss_gettimesformovie(c: Ctx) -> Part:
    r = c.r
    showing = r.choice(of_city("showings", c.city))
    args: dict[str, str | Ref] = {"movie_name": showing.movie, "location": c.city, "show_date": c.day.isoformat()}
    at = ""
    if r.random() < 0.3:
        args["theater_name"] = showing.theater
        at = f" at {showing.theater}"
    c.b.add("Movies", "gettimesformovie", args)
    day = on_day(r, c.day)
    clause = r.choice(
        (
            f"find showtimes for {showing.movie} in {c.city}{at} {day}",
            f"tell me when {showing.movie} is playing{at} in {c.city} {day}",
        )
    )
    return Part(clause, "Movies")


def ss_buymovietickets(c: Ctx) -> Part:
    r = c.r
    showing = r.choice(of_city("showings", c.city))
    c.b.add(
        "Movies",
        "buymovietickets",
        {
            "movie_name": showing.movie,
            "number_of_tickets": str(c.people),
            "show_date": c.day.isoformat(),
            "location": c.city,
            "show_time": showing.time,
            "show_type": showing.show_type,
        },
    )
    kind = {"regular": "regular", "3d": "3D", "imax": "IMAX"}[showing.show_type]
    tickets, day, at = many(r, c.people, "ticket"), on_day(r, c.day), say_time(r, showing.time)
    clause = r.choice(
        (
            f"buy {tickets} for the {at} {kind} showing of {showing.movie} in {c.city} {day}",
            f"get {many(r, c.people, 'seat')} for {showing.movie} ({kind}) in {c.city} {day} at {at}",
        )
    )
    return Part(clause, "Movies")


def ss_bookhouse(c: Ctx) -> Part:
    r = c.r
    out = c.day + timedelta(days=r.randint(1, 6))
    if out.month != 3:
        raise Redraw("stay runs past March")
    c.b.add(
        "Hotels",
        "bookhouse",
        {
            "where_to": c.city,
            "number_of_adults": str(c.people),
            "check_in_date": c.day.isoformat(),
            "check_out_date": out.isoformat(),
        },
    )
    n = say_number(r, c.people)
    clause = r.choice(
        (
            f"book a house in {c.city} for {many(r, c.people, 'adult')} from {bare_day(r, c.day)} to "
            f"{bare_day(r, out)}",
            f"reserve a place to stay in {c.city} for {n}, checking in {on_day(r, c.day)} and leaving on "
            f"{bare_day(r, out)}",
        )
    )
    return Part(clause, "Hotels")


def ss_schedulevisit(c: Ctx) -> Part:
    r = c.r
    home = r.choice(of_city("properties", c.city))
    c.b.add("Homes", "schedulevisit", {"property_name": home.name, "visit_date": c.day.isoformat()})
    clause = r.choice(
        (
            f"schedule a visit to {home.name} {on_day(r, c.day)}",
            f"book a viewing of {home.name} {on_day(r, c.day)}",
        )
    )
    return Part(clause, "Homes")


def ss_playmovie(c: Ctx) -> Part:
    r = c.r
    film = r.choice([f for f in world().films if not f.in_cinemas])
    args: dict[str, str | Ref] = {"title": film.title}
    subtitles = ""
    if r.random() < 0.6:
        args["subtitle_language"] = r.choice(film.subtitles)
        subtitles = f" with {args['subtitle_language']} subtitles"
    c.b.add("Media", "playmovie", args)
    clause = r.choice((f"play {film.title}{subtitles}", f"start streaming {film.title}{subtitles}"))
    return Part(clause, "Media")


def ss_playmedia(c: Ctx) -> Part:
    r = c.r
    song = r.choice(world().songs)
    args: dict[str, str | Ref] = {"track": song.track}
    by = ""
    if r.random() < 0.5:
        args["artist"] = song.artist
        by = f" by {song.artist}"
    room = ""
    if r.random() < 0.6:
        args["device"] = r.choice(DEVICES)
        room = f" in the {args['device'].lower()}"
    c.b.add("Music", "playmedia", args)
    clause = r.choice((f"play {song.track}{by}{room}", f"put on the song {song.track}{by}{room}"))
    return Part(clause, "Music")


def ss_book_stylist(c: Ctx) -> Part:
    r = c.r
    stylist = r.choice(of_city("stylists", c.city))
    time = r.choice(("09:00", "10:30", "11:00", "13:30", "15:00", "16:30"))
    c.b.add(
        "Services",
        "book_stylist_appointment",
        {"stylist_name": stylist.name, "appointment_time": time, "appointment_date": c.day.isoformat()},
    )
    clause = r.choice(
        (
            f"book an appointment at {stylist.name} {on_day(r, c.day)} at {say_time(r, time)}",
            f"get me a haircut at {stylist.name} at {say_time(r, time)} {on_day(r, c.day)}",
        )
    )
    return Part(clause, "Services")


def ss_book_therapist(c: Ctx) -> Part:
    r = c.r
    therapist = r.choice(of_city("therapists", c.city))
    time = r.choice(("09:30", "10:00", "11:30", "14:00", "15:30", "17:00"))
    c.b.add(
        "Services",
        "book_therapist_appointment",
        {"therapist_name": therapist.name, "appointment_time": time, "appointment_date": c.day.isoformat()},
    )
    clause = r.choice(
        (
            f"book a session with {therapist.name} {on_day(r, c.day)} at {say_time(r, time)}",
            f"make an appointment with {therapist.name} for {say_time(r, time)} {on_day(r, c.day)}",
        )
    )
    return Part(clause, "Services")


def _single(unit: Callable[[Ctx, int], Part]) -> Callable[[Ctx], Part]:
    return lambda c: unit(c, 1)


def _travel_single(mode: str) -> Callable[[Ctx], Part]:
    return lambda c: travel(c, 1, mode)


#: SS: app -> builders of its one-call tasks (each of the 33 APIs at least once).
SS_BUILDERS: dict[str, tuple[Callable[[Ctx], Part], ...]] = {
    "Hotels": (_single(houses), ss_bookhouse),
    "Rents": (_single(cars), ss_reservecar, ss_getride),
    "Buses": (_travel_single("bus"), ss_buybusticket),
    "Events": (_single(events), ss_findevents_on_day, ss_buyeventtickets),
    "Flights": (_single(flights),),
    "Homes": (_single(homes), ss_schedulevisit),
    "Media": (_single(streaming), ss_playmovie),
    "Movies": (_single(cinemas), ss_gettimesformovie, ss_buymovietickets, _single(critics)),
    "Music": (_single(music), ss_playmedia),
    "Payment": (_single(payment),),
    "Restaurants": (_single(restaurants), ss_reserverestaurant),
    "Services": (_single(stylists), _single(therapists), ss_book_stylist, ss_book_therapist),
    "Trains": (_travel_single("train"), ss_gettraintickets),
    "Travel": (_single(attractions),),
    "Weather": (_single(weather),),
}


# ---------------------------------------------------------------------------------------------------------------
# SM: one app, one connected chain of 2-4 calls
# ---------------------------------------------------------------------------------------------------------------


def sm_car_with_ride(c: Ctx) -> list[Part]:
    """getcarsavailable, a ride to the pickup location, then reservecar (Rents only)."""
    r, b = c.r, c.b
    part = cars(c, 1)
    assert part.target is not None
    found = len(b.calls) - 1
    lift = ride(c, part.target)
    insurance = r.random() < 0.5
    b.add(
        "Rents",
        "reservecar",
        {name: b.ref(found, name) for name in ("pickup_location", "start_date", "pickup_time", "end_date", "car_type")}
        | {"add_insurance": str(insurance)},
    )
    cover = "with insurance" if insurance else "without insurance"
    reserve = Part(r.choice((f"reserve that car {cover}", f"book the car {cover}")), "Rents")
    return [part, lift, reserve]


def sm_weather_two_days(c: Ctx) -> list[Part]:
    """The forecast for a city on one day, then the same city (as returned) on another."""
    r, b = c.r, c.b
    first = weather(c, 1)
    later = c.day + timedelta(days=r.randint(1, 6))
    if later.month != 3:
        raise Redraw("past March")
    b.add("Weather", "getweather", {"city": b.ref(0, "city"), "date": later.isoformat()})
    second = Part(
        r.choice((f"check the forecast there {on_day(r, later)} too", f"check {on_day(r, later)} as well")), "Weather"
    )
    return [first, second]


def sm_restaurants_same_city(c: Ctx) -> list[Part]:
    """Two cuisines in one city: the second search reuses the city the first returned."""
    r, b = c.r, c.b
    first = restaurants(c, 1)
    other = r.choice([k for k in CUISINES if k != b.calls[0].args["category"]])
    b.add("Restaurants", "findrestaurants", {"category": other, "location": b.ref(0, "location")})
    return [
        first,
        Part(
            r.choice((f"find {article(other)} one in the same city too", f"find a {other} place there too")),
            "Restaurants",
        ),
    ]


def sm_services_pair(c: Ctx) -> list[Part]:
    """A stylist found and booked, then a therapist in the city the stylist search returned."""
    r, b = c.r, c.b
    first = stylists(c, 2)
    kind = r.choice(THERAPIST_TYPES)
    found = b.add("Services", "find_therapist_provider", {"city": b.ref(0, "city"), "type": kind})
    parts = [first]
    if r.random() < 0.5:
        time = r.choice(("16:30", "17:00", "17:30"))
        b.add(
            "Services",
            "book_therapist_appointment",
            {
                "therapist_name": b.ref(found, "therapist_name"),
                "appointment_time": time,
                "appointment_date": b.ref(1, "appointment_date"),
            },
        )
        parts.append(
            Part(
                f"find {article(kind.lower())} in the same city and book them the same day at {say_time(r, time)}",
                "Services",
            )
        )
    else:
        parts.append(Part(f"find {article(kind.lower())} in the same city", "Services"))
    return parts


def _sm_chain(unit: Callable[[Ctx, int], Part], size: int) -> Callable[[Ctx], list[Part]]:
    return lambda c: [unit(c, size)]


def _sm_travel(mode: str) -> Callable[[Ctx], list[Part]]:
    return lambda c: [travel(c, 2, mode)]


#: SM: calls per task -> (recipe, weight). The weights follow AppBench's SM mix, where most tasks
#: find and then book a car, a bus or a train (31, 28 and 25 of its 200), chains whose booking
#: takes most of its arguments from what the search returned.
SM_RECIPES: dict[int, tuple[tuple[Callable[[Ctx], list[Part]], float], ...]] = {
    2: (
        (_sm_chain(cars, 2), 31),
        (_sm_travel("bus"), 28),
        (_sm_travel("train"), 25),
        (_sm_chain(cinemas, 2), 11),
        (_sm_chain(houses, 2), 7),
        (_sm_chain(events, 2), 5),
        (_sm_chain(restaurants, 2), 5),
        (_sm_chain(music, 2), 3),
        (_sm_chain(stylists, 2), 1),
        (_sm_chain(therapists, 2), 1),
        (_sm_chain(homes, 2), 1),
        (_sm_chain(streaming, 2), 1),
        (sm_weather_two_days, 1),
        (sm_restaurants_same_city, 1),
    ),
    3: ((_sm_chain(cinemas, 3), 1), (sm_car_with_ride, 1), (sm_services_pair, 0.3)),
    4: ((sm_services_pair, 1),),
}
#: MS and MM: how often a draw starts with a trip (and, in MM, buys it), adds a ride to a place of
#: the plan, a payment for something's price, and makes a city unit its longest chain. AppBench's
#: MS tasks rarely link their apps (0.53 references a task), its MM tasks chain heavily (5.89).
COMPOSITE = {
    "MS": {"trip": 0.2, "trip_bought": 0.0, "ride": 0.25, "pay": 0.15, "longest": 0.0},
    "MM": {"trip": 0.75, "trip_bought": 0.9, "ride": 0.5, "pay": 0.3, "longest": 1.0},
}


# ---------------------------------------------------------------------------------------------------------------
# Drawing a task of each category
# ---------------------------------------------------------------------------------------------------------------


def weighted(r: random.Random, weights: dict[int, float]) -> int:
    return r.choices(list(weights), weights=list(weights.values()))[0]


def new_ctx(r: random.Random) -> Ctx:
    return Ctx(r, Builder(), city=r.choice(cities()), day=pick_day(r), people=r.choice((1, 2, 2, 2, 3, 4, 4, 5)))


def draw_ss(r: random.Random, app: str | None = None) -> tuple[Ctx, list[Part]]:
    c = new_ctx(r)
    app = app or r.choice(list(APP_DESCRIPTIONS))
    return c, [r.choice(SS_BUILDERS[app])(c)]


def draw_sm(r: random.Random, size: int) -> tuple[Ctx, list[Part]]:
    c = new_ctx(r)
    recipes = SM_RECIPES[size]
    recipe = r.choices([recipe for recipe, _ in recipes], weights=[weight for _, weight in recipes])[0]
    parts = recipe(c)
    if len(c.b.calls) != size:
        raise Redraw("recipe made another size")
    return c, parts


def draw_composite(r: random.Random, target_calls: int, multi: bool) -> tuple[Ctx, list[Part]]:
    """MS (``multi`` False: one call per app) or MM: an optional trip whose destination the later
    units use, city units (chains in MM), an optional ride to one of their places and an optional
    payment request for something's price, and, in MS, sometimes a unit that needs no city."""
    c = new_ctx(r)
    odds = COMPOSITE["MM" if multi else "MS"]
    parts: list[Part] = []
    apps: list[str] = []

    def room() -> int:
        return target_calls - len(c.b.calls)

    if r.random() < odds["trip"]:
        size = 2 if r.random() < odds["trip_bought"] and room() >= 3 else 1
        parts.append(travel(c, size, r.choice(("train", "bus"))))
        apps.append(parts[-1].app)
    ride_wanted = r.random() < odds["ride"]
    pay_wanted = r.random() < odds["pay"]
    pool = list(CITY_UNITS)
    r.shuffle(pool)
    if odds["longest"]:  # chains first: the units that can book what they find
        pool.sort(key=lambda name: max(CITY_UNITS[name][1]) == 1)
    for name in pool:
        reserve = int(ride_wanted) + int(pay_wanted)
        if room() - reserve <= 0:
            break
        app, sizes, unit = CITY_UNITS[name]
        if not multi and app in apps:
            continue
        fitting = [s for s in sizes if s <= room() - reserve and (multi or s == 1)]
        if not fitting:
            continue
        size = max(fitting) if r.random() < odds["longest"] else r.choice(fitting)
        parts.append(unit(c, size))
        apps.append(app)
        if ride_wanted and parts[-1].target is not None and (multi or "Rents" not in apps) and room() >= 1:
            parts.append(ride(c, parts[-1].target))
            apps.append("Rents")
            ride_wanted = False
            if pay_wanted and room() >= 1 and r.random() < 0.6:
                parts.append(payback(c, parts[-1].price))  # type: ignore[arg-type]
                apps.append("Payment")
                pay_wanted = False
        if len(set(apps)) >= 4 and not multi:
            break
    if pay_wanted and room() >= 1:
        priced = [p for p in parts if p.price is not None]
        if priced:
            parts.append(payback(c, r.choice(priced).price))  # type: ignore[arg-type]
            apps.append("Payment")
    free = list(FREE_UNITS.values())
    r.shuffle(free)
    for app, sizes, unit in free:
        if room() <= 0:
            break
        if app in apps or (multi and len(set(apps)) >= 4):
            continue
        fitting = [s for s in sizes if s <= room() and (multi or s == 1)]
        if fitting:
            parts.append(unit(c, r.choice(fitting)))
            apps.append(app)
    if len(c.b.calls) != target_calls:
        raise Redraw("could not fill the plan")
    return c, parts


#: Calls per task of each category with more than one, as weights.
CALLS = {"SM": SM_SIZES, "MS": MS_SIZES, "MM": MM_SIZES}
DRAWS: dict[str, Callable[[random.Random, int], tuple[Ctx, list[Part]]]] = {
    "SS": draw_ss,
    "SM": draw_sm,
    "MS": lambda r, size: draw_composite(r, size, multi=False),
    "MM": lambda r, size: draw_composite(r, size, multi=True),
}


# ---------------------------------------------------------------------------------------------------------------
# The instruction
# ---------------------------------------------------------------------------------------------------------------

_ONE = (
    "Please {}.",
    "Could you {}?",
    "Can you {}?",
    "I need you to {}.",
    "I'd like you to {}.",
    "Help me {}.",
    "{}.",
    "Would you {}, please?",
    "Hey, {}.",
    "I want to {}.",
)
_FIRST = ("Please {}", "I need you to {}", "I'd like you to {}", "Help me {}", "{}", "First, {}", "I want you to {}")
_NEXT = (", and {}", ", then {}", ". After that, {}", ". Also, {}", "; then {}", ", and then {}", ". Next, {}")


#: How often an instruction opens by setting the scene and closes with thanks, per category: with
#: them our instructions are about as long as AppBench's (words a task: SS 30.5, SM 28.3, MS 45.5,
#: MM 43.9; ``toolbench data stats AppBench``).
FRAMING = {"SS": (1.0, 0.5), "SM": (0.35, 0.35), "MS": (0.9, 0.6), "MM": (0.55, 0.5)}


@cache
def phrases() -> dict[str, tuple[str, ...]]:
    """The openings and closings instructions may carry (a data file: no phrase names a value)."""
    data = json.loads(fixture_file("appbench", "phrases.json").read_text(encoding="utf-8"))
    return {kind: tuple(data[kind]) for kind in ("openings", "closings")}


#: More ways to say a seen instruction, which only records drawn for training (train, alignment) use,
#: so that they vary more than the test tasks written before them: other frames, joints and first
#: verbs of a clause. None of them occurs in the unseen grammar (``appbench_unseen``).
MORE_ONE = (
    "I'd appreciate it if you could {}.",
    "Your task: {}.",
    "Go ahead and {}.",
    "When you get a chance, {}.",
    "Would you mind if I asked you to {}?",
)
MORE_NEXT = (", and after that {}", ". Once that's done, {}", ". Then {}", ", followed by this: {}")
MORE_STARTS = {"find a ": "locate a ", "find an ": "locate an ", "look up ": "check ", "search for ": "browse for "}


def reworded(vary: random.Random, clause: str) -> str:
    """A clause with its first verb said another way, now and then."""
    for start, other in MORE_STARTS.items():
        if clause.startswith(start) and vary.random() < 0.4:
            return other + clause[len(start) :]
    return clause


def instruction(r: random.Random, parts: list[Part], category: str, vary: random.Random | None = None) -> str:
    """The instruction of a draw's clauses; with ``vary`` (a stream of its own, so that the test
    and demo tasks read as they were written), also in the ``MORE_*`` phrasings."""
    clauses = [p.clause for p in parts]
    ones, nexts = _ONE, _NEXT
    if vary is not None:
        clauses = [reworded(vary, clause) for clause in clauses]
        if vary.random() < 0.5:
            ones, nexts = _ONE + MORE_ONE, _NEXT + MORE_NEXT
    if len(clauses) == 1:
        text = capital(r.choice(ones).format(clauses[0]))
    else:
        joints = r.sample(nexts, len(clauses) - 1)  # no joint twice ("Also, ... Also, ...")
        asking = all(". " not in joint for joint in joints) and r.random() < 0.3
        text = capital(("Can you {}" if asking else r.choice(_FIRST)).format(clauses[0]))
        for joint, clause in zip(joints, clauses[1:], strict=True):
            text += joint.format(clause)
        text += "?" if asking else "."
    opening, closing = FRAMING[category]
    if r.random() < opening:
        text = f"{r.choice(phrases()['openings'])} {text}"
    if r.random() < closing:
        text = f"{text} {r.choice(phrases()['closings'])}"
    return text


# ---------------------------------------------------------------------------------------------------------------
# The records and the splits (the world, the plan being drawn, the checks and the record: ``appbench_common``)
# ---------------------------------------------------------------------------------------------------------------

#: The record key naming what a task combines: ``App.api(arg,...)`` for one call (SS), ``App:api>api``
#: for one app's chain (SM), ``AppA+AppB`` (sorted) for several apps (MS, MM).
HELD_OUT_KEYS = ("combination",)
HAS_DIFFICULTY = True  # a record's difficulty: its number of calls
#: Arguments whose literal the instruction must name word for word (a record that does not is redrawn).
WORD_FOR_WORD = ("car_type",)


def states_its_values(prompt: str, calls: list[Call]) -> bool:
    text = fold(prompt)
    return all(
        fold(value) in text
        for call in calls
        for name, value in call.args.items()
        if name in WORD_FOR_WORD and not isinstance(value, Ref)
    )


def draw_record(
    record_id: str,
    category: str,
    seed: tuple[object, ...],
    seen: set[str],
    app: str | None = None,
    avoid: frozenset[str] = frozenset(),
    strict: bool = True,
) -> dict[str, Any]:
    """One checked record; draws again (a new stream per attempt) until every check passes. Its
    instruction is not in ``seen`` and its gold plan not in ``avoid``; with ``strict`` (records drawn
    for training), it states every ``WORD_FOR_WORD`` value and may use the ``MORE_*`` phrasings."""
    # The calls a task has are drawn once, before its attempts: redrawing them with the content would
    # favour the sizes whose draws fail less (the shorter ones).
    size = weighted(rng_for("appbench", *seed, "calls"), CALLS[category]) if category in CALLS else 1
    for attempt in range(MAX_ATTEMPTS):
        r = rng_for("appbench", *seed, attempt)
        try:
            c, parts = draw_ss(r, app) if category == "SS" else DRAWS[category](r, size)
        except Redraw:
            continue
        ran = run(c.b.calls)
        if ran is None:
            continue
        concrete, results = ran
        calls = refer_within_apps(c.b.calls, results)
        if not shape_ok(category, calls) or not resolves_as_meant(calls):
            continue
        if not references_fair(calls, concrete, c.b.said) or held_out(category, calls):
            continue
        prompt = instruction(r, parts, category, rng_for("appbench", *seed, attempt, "vary") if strict else None)
        if prompt in seen or (strict and not states_its_values(prompt, calls)):
            continue
        drawn = record(record_id, category, prompt, calls, concrete, c.b.said)
        if drawn["completion"][0] in avoid:
            continue
        seen.add(prompt)
        return drawn
    raise RuntimeError(f"{record_id}: no valid {category} draw in {MAX_ATTEMPTS} attempts")


def split_records(split: str, seen: set[str], avoid: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """A split, its categories in equal shares and interleaved (SS, SM, MS, MM, SS, ...). The demo
    split's SS tasks go round the apps, and its first SM-MM tasks are checked to cover them all.
    No gold plan is in ``avoid``."""
    total = SIZES[split]
    records = []
    apps = list(APP_DESCRIPTIONS)
    for index in range(total):
        category = CATEGORIES[index % 4]
        app = apps[(index // 4) % len(apps)] if split == "demo" and category == "SS" else None
        records.append(
            draw_record(f"appbench-{split}-{index:04d}", category, (split, index), seen, app, avoid, strict=False)
        )
    return records


@cache
def fixed_splits() -> dict[str, list[dict[str, Any]]]:
    """The test and demo splits (the papers' setting, drawn once). No demo task has a test task's gold
    plan: a plan shown would be that task's answer, whatever its wording."""
    seen: set[str] = set()
    test = split_records("test", seen)
    answers = frozenset(record["completion"][0] for record in test)
    return {"test": test, "demo": split_records("demo", seen, answers)}


@cache
def shipped_unseen() -> tuple[dict[str, Any], ...]:
    return tuple(unseen_records(SIZES["unseen"], SHIPPED_SEED, fixed_splits()))


def train_records(size: int, seed: int) -> list[dict[str, Any]]:
    """``size`` records of the seen templates from the stream of ``seed``: never a test or demo
    instruction, a test task's gold plan, a held-out combination (``held_out``), nor a near duplicate
    of a test or shipped unseen instruction (such a draw is drawn again from a fresh stream)."""
    fixed = fixed_splits()
    seen = {record["prompt"] for rows in fixed.values() for record in rows}
    answers = frozenset(record["completion"][0] for record in fixed["test"])
    held = [record["prompt"] for record in (*fixed["test"], *shipped_unseen())]
    records = [
        draw_record(split_id("train", seed, index), CATEGORIES[index % 4], ("train", seed, index), seen, avoid=answers)
        for index in range(size)
    ]
    for again in range(1, MAX_ATTEMPTS):
        flagged = near_duplicates([record["prompt"] for record in records], held)
        if not flagged:
            return records
        for index in sorted(flagged):
            old = records[index]
            records[index] = draw_record(
                old["id"], old["category"], ("train", seed, index, "again", again), seen, avoid=answers
            )
    raise RuntimeError("train: near duplicates of held-out instructions keep being drawn")


@split_maker("appbench")
def make_split(split: str, size: int, seed: int) -> list[dict[str, Any]]:
    """``train`` (the seen templates) or ``unseen`` (its own grammar and held-out combinations)."""
    if split == "train":
        return train_records(size, seed)
    if split == "unseen":
        return unseen_records(size, seed, fixed_splits())
    raise ValueError(f"AppBench grows the splits {GROWN_SPLITS}, not {split!r}")


@cache
def splits() -> dict[str, list[dict[str, Any]]]:
    """The shipped splits: test and demo, train (``SIZES['train']``, more than ``SHIPPED_SIZES``) and unseen."""
    return {
        **fixed_splits(),
        "train": make_split("train", SIZES["train"], SHIPPED_SEED),
        "unseen": list(shipped_unseen()),
    }


@aligner("appbench")
def alignment_records(count: int, seed: str) -> list[dict[str, Any]]:
    """``count`` fresh records of the seen templates from another random stream, never a shipped
    instruction nor a held-out combination."""
    seen = {record["prompt"] for records in splits().values() for record in records}
    return [
        draw_record(f"appbench-align-{seed}-{index:04d}", CATEGORIES[index % 4], ("align", seed, index), seen)
        for index in range(count)
    ]


@generator("appbench")
def generate() -> Files:
    records = splits()
    for split, rows in records.items():
        assert len(rows) == SIZES[split], (split, len(rows))
        for category in CATEGORIES:
            assert sum(row["category"] == category for row in rows) == SIZES[split] // 4, (split, category)
    prompts = [row["prompt"] for rows in records.values() for row in rows]
    assert len(prompts) == len(set(prompts)), "an instruction repeats"
    demo_apps = {app for row in records["demo"] for app in row["output"]["used_app"]}
    assert demo_apps == set(APP_DESCRIPTIONS), sorted(set(APP_DESCRIPTIONS) - demo_apps)
    return {f"{split}.jsonl": jsonl(records[split]) for split in ("test", "train", "demo", "unseen")}
