"""Formulas: the functions tasks use, errors as the product shows them, recomputation, and references
that follow structural edits."""

from __future__ import annotations

import time

import pytest
from gspread.utils import ValueRenderOption

from toolbench.mock_services.sheets import SheetsStore, build_spreadsheet, make_client, refs
from toolbench.mock_services.sheets.formula import EVALUATION_BUDGET_CELLS, FORMULA_COST, resolve_positions

UNFORMATTED = ValueRenderOption.unformatted
FORMULA = ValueRenderOption.formula

DATA = {
    "title": "Formulas",
    "sheets": [
        {
            "title": "Data",
            "rows": [
                ["Item", "Qty", "Price", "Region"],
                ["a", 2, 3.5, "East"],
                ["b", 5, 1.25, "West"],
                ["c", 1, 10, "East"],
                ["d", "x", 4, "West"],
            ],
        },
        {"title": "My Sheet", "rows": [[10, 20], [30]]},
    ],
    "named_ranges": {"Prices": "Data!C2:C5"},
}


@pytest.fixture
def data_ws():
    store = SheetsStore()
    book = build_spreadsheet(store, DATA)
    return make_client(store).open_by_key(book.spreadsheet_id).worksheet("Data")


def evaluate(ws, formulas: dict[str, str]) -> dict[str, object]:
    ws.batch_update([{"range": cell, "values": [[text]]} for cell, text in formulas.items()], raw=False)
    return {
        cell: vr.first() for cell, vr in zip(formulas, ws.batch_get(list(formulas), value_render_option=UNFORMATTED))
    }


@pytest.mark.parametrize(
    ("formula", "expected"),
    [
        ("=SUM(B2:B5)", 8),
        ("=AVERAGE(C2:C5)", 4.6875),
        ("=COUNT(B2:B5)", 3),
        ("=COUNTA(A2:A10)", 4),
        ('=COUNTIF(D2:D5,"East")', 2),
        ('=COUNTIF(B2:B5,">1")', 2),
        ('=SUMIF(D2:D5,"West",C2:C5)', 5.25),
        ("=MIN(C:C)", 1.25),
        ("=MAX(C2:C5)", 10),
        ("=ROUND(C3*3,1)", 3.8),
        ("=ROUND(2.5,0)", 3),
        ('=IF(B2>1,"big","small")', "big"),
        ('=CONCATENATE(A2,"-",D2)', "a-East"),
        ('=A2&" "&A3', "a b"),
        ("=B2*C2+B3-1", 11),
        ("=(B2+B3)/B4^2", 7),
        ("=SUM(B2:B)", 8),
        ("=SUM(2:2)", 5.5),
        ("='My Sheet'!A1+'my sheet'!B1", 30),
        ("=SUM('My Sheet'!A:A)", 40),
        ("=SUM(Prices)", 18.75),
        ('=VLOOKUP("c",A2:C5,3,FALSE)', 10),
        ('=IFERROR(1/0,"err")', "err"),
        ("=ROW()+COLUMN(C1)", 13),
        ("=TODAY()", 45306),
        ("=UPPER(A2)&LEN(D2)", "A4"),
    ],
)
def test_functions(data_ws, formula, expected):
    assert evaluate(data_ws, {"F10": formula})["F10"] == expected


@pytest.mark.parametrize(
    ("formula", "shown"),
    [
        ("=1/0", "#DIV/0!"),
        ("=FOO(1)", "#NAME?"),
        ("=B5+1", "#VALUE!"),
        ("=Sheet9!A1", "#REF!"),
        ("=A2000", "#REF!"),
        ("=SUM(NoSuchName)", "#NAME?"),
        ("=1+", "#ERROR!"),
        ("=AVERAGE(H1:H3)", "#DIV/0!"),
        ("=F1+1", "#DIV/0!"),
    ],
)
def test_errors_are_shown_as_the_product_shows_them(data_ws, formula, shown):
    data_ws.update_acell("F1", "=1/0")
    assert evaluate(data_ws, {"G1": formula})["G1"] == shown
    assert data_ws.acell("G1").value == shown


def test_error_cells_in_grid_data(data_ws):
    data_ws.update_acell("F1", "=1/0")
    cell = data_ws.spreadsheet.fetch_sheet_metadata({"includeGridData": "true", "ranges": "Data!F1"})
    value = cell["sheets"][0]["data"][0]["rowData"][0]["values"][0]
    assert value["effectiveValue"] == {
        "errorValue": {"type": "DIVIDE_BY_ZERO", "message": "Function DIVIDE parameter 2 cannot be zero."}
    }
    assert value["formattedValue"] == "#DIV/0!" and value["userEnteredValue"] == {"formulaValue": "=1/0"}


