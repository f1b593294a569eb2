"""Rendering numbers through Sheets number formats, the way FORMATTED_VALUE shows them.

Covers the pattern language the tasks use: digit placeholders (``0 # ?``), thousands separators,
decimals, percent, scientific, quoted and escaped literals, up to four ``;`` sections, ``@`` text,
and date/time tokens (``yyyy mm m mmm mmmm d dd ddd dddd h hh H s ss am/pm``). Unformatted numbers
use the product's "automatic" format: up to 10 significant digits, integers in full.
Dates are serial numbers counted from 1899-12-30, as in Sheets.
"""

from __future__ import annotations

import datetime as dt
import functools
import math
from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

from toolbench.mock_services.sheets import work

EPOCH = dt.datetime(1899, 12, 30)

#: Patterns the product uses for a number format type given without a pattern (en_US).
DEFAULT_PATTERNS = {
    "NUMBER": "#,##0.00",
    "PERCENT": "0.00%",
    "CURRENCY": '"$"#,##0.00',
    "DATE": "M/d/yyyy",
    "TIME": "h:mm:ss am/pm",
    "DATE_TIME": "M/d/yyyy H:mm:ss",
    "SCIENTIFIC": "0.00E+00",
    "TEXT": "@",
}
DATE_TYPES = ("DATE", "TIME", "DATE_TIME")

MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def serial_from_datetime(moment: dt.datetime) -> float:
    delta = moment - EPOCH
    return delta.days + delta.seconds / 86400 + delta.microseconds / 86_400_000_000


def datetime_from_serial(serial: float) -> dt.datetime | None:
    """The moment a serial number stands for, rounded to the millisecond; None when out of range."""
    try:
        return EPOCH + dt.timedelta(milliseconds=round(serial * 86_400_000))
    except (OverflowError, ValueError):
        return None


#: Longer patterns are not applied (the value shows as automatic); Sheets' own custom formats are short.
MAX_PATTERN_CHARS = 1_000


def pattern_of(number_format: dict[str, Any] | None) -> str | None:
    """The pattern a NumberFormat renders with (its own, or its type's default), or None for automatic."""
    if not number_format:
        return None
    pattern = number_format.get("pattern")
    if isinstance(pattern, str) and len(pattern) > MAX_PATTERN_CHARS:
        return None  # shown as automatic: 26,000 cells x a 45 KB literal would be a gigabyte of text
    if isinstance(pattern, str) and pattern:
        return pattern
    return DEFAULT_PATTERNS.get(str(number_format.get("type", "")))


def is_date_format(number_format: dict[str, Any] | None) -> bool:
    """Whether values in this format are dates or times (for ``dateTimeRenderOption``)."""
    if not number_format:
        return False
    if number_format.get("type") in DATE_TYPES:
        return True
    pattern = pattern_of(number_format)
    return pattern is not None and _is_date_section(_tokens(_sections(pattern)[0]))


