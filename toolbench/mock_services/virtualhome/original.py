"""The original data: the language-planner's examples and ToolBench's ``test.jsonl`` records.

The language-planner's ``available_examples.json`` is a list of strings, each
``"Task: <activity>\\nStep 1: Walk to kitchen\\nStep 2: ..."``; ToolBench's records are
``{"prompt": <activity>, "completion": [<program of Agent calls>, ...]}``. Neither says in which
home the activity happens, what state it starts from, or what it must achieve. We play them in
home 0 under VirtualHome's rules (``World(rules="original")``), from a start built for the task
out of what all its programs presume, the way VirtualHome's own scripts come with preconditions:
each program is run, and where a precondition fails that a different start would have met (the
light it switches on is on, the cup it grabs sits in a closed cabinet it never opens, it stands
up first), that start fact is a candidate; object by object, the start takes the candidates that
let the most programs run. Its goals are the facts that every reference which runs makes true;
where the references do different things (wipe the plate, or wash it at the sink), they are
alternatives (``goal_options``), each what one group of references agrees on, and the task
succeeds when one alternative holds. Its executable check is ToolBench's own (``check="paper"``).
``replay`` measures all this.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from toolbench.core.tasks import Task, TaskFileError
from toolbench.mock_services.virtualhome.homes import build_home, places_for, room_node
from toolbench.mock_services.virtualhome.objects import PROPERTIES
from toolbench.mock_services.virtualhome.program import (
    Call,
    call_from_step,
    call_text,
    clean_lines,
    ground,
    parse_program,
)
from toolbench.mock_services.virtualhome.world import EXTRA_KINDS, World, fact

_STEP = re.compile(r"^\s*Step\s+\d+\s*:\s*(.*)$", re.IGNORECASE)
ORIGINAL_HOME = 0
ORIGINAL_RULES = "original"
ORIGINAL_CHECK = "paper"
START_ROUNDS = 3  # rounds of finding what the failing programs need, from the start so far
MAX_REPAIRS = 40  # start facts tried per program; no original program needs half as many
MAX_EXTRAS = 3  # extra objects a program may need; more would be a different home
MAX_WAYS = 8  # ways of adding them tried per program


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
    start, alternatives = start_and_goals(references)
    extra = {
        **task.extra,
        "home": ORIGINAL_HOME,
        "rules": ORIGINAL_RULES,
        "check": task.extra.get("check", ORIGINAL_CHECK),
        "start": list(start),
        "goals": list(alternatives[0]) if alternatives else [],
    }
    if len(alternatives) > 1:  # the task succeeds when every fact of one of them holds
        extra["goal_options"] = [list(facts) for facts in alternatives]
    return Task(task.id, task.prompt, references, task.category, extra)


@functools.lru_cache(maxsize=1024)  # a task file read again (another env, a vector env) costs nothing
def start_and_goals(references: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """The start a task's references presume and the alternatives of goals they reach from it."""
    programs = [program_calls(reference) for reference in references]
    start = task_start(programs)
    return tuple(start), tuple(tuple(facts) for facts in derived_goals(start, programs))


def goal_sets(task: Task) -> list[list[str]]:
    """A task's alternatives of goals (``goal_options``), or its one set (``goals``); none without goals."""
    options = task.get("goal_options")
    if options:
        return [list(facts) for facts in options]
    goals = list(task.get("goals", ()))
    return [goals] if goals else []


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


def task_start(programs: list[list[Call]]) -> list[str]:
    """The start a task's programs presume. Each program is run alone to find the start facts it
    needs; then, one object at a time (a device's switch, where the cup is, the posture; the most
    needed first), the start takes the fact, or keeps what it has, whichever lets more of the
    programs run to their end (then: more of their lines). Programs that still fail are run again
    from that start, for what else they need, a few rounds."""
    start = _cleaned(programs)
    best = _how_far(programs, start)
    for _ in range(START_ROUNDS):
        options: dict[tuple[str, str], dict[str, int]] = {}
        for calls in programs:
            for text in program_needs(calls, start):
                choices = options.setdefault(_subject(text), {})
                choices[text] = choices.get(text, 0) + 1
        improved = False
        for subject, choices in sorted(options.items(), key=lambda item: -sum(item[1].values())):
            kept = [text for text in start if _subject(text) != subject]
            tried = [_ordered([*kept, text]) for text in choices]
            for candidate in tried:  # the best, the first of equals
                if not _applies(candidate):
                    continue
                score = _how_far(programs, candidate)
                if score > best:
                    start, best, improved = candidate, score, True
        if not improved:
            break
    return _with_extras(programs, start, best)