def test_circular_references_are_ref_errors(data_ws):
    values = evaluate(data_ws, {"F1": "=G1+1", "G1": "=H1", "H1": "=F1", "I1": "=F1*2", "J1": "=F1"})
    assert values == {"F1": "#REF!", "G1": "#REF!", "H1": "#REF!", "I1": "#REF!", "J1": "#REF!"}
    data_ws.update_acell("F1", "=SUM(F2:F3)")  # the cycle is broken: everything recovers
    assert evaluate(data_ws, {"K1": "=H1"})["K1"] == 0 or data_ws.acell("H1").value == "0"
    assert evaluate(data_ws, {"L1": "=L1"})["L1"] == "#REF!"


def test_long_chains_do_not_hit_the_recursion_limit(data_ws):
    rows = [["=1"]] + [[f"=H{row}+1"] for row in range(1, 1000)]
    data_ws.update(rows, "H1", raw=False)
    assert data_ws.acell("H1000", value_render_option=UNFORMATTED).value == 1000


def test_formulas_over_too_many_cells_stop_with_an_error(data_ws):
    """A deterministic cap on the cells formulas read: heavy formulas cannot stall the scoring."""
    area, fit = data_ws.row_count * 26, EVALUATION_BUDGET_CELLS // (data_ws.row_count * 26)
    calc = data_ws.spreadsheet.add_worksheet("Calc", rows=fit + 5, cols=1)
    calc.update([[f'=COUNTIF(Data!$A$1:$Z${data_ws.row_count},"a")'] for _ in range(fit + 5)], "A1", raw=False)
    shown = [row[0] for row in calc.get(f"A1:A{fit + 5}")]
    assert area * fit <= EVALUATION_BUDGET_CELLS and shown == ["1"] * fit + ["#ERROR!"] * 5
    calc.batch_clear([f"A2:A{fit + 5}"])  # lighter again: calculated as usual
    assert calc.acell("A1").value == "1" and data_ws.acell("B2").value == "2"


def test_recomputed_when_inputs_change(data_ws):
    evaluate(data_ws, {"F1": "=SUM(B2:B4)*2", "F2": "=F1+'My Sheet'!A1"})
    data_ws.update_acell("B2", 100)
    assert data_ws.acell("F1").value == "212"
    data_ws.spreadsheet.worksheet("My Sheet").update_acell("A1", 1)
    assert data_ws.acell("F2").value == "213"
    data_ws.batch_clear(["B2:B4"])
    assert data_ws.acell("F2").value == "1"


def test_references_follow_inserted_and_deleted_rows(data_ws):
    data_ws.update_acell("F1", "=SUM(B2:B5)*C$2&D3")
    assert data_ws.acell("F1").value == "28West"
    data_ws.insert_row(["new", 1, 1, "East"], index=2)  # absolute rows move too: the cell moved
    assert data_ws.acell("F1", value_render_option=FORMULA).value == "=SUM(B3:B6)*C$3&D4"
    data_ws.insert_row(["mid", 7, 1, "East"], index=4)  # inside the range: it grows
    assert data_ws.acell("F1", value_render_option=FORMULA).value == "=SUM(B3:B7)*C$3&D5"
    assert data_ws.acell("F1").value == "52.5West"
    data_ws.delete_rows(5)  # D5's row: the single reference breaks, the range shrinks
    assert data_ws.acell("F1", value_render_option=FORMULA).value == "=SUM(B3:B6)*C$3&#REF!"
    assert data_ws.acell("F1").value == "#REF!"


def test_references_follow_inserted_and_deleted_columns(data_ws):
    data_ws.update_acell("F2", "=B2*C2")
    data_ws.insert_cols([["x"]], col=1)
    assert data_ws.acell("G2", value_render_option=FORMULA).value == "=C2*D2"
    data_ws.delete_columns(3)
    assert data_ws.acell("F2", value_render_option=FORMULA).value == "=#REF!*C2"


def test_references_from_other_sheets_and_renames(data_ws):
    other = data_ws.spreadsheet.worksheet("My Sheet")
    other.update_acell("C1", "=Data!B2+Data!B3")
    data_ws.insert_row(["top"], index=1)
    assert other.acell("C1", value_render_option=FORMULA).value == "=Data!B3+Data!B4"
    data_ws.update_title("Facts")
    assert other.acell("C1", value_render_option=FORMULA).value == "=Facts!B3+Facts!B4"
    assert other.acell("C1").value == "7"


