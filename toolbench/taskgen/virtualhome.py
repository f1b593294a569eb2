"""VirtualHome task sets: household activities, each with a home, start facts, goal facts and
reference programs written by our planner (``virtualhome_planner``).

About 40 activity families (put food away, watch TV, wash a dish, ...) are templates over objects;
each activity is named by a short prompt ("Put the milk in the fridge") that says what its goals
are. An activity gets a home where none of its goals already holds and where the planner reaches
them all; its references are plans from different random streams, deduplicated. Splits, as in
ToolBench: ``test`` 100 activities (1-3 references each), ``demo`` 83 activities with about 500
solutions (about 6 each); no activity name is in both. ``train`` (``make``: 1,000 shipped, more for
other seeds) holds the other activities in every home where they are fair, each name in wordings
of its own ("Please put the juice in the fridge"), 1-2 references each, none a near duplicate of a
test or unseen prompt; ``toolbench data align`` samples the same activities. ``unseen`` holds
errands of two or three activities of different kinds (a category such as
"put_in_fridge+watch_tv" that no other split has), told goal by goal in a grammar of their own
(``virtualhome_phrasing``). ``generate`` runs every reference in the home and checks that each line
is executable and succeeds and that the goals hold at the end.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from toolbench.mock_services.virtualhome import HOMES, World, build_home, parse_program
from toolbench.mock_services.virtualhome.objects import PROPERTIES
from toolbench.mock_services.virtualhome.world import ActionFailed, fact
from toolbench.taskgen import (
    SHIPPED_SEED,
    SHIPPED_SIZES,
    Files,
    aligner,
    generator,
    jsonl,
    near_duplicates,
    rng_for,
    split_maker,
)
from toolbench.taskgen import virtualhome_phrasing as phrasing
from toolbench.taskgen.virtualhome_planner import PlanError, plan, program_text

SIZES = {"test": 100, "demo": 83}
SPLIT_FILES = ("test", "demo", "train", "unseen")
#: Record keys whose values no unseen record shares with a demo, train, test or alignment record:
#: an unseen errand's category joins its activities' kinds ("put_in_fridge+watch_tv").
HELD_OUT_KEYS = ("category",)
HAS_DIFFICULTY = True  # steps of the shortest reference
DEMO_PROGRAMS = 6  # distinct solutions per demonstration activity
DEMO_MIN_PROGRAMS = 6  # an activity with fewer distinct plans is not a demonstration
TEST_SEEDS = 3
MAX_LINES = 36  # longer plans are left out (the interactive mode allows 40 steps)

Require = Callable[[World], bool]


@dataclass(frozen=True)
class Activity:
    category: str
    name: str
    goals: tuple[str, ...]
    start: tuple[str, ...] = ()
    require: Require | None = field(default=None, compare=False)


# ----------------------------------------------------------------------------- words
_WORDS = {
    "television": "TV",
    "remote_control": "remote control",
    "food_food": "leftovers",
    "basket_for_clothes": "laundry basket",
    "spectacles": "glasses",
    "creditcard": "credit card",
    "cd_player": "CD player",
    "video_game_console": "game console",
    "video_game_controller": "game controller",
    "kitchen_counter": "counter",
    "food_vegetable": "vegetables",
    "food_snack": "snack",
    "food_egg": "eggs",
    "food_cereal": "cereal",
    "food_oatmeal": "oatmeal",
    "food_sugar": "sugar",
    "dry_pasta": "dry pasta",
    "drinking_glass": "glass",
    "clothes_underwear": "underwear",
    "clothes_pants": "pants",
    "clothes_socks": "socks",
    "pajamas": "pajamas",
    "electric_shaver": "electric shaver",
    "printing_paper": "printed papers",
    "wall_clock": "wall clock",
    "instrument_piano": "piano",
    "hands_both": "hands",
    "bills": "bills",
    "homework": "homework",
    "mail": "mail",
    "food_dessert": "dessert",
    "food_pizza": "pizza",
    "coffee_filter": "coffee filter",
    "sauce_pan": "saucepan",
    "kitchen_cabinet": "kitchen cabinet",
    "bathroom_cabinet": "bathroom cabinet",
    "filing_cabinet": "filing cabinet",
    "love_seat": "love seat",
    "coffee_table": "coffee table",
    "home_office": "home office",
    "living_room": "living room",
    "dining_room": "dining room",
}


#: Names whose words are plural ("put them").
_PLURAL = {
    "clothes_pants",
    "clothes_socks",
    "pajamas",
    "shoes",
    "food_egg",
    "food_vegetable",
    "spectacles",
    "bills",
    "printing_paper",
    "keys",
}


def it(name: str) -> str:
    return "them" if name in _PLURAL else "it"


def word(name: str) -> str:
    if name in _WORDS:
        return _WORDS[name]
    return name.removeprefix("food_").removeprefix("clothes_").replace("_", " ")


def cap(text: str) -> str:
    return text[0].upper() + text[1:]


def same_room(a: str, b: str) -> Require:
    def check(world: World) -> bool:
        return world.room_of(world.home.ids(a)[0]) == world.room_of(world.home.ids(b)[0])

    return check


def where(thing: str, relation: str, place: str) -> Require:
    def check(world: World) -> bool:
        return world.holds(f"{relation}({thing}, {place})")

    return check


def has_state(thing: str, state: str) -> Require:
    def check(world: World) -> bool:
        return world.holds(f"{state}({thing})")

    return check


# ----------------------------------------------------------------------------- families
FRIDGE_FOODS = [
    "milk",
    "juice",
    "beer",
    "food_apple",
    "food_carrot",
    "food_cheese",
    "food_egg",
    "food_vegetable",
    "food_dessert",
    "food_food",
    "pasta",
    "food_chicken",
    "food_fish",
    "food_turkey",
]
FREEZER_FOODS = ["food_chicken", "food_fish", "food_turkey", "food_pizza", "food_dessert", "food_vegetable"]
DISHES = [
    "plate",
    "bowl",
    "cup",
    "coffee_cup",
    "drinking_glass",
    "water_glass",
    "fork",
    "knife",
    "spoon",
    "pot",
    "sauce_pan",
    "coffee_pot",
]
CLOTHES = [
    "clothes_dress",
    "clothes_hat",
    "clothes_jacket",
    "clothes_pants",
    "clothes_scarf",
    "clothes_shirt",
    "clothes_skirt",
    "clothes_socks",
    "clothes_underwear",
    "pajamas",
    "shoes",
]
READABLES = ["novel", "newspaper", "mail", "check", "address_book", "homework", "bills"]
CUTTABLE = [
    "food_apple",
    "food_bread",
    "food_carrot",
    "food_cheese",
    "food_chicken",
    "food_dessert",
    "food_fish",
    "food_pizza",
    "food_turkey",
    "food_vegetable",
]
SNACKS = ["food_apple", "food_bread", "food_carrot", "food_cheese", "food_dessert", "food_snack", "food_pizza"]
DEVICES_ON = [
    "light",
    "floor_lamp",
    "television",
    "computer",
    "laptop",
    "stereo",
    "cd_player",
    "fax_machine",
    "shredder",
    "video_game_console",
    "alarm_clock",
    "electric_shaver",
    "vacuum_cleaner",
    "toaster",
    "coffee_maker",
    "microwave",
    "oven",
    "washing_machine",
    "dishwasher",
    "phone",
    "faucet",
]
PLUGGED = [
    "television",
    "laptop",
    "phone",
    "toaster",
    "coffee_maker",
    "microwave",
    "vacuum_cleaner",
    "electric_shaver",
    "stereo",
    "cd_player",
    "video_game_console",
    "alarm_clock",
    "wall_clock",
    "keyboard",
    "mouse",
    "fax_machine",
    "shredder",
    "light",
    "console",
    "fridge",
    "washing_machine",
    "oven",
]
OPENABLE = [
    "window",
    "curtain",
    "fridge",
    "freezer",
    "dishwasher",
    "microwave",
    "oven",
    "closet",
    "dresser",
    "kitchen_cabinet",
    "cupboard",
    "bathroom_cabinet",
    "filing_cabinet",
    "washing_machine",
    "trashcan",
    "toilet",
]
PEOPLE = ("man", "woman", "child")


def family_fridge() -> Iterator[Activity]:
    rng = rng_for("virtualhome", "family", "fridge")
    for food in FRIDGE_FOODS:
        spot = rng.choice(("kitchen_counter", "table"))
        yield Activity(
            "put_in_fridge",
            f"Put the {word(food)} in the fridge",
            (f"inside({food}, fridge)",),
            (f"on({food}, {spot})",),
        )
    for food in FREEZER_FOODS:
        yield Activity(
            "put_in_fridge",
            f"Put the {word(food)} in the freezer",
            (f"inside({food}, freezer)",),
            (f"on({food}, kitchen_counter)",),
        )
    pairs = list(itertools.combinations(FRIDGE_FOODS, 2))
    rng.shuffle(pairs)
    for a, b in pairs[:30]:
        yield Activity(
            "put_groceries_away",
            f"Put the {word(a)} and the {word(b)} in the fridge",
            (f"inside({a}, fridge)", f"inside({b}, fridge)"),
            (f"on({a}, kitchen_counter)", f"on({b}, kitchen_counter)"),
        )
    yield Activity(
        "put_groceries_away",
        "Put the groceries away",
        ("inside(milk, fridge)", "inside(food_egg, fridge)", "inside(food_cereal, kitchen_cabinet)"),
        ("on(milk, kitchen_counter)", "on(food_egg, kitchen_counter)", "on(food_cereal, kitchen_counter)"),
    )


def family_fetch() -> Iterator[Activity]:
    for food in FRIDGE_FOODS:
        yield Activity(
            "take_out_food",
            f"Get the {word(food)} from the fridge",
            (f"held({food})",),
            require=where(food, "inside", "fridge"),
        )
    for food in FREEZER_FOODS:
        yield Activity(
            "take_out_food",
            f"Take the {word(food)} out of the freezer",
            (f"held({food})",),
            require=where(food, "inside", "freezer"),
        )
    for food in ("food_cereal", "food_oatmeal", "dry_pasta", "food_sugar", "food_snack", "food_bread"):
        yield Activity(
            "take_out_food",
            f"Get the {word(food)} from the cupboard",
            (f"held({food})",),
            require=where(food, "inside", "cupboard"),
        )
        yield Activity(
            "take_out_food",
            f"Take the {word(food)} out of the kitchen cabinet",
            (f"held({food})",),
            require=where(food, "inside", "kitchen_cabinet"),
        )


def family_cook() -> Iterator[Activity]:
    for food in (
        "food_pizza",
        "food_food",
        "food_chicken",
        "food_fish",
        "food_turkey",
        "food_vegetable",
        "food_oatmeal",
        "pasta",
        "milk",
        "food_dessert",
    ):
        verb = "Warm up" if food in ("milk", "food_food", "food_oatmeal") else "Heat"
        yield Activity(
            "heat_food", f"{verb} the {word(food)} in the microwave", (f"inside({food}, microwave)", "on(microwave)")
        )
    for food in ("food_chicken", "food_fish", "food_turkey", "food_pizza", "food_vegetable", "food_bread"):
        yield Activity("heat_food", f"Cook the {word(food)} in the oven", (f"inside({food}, oven)", "on(oven)"))
    yield Activity("make_toast", "Make toast", ("inside(food_bread, toaster)", "on(toaster)"))
    yield Activity(
        "heat_food",
        "Boil the pasta on the stove",
        ("on(pot, oven)", "inside(dry_pasta, pot)", "did(pour, water, pot)", "on(oven)"),
    )


def family_coffee() -> Iterator[Activity]:
    yield Activity(
        "make_coffee",
        "Make coffee",
        ("inside(coffee_filter, coffee_maker)", "did(pour, water, coffee_maker)", "on(coffee_maker)"),
    )
    yield Activity("make_coffee", "Turn on the coffee maker", ("on(coffee_maker)",))
    yield Activity("make_coffee", "Fill the coffee maker with water", ("did(pour, water, coffee_maker)",))
    yield Activity("make_coffee", "Put a filter in the coffee maker", ("inside(coffee_filter, coffee_maker)",))
    yield Activity("make_coffee", "Pour a cup of coffee", ("did(pour, coffee, coffee_cup)",))
    yield Activity("make_coffee", "Have a cup of coffee", ("did(pour, coffee, coffee_cup)", "did(drink, coffee_cup)"))
    yield Activity(
        "make_coffee",
        "Drink coffee on the couch",
        ("did(pour, coffee, coffee_cup)", "did(drink, coffee_cup)", "sitting_on(couch)"),
    )
    yield Activity("make_coffee", "Add milk to the coffee", ("did(pour, milk, coffee_cup)",))
    yield Activity("make_coffee", "Put the coffee pot on the coffee maker", ("on(coffee_pot, coffee_maker)",))


VESSELS = ("cup", "drinking_glass", "water_glass", "coffee_cup")


def family_drink() -> Iterator[Activity]:
    for drink, vessel in itertools.product(("water", "juice", "milk", "beer"), (*VESSELS, "bowl")):
        if (drink, vessel) in (("beer", "coffee_cup"), ("beer", "bowl"), ("juice", "bowl"), ("water", "coffee_cup")):
            continue
        yield Activity("pour_drink", f"Pour {word(drink)} into the {word(vessel)}", (f"did(pour, {drink}, {vessel})",))
        if vessel != "bowl":
            yield Activity(
                "drink",
                f"Drink {word(drink)} from the {word(vessel)}",
                (f"did(pour, {drink}, {vessel})", f"did(drink, {vessel})"),
            )
    yield Activity("drink", "Drink a beer", ("did(drink, beer)",))
    yield Activity("drink", "Drink juice from the carton", ("did(drink, juice)",))
    yield Activity("drink", "Drink milk from the carton", ("did(drink, milk)",))
    yield Activity("drink", "Have a beer on the couch", ("did(drink, beer)", "sitting_on(couch)"))
    for drink in ("water", "juice", "milk"):
        yield Activity(
            "drink",
            f"Drink a glass of {word(drink)} at the table",
            (f"did(pour, {drink}, drinking_glass)", "did(drink, drinking_glass)", "sitting_on(chair)"),
            require=where("chair", "inside", "dining_room"),
        )


def family_watch() -> Iterator[Activity]:
    yield Activity("watch_tv", "Watch TV", ("on(television)", "did(watch, television)"))
    yield Activity(
        "watch_tv",
        "Watch TV on the couch",
        ("on(television)", "did(watch, television)", "sitting_on(couch)"),
        require=same_room("television", "couch"),
    )
    yield Activity(
        "watch_tv",
        "Watch TV lying on the couch",
        ("on(television)", "did(watch, television)", "lying_on(couch)"),
        require=same_room("television", "couch"),
    )
    yield Activity(
        "watch_tv",
        "Watch TV from the love seat",
        ("on(television)", "did(watch, television)", "sitting_on(love_seat)"),
        require=same_room("television", "love_seat"),
    )
    yield Activity(
        "watch_tv",
        "Watch TV in bed",
        ("on(television)", "did(watch, television)", "lying_on(bed)"),
        require=same_room("television", "bed"),
    )
    yield Activity(
        "watch_tv",
        "Watch TV with a snack",
        ("on(television)", "did(watch, television)", "did(eat, food_snack)", "sitting_on(couch)"),
        require=same_room("television", "couch"),
    )
    yield Activity("watch_tv", "Watch a movie on the laptop", ("on(laptop)", "did(watch, laptop)"))
    yield Activity("watch_tv", "Watch a video on the computer", ("on(computer)", "did(watch, computer)"))
    yield Activity(
        "watch_tv",
        "Turn on the TV with the remote and sit down",
        ("on(television)", "held(remote_control)", "sitting_on(couch)"),
    )
    yield Activity(
        "watch_tv", "Turn off the TV and go to bed", ("off(television)", "lying_on(bed)"), ("on(television)",)
    )


def family_switch() -> Iterator[Activity]:
    rng = rng_for("virtualhome", "family", "switch")
    for device in DEVICES_ON:
        verb = rng.choice(("Turn on", "Switch on"))
        plugged = has_state(device, "plugged_in") if "has_plug" in PROPERTIES[device] else None
        yield Activity("switch_on", f"{verb} the {word(device)}", (f"on({device})",), require=plugged)
        verb = rng.choice(("Turn off", "Switch off"))
        yield Activity(
            "switch_off", f"{verb} the {word(device)}", (f"off({device})",), (f"on({device})",), require=plugged
        )
    lights = ("light", "floor_lamp")
    yield Activity("switch_on", "Turn on the light and the floor lamp", ("on(light)", "on(floor_lamp)"))
    yield Activity(
        "switch_off",
        "Turn off the light and the floor lamp",
        ("off(light)", "off(floor_lamp)"),
        ("on(light)", "on(floor_lamp)"),
    )
    for light in lights:
        yield Activity(
            "switch_off",
            f"Turn off the {word(light)} and go to sleep",
            (f"off({light})", "lying_on(bed)", "asleep()"),
            (f"on({light})",),
        )
        yield Activity(
            "switch_on", f"Turn on the {word(light)} and read the novel", (f"on({light})", "did(read, novel)")
        )


def family_plug() -> Iterator[Activity]:
    for device in PLUGGED:
        yield Activity(
            "plug_in", f"Plug in the {word(device)}", (f"plugged_in({device})",), (f"plugged_out({device})",)
        )
        yield Activity(
            "unplug", f"Unplug the {word(device)}", (f"plugged_out({device})",), require=has_state(device, "plugged_in")
        )
        if "has_switch" in PROPERTIES[device]:
            yield Activity(
                "plug_in",
                f"Plug in the {word(device)} and turn {it(device)} on",
                (f"plugged_in({device})", f"on({device})"),
                (f"plugged_out({device})",),
            )


def family_clothes() -> Iterator[Activity]:
    rng = rng_for("virtualhome", "family", "clothes")
    wearables = [*CLOTHES, "spectacles", "headset"]
    for item in wearables:
        yield Activity("put_on_clothes", f"Put on the {word(item)}", (f"worn({item})",))
    places = {"closet": "in the closet", "dresser": "in the dresser", "basket_for_clothes": "in the laundry basket"}
    for item in CLOTHES:
        for place, phrase in places.items():
            yield Activity(
                "take_off_clothes",
                f"Take off the {word(item)} and put {it(item)} {phrase}",
                (f"inside({item}, {place})",),
                (f"worn({item})",),
            )
        yield Activity(
            "take_off_clothes",
            f"Take off the {word(item)} and leave {it(item)} on the bed",
            (f"on({item}, bed)",),
            (f"worn({item})",),
        )
    pairs = list(itertools.combinations(CLOTHES, 2))
    rng.shuffle(pairs)
    for a, b in pairs[:16]:
        yield Activity("get_dressed", f"Put on the {word(a)} and the {word(b)}", (f"worn({a})", f"worn({b})"))
    yield Activity("get_dressed", "Get dressed", ("worn(clothes_shirt)", "worn(clothes_pants)", "worn(shoes)"))
    yield Activity(
        "get_dressed", "Dress warmly to go out", ("worn(clothes_jacket)", "worn(clothes_scarf)", "worn(clothes_hat)")
    )
    yield Activity("get_dressed", "Get ready for bed", ("worn(pajamas)", "lying_on(bed)"))
    yield Activity(
        "get_dressed",
        "Change into pajamas",
        ("worn(pajamas)", "inside(clothes_shirt, basket_for_clothes)"),
        ("worn(clothes_shirt)",),
    )
    yield Activity("get_dressed", "Put on your shoes and grab the keys", ("worn(shoes)", "held(keys)"))


def family_rest() -> Iterator[Activity]:
    yield Activity("sleep", "Go to sleep", ("lying_on(bed)", "asleep()"))
    yield Activity("sleep", "Take a nap on the couch", ("lying_on(couch)", "asleep()"))
    yield Activity("sleep", "Take a nap on the love seat", ("lying_on(love_seat)", "asleep()"))
    yield Activity("sleep", "Doze off in the chair", ("sitting_on(chair)", "asleep()"))
    yield Activity("sleep", "Go to bed in your pajamas", ("worn(pajamas)", "lying_on(bed)", "asleep()"))
    yield Activity(
        "sleep",
        "Lie in bed and read the newspaper until you fall asleep",
        ("lying_on(bed)", "did(read, newspaper)", "asleep()"),
    )
    in_bed = ("lying_on(bed)", "asleep()")
    yield Activity("wake_up", "Wake up", ("awake()",), in_bed)
    yield Activity("wake_up", "Wake up and get out of bed", ("awake()", "standing()"), in_bed)
    yield Activity(
        "wake_up", "Wake up and turn off the alarm clock", ("awake()", "off(alarm_clock)"), ("on(alarm_clock)", *in_bed)
    )
    yield Activity("wake_up", "Wake up and get dressed", ("worn(clothes_shirt)", "worn(clothes_pants)"), in_bed)
    yield Activity("wake_up", "Wake up and open the curtains", ("open(curtain)",), in_bed)
    yield Activity("wake_up", "Wake up and make coffee", ("did(pour, water, coffee_maker)", "on(coffee_maker)"), in_bed)
    yield Activity(
        "wake_up",
        "Get up from the couch and turn off the TV",
        ("off(television)",),
        ("sitting_on(couch)", "on(television)"),
        require=same_room("television", "couch"),
    )
    yield Activity("wake_up", "Get up from the couch", ("standing()",), ("sitting_on(couch)",))
    for seat in ("couch", "chair", "love_seat", "bed", "toilet", "bathtub"):
        yield Activity("sit_down", f"Sit on the {word(seat)}", (f"sitting_on({seat})",))
    for bed in ("couch", "bed", "love_seat", "mat", "bathtub"):
        yield Activity("lie_down", f"Lie down on the {word(bed)}", (f"lying_on({bed})",))
    yield Activity("sit_down", "Sit on the couch with the cat", ("held(cat)", "sitting_on(couch)"))
    yield Activity("lie_down", "Lie on the couch with a pillow", ("on(pillow, couch)", "lying_on(couch)"))


def family_read() -> Iterator[Activity]:
    places = {
        "": (),
        " on the couch": ("sitting_on(couch)",),
        " in bed": ("lying_on(bed)",),
        " in the chair": ("sitting_on(chair)",),
        " on the love seat": ("sitting_on(love_seat)",),
    }
    for item, (phrase, posture) in itertools.product(READABLES, places.items()):
        things = {
            "novel": "a novel",
            "newspaper": "the newspaper",
            "homework": "your homework",
            "address_book": "the address book",
            "mail": "the mail",
            "check": "the check",
            "bills": "the bills",
        }
        yield Activity("read", f"Read {things[item]}{phrase}", (f"did(read, {item})", *posture))


def family_computer() -> Iterator[Activity]:
    yield Activity("use_computer", "Write an email", ("on(computer)", "did(type_on, keyboard)"))
    yield Activity(
        "use_computer", "Switch on the computer and look at your email", ("on(computer)", "did(look_at, computer)")
    )
    yield Activity("use_computer", "Type a report on the laptop", ("on(laptop)", "did(type_on, laptop)"))
    yield Activity(
        "use_computer", "Switch on the laptop and look at the screen", ("on(laptop)", "did(look_at, laptop)")
    )
    yield Activity(
        "use_computer",
        "Look at the laptop screen on the couch, with the laptop on",
        ("on(laptop)", "did(look_at, laptop)", "sitting_on(couch)"),
    )
    yield Activity(
        "use_computer",
        "Do your homework on the computer",
        ("did(read, homework)", "on(computer)", "did(type_on, keyboard)"),
    )
    yield Activity("use_computer", "Turn off the computer", ("off(computer)",), ("on(computer)",))
    yield Activity(
        "use_computer",
        "Sit at the desk, switch on the computer and look at the screen",
        ("on(computer)", "did(look_at, computer)", "sitting_on(chair)"),
        require=same_room("chair", "desk"),
    )
    yield Activity("use_phone", "Send a text message", ("did(type_on, phone)",))
    yield Activity("use_phone", "Text a friend from the couch", ("did(type_on, phone)", "sitting_on(couch)"))
    yield Activity("use_phone", "Call a friend", ("on(phone)", "did(type_on, phone)", "held(phone)"))
    yield Activity("use_phone", "Pick up the phone", ("held(phone)",))
    yield Activity("use_phone", "Charge the phone", ("plugged_in(phone)",), ("plugged_out(phone)",))
    yield Activity(
        "office",
        "Fax the printed papers",
        ("on(printing_paper, fax_machine)", "on(fax_machine)"),
        require=lambda w: not w.holds("on(printing_paper, fax_machine)"),
    )
    for paper in ("bills", "check", "mail", "printing_paper", "homework"):
        yield Activity("office", f"Shred the {word(paper)}", (f"inside({paper}, shredder)", "on(shredder)"))
        yield Activity("office", f"File the {word(paper)} in the filing cabinet", (f"inside({paper}, filing_cabinet)",))
        yield Activity("office", f"Put the {word(paper)} in the folder", (f"inside({paper}, folder)",))


def family_people() -> Iterator[Activity]:
    for person in PEOPLE:
        yield Activity("greet", f"Greet the {person}", (f"did(greet, {person})",))
        yield Activity(
            "greet", f"Go say hello to the {person} and look at them", (f"did(greet, {person})", f"facing({person})")
        )
    for a, b in itertools.combinations(PEOPLE, 2):
        yield Activity("greet", f"Greet the {a} and the {b}", (f"did(greet, {a})", f"did(greet, {b})"))
    yield Activity("greet", "Greet the guests", tuple(f"did(greet, {p})" for p in PEOPLE))


def family_food() -> Iterator[Activity]:
    for food in CUTTABLE:
        yield Activity("cut_food", f"Cut the {word(food)}", (f"did(cut, {food})",))
        yield Activity(
            "cut_food",
            f"Slice the {word(food)} on the cutting board",
            (f"on({food}, cutting_board)", f"did(cut, {food})"),
        )
        yield Activity(
            "cut_food", f"Cut the {word(food)} and eat {it(food)}", (f"did(cut, {food})", f"did(eat, {food})")
        )
    for food in SNACKS:
        yield Activity("eat", f"Eat the {word(food)}", (f"did(eat, {food})",))
        yield Activity("eat", f"Eat the {word(food)} on the couch", (f"did(eat, {food})", "sitting_on(couch)"))
        yield Activity(
            "eat",
            f"Have the {word(food)} at the table",
            (f"did(eat, {food})", "sitting_on(chair)"),
            require=where("chair", "inside", "dining_room"),
        )
    yield Activity(
        "eat", "Eat cereal with milk", ("inside(food_cereal, bowl)", "did(pour, milk, bowl)", "did(eat, food_cereal)")
    )


def family_dishes() -> Iterator[Activity]:
    for dish in DISHES:
        dirty = (f"dirty({dish})",)
        yield Activity("wash_dishes", f"Wash the {word(dish)}", (f"clean({dish})",), dirty)
        yield Activity(
            "wash_dishes",
            f"Wash the {word(dish)} and put {it(dish)} on the dishrack",
            (f"clean({dish})", f"on({dish}, dishrack)"),
            dirty,
        )
        yield Activity("wash_dishes", f"Rinse the {word(dish)}", (f"did(rinse, {dish})", f"clean({dish})"), dirty)
        yield Activity("wash_dishes", f"Scrub the {word(dish)}", (f"did(scrub, {dish})", f"clean({dish})"), dirty)
        yield Activity("load_dishwasher", f"Put the {word(dish)} in the dishwasher", (f"inside({dish}, dishwasher)",))
        yield Activity(
            "clear_table", f"Bring the {word(dish)} to the sink", (f"inside({dish}, sink)",), (f"on({dish}, table)",)
        )
        yield Activity("put_away_dishes", f"Put the {word(dish)} away in the cupboard", (f"inside({dish}, cupboard)",))
    rng = rng_for("virtualhome", "family", "dishes")
    pairs = list(itertools.combinations(DISHES[:9], 2))
    rng.shuffle(pairs)
    for a, b in pairs[:8]:
        yield Activity(
            "load_dishwasher",
            f"Load the {word(a)} and the {word(b)} and run the dishwasher",
            (f"inside({a}, dishwasher)", f"inside({b}, dishwasher)", "on(dishwasher)"),
        )
    yield Activity(
        "load_dishwasher",
        "Run the dishwasher",
        ("on(dishwasher)",),
        ("inside(plate, dishwasher)", "inside(bowl, dishwasher)"),
    )
    yield Activity(
        "load_dishwasher",
        "Empty the dishwasher",
        ("inside(plate, kitchen_cabinet)", "inside(cup, kitchen_cabinet)"),
        ("inside(plate, dishwasher)", "inside(cup, dishwasher)"),
    )
    yield Activity(
        "clear_table",
        "Clear the table",
        ("inside(plate, sink)", "inside(cup, sink)", "inside(fork, sink)"),
        ("on(plate, table)", "on(cup, table)", "on(fork, table)"),
    )


def family_table() -> Iterator[Activity]:
    yield Activity("set_table", "Set the table", ("on(plate, table)", "on(fork, table)", "on(knife, table)"))
    yield Activity(
        "set_table",
        "Put a bowl, a spoon and a cup on the table",
        ("on(bowl, table)", "on(spoon, table)", "on(cup, table)"),
    )
    yield Activity(
        "set_table",
        "Put a plate, a fork, a knife and a glass on the table",
        ("on(plate, table)", "on(fork, table)", "on(knife, table)", "on(drinking_glass, table)"),
    )
    yield Activity(
        "set_table", "Lay the tablecloth on the table", ("on(table_cloth, table)",), ("inside(table_cloth, cupboard)",)
    )
    yield Activity("set_table", "Put the napkins on the table", ("on(napkin, table)", "on(cloth_napkin, table)"))
    rng = rng_for("virtualhome", "family", "table")
    items = ["plate", "bowl", "cup", "fork", "knife", "spoon", "drinking_glass", "water_glass", "napkin"]
    pairs = list(itertools.combinations(items, 2))
    rng.shuffle(pairs)
    for a, b in pairs[:14]:
        yield Activity(
            "set_table", f"Put a {word(a)} and a {word(b)} on the table", (f"on({a}, table)", f"on({b}, table)")
        )


SURFACES = [
    "table",
    "kitchen_counter",
    "desk",
    "coffee_table",
    "mirror",
    "sink",
    "toilet",
    "bathtub",
    "window",
    "floor",
    "television",
    "computer",
    "dresser",
    "nightstand",
    "bookshelf",
]


def family_clean() -> Iterator[Activity]:
    for thing in SURFACES:
        dirty = (f"dirty({thing})",)
        the = (
            "the computer screen"
            if thing == "computer"
            else "the TV screen"
            if thing == "television"
            else (f"the {word(thing)}")
        )
        if thing == "floor":
            yield Activity("clean", "Mop the floor", ("clean(floor)", "did(scrub, floor)"), dirty)
            yield Activity("clean", "Wash the floor", ("clean(floor)", "did(wash, floor)"), dirty)
            continue
        yield Activity("clean", f"Wipe {the}", (f"did(wipe, {thing})", f"clean({thing})"), dirty)
        yield Activity("clean", f"Clean {the}", (f"clean({thing})",), dirty)
        if thing in ("table", "kitchen_counter", "sink", "toilet", "bathtub", "window", "desk"):
            yield Activity("clean", f"Scrub {the}", (f"did(scrub, {thing})", f"clean({thing})"), dirty)
    yield Activity("personal_care", "Wash your hands", ("did(wash, hands_both)",))
    yield Activity("personal_care", "Wash your face", ("did(wash, face)",))
    yield Activity("personal_care", "Rinse your face", ("did(rinse, face)",))
    yield Activity("personal_care", "Dry your hands", ("did(wipe, hands_both)",))
    yield Activity("personal_care", "Wash and dry your hands", ("did(wash, hands_both)", "did(wipe, hands_both)"))
    yield Activity("personal_care", "Wash your hair", ("did(wash, hair)",))
    yield Activity("personal_care", "Shave with the electric shaver", ("held(electric_shaver)", "on(electric_shaver)"))
    yield Activity("personal_care", "Lie in the bathtub and wash your hair", ("lying_on(bathtub)", "did(wash, hair)"))
    yield Activity("personal_care", "Use the toilet", ("open(toilet)", "sitting_on(toilet)"))
    yield Activity("personal_care", "Brush your teeth", ("held(toothbrush)", "did(rinse, toothbrush)"))
    yield Activity(
        "personal_care", "Put on your glasses and look in the mirror", ("worn(spectacles)", "did(look_at, mirror)")
    )


def family_trash() -> Iterator[Activity]:
    rubbish = [
        "newspaper",
        "mail",
        "napkin",
        "paper_towel",
        "printing_paper",
        "coffee_filter",
        "food_food",
        "bills",
        "toilet_paper",
    ]
    for item in rubbish:
        yield Activity("throw_away", f"Throw the {word(item)} in the trash can", (f"inside({item}, trashcan)",))
        yield Activity("throw_away", f"Throw the {word(item)} in the garbage can", (f"inside({item}, garbage_can)",))


def family_housework() -> Iterator[Activity]:
    for room in ("living_room", "bedroom", "dining_room", "home_office", "kitchen"):
        start = ("in_room(kitchen)",) if room == "living_room" else ()
        goals = ("held(vacuum_cleaner)", f"in_room({room})", "on(vacuum_cleaner)")
        yield Activity(
            "vacuum", f"Vacuum the {word(room)}", goals, start, require=has_state("vacuum_cleaner", "plugged_in")
        )
        yield Activity(
            "vacuum",
            f"Plug in the vacuum and vacuum the {word(room)}",
            (*goals, "plugged_in(vacuum_cleaner)"),
            start,
            require=has_state("vacuum_cleaner", "plugged_out"),
        )
    for item in (
        "clothes_shirt",
        "clothes_pants",
        "clothes_dress",
        "clothes_socks",
        "clothes_underwear",
        "clothes_skirt",
        "pajamas",
        "towel",
        "sheets",
        "clothes_scarf",
    ):
        yield Activity(
            "laundry",
            f"Wash the {word(item)} in the washing machine",
            (
                f"inside({item}, washing_machine)",
                "did(pour, laundry_detergent, washing_machine)",
                "on(washing_machine)",
            ),
        )
        yield Activity(
            "laundry", f"Put the {word(item)} in the laundry basket", (f"inside({item}, basket_for_clothes)",)
        )
    yield Activity(
        "laundry",
        "Wash the shirt and the pants in the washing machine with detergent",
        (
            "inside(clothes_shirt, washing_machine)",
            "inside(clothes_pants, washing_machine)",
            "did(pour, detergent, washing_machine)",
            "on(washing_machine)",
        ),
    )
    yield Activity(
        "laundry", "Start the washing machine", ("on(washing_machine)",), ("inside(towel, washing_machine)",)
    )


TIDY = (
    ("novel", "on", "bookshelf"),
    ("novel", "on", "nightstand"),
    ("remote_control", "on", "coffee_table"),
    ("keys", "in", "bag"),
    ("keys", "on", "table"),
    ("keys", "in", "purse"),
    ("toy", "in", "closet"),
    ("toy", "in", "basket_for_clothes"),
    ("board_game", "on", "bookshelf"),
    ("board_game", "on", "table"),
    ("pillow", "on", "bed"),
    ("pillow", "on", "couch"),
    ("towel", "in", "bathroom_cabinet"),
    ("towel", "on", "bathtub"),
    ("toilet_paper", "in", "bathroom_cabinet"),
    ("shampoo", "on", "bathtub"),
    ("soap", "on", "sink"),
    ("laptop", "on", "desk"),
    ("laptop", "on", "coffee_table"),
    ("phone", "on", "nightstand"),
    ("spectacles", "on", "nightstand"),
    ("mail", "on", "desk"),
    ("mail", "on", "table"),
    ("creditcard", "in", "purse"),
    ("coin", "in", "purse"),
    ("cup", "in", "kitchen_cabinet"),
    ("bowl", "in", "kitchen_cabinet"),
    ("food_cereal", "in", "cupboard"),
    ("dry_pasta", "in", "kitchen_cabinet"),
    ("food_sugar", "in", "kitchen_cabinet"),
    ("light_bulb", "in", "closet"),
    ("broom", "in", "closet"),
    ("mop", "in", "closet"),
    ("hanger", "in", "closet"),
    ("picture", "on", "wall"),
    ("drawing", "on", "wall"),
    ("centerpiece", "on", "table"),
    ("alarm_clock", "on", "nightstand"),
    ("headset", "on", "desk"),
    ("video_game_controller", "on", "coffee_table"),
    ("shoes", "in", "closet"),
    ("clothes_jacket", "in", "closet"),
    ("clothes_hat", "in", "closet"),
    ("electric_shaver", "in", "bathroom_cabinet"),
    ("cat", "on", "couch"),
    ("cat", "on", "bed"),
    ("food_bread", "on", "cutting_board"),
    ("after_shave", "in", "bathroom_cabinet"),
    ("dish_soap", "on", "sink"),
    ("cleaning_solution", "in", "bathroom_cabinet"),
)


def family_tidy() -> Iterator[Activity]:
    for thing, relation, place in TIDY:
        verb = "Hang" if place == "wall" else "Put"
        fact_name = "inside" if relation == "in" else "on"
        yield Activity(
            "put_away", f"{verb} the {word(thing)} {relation} the {word(place)}", (f"{fact_name}({thing}, {place})",)
        )
    rng = rng_for("virtualhome", "family", "bring")
    portable = [
        "novel",
        "laptop",
        "phone",
        "toy",
        "pillow",
        "towel",
        "cup",
        "plate",
        "remote_control",
        "board_game",
        "cat",
        "dog",
        "basket_for_clothes",
    ]
    rooms = ("bedroom", "bathroom", "home_office", "dining_room", "kitchen", "living_room")
    pairs = list(itertools.product(portable, rooms))
    rng.shuffle(pairs)
    for thing, room in pairs[:26]:
        yield Activity("bring", f"Bring the {word(thing)} to the {word(room)}", (f"inside({thing}, {room})",))
    yield Activity("put_away", "Pick up the cat", ("held(cat)",))
    yield Activity("put_away", "Pick up the toy", ("held(toy)",))
    yield Activity("put_away", "Get the towel", ("held(towel)",))


def family_look() -> Iterator[Activity]:
    things = {
        "drawing": "Admire the drawing",
        "picture": "Look at the picture",
        "centerpiece": "Look at the centerpiece",
        "cat": "Look at the cat",
        "dog": "Look at the dog",
        "mirror": "Look in the mirror",
        "window": "Look out the window",
        "wall_clock": "Check the time on the wall clock",
        "alarm_clock": "Check the alarm clock",
        "fly": "Look at the fly",
        "instrument_piano": "Look at the piano",
    }
    for thing, name in things.items():
        yield Activity("look_at", name, (f"did(look_at, {thing})",))
    yield Activity(
        "look_at",
        "Open the curtains and look out the window",
        ("open(curtain)", "did(look_at, window)"),
        require=same_room("curtain", "window"),
    )
    yield Activity(
        "look_at",
        "Look at the cat from the couch",
        ("did(look_at, cat)", "sitting_on(couch)"),
        require=same_room("cat", "couch"),
    )


def family_open_close() -> Iterator[Activity]:
    for thing in OPENABLE:
        yield Activity("open", f"Open the {word(thing)}", (f"open({thing})",))
        yield Activity("close", f"Close the {word(thing)}", (f"closed({thing})",), (f"open({thing})",))
    yield Activity("open", "Open the window and the curtains", ("open(window)", "open(curtain)"))
    yield Activity(
        "close",
        "Close the fridge and the freezer",
        ("closed(fridge)", "closed(freezer)"),
        ("open(fridge)", "open(freezer)"),
    )


def family_play() -> Iterator[Activity]:
    yield Activity("play", "Play a video game", ("on(video_game_console)", "held(video_game_controller)"))
    yield Activity(
        "play",
        "Play a video game on the couch",
        ("on(video_game_console)", "held(video_game_controller)", "sitting_on(couch)"),
        require=same_room("video_game_console", "couch"),
    )
    yield Activity("play", "Listen to music on the stereo", ("on(stereo)", "sitting_on(couch)"))
    yield Activity("play", "Turn on the CD player and sit on the love seat", ("on(cd_player)", "sitting_on(love_seat)"))
    yield Activity("play", "Set up a board game on the coffee table", ("on(board_game, coffee_table)",))
    yield Activity("play", "Play with the toy on the bed", ("held(toy)", "sitting_on(bed)"))
    yield Activity(
        "play", "Put the game controller on the game console", ("on(video_game_controller, video_game_console)",)
    )


FAMILIES = (
    family_fridge,
    family_fetch,
    family_cook,
    family_coffee,
    family_drink,
    family_watch,
    family_switch,
    family_plug,
    family_clothes,
    family_rest,
    family_read,
    family_computer,
    family_people,
    family_food,
    family_dishes,
    family_table,
    family_clean,
    family_trash,
    family_housework,
    family_tidy,
    family_look,
    family_open_close,
    family_play,
)


# ----------------------------------------------------------------------------- homes and plans
@dataclass(frozen=True)
class Task:
    activity: Activity
    home: int

    @property
    def name(self) -> str:
        return self.activity.name

    def world(self) -> World:
        return World(build_home(self.home), self.activity.start)


def _fits(activity: Activity, home: int) -> World | None:
    """The activity's start world in this home, when it is a fair task there."""
    try:
        world = World(build_home(home), activity.start)
    except (ValueError, KeyError, IndexError, ActionFailed):  # start facts this home cannot take
        return None
    if activity.require is not None and not activity.require(world):
        return None
    if any(world.holds(goal) for goal in activity.goals):
        return None
    return world


