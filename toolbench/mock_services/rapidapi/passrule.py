"""The deterministic pass rule of RapidAPI tasks, after ToolEval's pass-rate rules.

ToolEval asks an LLM whether a final answer solves the query. Our tasks know the answer: a
solvable task passes when the final answer states every answer fact; an unsolvable one passes when
the agent gives up or its answer says the request cannot be done. Giving up on a solvable task
fails, as in ToolEval. Since a rule cannot read intent, four guards stand in for the judge's
common sense: the answer must rest on calls the agent made (the calls whose responses hold the
facts, with the arguments that ask for them; for an unsolvable task, such a call that shows it
cannot be done), a solvable task's answer must not say it cannot be done, it must not list more
than ``max_numbers`` distinct numbers (a list of guesses), it must not paste what the calls
returned (raw JSON is not an answer to the user), and it must not list what the calls returned:
the returned values it states beyond the facts and the query, and the response fields it names as
labels (``temp_c: 21.5``), are bounded by the number of facts (``Listed.within``: a dump of every
field states each fact too, but it leaves the user to find the answer). Only the first 2,000 characters of an answer are
read.

A fact is found in an answer when:
- a number fact: some number in the answer equals it, or is it rounded to the answer's precision
  (``505.24``, ``505.2`` or ``505`` state 505.2373); below 100 a decimal fact needs a decimal
  place (``3.6`` is not stated by ``4``); thousands separators, signs, ``2.75 million`` (within
  2%) and number words up to twenty are read; units around the number are ignored, so ``12 km``
  and ``12km`` both state 12;
- a text fact: its words appear in that order in the answer's words, case, accents and punctuation
  aside, digits without leading zeros (``+05:30`` matches ``UTC+5:30``); dates written as
  ``March 8, 2026`` or ``8 March 2026`` count as ``2026-03-08``;
- a fact with several forms (a country's code and name): any of them.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")  # fmt: skip
NUMBER_WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]
_NUMBER_WORD_VALUES = {word: value for value, word in enumerate(NUMBER_WORDS)}
_LETTERS = re.compile(r"[a-z]+")
_DIGIT = re.compile(r"\d")
_WORDS = re.compile(r"[a-z0-9]+")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_GROUPED = re.compile(r"(?<![\d.])(\d{1,3}(?:,\d{3})+)(?![\d,])")
_MONTH = "(" + "|".join(m[:3] + f"(?:{m[3:]})?" for m in MONTHS) + r")\.?"
_MONTH_DAY_YEAR = re.compile(_MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})")
_MONTH_START = re.compile("|".join(month[:3] for month in MONTHS))
_DAY_MONTH_YEAR = re.compile(r"(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r",?\s+(\d{4})")
CANNOT = re.compile(
    r"\b(cannot|can ?not|can't|unable|not able|couldn't|could not|no (?:such|record|information|data|results?)|"
    r"not (?:found|available|exist|possible|provided|recogni[sz]ed|valid)|doesn't exist|does not exist|"
    r"don't (?:have|provide|offer)|do not (?:have|provide|offer)|does not (?:include|provide|have)|"
    r"doesn't (?:include|provide|have)|isn't available|is not available|impossible|not supported|no way to|"
    r"invalid|there (?:is|are) no|no \w+ (?:with|matches|matching|found)|unknown)\b"
)


def _fold(text: str) -> str:
    if text.isascii():  # nothing to decompose or drop
        return text.lower()
    text = text.replace("\u2212", "-").replace("\u2019", "'")  # a typographic minus and apostrophe
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()


def _month(name: str) -> int:
    return next(n for n, month in enumerate(MONTHS, start=1) if month.startswith(name[:3]))


def with_iso_dates(text: str) -> str:
    """``text`` with every written-out date followed by its ISO form."""
    if not _MONTH_START.search(text):  # both forms name a month: most texts have none
        return text
    text = _MONTH_DAY_YEAR.sub(
        lambda m: f"{m.group(0)} {m.group(3)}-{_month(m.group(1)):02d}-{int(m.group(2)):02d}", text
    )
    return _DAY_MONTH_YEAR.sub(
        lambda m: f"{m.group(0)} {m.group(3)}-{_month(m.group(2)):02d}-{int(m.group(1)):02d}", text
    )


MAX_ANSWER = 2000  # characters of a final answer that are read
SCALES = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "mn": 1e6, "billion": 1e9, "bn": 1e9, "b": 1e9}
# A number not glued to the letters before it (a hash's digits are not numbers; ``12km`` is 12).
_STANDALONE = re.compile(r"(?<![a-z0-9])-?\d+(?:\.\d+)?")
_SCALED = re.compile(r"(-?\d+(?:\.\d+)?)\s*(thousand|million|billion|bn|mn|k|m|b)\b")
# What every match of _SCALED holds; led by a digit, so the regex engine skips to digits (a fast
# first look: most answers scale no number).
_ANY_SCALED = re.compile(r"\d\s*(?:thousand|million|billion|bn|mn|k|m|b)\b")


class Said(NamedTuple):
    """A number an answer states: its value, its shown decimals, and its scale (``2.75 million``).
    A named tuple: an answer holds many, made at each reading, and a tuple is the cheapest to make."""

    value: float
    decimals: int
    scale: float = 1.0


def numbers_in(text: str) -> list[Said]:
    """Every number ``text`` states (thousands separators, ``2.75 million`` and number words read)."""
    found = []
    if _DIGIT.search(text):  # else only number words: the patterns below all need a digit
        if "," in text:
            text = _GROUPED.sub(lambda m: m.group(1).replace(",", ""), text)
        found = [Said(float(t), len(t.split(".")[1]) if "." in t else 0) for t in _STANDALONE.findall(text)]
        for number, unit in _SCALED.findall(text) if _ANY_SCALED.search(text) else ():
            decimals = len(number.split(".")[1]) if "." in number else 0
            found.append(Said(float(number) * SCALES[unit], decimals, SCALES[unit]))
    found += [Said(float(_NUMBER_WORD_VALUES[w]), 0) for w in _LETTERS.findall(text) if w in _NUMBER_WORD_VALUES]
    return found


# A word of digits that starts with a zero: the only kind ``tokens`` writes otherwise than it reads it.
_LEADING_ZERO = re.compile(r"(?<![a-z0-9])0[0-9]")


def tokens(text: str) -> list[str]:
    words = _WORDS.findall(text)
    if not _LEADING_ZERO.search(text):  # most texts: every word stays as it is
        return words
    return [str(int(t)) if t.isdigit() and len(t) < 19 else t for t in words]


def _number_matches(value: float, said: Said) -> bool:
    """Whether ``said`` states the fact ``value``: equal, or the fact rounded to the answer's precision
    (``505.24``, ``505.2`` and ``505`` state 505.2373); below 100 a decimal fact needs a decimal place
    (``3.6`` is not stated by ``4``); a whole fact must be equal unless the answer scales it
    (``2.75 million`` states 2,750,123, within 2%)."""
    if value == said.value:
        return True
    error = abs(value - said.value)
    if said.scale > 1:
        return error <= 0.5 * 10 ** (-said.decimals) * said.scale + 1e-9 and error <= 0.02 * abs(value)
    if value.is_integer() or (said.decimals < 1 and abs(value) < 100):
        return False
    return abs(round(value, said.decimals) - said.value) <= 10 ** (-said.decimals - 6) * max(1.0, abs(value))


def _contains(haystack: list[str], needle: list[str]) -> bool:
    """Whether ``needle`` is a run of ``haystack`` (compared only where its first word is)."""
    n = len(needle)
    if n == 0:
        return False
    first, start = needle[0], 0
    while True:
        try:
            start = haystack.index(first, start)
        except ValueError:
            return False
        if haystack[start : start + n] == needle:
            return True
        start += 1


class Reading:
    """An answer read once for every fact: its folded text (``folded``; ``text`` adds the ISO form of
    each written-out date), its numbers and its words (read only when a text fact asks: many tasks'
    facts are all numbers)."""

    __slots__ = ("_words", "folded", "numbers", "raw", "text")

    def __init__(self, raw: str, folded: str, text: str, numbers: list[Said]) -> None:
        self.raw, self.folded, self.text, self.numbers = raw, folded, text, numbers
        self._words: list[str] | None = None

    @classmethod
    def of(cls, answer: str) -> Reading:
        folded = _fold(answer)
        text = with_iso_dates(folded)
        return cls(answer, folded, text, numbers_in(text))

    @property
    def words(self) -> list[str]:
        if self._words is None:
            self._words = tokens(self.text)
        return self._words


def states(answer: str | Reading, fact: str | list[str]) -> bool:
    """Whether ``answer`` states ``fact`` (a list: any of its forms, such as ``["GB", "United Kingdom"]``)."""
    reading = answer if isinstance(answer, Reading) else Reading.of(answer)
    if isinstance(fact, list):
        return any(states(reading, form) for form in fact)
    number, wanted = _fact_form(fact)
    if number is not None:
        return any(_number_matches(number, said) for said in reading.numbers)
    if not wanted:  # a symbol (a currency sign): look for it as written
        return fact.strip() in reading.raw
    return _contains(reading.words, list(wanted))


@lru_cache(maxsize=4096)
def _fact_form(fact: str) -> tuple[float | None, tuple[str, ...]]:
    """A fact's value when it is a number, else None and its words: read once per fact, not once per
    answer (facts are the tasks' own text, a bounded set)."""
    if _NUMBER.fullmatch(fact.strip()):
        return float(fact), ()
    return None, tuple(tokens(with_iso_dates(_fold(fact))))


def says_cannot(answer: str | Reading) -> bool:
    folded = answer.folded if isinstance(answer, Reading) else _fold(answer[:MAX_ANSWER])
    return bool(CANNOT.search(folded))


@dataclass(frozen=True)
class Verdict:
    passed: bool
    facts_found: int
    facts_total: int
    listed: int = 0  # values and labels the answer lists of the calls' returns beyond the facts (``Returned.listed``)


#: A response field named as a label: the field's name, then a colon or an equals sign.
_LABEL_END = r")\s*[:=]"
_KEY_CHARS = re.compile(r"[a-z][a-z0-9_]+")


def _value_text(value: Any) -> str | None:
    """A returned value as the text an answer would state it by; None for what no answer states as a
    value of its own (yes/no, empty)."""
    if isinstance(value, bool) or value is None or value == "":
        return None
    if isinstance(value, float):
        return repr(value) if abs(value) < 1e15 else str(int(value))
    return str(value)


def _leaves(value: Any, key: str = "") -> Iterable[tuple[str, Any]]:
    """Every (field name, value) of a JSON value; a list's items carry the list's field name."""
    if isinstance(value, dict):
        for name, item in value.items():
            yield from _leaves(item, str(name))
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, key)
    else:
        yield key, value