def test_formulas_are_stored_normalised(data_ws):
    data_ws.update_acell("F1", '=sum(b2:b3)+len("a1")')
    assert data_ws.acell("F1", value_render_option=FORMULA).value == '=SUM(B2:B3)+LEN("a1")'


def test_result_formats_follow_their_inputs(data_ws):
    data_ws.format("C2:C5", {"numberFormat": {"type": "CURRENCY", "pattern": "$#,##0.00"}})
    values = evaluate(data_ws, {"F1": "=SUM(C2:C5)", "F2": "=COUNT(C2:C5)", "F3": "=TODAY()"})
    assert values["F1"] == 18.75
    assert [data_ws.acell(c).value for c in ("F1", "F2", "F3")] == ["$18.75", "4", "1/15/2024"]


def test_volatile_functions_are_deterministic():
    def run():
        store = SheetsStore(seed=3)
        book = build_spreadsheet(store, DATA)
        ws = make_client(store).open_by_key(book.spreadsheet_id).sheet1
        ws.update([["=RAND()", "=RANDBETWEEN(1,6)", "=NOW()"]], "F1", raw=False)
        return ws.get("F1:H1", value_render_option=UNFORMATTED)

    first = run()
    assert first == run()
    assert 0 <= first[0][0] < 1 and 1 <= first[0][1] <= 6 and first[0][2] == 45306.375


def test_reference_tokenizer():
    segments = refs.tokenize("=SUM(A1:B2)+'My Sheet'!$C$3*LOG10(100)&\"A1\"")
    found = [s.text() for s in segments if isinstance(s, refs.Ref)]
    assert found == ["A1:B2", "'My Sheet'!$C$3"]
    assert refs.rewrite("=A1+$B$2", lambda r: refs.offset(r, 1, 1)) == "=B2+$B$2"
    assert resolve_positions("=ROW(A5)*2+COLUMN($C$1)+ROW()", 9, 0) == "=5*2+3+10"


@pytest.mark.parametrize(
    ("formula", "expected"),
    [
        ('=REGEXMATCH("Order 66", "\\d+")', True),
        ('=REGEXMATCH("abc", "^b")', False),
        ('=REGEXEXTRACT("tel 12-34", "(\\d+)-\\d+")', "12"),
        ('=REGEXEXTRACT("tel 12-34", "\\d+-\\d+")', "12-34"),
        ('=REGEXEXTRACT("abc", "z")', "#N/A"),
        ('=REGEXREPLACE("ab cd", "(\\w+)", "<$1>")', "<ab> <cd>"),
        ('=REGEXMATCH("aa", "(a)\\1")', "#REF!"),  # RE2, as in Sheets: no backreferences
        ('=REGEXMATCH(REPT("a", 30000), "(a+)+$b")', False),  # linear time: no backtracking blow-up
        ('=LEN(REPT("ab", 100))', 200),
        ('=REPT("x", 32001)', "#VALUE!"),
        ('=REPT(REPT("x", 50000), 50000)', "#VALUE!"),
        ('=SUBSTITUTE(REPT("x", 30000), "x", "xx")', "#VALUE!"),
        ('=SUBSTITUTE("a-b-c", "-", "+")', "a+b+c"),
        ('=REGEXREPLACE(REPT("x", 30000), "x", "yy")', "#VALUE!"),
        ('=REPT("x", 30000)&REPT("y", 30000)', "#VALUE!"),
        ('=LEN(REPT("x", 30000)&REPT("y", 30000))', 60000),
        ("=MUNIT(100000)", "#VALUE!"),
        ("=EXPAND(1, 100000, 100000)", "#VALUE!"),
    ],
)
def test_costly_functions_are_bounded_and_regexes_use_re2(data_ws, formula, expected):
    """Formulas run in the env's process: no formula may allocate gigabytes or backtrack for minutes."""
    value = evaluate(data_ws, {"H1": formula})["H1"]
    assert value == expected


def test_formula_cells_are_charged_before_they_are_compiled(data_ws):
    # ROW() makes every cell's formula text different, so each would be compiled anew.
    sheet = data_ws.spreadsheet
    sheet.batch_update(
        {
            "requests": [
                {
                    "repeatCell": {
                        "range": {"sheetId": data_ws.id},
                        "cell": {"userEnteredValue": {"formulaValue": "=ROW()*COLUMN()"}},
                        "fields": "userEnteredValue",
                    }
                }
            ]
        }
    )
    shown = [value for row in data_ws.get_all_values() for value in row]
    computed = [value for value in shown if value != "#ERROR!"]
    assert len(shown) == data_ws.row_count * data_ws.col_count
    assert 0 < len(computed) <= EVALUATION_BUDGET_CELLS // FORMULA_COST