def _program(task: Task, seed: object) -> str | None:
    try:
        steps = plan(task.world(), task.activity.goals, rng_for("virtualhome", "plan", task.name, seed))
    except PlanError:
        return None
    if len(steps) > MAX_LINES:
        return None
    return program_text(steps)


@cache
def all_tasks() -> tuple[Task, ...]:
    """Every activity of every family, in a home where it is fair and plannable (distinct names and goals)."""
    tasks: list[Task] = []
    names: set[str] = set()
    seen_goals: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()
    for family in FAMILIES:
        for activity in family():
            key = (tuple(sorted(activity.goals)), tuple(sorted(activity.start)))
            if activity.name in names or key in seen_goals:
                continue
            homes = list(range(len(HOMES)))
            rng_for("virtualhome", "home", activity.name).shuffle(homes)
            for home in homes:
                if _fits(activity, home) is not None and _program(Task(activity, home), 0) is not None:
                    tasks.append(Task(activity, home))
                    names.add(activity.name)
                    seen_goals.add(key)
                    break
    return tuple(tasks)


def _programs(task: Task, seeds: range, wanted: int, taken: set[str]) -> list[str]:
    programs: list[str] = []
    for seed in seeds:
        text = _program(task, seed)
        if text is not None and text not in programs and text not in taken:
            programs.append(text)
            if len(programs) >= wanted:
                break
    return programs


