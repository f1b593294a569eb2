"""How WebShop goals are worded: the seen grammar (test, demo, train, alignment) and the unseen one.

WebShop's synthetic goals append "with name: value, and ..." to a product's instruction; its human
goals say the same things in many ways ("in navy", "size XL", "a 12 pack", "under 30 dollars") and
often mention things they do not want. Here a goal's wording is drawn from one grammar:

- ``seen``: the product's instruction (one of ``generate.INSTRUCTIONS``, frame ``f0``-``f9``), then the
  options either in WebShop's colon form (the test goals' wording) or inline phrases, then the price.
- ``unseen``: sentence frames, option phrases, price phrases and distractor clauses of its own.

Option values may appear as another surface form ("x-large" as "XL" or "extra large", "grey" as
"gray", "12 count" as "12 ct", "pack of 6" as "6-pack", numbers as words in the unseen grammar),
chosen only where no other value of the product type's option group reads the same. The goal's
structured values (what the reward checks) never change; only their text does.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence

from toolbench.mock_services.webshop.generate import INSTRUCTIONS, PARAPHRASES
from toolbench.mock_services.webshop.vocabulary import ProductType
from toolbench.taskgen.numbers import number_words

#: The unseen grammar's frames: {a} article, {attrs} the wanted attributes, {name} the product type.
UNSEEN_FRAMES = (
    "hunting for {a} {name}, and here is what it needs: {attrs}",
    "my cart is missing {a} {name}; {attrs} is a must",
    "could you pick out {a} {name} for me? the must-haves: {attrs}",
    "{name} wanted: {attrs}",
    "looking to order {a} {attrs} {name} today",
    "please track down {a} {name} ({attrs})",
    "i'd love {a} {name}, ideally {attrs}",
    "shopping list item: {name}. requirements: {attrs}",
)
_SEEN_PRICE = (
    ", and price lower than {bound:.2f} dollars",
    ", price lower than {bound:.0f} dollars",
    " under ${bound:.0f}",
    " for less than {bound:.0f} dollars",
    ", under {bound:.0f} dollars",
)
_UNSEEN_PRICE = (
    "; my budget tops out at ${bound:.0f}",
    ", no more than {words} dollars",
    ", and keep it below {bound:.0f} bucks",
    ". i can't spend over ${bound:.0f}",
    " (max {words} dollars)",
)
#: Unseen goals name other attributes of the product's family as not wanted (a copy has them instead of a
#: wanted one), so a listing's words match the goal's as well when it lacks what the goal needs.
_UNSEEN_DECOYS = (
    "{z} doesn't matter to me",
    "i don't care whether it is {z}",
    "it need not be {z}",
    "{z} is not a requirement",
)
#: An option named beside a value of its group that is not wanted, the wanted value as often nearer the
#: group's name as the other: where the words sit does not tell which is wanted, what they say does.
_UNSEEN_RIVALS = (
    "{word} should be {text}, not {other}",
    "i need {text}, since the {other} {word} is wrong",
    "not {other} but {text} as the {word}",
    "{text}, not {other}, for the {word}",
    "the {word} i want is {text} rather than {other}",
    "i don't want the {other} {word}; {text} instead",
)
_SEEN_DISTRACTORS = ("i already have one in {other}, so ", "not the {other} one: ")
_UNSEEN_DISTRACTORS = (
    "my roommate got the {other} version last month. ",
    "the {other} one i ordered before was wrong. ",
)

_LEADING = re.compile(r"(\d+)(?=[ -])")
_APPAREL = {
    "x-small": ("XS", "extra small"),
    "small": ("S",),
    "medium": ("M", "medium"),
    "large": ("L", "large"),
    "x-large": ("XL", "extra large"),
    "xx-large": ("XXL", "2XL", "double extra large"),
    "3x-large": ("3XL", "XXXL"),
    "plus 1x": ("1X plus",),
}
_UNITS = (
    (r"\bfl oz\b", ("fluid ounces", "fl. oz")),
    (r"\bounce\b", ("oz",)),
    (r"\bpound\b", ("lb", "lbs")),
    (r"\bcount\b", ("ct", "-count")),
    (r"\binch\b", ('"', "-inch")),
    (r"\bgrey\b", ("gray",)),
    (r"\btier\b", ("-tier",)),
    (r"\bpiece\b", ("-piece", "pc")),
    (r"\bliter\b", ("litre",)),
)


def surfaces(value: str, unseen: bool) -> list[str]:
    """Other ways to write an option value (the value itself first)."""
    found = [value, *_APPAREL.get(value, ())]
    for pattern, replacements in _UNITS:
        if re.search(pattern, value):
            for replacement in replacements:
                glued = replacement.startswith(("-", '"'))
                text = re.sub(r" ?" + pattern if glued else pattern, replacement, value)
                found.append(text.replace(" -", "-"))
    pack = re.fullmatch(r"pack of (\d+)", value) or re.fullmatch(r"(\d+) pack", value)
    if pack:
        found += [f"{pack.group(1)}-pack", f"pack of {pack.group(1)}", f"{pack.group(1)} pack"]
    words = value.split()
    if len(words) == 2 and words[1] in ("blue", "green", "red") and words[0] in ("navy", "moss", "wine", "sea"):
        found.append(words[0])
    if unseen:  # small whole numbers in words: "twelve count", "six-pack"
        found += [
            number_words(int(m.group(1))) + f[m.end(1) :]
            for f in found
            if (m := _LEADING.match(f)) and int(m.group(1)) <= 20
        ]
    return list(dict.fromkeys(found))


def surface(value: str, group_values: Sequence[str], rng: random.Random, unseen: bool, chance: float) -> str:
    """``value`` as written in a goal: with probability ``chance`` another surface form no other value of
    its group shares (word for word, or as a part of it)."""
    if rng.random() >= chance:
        return value
    others = [v for v in group_values if v != value]
    taken = {s.lower() for v in others for s in surfaces(v, unseen)}
    fits = [
        s for s in surfaces(value, unseen)[1:]
        if s.lower() not in taken and not any(set(s.lower().split()) <= set(v.split()) for v in others)
    ]  # fmt: skip
    return rng.choice(fits) if fits else value


def _group_word(name: str) -> str:
    return "flavor" if name == "flavor name" else "pattern" if name == "pattern name" else name


def _seen_phrase(name: str, text: str, rng: random.Random) -> str:
    if name == "color":
        return rng.choice((f"in {text}", f"in {text} color", f"{text} colored", f"the {text} one"))
    if name == "size":
        return rng.choice((f"in size {text}", f"size {text}", f"in {text} size", f"{text} size"))
    word = _group_word(name)
    return rng.choice((f"{word} {text}", f"with {word} {text}", f"in the {text} {word}", f"{text} {word}"))


def _unseen_phrase(name: str, text: str, rng: random.Random) -> str:
    if name == "color":
        return rng.choice((f"colour {text}", f"in a {text} shade", f"{text}-toned", f"finished in {text}"))
    if name == "size":
        return rng.choice((f"sized {text}", f"measuring {text}", f"a {text} fit", f"whichever is {text}"))
    word = _group_word(name)
    return rng.choice(
        (f"{word} should be {text}", f"go with {text} for the {word}", f"{word} = {text}", f"{text} as the {word}")
    )


def _joined(parts: list[str], final: str = " and ") -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + final + parts[-1]


def _article(kind: ProductType, following: str) -> str:
    if kind.name.endswith("s") and not kind.name.endswith(("ss", "us")):
        return ""
    vowel = following[:1] in ("a", "e", "i", "o") or (
        following[:1] == "u" and not following.startswith(("us", "uni", "ut"))
    )
    return "an" if vowel else "a"


def _frame(pattern: str, kind: ProductType, wanted: list[str]) -> str:
    following = kind.name if "{a} {name}" in pattern else wanted[0]
    text = pattern.format(a=_article(kind, following), attrs=_joined(wanted), name=kind.name)
    return " ".join(text.split())


def _distractor(
    options: dict[str, str], offered: Mapping[str, Sequence[str]], kind: ProductType, rng: random.Random,
    clauses: Sequence[str], most: int = 1,
) -> str:  # fmt: skip
    """A clause naming up to ``most`` other values of one of the goal's option groups ("the khaki or white
    one"), from ``offered`` where it has them."""
    groups = [g for g in sorted(options) if len(kind.options.get(g, ())) > 1]
    if not groups:
        return ""
    group = rng.choice(groups)
    others = [v for v in offered.get(group, ()) if v != options[group]]
    others += [v for v in kind.options[group] if v != options[group] and v not in others]
    named = others[: rng.randint(1, min(most, len(others)))] if rng.random() < 0.5 else [rng.choice(others)]
    return rng.choice(clauses).format(other=" or ".join(named))