def _round_half_up(value: float, places: int) -> Decimal:
    try:
        return Decimal(repr(value)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    except InvalidOperation:  # too many digits for the context: the value is huge
        return Decimal(repr(value))


def format_general(value: float) -> str:
    """The automatic format: integers in full below 1e15, otherwise 10 significant digits."""
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return "#NUM!"
    magnitude = abs(value)
    if magnitude >= 1e15 or magnitude < 1e-9:
        mantissa, exponent = f"{value:.9E}".split("E")
        mantissa = mantissa.rstrip("0").rstrip(".")
        sign = "-" if exponent.startswith("-") else "+"
        return f"{mantissa}E{sign}{abs(int(exponent)):02d}"
    if value == int(value):
        return str(int(value))
    digits = max(0, 10 - (int(math.log10(magnitude)) + 1 if magnitude >= 1 else 0))
    if magnitude < 1:  # leading zeros after the point do not count as significant digits
        digits = 10 - int(math.floor(math.log10(magnitude))) - 1
    text = format(_round_half_up(value, digits), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


# ---------------------------------------------------------------------------------- pattern parsing
@functools.lru_cache(maxsize=1024)  # parsed once per pattern, not once per cell shown
def _sections(pattern: str) -> tuple[str, ...]:
    """Split on ``;`` outside quotes and escapes."""
    sections, current, index = [], [], 0
    while index < len(pattern):
        char = pattern[index]
        if char == '"':
            end = pattern.find('"', index + 1)
            end = len(pattern) if end < 0 else end
            current.append(pattern[index : end + 1])
            index = end + 1
            continue
        if char == "\\" and index + 1 < len(pattern):
            current.append(pattern[index : index + 2])
            index += 2
            continue
        if char == ";":
            sections.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    sections.append("".join(current))
    return tuple(sections)


_DATE_LETTERS = "ymdhs"


@functools.lru_cache(maxsize=1024)
def _tokens(section: str) -> tuple[tuple[str, str], ...]:
    """(kind, text) tokens: lit, digit, point, comma, percent, exp, at, date, ampm."""
    tokens: list[tuple[str, str]] = []
    index = 0
    lower = section.lower()
    while index < len(section):
        char = section[index]
        low = lower[index]
        if char == '"':
            end = section.find('"', index + 1)
            end = len(section) if end < 0 else end
            tokens.append(("lit", section[index + 1 : end]))
            index = end + 1
        elif char == "\\":
            tokens.append(("lit", section[index + 1 : index + 2]))
            index += 2
        elif char == "[":
            end = section.find("]", index)
            end = len(section) if end < 0 else end
            inner = section[index + 1 : end]
            if inner.startswith("$"):
                tokens.append(("lit", inner[1:].split("-", 1)[0]))
            elif inner.lower() in ("h", "hh", "m", "mm", "s", "ss"):
                tokens.append(("elapsed", inner.lower()))
            index = end + 1
        elif char == "_":
            tokens.append(("lit", " "))
            index += 2
        elif char == "*":
            index += 2
        elif char in "0#?":
            tokens.append(("digit", char))
            index += 1
        elif char == ".":
            tokens.append(("point", "."))
            index += 1
        elif char == ",":
            tokens.append(("comma", ","))
            index += 1
        elif char == "%":
            tokens.append(("percent", "%"))
            index += 1
        elif low == "e" and section[index + 1 : index + 2] in ("+", "-"):
            tokens.append(("exp", section[index + 1]))
            index += 2
        elif char == "@":
            tokens.append(("at", "@"))
            index += 1
        elif lower.startswith("am/pm", index):
            tokens.append(("ampm", "AM/PM"))
            index += 5
        elif lower.startswith("a/p", index):
            tokens.append(("ampm", "A/P"))
            index += 3
        elif low in _DATE_LETTERS:
            end = index
            while end < len(section) and lower[end] == low:
                end += 1
            tokens.append(("date", low * (end - index)))
            index = end
        else:
            tokens.append(("lit", char))
            index += 1
    return tuple(tokens)


def _is_date_section(tokens: Sequence[tuple[str, str]]) -> bool:
    return any(kind in ("date", "elapsed") for kind, _ in tokens)


# ---------------------------------------------------------------------------------- numbers
def _format_numeric(value: float, tokens: Sequence[tuple[str, str]], with_sign: bool) -> str:
    digit_positions = [i for i, (kind, _) in enumerate(tokens) if kind == "digit"]
    if not digit_positions:  # a pattern of literals only ("General" is handled by the caller)
        text = "".join(text for kind, text in tokens if kind == "lit")
        return ("-" if with_sign and value < 0 else "") + text
    first, last = digit_positions[0], digit_positions[-1]
    point = next((i for i, (kind, _) in enumerate(tokens) if kind == "point" and first <= i <= last + 1), None)
    exp_at = next((i for i, (kind, _) in enumerate(tokens) if kind == "exp"), None)
    int_end = point if point is not None else (exp_at if exp_at is not None else last + 1)
    int_digits = [tokens[i][1] for i in digit_positions if i < int_end]
    frac_end = exp_at if exp_at is not None else len(tokens)
    frac_digits = [tokens[i][1] for i in digit_positions if point is not None and point < i < frac_end]
    exp_digits = [tokens[i][1] for i in digit_positions if exp_at is not None and i > exp_at]
    grouping = any(kind == "comma" for kind, _ in tokens[first:int_end]) and int_digits
    trailing_commas = 0
    index = int_end - 1
    while index >= 0 and tokens[index][0] == "comma":
        trailing_commas += 1
        index -= 1
    percents = sum(1 for kind, _ in tokens if kind == "percent")
    magnitude = abs(value) * (100**percents) / (1000**trailing_commas)

    exponent_text = ""
    if exp_at is not None:
        exponent = 0
        if magnitude:
            shift = max(1, len(int_digits))
            exponent = math.floor(math.log10(magnitude)) - (shift - 1)
            magnitude = magnitude / (10**exponent)
            if float(_round_half_up(magnitude, len(frac_digits))) >= 10 ** max(1, len(int_digits)):
                exponent += 1
                magnitude /= 10
        exp_sign = "-" if exponent < 0 else ("+" if tokens[exp_at][1] == "+" else "")
        exponent_text = "E" + exp_sign + str(abs(exponent)).rjust(max(1, len(exp_digits)), "0")

    rounded = _round_half_up(magnitude, len(frac_digits))
    whole_text, _, frac_text = format(rounded, "f").partition(".")
    frac_text = frac_text.ljust(len(frac_digits), "0")
    required = len(frac_digits)
    while required > 0 and frac_digits[required - 1] != "0":
        required -= 1
    frac_text = frac_text[: len(frac_digits)]
    while len(frac_text) > required and frac_text.endswith("0"):
        frac_text = frac_text[:-1]
    if whole_text == "0":
        whole_text = ""
    min_int = sum(1 for d in int_digits if d == "0")
    whole_text = whole_text.rjust(min_int, "0")
    if grouping and whole_text:
        whole_text = f"{int(whole_text):,}"

    prefix = "".join(text if kind == "lit" else "%" for kind, text in tokens[:first] if kind in ("lit", "percent"))
    interior = [text for kind, text in tokens[first:int_end] if kind == "lit"]
    number = _fill_from_right(whole_text, tokens[first:int_end]) if interior and not grouping else whole_text
    if point is not None:
        number += "." + frac_text
    number += exponent_text
    suffix = "".join(text if kind == "lit" else "%" for kind, text in tokens[last + 1 :] if kind in ("lit", "percent"))
    is_zero = not any(ch in "123456789" for ch in number)
    sign = "-" if with_sign and value < 0 and not is_zero else ""
    return f"{sign}{prefix}{number}{suffix}"


def _fill_from_right(digits: str, tokens: Sequence[tuple[str, str]]) -> str:
    out: list[str] = []
    remaining = list(digits)
    placeholders = [i for i, (kind, _) in enumerate(tokens) if kind == "digit"]
    for i in range(len(tokens) - 1, -1, -1):
        kind, text = tokens[i]
        if kind == "digit":
            if i == placeholders[0]:
                out.append("".join(remaining) or ("0" if text == "0" else ""))
                remaining = []
            elif remaining:
                out.append(remaining.pop())
            elif text == "0":
                out.append("0")
        elif kind == "lit":
            out.append(text)
    return "".join(reversed(out))


# ---------------------------------------------------------------------------------- dates
def _format_date(serial: float, tokens: Sequence[tuple[str, str]]) -> str:
    moment = datetime_from_serial(serial)
    if moment is None:
        return format_general(serial)
    twelve_hour = any(kind == "ampm" for kind, _ in tokens)
    date_kinds = [(i, text) for i, (kind, text) in enumerate(tokens) if kind in ("date", "elapsed")]
    out: list[str] = []
    for index, (kind, text) in enumerate(tokens):
        if kind == "date":
            letter = text[0]
            position = [i for i, _ in date_kinds].index(index)
            if letter == "m":
                before = date_kinds[position - 1][1][0] if position > 0 else ""
                after = date_kinds[position + 1][1][0] if position + 1 < len(date_kinds) else ""
                if (before == "h" or after == "s") and len(text) <= 2:
                    out.append(str(moment.minute).rjust(len(text), "0"))
                elif len(text) <= 2:
                    out.append(str(moment.month).rjust(len(text), "0"))
                elif len(text) == 3:
                    out.append(MONTHS[moment.month - 1][:3])
                elif len(text) == 5:
                    out.append(MONTHS[moment.month - 1][0])
                else:
                    out.append(MONTHS[moment.month - 1])
            elif letter == "y":
                out.append(str(moment.year % 100).rjust(2, "0") if len(text) <= 2 else str(moment.year))
            elif letter == "d":
                if len(text) <= 2:
                    out.append(str(moment.day).rjust(len(text), "0"))
                elif len(text) == 3:
                    out.append(DAYS[moment.weekday()][:3])
                else:
                    out.append(DAYS[moment.weekday()])
            elif letter == "h":
                hour = moment.hour
                if twelve_hour:
                    hour = hour % 12 or 12
                out.append(str(hour).rjust(min(len(text), 2), "0"))
            elif letter == "s":
                out.append(str(moment.second).rjust(min(len(text), 2), "0"))
        elif kind == "ampm":
            am = moment.hour < 12
            out.append(("AM" if am else "PM") if text == "AM/PM" else ("A" if am else "P"))
        elif kind == "elapsed":
            total_seconds = round(serial * 86400)
            unit = {"h": 3600, "m": 60, "s": 1}[text[0]]
            out.append(str(total_seconds // unit).rjust(len(text), "0"))
        elif kind == "point" and index + 1 < len(tokens) and tokens[index + 1][0] == "digit":
            places = 0
            while index + 1 + places < len(tokens) and tokens[index + 1 + places][0] == "digit":
                places += 1
            millis = moment.microsecond // 1000
            out.append("." + str(millis).rjust(3, "0")[:places])
        elif kind == "digit" and index > 0 and tokens[index - 1][0] in ("point", "digit"):
            continue  # consumed by the fractional seconds above
        elif kind in ("lit", "comma", "percent", "point"):
            out.append(text)
    return "".join(out)


# ---------------------------------------------------------------------------------- entry point
def format_number(value: float, number_format: dict[str, Any] | None) -> str:
    """FORMATTED_VALUE of a number in a cell with ``number_format`` (None: automatic)."""
    pattern = pattern_of(number_format)
    if pattern is None or pattern.lower() == "general" or pattern == "@":
        return format_general(value)
    work.charge(1 + len(pattern) // 10)  # a cell shown with a long pattern is that much more work
    sections = _sections(pattern)
    numeric = sections[:3] if len(sections) > 3 else sections
    if len(numeric) == 1:
        section, with_sign = numeric[0], True
    elif value < 0:
        section, with_sign = numeric[1], False
    elif value == 0 and len(numeric) >= 3:
        section, with_sign = numeric[2], False
    else:
        section, with_sign = numeric[0], True
    tokens = _tokens(section)
    if _is_date_section(tokens):
        return _format_date(value, tokens)
    if section.lower() == "general":
        return ("" if with_sign or value >= 0 else "") + format_general(value if with_sign else abs(value))
    return _format_numeric(value, tokens, with_sign)


def format_text(text: str, number_format: dict[str, Any] | None) -> str:
    """FORMATTED_VALUE of a string: a fourth pattern section can wrap it (``@`` is the text)."""
    pattern = pattern_of(number_format)
    if not pattern:
        return text
    work.charge(1 + len(pattern) // 10)
    sections = _sections(pattern)
    if len(sections) < 4:
        return text
    return "".join(text if kind == "at" else t for kind, t in _tokens(sections[3]) if kind in ("lit", "at"))