def _record(split: str, index: int, task: Task, programs: list[str]) -> dict[str, Any]:
    return {
        "id": f"virtualhome-{split}-{index:04d}",
        "category": task.activity.category,
        "template": template_of(task.activity),
        "prompt": task.name,
        "completion": programs,
        "home": task.home,
        "start": list(task.activity.start),
        "goals": list(task.activity.goals),
    }


@cache
def _object_pattern() -> re.Pattern[str]:
    """Every object's prompt word, longest first, as whole words."""
    words = sorted({word(name) for name in PROPERTIES}, key=len, reverse=True)
    return re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, words)) + r")(?![\w-])")


def template_of(activity: Activity) -> str:
    """The instruction template an activity's name was written from: its category and its name with
    every object word a slot ("put_in_fridge: Put the {} in the {}")."""
    return f"{activity.category}: {_object_pattern().sub('{}', activity.name)}"


def _pick(pool: list[Task], total: int, rng: Any, accept: Callable[[Task], bool]) -> list[Task]:
    """``total`` tasks taken round-robin over the categories, each passing ``accept``."""
    by_category: dict[str, list[Task]] = {}
    for task in pool:
        by_category.setdefault(task.activity.category, []).append(task)
    for tasks in by_category.values():
        rng.shuffle(tasks)
    chosen: list[Task] = []
    while len(chosen) < total and any(by_category.values()):
        for category in sorted(by_category):
            tasks = by_category[category]
            while tasks:
                task = tasks.pop()
                if accept(task):
                    chosen.append(task)
                    break
            if len(chosen) == total:
                break
    if len(chosen) < total:
        raise AssertionError(f"only {len(chosen)} of {total} activities")
    return chosen