def seen_wording(
    kind: ProductType, wanted: list[str], options: dict[str, str], bound: float | None, frame: int, style: str,
    offered: Mapping[str, Sequence[str]], rng: random.Random,
) -> str:  # fmt: skip
    """A goal in the seen grammar: frame ``f<frame>`` (``generate.INSTRUCTIONS``), options in ``style``
    ("colon": WebShop's own wording, values as they are; "inline": phrases, values in other forms)."""
    text = _frame(INSTRUCTIONS[frame], kind, wanted)
    if options and style == "colon":
        text += " with " + ", and ".join(f"{name}: {value}" for name, value in options.items())
    elif options:
        phrases = [
            _seen_phrase(name, surface(value, kind.options.get(name, (value,)), rng, False, 0.5), rng)
            for name, value in options.items()
        ]
        text += " " + _joined(phrases)
        if rng.random() < 0.3:
            text = _distractor(options, offered, kind, rng, _SEEN_DISTRACTORS) + text
    if bound is not None:
        price = _SEEN_PRICE[0] if style == "colon" else rng.choice(_SEEN_PRICE)
        text += price.format(bound=bound)
    return text


def _unseen_option(
    name: str, value: str, rival: str | None, group_values: Sequence[str], rng: random.Random
) -> str:  # fmt: skip
    text = surface(value, group_values, rng, True, 0.7)
    if rival is None:
        return _unseen_phrase(name, text, rng)
    other = surface(rival, group_values, rng, True, 0.7)
    word = "colour" if name == "color" else _group_word(name)
    return rng.choice(_UNSEEN_RIVALS).format(word=word, text=text, other=other)


