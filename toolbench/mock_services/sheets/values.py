"""Cell values: what USER_ENTERED input becomes, and how each render option shows a value.

A cell's effective value is ``None`` (blank), ``bool``, ``float``, ``str`` or an ``ErrorValue``.
USER_ENTERED text is parsed as the product parses typing: numbers (``1,234.5``, ``-3``, ``1e3``),
currency (``$5``), percentages (``50%``), dates and times, ``TRUE``/``FALSE``, formulas (``=...``),
and a leading apostrophe that forces text; recognised shapes also set a number format, the way
typing ``50%`` makes the cell a percentage cell.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from typing import Any

from toolbench.mock_services.sheets.numfmt import (
    MONTHS,
    format_general,
    format_number,
    format_text,
    is_date_format,
    serial_from_datetime,
)

ERROR_TYPES = {
    "#NULL!": "NULL_VALUE",
    "#DIV/0!": "DIVIDE_BY_ZERO",
    "#VALUE!": "VALUE",
    "#REF!": "REF",
    "#NAME?": "NAME",
    "#NUM!": "NUM",
    "#N/A": "N_A",
    "#ERROR!": "ERROR",
    "#LOADING...": "LOADING",
}
ERROR_MESSAGES = {
    "#DIV/0!": "Function DIVIDE parameter 2 cannot be zero.",
    "#REF!": "Reference does not exist.",
    "#NAME?": "Unknown range name.",
    "#VALUE!": "A value in the formula is of the wrong type.",
    "#NUM!": "The result is not a valid number.",
    "#N/A": "Value not available.",
    "#ERROR!": "Formula parse error.",
    "#NULL!": "Null value.",
}
CIRCULAR_MESSAGE = "Circular dependency detected. To resolve with iterative calculation, see File > Settings."


@dataclass(frozen=True)
class ErrorValue:
    """A formula error such as ``#DIV/0!``; shown as its code in every render option."""

    code: str
    message: str = ""

    def __str__(self) -> str:
        return self.code

    def json(self) -> dict[str, str]:
        return {
            "type": ERROR_TYPES.get(self.code, "ERROR"),
            "message": self.message or ERROR_MESSAGES.get(self.code, ""),
        }


def error(code: str, message: str = "") -> ErrorValue:
    return ErrorValue(code, message or ERROR_MESSAGES.get(code, ""))


@dataclass(frozen=True)
class Entered:
    """What one typed value became: a literal ``value`` or a ``formula``, and the number format typing implies."""

    value: Any = None
    formula: str | None = None
    number_format: dict[str, str] | None = None


# ---------------------------------------------------------------------------------- parsing
_NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+"
_NUMERIC = re.compile(
    rf"^(?P<sign>[+-])?(?P<cur>\$)?(?P<sign2>[+-])?(?P<num>{_NUMBER})(?:[eE](?P<exp>[+-]?\d{{1,3}}))?(?P<pct>\s?%)?$"
)
_ISO_DATE = re.compile(r"^(\d{4})([-/.])(\d{1,2})\2(\d{1,2})$")
_US_DATE = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{2}|\d{4})$")
_TIME = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(?:\s*([AaPp])\.?[Mm]\.?)?$")
_NAMED_DATE_MDY = re.compile(r"^([A-Za-z]{3,9})\.?\s+(\d{1,2}),?\s+(\d{4})$")
_NAMED_DATE_DMY = re.compile(r"^(\d{1,2})[\s-]+([A-Za-z]{3,9})\.?[\s-]+(\d{4})$")


def _date_serial(year: int, month: int, day: int) -> float | None:
    try:
        return serial_from_datetime(dt.datetime(year, month, day))
    except ValueError:
        return None


def _month(name: str) -> int | None:
    """1-12 for a month name or its abbreviation ("Jan", "january", "Sept"), else None."""
    lowered = name.lower()
    for number, month in enumerate(MONTHS, start=1):
        if len(lowered) >= 3 and month.lower().startswith(lowered):
            return number
    return None


def _parse_time(text: str) -> tuple[float, bool] | None:
    """(fraction of a day, has am/pm) for ``10:30``, ``10:30:15``, ``2:05 pm``."""
    match = _TIME.match(text)
    if not match:
        return None
    hour, minute = int(match.group(1)), int(match.group(2))
    second = int(match.group(3) or 0)
    millis = int((match.group(4) or "0").ljust(3, "0"))
    meridiem = match.group(5)
    if meridiem:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if meridiem.lower() == "p" else 0)
    if hour > 23 or minute > 59 or second > 59:
        return None
    return (hour * 3600 + minute * 60 + second + millis / 1000) / 86400, bool(meridiem)


def _parse_date(text: str) -> tuple[float, str] | None:
    """(serial, pattern) for the date shapes typing recognises."""
    match = _ISO_DATE.match(text)
    if match:
        year, sep, month, day = int(match.group(1)), match.group(2), int(match.group(3)), int(match.group(4))
        serial = _date_serial(year, month, day)
        return (serial, f"yyyy{sep}mm{sep}dd") if serial is not None else None
    match = _US_DATE.match(text)
    if match:
        month, day, year = int(match.group(1)), int(match.group(2)), int(match.group(3))
        if len(match.group(3)) == 2:
            year += 2000 if year < 30 else 1900
        serial = _date_serial(year, month, day)
        return (serial, "M/d/yyyy") if serial is not None else None
    match = _NAMED_DATE_MDY.match(text)
    if match:
        named = _month(match.group(1))
        serial = _date_serial(int(match.group(3)), named, int(match.group(2))) if named else None
        return (serial, "mmm d, yyyy") if serial is not None else None
    match = _NAMED_DATE_DMY.match(text)
    if match:
        named = _month(match.group(2))
        serial = _date_serial(int(match.group(3)), named, int(match.group(1))) if named else None
        return (serial, "d mmm yyyy") if serial is not None else None
    return None


