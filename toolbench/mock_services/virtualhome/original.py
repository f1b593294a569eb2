"""The original data: the language-planner's examples and ToolBench's ``test.jsonl`` records.

The language-planner's ``available_examples.json`` is a list of strings, each
``"Task: <activity>\\nStep 1: Walk to kitchen\\nStep 2: ..."``; ToolBench's records are
``{"prompt": <activity>, "completion": [<program of Agent calls>, ...]}``. Neither says in which
home the activity happens, what state it starts from, or what it must achieve. We play them in
home 0, with start facts inferred from the program the way VirtualHome's own scripts come with
preconditions (a program that switches a light off starts with the light on; one that begins
with ``Wake up`` starts asleep in bed), and with goals derived from the references: the facts
every runnable reference makes true.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

from toolbench.core.tasks import Task, TaskFileError
from toolbench.mock_services.virtualhome.homes import build_home
from toolbench.mock_services.virtualhome.program import call_from_step, call_text, clean_lines, ground
from toolbench.mock_services.virtualhome.world import World

_STEP = re.compile(r"^\s*Step\s+\d+\s*:\s*(.*)$", re.IGNORECASE)
ORIGINAL_HOME = 0


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
    start = infer_start(references[0]) if references else []
    extra = {**task.extra, "home": ORIGINAL_HOME, "start": start, "goals": derived_goals(start, references)}
    return Task(task.id, task.prompt, references, task.category, extra)


def infer_start(program: str) -> list[str]:
    """Start facts the program presumes: what it switches off, closes, unplugs or takes off first
    was on, open, plugged in or worn; what it plugs in before switching on was unplugged; what it
    cleans was dirty; a program that starts by standing up starts seated, one that wakes up asleep."""
    calls = [call for call in (ground(line) for line in clean_lines(program)) if call.executable]
    facts: list[str] = []
    seen: dict[str, list[str]] = {}
    for call in calls:
        if call.args:
            seen.setdefault(call.args[0], []).append(call.action or "")
    for name, actions in seen.items():
        first = {action: index for index, action in reversed(list(enumerate(actions)))}

        def earlier(a: str, b: str, first: dict[str, int] = first) -> bool:
            return a in first and (b not in first or first[a] < first[b])

        for action, opposite, state in _FIRST_SAYS:
            if earlier(action, opposite):
                facts.append(f"{state}({name})")
        if any(action in first for action in ("Wash", "Rinse", "Scrub", "Wipe")):
            facts.append(f"dirty({name})")
    facts += _reachable(calls)
    if calls and calls[0].action == "StandUp":
        facts.append("sitting_on(couch)")
    if calls and calls[0].action == "WakeUp":
        facts += ["lying_on(bed)", "asleep()"]
    return [fact for fact in facts if _applies(fact)]


#: (action, its opposite, the state the object had if the action comes first).
_FIRST_SAYS = (
    ("SwitchOn", "SwitchOff", "off"),
    ("SwitchOff", "SwitchOn", "on"),
    ("Open", "Close", "closed"),
    ("Close", "Open", "open"),
    ("PlugIn", "PlugOut", "plugged_out"),
    ("PlugOut", "PlugIn", "plugged_in"),
    ("TakeOff", "PutOn", "worn"),
)


def _reachable(calls: list) -> list[str]:
    """What the program grabs without opening the closed container it is kept in starts out on
    top of that container: the program presumes it at hand."""
    world = World(build_home(ORIGINAL_HOME))
    opened: set[str] = set()
    facts = []
    for call in calls:
        if call.action == "Open":
            opened.add(call.args[0])
        if call.action == "Grab":
            for node in world.home.ids(call.args[0]):
                container = world.in_closed(node)
                if container is not None and world.name(container) not in opened:
                    facts.append(f"on({call.args[0]}, {world.name(container)})")
    return facts


def _applies(fact: str) -> bool:
    try:
        World(build_home(ORIGINAL_HOME), [fact])
    except (ValueError, KeyError, IndexError):
        return False
    return True


def derived_goals(start: list[str], programs: Iterable[str]) -> list[str]:
    """The facts that every reference which runs to its end makes true (none if none runs)."""
    home = build_home(ORIGINAL_HOME)
    common: set[str] | None = None
    for program in programs:
        world = World(home, start)
        before = world.facts()
        calls = [ground(line) for line in clean_lines(program)]
        if not calls or not all(call.executable and world.do(call.action or "", call.args).ok for call in calls):
            continue
        made = world.facts() - before
        common = made if common is None else common & made
    return sorted(common or ())
