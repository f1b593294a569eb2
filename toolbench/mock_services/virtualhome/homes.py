"""Five homes: the same kinds of things, laid out and furnished differently.

Each line of ``_PLACES`` says where an object may be, as ``in <room or object>`` or
``on <object>``; the options are separated by ``|`` and home number ``k`` takes option ``k mod n``.
So every home holds every object class (a program that names an object always finds it), in
different rooms, containers and states; ``chair#2`` is a second chair (a program names either as
``chair``, and the world picks the one at hand). A home is a pure function of this text and its number.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType

from toolbench.mock_services.virtualhome.objects import BODY_PARTS, PROPERTIES, ROOMS

HOMES = ("apartment", "townhouse", "cottage", "loft", "family_house")

_PLACES = """
fridge: in kitchen
freezer: in kitchen
oven: in kitchen
microwave: on kitchen_counter | in kitchen
dishwasher: in kitchen
sink: in kitchen
faucet: on sink
sink#2: in bathroom
faucet#2: on sink#2
water: in sink
kitchen_cabinet: in kitchen
kitchen_counter: in kitchen
cupboard: in kitchen | in dining_room
coffee_maker: on kitchen_counter
toaster: on kitchen_counter | on table
trashcan: in kitchen | in home_office
garbage_can: in kitchen | in bathroom
dishrack: on kitchen_counter
cutting_board: on kitchen_counter | in kitchen_cabinet
drying_rack: in bathroom | in kitchen
mop_bucket: in bathroom | in kitchen
washing_machine: in bathroom | in kitchen | in bathroom | in bedroom
table: in dining_room
chair: in dining_room | in home_office
chair#2: in home_office | in dining_room | in bedroom
centerpiece: on table
table_cloth: on table
couch: in living_room
love_seat: in living_room | in bedroom
coffee_table: in living_room
television: in living_room | in living_room | in bedroom
floor_lamp: in living_room | in bedroom
light: in living_room | in dining_room | in bedroom
light#2: in bedroom | in kitchen | in home_office
light#3: in home_office | in bathroom | in living_room
stereo: in living_room | on bookshelf
cd_player: on bookshelf | on coffee_table
video_game_console: in living_room | in bedroom
console: in living_room | in home_office
bookshelf: in living_room | in home_office
curtain: in living_room | in bedroom
window: in living_room | in bedroom | in kitchen
mat: in living_room | in bathroom
instrument_piano: in living_room | in dining_room
drawing: in living_room | in dining_room | in home_office
picture: in bedroom | in living_room
wall: in living_room | in dining_room
floor: in living_room | in kitchen
button: in living_room | in kitchen
electrical_outlet: in living_room | in home_office
bed: in bedroom
dresser: in bedroom
nightstand: in bedroom
closet: in bedroom
pillow: on bed
sheets: on bed | in closet
alarm_clock: on nightstand | on dresser
toilet: in bathroom
bathtub: in bathroom
shower: in bathroom
bathroom_cabinet: in bathroom
mirror: in bathroom | in bedroom
desk: in home_office | in bedroom | in home_office
computer: on desk
keyboard: on desk
mousepad: on desk
mouse: on mousepad
filing_cabinet: in home_office
fax_machine: in home_office | on desk
shredder: in home_office
man: in living_room | in dining_room | in home_office
woman: in kitchen | in living_room | in bedroom
child: in bedroom | in living_room
cat: on couch | in kitchen | on bed
dog: in living_room | in dining_room
fly: in kitchen | in dining_room
plate: in kitchen_cabinet | on dishrack | in cupboard | on table
bowl: in kitchen_cabinet | in cupboard | on dishrack
cup: in kitchen_cabinet | on kitchen_counter | in cupboard
coffee_cup: in kitchen_cabinet | on dishrack | on kitchen_counter
drinking_glass: in kitchen_cabinet | in cupboard | on dishrack
water_glass: in cupboard | in kitchen_cabinet | on kitchen_counter
fork: in kitchen_cabinet | on dishrack | on table
knife: in kitchen_cabinet | on dishrack | on cutting_board
chef_knife: on cutting_board | in kitchen_cabinet
spoon: in kitchen_cabinet | on dishrack | on table
pot: in kitchen_cabinet | on oven | in cupboard
sauce_pan: in kitchen_cabinet | on oven
coffee_pot: on coffee_maker | in kitchen_cabinet
milk: in fridge
juice: in fridge
beer: in fridge | in fridge | in freezer
food_food: in fridge
food_apple: in fridge | on kitchen_counter | on table
food_bread: on kitchen_counter | in kitchen_cabinet
food_carrot: in fridge
food_cheese: in fridge
food_chicken: in freezer | in fridge
food_dessert: in fridge | on table
food_egg: in fridge
food_fish: in freezer | in fridge
food_pizza: in freezer
food_turkey: in freezer | in fridge
food_vegetable: in fridge | on kitchen_counter
food_snack: in kitchen_cabinet | on coffee_table | in cupboard
food_sugar: in kitchen_cabinet | in cupboard
food_cereal: in kitchen_cabinet | in cupboard
food_oatmeal: in kitchen_cabinet | in cupboard
dry_pasta: in kitchen_cabinet | in cupboard
pasta: in kitchen_cabinet | in fridge
coffee: in kitchen_cabinet | on kitchen_counter
ground_coffee: in kitchen_cabinet | in cupboard | on kitchen_counter
coffee_filter: in kitchen_cabinet | on kitchen_counter
dish_soap: on sink | on kitchen_counter
sponge: on sink | on kitchen_counter
rag: on kitchen_counter | in bathroom_cabinet
paper_towel: on kitchen_counter
napkin: on table | in kitchen_cabinet
cloth_napkin: on table | in cupboard
cleaning_solution: in bathroom_cabinet | in kitchen_cabinet
cleaning_bottle: in kitchen_cabinet | in bathroom_cabinet
detergent: on washing_machine | in bathroom_cabinet
laundry_detergent: on washing_machine | in closet
broom: in closet | in kitchen
mop: in mop_bucket | in closet
duster: in closet | in kitchen_cabinet
vacuum_cleaner: in closet | in living_room
light_bulb: in kitchen_cabinet | in closet
towel: in bathroom_cabinet | on bathtub | in closet
toilet_paper: on toilet | in bathroom_cabinet
soap: on sink | on bathtub | in bathroom_cabinet
face_soap: in bathroom_cabinet | on bathtub
shampoo: on bathtub | in bathroom_cabinet
conditioner: on bathtub | in bathroom_cabinet
after_shave: in bathroom_cabinet
razor: in bathroom_cabinet
electric_shaver: in bathroom_cabinet | on dresser
toothbrush: in bathroom_cabinet | on sink
brush: in bathroom_cabinet | on dresser
basket_for_clothes: in bathroom | in bedroom
hanger: in closet
clothes_dress: in closet | in dresser
clothes_hat: in closet | on dresser
clothes_jacket: in closet
clothes_pants: in dresser | in closet
clothes_scarf: in dresser | in closet
clothes_shirt: in dresser | in closet
clothes_skirt: in dresser | in closet
clothes_socks: in dresser
clothes_underwear: in dresser
pajamas: in dresser | on bed
shoes: in closet | in bedroom | in living_room
spectacles: on nightstand | on desk
headset: on desk | in nightstand
novel: on bookshelf | on nightstand | on coffee_table
newspaper: on coffee_table | on table
mail: on table | on desk
check: on desk | in filing_cabinet
bills: on desk | in filing_cabinet
folder: in filing_cabinet | on desk
homework: on desk | in folder
address_book: on desk | in nightstand
printing_paper: on fax_machine | in filing_cabinet | on desk
bookmark: on bookshelf | on nightstand
board_game: on bookshelf | in closet
toy: in bedroom | in living_room
phone: on table | on desk | on nightstand | on coffee_table
laptop: on desk | on coffee_table
remote_control: on coffee_table | on couch
controller: on coffee_table | on video_game_console
video_game_controller: on video_game_console | on coffee_table
keys: on table | in bag
coin: in purse | on table
creditcard: in purse | on desk
purse: on chair | in closet
bag: in closet | on chair
dirt: on floor
wall_clock: in kitchen | in living_room
"""

#: Devices that start unplugged in some homes (the rest start plugged in).
_UNPLUGGED = {1: ("vacuum_cleaner", "toaster"), 2: ("electric_shaver",), 3: ("vacuum_cleaner", "video_game_console")}
#: Devices switched on when the home starts.
_SWITCHED_ON = {0: ("light",), 2: ("light", "floor_lamp"), 4: ("light", "wall_clock")}


@dataclass(frozen=True, eq=False)
class Home:
    """A home's fixed layout: node ids are indexes into ``names``; rooms come first."""

    number: int
    name: str
    names: tuple[str, ...]
    #: id -> ("in" or "on", id of the room or object it is in or on); body parts have none.
    places: tuple[tuple[str, int] | None, ...]
    #: id -> its states when the home starts (open/closed, on/off, plugged_in/plugged_out, clean).
    states: tuple[frozenset[str], ...]
    #: class name -> the ids of the objects of that class.
    index: Mapping[str, tuple[int, ...]] = field(default_factory=dict, compare=False)

    def ids(self, name: str) -> tuple[int, ...]:
        return self.index.get(name, ())


