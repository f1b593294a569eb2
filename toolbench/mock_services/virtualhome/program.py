"""ToolBench's VirtualHome programs: reading them, judging them executable, scoring them by LCS.

A program is text, one ``Agent.<Action>(objects)`` call per line. It is parsed, never executed.
``clean_lines`` follows ToolBench's evaluator: per line, strip, skip empty lines, stop at a line
starting with ``Task:``, remove quotes and semicolons and a leading ``1.`` numbering. A cleaned
line is *executable* when it names a known function with objects that function accepts; the LCS
score compares whole cleaned lines. There are two checks:

- ``paper``: ToolBench's evaluator exactly. Each function accepts the objects it takes in the
  language-planner's examples (``paper_vocabulary``: ``WalkTo`` 107 objects, ``RunTo`` 12,
  ``Open`` 24, ...); a line needs the ``Agent.`` prefix, a Markdown fence line is a line like any
  other (not executable), and so is a line that cleaning empties (``''``).
- ``ours``: each function accepts what the objects' properties allow (``accepted``: every place
  to walk or run to, everything that opens), and every object of the paper's lists too; lines
  without the ``Agent.`` prefix and fence lines are accepted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from toolbench.mock_services.virtualhome.objects import ACTIONS, ACTIONS_BY_NAME, PROPERTIES, SQUEEZABLE

MAX_LINES = 500  # a program longer than this is refused before it is read further
CHECKS = ("paper", "ours")
#: ToolBench's object lists, as ``toolbench.taskgen.virtualhome_paper`` derives them.
PAPER_VOCABULARY_FILE = Path(__file__).resolve().parents[2] / "fixtures" / "virtualhome" / "paper_vocabulary.json"
_NUMBERING = re.compile(r"^\d+\.\s*")
_FENCE = re.compile(r"^\s*```")


@dataclass(frozen=True)
class Call:
    """A cleaned line and, when it is executable, the action and its objects; otherwise ``problem``
    says why not, in words."""

    line: str
    action: str | None = None
    args: tuple[str, ...] = ()
    problem: str | None = None

    @property
    def executable(self) -> bool:
        return self.action is not None


def clean_lines(text: str, check: str = "ours") -> list[str]:
    """The program's lines as ToolBench's evaluator cleans them. ``ours`` also skips fence lines,
    reads ``Grab(cup)`` as ``Agent.Grab(cup)`` and drops lines that cleaning empties; ``paper``
    keeps those as ``""`` (ToolBench counts them not executable and leaves them out of the LCS)."""
    paper = check == "paper"
    lines = []
    for raw in text.split("\n") if paper else text.splitlines():
        line = raw.strip()
        if not line or (not paper and _FENCE.match(line)):
            continue
        if line.startswith("Task:"):
            break
        line = _NUMBERING.sub("", line.replace('"', "").replace("'", "").replace(";", "")).strip()
        name = line.split("(")[0].strip()
        if not paper and name in ACTIONS_BY_NAME:  # "Grab(cup)" means "Agent.Grab(cup)"
            line = "Agent." + line
        if line or paper:
            lines.append(line)
    return lines


@cache
def paper_vocabulary() -> dict[str, tuple[frozenset[str], ...]]:
    """ToolBench's lists: for each function, the objects each argument accepts (none: no file)."""
    if not PAPER_VOCABULARY_FILE.is_file():
        return {}
    with open(PAPER_VOCABULARY_FILE, encoding="utf-8") as handle:
        lists = json.load(handle)
    keys = {0: (), 1: ("object",), 2: ("object1", "object2")}
    return {function: tuple(frozenset(entry[key]) for key in keys[len(entry)]) for function, entry in lists.items()}


@cache
def accepted() -> dict[str, tuple[frozenset[str], ...]]:
    """For each function (``Agent.Grab``), the objects each of its arguments accepts, from the
    objects' properties. This is the vocabulary of the API docs and of the executable check."""
    every = frozenset(name for name, props in PROPERTIES.items() if "room" not in props)
    rooms = frozenset(name for name, props in PROPERTIES.items() if "room" in props)

    def having(*words: str, also: tuple[str, ...] = ()) -> frozenset[str]:
        return frozenset(n for n, props in PROPERTIES.items() if props & set(words)) | frozenset(also)

    grabbable = having("grabbable", also=("water",))
    places = every - having("body_part")
    table: dict[str, tuple[frozenset[str], ...]] = {
        "WalkTo": (rooms | places,),
        "RunTo": (rooms | places,),
        "Find": (every,),
        "TurnTo": (every,),
        "LookAt": (places,),
        "PointAt": (every,),
        "Grab": (grabbable,),
        "Open": (having("can_open"),),
        "Close": (having("can_open"),),
        "Put": (grabbable, places),
        "PutIn": (grabbable, having("container", "recipient")),
        "PutBack": (grabbable,),
        "PutOn": (having("clothes"),),
        "TakeOff": (having("clothes"),),
        "SwitchOn": (having("has_switch"),),
        "SwitchOff": (having("has_switch"),),
        "PlugIn": (having("has_plug"),),
        "PlugOut": (having("has_plug"),),
        "SitOn": (having("sittable"),),
        "LieOn": (having("lieable"),),
        "StandUp": (),
        "Sleep": (),
        "WakeUp": (),
        "Drink": (having("drinkable", "recipient"),),
        "Eat": (having("eatable") | having("recipient") & having("surface"),),
        "Cut": (frozenset(having("eatable") & having("cuttable")),),
        "Read": (having("readable"),),
        "TypeOn": (having("has_switch", also=("keyboard",)),),
        "Watch": (having("lookable"),),
        "Touch": (every,),
        "Push": (having("movable", also=("button", "chair", "curtain")),),
        "Pull": (having("movable", also=("button", "chair", "curtain")),),
        "Wipe": (every,),
        "Wash": (every,),
        "Rinse": (every,),
        "Scrub": (every,),
        "Squeeze": (having("clothes") | frozenset(SQUEEZABLE),),
        "Drop": (grabbable,),
        "Greet": (having("person"),),
        "PourInto": (having("pourable", "drinkable"), having("recipient", "container", also=_POUR_ALSO)),
    }
    assert set(table) == {action.name for action in ACTIONS}
    paper = paper_vocabulary()
    return {
        f"Agent.{name}": tuple(ours | theirs for ours, theirs in zip(value, paper.get(f"Agent.{name}", value)))
        for name, value in table.items()
    }