#: At most this many returned values are checked (a search's page of rows holds a few hundred).
MAX_RETURNED_VALUES = 600


@dataclass(frozen=True)
class Returned:
    """What the answered calls of an episode returned that an answer could list beyond its facts:
    each distinct value the query does not state and no fact states, and the response fields' names."""

    values: tuple[str, ...]
    labels: re.Pattern[str] | None

    @classmethod
    def of(cls, responses: Iterable[Any], query: str, facts: Sequence[str | list[str]]) -> Returned:
        said = Reading.of(query)
        stated = [Reading.of(fact if isinstance(fact, str) else " ; ".join(fact)) for fact in facts]
        values: dict[str, None] = {}
        names: dict[str, None] = {}
        for response in responses:
            for name, value in _leaves(response):
                text = _value_text(value)
                if _KEY_CHARS.fullmatch(name.lower()):
                    names[name.lower()] = None
                if text is not None and len(values) < MAX_RETURNED_VALUES:
                    values[text] = None
        kept = tuple(v for v in values if not states(said, v) and not any(states(fact, v) for fact in stated))
        alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
        labels = re.compile(r"(?<![a-z0-9_])(" + alternatives + _LABEL_END) if names else None
        return cls(kept, labels)

    def listed(self, reading: Reading) -> Listed:
        """How many returned values beyond the facts and the query ``reading`` states, and how many
        response fields it names as labels."""
        values = sum(states(reading, value) for value in self.values)
        labels = len(set(self.labels.findall(reading.folded))) if self.labels is not None else 0
        return Listed(values, labels)


