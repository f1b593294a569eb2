"""The line reader gives what the ``ast`` reader gives: the same calls, values, variables and errors.

Programs are generated from a grammar that mixes what the line reader accepts with what it must
leave to ``ast`` (comments, escapes, keywords, tuples, odd numbers and spacing, errors of every
kind), then mutated as the fuzzer mutates actions. Each is read both ways from the same variables.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

import toolbench
import toolbench.core.program as program
from tests.fuzzing import mutate
from toolbench.core.program import ProgramError, parse_program
from toolbench.mock_services.trip_booking.api import Date, Loc

FUNCTIONS = {"put", "search", "set_origin", "set_date"}
CONSTRUCTORS = {"Loc": Loc, "Date": Date}

NUMBERS = [
    "0",
    "00",
    "007",
    "7",
    "-3",
    "- 3",
    "--3",
    "+3",
    "1.5",
    "-0.0",
    "1.",
    ".5",
    "1e5",
    "1_0",
    "0x1F",
    "1j",
    "9" * 31,
    "9" * 40,
    "2.50",
    "3if",
    "-True",
]
STRINGS = [
    '"Laredo"',
    "'Lyon, FR'",
    '""',
    "''",
    '"it\'s"',
    '"a#b"',
    '"é💥"',
    '"\\n"',
    'r"x"',
    'b"x"',
    '"""x"""',
    '"a" "b"',
    '"unclosed',
    "'\\x00'",
    '"\t"',
]
NAMES = [
    "x",
    "y",
    "location",
    "when",
    "undefined_name",
    "match",
    "_",
    "None",
    "True",
    "False",
    "if",
    "lambda",
    "__x",
    "API",
    "print",
    "Loc",
]
SPACES = ["", " ", "  ", "\t"]


PLAIN_NUMBERS = ["0", "7", "-3", "- 3", "1.5", "-0.0", "2.50", "9" * 31]
PLAIN_STRINGS = ['"Laredo"', "'Lyon, FR'", '""', "''", '"it\'s"', '"a#b"', '"é💥"', '"\t"']
PLAIN_NAMES = ["x", "y", "location", "when", "match", "_"]


def _value(r: random.Random, plain: bool, depth: int = 0) -> str:
    kind = r.randrange((8 if plain else 9) if depth < 3 else 4)
    if kind == 0:
        return r.choice(PLAIN_NUMBERS if plain else NUMBERS)
    if kind == 1:
        return r.choice(PLAIN_STRINGS if plain else STRINGS)
    if kind == 2:
        return r.choice(PLAIN_NAMES if plain else NAMES)
    if kind == 3:
        return r.choice(["True", "False", "None"])
    if kind in (4, 5):
        items = [_value(r, plain, depth + 1) for _ in range(r.choice([0, 1, 2, 3] if plain else [0, 1, 2, 3, 101]))]
        return "[" + ", ".join(items) + ("" if plain else r.choice(["", "", ",", " "])) + "]"
    if kind == 6:
        return "Loc(" + r.choice(PLAIN_STRINGS if plain else STRINGS + NAMES + ["1", ""]) + ")"
    if kind == 7:
        days = ["8", "2", "31", "13", "0", "x", "True", "2023", "1800", "9" * 25]
        return "Date(" + ", ".join(r.choice(days) for _ in range(r.choice([3, 3, 2]))) + ")"
    return r.choice(["(1, 2)", "(1)", "()", "{1: 2}", "x.y", "Loc('a').location", "1 + 2", "[1] * 3", "f(1)"])


def _arguments(r: random.Random, plain: bool) -> str:
    args = [_value(r, plain) for _ in range(r.randrange(3))]
    names = ["value", "n", "value"] if plain else ["value", "n", "value", "__debug__", "if", "None"]
    kwargs = [
        f"{r.choice(names)}{r.choice(SPACES)}={r.choice(SPACES)}{_value(r, plain)}" for _ in range(r.randrange(3))
    ]
    parts = args + kwargs if plain or r.random() < 0.9 else kwargs + args
    space = r.choice(SPACES)
    return space.join(["(", ", ".join(parts), "" if plain else r.choice(["", "", ","]), ")"])


def _statement(r: random.Random, plain: bool) -> str:
    kind = r.randrange(7 if plain else 10)
    function = r.choice(["put", "search", "set_origin", "set_date"] + ([] if plain else ["nope", "if"]))
    call = f"API{r.choice(['.', '.', ' . '])}{function}{_arguments(r, plain)}"
    if kind < 4:
        return call
    if kind < 6:
        return f"{r.choice(PLAIN_NAMES if plain else NAMES)}{r.choice(SPACES)}={r.choice(SPACES)}{_value(r, plain)}"
    if kind == 6:
        return f"{r.choice(PLAIN_NAMES if plain else NAMES)} = {call}"
    if kind == 7:
        return r.choice(["", "   ", "# a comment", "pass", f"print({call})", f"{call}  # note", f"{call};", "x = y = 1",
                         "x, y = 1, 2", "  " + call, "\t" + call, "x == 1", "'''doc'''", call + "(1)"])  # fmt: skip
    if kind == 8:
        return f"{call}{r.choice(SPACES)}"
    return call.replace("(", "(\n", 1) if r.random() < 0.5 else call


def _program(r: random.Random) -> str:
    plain = r.random() < 0.5  # half the programs are plain: the line reader's share
    text = "\n".join(_statement(r, plain) for _ in range(r.randint(0, 6)))
    if not plain and r.random() < 0.3:
        text = mutate(r, text, repeat=3)
    if r.random() < 0.1:
        text = "```python\n" + text + "\n```"
    return text


def _outcome(text: str, variables: dict[str, Any], line_reader: bool, monkeypatch: Any) -> Any:
    if not line_reader:
        monkeypatch.setattr(program, "read_lines", lambda *args, **kwargs: None)
    try:
        result: Any = parse_program(text, FUNCTIONS, CONSTRUCTORS, variables)
    except ProgramError as exc:
        result = ("error", str(exc))
    finally:
        monkeypatch.undo()
    return _canonical((result, variables), {})


def _canonical(value: Any, seen: dict[int, int]) -> Any:
    """``value`` with every type spelled out (True is not 1, -0.0 is not 0.0) and mutable containers
    met again written as references, so sharing counts too; equal strings are equal whatever their
    identity (unlike in a pickle)."""
    if isinstance(value, (list, dict)):
        if id(value) in seen:
            return ("ref", seen[id(value)])
        seen[id(value)] = len(seen)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_canonical(item, seen) for item in value])
    if isinstance(value, dict):
        return ("dict", [(_canonical(k, seen), _canonical(v, seen)) for k, v in value.items()])
    if isinstance(value, program.Call):
        return ("Call", value.line, value.function, _canonical(value.args, seen), _canonical(value.kwargs, seen))
    return (type(value).__name__, repr(value) if isinstance(value, float) else value)


def _both_ways(text: str, variables: dict[str, Any], monkeypatch: Any) -> None:
    fast = _outcome(text, copy.deepcopy(variables), True, monkeypatch)
    slow = _outcome(text, copy.deepcopy(variables), False, monkeypatch)
    assert fast == slow, text


START = {"x": 1, "y": [1, 2], "location": Loc("Denver"), "when": Date(8, 25, 2023), "match": "m", "_": None}


@pytest.mark.parametrize("seed", range(40))
def test_generated_programs_read_the_same_both_ways(seed, monkeypatch):
    r = random.Random(seed)
    for _ in range(150):
        _both_ways(_program(r), START if r.random() < 0.8 else {}, monkeypatch)


def _read_by_lines(text: str, functions: Any, constructors: Any, variables: dict[str, Any]) -> bool:
    code = program.code_in_reply(text)
    return program.read_lines(code, functions, constructors, variables, "API", program.MAX_SEQUENCE) is not None


def test_the_line_reader_reads_every_reference_and_many_generated_programs():
    # The comparisons mean something only if the line reader does read plain programs.
    import gymnasium as gym

    for task_name in ("HomeSearch", "TripBooking"):
        env = gym.make(f"toolbench/{task_name}-v0").unwrapped
        for task in toolbench.load_tasks(task_name):
            assert _read_by_lines(task.references[0], env._specs, env.constructors, {}), task.references[0]
    r = random.Random(0)
    programs = [_program(r) for _ in range(2000)]
    read = sum(_read_by_lines(text, FUNCTIONS, CONSTRUCTORS, START) for text in programs)
    assert 0.3 * len(programs) < read < 0.8 * len(programs)  # both readers get a fair share


@pytest.mark.parametrize("task_name", ["HomeSearch", "TripBooking"])
def test_references_and_their_mutations_read_the_same_both_ways(task_name, monkeypatch):
    import gymnasium as gym

    env = gym.make(f"toolbench/{task_name}-v0").unwrapped
    r = random.Random(task_name)
    for task in toolbench.load_tasks(task_name):
        for text in [task.references[0]] + [mutate(r, task.references[0], repeat=3) for _ in range(5)]:
            fast = _outcome_for(env, text, True, monkeypatch)
            slow = _outcome_for(env, text, False, monkeypatch)
            assert fast == slow, text


def _outcome_for(env: Any, text: str, line_reader: bool, monkeypatch: Any) -> Any:
    if not line_reader:
        monkeypatch.setattr(program, "read_lines", lambda *args, **kwargs: None)
    variables: dict[str, Any] = {}
    try:
        result: Any = parse_program(text, env._specs, env.constructors, variables)
    except ProgramError as exc:
        result = ("error", str(exc))
    finally:
        monkeypatch.undo()
    return _canonical((result, variables), {})
