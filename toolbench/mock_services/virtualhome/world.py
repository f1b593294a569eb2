"""The home as it changes: where each object is, its states, and the character; one action at a time.

A ``World`` starts from a ``Home`` (and a task's start facts) and runs actions with
``world.do("Grab", ("cup",))``. Every action checks its preconditions, in the spirit of
VirtualHome's evolving-graph simulator, and either changes the world or says which one failed
("cannot grab fridge: fridge is not grabbable"). Unlike that simulator, sitting and lying are
seen by later actions, and clothes can be taken off.

Objects are named by class ("cup"); where a home had several of a class, the first candidate
(held, then close, then in the character's room, then any) whose preconditions hold is used, and
the name stays bound to that object for the rest of the episode, as a VirtualHome script binds
``<faucet> (1)`` to one node: the faucet switched on is the faucet switched off.

``rules="original"`` relaxes what VirtualHome's evolving graph does not enforce, for replaying
the original programs: walking while seated or lying is allowed (its simulator never sees the
posture when walking) and the character gets up on the way; a held object (a plate) can have
things put on it; what stands open can be switched on; poured water leaves the hand; the
character turns to an object wherever it is; an action whose effect already holds
(switching on what is on, grabbing what is held, putting on the table the cup that is on it)
does nothing and succeeds; every action on an object leaves its record (``did(go_to, kitchen)``),
from which the activity's goals are drawn; VirtualHome's dining room is its kitchen and its home
office its living room (``SAME_ROOM``).
A start may add objects of classes the home has (``extra_on(cup, table)``), for the original
tasks whose programs presume one cup on the table and another in the cabinet.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from toolbench.mock_services.virtualhome.homes import Home, with_extras
from toolbench.mock_services.virtualhome.objects import ACTIONS_BY_NAME, PROPERTIES, SQUEEZABLE
from toolbench.mock_services.virtualhome.scene import (
    CARRIED,
    View,
    add_below,
    build_view,
    describe_scene,
    room_nodes,
    word_for,
)

_FACT = re.compile(r"^(\w+)\(([^()]*)\)$")


class ActionFailed(Exception):
    """A precondition that does not hold; the message says which. ``fix`` is the start fact under
    which it would have held (``off(light)`` for "light is already on"), where one would."""

    def __init__(self, reason: str, fix: str | None = None) -> None:
        super().__init__(reason)
        self.fix = fix


class AlreadyDone(ActionFailed):
    """What the action would bring about holds already (the light is on). Under the original rules
    the action then does nothing and succeeds, as the original programs take for granted."""


@dataclass(frozen=True)
class Result:
    ok: bool
    message: str
    fix: str | None = None  # a start fact under which the failed (or already met) precondition would hold


def _start_maps(home: Home) -> tuple[dict[int, tuple[str, int]], dict[int, frozenset[str]]]:
    """Fresh copies of the home's places and states (copying a dict is cheaper than building it)."""
    if home not in _START_MAPS:  # homes are cached and compared by identity
        places = {node: place for node, place in enumerate(home.places) if place is not None}
        _START_MAPS[home] = (places, dict(enumerate(home.states)))
    places, states = _START_MAPS[home]
    return dict(places), dict(states)


_START_MAPS: dict[Home, tuple[dict[int, tuple[str, int]], dict[int, frozenset[str]]]] = {}
#: Rooms VirtualHome's class-name equivalences make one (class_name_equivalence.json: its
#: dining_room is its kitchen, its home_office its living room): the original programs walk to
#: the dining room to open the fridge. Under the original rules they are one room.
SAME_ROOM = {"dining_room": "kitchen", "home_office": "living_room"}
#: Start facts that add an object to the home rather than set its state: extra_on(cup, table).
EXTRA_KINDS = {"extra_in": "in", "extra_on": "on"}
#: The record an action leaves under the original rules: did(go_to, kitchen), did(push, chair).
#: Walking, running and finding are all going to the object: did(go_to, sink), however it got there.
_VERBS = {name: re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower() for name in ACTIONS_BY_NAME}
_VERBS.update(WalkTo="go_to", RunTo="go_to", Find="go_to")
#: "ours": the preconditions as the API docs state them; "original": as VirtualHome's evolving graph
#: enforces them, for replaying the original programs.
RULES = ("ours", "original")


@functools.lru_cache(maxsize=4096)
def fact(text: str) -> tuple[str, tuple[str, ...]]:
    """``"inside(milk, fridge)"`` -> ``("inside", ("milk", "fridge"))``."""
    match = _FACT.match(text.strip())
    if not match:
        raise ValueError(f"not a fact: {text!r}")
    args = tuple(arg.strip() for arg in match.group(2).split(",")) if match.group(2).strip() else ()
    return match.group(1), args


def _extra(text: str) -> tuple[str, ...]:
    """``extra_on(cup, table)`` -> ``("cup", "on", "table")``: one more cup, on the table;
    ``extra_in(water, sink, bathroom)``: in the bathroom's sink."""
    kind, args = fact(text)
    if len(args) not in (2, 3):
        raise ValueError(f"start fact {text!r} needs an object, where it is, and maybe in which room")
    return args[0], EXTRA_KINDS[kind], *args[1:]