@cache
def splits() -> dict[str, list[dict[str, Any]]]:
    """The test and demo records; no activity name and no program is in both."""
    tasks = list(all_tasks())
    rng = rng_for("virtualhome", "splits")
    taken: set[str] = set()
    programs: dict[str, list[str]] = {}

    def with_programs(seeds: int, wanted: int, least: int) -> Callable[[Task], bool]:
        def accept(task: Task) -> bool:
            found = _programs(task, range(seeds), wanted, taken)
            if len(found) < least:
                return False
            programs[task.name] = found
            taken.update(found)
            return True

        return accept

    demo = _pick(tasks, SIZES["demo"], rng, with_programs(60, DEMO_PROGRAMS, DEMO_MIN_PROGRAMS))
    rest = [task for task in tasks if task.name not in programs]
    test = _pick(rest, SIZES["test"], rng, with_programs(TEST_SEEDS, TEST_SEEDS, 1))
    return {
        split: [_record(split, index, task, programs[task.name]) for index, task in enumerate(chosen)]
        for split, chosen in (("test", test), ("demo", demo))
    }


# ----------------------------------------------------------------------------- checks
def check_record(record: dict[str, Any]) -> None:
    """Every reference runs line by line in the task's home and reaches every goal."""
    start_world = World(build_home(record["home"]), record["start"])
    true_at_start = [goal for goal in record["goals"] if start_world.holds(goal)]
    if true_at_start:
        raise AssertionError(f"{record['id']}: goals true at the start: {true_at_start}")
    for program in record["completion"]:
        world = World(build_home(record["home"]), record["start"])
        for call in parse_program(program):
            if not call.executable:
                raise AssertionError(f"{record['id']}: not executable: {call.line}")
            result = world.do(call.action or "", call.args)
            if not result.ok:
                raise AssertionError(f"{record['id']}: {call.line} failed: {result.message}")
        missed = [goal for goal in record["goals"] if not world.holds(goal)]
        if missed:
            raise AssertionError(f"{record['id']}: goals not reached: {missed}")