def _parse_numeric(text: str) -> Entered | None:
    match = _NUMERIC.match(text)
    if not match or (match.group("sign") and match.group("sign2")):
        return None
    number_text = match.group("num")
    currency, percent, exponent = match.group("cur"), match.group("pct"), match.group("exp")
    if (currency and (percent or exponent)) or (match.group("sign2") and not currency):
        return None
    try:
        value = float(number_text.replace(",", "") + (f"e{exponent}" if exponent else ""))
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    if "-" in ((match.group("sign") or "") + (match.group("sign2") or "")):
        value = -value
    has_decimals = "." in number_text and not number_text.endswith(".")
    if percent:
        value /= 100
        return Entered(value, None, {"type": "PERCENT", "pattern": "0.00%" if has_decimals else "0%"})
    if currency:
        return Entered(value, None, {"type": "CURRENCY", "pattern": '"$"#,##0.00'})
    if exponent:
        return Entered(value, None, {"type": "SCIENTIFIC", "pattern": "0.00E+00"})
    if "," in number_text:
        return Entered(value, None, {"type": "NUMBER", "pattern": "#,##0.00" if has_decimals else "#,##0"})
    return Entered(value)


def parse_user_entered(text: str) -> Entered:
    """What typing ``text`` into a cell stores."""
    if text.startswith("'"):
        return Entered(text[1:])
    if text.startswith("=") and len(text) > 1:
        return Entered(formula=text)
    stripped = text.strip()
    if not stripped:
        return Entered(text if text else None)
    upper = stripped.upper()
    if upper in ("TRUE", "FALSE"):
        return Entered(upper == "TRUE")
    numeric = _parse_numeric(stripped)
    if numeric is not None:
        return numeric
    date = _parse_date(stripped)
    if date is not None:
        return Entered(date[0], None, {"type": "DATE", "pattern": date[1]})
    time = _parse_time(stripped)
    if time is not None:
        fraction, meridiem = time
        return Entered(fraction, None, {"type": "TIME", "pattern": "h:mm:ss am/pm" if meridiem else "H:mm:ss"})
    head, _, tail = stripped.rpartition(" ")
    if head:
        date = _parse_date(head.strip())
        time = _parse_time(tail) if date else None
        if date is None and " " in head:  # "1/5/2024 2:05 pm"
            head2, _, mid = head.rpartition(" ")
            date = _parse_date(head2.strip())
            time = _parse_time(f"{mid} {tail}") if date else None
        if date is not None and time is not None:
            pattern = "yyyy-mm-dd H:mm:ss" if date[1].startswith("yyyy") else "M/d/yyyy H:mm:ss"
            return Entered(date[0] + time[0], None, {"type": "DATE_TIME", "pattern": pattern})
    return Entered(text)


def parse_json_value(value: Any, user_entered: bool) -> Entered:
    """A JSON value from a request body: strings are parsed under USER_ENTERED, kept under RAW."""
    if isinstance(value, bool):
        return Entered(value)
    if isinstance(value, (int, float)):
        number = float(value)
        return Entered(number if math.isfinite(number) else str(value))
    if isinstance(value, str):
        if user_entered:
            return parse_user_entered(value)
        return Entered(value if value != "" else None)
    return Entered(None)


# ---------------------------------------------------------------------------------- rendering
def json_number(value: float) -> int | float:
    """Doubles as the API's JSON writes them: integral values without a fraction (``5``, not ``5.0``)."""
    if value == int(value) and abs(value) < 2**53:
        return int(value)
    return value


def formatted(value: Any, number_format: dict[str, Any] | None) -> str:
    """FORMATTED_VALUE text of an effective value."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return format_number(value, number_format)
    if isinstance(value, ErrorValue):
        return value.code
    return format_text(str(value), number_format)


def unformatted(value: Any, number_format: dict[str, Any] | None, dates_as_strings: bool) -> Any:
    """UNFORMATTED_VALUE of an effective value (dates as serials unless ``dates_as_strings``)."""
    if isinstance(value, float):
        if dates_as_strings and is_date_format(number_format):
            return format_number(value, number_format)
        return json_number(value)
    if isinstance(value, ErrorValue):
        return value.code
    return value


def render(
    value: Any,
    formula: str | None,
    number_format: dict[str, Any] | None,
    render_option: str,
    dates_as_strings: bool,
) -> Any:
    """One cell under a ``valueRenderOption``; None means blank."""
    if render_option == "FORMULA" and formula is not None:
        return formula
    if value is None:
        return None
    if render_option == "FORMATTED_VALUE":
        return formatted(value, number_format)
    return unformatted(value, number_format, dates_as_strings)


def typed_value_json(value: Any) -> dict[str, Any] | None:
    """An ``ExtendedValue`` for an effective value (``{"numberValue": 5}``...)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, float):
        return {"numberValue": json_number(value)}
    if isinstance(value, ErrorValue):
        return {"errorValue": value.json()}
    return {"stringValue": str(value)}


__all__ = [
    "Entered",
    "ErrorValue",
    "error",
    "format_general",
    "formatted",
    "json_number",
    "parse_json_value",
    "parse_user_entered",
    "render",
    "typed_value_json",
    "unformatted",
]
