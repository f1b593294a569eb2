"""Whole numbers in words, for prompts that write values in more ways than digits."""

from __future__ import annotations

_SMALL = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
)  # fmt: skip
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_ORDINALS = (
    "zeroth", "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
    "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth",
    "nineteenth",
)  # fmt: skip


def number_words(n: int) -> str:
    """``n`` (0-999) in words: 3 -> "three", 45 -> "forty-five", 105 -> "one hundred and five"."""
    if not 0 <= n < 1000:
        raise ValueError(f"{n} is outside 0-999")
    if n < 20:
        return _SMALL[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens] + (f"-{_SMALL[ones]}" if ones else "")
    hundreds, rest = divmod(n, 100)
    return f"{_SMALL[hundreds]} hundred" + (f" and {number_words(rest)}" if rest else "")


def ordinal_words(n: int) -> str:
    """``n`` (1-99) as an ordinal word: 7 -> "seventh", 23 -> "twenty-third", 30 -> "thirtieth"."""
    if not 0 < n < 100:
        raise ValueError(f"{n} is outside 1-99")
    if n < 20:
        return _ORDINALS[n]
    tens, ones = divmod(n, 10)
    return f"{_TENS[tens]}-{_ORDINALS[ones]}" if ones else _TENS[tens][:-1] + "ieth"
