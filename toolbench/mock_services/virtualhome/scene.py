"""What the character sees (``World.describe``), from parts kept between steps.

Describing the home from scratch walks every object up to its room, at every step. Instead, the
objects in view are kept per *root*: a room (as the rules see it: under the original rules the
dining room is the kitchen), or ``CARRIED`` for what hangs from the character (the food on a held
plate, whose room is wherever the character is). A root's ``View`` is built once by walking down
from it; when an object moves or changes state, the world takes it and what is in view in or on
it out of its root's view and puts them back as they are now (``World._hide`` and ``_show``, from
``_restate``, ``_place_at`` and ``_unplace``), so a step touches only what it changed, and
describing joins what is kept. ``describe_from_scratch`` is the reference the tests hold it to.
"""

from __future__ import annotations

from functools import cache
from typing import Protocol

from toolbench.mock_services.virtualhome.homes import Home
from toolbench.mock_services.virtualhome.objects import PROPERTIES

#: The root of what the character holds or wears, and what is in or on it.
CARRIED = -1
#: The states a description shows.
SHOWN = frozenset({"open", "closed", "on", "off", "dirty", "plugged_out"})


class View:
    """The objects in view under one root, each with its words (``cup (on table) [dirty]``). Never
    changed once made (copies of a world share it): a change makes a new one."""

    __slots__ = ("_text", "words")

    def __init__(self, words: dict[int, str]) -> None:
        self.words = words
        self._text: str | None = None

    def text(self) -> str:
        """The words in node order, as the description lists them."""
        if self._text is None:
            self._text = "; ".join([self.words[node] for node in sorted(self.words)])
        return self._text


@cache
def room_nodes(home: Home) -> tuple[int, ...]:
    return tuple(node for node, name in enumerate(home.names) if "room" in PROPERTIES[name])


class SceneSource(Protocol):
    """What describing a scene reads of a world (``world.World`` has all of it). Named here so that
    the scene, which the world imports, needs nothing from the world's module."""

    home: Home
    names: tuple[str, ...]
    place: dict[int, tuple[str, int]]
    states: dict[int, frozenset[str]]
    children: dict[int, frozenset[int]]
    rooms_placed: bool
    hands: list[int | None]
    worn: tuple[int, ...]
    room: int
    close: frozenset[int]
    posture: str
    seat: int | None
    asleep: bool

    def props(self, node: int) -> frozenset[str]: ...

    def room_of(self, node: int) -> int: ...

    def in_closed(self, node: int) -> int | None: ...

    def view(self, root: int) -> View: ...

    def _room(self, node: int) -> int: ...


def build_view(world: SceneSource, root: int) -> View:
    """Walk down from ``root``'s rooms (or from what the character holds, wears and is) to every
    object not shut in a closed container; rooms placed under something are their own roots."""
    if root == CARRIED:
        tops = [p for p in world.children if p not in world.place and "room" not in PROPERTIES[world.names[p]]]
    else:
        tops = [room for room in room_nodes(world.home) if world._room(room) == root]
    words: dict[int, str] = {}
    add_below(world, tops, root, words)
    return View(words)


def add_below(world: SceneSource, tops: list[int], root: int, words: dict[int, str]) -> None:
    """Add to ``words`` what is in view in or on ``tops`` (themselves in view), at any depth."""
    names, place, states, children = world.names, world.place, world.states, world.children
    while tops:
        parent = tops.pop()
        closed = "closed" in states[parent]
        for node in children.get(parent, ()):
            relation = place[node][0]
            if (relation == "in" and closed) or "room" in PROPERTIES[names[node]]:
                continue
            words[node] = word_for(world, node, relation, parent, root)
            tops.append(node)


def word_for(world: SceneSource, node: int, relation: str, parent: int, room: int) -> str:
    """How the description lists an object: ``cup (on table) [dirty]`` (no place where it is in the room)."""
    shown = sorted(world.states[node] & SHOWN)
    where = "" if parent == room else f" ({relation} {world.names[parent]})"
    return world.names[node] + where + (f" [{', '.join(shown)}]" if shown else "")


def describe_scene(world: SceneSource) -> str:
    """Where the character is, what it is close to, holds and wears, and what it sees."""
    if world.rooms_placed:  # a room inside something (a start could say so): walk every object
        return describe_from_scratch(world)
    names, children = world.names, world.children
    view, carried = world.view(world.room), world.view(CARRIED).words
    if carried:  # rare: something on or in what the character holds
        here = {**view.words, **carried}
        seen = "; ".join([here[node] for node in sorted(here)])
    else:
        here, seen = view.words, view.text()
    near = world.close
    close = {names[node] for node in near if node in here or "body_part" in PROPERTIES[names[node]]}
    close.update([names[child] for node in near for child in children.get(node, ()) if child in here])
    return _text(world, sorted(close), seen)


def _text(world: SceneSource, close: list[str], seen: str) -> str:
    names = world.names
    posture = world.posture if world.seat is None else f"{world.posture} on the {names[world.seat]}"
    held = ", ".join([names[node] for node in world.hands if node is not None]) or "nothing"
    worn = f"\nWearing: {', '.join([names[node] for node in world.worn])}." if world.worn else ""
    return (
        f"You are in the {names[world.room]}, {posture}{', asleep' if world.asleep else ''}.\nHolding: {held}.{worn}"
        f"\nClose to: {', '.join(close) or 'nothing'}.\nYou see: {seen or 'nothing'}."
    )


def describe_from_scratch(world: SceneSource) -> str:
    """The same description, every object walked up to its room: the reference for ``describe``."""
    # Within reach as the preconditions see it: what the character went to and what is on or in
    # it, less what a closed container hides (gathered in the same pass as what it sees).
    close = {world.names[n] for n in world.close if "body_part" in world.props(n)}
    seen = []
    for node, (relation, parent) in sorted(world.place.items()):
        if world.room_of(node) != world.room or world.in_closed(node) is not None or "room" in world.props(node):
            continue
        if node in world.close or parent in world.close:
            close.add(world.names[node])
        seen.append(word_for(world, node, relation, parent, world.room))
    return _text(world, sorted(close), "; ".join(seen))