def start_world(home: Home, start: Iterable[str] = (), rules: str = "ours") -> World:
    """A world in a task's start state: a copy of one prepared once per home, start and rules
    (copying its maps is cheaper than applying the start facts to a fresh home)."""
    return _prepared(home, tuple(start), rules).copy()


@functools.lru_cache(maxsize=128)  # about 50 kB each; the train split has 117 starts
def _prepared(home: Home, start: tuple[str, ...], rules: str) -> World:
    world = World(home, start, rules)
    for root in {*(world._room(room) for room in room_nodes(world.home)), CARRIED}:
        world.view(root)  # every room's view, kept in every copy
    return world


class World:
    """The state of one home during an episode."""

    def __init__(self, home: Home, start: Iterable[str] = (), rules: str = "ours") -> None:
        if rules not in RULES:
            raise ValueError(f"rules must be one of {RULES}, not {rules!r}")
        self.rules = rules
        start = list(start)
        self.base = home
        self.extras = tuple(_extra(text) for text in start if fact(text)[0] in EXTRA_KINDS)
        home = with_extras(home, self.extras) if self.extras else home
        self.home = home
        self.names = home.names
        self.place, self.states = _start_maps(home)
        self.hands: list[int | None] = [None, None]  # right, left
        self.worn: tuple[int, ...] = ()
        self.room = home.ids("living_room")[0]
        self.close: frozenset[int] = frozenset()
        self.facing: int | None = None
        self.posture = "standing"
        self.seat: int | None = None
        self.asleep = False
        self.taken_from: dict[int, tuple[str, int]] = {}
        self.done: frozenset[str] = frozenset()  # what the character did: "did(read, novel)", ...
        self.bound: dict[str, int] = {}  # object name -> the node it named first
        # (the object whose room the character last went to, the room it left): where a program
        # presumed that object beside what it left behind, starting it there would have helped
        self.came_from: tuple[int, int] | None = None
        self.views: dict[int, View] = {}  # root (a room, or CARRIED) -> what is in view under it
        for text in start:
            if fact(text)[0] not in EXTRA_KINDS:
                self._set_start(text)
        self._index()

    def _index(self) -> None:
        """What each object holds (from ``place``), and no views kept: after the start or a restore."""
        children: dict[int, frozenset[int]] = {}
        for node, (_, parent) in self.place.items():
            children[parent] = children.get(parent, frozenset()) | {node}
        self.children = children
        self.rooms_placed = any(room in self.place for room in room_nodes(self.home))
        self.views = {}

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> dict[str, Any]:
        """Plain, picklable data from which ``restore`` rebuilds the world."""
        return {
            "place": dict(self.place),
            "states": dict(self.states),
            "hands": list(self.hands),
            "worn": self.worn,
            "room": self.room,
            "close": self.close,
            "facing": self.facing,
            "posture": self.posture,
            "seat": self.seat,
            "asleep": self.asleep,
            "taken_from": dict(self.taken_from),
            "done": self.done,
            "bound": dict(self.bound),
            "came_from": self.came_from,
            "extras": self.extras,
        }

    def restore(self, snapshot: dict[str, Any]) -> None:
        extras = tuple(tuple(extra) for extra in snapshot.get("extras", ()))
        if extras != self.extras:  # the snapshot's home had objects this one lacks, or the reverse
            self.extras = extras
            self.home = with_extras(self.base, extras) if extras else self.base
            self.names = self.home.names
        self.place = dict(snapshot["place"])
        self.states = dict(snapshot["states"])
        self.hands = list(snapshot["hands"])
        self.worn = tuple(snapshot["worn"])
        self.room = snapshot["room"]
        self.close = frozenset(snapshot["close"])
        self.facing = snapshot["facing"]
        self.posture = snapshot["posture"]
        self.seat = snapshot["seat"]
        self.asleep = snapshot["asleep"]
        self.taken_from = dict(snapshot["taken_from"])
        self.done = frozenset(snapshot["done"])
        self.bound = dict(snapshot.get("bound", {}))
        self.came_from = snapshot.get("came_from")
        self._index()

    def copy(self) -> World:
        """An independent world in the same state (the kept views too: they are never changed in place)."""
        other = World.__new__(World)
        other.__dict__.update(self.__dict__)  # the rest is immutable: tuples, frozensets, the home
        other.place, other.states, other.hands = dict(self.place), dict(self.states), list(self.hands)
        other.taken_from, other.bound = dict(self.taken_from), dict(self.bound)
        other.children, other.views = dict(self.children), dict(self.views)
        return other

    # ------------------------------------------------------------------ queries
    def name(self, node: int) -> str:
        return self.names[node]

    def props(self, node: int) -> frozenset[str]:
        return PROPERTIES[self.names[node]]

    def held(self) -> list[int]:
        return [node for node in self.hands if node is not None]

    def is_held(self, node: int) -> bool:
        return node in self.hands

    def room_of(self, node: int) -> int:
        """The room an object is in (the character's, for what it holds, wears or is)."""
        root = self._root(node)
        return self.room if root == CARRIED else root

    def _root(self, node: int) -> int:
        """The room an object is in, or CARRIED for what the character holds, wears or is."""
        current = node
        for _ in range(len(self.names)):
            if "room" in PROPERTIES[self.names[current]]:
                return self._room(current)
            where = self.place.get(current)
            if where is None:
                return CARRIED
            current = where[1]
        raise RuntimeError("objects placed in a loop")

    def support(self, node: int) -> tuple[str, int] | None:
        """What the object is in or on, unless that is a room."""
        where = self.place.get(node)
        if where is None or "room" in PROPERTIES[self.names[where[1]]]:
            return None
        return where

    def in_closed(self, node: int) -> int | None:
        """The closed container the object is inside (at any depth), if any."""
        current = node
        for _ in range(len(self.names)):  # places never form a loop (``_place`` refuses one); bounded anyway
            where = self.place.get(current)
            if where is None:
                return None
            if where[0] == "in" and "closed" in self.states[where[1]]:
                return where[1]
            current = where[1]
        return None

    def _within(self, node: int, ancestor: int) -> bool:
        """Whether ``node`` is in or on ``ancestor``, at any depth."""
        current = node
        for _ in range(len(self.names)):
            where = self.place.get(current)
            if where is None:
                return False
            if where[1] == ancestor:
                return True
            current = where[1]
        return False

    def is_close(self, node: int) -> bool:
        if node in self.close or self.is_held(node) or node in self.worn or "body_part" in self.props(node):
            return True
        where = self.support(node)
        return where is not None and where[1] in self.close  # on or in something the character is at

    def visible(self, node: int) -> bool:
        return self.room_of(node) == self.room and self.in_closed(node) is None

    def holds(self, text: str) -> bool:
        """Whether a fact such as ``inside(milk, fridge)`` or ``sitting_on(couch)`` is true now."""
        kind, args = fact(text)
        nodes = [self.home.ids(arg) for arg in args]
        if kind in ("inside", "on") and len(args) == 2:
            relation = "in" if kind == "inside" else "on"
            return any(self.place.get(a) == (relation, b) for a in nodes[0] for b in nodes[1]) or (
                kind == "inside"
                and "room" in PROPERTIES.get(args[1], ())
                and any(
                    self.room_of(a) == self._room(b) and not self.is_held(a) and a not in self.worn
                    for a in nodes[0]
                    for b in nodes[1]
                )
            )
        if kind == "in_room":
            return self.room in {self._room(node) for node in nodes[0]}
        if kind in ("held", "worn", "close_to", "facing"):
            test = {
                "held": self.is_held,
                "worn": lambda n: n in self.worn,
                "close_to": self.is_close,
                "facing": lambda n: self.facing == n,
            }[kind]
            return any(test(node) for node in nodes[0])
        if kind in ("sitting_on", "lying_on"):
            return self.posture == kind.removesuffix("_on") and self.seat in nodes[0]
        if kind in ("asleep", "awake", "standing"):
            return {"asleep": self.asleep, "awake": not self.asleep, "standing": self.posture == "standing"}[kind]
        if kind == "did":
            return f"did({', '.join(args)})" in self.done
        if len(args) == 1:  # a state: open(fridge), on(television), clean(plate), plugged_in(lamp)
            return any(kind in self.states[node] for node in nodes[0])
        raise ValueError(f"unknown fact {text!r}")

    def facts(self) -> set[str]:
        """Every fact that holds now, in the words of ``holds`` (closeness and facing left out:
        they change with every step and are never what an activity is for)."""
        found = set(self.done)
        for node, (relation, parent) in self.place.items():
            if "room" not in self.props(parent):
                found.add(f"{'inside' if relation == 'in' else 'on'}({self._n(node)}, {self._n(parent)})")
        for node, states in self.states.items():
            found.update(f"{state}({self._n(node)})" for state in states)
        found.update(f"held({self._n(node)})" for node in self.held())
        found.update(f"worn({self._n(node)})" for node in self.worn)
        if self.seat is not None:
            found.add(f"{self.posture}_on({self._n(self.seat)})")
        found.add("asleep()" if self.asleep else "awake()")
        return found

    # ------------------------------------------------------------------ acting
    def do(self, action: str, args: tuple[str, ...]) -> Result:
        """Run one action; on a failed precondition nothing changes and the message says why."""
        spec = ACTIONS_BY_NAME.get(action)
        if spec is None:
            return Result(False, f"unknown action {action!r}")
        if len(args) != spec.arity:
            return Result(False, f"{action} takes {spec.arity} object(s), not {len(args)}")
        for arg in args:
            if not self.home.ids(arg):
                return Result(False, f"there is no {arg} in this home")
        method = getattr(self, f"_do_{action.lower()}")
        phrase = spec.step.replace("X", args[0] if args else "").replace("Y", args[1] if len(args) > 1 else "")
        phrase = phrase[0].lower() + phrase[1:]
        if spec.arity == 0:
            try:
                return Result(True, method())
            except AlreadyDone as exc:
                if self.rules == "original":
                    return Result(True, f"Nothing to do: {exc}.", exc.fix)
                return Result(False, f"cannot {phrase}: {exc}", exc.fix)
            except ActionFailed as exc:
                return Result(False, f"cannot {phrase}: {exc}", exc.fix)
        first_error: ActionFailed | None = None
        done_already: tuple[int, int | None, AlreadyDone] | None = None
        # Every action checks all its preconditions before it changes anything, so a failed
        # candidate leaves the world as it was.
        for node in self._candidates(args[0]):
            for second in self._candidates(args[1]) if spec.arity == 2 else [None]:
                try:
                    message = method(node) if second is None else method(node, second)
                except AlreadyDone as exc:
                    done_already = done_already or (node, second, exc)
                    first_error = first_error or exc
                    continue
                except ActionFailed as exc:
                    first_error = first_error or exc
                    continue
                self._bind(args, node, second)
                if self.rules == "original":  # what an original activity did is most of what it is for
                    self._record(_VERBS[action], node, *(() if second is None else (second,)))
                return Result(True, message)
        if done_already is not None and self.rules == "original":  # no candidate needed the action
            self._bind(args, done_already[0], done_already[1])
            return Result(True, f"Nothing to do: {done_already[2]}.", done_already[2].fix)
        assert first_error is not None
        return Result(False, f"cannot {phrase}: {first_error}", first_error.fix)

    def _bind(self, args: tuple[str, ...], node: int, second: int | None) -> None:
        self.bound.setdefault(args[0], node)
        if second is not None:
            self.bound.setdefault(args[1], second)

    def _candidates(self, name: str) -> list[int]:
        if name in self.bound:
            return [self.bound[name]]
        nodes = self.home.ids(name)
        if len(nodes) == 1:
            return list(nodes)
        rank = {n: (not self.is_held(n), not self.is_close(n), self.room_of(n) != self.room, n) for n in nodes}
        return sorted(nodes, key=rank.__getitem__)

    # ------------------------------------------------------------------ preconditions
    def _n(self, node: int) -> str:
        return self.names[node]

    def _room(self, node: int) -> int:
        """The room as the rules see it: under the original rules, the room VirtualHome names as
        another (its dining room is its kitchen) is that one."""
        if self.rules == "original" and self.names[node] in SAME_ROOM:
            return self.home.ids(SAME_ROOM[self.names[node]])[0]
        return node

    def _need(self, condition: bool, reason: str, fix: str | None = None) -> None:
        if not condition:
            raise ActionFailed(reason, fix)

    def _need_prop(self, node: int, prop: str, words: str) -> None:
        self._need(prop in self.props(node), f"{self._n(node)} is not {words}")

    def _need_awake(self) -> None:
        self._need(not self.asleep, "the character is asleep")

    def _need_close(self, node: int) -> None:
        self._need(self.is_close(node), f"the character is not close to {self._n(node)}", self._brought_beside(node))

    def _need_here(self, node: int) -> None:
        self._need(self.room_of(node) == self.room, f"{self._n(node)} is not in this room", self._brought_beside(node))

    def _need_visible(self, node: int) -> None:
        if not self.visible(node):
            closed = self.in_closed(node)
            fix = self._brought_beside(node) if closed is None else self._on_top(node, closed)
            raise ActionFailed(f"{self._n(node)} cannot be seen from here", fix)

    def _brought_beside(self, node: int) -> str | None:
        """The start fact that would have kept the character beside ``node``: the object that took it
        to another room starts in ``node``'s room instead; or else ``node`` starts in this room."""
        if self.came_from is not None and self.room_of(node) == self.came_from[1]:
            moved, room = self.came_from
        elif node in self.place and self.room_of(node) != self.room:
            moved, room = node, self.room
        else:
            return None
        first = self.home.ids(self._n(moved))[0] == moved  # a start fact names the first of a class
        return f"inside({self._n(moved)}, {self._n(room)})" if first else None

    def _need_reachable(self, node: int) -> None:
        closed = self.in_closed(node)
        if closed is not None:  # kept on top of the container instead, it would be at hand
            raise ActionFailed(f"{self._n(node)} is inside the closed {self._n(closed)}", self._on_top(node, closed))

    def _need_free_hand(self) -> None:
        self._need(None in self.hands, "both hands are full")

    def _need_holding(self, node: int) -> None:
        self._need(self.is_held(node), f"the character is not holding {self._n(node)}", f"held({self._n(node)})")

    def _on_top(self, node: int, container: int) -> str:
        """The start fact that puts what holds ``node`` (itself, or the box it is in) on ``container``."""
        outer = node
        while self.place.get(outer, ("", container))[1] != container:
            outer = self.place[outer][1]
        return f"on({self._n(outer)}, {self._n(container)})"

    def _need_standing(self, doing: str) -> None:
        if self.posture != "standing":
            seat = self._n(self.seat) if self.seat is not None else "something"
            raise ActionFailed(f"the character is {self.posture} on {seat}; stand up before {doing}")

    def _need_not(self, node: int, state: str, reason: str, instead: str, *, already: bool = False) -> None:
        """That ``node`` is not in ``state``; had it started ``instead``, it would not be.
        ``already``: ``state`` is what the action brings about."""
        if state in self.states[node]:
            failure = AlreadyDone if already else ActionFailed
            raise failure(f"{self._n(node)} {reason}", f"{instead}({self._n(node)})")

    def _set_state(self, node: int, remove: str, add: str) -> None:
        self._restate(node, (self.states[node] - {remove}) | {add})

    # Every change of where an object is or of its states goes through these three, which take what
    # it moves out of the kept views before the change and put it back in after.
    def _restate(self, node: int, states: frozenset[str]) -> None:
        self._hide(node)
        self.states[node] = states
        self._show(node)

    def _place_at(self, node: int, where: tuple[str, int]) -> None:
        self._hide(node)
        self._unlink(node)
        self.place[node] = where
        self.children[where[1]] = self.children.get(where[1], frozenset()) | {node}
        self._show(node)

    def _unplace(self, node: int) -> tuple[str, int]:
        self._hide(node)
        self._unlink(node)
        where = self.place.pop(node)
        self._show(node)  # what is on or in it goes with the character now
        return where

    def _unlink(self, node: int) -> None:
        where = self.place.get(node)
        if where is not None:
            self.children[where[1]] = self.children[where[1]] - {node}

    def _hide(self, node: int) -> None:
        """Take ``node`` and what is in view in or on it out of its root's kept view."""
        kept = self._kept_view(node)
        if kept is None:
            return
        root, words = kept
        below = [node]
        while below:
            current = below.pop()
            words.pop(current, None)
            below.extend(child for child in self.children.get(current, ()) if child in words)
        self.views[root] = View(words)

    def _show(self, node: int) -> None:
        """Put ``node`` and what is in view in or on it into its root's kept view, if it is in view."""
        kept = self._kept_view(node)
        if kept is None:
            return
        root, words = kept
        where = self.place.get(node)
        if where is not None:  # in view if what it is in or on is (or is the room), and not shut in it
            relation, parent = where
            if (parent in self.place and parent not in words) or (relation == "in" and "closed" in self.states[parent]):
                return
            words[node] = word_for(self, node, relation, parent, root)
        add_below(self, [node], root, words)
        self.views[root] = View(words)

    def _kept_view(self, node: int) -> tuple[int, dict[int, str]] | None:
        """``node``'s root and a copy of the words of its kept view, to change (none kept: None)."""
        root = self._root(node)
        view = self.views.get(root)
        return None if view is None else (root, dict(view.words))

    def view(self, root: int) -> View:
        """What is in view under ``root`` (a room, or CARRIED): kept until something under it changes."""
        view = self.views.get(root)
        if view is None:
            view = self.views[root] = build_view(self, root)
        return view

    def _record(self, verb: str, *nodes: int) -> None:
        self.done = self.done | {f"did({', '.join([verb, *(self._n(n) for n in nodes)])})"}

    def _release(self, node: int) -> None:
        self.hands = [None if held == node else held for held in self.hands]

    # ------------------------------------------------------------------ moving
    def _go(self, node: int) -> None:
        self._need_awake()
        if self.rules != "original":
            self._need_standing("walking")
        props = self.props(node)
        self._need("body_part" not in props, f"{self._n(node)} is part of the character")
        self.posture, self.seat = "standing", None
        if "room" in props:
            self.room, self.close, self.facing, self.came_from = self._room(node), frozenset(), None, None
            return
        room = self.room_of(node)
        if room != self.room:
            self.came_from = (node, self.room)
        # Within one room what the character went to stays within reach (rooms are small); going
        # to another room leaves it all behind.
        near = set(self.close) if room == self.room else set()
        self.room = room
        near.add(node)
        where = self.support(node)
        if where is not None:
            near.add(where[1])
        near.update(self.children.get(node, ()))  # what is on or in it
        self.close, self.facing = frozenset(near), None

    def _do_walkto(self, node: int) -> str:
        self._go(node)
        return f"You walk to the {self._n(node)}."

    def _do_runto(self, node: int) -> str:
        self._go(node)
        return f"You run to the {self._n(node)}."

    def _do_find(self, node: int) -> str:
        self._need("room" not in self.props(node), f"{self._n(node)} is a room; walk to it")
        # Seated or lying, the character can still find (and reach) what is in the same room.
        if self.is_close(node) or (self.posture != "standing" and self.room_of(node) == self.room):
            self._need_awake()
            self.close = self.close | {node}
            return f"You find the {self._n(node)}."
        self._go(node)
        return f"You find the {self._n(node)}."

    def _face(self, node: int, anywhere: bool = False) -> None:
        self._need_awake()
        if not anywhere:
            self._need_here(node)
        self.facing = node

    def _do_turnto(self, node: int) -> str:
        self._face(node, anywhere=self.rules == "original")  # VirtualHome turns to what the script names
        return f"You turn to the {self._n(node)}."

    def _do_lookat(self, node: int) -> str:
        self._need_visible(node)
        self._face(node)
        self._record("look_at", node)
        return f"You look at the {self._n(node)}."

    def _do_pointat(self, node: int) -> str:
        self._need_visible(node)
        self._face(node)
        return f"You point at the {self._n(node)}."

    def _do_watch(self, node: int) -> str:
        self._need_prop(node, "lookable", "something to watch")
        self._need_visible(node)
        self._face(node)
        self._record("watch", node)
        return f"You watch the {self._n(node)}."

    # ------------------------------------------------------------------ hands
    def _do_grab(self, node: int) -> str:
        self._need_awake()
        self._need("body_part" not in self.props(node), f"{self._n(node)} is part of the character")
        self._need("grabbable" in self.props(node) or self._n(node) == "water", f"{self._n(node)} is not grabbable")
        if self.is_held(node):
            raise AlreadyDone(f"the character already holds {self._n(node)}")
        self._need(node not in self.worn, f"the character is wearing {self._n(node)}")
        self._need(node != self.seat, f"the character is {self.posture} on {self._n(node)}")
        self._need_close(node)
        self._need_reachable(node)
        self._need_free_hand()
        where = self._unplace(node)
        self.taken_from[node] = where
        self.hands[self.hands.index(None)] = node
        return f"You grab the {self._n(node)}."

    def _do_open(self, node: int) -> str:
        self._need_awake()
        self._need_prop(node, "can_open", "something that opens")
        self._need_close(node)
        self._need_reachable(node)
        self._need_free_hand()
        self._need_not(node, "open", "is already open", "closed", already=True)
        # A running microwave or washing machine stays shut; a fridge opens while it runs.
        running_shut = "on" in self.states[node] and self._n(node) not in ("fridge", "freezer")
        self._need(not running_shut, f"{self._n(node)} is switched on", f"off({self._n(node)})")
        self._set_state(node, "closed", "open")
        return f"You open the {self._n(node)}."

    def _do_close(self, node: int) -> str:
        self._need_awake()
        self._need_prop(node, "can_open", "something that opens")
        self._need_close(node)
        self._need_not(node, "closed", "is already closed", "open", already=True)
        self._set_state(node, "open", "closed")
        return f"You close the {self._n(node)}."

    def _place(self, node: int, relation: str, target: int) -> None:
        self._need_awake()
        if self.place.get(node) == (relation, target) and not self.is_held(node):
            raise AlreadyDone(f"{self._n(node)} is {relation} the {self._n(target)} already")
        self._need_holding(node)
        self._need(node != target, f"{self._n(node)} cannot go {relation} itself")
        if self.rules != "original":  # VirtualHome puts things on what the character holds (a plate)
            self._need(not self.is_held(target), f"the character is holding {self._n(target)}")
        self._need(target not in self.worn, f"the character is wearing {self._n(target)}")
        self._need("body_part" not in self.props(target), f"{self._n(target)} is part of the character")
        self._need_close(target)
        self._need_reachable(target)
        self._need(not self._within(target, node), f"{self._n(target)} is in or on the {self._n(node)}")
        self._release(node)
        self._place_at(node, (relation, target))
        self.taken_from.pop(node, None)

    def _do_put(self, node: int, target: int) -> str:
        self._need("room" not in self.props(target), f"{self._n(target)} is a room")
        self._place(node, "on", target)
        return f"You put the {self._n(node)} on the {self._n(target)}."

    def _do_putin(self, node: int, target: int) -> str:
        props = self.props(target)
        self._need(bool(props & {"container", "recipient"}), f"{self._n(target)} is not a container")
        if "can_open" in props:
            self._need_not(target, "closed", "is closed", "open")
        self._place(node, "in", target)
        return f"You put the {self._n(node)} in the {self._n(target)}."

    def _do_putback(self, node: int) -> str:
        self._need_awake()
        self._need_holding(node)
        self._need(node in self.taken_from, f"{self._n(node)} was not taken from anywhere")
        relation, target = self.taken_from[node]
        if relation == "in" and "can_open" in self.props(target):
            self._need_not(target, "closed", "is closed", "open")
        # Back where it came from: the character need only be in that room (it reaches or steps over).
        first = self.home.ids(self._n(node))[0] == node
        here = f"inside({self._n(node)}, {self._n(self.room)})" if first else None  # taken from this room
        self._need(self.room_of(target) == self.room, f"{self._n(target)} is not in this room", here)
        self._release(node)
        self._place_at(node, (relation, target))
        del self.taken_from[node]
        return f"You put the {self._n(node)} back {relation} the {self._n(target)}."

    def _do_drop(self, node: int) -> str:
        self._need_awake()
        self._need_holding(node)
        self._release(node)
        self._place_at(node, ("in", self.room))
        self.taken_from.pop(node, None)
        return f"You drop the {self._n(node)}."

    def _do_puton(self, node: int) -> str:
        self._need_awake()
        self._need_prop(node, "clothes", "something to wear")
        self._need_holding(node)
        self._release(node)
        self.worn = (*self.worn, node)
        self.taken_from.pop(node, None)
        return f"You put on the {self._n(node)}."

    def _do_takeoff(self, node: int) -> str:
        self._need_awake()
        self._need(node in self.worn, f"the character is not wearing {self._n(node)}", f"worn({self._n(node)})")
        self.worn = tuple(n for n in self.worn if n != node)
        self._place_at(node, ("in", self.room))  # put down beside the character, ready to be picked up
        self.close = self.close | {node}
        return f"You take off the {self._n(node)}."

    # ------------------------------------------------------------------ devices
    def _do_switchon(self, node: int) -> str:
        self._need_awake()
        self._need_prop(node, "has_switch", "something with a switch")
        self._need_close(node)
        self._need_reachable(node)
        self._need_not(node, "on", "is already on", "off", already=True)
        self._need_not(node, "plugged_out", "is not plugged in", "plugged_in")
        if self.rules != "original":  # VirtualHome switches on what stands open
            self._need_not(node, "open", "is open; close it first", "closed")
        self._set_state(node, "off", "on")
        return f"You switch on the {self._n(node)}."

    def _do_switchoff(self, node: int) -> str:
        self._need_awake()
        self._need_prop(node, "has_switch", "something with a switch")
        self._need_close(node)
        self._need_reachable(node)
        self._need_not(node, "off", "is already off", "on", already=True)
        self._set_state(node, "on", "off")
        return f"You switch off the {self._n(node)}."

    def _do_plugin(self, node: int) -> str:
        self._need_awake()
        self._need_prop(node, "has_plug", "something with a plug")
        self._need_close(node)
        self._need_reachable(node)
        self._need_free_hand()
        self._need_not(node, "plugged_in", "is already plugged in", "plugged_out", already=True)
        self._set_state(node, "plugged_out", "plugged_in")
        return f"You plug in the {self._n(node)}."

    def _do_plugout(self, node: int) -> str:
        self._need_awake()
        self._need_prop(node, "has_plug", "something with a plug")
        self._need_close(node)
        self._need_reachable(node)
        self._need_free_hand()
        self._need_not(node, "plugged_out", "is already unplugged", "plugged_in", already=True)
        self._set_state(node, "plugged_in", "plugged_out")
        if "on" in self.states[node]:
            self._set_state(node, "on", "off")  # no power, no longer on
        return f"You unplug the {self._n(node)}."

    # ------------------------------------------------------------------ the body
    def _do_siton(self, node: int) -> str:
        self._need_awake()
        self._need_prop(node, "sittable", "something to sit on")
        self._need_standing("sitting down")
        self._need_close(node)
        self.posture, self.seat = "sitting", node
        return f"You sit on the {self._n(node)}."

    def _do_lieon(self, node: int) -> str:
        self._need_awake()
        self._need_prop(node, "lieable", "something to lie on")
        self._need(self.posture != "lying", "the character is already lying down")
        self._need(self.posture == "standing" or self.seat == node, "stand up first")
        self._need_close(node)
        self.posture, self.seat = "lying", node
        return f"You lie on the {self._n(node)}."

    def _seat_here(self) -> str:
        """Something to sit on in the character's room (the couch where the room has none)."""
        seats = [n for n, (_, parent) in self.place.items() if parent == self.room and "sittable" in self.props(n)]
        return self._n(min(seats)) if seats else "couch"

    def _do_standup(self) -> str:
        self._need_awake()
        if self.posture == "standing":
            raise AlreadyDone("the character is already standing", f"sitting_on({self._seat_here()})")
        self.posture, self.seat = "standing", None
        return "You stand up."

    def _do_sleep(self) -> str:
        if self.asleep:
            raise AlreadyDone("the character is asleep already")
        self._need(self.posture in ("sitting", "lying"), "the character is not lying or sitting", "lying_on(bed)")
        self.asleep = True
        self._record("sleep")
        return "You fall asleep."

    def _do_wakeup(self) -> str:
        if not self.asleep:
            raise AlreadyDone("the character is not asleep", "asleep()")
        self.asleep = False
        return "You wake up."

    # ------------------------------------------------------------------ doing things with objects
    def _do_drink(self, node: int) -> str:
        self._need_awake()
        self._need(bool(self.props(node) & {"drinkable", "recipient"}), f"{self._n(node)} is not drinkable")
        self._need_holding(node)
        self._record("drink", node)
        return f"You drink from the {self._n(node)}."

    def _do_eat(self, node: int) -> str:
        self._need_awake()
        self._need_close(node)
        self._need_reachable(node)
        food_on = [n for n, (rel, parent) in self.place.items() if parent == node and "eatable" in self.props(n)]
        self._need("eatable" in self.props(node) or bool(food_on), f"{self._n(node)} is not food")
        self._record("eat", node)
        return f"You eat the {self._n(node)}."

    def _do_cut(self, node: int) -> str:
        self._need_awake()
        self._need("eatable" in self.props(node) and "cuttable" in self.props(node), f"{self._n(node)} cannot be cut")
        self._need_close(node)
        self._need_reachable(node)
        self._need(any("knife" in self._n(n) for n in self.held()), "the character holds no knife")
        self._need(not self.is_held(node), f"put the {self._n(node)} down to cut it")
        self._record("cut", node)
        return f"You cut the {self._n(node)}."

    def _do_read(self, node: int) -> str:
        self._need_awake()
        self._need_prop(node, "readable", "something to read")
        self._need_holding(node)
        self._record("read", node)
        return f"You read the {self._n(node)}."

    def _do_typeon(self, node: int) -> str:
        self._need_awake()
        self._need(self._n(node) == "keyboard" or "has_switch" in self.props(node), f"{self._n(node)} has no keys")
        self._need_close(node)
        self._need_reachable(node)
        self._record("type_on", node)
        return f"You type on the {self._n(node)}."

    def _do_touch(self, node: int) -> str:
        self._need_awake()
        self._need_close(node)
        self._need_reachable(node)
        return f"You touch the {self._n(node)}."

    def _push_or_pull(self, node: int, verb: str) -> str:
        self._need_awake()
        movable = "movable" in self.props(node) or self._n(node) in ("button", "chair", "curtain")
        self._need(movable, f"{self._n(node)} does not move")
        self._need_close(node)
        self._need_reachable(node)
        self._need_free_hand()
        return f"You {verb} the {self._n(node)}."

    def _do_push(self, node: int) -> str:
        return self._push_or_pull(node, "push")

    def _do_pull(self, node: int) -> str:
        return self._push_or_pull(node, "pull")

    def _clean(self, node: int, verb: str) -> str:
        self._need_awake()
        self._need_close(node)
        self._need_reachable(node)
        if "dirty" in self.states[node] or "clean" not in self.states[node]:
            self._restate(node, (self.states[node] - {"dirty"}) | {"clean"})
        self._record(verb, node)
        return f"You {verb} the {self._n(node)}."

    def _do_wipe(self, node: int) -> str:
        self._need(bool(self.held()) and self.held() != [node], "the character holds nothing to wipe with")
        return self._clean(node, "wipe")

    def _do_wash(self, node: int) -> str:
        return self._clean(node, "wash")

    def _do_rinse(self, node: int) -> str:
        return self._clean(node, "rinse")

    def _do_scrub(self, node: int) -> str:
        return self._clean(node, "scrub")

    def _do_squeeze(self, node: int) -> str:
        self._need_awake()
        self._need("clothes" in self.props(node) or self._n(node) in SQUEEZABLE, f"{self._n(node)} cannot be squeezed")
        self._need_close(node)
        self._need_reachable(node)
        self._need(None in self.hands or self.is_held(node), "both hands are full")
        return f"You squeeze the {self._n(node)}."

    def _do_greet(self, node: int) -> str:
        self._need_awake()
        self._need_prop(node, "person", "a person")
        self._need_here(node)
        self._record("greet", node)
        return f"You greet the {self._n(node)}."

    def _do_pourinto(self, node: int, target: int) -> str:
        self._need_awake()
        self._need(bool(self.props(node) & {"pourable", "drinkable"}), f"{self._n(node)} cannot be poured")
        special = self._n(target) in ("hands_both", "sponge", "face")
        self._need(
            bool(self.props(target) & {"recipient", "container"}) or special, f"{self._n(target)} cannot take it"
        )
        self._need_holding(node)
        self._need(node != target, f"{self._n(node)} cannot be poured into itself")
        self._need_close(target)
        if "can_open" in self.props(target):
            self._need_not(target, "closed", "is closed", "open")
        self._record("pour", node, target)
        if self.rules == "original" and self._n(node) == "water":  # poured out, as VirtualHome releases it
            self._release(node)
            self._place_at(node, ("in", target))
            self.taken_from.pop(node, None)
        return f"You pour the {self._n(node)} into the {self._n(target)}."

    # ------------------------------------------------------------------ start facts
    def _set_start(self, text: str) -> None:
        """Apply one start fact of a task: ``dirty(plate)``, ``on(light)``, ``plugged_out(toaster)``,
        ``open(fridge)``, ``worn(shoes)``, ``held(cup)``, ``sitting_on(couch)``, ``lying_on(bed)``,
        ``asleep()``, ``in_room(kitchen)``, ``inside(milk, table)``/``on(cup, table)``."""
        kind, args = fact(text)
        nodes = [self.home.ids(arg)[0] if self.home.ids(arg) else None for arg in args]
        if None in nodes:
            raise ValueError(f"start fact {text!r} names an object this home lacks")
        opposite = {
            "dirty": "clean",
            "clean": "dirty",
            "on": "off",
            "off": "on",
            "open": "closed",
            "closed": "open",
            "plugged_in": "plugged_out",
            "plugged_out": "plugged_in",
        }
        if kind in opposite and len(args) == 1:
            for node in self.home.ids(args[0]):  # every lamp of the home, say
                self._set_state(node, opposite[kind], kind)
        elif kind in ("inside", "on") and len(args) == 2:
            self.place[nodes[0]] = ("in" if kind == "inside" else "on", nodes[1])  # type: ignore[index]
        elif kind == "worn":
            self.place.pop(nodes[0], None)  # type: ignore[arg-type]
            self.worn = (*self.worn, nodes[0])  # type: ignore[arg-type]
        elif kind == "held":
            self.taken_from[nodes[0]] = self.place.pop(nodes[0])  # type: ignore[index,arg-type]
            self.hands[self.hands.index(None)] = nodes[0]
        elif kind in ("sitting_on", "lying_on"):
            seat = nodes[0]
            assert seat is not None
            self.room, self.close, self.facing = self.room_of(seat), frozenset({seat}), None
            self.posture, self.seat = kind.removesuffix("_on"), seat
        elif kind == "asleep":
            self.asleep = True
        elif kind == "in_room":
            self.room = self._room(nodes[0])  # type: ignore[arg-type]
        else:
            raise ValueError(f"unknown start fact {text!r}")

    # ------------------------------------------------------------------ what the character sees
    def describe(self) -> str:
        """Where the character is, what it is close to, holds and wears, and what it sees."""
        return describe_scene(self)