# ----------------------------------------------------------------------------- train and unseen
#: A train prompt is a seen activity's name in one of these wordings (its template stays the name's).
TRAIN_PHRASINGS = (
    "{Name}",
    "{Name}, please",
    "Please {name}",
    "Can you {name}?",
    "{Name}.",
    "I'd like you to {name}",
    "Time to {name}",
)
#: How many plans a grown record tries for, and keeps at most.
GROWN_SEEDS = 4
GROWN_PROGRAMS = 2
UNSEEN_PROGRAMS = 3
#: Objects of one kind: a distractor names another of the errand's kind that it leaves alone.
KINDS = (FRIDGE_FOODS, DISHES, CLOTHES, READABLES, SNACKS, DEVICES_ON, OPENABLE, SURFACES)


def phrased(name: str, phrasing: str) -> str:
    """An activity's name in one of ``TRAIN_PHRASINGS``."""
    return phrasing.format(Name=name, name=name[0].lower() + name[1:] if not name[:2].isupper() else name)


@cache
def _held_out_activities() -> frozenset[str]:
    """The test and demo activities' names: no train or alignment record is one of them."""
    return frozenset(record["prompt"] for split in ("test", "demo") for record in splits()[split])


@cache
def _train_pool() -> tuple[Task, ...]:
    """The train activities (none of test or demo) in every home where each is fair."""
    held = _held_out_activities()
    return tuple(
        Task(task.activity, home)
        for task in all_tasks()
        if task.name not in held
        for home in range(len(HOMES))
        if _fits(task.activity, home) is not None
    )