_POUR_ALSO = ("hands_both", "sponge", "face")


def ground(line: str, check: str = "ours") -> Call:
    """ToolBench's check of one cleaned line: a known function, and objects it accepts (the
    paper's lists, or ours)."""
    function = line.split("(")[0]
    vocabulary = (paper_vocabulary() if check == "paper" else accepted()).get(function)
    if not line:
        return Call(line, problem="the line is empty once quotes, semicolons and numbering are removed")
    if vocabulary is None:
        return Call(line, problem=f"{line[:80]!r} is not a call of a known Agent function")
    # The first "(" and the next ")": ToolBench's \((.*?)\) group, found in linear time.
    opening = line.find("(")
    closing = line.find(")", opening + 1) if opening >= 0 else -1
    if closing < 0:
        shape = f"{function}({', '.join(['object'] * len(vocabulary))})"
        return Call(line, problem=f"{function} needs parentheses: {shape}")
    args = tuple(arg.strip() for arg in line[opening + 1 : closing].split(","))
    if args == ("",):
        args = ()
    if len(args) != len(vocabulary):
        return Call(line, problem=f"{function} takes {len(vocabulary)} object(s), not {len(args)}")
    for arg, allowed in zip(args, vocabulary):
        if arg not in allowed:
            known = arg.lower().replace(" ", "_")
            hint = f"; objects are written in lower case with underscores: {known!r}" if known in allowed else ""
            return Call(line, problem=f"{function} does not accept {arg[:60]!r} (see its list in the API docs){hint}")
    return Call(line, function.removeprefix("Agent."), args)


def parse_program(text: str, check: str = "ours") -> list[Call]:
    lines = clean_lines(text, check)
    if len(lines) > MAX_LINES:
        raise ValueError(f"the program has {len(lines)} lines; the limit is {MAX_LINES}")
    return [ground(line, check) for line in lines]


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of two lists of lines."""
    if len(a) < len(b):
        a, b = b, a
    previous = [0] * (len(b) + 1)
    for item in a:
        current = [0]
        for j, other in enumerate(b):
            current.append(previous[j] + 1 if item == other else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def lcs_score(predicted: list[str], reference: list[str]) -> float:
    """ToolBench's score: LCS over whole lines divided by the longer program's length."""
    longest = max(len(predicted), len(reference))
    if predicted == reference:
        return 1.0 if longest else 0.0
    return lcs_length(predicted, reference) / longest if longest else 0.0


def best_lcs(predicted: list[str], references: list[list[str]]) -> float:
    """The maximum of ``lcs_score`` over the references; references that cannot beat the best so
    far (the score is at most the shorter length over the longer) are skipped."""
    best = 0.0
    for reference in references:
        longest = max(len(predicted), len(reference))
        if longest and min(len(predicted), len(reference)) / longest > best:
            best = max(best, lcs_score(predicted, reference))
    return best


def call_text(action: str, args: tuple[str, ...]) -> str:
    """The API line of a call: ``Agent.Put(cup, table)``."""
    return f"Agent.{action}({', '.join(args)})"


# ----------------------------------------------------------------------------- English steps
def step_text(action: str, args: tuple[str, ...]) -> str:
    """The language-planner's English for a call: ``Put cup on table``."""
    template = ACTIONS_BY_NAME[action].step
    text = template.replace("X", args[0].replace("_", " ")) if args else template
    return text.replace("Y", args[1].replace("_", " ")) if len(args) > 1 else text


@cache
def _step_patterns() -> list[tuple[re.Pattern[str], str]]:
    """Regexes for the English steps; longer fixed words first (``Put back X`` before ``Put X on Y``)."""
    patterns = []
    for action in ACTIONS:
        regex = "^" + re.escape(action.step).replace("X", "(.+)").replace("Y", "(.+)") + "$"
        fixed = len(action.step.replace("X", "").replace("Y", ""))
        patterns.append((fixed, action.arity, re.compile(regex, re.IGNORECASE), action.name))
    patterns.sort(key=lambda item: (-item[0], item[1]))
    return [(regex, name) for _, _, regex, name in patterns]


def call_from_step(text: str) -> tuple[str, tuple[str, ...]] | None:
    """``"Walk to kitchen"`` -> ``("WalkTo", ("kitchen",))``; None when no step matches."""
    text = text.strip().rstrip(".")
    for regex, name in _step_patterns():
        match = regex.match(text)
        if match:
            return name, tuple(arg.strip().lower().replace(" ", "_") for arg in match.groups())
    return None