def unseen_wording(
    kind: ProductType, wanted: list[str], options: dict[str, str], bound: float | None, frame: int,
    offered: Mapping[str, Sequence[str]], rng: random.Random, decoys: Sequence[str] = (),
    rivals: Mapping[str, str] | None = None,
) -> str:  # fmt: skip
    """A goal in the unseen grammar: frame ``UNSEEN_FRAMES[frame]``, its own option and price phrases, values
    in other forms more often, a clause about a value not wanted, and parts in another order; the wanted
    attributes in ``PARAPHRASES``' words where it has them (the pages say them as they are, so a goal is
    matched to its product by what it means, not by the words they share). ``decoys``:
    attributes it says it does not need (up to two); ``rivals``: per option group, a value of it named as
    not wanted beside the wanted one."""
    pattern, said = UNSEEN_FRAMES[frame], [PARAPHRASES.get(a, a) for a in wanted]
    if said != wanted:  # a paraphrase reads after the product's name, not before it
        pattern = pattern.replace("{a} {attrs} {name}", "{a} {name}, {attrs},")
    head = _frame(pattern, kind, said)
    phrases = [
        _unseen_option(name, value, (rivals or {}).get(name), kind.options.get(name, (value,)), rng)
        for name, value in options.items()
    ]
    rng.shuffle(phrases)
    parts = [head]
    if decoys:
        parts.append(", but " + rng.choice(_UNSEEN_DECOYS).format(z=" or ".join(decoys[:2])))
    if phrases:
        parts.append(rng.choice(("; ", ". also ", ", ")) + _joined(phrases, ", plus "))
    if bound is not None:
        parts.append(rng.choice(_UNSEEN_PRICE).format(bound=bound, words=number_words(int(bound))))
    text = "".join(parts)
    if options:
        clause = _distractor(options, offered, kind, rng, _UNSEEN_DISTRACTORS, most=2)
        text = clause + text if rng.random() < 0.5 else text + ". " + clause.strip().rstrip(".")
    return text