def _with_extras(programs: list[list[Call]], start: list[str], best: tuple[int, int, int]) -> list[str]:
    """Where a program still fails for want of an object where another program needs it elsewhere
    (the novel on the desk in one, by the couch in another), the home gets one more of that class
    (or a few), in places ``places_for`` allows for it, if more programs then run. Names bind to
    the home's own object before an extra at equal standing, so most programs that ran go on as
    before; of the ways to add them, the first that lets the most programs run is taken."""
    for calls in programs:
        if run(calls, start)[1] == len(calls):
            continue
        for added in program_extras(calls, start):
            candidate = [*start, *added]
            score = _how_far(programs, candidate)
            if score > best:
                start, best = candidate, score
    return start


def program_extras(calls: list[Call], start: list[str]) -> list[list[str]]:
    """Ways to make a failing program run to its end from ``start`` with extra objects
    (``extra_on(novel, couch)``): each begins with one that takes it further (the furthest first)
    and goes on with the one that takes it furthest, up to ``MAX_EXTRAS`` objects."""
    world = original_world(start)
    names = dict.fromkeys(arg for call in calls for arg in call.args)
    options = [
        option
        for name in names
        if PROPERTIES.get(name, _FIXED).isdisjoint(_FIXED)
        for relation, parent in places_for(name)
        for option in _extra_places(world, name, relation, parent)
    ]

    def further(facts: list[str], reached: int) -> list[tuple[int, str]]:
        """The options that take the program past line ``reached``, the furthest first; where none
        does, the one that meets the start fact the failure asks for (the drying rack in the
        kitchen), which may take it further with another."""
        found = [(run(calls, [*facts, extra])[1], extra) for extra in options if extra not in facts]
        past = sorted(((count, extra) for count, extra in found if count > reached), key=lambda item: -item[0])
        if past:
            return past
        asked = [_as_extra(text, world) for text in run(calls, facts)[2]]
        return [(reached, extra) for extra in options if extra in asked and extra not in facts][:1]

    ways = []
    for count, first in further(list(start), run(calls, start)[1])[:MAX_WAYS]:
        added, reached = [first], count
        while reached < len(calls) and len(added) < MAX_EXTRAS:
            steps = further([*start, *added], reached)
            if not steps:
                break
            reached, extra = steps[0]
            added.append(extra)
        if reached == len(calls):
            ways.append(added)
    return ways


def _extra_places(world: World, name: str, relation: str, parent: str) -> list[str]:
    """One more ``name`` on or in ``parent``: where the home has several (two sinks), one fact per
    room that holds one (``extra_in(water, sink, bathroom)``)."""
    rooms = dict.fromkeys(world.name(room_node(world.home, node)) for node in world.home.ids(parent))
    if len(rooms) < 2:
        return [f"extra_{relation}({name}, {parent})"] if rooms else []
    return [f"extra_{relation}({name}, {parent}, {room})" for room in rooms]


def _as_extra(text: str, world: World) -> str | None:
    """``inside(drying_rack, kitchen)``, a start fact that would have moved the home's own object,
    as one more of its class there (``extra_in(drying_rack, kitchen)``): at the first place
    ``places_for`` allows for the class that is that room or in it."""
    kind, args = fact(text)
    if kind not in ("inside", "on") or len(args) != 2 or "room" not in PROPERTIES.get(args[1], ()):
        return None
    room = world.room_of(world.home.ids(args[1])[0])
    for relation, parent in places_for(args[0]):
        for option in _extra_places(world, args[0], relation, parent):
            parent_rooms = [world.room_of(node) for node in world.home.ids(parent)]
            named = fact(option)[1][2:]  # the room the option names, where the home has several
            if room in parent_rooms and (not named or world.room_of(world.home.ids(named[0])[0]) == room):
                return option
    return None


#: Classes of which no home gets one more: rooms, the character's body, people.
_FIXED = frozenset({"room", "body_part", "person"})


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
    if kind in EXTRA_KINDS:  # one more object decides nothing about the others
        return text, "extra"
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


def derived_goals(start: list[str], programs: Iterable[list[Call]]) -> list[list[str]]:
    """What the references bring about, as alternatives: the task succeeds when every fact of one
    alternative holds. Where the references that run to their end agree on something more than
    where they went, that is the one alternative; where they do not (one cleans the plate with a
    towel, another washes it at the sink), each group of references that agrees on such a fact
    is one. Where none runs to its end, what they made true until they failed stands in."""
    finished, partial = [], []
    for calls in programs:
        before = original_world(start)
        world, reached, _ = run(calls, start)
        made = world.facts() - before.facts()
        if world.room != before.room:
            made.add(f"in_room({world.name(world.room)})")
        (finished if calls and reached == len(calls) else partial).append(made)
    return goal_alternatives(finished or partial)


def weight(text: str) -> int:
    """How much a goal fact says: 2 for what the character did to or with something (or changed),
    1 for going to an object, 0 for being in (or going to) a room."""
    kind, args = fact(text)
    if kind == "in_room" or (kind == "did" and args[0] == "go_to" and "room" in PROPERTIES.get(args[1], ())):
        return 0
    return 1 if kind == "did" and args[0] == "go_to" else 2


