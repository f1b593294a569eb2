"""The unseen grammar of Trip Booking requests: sentence frames, phrasings and value formats that
no test, demo, train or alignment task uses.

Requests are written from structured values (the program comes from those): dates without a
year ("the 3rd of March", "03/13") beside a sentence giving the year, or relative to a "today"
the prompt states ("the day after tomorrow"), stays as a number of nights, travellers and rooms
in words, places in either order, and a distractor sentence naming other cities, days or prices.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from toolbench.taskgen.numbers import number_words

MODE_WORDS = {
    "flight": ["by air", "on a plane", "flying"],
    "train": ["by rail", "on the train"],
    "bus": ["by coach", "on a bus"],
    "cruise": ["by sea", "on a cruise ship"],
}
ROOM_WORDS = {
    "King Bed": ["a king-size bed", "one big king bed"],
    "Queen Bed": ["a queen-size bed", "a queen"],
    "Double": ["a double setup", "two beds (a double room)"],
    "Luxury": ["a luxury suite setup", "the luxury tier"],
}
YEAR_NOTES = ["All dates are in 2024.", "Everything here is for 2024.", "(Year: 2024.)"]


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def day_text(rng: Any, day: dt.date) -> str:
    """``day`` without its year: "the 3rd of March", "March 3rd", "3 March" or "03/13" (MM/DD, only
    where the day cannot be read as a month)."""
    formats = [f"the {ordinal(day.day)} of {day:%B}", f"{day:%B} {ordinal(day.day)}", f"{day.day} {day:%B}"]
    if day.day > 12:
        formats.append(f"{day:%m/%d}")
    return rng.choice(formats)


def today_note(today: dt.date) -> str:
    return f"Today is {today:%A}, the {ordinal(today.day)} of {today:%B} 2024."


def relative(rng: Any, today: dt.date, day: dt.date) -> str:
    """``day`` counted from ``today`` (1-14 days ahead)."""
    ahead = (day - today).days
    said = {1: "tomorrow", 2: "the day after tomorrow", 7: "a week from today", 14: "two weeks from today"}
    return said.get(ahead) or rng.choice([f"in {number_words(ahead)} days", f"{number_words(ahead)} days from now"])


def people(rng: Any, adults: int, children: int) -> str:
    grown = rng.choice(["adult", "grown-up"])
    text = f"{number_words(adults)} {grown}" + ("s" if adults > 1 else "")
    if adults == 2 and rng.random() < 0.3:
        text = "a couple"
    if children:
        kids = rng.choice(["kid", "child"]) if children == 1 else rng.choice(["kids", "children"])
        text += rng.choice([" plus ", " with ", " and "]) + f"{number_words(children)} {kids}"
    return text


def route(rng: Any, origin: str, destination: str) -> str:
    return rng.choice(
        [
            f"starting in {origin} and ending in {destination}",
            f"out of {origin}, bound for {destination}",
            f"to {destination}, departing from {origin}",
            f"over to {destination} (we set off in {origin})",
        ]
    )


def mode_words(rng: Any, mode: str) -> str:
    return rng.choice(MODE_WORDS[mode])


def ticket_budget(rng: Any, limit: int) -> str:
    return rng.choice(
        [
            f" Seats must be no pricier than {limit} dollars apiece.",
            f" We can't spend over {number_words(limit) if limit < 100 else limit} bucks a ticket.",
            f" Cap each fare at ${limit}.",
        ]
    )


def room_extras(rng: Any, rooms: int, room_type: str | None, limit: int | None) -> list[str]:
    extras = [f"{number_words(rooms)} rooms"] if rooms > 1 else []
    if room_type:
        extras.append(rng.choice(ROOM_WORDS[room_type]))
    if limit:
        extras.append(
            rng.choice([f"no more than {limit} dollars a night", f"${limit}/night max", f"{limit} a night tops"])
        )
    return extras


def listed(rng: Any, items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + rng.choice([" and ", ", plus "]) + items[-1]


def distractor(rng: Any, other: str, another: str) -> str:
    """A sentence about other places, days or prices, which the request is not about."""
    return rng.choice(
        [
            f"My sister took the bus from {other} to {another} on the 2nd of May for $45.",
            f"Ignore what I said earlier about {other}; plans changed.",
            f"Friends in {other} swear by a hotel there at $310 a night, which is too rich for us.",
            f"Last year we flew from {another} to {other} in three hours.",
            f"My boss is in {other} from the 9th to the 12th, which doesn't affect this.",
        ]
    )
