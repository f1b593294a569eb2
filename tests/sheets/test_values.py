"""USER_ENTERED parsing, FORMATTED_VALUE rendering, and ranges echoed as the service echoes them."""

from __future__ import annotations

import pytest
from gspread.utils import ValueRenderOption

from toolbench.mock_services.sheets.a1 import Bounds, format_range, parse_bounds, quote_title, split_sheet
from toolbench.mock_services.sheets.numfmt import format_general, format_number
from toolbench.mock_services.sheets.values import parse_user_entered


@pytest.mark.parametrize(
    ("typed", "value", "fmt"),
    [
        ("42", 42.0, None),
        ("-3", -3.0, None),
        ("+5", 5.0, None),
        ("1,234.5", 1234.5, {"type": "NUMBER", "pattern": "#,##0.00"}),
        ("1,234", 1234.0, {"type": "NUMBER", "pattern": "#,##0"}),
        ("1e3", 1000.0, {"type": "SCIENTIFIC", "pattern": "0.00E+00"}),
        ("$5", 5.0, {"type": "CURRENCY", "pattern": '"$"#,##0.00'}),
        ("-$1,234.50", -1234.5, {"type": "CURRENCY", "pattern": '"$"#,##0.00'}),
        ("50%", 0.5, {"type": "PERCENT", "pattern": "0%"}),
        ("12.5%", 0.125, {"type": "PERCENT", "pattern": "0.00%"}),
        ("2024-01-05", 45296.0, {"type": "DATE", "pattern": "yyyy-mm-dd"}),
        ("1/5/2024", 45296.0, {"type": "DATE", "pattern": "M/d/yyyy"}),
        ("Jan 5, 2024", 45296.0, {"type": "DATE", "pattern": "mmm d, yyyy"}),
        ("10:30", 0.4375, {"type": "TIME", "pattern": "H:mm:ss"}),
        ("2024-01-05 12:00", 45296.5, {"type": "DATE_TIME", "pattern": "yyyy-mm-dd H:mm:ss"}),
        ("TRUE", True, None),
        ("false", False, None),
        ("'123", "123", None),
        ("'=SUM(A1)", "=SUM(A1)", None),
        ("hello", "hello", None),
        ("2024-02-30", "2024-02-30", None),
        ("1.2.3", "1.2.3", None),
        ("$5%", "$5%", None),
    ],
)
def test_user_entered_parsing(typed, value, fmt):
    entered = parse_user_entered(typed)
    assert (entered.value, entered.formula, entered.number_format) == (value, None, fmt)


def test_formulas_are_recognised():
    assert parse_user_entered("=A1+1").formula == "=A1+1"
    assert parse_user_entered("=").value == "="


@pytest.mark.parametrize(
    ("value", "pattern", "shown"),
    [
        (1234.5, "#,##0.00", "1,234.50"),
        (1234.5, "#,##0", "1,235"),
        (3.14159, "0", "3"),
        (2.345, "0.00", "2.35"),
        (0.5, "0%", "50%"),
        (0.125, "0.00%", "12.50%"),
        (5, "$#,##0.00", "$5.00"),
        (-5, "$#,##0.00", "-$5.00"),
        (1234567.891, '"$"#,##0.00', "$1,234,567.89"),
        (-1234.5, "#,##0.00;(#,##0.00)", "(1,234.50)"),
        (12345, "0.00E+00", "1.23E+04"),
        (45296, "yyyy-mm-dd", "2024-01-05"),
        (45296, "m/d/yyyy", "1/5/2024"),
        (45296, "mmm d, yyyy", "Jan 5, 2024"),
        (45296, "dddd, mmmm d", "Friday, January 5"),
        (45296.4375, "h:mm:ss am/pm", "10:30:00 AM"),
        (45296.75, "yyyy-mm-dd hh:mm", "2024-01-05 18:00"),
        (5551234, "000-0000", "555-1234"),
    ],
)
def test_number_formats(value, pattern, shown):
    assert format_number(value, {"type": "NUMBER", "pattern": pattern}) == shown


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (1 / 3, "0.3333333333"),
        (100 / 3, "33.33333333"),
        (0.1 + 0.2, "0.3"),
        (12345678901, "12345678901"),
        (1e15, "1E+15"),
        (-2.5, "-2.5"),
        (0.0001, "0.0001"),
    ],
)
def test_automatic_format(value, shown):
    assert format_general(value) == shown


def test_format_types_without_patterns():
    assert format_number(5, {"type": "CURRENCY"}) == "$5.00"
    assert format_number(0.25, {"type": "PERCENT"}) == "25.00%"
    assert format_number(45296, {"type": "DATE"}) == "1/5/2024"


