"""A regular-expression parser fitted to the seen AppBench instructions (demo and train): what an
optimiser that read them writes. It strips the openings and closings that recur, cuts the
instruction at the joints it has seen (", then", ". After that,", ...), reads each clause with the
phrasings it has seen, and writes the plan in the env's reference format. It knows nothing of the
generator's code paths beyond what the prompts show."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import date, timedelta

from toolbench.core.tasks import fixture_file
from toolbench.mock_services.apps.plan import Call, Ref, format_call
from toolbench.mock_services.apps.registry import by_app

TODAY = date(2019, 3, 1)
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
NUMBERS = {
    w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"))
}

# Values as the seen prompts write them ------------------------------------------------------------------------
NUM = r"\d+|zero|one|two|three|four|five|six|seven|eight|nine|ten"
DAY = (
    r"today|later today|for today|tomorrow|this Saturday|the day after tomorrow|this Sunday|next \w+day|"
    r"a week from today|two weeks from today|in \d+ days|on (?:\w+day, )?March \d+\w\w|on the \d+\w\w"
)
BARE = r"(?:\w+day, )?March \d+\w\w|the \d+\w\w"
TIME = r"\d{1,2}:\d\d(?: [ap]m)?|\d{1,2} [ap]m|\d{1,2} o'clock in the \w+|half past \d{1,2} in the \w+"
NAME = r"[A-Z][\w.'&\-]*(?: (?:[A-Z0-9][\w.'&\-]*|of|the|and|de|la|on|in|at|du|vs))*"
WHERE = rf"(?: in (?P<city>{NAME})| there| at my destination)?"


def number(text: str) -> str:
    return str(NUMBERS.get(text.lower(), text))


def day(text: str) -> str:
    text = text.lower().removeprefix("on ").strip()
    fixed = {"today": 0, "later today": 0, "for today": 0, "tomorrow": 1, "this saturday": 1,
             "the day after tomorrow": 2, "this sunday": 2, "a week from today": 7, "two weeks from today": 14}  # fmt: skip
    if text in fixed:
        return (TODAY + timedelta(days=fixed[text])).isoformat()
    if text.startswith("in "):
        return (TODAY + timedelta(days=int(text.split()[1]))).isoformat()
    if text.startswith("next "):
        target = WEEKDAYS.index(text.split()[1])
        delta = next(d for d in range(3, 8) if (TODAY + timedelta(days=d)).weekday() == target)
        return (TODAY + timedelta(days=delta)).isoformat()
    return date(2019, 3, int(re.search(r"(\d+)\w\w", text).group(1))).isoformat()


def clock(text: str) -> str:
    m = re.fullmatch(r"(\d{1,2}):(\d\d)", text)
    if m:
        return f"{int(m.group(1)):02d}:{m.group(2)}"
    m = re.fullmatch(r"(\d{1,2})(?::(\d\d))? ([ap]m)", text)
    if m:
        hours = int(m.group(1)) % 12 + (12 if m.group(3) == "pm" else 0)
        return f"{hours:02d}:{m.group(2) or '00'}"
    m = re.fullmatch(r"(?:(half past) )?(\d{1,2})(?: o'clock)? in the (\w+)", text)
    hours = int(m.group(2)) % 12 + (0 if m.group(3) == "morning" else 12)
    return f"{hours:02d}:{'30' if m.group(1) else '00'}"


# The plan being read --------------------------------------------------------------------------------------------


class Reading:
    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.city: str | Ref | None = None
        self.trip: int | None = None  # the call whose destination "there" means
        self.places: list[tuple[int, str]] = []  # (call, returned name) a ride may go to
        self.prices: list[tuple[int, str]] = []  # (call, returned name) someone may pay back

    def add(self, app: str, api: str, args: dict[str, str | Ref]) -> int:
        self.calls.append(Call(app, api, by_app()[app][api].returns, args))
        return len(self.calls) - 1

    def where(self, m: re.Match) -> str | Ref:
        city = m.groupdict().get("city")
        if city:
            self.city = city
            return city
        if self.city is None:
            raise ValueError("no city")
        return self.city

    def plan(self) -> str:
        return "\n".join(format_call(call) for call in self.calls)


def refs(index: int, *names: str) -> dict[str, Ref]:
    return {name: Ref(name, index) for name in names}


Rule = tuple[re.Pattern[str], Callable[[Reading, re.Match], None]]
RULES: list[Rule] = []


def rule(*patterns: str) -> Callable[[Callable[[Reading, re.Match], None]], Callable[[Reading, re.Match], None]]:
    def register(function: Callable[[Reading, re.Match], None]) -> Callable[[Reading, re.Match], None]:
        for pattern in patterns:
            RULES.append((re.compile(pattern), function))
        return function

    return register


# Clauses ----------------------------------------------------------------------------------------------------------

A_CUISINE = r"(?:an? |a good )?(?P<cuisine>[A-Z][\w]*(?: [A-Z][\w]*)?)"
R_EXTRA = (
    r"(?P<extra>| with outdoor seating| with indoor seating only| with vegetarian options| that serves vegetarian "
    r"dishes| in the (?P<price>[\w\- ]+) price range)"
)


def restaurant_args(r: Reading, m: re.Match) -> dict[str, str | Ref]:
    args: dict[str, str | Ref] = {"category": m.group("cuisine"), "location": r.where(m)}
    extra = m.group("extra")
    if "outdoor" in extra or "indoor" in extra:
        args["has_seating_outdoors"] = str("outdoor" in extra)
    elif "vegetarian" in extra:
        args["has_vegetarian_options"] = "True"
    elif m.group("price"):
        args["price_range"] = m.group("price")
    return args


@rule(
    rf"(?:find|suggest) {A_CUISINE} restaurant{WHERE}{R_EXTRA}",
    rf"look up {A_CUISINE} place to eat{WHERE}{R_EXTRA}",
    rf"search for {A_CUISINE} food{WHERE}{R_EXTRA}",
)
def _restaurants(r: Reading, m: re.Match) -> None:
    found = r.add("Restaurants", "findrestaurants", restaurant_args(r, m))
    r.places.append((found, "address"))


@rule(
    rf"(?:find|pick) {A_CUISINE} (?:restaurant|place){WHERE}{R_EXTRA},? (?:and book a table there|and make a "
    rf"reservation|then reserve a table) for (?P<n>{NUM})(?: people| person)?(?: at (?P<time>{TIME}) (?P<day>{DAY})|"
    rf" (?P<day2>{DAY}) at (?P<time2>{TIME}))",
    rf"get us a table for (?P<n>{NUM}) at {A_CUISINE} restaurant{WHERE}{R_EXTRA} (?P<day>{DAY}) at (?P<time>{TIME})",
)
def _restaurant_booked(r: Reading, m: re.Match) -> None:
    found = r.add("Restaurants", "findrestaurants", restaurant_args(r, m))
    booked = r.add(
        "Restaurants",
        "reserverestaurant",
        refs(found, "restaurant_name", "location")
        | {
            "time": clock(m.group("time") or m.group("time2")),
            "number_of_seats": number(m.group("n")),
            "date": day(m.group("day") or m.group("day2")),
        },
    )
    r.places.append((booked, "address"))


@rule(
    rf"(?:find|look up|suggest|tell me about) (?P<what>.+?) to visit{WHERE}",
    rf"(?:find|look up|suggest|tell me about) (?P<what>something to see|an attraction with free entry|a place to visit "
    rf"that costs nothing to get in|a kid-friendly attraction|somewhere to visit that is good for children){WHERE}",
)
def _attractions(r: Reading, m: re.Match) -> None:
    what = m.group("what")
    args: dict[str, str | Ref] = {"location": r.where(m)}
    if "free" in what or "nothing" in what:
        args["free_entry"] = "True"
    elif "kid" in what or "children" in what:
        args["good_for_kids"] = "True"
    elif what != "something to see":
        args["category"] = re.sub(r"^an? ", "", what).title()
    found = r.add("Travel", "findattractions", args)
    r.places.append((found, "attraction_name"))


@rule(
    rf"(?:check the weather|tell me the forecast|find out what the weather will be like|get the weather forecast)"
    rf"{WHERE} (?P<day>{DAY})"
)
def _weather(r: Reading, m: re.Match) -> None:
    args: dict[str, str | Ref] = {"city": r.where(m)}
    if m.group("day") != "for today":
        args["date"] = day(m.group("day"))
    r.add("Weather", "getweather", args)


EVENT_KINDS = {"concert": "Music", "game": "Sports", "play": "Theater", "music": "Music", "sports": "Sports",
               "theater": "Theater"}  # fmt: skip


@rule(
    rf"find a (?P<kind>concert|game|play) happening{WHERE}",
    rf"look for (?P<kind>music|sports|theater) events{WHERE}",
    rf"see if there is a (?P<kind>concert|game|play) on{WHERE}",
)
def _events(r: Reading, m: re.Match) -> None:
    found = r.add("Events", "findevents", {"event_type": EVENT_KINDS[m.group("kind").lower()], "city": r.where(m)})
    r.places.append((found, "venue_address"))
    r.prices.append((found, "price_per_ticket"))


@rule(
    rf"find a (?P<kind>concert|game|play){WHERE} and buy (?P<n>{NUM}) tickets? for it",
    rf"look for (?P<kind>music|sports|theater) events{WHERE}, then get (?P<n>{NUM}) tickets? to the first one",
    rf"get me (?P<n>{NUM}) tickets? to a (?P<kind>concert|game|play){WHERE}",
)
def _events_bought(r: Reading, m: re.Match) -> None:
    found = r.add("Events", "findevents", {"event_type": EVENT_KINDS[m.group("kind").lower()], "city": r.where(m)})
    bought = r.add(
        "Events",
        "buyeventtickets",
        refs(found, "event_name", "date", "city") | {"number_of_tickets": number(m.group("n"))},
    )
    r.places.append((bought, "venue_address"))
    r.prices.append((found, "price_per_ticket"))


@rule(rf"(?:find|look for|search for) (?P<what>a hair stylist|a unisex salon|a salon that is not unisex){WHERE}")
def _stylists(r: Reading, m: re.Match) -> None:
    args: dict[str, str | Ref] = {"city": r.where(m)}
    if "salon" in m.group("what"):
        args["is_unisex"] = str("not" not in m.group("what"))
    found = r.add("Services", "find_stylist_provider", args)
    r.places.append((found, "street_address"))


@rule(rf"(?:find|look for) an? (?P<kind>psychologist|psychiatrist|family counselor){WHERE}")
def _therapists(r: Reading, m: re.Match) -> None:
    found = r.add("Services", "find_therapist_provider", {"city": r.where(m), "type": m.group("kind").title()})
    r.places.append((found, "address"))


MOVIE = r"(?P<what>a movie(?: in (?:3D|IMAX))?|an animated movie|an? \w+(?:-\w+)? movie)"


def movie_args(r: Reading, m: re.Match) -> dict[str, str | Ref]:
    args: dict[str, str | Ref] = {"location": r.where(m)}
    what = m.group("what")
    if what.endswith(("3D", "IMAX")):
        args["show_type"] = "3d" if what.endswith("3D") else "imax"
    elif what == "an animated movie":
        args["genre"] = "Animation"
    elif what != "a movie":
        genre = what.split(" ", 1)[1].rsplit(" ", 1)[0]
        args["genre"] = "Sci-fi" if genre == "sci-fi" else genre.title()
    return args


@rule(rf"find {MOVIE} showing{WHERE}", rf"see if {MOVIE} is playing{WHERE}", rf"look for {MOVIE} in cinemas{WHERE}")
def _cinemas(r: Reading, m: re.Match) -> None:
    found = r.add("Movies", "findmovies", movie_args(r, m))
    r.places.append((found, "street_address"))


@rule(
    rf"find {MOVIE} showing{WHERE} and tell me when it plays (?P<day>{DAY})",
    rf"look for {MOVIE} in cinemas{WHERE}, then get its showtimes (?P<day>{DAY})",
)
def _showtimes(r: Reading, m: re.Match) -> None:
    found = r.add("Movies", "findmovies", movie_args(r, m))
    times = r.add(
        "Movies", "gettimesformovie", refs(found, "movie_name", "location") | {"show_date": day(m.group("day"))}
    )
    r.places.append((times, "street_address"))


CAR = r"(?:a car|an? (?P<car>[\w\-]+) car)"
PERIOD = (
    rf"(?:from (?P<start>{BARE}) at (?P<time>{TIME}) until (?P<end>{BARE})|picked up (?P<start2>{DAY}) at "
    rf"(?P<time2>{TIME}) and returned on (?P<end2>{BARE}))"
)


def car_args(r: Reading, m: re.Match) -> dict[str, str | Ref]:
    args: dict[str, str | Ref] = {
        "city": r.where(m),
        "start_date": day(m.group("start") or m.group("start2")),
        "pickup_time": clock(m.group("time") or m.group("time2")),
        "end_date": day(m.group("end") or m.group("end2")),
    }
    if m.groupdict().get("car"):
        args["car_type"] = m.group("car")
    return args


@rule(rf"find {CAR}{WHERE} {PERIOD}", rf"see which cars are available{WHERE} {PERIOD}")
def _cars(r: Reading, m: re.Match) -> None:
    found = r.add("Rents", "getcarsavailable", car_args(r, m))
    r.places.append((found, "pickup_location"))


COVER = r"(?P<cover>with insurance|including insurance|without insurance|with no insurance)"


@rule(
    rf"find {CAR}{WHERE} {PERIOD} and reserve it {COVER}",
    rf"rent {CAR}{WHERE} {PERIOD}, {COVER}",
    rf"check for {CAR}{WHERE} {PERIOD}, then book it {COVER}",
)
def _cars_reserved(r: Reading, m: re.Match) -> None:
    found = r.add("Rents", "getcarsavailable", car_args(r, m))
    insured = str(m.group("cover") in ("with insurance", "including insurance"))
    r.add(
        "Rents",
        "reservecar",
        refs(found, "pickup_location", "start_date", "pickup_time", "end_date", "car_type")
        | {"add_insurance": insured},
    )
    r.places.append((found, "pickup_location"))


@rule(r"(?:reserve that car|book the car) (?P<cover>with insurance|without insurance)")
def _reserve_that_car(r: Reading, m: re.Match) -> None:
    found = next(i for i in range(len(r.calls) - 1, -1, -1) if r.calls[i].api == "getcarsavailable")
    r.add(
        "Rents",
        "reservecar",
        refs(found, "pickup_location", "start_date", "pickup_time", "end_date", "car_type")
        | {"add_insurance": str(m.group("cover") == "with insurance")},
    )


RIDE = r"(?P<kind>(?i:pool|regular|luxury))"


@rule(
    rf"get me a {RIDE} ride to (?P<place>.+?) for (?P<n>{NUM})",
    rf"book a {RIDE} ride with (?P<n>{NUM}) seats? to (?P<place>.+)",
    rf"call a {RIDE} cab to (?P<place>.+?) for (?P<n>{NUM}) (?:people|person)",
    rf"book a {RIDE} ride to (?P<place>.+?) with (?P<n>{NUM}) seats?",
    rf"call a {RIDE} cab for (?P<n>{NUM}) to (?P<place>.+)",
)
def _ride(r: Reading, m: re.Match) -> None:
    place = m.group("place")
    if place.startswith(("the ", "that ", "it")) and r.places:
        call, name = r.places[-1]
        destination: str | Ref = Ref(name, call)
    else:
        destination = place
    found = r.add(
        "Rents",
        "getride",
        {"destination": destination, "number_of_seats": number(m.group("n")), "ride_type": m.group("kind").title()},
    )
    r.prices.append((found, "ride_fare"))


def trip(r: Reading, m: re.Match, mode: str) -> int:
    d = day(m.group("day"))
    if mode == "train":
        args: dict[str, str | Ref] = {"from": m.group("o"), "to": m.group("d"), "date_of_journey": d}
        if m.groupdict().get("n"):
            args["number_of_adults"] = number(m.group("n"))
        found = r.add("Trains", "findtrains", args)
        r.city = Ref("to", found)
        r.prices.append((found, "total"))
    else:
        args = {"from_city": m.group("o"), "to_city": m.group("d"), "departure_date": d}
        if m.groupdict().get("n"):
            args["num_passengers"] = number(m.group("n"))
        found = r.add("Buses", "findbus", args)
        r.city = Ref("to_city", found)
        r.prices.append((found, "price"))
    return found


ROUTE = rf"from (?P<o>{NAME}) to (?P<d>{NAME})"
WHO = rf"(?: for (?P<n>{NUM}))?"


@rule(rf"find a train {ROUTE} (?P<day>{DAY}){WHO}", rf"check trains {ROUTE}{WHO} (?P<day>{DAY})")
def _train(r: Reading, m: re.Match) -> None:
    trip(r, m, "train")


@rule(rf"find a bus {ROUTE} (?P<day>{DAY}){WHO}", rf"look up buses {ROUTE}{WHO} (?P<day>{DAY})")
def _bus(r: Reading, m: re.Match) -> None:
    trip(r, m, "bus")


PROTECTION = r"(?P<cover>with|without) trip protection"


@rule(
    rf"find a train {ROUTE} (?P<day>{DAY}) and buy (?:(?P<n>{NUM}) tickets|a ticket) {PROTECTION}",
    rf"book the first train {ROUTE} (?P<day>{DAY}){WHO}, {PROTECTION}",
)
def _train_bought(r: Reading, m: re.Match) -> None:
    found = trip(r, m, "train")
    r.prices.pop()
    bought = r.add(
        "Trains",
        "gettraintickets",
        refs(found, "from", "to", "date_of_journey", "journey_start_time", "number_of_adults")
        | {"trip_protection": str(m.group("cover") == "with")},
    )
    r.prices.append((bought, "total"))


@rule(
    rf"find a bus {ROUTE} (?P<day>{DAY}){WHO} and buy the tickets",
    rf"book the first direct bus {ROUTE} (?P<day>{DAY}){WHO}",
)
def _bus_bought(r: Reading, m: re.Match) -> None:
    found = trip(r, m, "bus")
    r.prices.pop()
    bought = r.add(
        "Buses",
        "buybusticket",
        refs(found, "from_city", "to_city", "departure_date", "departure_time", "num_passengers"),
    )
    r.prices.append((bought, "price"))


@rule(
    r"ask (?P<who>\w+)(?P<q> privately)? to pay me back for (?P<what>.+)",
    r"send (?P<who>\w+) a payment request(?P<q> privately)? for the cost of (?P<what>.+)",
    r"request the price of (?P<what>.+?) from (?P<who>\w+)(?P<q> privately)?",
)
def _payback(r: Reading, m: re.Match) -> None:
    call, name = r.prices[-1]
    args: dict[str, str | Ref] = {"receiver": m.group("who"), "amount": Ref(name, call)}
    if m.group("q"):
        args["private_visibility"] = "True"
    r.add("Payment", "requestpayment", args)


QUIET = r"(?P<q> privately| as a private transaction)?"


@rule(
    rf"ask (?P<who>\w+) for \$(?P<amt>[\d.]+){QUIET}",
    rf"request \$(?P<amt>[\d.]+) from (?P<who>\w+){QUIET}",
    rf"send (?P<who>\w+) a request for \$(?P<amt>[\d.]+){QUIET}",
)
def _request(r: Reading, m: re.Match) -> None:
    args: dict[str, str | Ref] = {"receiver": m.group("who"), "amount": m.group("amt")}
    if m.group("q"):
        args["private_visibility"] = "True"
    r.add("Payment", "requestpayment", args)


@rule(
    rf"send \$(?P<amt>[\d.]+) to (?P<who>\w+) from my (?P<how>[\w ]+?){QUIET}",
    rf"pay (?P<who>\w+) \$(?P<amt>[\d.]+) with my (?P<how>[\w ]+?){QUIET}",
    rf"transfer \$(?P<amt>[\d.]+) to (?P<who>\w+) using my (?P<how>[\w ]+?){QUIET}",
)
def _pay(r: Reading, m: re.Match) -> None:
    args: dict[str, str | Ref] = {
        "receiver": m.group("who"),
        "amount": m.group("amt"),
        "payment_method": m.group("how"),
    }
    if m.group("q"):
        args["private_visibility"] = "True"
    r.add("Payment", "makepayment", args)


@rule(
    r"(?:find|look up|search for) (?:a song by (?P<artist>.+)|some (?P<genre>.+) music|a track from the album "
    r"(?P<album>.+)|a song from (?P<year>\d{4}))"
)
def _music(r: Reading, m: re.Match) -> None:
    r.add("Music", "lookupmusic", {k: v for k, v in m.groupdict().items() if v})


SONG = r"(?:a song by (?P<artist>.+?)|some (?P<genre>.+?) music|a track from the album (?P<album>.+?)|a song from (?P<year>\d{4}))"


@rule(
    rf"find {SONG} and play it in the (?P<room>.+)",
    rf"play {SONG} on the speaker in the (?P<room>.+)",
    rf"look up {SONG}, then play it in the (?P<room>.+)",
)
def _music_played(r: Reading, m: re.Match) -> None:
    keys = {k: v for k, v in m.groupdict().items() if v and k != "room"}
    found = r.add("Music", "lookupmusic", keys)
    r.add("Music", "playmedia", refs(found, "track", "artist") | {"device": m.group("room")})


@rule(r"(?:look up the critics' rating of|find) (?:a movie directed by (?P<directed_by>.+?)|a well-reviewed "
      r"(?P<genre>.+?) movie|a movie with (?P<cast>.+?) in it)(?: and how critics rated it)?")  # fmt: skip
def _critics(r: Reading, m: re.Match) -> None:
    args = {k: v for k, v in m.groupdict().items() if v}
    if "genre" in args:
        args["genre"] = "Sci-fi" if args["genre"] == "sci-fi" else args["genre"].title()
    r.add("Movies", "reviewmovies", args)


@rule(r"(?:find|look up) (?:an animated|an? (?P<genre>[\w\-]+)) (?:movie|film)(?: starring (?P<star>.+?))? (?:to "
      r"stream|I can watch at home)")  # fmt: skip
def _streaming(r: Reading, m: re.Match) -> None:
    genre = m.group("genre")
    args: dict[str, str | Ref] = {
        "genre": "Animation" if genre is None else "Sci-fi" if genre == "sci-fi" else genre.title()
    }
    if m.group("star"):
        args["starring"] = m.group("star")
    r.add("Media", "findmovies", args)


@rule(r"(?:play|start streaming) (?P<title>.+?)(?: with (?P<lang>\w+) subtitles)?")
def _play_movie(r: Reading, m: re.Match) -> None:
    args: dict[str, str | Ref] = {"title": m.group("title")}
    if m.group("lang"):
        args["subtitle_language"] = m.group("lang")
    r.add("Media", "playmovie", args)


# Instructions ------------------------------------------------------------------------------------------------------

JOINTS = re.compile(r", and then |, then |\. After that, |\. Also, |; then |\. Next, |, and (?=[a-z])")
ONE = re.compile(
    r"(?:Please |Could you |Can you |I need you to |I'd like you to |Help me |Would you |Hey, |I want to |"
    r"I want you to |First, )?(?P<body>.+?)(?:, please)?[.?]?"
)


def phrases() -> tuple[str, ...]:
    data = json.loads(fixture_file("appbench", "phrases.json").read_text(encoding="utf-8"))
    return tuple(sorted((*data["openings"], *data["closings"]), key=len, reverse=True))


_PHRASES = phrases()


def read_clause(r: Reading, text: str) -> bool:
    text = text[:1].lower() + text[1:]
    for pattern, build in RULES:
        m = pattern.fullmatch(text)
        if m:
            try:
                build(r, m)
            except (ValueError, AttributeError, StopIteration, IndexError):
                return False
            return True
    return False


def parse(prompt: str) -> str | None:
    """The plan the parser reads from a prompt, or None where a clause matches no rule."""
    text = prompt
    for phrase in _PHRASES:
        text = text.replace(phrase, "")
    text = ONE.fullmatch(text.strip()).group("body")
    r = Reading()
    if all(read_clause(r, clause.strip()) for clause in JOINTS.split(text)):
        return r.plan()
    whole = Reading()  # one clause holding its own ", then ..." (look for a place, then reserve a table)
    return whole.plan() if read_clause(whole, text) else None