@cache
def _shipped_programs() -> frozenset[str]:
    """The test and demo references: no grown record shares one."""
    return frozenset(
        program for split in ("test", "demo") for record in splits()[split] for program in record["completion"]
    )


def _grown_id(split: str, seed: int, index: int) -> str:
    return f"virtualhome-{split}-{index:04d}" if seed == SHIPPED_SEED else f"virtualhome-{split}-s{seed}-{index:04d}"


def _difficulty(programs: list[str]) -> int:
    """The steps of the shortest reference."""
    return min(len(parse_program(program)) for program in programs)


def _train_candidates(seed: int) -> Iterator[dict[str, Any]]:
    """Train records (ids unset) in the seed's order: each pool task in a wording, one pass per wording
    round; plans from the seed's streams, none a test or demo reference."""
    rng = rng_for("virtualhome", "train", seed)
    pool = list(_train_pool())
    taken = set(_shipped_programs())
    used: set[str] = set()
    for round_ in range(len(TRAIN_PHRASINGS)):
        rng.shuffle(pool)
        for task in pool:
            prompt = phrased(task.name, rng.choice(TRAIN_PHRASINGS))
            if prompt in used:
                continue
            seeds = [f"train-{seed}-{round_}-{task.home}-{k}" for k in range(GROWN_SEEDS)]
            programs = _programs_from(task, seeds, GROWN_PROGRAMS, taken)
            if not programs:
                continue
            used.add(prompt)
            taken.update(programs)
            record = _record("train", 0, task, programs)
            record["prompt"] = prompt
            record["difficulty"] = _difficulty(programs)
            yield record