def test_a1_parsing():
    assert split_sheet("'It''s'!A1") == ("It's", "A1")
    assert split_sheet("Sheet1") == (None, "Sheet1")
    assert parse_bounds("B2:A1") == Bounds(0, 2, 0, 2)
    assert parse_bounds("A:C") == Bounds(None, None, 0, 3)
    assert parse_bounds("2:5") == Bounds(1, 5, None, None)
    assert parse_bounds("A2:C") == Bounds(1, None, 0, 3)
    assert parse_bounds("A5:5") == Bounds(4, 5, 0, None)
    assert parse_bounds("$a$1") == Bounds(0, 1, 0, 1)
    assert parse_bounds("Sales") is None and parse_bounds("A:5") is None
    assert [quote_title(t) for t in ("Sheet1", "My Sheet", "A1", "2024", "Données")] == [
        "Sheet1",
        "'My Sheet'",
        "'A1'",
        "'2024'",
        "Données",
    ]


def test_ranges_are_echoed_normalised(sh, ws):
    sh.add_worksheet("My Sheet", 10, 4)
    cases = {
        "Sheet1": "Sheet1!A1:Z1000",
        "'Sheet1'!A:C": "Sheet1!A1:C1000",
        "Sheet1!2:5": "Sheet1!A2:Z5",
        "Sheet1!A2:C": "Sheet1!A2:C1000",
        "Sheet1!C3:A1": "Sheet1!A1:C3",
        "Sheet1!A1:AB2000": "Sheet1!A1:Z1000",
        "A1:B2": "Sheet1!A1:B2",
        "'My Sheet'": "'My Sheet'!A1:D10",
        "sheet1!b2": "Sheet1!B2",
    }
    for requested, echoed in cases.items():
        assert sh.values_get(requested)["range"] == echoed, requested


def test_trailing_empties_trimmed_and_values_omitted(sh, ws):
    ws.update([["", "x", ""], ["", "", ""], ["y"]], "E1")
    got = sh.values_get("Sheet1!D1:H5")
    assert got["values"] == [["", "", "x"], [], ["", "y"]]
    assert "values" not in sh.values_get("Sheet1!J1:K5")
    assert sh.values_get("Sheet1!D1:H5", params={"majorDimension": "COLUMNS"})["values"] == [[], ["", "", "y"], ["x"]]


def test_render_options(ws):
    ws.update([["=B2*2", "1/5/2024", "50%", True, "'7"]], "E2", raw=False)
    assert ws.get("E2:I2") == [["2", "1/5/2024", "50%", "TRUE", "7"]]
    assert ws.get("E2:I2", value_render_option=ValueRenderOption.unformatted) == [[2, 45296, 0.5, True, "7"]]
    assert ws.get("E2:I2", value_render_option=ValueRenderOption.formula) == [["=B2*2", 45296, 0.5, True, "7"]]
    assert ws.get(
        "F2", value_render_option=ValueRenderOption.unformatted, date_time_render_option="FORMATTED_STRING"
    ) == [["1/5/2024"]]


def test_raw_keeps_strings(ws):
    ws.update([["123", "=1+1", "TRUE", 4.5]], "E1")
    assert ws.get("E1:H1", value_render_option=ValueRenderOption.unformatted) == [["123", "=1+1", "TRUE", 4.5]]


def test_number_formats_through_the_api(ws):
    ws.update([[1234.5, 0.256, 45296, -7]], "E1")
    ws.format("E1", {"numberFormat": {"type": "NUMBER", "pattern": "#,##0.00"}})
    ws.format("F1", {"numberFormat": {"type": "PERCENT", "pattern": "0.0%"}})
    ws.format("G1", {"numberFormat": {"type": "DATE", "pattern": "mmm d, yyyy"}})
    ws.format("H1", {"numberFormat": {"type": "CURRENCY", "pattern": "$#,##0.00"}})
    assert ws.get("E1:H1") == [["1,234.50", "25.6%", "Jan 5, 2024", "-$7.00"]]


def test_format_range_helper():
    from toolbench.mock_services.sheets.a1 import Rect

    assert format_range("Q1 Sales", Rect(0, 1, 0, 1)) == "'Q1 Sales'!A1"


def test_an_overlong_number_format_pattern_shows_the_value_as_automatic(ws):
    """A 45 KB literal in a pattern on every cell would render gigabytes in the env's process."""
    ws.update([["text", 1.5]], "A1")
    ws.format("A1:B1", {"numberFormat": {"type": "NUMBER", "pattern": '0;0;0;"' + "x" * 45_000 + '"@'}})
    assert ws.get("A1:B1") == [["text", "1.5"]]
    ws.format("A1:B1", {"numberFormat": {"type": "NUMBER", "pattern": '0.00;0;0;"<"@">"'}})
    assert ws.get("A1:B1") == [["<text>", "1.50"]]
