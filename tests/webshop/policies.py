"""Cheap WebShop policies that play the env through its public actions only (no goal, no reference):
what an RL optimiser finds first if the shop can be passed without reading the pages.

- ``RuleAgent``: a parser fitted to the demo and train goals (WebShop's "name: value" options, and
  the option values the training goals name), then: search the instruction, open the hits under the
  price bound in order, buy the first whose option buttons include every option it parsed.
- ``blind_copy``: the closest training goal's reference replayed as is (its query, product and
  option clicks), without reading a page.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from rapidfuzz import fuzz, process

from toolbench.core.tasks import Task

_PRICE_CLAUSES = (
    re.compile(r"price lower than (\d+(?:\.\d+)?) dollars"),
    re.compile(r"(?:under|less than) \$?(\d+(?:\.\d+)?)"),
)
_COLON = re.compile(r"([a-z][a-z ]*?): ([^,]+?)(?=, and |$)")
_TAG = re.compile(r"^\$(\d+(?:\.\d+)?)")
ASIN = re.compile(r"[a-z0-9]{10}")


def instruction_of(observation: str) -> str:
    parts = observation.split(" [SEP] ")
    return parts[parts.index("Instruction:") + 1] if "Instruction:" in parts else observation


class Parser:
    """Regular expressions over the seen phrasings, and the option values the training goals name."""

    def __init__(self, training: Iterable[Task]) -> None:
        values = {str(v) for task in training for v in (task.get("goal") or {}).get("goal_options", {}).values()}
        self.values = sorted(values, key=len, reverse=True)  # longest first: "navy blue" before "navy"

    def bound(self, instruction: str) -> float | None:
        for pattern in _PRICE_CLAUSES:
            found = pattern.search(instruction)
            if found:
                return float(found.group(1))
        return None

    def options(self, instruction: str) -> list[str]:
        """The option values the instruction names: WebShop's "with name: value, and ..." if it has them,
        else every known value it contains (whole words, longest first, not overlapping)."""
        head = re.split(r",? and price lower than", instruction)[0]
        if " with " in head and _COLON.search(head.split(" with ", 1)[1]):
            return [value.strip() for _, value in _COLON.findall(head.split(" with ", 1)[1])]
        found, rest = [], f" {instruction} "
        for value in self.values:
            pattern = rf"(?<![a-z0-9]){re.escape(value)}(?![a-z0-9])"
            if re.search(pattern, rest):
                found.append(value)
                rest = re.sub(pattern, " | ", rest)
        return found


class RuleAgent:
    """Search the instruction, open the hits under the price bound, buy the first whose option buttons
    include every option the instruction names (clicking them); else buy the first hit opened."""

    def __init__(self, parser: Parser, max_steps: int = 25) -> None:
        self.parser, self.max_steps = parser, max_steps

    def play(self, env: Any, task_id: str) -> dict[str, Any]:
        observation, info = env.reset(options={"task_id": task_id})
        instruction = instruction_of(observation)
        bound, wanted = self.parser.bound(instruction), self.parser.options(instruction)
        observation, _, _, _, info = env.step(f"search[{instruction}]")
        hits = [(asin, price) for asin, price in _results(observation, info) if bound is None or price <= bound]
        steps = 1
        for asin, _ in hits:
            if steps + 2 + len(wanted) >= self.max_steps:
                break
            observation, _, _, _, info = env.step(f"click[{asin}]")
            steps += 1
            buttons = info["available_actions"]["clickables"]
            if all(value in buttons for value in wanted):
                for value in wanted:
                    env.step(f"click[{value}]")
                return env.step("click[buy now]")[4]
            env.step("click[< prev]")
            steps += 1
        first = hits[0][0] if hits else None
        if first is None:
            return env.step("click[buy now]")[4]
        env.step(f"click[{first}]")
        return env.step("click[buy now]")[4]


def _results(observation: str, info: dict[str, Any]) -> list[tuple[str, float]]:
    """The results page's products and their (lowest) prices, in order."""
    parts = observation.split(" [SEP] ")
    asins = [c for c in info["available_actions"]["clickables"] if ASIN.fullmatch(c)]
    found = []
    for index, part in enumerate(parts):
        if part.lower() in asins and index + 2 < len(parts):
            tag = _TAG.match(parts[index + 2])
            found.append((part.lower(), float(tag.group(1)) if tag else float("inf")))
    return found


def closest(prompt: str, known: list[Task]) -> Task:
    """The training task whose instruction is most like ``prompt``'s."""
    texts = [instruction_of(task.prompt) for task in known]
    _, _, index = process.extractOne(instruction_of(prompt), texts, scorer=fuzz.ratio)
    return known[index]


def blind_copy(env: Any, task_id: str, known: list[Task]) -> dict[str, Any]:
    """Replay the closest training goal's reference in program mode (one program, no page read)."""
    observation, _ = env.reset(options={"task_id": task_id})
    near = closest(observation, known)
    return env.step(near.references[0])[4]
