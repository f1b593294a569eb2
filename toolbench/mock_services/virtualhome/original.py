"""The original data: the language-planner's examples and ToolBench's ``test.jsonl`` records.

The language-planner's ``available_examples.json`` is a list of strings, each
``"Task: <activity>\\nStep 1: Walk to kitchen\\nStep 2: ..."``; ToolBench's records are
``{"prompt": <activity>, "completion": [<program of Agent calls>, ...]}``. Neither says in which
home the activity happens, what state it starts from, or what it must achieve. We play them in
home 0 under VirtualHome's rules (``World(rules="original")``), from a start built for the task
out of what all its programs presume, the way VirtualHome's own scripts come with preconditions:
each program is run, and where a precondition fails that a different start would have met (the
light it switches on is on, the cup it grabs sits in a closed cabinet it never opens, it stands
up first), that start fact is added; the task starts from the facts most of its programs need.
Its goals are the facts that every reference which runs makes true, and its executable check is
ToolBench's own (``check="paper"``).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from toolbench.core.tasks import Task, TaskFileError
from toolbench.mock_services.virtualhome.homes import build_home
from toolbench.mock_services.virtualhome.objects import PROPERTIES
from toolbench.mock_services.virtualhome.program import Call, call_from_step, call_text, clean_lines, ground
from toolbench.mock_services.virtualhome.world import World, fact

_STEP = re.compile(r"^\s*Step\s+\d+\s*:\s*(.*)$", re.IGNORECASE)
ORIGINAL_HOME = 0
ORIGINAL_RULES = "original"
ORIGINAL_CHECK = "paper"
MAX_REPAIRS = 40  # start facts tried per program; no original program needs half as many


def program_from_steps(text: str) -> str:
    """English steps (``Step 1: Walk to kitchen``) as API lines; other lines are kept as they are
    (so they count as non-executable), and lines already in API form pass through."""
    lines = []
    for raw in text.splitlines():
        if not raw.strip() or raw.strip().startswith("Task:"):
            continue
        match = _STEP.match(raw)
        step = match.group(1) if match else raw.strip()
        call = call_from_step(step) if not step.startswith("Agent.") else None
        lines.append(call_text(*call) if call else step)
    return "\n".join(lines)


def read_original_examples(path: str | Path, id_prefix: str) -> list[Task]:
    """Tasks from the language-planner's example list: one task per activity, its distinct
    programs as references (in the order they first appear)."""
    with open(path, encoding="utf-8") as handle:
        examples = json.load(handle)
    if not isinstance(examples, list) or not all(isinstance(item, str) for item in examples):
        raise TaskFileError(f"{path}: expected a JSON list of 'Task: ...' example strings")
    programs: dict[str, list[str]] = {}
    for example in examples:
        head, _, rest = example.partition("\n")
        if not head.startswith("Task:"):
            raise TaskFileError(f"{path}: an example does not start with 'Task:': {example[:60]!r}")
        program = program_from_steps(rest)
        solutions = programs.setdefault(head.removeprefix("Task:").strip(), [])
        if program not in solutions:
            solutions.append(program)
    return [
        record_from_original(Task(id=f"{id_prefix}-{index:04d}", prompt=name, references=tuple(solutions)))
        for index, (name, solutions) in enumerate(programs.items())
    ]


def record_from_original(task: Task) -> Task:
    """Complete a record without our keys (``home``, ``start``, ``goals``); ours pass unchanged."""
    if "goals" in task.extra:
        return task
    references = tuple(program_from_steps(reference) for reference in task.references)
    programs = [program_calls(reference) for reference in references]
    start = task_start(programs)
    extra = {
        **task.extra,
        "home": ORIGINAL_HOME,
        "rules": ORIGINAL_RULES,
        "check": task.extra.get("check", ORIGINAL_CHECK),
        "start": start,
        "goals": derived_goals(start, programs),
    }
    return Task(task.id, task.prompt, references, task.category, extra)


def program_calls(program: str) -> list[Call]:
    """The calls of a reference program (a line ToolBench would refuse stays, not executable)."""
    return [ground(line) for line in clean_lines(program)]


def original_world(start: Iterable[str] = ()) -> World:
    return World(build_home(ORIGINAL_HOME), start, rules=ORIGINAL_RULES)


def run(calls: list[Call], start: Iterable[str], strict: bool = False) -> tuple[World, int, tuple[str, ...]]:
    """Run a program from ``start``: the world after it, how many lines ran, and the start facts
    under which the line that failed would have run (none where no start would help). ``strict``:
    an action with nothing to do (switching on what is on) counts as failed, as in VirtualHome."""
    world = original_world(start)
    for number, call in enumerate(calls):
        if not call.executable:
            return world, number, ()
        result = world.do(call.action or "", call.args)
        if not result.ok or (strict and result.fix):
            return world, number, _IMPLIES.get(result.fix, (result.fix,) if result.fix else ())
    return world, len(calls), ()


#: Start facts that need others: an asleep character is lying in bed.
_IMPLIES = {"asleep()": ("lying_on(bed)", "asleep()")}


def infer_start(program: str) -> list[str]:
    """The start one program presumes on its own (``task_start`` of that program alone)."""
    return task_start([program_calls(program)])


def task_start(programs: list[list[Call]]) -> list[str]:
    """The start a task's programs presume. Each program is run alone to find the start facts it
    needs; then, one object at a time (a device's switch, where the cup is, the posture; the most
    needed first), the start takes the fact, or leaves the home as it is, whichever lets more of
    the programs run to their end (then: more of their lines)."""
    base = _cleaned(programs)
    options: dict[tuple[str, str], dict[str, int]] = {}
    for calls in programs:
        for text in program_needs(calls, base):
            choices = options.setdefault(_subject(text), {})
            choices[text] = choices.get(text, 0) + 1
    start = list(base)
    best = _how_far(programs, start)
    for choices in sorted(options.values(), key=lambda votes: -sum(votes.values())):
        tried = [_ordered([*start, text]) for text in choices]
        scored = [(_how_far(programs, candidate), candidate) for candidate in tried if _applies(candidate)]
        for score, candidate in scored:  # the best, the first of equals
            if score > best:
                start, best = candidate, score
    return start


def _how_far(programs: list[list[Call]], start: list[str]) -> tuple[int, int, int]:
    """How many programs run to their end from ``start``; how many do with every action needed
    (none switching on what is on); how many lines run so."""
    ends = sum(run(calls, start)[1] == len(calls) for calls in programs)
    reached = [run(calls, start, strict=True)[1] for calls in programs]
    return ends, sum(n == len(calls) for n, calls in zip(reached, programs)), sum(reached)


def program_needs(calls: list[Call], base: list[str]) -> list[str]:
    """The start facts, beyond ``base``, under which the program runs further (to its end, if it can)."""
    facts = list(base)
    _, reached, fix = run(calls, facts, strict=True)
    for _ in range(MAX_REPAIRS):
        if reached == len(calls) or not fix or all(text in facts for text in fix):
            break
        subjects = {_subject(text) for text in fix}
        candidate = _ordered([*(text for text in facts if _subject(text) not in subjects), *fix])
        if not _applies(candidate):
            break
        _, further, next_fix = run(calls, candidate, strict=True)
        if further <= reached:
            break
        facts, reached, fix = candidate, further, next_fix
    return [text for text in facts if text not in base]


def _cleaned(programs: list[list[Call]]) -> list[str]:
    """What any program washes, rinses, scrubs or wipes starts dirty (so cleaning it changes it)."""
    names = {call.args[0] for calls in programs for call in calls if call.action in ("Wash", "Rinse", "Scrub", "Wipe")}
    return [f"dirty({name})" for name in sorted(names) if "body_part" not in PROPERTIES.get(name, ())]


def _subject(text: str) -> tuple[str, str]:
    """What a start fact decides, so that two facts deciding it conflict: a device's switch, an
    object's place, the character's posture."""
    kind, args = fact(text)
    if kind in ("on", "off"):
        return args[0], "switch" if len(args) == 1 else "place"
    groups = {"open": "door", "closed": "door", "plugged_in": "plug", "plugged_out": "plug", "dirty": "dirt"}
    if kind in groups:
        return args[0], groups[kind]
    if kind in ("inside", "worn", "held"):
        return args[0], "place"
    if kind in ("sitting_on", "lying_on"):
        return "character", "posture"
    return "character", kind


def _ordered(facts: Iterable[str]) -> list[str]:
    """Distinct facts, places first and the character's posture last (sitting down moves it)."""
    unique = list(dict.fromkeys(facts))
    return sorted(unique, key=lambda text: _subject(text)[0] == "character")


def _applies(facts: list[str]) -> bool:
    try:
        original_world(facts)
    except (ValueError, KeyError, IndexError):
        return False
    return True


def derived_goals(start: list[str], programs: Iterable[list[Call]]) -> list[str]:
    """What the references bring about: the facts that every reference which runs to its end makes
    true (the room it ends in, what it did, where things are, ...). Where they agree on none, the
    facts most of them make true; where none runs to its end, what they made true until they failed."""
    finished, partial = [], []
    for calls in programs:
        before = original_world(start)
        world, reached, _ = run(calls, start)
        made = world.facts() - before.facts()
        if world.room != before.room:
            made.add(f"in_room({world.name(world.room)})")
        (finished if calls and reached == len(calls) else partial).append(made)
    outcomes = finished or partial
    common = set.intersection(*outcomes) if outcomes else set()
    if common:
        return sorted(common)
    support = Counter(text for made in outcomes for text in made)
    most = max(support.values(), default=0)
    return sorted(text for text, count in support.items() if count == most)