def test_the_budget_is_the_same_whether_results_come_from_the_cache_or_not():
    """Cached results still charge what computing them cost, so which cells show #ERROR! does not
    depend on what the process computed before."""

    def shown() -> list[object]:
        store = SheetsStore()
        book = build_spreadsheet(store, DATA)
        ws = make_client(store).open_by_key(book.spreadsheet_id).worksheet("Data")
        return list(evaluate(ws, {"H5": "400", "H1": "=MUNIT(H5)", "H2": "=MUNIT(H5)"}).values())

    first, again = shown(), shown()
    assert first == again == [400, 1, "#ERROR!"]


def test_a_formula_too_long_to_compile_quickly_is_an_error_at_once(data_ws):
    started = time.monotonic()
    long_sum = "=" + "+".join(["1"] * 3000)  # 6,000 characters: compiling it would take seconds
    assert evaluate(data_ws, {"H1": long_sum})["H1"] == "#ERROR!"
    assert evaluate(data_ws, {"H2": "=" + "+".join(["1"] * 100)})["H2"] == 100
    assert time.monotonic() - started < 5


def test_formulas_that_all_read_each_other_are_charged_for_the_walk(data_ws):
    """2,600 formulas that each read a range holding all of them: finding their dependencies and
    cycles is work too (it took minutes, unbounded by the step's deadline, before it was charged)."""
    import time

    rows = [["=SUMPRODUCT(A1:Z1000*A1:Z1000)"] * 26 for _ in range(100)]
    data_ws.update(rows, "A1:Z100", raw=False)
    started = time.perf_counter()
    shown = [value for row in data_ws.get("A1:Z100") for value in row]
    assert time.perf_counter() - started < 20
    assert set(shown) <= {"#REF!", "#ERROR!"} and "#ERROR!" in shown


@pytest.mark.parametrize(
    ("formula", "expected"),
    [
        ('=COUNTIF(H1, "*a*a*a*a*b")', 0),
        ('=COUNTIF(H1, "*a*a")', 1),
        ('=NUMBERVALUE("1." & REPT(" ", 40000) & "x")', "#VALUE!"),
        ('=NUMBERVALUE(" 1,234.5 ")', 1234.5),
    ],
)
def test_wildcards_and_number_parsing_take_linear_time(data_ws, formula, expected):
    """The library turns wildcards into regular expressions; with Python's re, 20,000 a's took minutes."""
    import time

    started = time.perf_counter()
    value = evaluate(data_ws, {"H1": "a" * 20_000, "I1": formula})["I1"]
    assert value == expected and time.perf_counter() - started < 10


def test_an_operator_is_charged_for_the_cells_it_builds(data_ws):
    """Two 5,200-cell ranges broadcast into 27 million cells: refused before numpy builds them."""
    value = evaluate(data_ws, {"H500": "=SUM(TOCOL(A1:Z200)*TOROW(A1:Z200))", "H501": "=SUM(2*3+1)"})
    assert value["H500"] in ("#ERROR!", "#VALUE!") and value["H501"] == 7


@pytest.mark.parametrize(
    "formula",
    [
        "=SUM(MMULT(TOCOL(A1:Z200),TOROW(A1:Z200)))",
        "=WRAPROWS(A1:B1,100000000)",
        '=TEXTSPLIT(REPT(",",25000)&REPT(";",25000),",",";")',
        "=SUM(COUNTIF(A1:Z800,TOCOL(A1:Z800)))",
        "=SUM(XLOOKUP(TOCOL(A1:Z800),TOCOL(A1:Z800),TOCOL(A1:Z800)))",
    ],
)
def test_functions_are_charged_for_what_they_build_or_scan(data_ws, formula):
    """Small inputs, outputs or scans of hundreds of millions of cells: refused, not computed."""
    import time

    started = time.perf_counter()
    value = evaluate(data_ws, {"H900": formula})["H900"]  # below the ranges it reads
    assert value in ("#VALUE!", "#ERROR!") and time.perf_counter() - started < 10


def test_ordinary_lookups_still_work(data_ws):
    values = evaluate(data_ws, {"H1": '=MATCH("x", {"a","x","b"}, 0)', "H2": "=SUM(MMULT({1,2;3,4},{1;1}))"})
    assert values == {"H1": 2, "H2": 10}
