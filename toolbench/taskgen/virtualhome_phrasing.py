"""The ``unseen`` split's own grammar: errands of two or three activities, told goal by goal.

No seen prompt is written this way. Each goal fact becomes a clause of its own wording ("get the
milk into the refrigerator", "make sure the television set is on"), objects sometimes go by other
names (sofa, refrigerator, mug), the clauses are joined in one of several sentence frames, and a
distractor sentence may name another object of the same kind that the errand does not touch. The
reference programs come from the goal facts, never from this text.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from toolbench.mock_services.virtualhome.world import fact

#: Names the seen prompts never use for these objects (none that another object of the home could be).
SYNONYMS = {
    "fridge": ("refrigerator",),
    "television": ("television set", "telly"),
    "couch": ("sofa",),
    "kitchen_counter": ("worktop", "kitchen worktop"),
    "coffee_maker": ("coffee machine",),
    "coffee_cup": ("mug",),
    "drinking_glass": ("tumbler",),
    "floor_lamp": ("standing lamp",),
    "light": ("ceiling light",),
    "phone": ("cellphone", "mobile"),
    "laptop": ("notebook computer",),
    "basket_for_clothes": ("hamper", "laundry hamper"),
    "spectacles": ("eyeglasses",),
    "stereo": ("sound system",),
    "computer": ("desktop computer", "PC"),
    "food_food": ("leftover food",),
    "bed": ("mattress",),
    "clothes_pants": ("trousers",),
    "clothes_jacket": ("coat",),
    "novel": ("paperback",),
    "food_vegetable": ("veggies",),
    "cat": ("kitty",),
}

BODY = {"hands_both": "your hands", "face": "your face", "hair": "your hair"}

#: goal kind (a ``did`` goal: its verb) -> clause wordings; {0} and {1} are the goal's objects.
CLAUSES: dict[str, tuple[str, ...]] = {
    "inside": ("get the {0} into the {1}", "stow the {0} inside the {1}", "make sure the {0} ends up in the {1}"),
    "inside_room": ("carry the {0} over to the {1}", "take the {0} into the {1}", "the {0} belongs in the {1} now"),
    "on2": ("set the {0} down on the {1}", "make sure the {0} ends up on top of the {1}", "place the {0} onto the {1}"),
    "on": ("get the {0} running", "power up the {0}", "make sure the {0} is on"),
    "off": ("shut the {0} down", "power down the {0}", "make sure the {0} is off"),
    "held": ("end up holding the {0}", "keep the {0} in your hand", "have the {0} in hand at the end"),
    "worn": ("dress in the {0}", "wear the {0}", "get the {0} on you"),
    "pour": ("fill the {1} with {0}", "pour some {0} into the {1}", "top up the {1} with {0}"),
    "drink": ("take a sip from the {0}", "have a swig from the {0}"),
    "eat": ("have a bite of the {0}", "eat some of the {0}", "snack on the {0}"),
    "cut": ("chop the {0}", "slice up the {0}", "cut up the {0}"),
    "read": ("go through the {0}", "spend some time reading the {0}", "read through the {0}"),
    "watch": ("catch something on the {0}", "spend a while watching the {0}"),
    "look_at": ("take a look at the {0}", "glance at the {0}", "have a look at the {0}"),
    "greet": ("say hi to the {0}", "welcome the {0}", "say hello to the {0}"),
    "type_on": ("type something on the {0}", "tap out a message on the {0}"),
    "wipe": ("give the {0} a wipe", "wipe down the {0}"),
    "wash": ("give the {0} a wash", "wash off the {0}"),
    "rinse": ("give the {0} a rinse", "rinse off the {0}"),
    "scrub": ("give the {0} a good scrub", "scrub down the {0}"),
    "sitting_on": ("take a seat on the {0}", "settle down on the {0}", "end up sitting on the {0}"),
    "lying_on": ("stretch out on the {0}", "lie back on the {0}", "end up lying on the {0}"),
    "asleep": ("fall asleep", "drift off to sleep", "nod off"),
    "awake": ("wake yourself up", "be awake"),
    "standing": ("get on your feet", "end up standing"),
    "plugged_in": ("connect the {0} to the wall socket", "hook the {0} up to power"),
    "plugged_out": ("disconnect the {0} from the socket", "take the {0} off the mains"),
    "open": ("leave the {0} open", "swing the {0} open", "get the {0} open"),
    "closed": ("shut the {0}", "make sure the {0} is shut"),
    "clean": ("get the {0} spotless", "make the {0} clean"),
    "in_room": ("end up in the {0}", "finish in the {0}"),
    "facing": ("turn to face the {0}", "end up facing the {0}"),
}
# Body parts read as "give your hands a wash", not "give the your hands a wash".
BODY_CLAUSES = {
    "wash": ("give {0} a wash", "wash {0}"),
    "rinse": ("give {0} a rinse", "rinse {0}"),
    "wipe": ("dry {0} off", "wipe {0} dry"),
    "scrub": ("give {0} a scrub",),
}

#: Sentence frames joining the parts of an errand: frame id -> (frame for two parts, for three).
FRAMES: dict[str, tuple[str, str]] = {
    "first-then": ("First {0}. Then {1}.", "First {0}. Then {1}. Finally {2}."),
    "two-jobs": ("Two jobs for you: {0}; and {1}.", "Three jobs for you: {0}; {1}; and {2}."),
    "could-you": ("Could you {0}, and also {1}? Thanks!", "Could you {0}, {1}, and also {2}? Thanks!"),
    "by-tonight": (
        "By tonight I'd like you to {0}. Oh, and {1} as well.",
        "By tonight I'd like you to {0}, {1}. Oh, and {2} as well.",
    ),
    "list": ("To do:\n- {0}\n- {1}", "To do:\n- {0}\n- {1}\n- {2}"),
    "while-youre-at-it": ("Go {0}; while you're at it, {1}.", "Go {0}; while you're at it, {1} and {2}."),
}

#: Sentences that name an object of the errand's kind it leaves alone ({0}); any frame may take one.
DISTRACTORS = (
    "The {0} can stay where it is.",
    "Don't bother with the {0}, my sister already dealt with it.",
    "No need to do anything about the {0}.",
    "Forget about the {0} for now.",
)


def object_word(name: str, word: Callable[[str], str], rng: random.Random) -> str:
    """How the errand names ``name``: its usual word, or one the seen prompts never use."""
    if name in BODY:
        return BODY[name]
    if name in SYNONYMS and rng.random() < 0.6:
        return rng.choice(SYNONYMS[name])
    return word(name)


def clause(goal: str, word: Callable[[str], str], rng: random.Random, rooms: Sequence[str]) -> str:
    """One goal fact as an imperative clause."""
    kind, args = fact(goal)
    key = kind
    if kind == "did":
        key, args = args[0], args[1:]
        if args and args[0] in BODY and key in BODY_CLAUSES:
            return rng.choice(BODY_CLAUSES[key]).format(BODY[args[0]])
    elif kind == "inside" and args[1] in rooms:
        key = "inside_room"
    elif kind == "on" and len(args) == 2:
        key = "on2"
    words = [object_word(arg, word, rng) for arg in args]
    return rng.choice(CLAUSES[key]).format(*words)


def part(goals: Sequence[str], word: Callable[[str], str], rng: random.Random, rooms: Sequence[str]) -> str:
    """One activity's goals as clauses joined by commas and "and"."""
    clauses = [clause(goal, word, rng, rooms) for goal in goals]
    if len(clauses) == 1:
        return clauses[0]
    return ", ".join(clauses[:-1]) + " and " + clauses[-1]


def errand(parts: Sequence[str], frame: str, distractor: str | None, rng: random.Random) -> str:
    """The prompt: the parts in ``frame``, with the distractor sentence before or after them."""
    text = FRAMES[frame][len(parts) - 2].format(*parts)
    text = text[0].upper() + text[1:]
    if distractor is None:
        return text
    sentence = rng.choice(DISTRACTORS).format(distractor)
    if rng.random() < 0.5:
        return f"{sentence} {text}"
    return f"{text}\n{sentence}" if frame == "list" else f"{text} {sentence}"
