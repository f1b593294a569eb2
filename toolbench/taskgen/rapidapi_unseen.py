"""The ``unseen`` split's own grammar for RapidAPI questions: other sentence frames, word order and
synonyms than the seen askers' (``mock_services/rapidapi/questions.py``, ``domains.py``), a distractor
that names another value of the same kind, and values written otherwise than the calls take them
(``9 March 2011`` for ``2011-03-09``, ``twelve miles``, ``43.69°N, 79.2°W``, ``18,611``).

A question is rephrased from its structured parts only (the calls' arguments and the facts' fields),
so its calls and answer facts are the seen question's: references stay exact. Each frame's id
starts with ``u.``; no seen record uses one.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from toolbench.mock_services.rapidapi.domains import DOMAINS, Domain, Question, _field_words
from toolbench.mock_services.rapidapi.passrule import MONTHS, NUMBER_WORDS
from toolbench.mock_services.rapidapi.world import World

OPENINGS = ("", "Okay, so. ", "Bit of a mixed bag today. ", "Hey there! ", "Sorry to bother you. ",
            "This is for a client. ")  # fmt: skip
CONNECTORS = (" On top of that, ", " Separately: ", " One more thing: ", " While you're at it, ")
MISSING_FIELDS = ("warranty terms", "registered trademark number", "insurance policy number", "board of directors")
UNITS = {"km": "kilometres", "mi": "miles", "lb": "pounds", "kg": "kilograms", "c": "degrees Celsius",
         "f": "degrees Fahrenheit", "ft": "feet", "m": "metres"}  # fmt: skip
CHANNELS = ("launch", "design", "support", "random", "ops", "hiring")


def _count(n: int) -> str:
    """A small count in words (``twelve``), a larger one in digits."""
    return NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else str(n)


def _date(iso: str, r: random.Random) -> str:
    """An ISO date written out: ``March 9, 2011``, ``9 March 2011`` or ``the 9th of March, 2011``."""
    year, month, day = (int(part) for part in iso.split("-"))
    name = MONTHS[month - 1].capitalize()
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return r.choice((f"{name} {day}, {year}", f"{day} {name} {year}", f"the {day}{suffix} of {name}, {year}"))


def _coordinates(lat: float, lon: float) -> str:
    return f"{abs(lat)}°{'N' if lat >= 0 else 'S'}, {abs(lon)}°{'E' if lon >= 0 else 'W'}"


def _other(r: random.Random, values: list[Any], value: Any) -> Any:
    """Another value of the same kind, for a distractor."""
    return r.choice([v for v in values if v != value])


def _arguments(question: Question) -> dict[str, Any]:
    """Every argument of the question's calls (later calls' win)."""
    merged: dict[str, Any] = {}
    for _, arguments in question.calls:
        merged.update(arguments)
    return merged


# ---------------------------------------------------------------------- the services' questions
Frame = Callable[[random.Random, World, dict[str, Any]], tuple[str, ...]]


def _cities(w: World) -> list[str]:
    return [row["name"] for row in w.rows("cities")]


def _chat(r: random.Random, w: World, a: dict[str, Any]) -> tuple[str, ...]:
    other = _other(r, list(CHANNELS), a["name"])
    return (
        f"our team needs a new space to talk: set up a channel called '{a['name']}', drop the message "
        f"'{a['text']}' into it, then count the messages sitting in that channel.",
        f"post '{a['text']}' to a brand-new channel, named '{a['name']}' (not '{other}', we use that one "
        "already), and report how many messages it ends up with.",
    )


def _sms(r: random.Random, w: World, a: dict[str, Any]) -> tuple[str, ...]:
    return (
        f"text {a['to']} this: '{a['message']}'. Afterwards I need the id the gateway gives the message and "
        "what sending it cost.",
        f"please fire off an SMS reading '{a['message']}' to the number {a['to']}; report the message's id and "
        "its price.",
    )


def _phone(r: random.Random, w: World, a: dict[str, Any]) -> tuple[str, ...]:
    return (
        f"someone called me from {a['number']}. In which country is that number registered?",
        f"a number showed up on my bill, {a['number']}, and it isn't one of mine. Which country is it from?",
    )


def _quote(r: random.Random, w: World, a: dict[str, Any]) -> tuple[str, ...]:
    other = _other(r, _cities(w), a["destination"])
    kilos = f"{_count(a['weight_kg'])} kilo" + ("s" if a["weight_kg"] != 1 else "")
    return (
        f"I want to send {kilos} from {a['origin']} over to {a['destination']}. What's the shipping price going to be?",
        f"shipping estimate, please: a {a['weight_kg']}-kilogram box, {a['origin']} to {a['destination']} "
        f"(my other box goes to {other}; ignore that one).",
    )


def _track(r: random.Random, w: World, a: dict[str, Any]) -> tuple[str, ...]:
    other = _other(r, [row["id"] for row in w.rows("parcels")], a["tracking_number"])
    return (
        f"package {a['tracking_number']}: has it arrived yet? Tell me the state it's in and the place it's headed.",
        f"I'm waiting on shipment {a['tracking_number']} (the one before it, {other}, already came). Current "
        "status and final destination?",
    )


def _geocode(r: random.Random, w: World, a: dict[str, Any]) -> tuple[str, ...]:
    other = _other(r, _cities(w), a["address"])
    return (
        f"I'm dropping a pin on {a['address']}: what latitude and longitude should I use?",
        f"give me the position of {a['address']} on the globe as latitude and longitude; not {other}, I have that one.",
    )


def _reverse(r: random.Random, w: World, a: dict[str, Any]) -> tuple[str, ...]:
    where = _coordinates(a["lat"], a["lon"])
    return (f"I'm standing at {where}. Which city is closest to me?", f"my GPS reads {where}; name the nearest city.")


def _distance(r: random.Random, w: World, a: dict[str, Any]) -> tuple[str, ...]:
    return (
        f"as the crow flies, what's the gap between {a['from_city']} and {a['to_city']}, in km?",
        f"{a['from_city']} and {a['to_city']}: how many kilometres separate them?",
    )


def _timezone(r: random.Random, w: World, a: dict[str, Any]) -> tuple[str, ...]:
    other = _other(r, _cities(w), a["city"])
    return (
        f"my flight lands in {a['city']} tonight (I left {other} this morning). How far ahead of or behind UTC "
        f"is {a['city']}?",
        f"time-zone check for {a['city']}: what's its offset from UTC?",
    )


def _between(r: random.Random, w: World, a: dict[str, Any]) -> tuple[str, ...]:
    start, end = _date(a["start"], r), _date(a["end"], r)
    return (
        f"count the days between {start} and {end}.",
        f"if a project kicks off on {start} and wraps up on {end}, how many days is that?",
    )


def _weekday(r: random.Random, w: World, a: dict[str, Any]) -> tuple[str, ...]:
    when = _date(a["date"], r)
    return (f"{when}: which day of the week is that?", f"my contract is dated {when}. What weekday does that fall on?")


def _units(r: random.Random, w: World, a: dict[str, Any]) -> tuple[str, ...]:
    value, source, target = _count(a["value"]), UNITS[a["from"]], UNITS[a["to"]]
    return (f"turn {value} {source} into {target}.", f"what's {value} {source} expressed in {target}?")


def _divisor(r: random.Random, w: World, a: dict[str, Any]) -> tuple[str, ...]:
    return (
        f"is {a['number']:,} prime? If not, what's the least number above one that divides it?",
        f"find the smallest factor of {a['number']:,} that is bigger than one.",
    )


def _labels(r: random.Random, w: World, a: dict[str, Any]) -> tuple[str, ...]:
    return (
        f"here's a picture: {a['image']}. What objects does it contain?",
        f"tag the photo at {a['image']}: what's in it?",
    )


def _faces(r: random.Random, w: World, a: dict[str, Any]) -> tuple[str, ...]:
    other = _other(r, [row["id"] for row in w.rows("images")], a["image"])
    return (
        f"count the faces visible in picture {a['image']}.",
        f"in image {a['image']} (not {other}), how many faces can be detected?",
    )


def _resize(r: random.Random, w: World, a: dict[str, Any]) -> tuple[str, ...]:
    return (
        f"scaling {a['image']} to a width of {a['width']}px keeps its proportions; what height does it end up with?",
        f"I'm shrinking picture {a['image']} so it is {a['width']} pixels across. How many pixels tall will it be?",
    )


SERVICE_FRAMES: dict[str, Frame] = {
    "chat.create": _chat, "messaging.send_sms": _sms, "messaging.validate_phone": _phone,
    "logistics.quote": _quote, "logistics.track": _track, "geo.geocode": _geocode, "geo.reverse": _reverse,
    "geo.distance": _distance, "geo.timezone": _timezone, "utils.between": _between, "utils.weekday": _weekday,
    "utils.units": _units, "utils.prime": _divisor, "vision.labels": _labels, "vision.faces": _faces,
    "vision.resize": _resize,
}  # fmt: skip


# ---------------------------------------------------------------------- a table's questions
def _fields(fields: tuple[str, ...]) -> str:
    return " plus ".join(f"its {_field_words(field)}" for field in fields)


def _get(r: random.Random, w: World, d: Domain, q: Question, a: dict[str, Any]) -> tuple[str, ...]:
    wanted = _fields(q.facts)
    if q.template == "get.id":
        key = a[d.id_param]
        return (
            f"pull up {d.noun} record {key} and give me {wanted}.",
            f"there's a {d.noun} filed under id {key}; I'd like {wanted}.",
        )
    label = a["query"]
    other = _other(r, sorted({str(row[d.name_field]) for row in w.rows(d.table)}), label)
    return (
        f"look up the {d.noun} '{label}' for me; I'm after {wanted}.",
        f"I keep mixing up '{label}' and '{other}'. For '{label}', a {d.noun}, what are {wanted}?",
    )


def _top(r: random.Random, w: World, d: Domain, q: Question, a: dict[str, Any]) -> tuple[str, ...]:
    by = _field_words(a["by"])
    if a["limit"] == 1:
        return (
            f"of all the {d.plural}, which one ranks first by {by}? Include the figure.",
            f"rank the {d.plural} by {by}: which is number one, and what is its value?",
        )
    return (f"name the three {d.plural} that lead on {by}.", f"top three {d.plural} by {by}, please.")


def _stats(r: random.Random, w: World, d: Domain, q: Question, a: dict[str, Any]) -> tuple[str, ...]:
    field = _field_words(a["field"])
    return (
        f"count the {d.plural} on record and tell me the mean {field} across them.",
        f"what's the tally of {d.plural}, and their average {field}?",
    )


def _children(r: random.Random, w: World, d: Domain, q: Question, a: dict[str, Any]) -> tuple[str, ...]:
    assert d.parent is not None
    noun = d.parent[2]
    key = a[f"{noun}_id"]
    return (
        f"take the {noun} with id {key}: how many {d.plural} belong to it, and which one comes first in the listing?",
        f"{noun} {key}: number of {d.plural} under it, plus the first one listed?",
    )


def _list(r: random.Random, w: World, d: Domain, q: Question, a: dict[str, Any]) -> tuple[str, ...]:
    field = next(name for name, _ in d.filters if name in a)
    value, words = a[field], _field_words(field)
    if q.template == "list.count":
        return (f"count the {d.plural} whose {words} equals {value}.", f"{d.plural} with {words} {value}: how many?")
    by = _field_words(a["sort_by"])
    return (
        f"filter the {d.plural} to those where the {words} is {value}: how many remain, and which leads on {by}?",
        f"only {d.plural} with {words} {value}, please: give me the count and the one with the top {by}.",
    )


TABLE_FRAMES: dict[str, Callable[..., tuple[str, ...]]] = {
    "get": _get, "top": _top, "stats": _stats, "children": _children, "list": _list,
}  # fmt: skip


def phrase(r: random.Random, w: World, key: str, question: Question) -> Question | None:
    """``question`` (asked by the asker of API ``key``) in this grammar, or None where it has no frame."""
    arguments = _arguments(question)
    table, _, kind = key.partition(".")
    if key in SERVICE_FRAMES:
        frames, family = SERVICE_FRAMES[key](r, w, arguments), key
    elif table in DOMAINS and question.template.split(".")[0] in TABLE_FRAMES:
        frames = TABLE_FRAMES[question.template.split(".")[0]](r, w, DOMAINS[table], question, arguments)
        family = "get.name" if question.template.startswith("get.name") else question.template
    else:
        return None
    number = r.randrange(len(frames))
    return replace(question, text=frames[number], template=f"u.{family}.{number}")


def no_such(r: random.Random, domain: Domain, fake: str, field: str) -> tuple[str, str]:
    """An unsolvable question about an id that does not exist: its words and its frame id."""
    words = _field_words(field)
    number = r.randrange(2)
    text = (
        f"look up {domain.noun} {fake} and tell me its {words}.",
        f"I have a reference, {fake}, for a {domain.noun}. What's its {words}?",
    )[number]
    return text, f"u.unsolvable.no_such_id.{number}"


def missing(r: random.Random, domain: Domain, row: dict[str, Any]) -> tuple[str, str]:
    """An unsolvable question for a field no API returns: its words and its frame id."""
    wanted, number = r.choice(MISSING_FIELDS), r.randrange(2)
    text = (
        f"for {domain.noun} {row['id']}, what's its {wanted}?",
        f"regarding the {domain.noun} with id {row['id']}: I need its {wanted}.",
    )[number]
    return text, f"u.unsolvable.missing_field.{number}"


def query(r: random.Random, parts: list[str]) -> str:
    """The questions as one request: an opening, then the questions joined, sometimes as a list (in
    words: a digit in the query would take a fact of the same value out of the answer)."""
    opening = r.choice(OPENINGS)
    if len(parts) > 1 and r.random() < 0.3:
        return opening + " ".join(f"{o}: {_cap(part)}" for o, part in zip(("First", "Second", "Third"), parts))
    return opening + _cap(parts[0]) + "".join(r.choice(CONNECTORS) + part for part in parts[1:])


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]
