"""The word-overlap buyer: WebShop played by counting the words a listing shares with the instruction.

It reads no goal and no reference, only the pages (``text`` observations) and the clickable buttons
the env reports: search the instruction, keep the hits under the price bound it can read, open the
ones whose titles share the most words with the instruction (as many as 25 steps allow), read their
features (every attribute a listing has is there), buy the one whose item and features pages share the
most, with the option button of each group whose words the instruction holds.
Words are compared after light normalisation (lower case, no punctuation, plurals and common
suffixes cut, numbers in words as digits, stop words dropped), so "washable" meets "washing" and
"twelve" meets "12". A shop whose goals can be found this way pays for matching words, not for
understanding what the shopper asked; ``toolbench audit`` holds it to a ceiling.
"""

from __future__ import annotations

import re
from typing import Any

from toolbench.agents.policy_base import ASIN, MovesPolicy, instruction_of
from toolbench.core.env import ToolEnv
from toolbench.core.tasks import Task

SEP = " [SEP] "
_BUTTONS = frozenset(
    ("back to search", "< prev", "next >", "description", "features", "reviews", "attributes", "buy now")
)
_STOP = frozenset(
    re.findall(
        r"\S+",
        "a an the and or of for to in on with without at by from is it its be i i'm im am me my we you your this that "
        "these those one some any want need would like looking look find get buy please can could should must has have "
        "not no but so also plus just very ideally today which whichever as are was were will",
    )
)
_NUMBERS = {
    word: str(value)
    for value, word in enumerate(
        re.findall(
            r"\S+",
            "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
            "seventeen eighteen nineteen twenty",
        )
    )
}
#: Steps kept for the end: reopen the best listing, choose up to three options, buy.
_FINISH = 5
_TENS = {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_BOUND = (
    re.compile(r"\$\s*(\d+(?:\.\d+)?)"),
    re.compile(r"(\d+(?:\.\d+)?)\s*(?:dollars|bucks|usd)"),
)


def stem(word: str) -> str:
    """A crude stem: "washable", "washing", "washed" and "washes" all become "wash"."""
    for suffix in ("ability", "able", "ible", "ing", "ness", "ies", "ed", "es", "ly", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix == "ies" else "")
            break
    return word


def _numbers_as_digits(text: str) -> str:
    text = re.sub(
        r"\b(" + "|".join(_TENS) + r")(?:[ -](one|two|three|four|five|six|seven|eight|nine))?\b",
        lambda m: str(_TENS[m.group(1)] + (int(_NUMBERS[m.group(2)]) if m.group(2) else 0)),
        text,
    )
    text = re.sub(r"\b(" + "|".join(_NUMBERS) + r")\b", lambda m: _NUMBERS[m.group(1)], text)
    return re.sub(
        r"\b(\d+) hundred(?: and (\d+))?\b", lambda m: str(int(m.group(1)) * 100 + int(m.group(2) or 0)), text
    )


def words(text: str) -> set[str]:
    """The normalised content words of ``text``."""
    text = _numbers_as_digits(text.lower())
    return {stem(w) for w in re.findall(r"[a-z0-9]+(?:\.[0-9]+)?", text) if w not in _STOP}


def price_bound(instruction: str) -> float | None:
    """The highest price the instruction allows, if it names one ("$30", "30 dollars", "thirty bucks")."""
    text = _numbers_as_digits(instruction.lower()).replace("-", " ")
    found = [float(m.group(1)) for pattern in _BOUND for m in pattern.finditer(text)]
    return max(found) if found else None


def _parts(observation: str) -> list[str]:
    return [part.strip() for part in observation.split(SEP)]


def _after_prev(observation: str) -> list[str]:
    parts = _parts(observation)
    return parts[parts.index("< Prev") + 1 :] if "< Prev" in parts else parts


def results(observation: str, info: dict[str, Any]) -> list[tuple[str, str, float]]:
    """A results page's rows: (asin, title, lowest price), in the engine's order."""
    parts = _parts(observation)
    asins = {c for c in (info.get("available_actions") or {}).get("clickables", []) if ASIN.fullmatch(c)}
    rows = []
    for index, part in enumerate(parts):
        if part.lower() in asins and index + 2 < len(parts):
            prices = [float(p) for p in re.findall(r"\$(\d+(?:\.\d+)?)", parts[index + 2])]
            rows.append((part.lower(), parts[index + 1], min(prices) if prices else float("inf")))
    return rows


def option_groups(observation: str, info: dict[str, Any]) -> dict[str, list[str]]:
    """An item page's option groups: the group's name (the text before its buttons) -> its values."""
    clickables = [c for c in (info.get("available_actions") or {}).get("clickables", []) if c not in _BUTTONS]
    parts = _after_prev(observation)
    groups: dict[str, list[str]] = {}
    name = ""
    for index, part in enumerate(parts):
        if part not in clickables:
            if index + 1 == len(parts) or parts[index + 1] not in clickables:
                break  # the title: no option group follows
            name = part
        else:
            groups.setdefault(name, []).append(part)
    return groups


def _near(instruction: str, value: str, group: str) -> int:
    """How close ``value`` is written to its group's name in the instruction ("sport as the style"), in characters
    (far if either is not written there as is)."""
    text, far = instruction.lower(), 10**6
    at, named = text.find(value), [m.start() for m in re.finditer(re.escape(group), text)] if group else []
    return min((abs(at - n) for n in named), default=far) if at >= 0 else far


def chosen_options(instruction: str, groups: dict[str, list[str]]) -> list[str]:
    """Per group, the value whose words the instruction holds most of (at least half of them); between values it
    holds alike, the one written nearest the group's name."""
    said = words(instruction)
    picks = []
    for group, values in groups.items():
        scored = []
        for place, value in enumerate(values):
            mine = words(value)
            if mine:
                shared = len(mine & said)
                scored.append((shared / len(mine), shared, -_near(instruction, value, group), -place, value))
        best = max(scored, default=(0.0, 0, 0, 0, ""))
        if best[0] >= 0.5 and best[1]:
            picks.append(best[-1])
    return picks


class OverlapBuyer(MovesPolicy):
    """Rank listings by the words they share with the instruction, read the best ones, buy the best read."""

    policy = "overlap_buyer"
    about = "search the instruction, buy the listing whose pages share the most words with it, options it names chosen"
    max_steps = 25

    def applies(self, task: str, mode: str, splits: tuple[str, ...]) -> bool:
        return task == "WebShop" and mode == "interactive"

    def begin(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> None:
        self.start(self.moves(instruction_of(observation)))

    def moves(self, instruction: str) -> Any:
        """The episode's actions; each ``yield`` gets back the page and info it led to."""
        said, bound = words(instruction), price_bound(instruction)
        observation, info = yield f"search[{instruction}]"
        steps = 1
        rows = results(observation, info)
        affordable = [row for row in rows if bound is None or row[2] <= bound] or rows
        if not affordable:
            return
        # by the words a title shares; sorted() is stable, so the engine's order breaks ties
        ranked = sorted(affordable, key=lambda row: -len(words(row[1]) & said))
        opened: list[tuple[int, int, str, list[str]]] = []  # (shared words, -place, asin, options to click)
        for place, (asin, _, _) in enumerate(ranked):
            # room for this listing (open, features, back, back), then to reopen the best, choose and buy
            if opened and steps + 4 + _FINISH > self.max_steps:
                break
            observation, info = yield f"click[{asin}]"
            groups = option_groups(observation, info)
            text = " ".join(_after_prev(observation))
            steps += 1
            if "features" in (info.get("available_actions") or {}).get("clickables", []):
                observation, info = yield "click[features]"
                text += " " + " ".join(_after_prev(observation))
                observation, info = yield "click[< prev]"
                steps += 2
            options = chosen_options(instruction, groups)
            opened.append((len(options) + len(words(text) & said), -place, asin, options))
            observation, info = yield "click[< prev]"
            steps += 1
        _, _, asin, options = max(opened)
        yield f"click[{asin}]"
        for value in options:
            yield f"click[{value}]"
        yield "click[buy now]"