class Listed(NamedTuple):
    """What an answer lists of what the calls returned (``Returned.listed``)."""

    values: int
    labels: int

    def within(self, facts: int) -> bool:
        """Whether an answer to a task with ``facts`` facts may list this much: one returned value
        beyond the facts per two facts (an unsolvable task's answer one, to name what it is about),
        and a label per fact. A dump of every field lists each value and names each field."""
        return self.values <= (facts // 2 if facts else 1) and self.labels <= max(1, facts)


def judge(
    answer: str | None,
    gave_up: bool,
    facts: list[str | list[str]],
    solvable: bool,
    evidence: bool = True,
    shown: Iterable[str] = (),
    returned: Returned | None = None,
) -> Verdict:
    """The pass verdict of an episode's ending: its final answer (None when there is none) or giving up.

    ``evidence``: whether the agent made the calls the answer rests on (the calls whose responses
    hold the facts; for an unsolvable task, a call that shows it cannot be done). Without them no
    answer passes: a guess is not a solution. Only the first ``MAX_ANSWER`` characters are read; a
    solvable task fails when the answer says it cannot be done, lists more than ``max_numbers``
    distinct numbers (a list of guesses, not an answer) or pastes what the calls returned
    (``shown``: the observations and the JSON of their responses; see ``pastes``). With ``returned``
    (what the answered calls returned), an answer also fails when it lists more of it than
    ``Listed.within`` allows."""
    if not evidence:
        return Verdict(False, 0, len(facts))
    if not solvable:
        if answer is None:
            return Verdict(gave_up, 0, 0)
        reading = Reading.of(answer[:MAX_ANSWER])
        listed = returned.listed(reading) if returned is not None else Listed(0, 0)
        said = says_cannot(reading) and not pastes(reading.raw, shown) and listed.within(0)
        return Verdict(gave_up or said, 0, 0, sum(listed))
    if answer is None or gave_up:
        return Verdict(False, 0, len(facts))
    reading = Reading.of(answer[:MAX_ANSWER])
    found = sum(states(reading, fact) for fact in facts)
    listed = returned.listed(reading) if returned is not None else Listed(0, 0)
    honest = not says_cannot(reading) and len({n.value for n in reading.numbers}) <= max_numbers(len(facts))
    honest = honest and not pastes(reading.raw, shown) and listed.within(len(facts))
    return Verdict(bool(facts) and found == len(facts) and honest, found, len(facts), sum(listed))


#: A returned JSON text (braces and all) this long found word for word in an answer makes it a paste.
PASTE_CHARS = 8


def pastes(answer: str, shown: Iterable[str]) -> bool:
    """Whether ``answer`` holds one of the texts the calls returned (an observation, a response's
    JSON) of ``PASTE_CHARS`` or more, word for word: raw responses are not an answer to the user,
    though they hold its facts (a judge reads them as unanswered)."""
    if "{" not in answer and "[" not in answer:  # no JSON text in it (most answers): nothing to look for
        return False
    return any(len(text) >= PASTE_CHARS and text in answer for text in shown)


def shown_texts(observation_text: str, response: Any) -> list[str]:
    """What an answer must not paste from one call: its observation and the JSON of its response
    and of the response's parts (as ``json.dumps`` writes them)."""
    texts = [observation_text]
    parts = [response] + (
        list(response.values()) if isinstance(response, dict) else list(response) if isinstance(response, list) else []
    )
    texts += [json.dumps(part) for part in parts if isinstance(part, (dict, list))]
    return [text.removesuffix("...") for text in texts if len(text) >= PASTE_CHARS]


def max_numbers(facts: int) -> int:
    """The most distinct numbers an answer to a task with ``facts`` facts may state."""
    return max(12, 4 * facts)


def made_the_calls(
    solution: list[dict[str, Any]],
    answered: Sequence[tuple[str, Mapping[str, Any]]],
    tried: Sequence[tuple[str, Mapping[str, Any]]],
    key_of: Callable[[str], str],
    solvable: bool,
) -> bool:
    """Whether a run made the calls an answer must rest on. ``solution`` is the task's reference
    path; ``answered`` the calls (function, arguments) that returned data, ``tried`` every call
    made; ``key_of`` tells what a function does (``"weather.current"``), so the same API of another
    tool of the task counts too. A call stands for a step when it asks the same API for the same
    thing: every argument the step gives, with the same value (case, blanks and number spelling
    aside; other arguments may be added). Solvable: every step whose response holds facts was
    answered. Unsolvable: one of them was tried (it shows the request cannot be done). A call of
    every offered API with made-up values shows neither."""
    return NeededCalls.of(solution, key_of).made(answered, tried, key_of, solvable)


@dataclass(frozen=True)
class NeededCalls:
    """The steps of a solution an answer must rest on (those whose responses hold facts), each as
    what its API does and the values it asks for, as written and as a comparison sees them: read once
    per task by an env, then checked against each episode's calls (``made_the_calls``)."""

    steps: tuple[tuple[str, tuple[tuple[str, Any, Any], ...]], ...]

    @classmethod
    def of(cls, solution: list[dict[str, Any]], key_of: Callable[[str], str]) -> NeededCalls:
        steps = [step for step in solution if step.get("holds_facts", True)]
        return cls(
            tuple(
                (
                    key_of(str(step.get("function", ""))),
                    tuple((name, value, _plain(value)) for name, value in (step.get("arguments") or {}).items()),
                )
                for step in steps
            )
        )

    def made(
        self,
        answered: Sequence[tuple[str, Mapping[str, Any]]],
        tried: Sequence[tuple[str, Mapping[str, Any]]],
        key_of: Callable[[str], str],
        solvable: bool,
    ) -> bool:
        """``made_the_calls`` for these steps (``key_of`` as the steps were read with)."""
        if not solvable:
            calls = [(key_of(function), arguments) for function, arguments in tried]
            return not self.steps or any(_shows(step, call) for step in self.steps for call in calls)
        calls = [(key_of(function), arguments) for function, arguments in answered]
        return all(any(_shows(step, call) for call in calls) for step in self.steps)


def _shows(step: tuple[str, tuple[tuple[str, Any, Any], ...]], call: tuple[str, Mapping[str, Any]]) -> bool:
    key, wanted = step
    function_key, arguments = call
    if function_key != key:
        return False
    # A value equal to the step's as written is equal as a comparison sees it (most calls): no need to fold it.
    return all(
        name in arguments and (arguments[name] == written or _plain(arguments[name]) == plain)
        for name, written, plain in wanted
    )


def _plain(value: Any) -> Any:
    """A value as a comparison sees it: numbers (also written as text) as floats, text folded."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:  # an int too large for a float (an agent's 10**400): compared as it is
            return value
    if isinstance(value, str):
        text = " ".join(value.split()).casefold()
        return float(text) if _NUMBER.fullmatch(text) else text
    if isinstance(value, (list, tuple)):
        return tuple(_plain(item) for item in value)
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _plain(v)) for k, v in value.items()))
    return value