def _place_options() -> dict[str, list[tuple[str, str]]]:
    options: dict[str, list[tuple[str, str]]] = {}
    for line in _PLACES.strip().splitlines():
        name, _, rest = line.partition(":")
        options[name.strip()] = [tuple(option.split()) for option in rest.split("|")]  # type: ignore[misc]
    return options


def _initial_states(name: str, number: int) -> frozenset[str]:
    props = PROPERTIES[name]
    states = set()
    if "can_open" in props:
        states.add("closed")
    if "has_switch" in props:
        states.add("on" if name in _SWITCHED_ON.get(number, ()) else "off")
    if "has_plug" in props:
        states.add("plugged_out" if name in _UNPLUGGED.get(number, ()) else "plugged_in")
    if not props & {"room", "person", "body_part"}:
        states.add("clean")
    return frozenset(states)


@cache
def build_home(number: int) -> Home:
    """Home ``number`` (0 to 4): rooms, then body parts, then objects in the order of ``_PLACES``."""
    if not 0 <= number < len(HOMES):
        raise ValueError(f"there are homes 0 to {len(HOMES) - 1}, not {number}")
    options = _place_options()
    missing = set(PROPERTIES) - {key.split("#")[0] for key in options} - set(ROOMS) - BODY_PARTS
    if missing:
        raise AssertionError(f"objects with no place: {sorted(missing)}")
    keys = [*ROOMS, *sorted(BODY_PARTS), *options]  # "chair#2" is a second chair
    ids = {key: node for node, key in enumerate(keys)}
    places: list[tuple[str, int] | None] = [None] * (len(ROOMS) + len(BODY_PARTS))
    for choices in options.values():
        relation, where = choices[number % len(choices)]
        places.append((relation, ids[where]))
    names = tuple(key.split("#")[0] for key in keys)
    index: dict[str, tuple[int, ...]] = {}
    for node, name in enumerate(names):
        index[name] = (*index.get(name, ()), node)
    states = tuple(_initial_states(n, number) for n in names)
    home = Home(number, HOMES[number], names, tuple(places), states, MappingProxyType(index))
    _check_acyclic(home)
    return home


