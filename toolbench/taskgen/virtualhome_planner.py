"""A planner for the VirtualHome task sets: goal facts -> a natural ``Agent.<Action>(...)`` program.

``plan(world, goals, rng)`` reads the world (where things are, which containers are closed, which
devices are plugged in, the character's posture) and writes the calls a person would list in the
language-planner's style: walk to the room, find the object, open its container, grab it, find the
destination, open it, put it in, close it; plug in and switch on devices; sit or lie down last.
Every call is run on a copy of the world as it is written, so every step of a plan succeeds, and the
plan ends with every goal true (``PlanError`` otherwise). ``rng`` drives the natural variation:
walking to the room first or not, ``Find`` or ``WalkTo``, turning to a device before using it,
closing containers afterwards, the order of independent goals, batching two things to one place.

Like the language-planner's programs, every object a call uses was found or walked to earlier in
the program (body parts excepted), and ``Grab`` always follows a ``Find``/``WalkTo`` of the object.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from toolbench.mock_services.virtualhome.objects import BODY_PARTS, PROPERTIES
from toolbench.mock_services.virtualhome.program import call_text
from toolbench.mock_services.virtualhome.world import World, fact

Step = tuple[str, tuple[str, ...]]
Goal = tuple[str, str, tuple[str, ...]]  # (text, kind, args)

NAVIGATION = frozenset({"WalkTo", "RunTo", "Find"})
#: Events the character can do without walking, so with a posture goal they come after sitting down.
SEATED_VERBS = frozenset({"watch", "look_at", "read", "drink", "eat", "type_on", "greet"})
CLEAN_VERBS = {"wipe": "Wipe", "wash": "Wash", "rinse": "Rinse", "scrub": "Scrub"}
#: What one cleans a fixed thing with (the first choices are the likeliest).
TOOLS = {
    "floor": ("mop",),
    "toilet": ("sponge", "brush", "rag"),
    "bathtub": ("sponge", "brush", "rag"),
    "sink": ("sponge", "rag"),
    "mirror": ("towel", "rag", "paper_towel"),
    "window": ("rag", "paper_towel", "towel"),
    "television": ("duster", "rag", "paper_towel"),
    "computer": ("duster", "rag", "paper_towel"),
    "bookshelf": ("duster", "rag"),
    "hands_both": ("towel",),
    "face": ("towel",),
    "hair": ("towel",),
}
DEFAULT_TOOLS = ("rag", "sponge", "paper_towel")
KNIVES = ("knife", "chef_knife")
DISH_LIKE = frozenset(
    ["plate", "bowl", "cup", "coffee_cup", "drinking_glass", "water_glass", "pot", "sauce_pan", "coffee_pot"]
)


class PlanError(Exception):
    """No natural program reaches the goals from this world (or this attempt went astray)."""


def plan(world: World, goals: Sequence[str], rng: random.Random, attempts: int = 6) -> list[Step]:
    """Calls ``(action, args)`` that reach every goal from ``world`` (which is left unchanged)."""
    parsed = [(text, *fact(text)) for text in goals]
    seated_first = True
    last: PlanError | None = None
    for attempt in range(attempts):
        try:
            return _Planner(world, parsed, rng).run(seated_after=seated_first)
        except PlanError as exc:
            last = exc
            if attempt % 2 == 1:  # events before the posture, when after it cannot work
                seated_first = not seated_first
    raise PlanError(f"no plan for {list(goals)}: {last}")


def props(name: str) -> frozenset[str]:
    return PROPERTIES.get(name, frozenset())


class _Planner:
    def __init__(self, world: World, goals: list[Goal], rng: random.Random) -> None:
        self.w = world.copy()
        self.goals = goals
        self.rng = rng
        self.steps: list[Step] = []
        self.bound: set[str] = set()  # names found or walked to
        self.pending: list[Goal] = []
        self.keep: set[str] = set()  # held things the current operation needs
        self.soon: set[str] = set()  # things the current operation is about to fetch
        self.faucet_turned_on = False
        # A style per plan, so that plans differ in more than one place.
        self.p_room = rng.choice((0.5, 0.8, 1.0))  # walk to an object's room before finding it
        self.p_room_start = rng.choice((0.0, 0.3, 0.6))  # walk to the room one is in, as a first step
        self.p_find = rng.choice((0.55, 0.8, 0.95))  # Find rather than WalkTo
        self.p_close = rng.choice((0.5, 0.8, 1.0))  # close a container after using it
        self.p_turn = rng.choice((0.0, 0.25, 0.5))  # turn to / look at a device before using it
        self.p_refind = rng.choice((0.1, 0.4))  # find again what is already close
        self.p_run = rng.choice((0.0, 0.0, 0.12))  # run instead of walking to a room
        self.p_extra = rng.choice((0.2, 0.5))  # optional touches: faucet, soap, putting things back

    # ------------------------------------------------------------------ helpers
    def node(self, name: str) -> int:
        """The object of that class the world would use now (held, close, in this room, first)."""
        ids = self.w.home.ids(name)
        if not ids:
            raise PlanError(f"no {name} in this home")
        if len(ids) == 1:
            return ids[0]
        w = self.w
        return min(ids, key=lambda n: (not w.is_held(n), not w.is_close(n), w.room_of(n) != w.room, n))

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def holds(self, text: str) -> bool:
        return self.w.holds(text)

    def is_held(self, name: str) -> bool:
        return self.w.is_held(self.node(name))

    def is_close(self, name: str) -> bool:
        return self.w.is_close(self.node(name))

    def state(self, name: str) -> frozenset[str]:
        return self.w.states[self.node(name)]

    def held_names(self) -> list[str]:
        return [self.w.names[n] for n in self.w.held()]

    def room_of(self, name: str) -> str:
        return self.w.names[self.w.room_of(self.node(name))]

    def act(self, action: str, *args: str) -> None:
        if action not in NAVIGATION:
            for arg in args:
                if arg in self.bound or arg in BODY_PARTS or "room" in props(arg):
                    continue
                if not self.is_close(arg):
                    raise PlanError(f"{action}({', '.join(args)}): {arg} was never found")
                self.act("Find", arg)  # close but not yet named: find it (no walking)
        result = self.w.do(action, tuple(args))
        if not result.ok:
            raise PlanError(result.message)
        self.steps.append((action, tuple(args)))
        if action in NAVIGATION:
            self.bound.add(args[0])

    # ------------------------------------------------------------------ the plan
    def run(self, seated_after: bool) -> list[Step]:
        order = self.ordered(seated_after)
        self.pending = list(order)
        while self.pending:
            goal = self.pending[0]
            text, kind, args = goal
            if kind != "prep" and self.holds(text):
                self.pending.pop(0)
                continue
            if not self.batch():
                self.achieve(goal)
            self.pending.pop(0)
        for text, kind, args in self.goals:  # a later step may have undone an earlier goal
            if not self.holds(text):
                self.pending = [(text, kind, args)]
                self.achieve((text, kind, args))
        missed = [text for text, _, _ in self.goals if not self.holds(text)]
        if missed:
            raise PlanError(f"goals not reached: {missed}")
        if not self.steps:
            raise PlanError("empty plan")
        return self.steps

    def ordered(self, seated_after: bool) -> list[Goal]:
        kinds = {kind for _, kind, _ in self.goals}
        posture = bool(kinds & {"sitting_on", "lying_on"})
        targets = set()  # things something is put in or poured into, or that are carried somewhere
        held_goals = {args[0] for _, kind, args in self.goals if kind == "held"}
        for _, kind, args in self.goals:
            if kind in ("inside", "on") and len(args) == 2:
                targets.update(args)
            if kind == "did" and args[0] == "pour":
                targets.add(args[2])
        portable_on = any(kind == "on" and len(args) == 1 and args[0] in held_goals for _, kind, args in self.goals)
        verbed = {args[1] for _, kind, args in self.goals if kind == "did" and args[0] in CLEAN_VERBS}
        ranked: list[tuple[float, Goal]] = []
        for goal in self.goals:
            _, kind, args = goal
            if kind == "clean" and args[0] in verbed:
                continue  # washing (wiping, ...) it is what makes it clean
            rank = self.rank(kind, args, targets, held_goals, portable_on)
            if posture and seated_after and kind == "did" and args[0] in SEATED_VERBS:
                ranked.append((4.5, ("prep", "prep", args)))
                rank = 5.2
            ranked.append((rank, goal))
        groups: dict[float, list[Goal]] = {}
        for rank, goal in ranked:
            groups.setdefault(rank, []).append(goal)
        order: list[Goal] = []
        for rank in sorted(groups):
            group = groups[rank]
            self.rng.shuffle(group)
            order.extend(group)
        return order

    @staticmethod
    def rank(kind: str, args: tuple[str, ...], targets: set[str], held: set[str], portable_on: bool) -> float:
        if kind == "awake":
            return 0
        if kind in ("worn", "plugged_in", "open", "clean", "dirty"):
            return 1
        if kind == "did":
            verb = args[0]
            if verb in CLEAN_VERBS:
                return 1
            return {"pour": 3.0, "cut": 3.1, "sleep": 5.5}.get(verb, 3.2)
        if kind in ("inside", "on") and len(args) == 2:
            return 2
        if kind == "held":
            return 2
        if kind == "in_room":
            return 2.2 if portable_on else 7
        if kind == "on":
            if args[0] in held:
                return 2.5
            return 4 if args[0] in targets else 2
        if kind in ("off", "closed", "plugged_out"):
            return 4
        if kind in ("sitting_on", "lying_on", "standing"):
            return 5
        if kind == "asleep":
            return 5.5
        return 7  # close_to, facing

    def achieve(self, goal: Goal) -> None:
        text, kind, args = goal
        if kind == "prep":
            self.prepare(args)
        elif kind in ("inside", "on") and len(args) == 2:
            if "room" in props(args[1]):
                self.deliver_to_room(args[0], args[1])
            else:
                self.deliver([args[0]], "in" if kind == "inside" else "on", args[1])
        elif kind == "held":
            self.acquire(args[0])
        elif kind == "worn":
            self.acquire(args[0])
            self.act("PutOn", args[0])
        elif kind == "close_to":
            self.approach(args[0])
        elif kind == "facing":
            if self.room_of(args[0]) != self.w.names[self.w.room] or args[0] not in self.bound:
                self.approach(args[0])
            self.act("TurnTo", args[0])
        elif kind == "in_room":
            self.go_room(args[0])
        elif kind == "sitting_on":
            self.sit(args[0])
        elif kind == "lying_on":
            self.lie(args[0])
        elif kind == "standing":
            self.ensure_standing()
        elif kind == "awake":
            self.act("WakeUp")
        elif kind == "asleep":
            self.sleep()
        elif kind == "did":
            self.event(args)
        elif kind == "on":
            self.switch_on(args[0])
        elif kind == "off":
            self.approach(args[0])
            self.maybe_turn(args[0])
            self.act("SwitchOff", args[0])
        elif kind in ("plugged_in", "plugged_out"):
            self.approach(args[0])
            self.ensure_free_hand()
            self.act("PlugIn" if kind == "plugged_in" else "PlugOut", args[0])
        elif kind == "open":
            self.open(args[0])
        elif kind == "closed":
            self.approach(args[0])
            self.act("Close", args[0])
        elif kind == "clean":
            self.clean(args[0], None)
        else:
            raise PlanError(f"cannot plan for {text}")

    # ------------------------------------------------------------------ what pending goals need
    def needed(self) -> set[str]:
        """Held things that pending goals still use, so they are not put down."""
        names = set(self.keep)
        for _, kind, args in self.goals:
            if kind in ("held", "worn"):
                names.add(args[0])
        for _, kind, args in self.pending:
            if kind in ("inside", "on") and len(args) == 2:
                names.add(args[0])
            elif kind in ("did", "prep") and args[0] in ("pour", "drink", "read", "eat", "type_on"):
                names.update(args[1:])
        return names

    def keep_open(self) -> set[str]:
        """Containers that later goals put things in or pour into, that still hold something a
        pending goal needs, or that a goal wants open."""
        names = set()
        for _, kind, args in self.pending[1:]:  # pending[0] is the goal being achieved
            if kind == "inside":
                names.add(args[1])
            elif kind == "did" and args[0] == "pour":
                names.add(args[2])
        wanted = set(self.soon)
        for _, kind, args in self.pending:
            if kind in ("inside", "on", "held", "worn") and args:
                wanted.add(args[0])
            elif kind in ("did", "prep") and args[0] in ("pour", "drink", "read", "eat", "cut"):
                wanted.update(args[1:])
        for name in sorted(wanted):
            if self.w.home.ids(name) and not self.is_held(name):
                names.update(self.containers(name))
        for _, kind, args in self.goals:
            if kind == "open":
                names.add(args[0])
        return names

    def posture_goal(self) -> bool:
        return any(kind in ("sitting_on", "lying_on", "asleep") for _, kind, _ in self.goals)

    def must_close(self, name: str) -> bool:
        return any(kind == "closed" and args[0] == name for _, kind, args in self.goals)

    # ------------------------------------------------------------------ moving
    def ensure_standing(self) -> None:
        if self.w.asleep:
            self.act("WakeUp")
        if self.w.posture != "standing":
            self.act("StandUp")

    def go_room(self, room: str) -> None:
        if self.w.names[self.w.room] == room:
            return
        self.ensure_standing()
        self.act("RunTo" if self.chance(self.p_run) else "WalkTo", room)

    def outer_closed(self, name: str) -> str | None:
        """The outermost closed container the object is inside, if any."""
        found = None
        current = self.node(name)
        while (where := self.w.place.get(current)) is not None:
            if where[0] == "in" and "closed" in self.w.states[where[1]]:
                found = where[1]
            current = where[1]
        return None if found is None else self.w.names[found]

    def containers(self, name: str) -> list[str]:
        """The openable containers the object is inside, innermost first."""
        chain = []
        current = self.node(name)
        while (where := self.w.place.get(current)) is not None:
            if where[0] == "in" and "can_open" in self.w.props(where[1]):
                chain.append(self.w.names[where[1]])
            current = where[1]
        return chain

    def approach(self, name: str) -> None:
        """Get close to an object (opening what it is shut in), naming it with Find or WalkTo."""
        node = self.node(name)
        if name in BODY_PARTS:
            return
        if self.w.is_held(node) or node in self.w.worn:
            if name not in self.bound:
                self.act("Find", name)
            return
        if self.w.is_close(node) and self.w.in_closed(node) is None:
            if name not in self.bound or self.chance(self.p_refind):
                self.act("Find", name)
            return
        seated = self.w.posture != "standing" and not self.w.asleep
        reachable = seated and self.w.room_of(node) == self.w.room and self.w.in_closed(node) is None
        if reachable and (self.posture_goal() or self.chance(0.5)):
            self.act("Find", name)  # within reach of the seat
            return
        self.ensure_standing()
        container = self.outer_closed(name)
        if container is not None:
            self.approach(container)
            self.open(container)
            inner = self.outer_closed(name)
            if inner is not None:
                self.approach(name)
                return
            self.act("Find" if self.chance(self.p_find) else "WalkTo", name)
            return
        room = self.room_of(name)
        if room != self.w.names[self.w.room]:
            if self.chance(self.p_room):
                self.go_room(room)
        elif not self.steps and self.chance(self.p_room_start):
            self.act("WalkTo", room)
        self.act("Find" if self.chance(self.p_find) else "WalkTo", name)

    def maybe_turn(self, name: str) -> None:
        if self.chance(self.p_turn):
            self.act("TurnTo" if self.chance(0.7) else "LookAt", name)

    # ------------------------------------------------------------------ hands
    def ensure_free_hand(self) -> None:
        if None in self.w.hands:
            return
        needed = self.needed()
        for name in self.held_names():
            if name not in needed:
                self.put_down(name)
                return
        raise PlanError("both hands are full of things still needed")

    def put_down(self, name: str) -> None:
        node = self.node(name)
        origin = self.w.taken_from.get(node)
        if origin is not None and "room" not in self.w.props(origin[1]):
            target = origin[1]
            shut = origin[0] == "in" and "can_open" in self.w.props(target) and "open" not in self.w.states[target]
            if not shut and self.w.is_close(target) and self.w.in_closed(target) is None:
                self.act("PutBack", name)
                return
        surfaces = sorted(
            self.w.names[m]
            for m in self.w.close
            if "surface" in self.w.props(m)
            and "grabbable" not in self.w.props(m)
            and not self.w.is_held(m)
            and self.w.in_closed(m) is None
            and m != node
        )
        if surfaces:
            self.act("Put", name, self.rng.choice(surfaces))
        else:
            self.act("Drop", name)

    def acquire(self, name: str) -> None:
        """Get the object into a hand."""
        node = self.node(name)
        if self.w.is_held(node):
            return
        if node in self.w.worn:
            self.act("TakeOff", name)
            if self.w.is_held(node):  # a world where taking off leaves it in the hand
                return
            self.ensure_free_hand()
            self.act("Grab", name)
            return
        if name == "water":
            self.fetch_water()
            return
        chain = self.containers(name)
        self.approach(name)
        self.ensure_free_hand()
        self.act("Grab", name)
        for container in chain:  # innermost first
            self.maybe_close(container)

    def fetch_water(self) -> None:
        faucet_first = self.chance(0.5)
        if faucet_first:
            self.approach("faucet" if self.chance(0.6) else "sink")
        self.approach("water")
        if "off" in self.state("faucet") and self.chance(0.4 + self.p_extra):
            self.maybe_turn("faucet")
            self.act("SwitchOn", "faucet")
            self.faucet_turned_on = True
        self.ensure_free_hand()
        self.act("Grab", "water")
        self.faucet_off()

    def faucet_off(self) -> None:
        if self.faucet_turned_on and "on" in self.state("faucet") and self.is_close("faucet"):
            if not any(kind == "on" and args == ("faucet",) for _, kind, args in self.goals):
                self.act("SwitchOff", "faucet")
            self.faucet_turned_on = False

    def open(self, name: str) -> None:
        if "open" in self.state(name):
            return
        if not self.is_close(name) or self.w.in_closed(self.node(name)) is not None:
            self.approach(name)
        if "on" in self.state(name):
            self.act("SwitchOff", name)
        self.ensure_free_hand()
        self.act("Open", name)

    def maybe_close(self, name: str) -> None:
        if "open" not in self.state(name) or name in self.keep_open():
            return
        if self.must_close(name) or self.chance(self.p_close):
            if not self.is_close(name):
                return  # closed later, if a goal wants it closed
            self.act("Close", name)

    def return_item(self, name: str) -> None:
        """Put a held thing back where it was taken from, if that is easy."""
        node = self.node(name)
        origin = self.w.taken_from.get(node)
        if origin is None or "room" in self.w.props(origin[1]) or name in self.needed():
            return
        target = self.w.names[origin[1]]
        shut = origin[0] == "in" and "can_open" in props(target) and "open" not in self.state(target)
        if shut and None not in self.w.hands:
            return
        self.approach(target)
        if shut:
            self.open(target)
        self.act("PutBack", name)
        if shut:
            self.maybe_close(target)

    # ------------------------------------------------------------------ placing things
    def batch(self) -> bool:
        """Carry two things to the same place at once (sometimes)."""
        _, kind, args = self.pending[0]
        if kind not in ("inside", "on") or len(args) != 2 or "room" in props(args[1]) or len(self.pending) < 2:
            return False
        _, kind2, args2 = self.pending[1]
        if kind2 != kind or len(args2) != 2 or args2[1] != args[1] or self.w.held() or not self.chance(0.45):
            return False
        if self.holds(self.pending[1][0]):
            return False
        self.pending.pop(0)  # both goals are now the current one
        self.deliver([args[0], args2[0]], "in" if kind == "inside" else "on", args[1])
        return True

    def deliver(self, items: list[str], relation: str, target: str) -> None:
        needs_open = relation == "in" and "can_open" in props(target)
        if needs_open and len(items) > 1 and "open" not in self.state(target):
            self.approach(target)  # open the destination first, then fetch both
            self.open(target)
        self.keep.update(items)
        self.soon.update(items)
        for item in items:
            self.acquire(item)
            self.soon.discard(item)
        if needs_open and "open" not in self.state(target):
            self.approach(target)
            self.open(target)
        else:
            self.approach(target)
        for item in items:
            if not self.is_close(target):
                self.approach(target)
            self.act("PutIn" if relation == "in" else "Put", item, target)
            self.keep.discard(item)
        if needs_open:
            self.maybe_close(target)

    def deliver_to_room(self, item: str, room: str) -> None:
        self.keep.add(item)
        self.acquire(item)
        self.go_room(room)
        surfaces = sorted(
            self.w.names[m]
            for m in range(len(self.w.names))
            if self.w.room_of(m) == self.w.room
            and "surface" in self.w.props(m)
            and "grabbable" not in self.w.props(m)
            and m not in self.w.close
            and self.w.in_closed(m) is None
            and self.w.names[m] != "floor"
        )
        if surfaces and self.chance(0.6):
            surface = self.rng.choice(surfaces)
            self.approach(surface)
            self.act("Put", item, surface)
        else:
            self.act("Drop", item)
        self.keep.discard(item)

    # ------------------------------------------------------------------ devices
    def switch_on(self, name: str) -> None:
        self.approach(name)
        if "plugged_out" in self.state(name):
            self.ensure_free_hand()
            self.act("PlugIn", name)
        if "open" in self.state(name):
            self.act("Close", name)
        self.maybe_turn(name)
        self.act("SwitchOn", name)
        if name in ("vacuum_cleaner",) and self.is_held(name) and None in self.w.hands and self.chance(0.7):
            self.act("Push" if self.chance(0.6) else "Pull", name)

    # ------------------------------------------------------------------ the body
    def sit(self, seat: str) -> None:
        if self.w.posture == "sitting" and self.w.seat == self.node(seat):
            return
        self.ensure_standing()
        self.approach(seat)
        if seat == "chair" and None in self.w.hands and self.chance(0.3):
            self.act("Pull", "chair")
        self.act("SitOn", seat)

    def lie(self, bed: str) -> None:
        if self.w.asleep:
            self.act("WakeUp")
        if self.w.posture == "sitting" and self.w.seat == self.node(bed):
            self.act("LieOn", bed)
            return
        self.ensure_standing()
        self.approach(bed)
        if "sittable" in props(bed) and self.chance(0.3):
            self.act("SitOn", bed)
        self.act("LieOn", bed)

    def sleep(self) -> None:
        if self.w.posture == "standing":
            raise PlanError("sleeping needs a bed or a seat among the goals")
        self.act("Sleep")

    # ------------------------------------------------------------------ events
    def prepare(self, args: tuple[str, ...]) -> None:
        """Before sitting down: take or find what a seated event needs."""
        verb, *objects = args
        thing = objects[-1] if objects else ""
        if verb in ("read", "drink"):
            self.acquire(thing)
            if verb == "drink" and "can_open" in props(thing) and "recipient" not in props(thing):
                self.maybe_open_held(thing)
        elif verb == "eat" or (verb == "type_on" and "grabbable" in props(thing) and thing != "keyboard"):
            self.acquire(thing)
        elif thing not in self.bound:
            self.approach(thing)

    def maybe_open_held(self, name: str) -> None:
        if "closed" in self.state(name) and None in self.w.hands and self.chance(0.5):
            self.act("Open", name)

    def event(self, args: tuple[str, ...]) -> None:
        verb, *objects = args
        if verb in CLEAN_VERBS:
            self.clean(objects[0], verb)
        elif verb == "pour":
            self.pour(objects[0], objects[1])
        elif verb == "drink":
            thing = objects[0]
            self.acquire(thing)
            if "recipient" not in props(thing):
                self.maybe_open_held(thing)
            self.act("Drink", thing)
        elif verb == "eat":
            thing = objects[0]
            if self.chance(0.5):
                self.acquire(thing)
            else:
                self.approach(thing)
            self.act("Eat", thing)
        elif verb == "cut":
            self.cut(objects[0])
        elif verb == "read":
            thing = objects[0]
            self.acquire(thing)
            if "can_open" in props(thing):
                self.maybe_open_held(thing)
            self.act("Read", thing)
        elif verb == "type_on":
            thing = objects[0]
            if thing != "keyboard" and "grabbable" in props(thing) and self.chance(0.5):
                self.acquire(thing)
            elif not self.is_close(thing) or thing not in self.bound:
                self.approach(thing)
            self.act("TypeOn", thing)
        elif verb in ("watch", "look_at"):
            thing = objects[0]
            seen = self.w.visible(self.node(thing))
            if not seen or thing not in self.bound:
                self.approach(thing)
            self.maybe_turn(thing)
            self.act("Watch" if verb == "watch" else "LookAt", thing)
        elif verb == "greet":
            person = objects[0]
            if self.room_of(person) != self.w.names[self.w.room] or person not in self.bound:
                self.approach(person)
            self.maybe_turn(person)
            self.act("Greet", person)
        elif verb == "sleep":
            self.sleep()
        else:
            raise PlanError(f"cannot plan the event {verb}")

    def pour(self, liquid: str, into: str) -> None:
        self.keep.update((liquid, into))
        placed = any(kind in ("inside", "on") and len(args) == 2 and args[0] == into for _, kind, args in self.goals)
        portable = "grabbable" in props(into) and not placed
        if portable and self.chance(0.5):
            self.acquire(into)
            self.acquire(liquid)
        else:
            self.acquire(liquid)
            if portable:
                self.acquire(into)
        if not portable:
            self.approach(into)
        if "can_open" in props(into) and "open" not in self.state(into):
            self.open(into)
        self.act("PourInto", liquid, into)
        self.keep.difference_update((liquid, into))
        if liquid != "water" and self.chance(self.p_extra):
            self.return_item(liquid)
        self.faucet_off()

    def cut(self, food: str) -> None:
        knife = next((k for k in KNIVES if self.is_held(k)), None) or self.rng.choice(KNIVES)
        self.keep.update((knife, food))
        if self.chance(0.5):
            self.acquire(knife)
        food_node = self.node(food)
        if self.w.is_held(food_node) or self.w.in_closed(food_node) is not None:
            self.acquire(food)
            self.lay_down(food)
        self.acquire(knife)
        if not self.is_close(food):
            self.approach(food)
        self.act("Cut", food)
        self.keep.difference_update((knife, food))
        if self.chance(self.p_extra / 2):
            self.return_item(knife)

    def lay_down(self, food: str) -> None:
        """Put a held food on the cutting board (or the counter) to cut it."""
        board = "cutting_board"
        place = board if self.w.in_closed(self.node(board)) is None and not self.is_held(board) else "kitchen_counter"
        self.approach(place)
        self.act("Put", food, place)

    def clean(self, name: str, verb: str | None) -> None:
        if name in BODY_PARTS:
            self.clean_body(name, verb)
        elif "grabbable" in props(name):
            self.clean_at_sink(name, verb)
        else:
            self.clean_in_place(name, verb)

    def verbs(self, verb: str | None, options: Sequence[Sequence[str]]) -> list[str]:
        if verb is not None:
            options = [o for o in options if CLEAN_VERBS[verb] in o] or [[CLEAN_VERBS[verb]]]
        return list(self.rng.choice(options))

    def faucet_on(self, p: float) -> None:
        if "off" in self.state("faucet") and self.chance(p):
            self.approach("faucet")
            self.maybe_turn("faucet")
            self.act("SwitchOn", "faucet")
            self.faucet_turned_on = True

    def clean_body(self, part: str, verb: str | None) -> None:
        if verb == "wipe":
            tool = self.rng.choice(TOOLS.get(part, DEFAULT_TOOLS))
            self.acquire(tool)
            self.act("Wipe", part)
            return
        soap = {"hands_both": "soap", "face": "face_soap", "hair": "shampoo"}[part]
        used_soap = self.chance(self.p_extra + 0.2) and None in self.w.hands
        if used_soap:
            self.acquire(soap)  # then the sink of that room
        elif self.chance(0.85):
            self.go_room("bathroom")
        self.approach("sink")
        self.faucet_on(0.5 + self.p_extra)
        if used_soap and (part == "hair" or self.chance(0.4)):
            if "pourable" in props(soap):
                self.act("PourInto", soap, "hands_both")
            else:
                self.act("Squeeze", soap)
        for action in self.verbs(verb, (["Wash"], ["Wash", "Rinse"], ["Scrub", "Rinse"], ["Rinse"])):
            self.act(action, part)
        if used_soap and self.chance(0.6):
            self.return_item(soap)
        if not self.is_close("faucet") and self.faucet_turned_on:
            self.approach("faucet")
        self.faucet_off()

    def clean_at_sink(self, name: str, verb: str | None) -> None:
        self.keep.add(name)
        self.acquire(name)
        self.approach("sink")
        self.faucet_on(0.4 + self.p_extra)
        if verb == "wipe":
            self.acquire(self.rng.choice(("towel", "rag")))
            self.act("Wipe", name)
        else:
            soap_here = self.room_of("dish_soap") == self.w.names[self.w.room]
            if name in DISH_LIKE and soap_here and None in self.w.hands and self.chance(self.p_extra / 2):
                self.acquire("dish_soap")
                self.act("PourInto", "dish_soap", name)
                self.return_item("dish_soap")
                if not self.is_close("sink"):
                    self.approach("sink")
            options = (["Wash"], ["Wash", "Rinse"], ["Scrub", "Rinse"], ["Rinse"], ["Scrub"])
            for action in self.verbs(verb, options):
                self.act(action, name)
        if not self.is_close("faucet") and self.faucet_turned_on:
            self.approach("faucet")
        self.faucet_off()
        self.keep.discard(name)
        if name not in self.needed() and self.chance(0.5):
            self.approach("dishrack")
            self.act("Put", name, "dishrack")

    def clean_in_place(self, name: str, verb: str | None) -> None:
        tools = TOOLS.get(name, DEFAULT_TOOLS)
        actions = self.verbs(verb, (["Wipe"], ["Scrub"], ["Scrub", "Wipe"], ["Wash"], ["Wash", "Wipe"]))
        tool = tools[0] if self.chance(0.6) else self.rng.choice(tools)
        needs_tool = "Wipe" in actions or tools == ("mop",) or self.chance(0.6)
        if needs_tool:
            self.keep.add(tool)
            self.acquire(tool)
            if tool in ("sponge", "rag", "towel") and self.chance(self.p_extra / 2):
                self.act("Squeeze", tool)
        self.approach(name)
        if tool == "mop" and needs_tool and None in self.w.hands and self.chance(0.4):
            self.act("Push", "mop")
        for action in actions:
            self.act(action, name)
        self.keep.discard(tool)
        if needs_tool and self.chance(self.p_extra):
            self.return_item(tool)


def program_text(steps: Iterable[Step]) -> str:
    """The program as ToolBench writes it: one ``Agent.<Action>(objects)`` call per line."""
    return "\n".join(call_text(action, args) for action, args in steps)
