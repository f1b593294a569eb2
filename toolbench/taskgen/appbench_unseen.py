"""AppBench's ``unseen`` split: instructions written with a grammar of their own, over combinations no
seen task has (``appbench_common.held_out``).

What it holds, in equal shares: SS tasks whose one call combines filters no seen task combines
(a restaurant that is both cheap and has outdoor seating, a song by an artist from a given year),
SM tasks that chain one app's calls in ways no seen task does (two attractions in the city the
first search returned, a payment request for the amount just paid), and MS and MM tasks that use
a pair of apps no seen task uses together (a flight and the weather at the destination, a train
and then a bus onwards from where it arrives).

How it reads: its clauses, the frames that join them, the openings and closings
(``fixtures/appbench/unseen_phrases.json``) and the formats of its values ("14 March", "3/14",
"half seven in the evening", "the four of us", "forty bucks") occur in no seen template, and an
instruction may carry a distractor: a sentence naming another value of the same kind, which the
plan must not use ("My sister lives in Denver, but this is about Boston."). The plan is built from
the structured values, never from the text, and is checked as the seen records are (it runs on a
fresh ``Apps()``, resolves as meant, no reference can be matched by a wrong stated value).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import date, timedelta
from functools import cache
from typing import Any

from toolbench.core.tasks import fixture_file
from toolbench.mock_services.apps.model import DEVICES, PAYMENT_METHODS, THERAPIST_TYPES, TODAY
from toolbench.mock_services.apps.plan import Ref
from toolbench.taskgen import near_duplicates, rng_for, spread
from toolbench.taskgen.appbench_common import (
    CATEGORIES,
    HELD_OUT_PAIRS,
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
from toolbench.taskgen.numbers import number_words, ordinal_words

# ---------------------------------------------------------------------------------------------------------------
# Values in formats the seen grammar never uses
# ---------------------------------------------------------------------------------------------------------------


def u_day(r: random.Random, day: date) -> str:
    """A date as the seen grammar never writes it: "14 March", "3/14", "the fourteenth of March",
    "Thursday the 14th", or relative ("five days from now", "a fortnight from today")."""
    delta = (day - TODAY).days
    options = [
        f"on {day.day} March",
        f"on 3/{day.day}",
        f"on the {ordinal_words(day.day)} of March",
        f"on {WEEKDAYS[day.weekday()]} the {ordinal(day.day)}",
    ]
    if 2 <= delta <= 10:
        options.append(f"{number_words(delta)} days from now")
    if delta == 14:
        options.append("a fortnight from today")
    return r.choice(options)


def u_bare_day(r: random.Random, day: date) -> str:
    return r.choice((f"{day.day} March", f"3/{day.day}", f"the {ordinal_words(day.day)} of March"))


def u_time(r: random.Random, time: str) -> str:
    """``19:30`` as "1930 hours", "7.30 p.m.", "half seven in the evening"; ``12:00`` as "noon"."""
    hours, minutes = map(int, time.split(":"))
    twelve = hours % 12 or 12
    half = "a.m." if hours < 12 else "p.m."
    part = "in the morning" if hours < 12 else "in the afternoon" if hours < 17 else "in the evening"
    options = [f"{hours:02d}{minutes:02d} hours", f"{twelve}.{minutes:02d} {half}"]
    if (hours, minutes) == (12, 0):
        options += ["noon", "midday"]
    elif minutes == 0:
        options.append(f"{number_words(twelve)} sharp {part}")
    elif minutes == 30:
        options.append(f"half {number_words(twelve)} {part}")
    elif minutes == 15:
        options.append(f"quarter past {number_words(twelve)} {part}")
    elif minutes == 45:
        options.append(f"quarter to {number_words(twelve % 12 + 1)} {part}")
    return r.choice(options)


def u_party(r: random.Random, n: int) -> str:
    """How many of us: "just me", "the two of us", "me and three friends", "a party of five"."""
    if n == 1:
        return r.choice(("just me", "only myself"))
    return r.choice(
        (
            f"the {number_words(n)} of us",
            f"me and {number_words(n - 1)} other{'s' if n > 2 else ''}",
            f"a party of {number_words(n)}",
        )
    )


def u_money(r: random.Random, amount: str) -> str:
    """``40`` as "forty bucks"; ``36.75`` as "thirty-six dollars and seventy-five cents"."""
    whole, _, cents = amount.partition(".")
    cents = (cents + "00")[:2] if cents else ""
    if cents and cents != "00":
        return f"{number_words(int(whole))} dollars and {number_words(int(cents))} cents"
    return r.choice((f"{number_words(int(whole))} bucks", f"{number_words(int(whole))} dollars"))


def u_city(r: random.Random, city: str) -> str:
    """A city by one of its other names where it has one (the apps know them all)."""
    aliases = next(c.aliases for c in world().cities if c.name == city)
    return r.choice(aliases) if aliases and r.random() < 0.6 else city


def yes_no(r: random.Random, flag: bool, yes: tuple[str, ...], no: tuple[str, ...]) -> str:
    return r.choice(yes if flag else no)


# ---------------------------------------------------------------------------------------------------------------
# Distractors: another value of the same kind, which the plan must not use
# ---------------------------------------------------------------------------------------------------------------


def other_city(r: random.Random, city: str) -> str:
    return r.choice([c for c in cities() if c != city])


def city_distractor(r: random.Random, city: str) -> str:
    other = other_city(r, city)
    return r.choice(
        (
            f"My sister lives in {other}, but this has nothing to do with her.",
            f"We were in {other} last spring, so that one is off the list.",
            f"A colleague keeps recommending {other}; not this time, though.",
        )
    )


def day_distractor(r: random.Random, day: date) -> str:
    other = TODAY + timedelta(days=r.choice([d for d in range(0, 25) if TODAY + timedelta(days=d) != day]))
    return r.choice(
        (
            f"I'm tied up at work on {u_bare_day(r, other)}, which is why that date won't do.",
            f"My original plan was {u_bare_day(r, other)}, but that fell through.",
        )
    )


def contact_distractor(r: random.Random, person: str) -> str:
    other = r.choice([c for c in world().contacts if c != person])
    return f"{other} already settled up with me, so leave {other} out of it."


# ---------------------------------------------------------------------------------------------------------------
# Clauses: one app's call or chain, in the unseen wording. Each returns its text and the
# distractors that fit it (the composer picks at most one or two).
# ---------------------------------------------------------------------------------------------------------------


Clause = tuple[str, list[str]]


def _city(c: Ctx) -> str:
    """The shared city as a clause names it: its name the first time, "that same city" after (the
    plan's literal is the name, so the text never gives only an alias of it)."""
    if c.city_said:
        return c.r.choice(("that same city", "the same city"))
    c.city_said = True
    return c.city


def restaurant_filters(c: Ctx, min_filters: int = 2) -> Clause:
    r = c.r
    city = _city(c)
    place = r.choice(of_city("restaurants", c.city))
    args: dict[str, str | Ref] = {"category": place.category, "location": c.city}
    wishes = []
    options = ["price", "outdoor"] + (["veggie"] if place.vegetarian else [])
    for key in r.sample(options, r.randint(min(min_filters, len(options)), len(options))):
        if key == "price":
            args["price_range"] = place.price_range
            wishes.append(f"price level '{place.price_range}'")
        elif key == "outdoor":
            args["has_seating_outdoors"] = str(place.outdoor)
            wishes.append(yes_no(r, place.outdoor, ("tables outside", "a terrace to eat on"), ("no outdoor tables",)))
        else:
            args["has_vegetarian_options"] = "True"
            wishes.append(r.choice(("meat-free dishes on the menu", "food my vegetarian friend can eat")))
    c.b.add("Restaurants", "findrestaurants", args)
    text = r.choice(
        (
            f"I'm craving {place.category} in {city}: track down a spot with {' and '.join(wishes)}",
            f"is there {place.category} food in {city} with {' plus '.join(wishes)}",
            f"dig up a {place.category} eatery around {city} that has {', '.join(wishes)}",
        )
    )
    return text, [city_distractor(r, c.city)]


def attraction_filters(c: Ctx) -> Clause:
    r = c.r
    city = _city(c)
    spot = r.choice(of_city("attractions", c.city))
    args: dict[str, str | Ref] = {"location": c.city, "category": spot.category}
    wishes = [f"of the '{spot.category}' kind"]
    for key in r.sample(("free", "kids"), r.randint(1, 2)):
        if key == "free":
            args["free_entry"] = str(spot.free_entry)
            wishes.append(yes_no(r, spot.free_entry, ("no admission fee",), ("one that charges admission",)))
        else:
            args["good_for_kids"] = str(spot.good_for_kids)
            wishes.append(yes_no(r, spot.good_for_kids, ("suitable for my little ones",), ("not aimed at children",)))
    c.b.add("Travel", "findattractions", args)
    text = r.choice(
        (
            f"scout out a sight in {city}, {', '.join(wishes)}",
            f"what is there to visit around {city} {' and '.join(wishes)}",
        )
    )
    return text, [city_distractor(r, c.city)]


def house_filters(c: Ctx) -> Clause:
    r = c.r
    city = _city(c)
    rating = r.choice(("3.5", "4.0", "4.5"))
    args: dict[str, str | Ref] = {"where_to": c.city, "has_laundry_service": "True", "rating": rating}
    if r.random() < 0.5:
        args["number_of_adults"] = str(c.people)
    c.b.add("Hotels", "searchhouse", args)
    who = f" for {u_party(r, c.people)}" if "number_of_adults" in args else ""
    text = r.choice(
        (
            f"hunt for holiday digs in {city}{who} where they do the laundry, scored {rating} or better",
            f"I'm after a rental house in {city}{who}: laundry included and no worse than {rating} stars",
        )
    )
    return text, [city_distractor(r, c.city)]


def home_filters(c: Ctx) -> Clause:
    r = c.r
    city = _city(c)
    home = r.choice(of_city("properties", c.city))
    args: dict[str, str | Ref] = {
        "area": c.city,
        "intent": home.intent,
        "number_of_beds": str(home.beds),
        "number_of_baths": str(home.baths),
        "has_garage": str(home.garage),
        "in_unit_laundry": str(home.laundry),
    }
    c.b.add("Homes", "findhomebyarea", args)
    garage = yes_no(r, home.garage, ("space to park inside", "a garage"), ("no garage needed",))
    laundry = yes_no(r, home.laundry, ("a washer in the unit",), ("no in-unit washer",))
    text = r.choice(
        (
            f"I'd {'lease' if home.intent == 'rent' else 'purchase'} a property in {city} with "
            f"{number_words(home.beds)} beds and {number_words(home.baths)} baths, {garage}, {laundry}",
            f"pull up homes {'for lease' if home.intent == 'rent' else 'for sale'} in {city}: "
            f"{home.beds} bd / {home.baths} ba, {garage} and {laundry}",
        )
    )
    return text, [city_distractor(r, c.city)]


def cinema_filters(c: Ctx) -> Clause:
    r = c.r
    city = _city(c)
    showing = r.choice(of_city("showings", c.city))
    film = world().film(showing.movie)
    assert film is not None
    args: dict[str, str | Ref] = {"location": c.city}
    if showing.show_type != "regular" and r.random() < 0.6:
        args |= {"genre": film.genre, "show_type": showing.show_type}
        what = f"a {film.genre} picture screened in {'3D' if showing.show_type == '3d' else 'IMAX'}"
    else:
        args["theater_name"] = showing.theater
        what = f"whatever is on at {showing.theater}"
    c.b.add("Movies", "findmovies", args)
    text = r.choice((f"what's screening in {city}: {what}", f"pull up {what} in {city}"))
    return text, [city_distractor(r, c.city)]


def music_two_keys(c: Ctx) -> Clause:
    r = c.r
    song = r.choice(world().songs)
    first, second = r.sample(("artist", "album", "genre", "year"), 2)
    c.b.add("Music", "lookupmusic", {first: getattr(song, first), second: getattr(song, second)})
    said = {
        "artist": f"performed by {song.artist}",
        "album": f"off the record {song.album}",
        "genre": f"in the {song.genre} style",
        "year": f"released in {song.year}",
    }
    text = r.choice(
        (f"dig up tracks {said[first]} and {said[second]}", f"which songs are {said[first]}, {said[second]}")
    )
    return text, []


def review_two_keys(c: Ctx) -> Clause:
    r = c.r
    film = r.choice(world().films)
    first, second = r.sample(("directed_by", "genre", "cast"), 2)
    value = {"directed_by": film.director, "genre": film.genre, "cast": r.choice(film.cast)}
    c.b.add("Movies", "reviewmovies", {first: value[first], second: value[second]})
    said = {
        "directed_by": f"made by director {film.director}",
        "genre": f"of the {film.genre} genre",
        "cast": f"featuring {value['cast']}",
    }
    text = r.choice(
        (
            f"what score did reviewers give the film {said[first]} and {said[second]}",
            f"pull up critic ratings for pictures {said[first]}, {said[second]}",
        )
    )
    return text, []


def train_class(c: Ctx) -> Clause:
    r = c.r
    route = r.choice(_routes("train"))
    fare = r.choice(("Flexible", "Business", "Value"))
    origin, destination = u_city(r, route.from_city), u_city(r, route.to_city)
    args: dict[str, str | Ref] = {
        "from": origin,
        "to": destination,
        "date_of_journey": c.day.isoformat(),
        "class": fare,
    }
    if c.people > 1:
        args["number_of_adults"] = str(c.people)
    c.b.add("Trains", "findtrains", args)
    who = f" for {u_party(r, c.people)}" if c.people > 1 else ""
    text = r.choice(
        (
            f"which rail connections run {origin} to {destination} {u_day(r, c.day)}{who}, fare class '{fare}'",
            f"I'm going by rail, {destination} bound from {origin}, {u_day(r, c.day)}{who}, in '{fare}' class",
        )
    )
    return text, [day_distractor(r, c.day)]


def bus_category(c: Ctx) -> Clause:
    r = c.r
    route = r.choice(_routes("bus"))
    kind = r.choice(sorted({d.category for d in route.departures}))
    origin, destination = u_city(r, route.from_city), u_city(r, route.to_city)
    args: dict[str, str | Ref] = {
        "from_city": origin,
        "to_city": destination,
        "departure_date": c.day.isoformat(),
        "category": kind,
    }
    c.b.add("Buses", "findbus", args)
    # The category's value is named as the app spells it: its docs list no values to choose from.
    stops = f"of the '{kind}' kind, " + ("no stops on the way" if kind == "direct" else "one stop on the way")
    text = r.choice(
        (
            f"is there a coach going {origin} to {destination} {u_day(r, c.day)}, {stops}",
            f"I'd take the coach from {origin} into {destination} {u_day(r, c.day)}, one {stops}",
        )
    )
    return text, [day_distractor(r, c.day)]


def showtimes_type(c: Ctx) -> Clause:
    r = c.r
    city = _city(c)
    showing = r.choice([s for s in of_city("showings", c.city) if s.show_type != "regular"])
    c.b.add(
        "Movies",
        "gettimesformovie",
        {
            "movie_name": showing.movie,
            "location": c.city,
            "show_date": c.day.isoformat(),
            "show_type": showing.show_type,
        },
    )
    kind = "3D" if showing.show_type == "3d" else "IMAX"
    text = r.choice(
        (
            f"at what hours is {showing.movie} screened in {kind} in {city} {u_day(r, c.day)}",
            f"I only watch in {kind}: when does {showing.movie} play in {city} {u_day(r, c.day)}",
        )
    )
    return text, [city_distractor(r, c.city), day_distractor(r, c.day)]


def playmedia_album(c: Ctx) -> Clause:
    r = c.r
    song = r.choice(world().songs)
    args: dict[str, str | Ref] = {"track": song.track, "album": song.album}
    room = ""
    if r.random() < 0.6:
        args["device"] = r.choice(DEVICES)
        room = f", on the {args['device'].lower()} speaker"
    c.b.add("Music", "playmedia", args)
    text = r.choice(
        (
            f"spin the {song.album} version of {song.track}{room}",
            f"I want to hear {song.track}, the cut from the album {song.album}{room}",
        )
    )
    return text, []


SS_CLAUSES: tuple[Callable[[Ctx], Clause], ...] = (
    restaurant_filters, attraction_filters, house_filters, home_filters, cinema_filters, music_two_keys,
    review_two_keys, train_class, bus_category, showtimes_type, playmedia_album,
)  # fmt: skip


# SM: one app's chains no seen task makes ------------------------------------------------------------------------


def two_attractions(c: Ctx) -> Clause:
    r, b = c.r, c.b
    city = _city(c)
    first, second = r.sample(sorted({a.category for a in of_city("attractions", c.city)}), 2)
    found = b.add("Travel", "findattractions", {"location": c.city, "category": first})
    b.add("Travel", "findattractions", {"location": b.ref(found, "location"), "category": second})
    text = r.choice(
        (
            f"I'd like a '{first}' to see in {city}, and once that turns up, a '{second}' in the very same place",
            f"two stops for my day out in {city}: first a '{first}', followed by a '{second}' in whichever city that "
            "search comes back with",
        )
    )
    return text, [city_distractor(r, c.city)]


def pay_then_request(c: Ctx) -> Clause:
    r, b = c.r, c.b
    payer, other = r.sample(world().contacts, 2)
    amount = r.choice(("24", "38", "45", "64", "90", "27.25", "112"))
    method = r.choice(tuple(PAYMENT_METHODS))
    paid = b.add("Payment", "makepayment", {"receiver": payer, "amount": amount, "payment_method": method})
    b.add("Payment", "requestpayment", {"receiver": other, "amount": b.ref(paid, "amount")})
    text = r.choice(
        (
            f"I owe {payer} {u_money(r, amount)}, so settle that out of my {method}; afterwards bill {other} "
            "for exactly what was sent",
            f"wire {u_money(r, amount)} to {payer} through my {method}, after which {other} should cover the same sum",
        )
    )
    return text, [contact_distractor(r, payer) if r.random() < 0.5 else contact_distractor(r, other)]


def request_twice(c: Ctx) -> Clause:
    r, b = c.r, c.b
    first, second = r.sample(world().contacts, 2)
    amount = r.choice(("15", "22", "35", "48", "60", "18.25"))
    asked = b.add("Payment", "requestpayment", {"receiver": first, "amount": amount})
    b.add("Payment", "requestpayment", {"receiver": second, "amount": b.ref(asked, "amount")})
    text = r.choice(
        (
            f"we split the bill, so put in a claim of {u_money(r, amount)} with {first} and the identical figure "
            f"with {second}",
            f"chase {first} for {u_money(r, amount)}; {second} owes the same, so request that too",
        )
    )
    return text, [contact_distractor(r, first)]


def album_of_artist(c: Ctx, size: int) -> Clause:
    r, b = c.r, c.b
    song = r.choice(world().songs)
    found = b.add("Music", "lookupmusic", {"artist": song.artist})
    more = b.add("Music", "lookupmusic", {"album": b.ref(found, "album")})
    if size == 2:
        text = r.choice(
            (
                f"dig up something performed by {song.artist} and list other tracks from whatever album that is on",
                f"which record is {song.artist}'s song on? I want the rest of that album too",
            )
        )
        return text, []
    device = r.choice(DEVICES)
    b.add("Music", "playmedia", {"track": b.ref(more, "track"), "device": device})
    text = (
        f"dig up a tune performed by {song.artist}, go through the album it is on, and spin a track from it "
        f"on the {device.lower()} speaker"
    )
    return text, []


def events_same_city(c: Ctx, size: int) -> Clause:
    r, b = c.r, c.b
    city = _city(c)
    kinds = sorted({e.event_type for e in of_city("events", c.city)})
    if len(kinds) < 2:
        raise Redraw("one kind of event")
    first, second = r.sample(kinds, 2)
    name = {"Music": "live music", "Sports": "a match", "Theater": "a stage show"}
    b.add("Events", "findevents", {"event_type": first, "city": c.city})
    found = b.add("Events", "findevents", {"event_type": second, "city": b.ref(0, "city")})
    if size == 2:
        text = r.choice(
            (
                f"what '{first}' events are on in {city}? Plus '{second}' ones in that same city",
                f"I'm torn between {name[first]} and {name[second]} in {city}: list '{first}' events followed by "
                f"'{second}' events in the city the first list is for",
            )
        )
        return text, [city_distractor(r, c.city)]
    b.add(
        "Events",
        "buyeventtickets",
        {
            "event_name": b.ref(found, "event_name"),
            "number_of_tickets": str(c.people),
            "date": b.ref(found, "date"),
            "city": b.ref(found, "city"),
        },
    )
    text = (
        f"list '{first}' events in {city} followed by '{second}' ones in that city, and get seats for "
        f"{u_party(r, c.people)} at the '{second}' one"
    )
    return text, [city_distractor(r, c.city)]


def reviewed_genre_showing(c: Ctx, size: int) -> Clause:
    r, b = c.r, c.b
    city = _city(c)
    film = r.choice(world().films)
    reviewed = b.add("Movies", "reviewmovies", {"directed_by": film.director})
    found = b.add("Movies", "findmovies", {"location": c.city, "genre": b.ref(reviewed, "genre")})
    if size == 2:
        text = r.choice(
            (
                f"how did critics rate {film.director}'s film? Whatever its genre, show me what of that genre is "
                f"screening in {city}",
                f"pull up reviews of the picture made by director {film.director} along with cinema listings in "
                f"{city} for the same genre",
            )
        )
        return text, [city_distractor(r, c.city)]
    b.add(
        "Movies",
        "gettimesformovie",
        {
            "movie_name": b.ref(found, "movie_name"),
            "location": b.ref(found, "location"),
            "show_date": c.day.isoformat(),
        },
    )
    text = (
        f"pull up reviews of director {film.director}'s picture, find one of the same genre screening in "
        f"{city}, and give me its hours {u_day(r, c.day)}"
    )
    return text, [city_distractor(r, c.city), day_distractor(r, c.day)]


def rent_and_buy(c: Ctx, size: int) -> Clause:
    r, b = c.r, c.b
    city = _city(c)
    homes = of_city("properties", c.city)
    rent = [h for h in homes if h.intent == "rent"]
    buy = [h for h in homes if h.intent == "buy"]
    if not rent or not buy:
        raise Redraw("no home of one intent")
    first, second = r.choice(rent), r.choice(buy)
    found = b.add(
        "Homes",
        "findhomebyarea",
        {"area": c.city, "intent": "rent", "number_of_beds": str(first.beds), "number_of_baths": str(first.baths)},
    )
    bought = b.add(
        "Homes",
        "findhomebyarea",
        {
            "area": b.ref(found, "area"),
            "intent": "buy",
            "number_of_beds": str(second.beds),
            "number_of_baths": str(second.baths),
        },
    )
    compare = (
        f"I can't decide between leasing and owning in {city}: pull up a {first.beds} bd / {first.baths} ba "
        f"to lease as well as a {second.beds} bd / {second.baths} ba for sale in that same area"
    )
    if size == 2:
        return compare, [city_distractor(r, c.city)]
    b.add("Homes", "schedulevisit", {"property_name": b.ref(bought, "property_name"), "visit_date": c.day.isoformat()})
    return f"{compare}; tour the one for sale {u_day(r, c.day)}", [city_distractor(r, c.city), day_distractor(r, c.day)]


#: SM recipes by number of calls.
SM_CLAUSES: dict[int, tuple[Callable[[Ctx], Clause], ...]] = {
    2: (
        two_attractions,
        pay_then_request,
        request_twice,
        lambda c: album_of_artist(c, 2),
        lambda c: events_same_city(c, 2),
        lambda c: reviewed_genre_showing(c, 2),
        lambda c: rent_and_buy(c, 2),
    ),
    3: (
        lambda c: album_of_artist(c, 3),
        lambda c: events_same_city(c, 3),
        lambda c: reviewed_genre_showing(c, 3),
        lambda c: rent_and_buy(c, 3),
    ),
}
SM_CALLS = {2: 0.7, 3: 0.3}


# Units of several-app tasks ---------------------------------------------------------------------------------------


def flight_to(c: Ctx, size: int) -> Clause:
    """A flight to the draw's city (a literal: flights return airports, not cities)."""
    r, b = c.r, c.b
    origin = u_city(r, other_city(r, c.city))
    args: dict[str, str | Ref] = {
        "origin_airport": origin,
        "destination_airport": c.city,
        "departure_date": c.day.isoformat(),
    }
    if c.people > 1:
        args["number_of_tickets"] = str(c.people)
    b.add("Flights", "searchonewayflight", args)
    who = f" for {u_party(r, c.people)}" if c.people > 1 else ""
    c.city_said = True
    text = r.choice(
        (
            f"I'm flying out of {origin} to {c.city} {u_day(r, c.day)}{who}, so check which planes go one way",
            f"price up a single-leg air ticket {origin} to {c.city}{who}, departing {u_day(r, c.day)}",
        )
    )
    return text, [day_distractor(r, c.day)]


def weather_at(c: Ctx, size: int) -> Clause:
    r, b = c.r, c.b
    city = _city(c)
    b.add("Weather", "getweather", {"city": c.city, "date": c.day.isoformat()})
    if size == 1:
        return r.choice(
            (
                f"will I need an umbrella in {city} {u_day(r, c.day)}",
                f"how warm or wet will {city} be {u_day(r, c.day)}",
            )
        ), []
    later = c.day + timedelta(days=r.randint(1, 4))
    if later.month != 3:
        raise Redraw("past March")
    b.add("Weather", "getweather", {"city": b.ref(len(b.calls) - 1, "city"), "date": later.isoformat()})
    return (
        f"how warm or wet will {city} be {u_day(r, c.day)}, and again for the same place {u_day(r, later)}",
        [],
    )


def house_in(c: Ctx, size: int) -> Clause:
    r, b = c.r, c.b
    city = _city(c)
    found = b.add("Hotels", "searchhouse", {"where_to": c.city, "number_of_adults": str(c.people)})
    if size == 1:
        return f"hunt for holiday digs in {city} sleeping {u_party(r, c.people)}", []
    nights = r.randint(2, 4)
    out = c.day + timedelta(days=nights)
    if out.month != 3:
        raise Redraw("past March")
    b.add(
        "Hotels",
        "bookhouse",
        {
            "where_to": b.ref(found, "where_to"),
            "number_of_adults": b.ref(found, "number_of_adults"),
            "check_in_date": c.day.isoformat(),
            "check_out_date": out.isoformat(),
        },
    )
    return (
        f"line up holiday digs in {city} sleeping {u_party(r, c.people)} and lock it in from "
        f"{u_bare_day(r, c.day)} through {u_bare_day(r, out)}",
        [],
    )


def sights_in(c: Ctx, size: int) -> Clause:
    r, b = c.r, c.b
    city = _city(c)
    kinds = sorted({a.category for a in of_city("attractions", c.city)})
    first = r.choice(kinds)
    found = b.add("Travel", "findattractions", {"location": c.city, "category": first})
    if size == 1:
        return f"scout out a '{first}' worth a visit in {city}", []
    second = r.choice([k for k in kinds if k != first])
    b.add("Travel", "findattractions", {"location": b.ref(found, "location"), "category": second})
    return f"scout out a '{first}' in {city} and after it a '{second}' in the city that search names", []


def events_in(c: Ctx, size: int) -> Clause:
    r, b = c.r, c.b
    city = _city(c)
    choices = [e for e in of_city("events", c.city) if e.tickets_left >= c.people]
    if not choices:
        raise Redraw("no event with tickets")
    event = r.choice(choices)
    found = b.add("Events", "findevents", {"event_type": event.event_type, "city": c.city})
    if size == 1:
        return f"what '{event.event_type}' events can I catch in {city}", []
    b.add(
        "Events",
        "buyeventtickets",
        {
            "event_name": b.ref(found, "event_name"),
            "number_of_tickets": str(c.people),
            "date": b.ref(found, "date"),
            "city": b.ref(found, "city"),
        },
    )
    return f"grab seats for {u_party(r, c.people)} at whichever '{event.event_type}' event {city} lists first", []


def homes_in(c: Ctx, size: int) -> Clause:
    r, b = c.r, c.b
    city = _city(c)
    home = r.choice(of_city("properties", c.city))
    found = b.add(
        "Homes",
        "findhomebyarea",
        {"area": c.city, "intent": home.intent, "number_of_beds": str(home.beds), "number_of_baths": str(home.baths)},
    )
    kind = "to lease" if home.intent == "rent" else "for sale"
    if size == 1:
        return f"pull up {home.beds} bd / {home.baths} ba properties {kind} in {city}", []
    b.add("Homes", "schedulevisit", {"property_name": b.ref(found, "property_name"), "visit_date": c.day.isoformat()})
    return f"pull up a {home.beds} bd / {home.baths} ba property {kind} in {city} and tour it {u_day(r, c.day)}", []


def songs(c: Ctx, size: int) -> Clause:
    r, b = c.r, c.b
    song = r.choice(world().songs)
    found = b.add("Music", "lookupmusic", {"genre": song.genre})
    if size == 1:
        return f"dig up some {song.genre} tunes for the evening", []
    device = r.choice(DEVICES)
    b.add("Music", "playmedia", {"track": b.ref(found, "track"), "device": device})
    return f"spin a {song.genre} tune on the {device.lower()} speaker, whichever comes up first", []


def stream(c: Ctx, size: int) -> Clause:
    r, b = c.r, c.b
    film = r.choice([f for f in world().films if not f.in_cinemas])
    found = b.add("Media", "findmovies", {"genre": film.genre})
    if size == 1:
        return f"which {film.genre} titles could I watch from the sofa", []
    b.add("Media", "playmovie", {"title": b.ref(found, "title")})
    return f"queue up a {film.genre} title on the streaming app and start it", []


def salon(c: Ctx, size: int) -> Clause:
    r, b = c.r, c.b
    city = _city(c)
    if r.random() < 0.5:
        kind = r.choice(THERAPIST_TYPES)
        found = b.add("Services", "find_therapist_provider", {"city": c.city, "type": kind})
        if size == 1:
            return f"I need to talk to a '{kind}' in {city}; who is available", []
        time = r.choice(("10:30", "13:00", "15:30"))
        b.add(
            "Services",
            "book_therapist_appointment",
            {
                "therapist_name": b.ref(found, "therapist_name"),
                "appointment_time": time,
                "appointment_date": c.day.isoformat(),
            },
        )
        return f"set me up with a '{kind}' in {city} for {u_time(r, time)} {u_day(r, c.day)}", []
    found = b.add("Services", "find_stylist_provider", {"city": c.city})
    if size == 1:
        return f"who cuts hair in {city}", []
    time = r.choice(("10:00", "11:00", "14:00", "15:30"))
    b.add(
        "Services",
        "book_stylist_appointment",
        {"stylist_name": b.ref(found, "stylist_name"), "appointment_time": time, "appointment_date": c.day.isoformat()},
    )
    return f"get my hair trimmed in {city} at {u_time(r, time)} {u_day(r, c.day)}, at the first salon listed", []


def settle(c: Ctx, size: int) -> Clause:
    r, b = c.r, c.b
    person = r.choice(world().contacts)
    amount = r.choice(("16", "28", "44", "52", "85", "19.75"))
    asked = b.add("Payment", "requestpayment", {"receiver": person, "amount": amount})
    if size == 1:
        return f"put in a claim of {u_money(r, amount)} with {person}", [contact_distractor(r, person)]
    other = r.choice([p for p in world().contacts if p != person])
    b.add("Payment", "requestpayment", {"receiver": other, "amount": b.ref(asked, "amount")})
    return f"put in a claim of {u_money(r, amount)} with {person} and the identical figure with {other}", []


def rail_then_coach(c: Ctx, size: int) -> Clause:
    """A train to a city and a bus onwards from where it arrives, on the same day (Buses + Trains)."""
    r, b = c.r, c.b
    legs = [
        (t, u)
        for t in _routes("train")
        for u in _routes("bus")
        if u.from_city == t.to_city and u.to_city != t.from_city
    ]
    rail, coach = r.choice(legs)
    origin = u_city(r, rail.from_city)
    found = b.add("Trains", "findtrains", {"from": origin, "to": rail.to_city, "date_of_journey": c.day.isoformat()})
    bus = b.add(
        "Buses",
        "findbus",
        {"from_city": b.ref(found, "to"), "to_city": coach.to_city, "departure_date": b.ref(found, "date_of_journey")},
    )
    c.city, c.city_said = coach.to_city, False
    text = (
        f"I'm going by rail from {origin} to {rail.to_city} {u_day(r, c.day)}, continuing "
        f"by coach to {coach.to_city} from wherever the train arrives, the same day"
    )
    if size == 3:
        b.add(
            "Buses",
            "buybusticket",
            {
                "from_city": b.ref(bus, "from_city"),
                "to_city": b.ref(bus, "to_city"),
                "departure_date": b.ref(bus, "departure_date"),
                "departure_time": b.ref(bus, "departure_time"),
                "num_passengers": str(c.people),
            },
        )
        text += f"; get coach seats for {u_party(r, c.people)} on the first one"
    return text, [day_distractor(r, c.day)]


#: Units of several-app tasks: app -> (call counts, clause). Flights, Trains and Buses set the city.
UNITS: dict[str, tuple[tuple[int, ...], Callable[[Ctx, int], Clause]]] = {
    "Flights": ((1,), flight_to),
    "Weather": ((1, 2), weather_at),
    "Hotels": ((1, 2), house_in),
    "Travel": ((1, 2), sights_in),
    "Events": ((1, 2), events_in),
    "Homes": ((1, 2), homes_in),
    "Music": ((1, 2), songs),
    "Media": ((1, 2), stream),
    "Services": ((1, 2), salon),
    "Payment": ((1, 2), settle),
}
#: Apps that may join a held-out pair in a task (each once): units that need only the city.
EXTRAS = ("Weather", "Hotels", "Travel", "Events", "Homes", "Music", "Media", "Services", "Payment")


def draw_several(c: Ctx, multi: bool) -> list[Clause]:
    """MS (one call per app) or MM (a chain in at least one app): a held-out pair, maybe one more app."""
    r = c.r
    pair = sorted(r.choice(HELD_OUT_PAIRS))
    apps = list(pair)
    extra = [a for a in EXTRAS if a not in apps]
    if r.random() < 0.5 and extra:
        apps.append(r.choice(extra))
    clauses: list[Clause] = []
    if "Trains" in apps:  # the one pair that is a journey: train, then bus onwards
        clauses.append(rail_then_coach(c, 3 if multi and r.random() < 0.5 else 2))
        apps = [a for a in apps if a not in ("Trains", "Buses")]
    elif "Flights" in apps:
        clauses.append(flight_to(c, 1))
        apps.remove("Flights")
    chain = r.choice(apps) if multi and apps else None
    for app in apps:
        sizes, unit = UNITS[app]
        size = max(sizes) if app == chain else 1
        clauses.append(unit(c, size))
    return clauses


# ---------------------------------------------------------------------------------------------------------------
# Joining clauses into an instruction
# ---------------------------------------------------------------------------------------------------------------


@cache
def unseen_phrases() -> dict[str, tuple[str, ...]]:
    data = json.loads(fixture_file("appbench", "unseen_phrases.json").read_text(encoding="utf-8"))
    return {kind: tuple(data[kind]) for kind in ("openings", "closings")}


def sentence(text: str) -> str:
    text = text[:1].upper() + text[1:]
    if text[-1:] in ".?!":
        return text
    asks = text.split(" ", 1)[0].lower() in QUESTION_WORDS and "?" not in text
    return text + ("?" if asks else ".")


QUESTION_WORDS = ("is", "what", "which", "how", "at", "who", "will")

#: Frames of several clauses: each names how it joins them.
FRAMES: dict[str, Callable[[random.Random, list[str]], str]] = {
    "numbered": lambda r, cs: "Here's my list: " + " ".join(f"({i}) {c}." for i, c in enumerate(cs, 1)),
    "steps": lambda r, cs: " ".join(f"Step {number_words(i)}: {c}." for i, c in enumerate(cs, 1)),
    "dashes": lambda r, cs: "A few errands — " + "; ".join(cs) + ".",
    "oh_and": lambda r, cs: " ".join([sentence(cs[0]), *(f"Oh, and {c}." for c in cs[1:])]),
    "on_top": lambda r, cs: " ".join([sentence(cs[0]), *(f"On top of that, {c}." for c in cs[1:])]),
}


def compose(r: random.Random, clauses: list[Clause]) -> tuple[str, str]:
    """The instruction and its template id (frame, and whether it opens, closes, distracts)."""
    texts = [text for text, _ in clauses]
    if len(texts) == 1:
        frame = "single"
        body = sentence(texts[0])
    else:
        frame = r.choice(sorted(FRAMES))
        body = FRAMES[frame](r, texts)
    distractors = [d for _, options in clauses for d in options]
    parts = [body]
    tags = [frame]
    if distractors and r.random() < 0.6:
        where = r.randrange(2)
        parts.insert(where, r.choice(distractors))
        tags.append("distractor")
    if r.random() < 0.5:
        parts.insert(0, r.choice(unseen_phrases()["openings"]))
        tags.append("opening")
    if r.random() < 0.4:
        parts.append(r.choice(unseen_phrases()["closings"]))
        tags.append("closing")
    return " ".join(parts), "+".join(tags)


# ---------------------------------------------------------------------------------------------------------------
# The split
# ---------------------------------------------------------------------------------------------------------------


def new_ctx(r: random.Random) -> Ctx:
    return Ctx(
        r,
        Builder(),
        city=r.choice(cities()),
        day=TODAY + timedelta(days=r.randint(1, 24)),
        people=r.choice((1, 2, 3, 4, 5)),
    )


def draw(r: random.Random, category: str) -> tuple[Ctx, list[Clause], str]:
    """One draw of a category: its context, clauses and the name of the recipe it used."""
    c = new_ctx(r)
    if category == "SS":
        clause = r.choice(SS_CLAUSES)
        return c, [clause(c)], clause.__name__
    if category == "SM":
        size = r.choices(list(SM_CALLS), weights=list(SM_CALLS.values()))[0]
        index = r.randrange(len(SM_CLAUSES[size]))
        return c, [SM_CLAUSES[size][index](c)], f"chain{size}.{index}"
    return c, draw_several(c, category == "MM"), "pair"


def draw_unseen(record_id: str, category: str, seed: tuple[object, ...], seen: set[str]) -> dict[str, Any]:
    for attempt in range(MAX_ATTEMPTS):
        r = rng_for("appbench-unseen", *seed, attempt)
        try:
            c, clauses, recipe = draw(r, category)
        except Redraw:
            continue
        ran = run(c.b.calls)
        if ran is None:
            continue
        concrete, results = ran
        calls = refer_within_apps(c.b.calls, results)
        if not shape_ok(category, calls) or not resolves_as_meant(calls) or not held_out(category, calls):
            continue
        if not references_fair(calls, concrete, c.b.said):
            continue
        prompt, frame = compose(r, clauses)
        if prompt in seen:
            continue
        seen.add(prompt)
        return record(record_id, category, prompt, calls, concrete, c.b.said, f"unseen/{category}/{recipe}/{frame}")
    raise RuntimeError(f"{record_id}: no valid unseen {category} draw in {MAX_ATTEMPTS} attempts")


def unseen_records(size: int, seed: int, fixed: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """``size`` unseen records, the four categories in equal shares (interleaved), none a near
    duplicate of a test or demo instruction (``fixed``: those splits, ``appbench.fixed_splits()``)."""
    shown = [record["prompt"] for rows in fixed.values() for record in rows]
    seen = set(shown)
    records = []
    for index, category in enumerate(spread(size, list(CATEGORIES))):
        drawn = draw_unseen(split_id("unseen", seed, index), category, ("unseen", seed, index), seen)
        again = 0
        while near_duplicates([drawn["prompt"]], shown):
            again += 1
            drawn = draw_unseen(drawn["id"], category, ("unseen", seed, index, "again", again), seen)
        records.append(drawn)
    return records