def _programs_from(task: Task, seeds: list[str], wanted: int, taken: set[str]) -> list[str]:
    programs: list[str] = []
    for seed in seeds:
        text = _program(task, seed)
        if text is not None and text not in programs and text not in taken:
            programs.append(text)
            if len(programs) >= wanted:
                break
    return programs


def make_train(size: int, seed: int) -> list[dict[str, Any]]:
    """``size`` train records: seen activities in other homes and wordings, none a near duplicate of
    a test or shipped unseen prompt."""
    held = [record["prompt"] for record in splits()["test"]] + list(_shipped_unseen_prompts())
    records: list[dict[str, Any]] = []
    candidates = _train_candidates(seed)
    while len(records) < size:
        batch = list(itertools.islice(candidates, max(64, size - len(records))))
        if not batch:
            raise ValueError(f"only {len(records)} train records can be made for seed {seed}")
        close = near_duplicates([record["prompt"] for record in batch], held)
        records.extend(record for index, record in enumerate(batch) if index not in close)
    records = records[:size]
    for index, record in enumerate(records):
        record["id"] = _grown_id("train", seed, index)
    return records


def _combined(parts: list[Activity]) -> Activity:
    """One errand doing every part: a new kind of activity (its category joins the parts')."""
    goals = tuple(dict.fromkeys(goal for part in parts for goal in part.goals))
    start = tuple(dict.fromkeys(fact for part in parts for fact in part.start))
    requires = [part.require for part in parts if part.require is not None]

    def require(world: World) -> bool:
        return all(check(world) for check in requires)

    category = "+".join(sorted(part.category for part in parts))
    return Activity(category, " / ".join(part.name for part in parts), goals, start, require if requires else None)