def _check_acyclic(home: Home) -> None:
    """Every object's chain of places ends in a room (a table bug otherwise)."""
    for node in range(len(home.names)):
        seen, current = set(), node
        while home.places[current] is not None:
            if current in seen:
                raise AssertionError(f"{home.name}: {home.names[node]} is placed in a loop")
            seen.add(current)
            current = home.places[current][1]
        if home.names[current] not in ROOMS and home.names[current] not in BODY_PARTS:
            raise AssertionError(f"{home.name}: {home.names[node]} is not in a room")


#: Where VirtualHome's scripts may place an object of each class (``object_script_placing.json``),
#: as our script derives it (``toolbench.taskgen.virtualhome_paper``).
PLACING_FILE = Path(__file__).resolve().parents[2] / "fixtures" / "virtualhome" / "object_placing.json"


@cache
def places_for(name: str) -> tuple[tuple[str, str], ...]:
    """Where an object of class ``name`` may be: ``(("in", "kitchen_cabinet"), ...)``, the options
    of ``_PLACES`` for the class (in any home), then where VirtualHome's scripts may place it."""
    ours = [option for key, choices in _place_options().items() if key.split("#")[0] == name for option in choices]
    theirs = [tuple(pair) for pair in _placing().get(name, ())]
    return tuple(dict.fromkeys([*ours, *theirs]))  # type: ignore[arg-type]


@cache
def _placing() -> dict[str, list[list[str]]]:
    if not PLACING_FILE.is_file():
        return {}
    with open(PLACING_FILE, encoding="utf-8") as handle:
        return json.load(handle)


@cache
def with_extras(home: Home, extras: tuple[tuple[str, ...], ...]) -> Home:
    """``home`` with more objects of classes it has: ``(name, "in" or "on", parent)`` each, or
    ``(name, relation, parent, room)`` for the parent of that class in that room (the bathroom's
    sink, not the kitchen's); after the home's own, so a name binds to one of the home's own before
    an extra at equal standing. An original task's programs may presume two cups at once (one on
    the table, one in the cabinet)."""
    names, places, index = list(home.names), list(home.places), dict(home.index)
    for name, relation, parent, *room in extras:
        parents = [node for node in home.ids(parent) if not room or home.names[room_node(home, node)] == room[0]]
        if not home.ids(name) or not parents or relation not in ("in", "on") or len(room) > 1:
            raise ValueError(f"an extra {name} {relation} {parent}: the home has no such object or place")
        index[name] = (*index[name], len(names))
        names.append(name)
        places.append((relation, parents[0]))
    states = (*home.states, *(_initial_states(extra[0], home.number) for extra in extras))
    extended = Home(home.number, home.name, tuple(names), tuple(places), states, MappingProxyType(index))
    _check_acyclic(extended)
    return extended


def room_node(home: Home, node: int) -> int:
    """The room an object of the home stands in when the home starts (itself, for a room)."""
    while home.places[node] is not None and home.names[node] not in ROOMS:
        node = home.places[node][1]  # type: ignore[index]
    return node