def goal_alternatives(outcomes: list[set[str]]) -> list[list[str]]:
    """Alternatives of goal facts, each the facts one group of ``outcomes`` shares. An outcome's
    weight is its weightiest fact's; it joins the first group of its weight with which it shares the
    most facts of that weight, or starts one. So one that only walked to the shower does not strip
    another's washing from its group, and gets an alternative of its own. Where no outcome does more
    than enter a room, entering it is the goal; elsewhere an alternative must say more. An
    alternative that holds another holds more than it needs, and goes."""
    top = max((weight(text) for made in outcomes for text in made), default=0)
    groups: list[tuple[int, set[str]]] = []
    for made in outcomes:
        level = max(map(weight, made), default=0)
        if level == 0 < top:
            continue
        scores = [sum(weight(text) >= level for text in shared & made) if at == level else 0 for at, shared in groups]
        best = max(range(len(groups)), key=scores.__getitem__, default=None)
        if best is not None and scores[best]:
            groups[best][1].intersection_update(made)
        elif made:
            groups.append((level, set(made)))
    unique = {tuple(sorted(shared)) for _, shared in groups}
    kept = [facts for facts in unique if not any(set(other) < set(facts) for other in unique)]
    # The largest group first: a reader that knows one set of goals gets the most widely shared.
    return [list(facts) for facts in sorted(kept, key=lambda facts: (-_members(facts, outcomes), facts))]


def _members(facts: tuple[str, ...], outcomes: list[set[str]]) -> int:
    return sum(set(facts) <= made for made in outcomes)


@dataclass(frozen=True)
class Replay:
    """How the original reference programs fare in the simulator (``replay``)."""

    tasks: int
    programs: int
    executable: int  # pass the executable check
    executing: int  # and run to their end in the simulator from their task's start
    with_goals: int  # tasks with goals
    reaching: int  # programs that run to their end and meet all their task's goals
    agreed: int  # tasks with a reference that runs, whose goals every reference that runs meets
    alternatives: int  # tasks with more than one alternative of goals
    failures: Counter[str] = field(default_factory=Counter)  # the first failed precondition, by kind

    def report(self, check: str) -> str:
        def share(count: int, total: int) -> str:
            return f"{count:,} / {total:,} ({count / total:.1%})" if total else "0 / 0"

        lines = [
            f"tasks: {self.tasks:,}, reference programs: {self.programs:,}",
            f"executable ({check} check): {share(self.executable, self.programs)}",
            f"execute in the simulator from their task's start: {share(self.executing, self.programs)}",
            f"tasks with goals: {share(self.with_goals, self.tasks)}",
            f"tasks whose goals every running reference meets: {share(self.agreed, self.tasks)}",
            f"reference programs reaching their task's goals: {share(self.reaching, self.programs)}",
            f"running programs reaching their task's goals: {share(self.reaching, self.executing)}",
            f"tasks with goal alternatives: {share(self.alternatives, self.tasks)}",
            "most frequent failures:",
        ]
        lines += [f"  {count:4d}  {why}" for why, count in self.failures.most_common(8)]
        return "\n".join(lines)


def replay(tasks: Iterable[Task], check: str = ORIGINAL_CHECK) -> Replay:
    """Run every reference of every task from the task's start, under the task's rules."""
    counts = Counter()
    failures: Counter[str] = Counter()
    for task in tasks:
        alternatives = goal_sets(task)
        counts["tasks"] += 1
        counts["with_goals"] += bool(alternatives)
        counts["alternatives"] += len(alternatives) > 1
        agreed, ran = True, False
        for reference in task.references:
            counts["programs"] += 1
            if not all(call.executable for call in parse_program(reference, check)):
                failures["not executable"] += 1
                continue
            counts["executable"] += 1
            world = World(build_home(int(task.get("home", 0))), task.get("start", ()), task.get("rules", "ours"))
            result = None
            for call in parse_program(reference):
                result = world.do(call.action or "", call.args)
                if not result.ok:
                    break
            if result is not None and not result.ok:
                failures[_kind(result.message)] += 1
                continue
            counts["executing"] += 1
            ran = True
            reached = any(all(world.holds(goal) for goal in goals) for goals in alternatives)
            counts["reaching"] += reached
            agreed = agreed and reached
        counts["agreed"] += agreed and ran and bool(alternatives)
    return Replay(**{name: counts[name] for name in _COUNTS}, failures=failures)


_COUNTS = ("tasks", "programs", "executable", "executing", "with_goals", "reaching", "agreed", "alternatives")


def _kind(message: str) -> str:
    """The kind of a failure: its reason with the objects written X ("X is inside the closed X")."""
    why = message.partition(": ")[2]
    words = why.split()
    return " ".join("X" if word in PROPERTIES else word for word in words)