def _distractor(goals: list[str], programs: list[str], rng: Any) -> str | None:
    """Another object of the kind of one the errand names, that no goal, start or reference uses."""
    named = {arg for goal in goals for arg in fact(goal)[1]}
    used = named | {arg for program in programs for call in parse_program(program) for arg in call.args}
    options = sorted({other for kind in KINDS if named & set(kind) for other in kind} - used)
    return rng.choice(options) if options else None


def _unseen_candidate(rng: Any, by_category: dict[str, list[Activity]], index: int, seed: int) -> dict[str, Any] | None:
    count = 3 if rng.random() < 0.3 else 2
    parts = [rng.choice(by_category[category]) for category in rng.sample(sorted(by_category), count)]
    errand = _combined(parts)
    homes = list(range(len(HOMES)))
    rng.shuffle(homes)
    home = next((h for h in homes if _fits(errand, h) is not None), None)
    if home is None:
        return None
    task = Task(errand, home)
    programs = _programs_from(
        task, [f"unseen-{seed}-{index}-{k}" for k in range(UNSEEN_PROGRAMS)], UNSEEN_PROGRAMS, set()
    )
    if not programs:
        return None
    rooms = [name for name in PROPERTIES if "room" in PROPERTIES[name]]
    texts = [phrasing.part(part.goals, word, rng, rooms) for part in parts]
    frame = rng.choice(sorted(phrasing.FRAMES))
    other = _distractor(list(errand.goals), programs, rng) if rng.random() < 0.5 else None
    distractor = None if other is None else phrasing.object_word(other, word, rng)
    record = _record("unseen", index, task, programs)
    record["template"] = f"unseen: {frame}"
    record["prompt"] = phrasing.errand(texts, frame, distractor, rng)
    record["difficulty"] = _difficulty(programs)
    return record


def make_unseen(size: int, seed: int) -> list[dict[str, Any]]:
    """``size`` errands of two or three activities of different kinds, in the unseen grammar."""
    rng = rng_for("virtualhome", "unseen", seed)
    by_category: dict[str, list[Activity]] = {}
    for task in all_tasks():
        # An errand's words say nothing of the start, so none starts the character asleep.
        if "asleep()" not in task.activity.start:
            by_category.setdefault(task.activity.category, []).append(task.activity)
    held = [record["prompt"] for split in ("test", "demo") for record in splits()[split]]
    records: list[dict[str, Any]] = []
    errands: set[str] = set()
    attempts = 0
    while len(records) < size:
        attempts += 1
        if attempts > 50 * size + 100:
            raise ValueError(f"only {len(records)} unseen errands for seed {seed}")
        record = _unseen_candidate(rng, by_category, len(records), seed)
        if record is None or record["category"] + str(record["goals"]) in errands:
            continue
        if near_duplicates([record["prompt"]], held):
            continue
        errands.add(record["category"] + str(record["goals"]))
        record["id"] = _grown_id("unseen", seed, len(records))
        records.append(record)
    return records


@cache
def _shipped_unseen_prompts() -> tuple[str, ...]:
    return tuple(record["prompt"] for record in make_unseen(SHIPPED_SIZES["unseen"], SHIPPED_SEED))


@split_maker("virtualhome")
def make(split: str, size: int, seed: int) -> list[dict[str, Any]]:
    """``size`` records of ``train`` (seen activities) or ``unseen`` (errands of new kinds)."""
    if split == "train":
        return make_train(size, seed)
    if split == "unseen":
        return make_unseen(size, seed)
    raise ValueError(f"no split maker for {split!r}")


@aligner("virtualhome")
def alignment_records(count: int, seed: str) -> list[dict[str, Any]]:
    """Plans for the train activities in any home and wording, from another random stream (seen
    templates only, never a test or demo activity)."""
    pool = _train_pool()
    rng = rng_for("virtualhome", "align", seed)
    records = []
    for index in range(count):
        for attempt in range(10):
            task = rng.choice(pool)
            program = _program(task, f"align-{seed}-{index}-{attempt}")
            if program is not None:
                record = _record(f"align-{seed}", index, task, [program])
                record["prompt"] = phrased(task.name, rng.choice(TRAIN_PHRASINGS))
                record["difficulty"] = _difficulty([program])
                records.append(record)
                break
    return records


@generator("virtualhome")
def generate() -> Files:
    records = {**splits(), "train": make("train", SHIPPED_SIZES["train"], SHIPPED_SEED)}
    records["unseen"] = make("unseen", SHIPPED_SIZES["unseen"], SHIPPED_SEED)
    for split in SPLIT_FILES:
        for record in records[split]:
            check_record(record)
    names = [record["prompt"] for split in ("test", "demo") for record in records[split]]
    assert len(names) == len(set(names)), "an activity name is in two records"
    assert len(records["test"]) == SIZES["test"] and len(records["demo"]) == SIZES["demo"], records.keys()
    return {f"{split}.jsonl": jsonl(records[split]) for split in SPLIT_FILES}
