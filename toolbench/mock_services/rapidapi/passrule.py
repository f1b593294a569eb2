"""The deterministic pass rule of RapidAPI tasks, after ToolEval's pass-rate rules.

ToolEval asks an LLM whether a final answer solves the query. Our tasks know the answer: a
solvable task passes when the final answer states every answer fact; an unsolvable one passes when
the agent gives up or its answer says the request cannot be done. Giving up on a solvable task
fails, as in ToolEval.

A fact is found in an answer when:
- a number fact: some number in the answer equals it, or rounds to it at the answer's precision
  (``23.46`` or ``23.5`` state ``23.456``; thousands separators, ``+``/``-`` signs and number words up
  to twenty are read; units around the number are ignored, so ``12 km`` and ``12km`` both state 12);
- a text fact: its words appear in that order in the answer's words, case, accents and punctuation
  aside, digits without leading zeros (``+05:30`` matches ``UTC+5:30``); dates written as
  ``March 8, 2026`` or ``8 March 2026`` count as ``2026-03-08``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

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
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_GROUPED = re.compile(r"(?<![\d.])(\d{1,3}(?:,\d{3})+)(?![\d,])")
_MONTH = "(" + "|".join(m[:3] + f"(?:{m[3:]})?" for m in MONTHS) + r")\.?"
_MONTH_DAY_YEAR = re.compile(_MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})")
_DAY_MONTH_YEAR = re.compile(r"(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r",?\s+(\d{4})")
CANNOT = re.compile(
    r"\b(cannot|can ?not|can't|unable|not able|couldn't|could not|no (?:such|record|information|data|results?)|"
    r"not (?:found|available|exist|possible|provided)|doesn't exist|does not exist|don't have|do not have|"
    r"isn't available|is not available|impossible|not supported|no way to)\b"
)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()


def _month(name: str) -> int:
    return next(n for n, month in enumerate(MONTHS, start=1) if month.startswith(name[:3]))


def with_iso_dates(text: str) -> str:
    """``text`` with every written-out date followed by its ISO form."""
    text = _MONTH_DAY_YEAR.sub(
        lambda m: f"{m.group(0)} {m.group(3)}-{_month(m.group(1)):02d}-{int(m.group(2)):02d}", text
    )
    return _DAY_MONTH_YEAR.sub(
        lambda m: f"{m.group(0)} {m.group(3)}-{_month(m.group(2)):02d}-{int(m.group(1)):02d}", text
    )


def numbers_in(text: str) -> list[str]:
    text = _GROUPED.sub(lambda m: m.group(1).replace(",", ""), text)
    found = _NUMBER.findall(text)
    found += [str(NUMBER_WORDS.index(w)) for w in re.findall(r"[a-z]+", text) if w in NUMBER_WORDS]
    return found


def tokens(text: str) -> list[str]:
    return [str(int(t)) if t.isdigit() and len(t) < 19 else t for t in re.findall(r"[a-z0-9]+", text)]


def _number_matches(fact: str, said: str) -> bool:
    value, shown = float(fact), float(said)
    if value == shown:
        return True
    decimals = len(said.split(".")[1]) if "." in said else 0
    if decimals == 0 and "." not in fact:
        return False  # two whole numbers: only equal ones match
    return abs(value - shown) <= 0.5 * 10 ** (-decimals) + 1e-9


def _contains(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


def states(answer: str, fact: str) -> bool:
    """Whether ``answer`` states ``fact``."""
    text = with_iso_dates(_fold(answer))
    if _NUMBER.fullmatch(fact.strip()):
        return any(_number_matches(fact.strip(), said) for said in numbers_in(text))
    wanted = tokens(with_iso_dates(_fold(fact)))
    if not wanted:  # a symbol (a currency sign): look for it as written
        return fact.strip() in answer
    return _contains(tokens(text), wanted)


def says_cannot(answer: str) -> bool:
    return bool(CANNOT.search(_fold(answer.replace("\u2019", "'"))))


@dataclass(frozen=True)
class Verdict:
    passed: bool
    facts_found: int
    facts_total: int


def judge(answer: str | None, gave_up: bool, facts: list[str], solvable: bool) -> Verdict:
    """The pass verdict of an episode's ending: its final answer (None when there is none) or giving up."""
    if not solvable:
        return Verdict(gave_up or (answer is not None and says_cannot(answer)), 0, 0)
    found = sum(states(answer, fact) for fact in facts) if answer is not None and not gave_up else 0
    return Verdict(bool(facts) and found == len(facts), found, len(facts))
