"""The API-program language: what it accepts, what it refuses, and that it never runs code."""

import contextlib

import pytest

from toolbench.core.program import MAX_PROGRAM_CHARS, Call, ProgramError, parse_program


class Box:
    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, Box) and other.value == self.value


FUNCTIONS = {"put", "search"}
CONSTRUCTORS = {"Box": Box}


def parse(text, variables=None):
    return parse_program(text, FUNCTIONS, CONSTRUCTORS, variables)


def test_calls_literals_constructors_and_variables():
    calls = parse(
        "```python\nActions:\nx = Box('a')\n  API.put(x, n=-3, items=[1, 2.5, ('t', None, True)])\nAPI.search()\n```"
    )
    assert calls == [
        Call(4, "put", (Box("a"),), {"n": -3, "items": [1, 2.5, ("t", None, True)]}),
        Call(5, "search", (), {}),
    ]


def test_print_runs_the_call_it_wraps_and_ignores_names():
    assert parse("results = API.search()\nprint(results)\nprint(API.search())\nprint('done', 3)") == [
        Call(1, "search", (), {}),
        Call(3, "search", (), {}),
    ]
    with pytest.raises(ProgramError, match="only API.<function>"):
        parse("print(open('/etc/passwd'))")


def test_variables_carry_across_calls_when_shared():
    variables = {}
    assert parse("place = Box('x')", variables) == []
    assert parse("API.put(place)", variables)[0].args == (Box("x"),)


@pytest.mark.parametrize(
    "text, message",
    [
        ("import os", "`import` statements are not allowed"),
        ("from os import system", "`importfrom` statements are not allowed"),
        ("__import__('os').system('ls')", "only API.<function>(...) calls are allowed"),
        ("().__class__.__subclasses__()", "only API.<function>(...) calls are allowed"),
        ("API.put(().__class__)", "is not a literal value"),
        ("API.__class__", "is not a call"),
        ("API.__init__()", "unknown function API.__init__"),
        ("open('/etc/passwd')", "only API.<function>(...) calls are allowed"),
        ("API.put(open('/etc/passwd'))", "only Box calls build values"),
        ("exec('print(1)')", "only API.<function>(...) calls are allowed"),
        ("API.put(eval('1'))", "only Box calls build values"),
        ("API.delete_everything()", "unknown function API.delete_everything"),
        ("API.put(y)", "name 'y' is not defined"),
        ("API.put(1 + 2)", "is not a literal value"),
        ("API.put(f'{1}')", "is not a literal value"),
        ("API.put(*[1])", "*args are not allowed"),
        ("API.put(**{'a': 1})", "**kwargs are not allowed"),
        ("x = y = 1", "only simple assignments"),
        ("API = 1", "cannot be assigned"),
        ("for i in range(3):\n  API.put(i)", "`for` statements are not allowed"),
        ("while True: pass", "`while` statements are not allowed"),
        ("def f(): pass", "`functiondef` statements are not allowed"),
        ("lambda: 0", "is not a call"),
        ("API.put(Box(Box(1).value))", "is not a literal value"),
        ("API.put([1] * 10**9)", "is not a literal value"),
        ("API.put(" + "[" * 300 + "]" * 300 + ")", "too many nested parentheses"),
        ("API.put(" + "-" * 30000 + "1)", "characters long"),
        ("x = " + "-" * 19000 + "1", "cannot be parsed"),
        ("API.put(1,)\n" * 301, "statements; the limit is 300"),
        ("API.put([" + ", ".join(["1"] * 101) + "])", "at most 100 items"),
        ("API.put(", "syntax error"),
        ("x" * (MAX_PROGRAM_CHARS + 1), "characters long"),
    ],
)
def test_refused_programs_say_why(text, message):
    with pytest.raises(ProgramError, match=message.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        parse(text)


def test_nothing_is_executed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for text in ["open('made', 'w')", "API.put(open('made', 'w'))", "x = open('made', 'w')"]:
        with pytest.raises(ProgramError):
            parse(text)
    assert list(tmp_path.iterdir()) == []


def test_constructor_errors_become_program_errors():
    def strict(value):
        raise ValueError("bad value")

    with pytest.raises(ProgramError, match="line 1: Strict\\(...\\): bad value"):
        parse_program("API.put(Strict(1))", FUNCTIONS, {"Strict": strict})


@pytest.mark.parametrize("unit", ["~", "-", "a<", "a;", "a,", "()+", "[]+", "a.b+", "a[a]+", "not ", "f'{a}'+", "{}+"])
def test_no_source_has_more_syntax_nodes_per_character_than_the_bound(unit):
    """Programs short enough that NODES_PER_CHAR_BOUND keeps them under MAX_NODES are not counted."""
    import ast

    from toolbench.core.program import NODES_PER_CHAR_BOUND

    text = unit * 500 + "1"
    assert sum(1 for _ in ast.walk(ast.parse(text))) <= NODES_PER_CHAR_BOUND * len(text)


def test_a_long_program_over_the_node_limit_is_refused():
    from toolbench.core.program import MAX_NODES, NODES_PER_CHAR_BOUND

    text = "x = " + "a<" * 9000 + "a"  # 1.5 nodes per character
    assert len(text) <= MAX_PROGRAM_CHARS and len(text) * NODES_PER_CHAR_BOUND > MAX_NODES
    with pytest.raises(ProgramError, match="syntax nodes"):
        parse(text)


@pytest.mark.parametrize("text", ['API.put("\\d")', "x = 1if 1 else 2\nAPI.search()", "API.put(0x1for)"])
def test_what_the_parser_warns_about_never_reaches_the_caller(text):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with contextlib.suppress(ProgramError):
            parse(text)
    assert caught == []


def test_text_the_parser_could_warn_about_is_always_parsed_with_warnings_caught():
    # Text without a backslash or a digit before a letter skips catching warnings; check on random
    # text close to what warns that the parser indeed never warns about such text.
    import ast
    import random
    import warnings

    from toolbench.core.program import _MAY_WARN

    rng = random.Random(7)
    pieces = ["1", "0x1", "1.", ".5", "1_0", "if", "or", "and", "e", "j", "'", '"', "\\d", "\\n", " ", "\n", "x", "="]
    warned = 0
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with contextlib.suppress(SyntaxError, ValueError):
                ast.parse(text)
        if caught:
            warned += 1
            assert _MAY_WARN.search(text), text
    assert warned > 100  # the sample does reach the warnings


def test_dedent_is_skipped_only_where_it_would_change_nothing():
    import random
    import textwrap

    from toolbench.core.program import _LINE_STARTS_BLANK

    rng = random.Random(3)
    for _ in range(20_000):
        text = "".join(rng.choice(" \t\nab\r\x0c") for _ in range(rng.randint(0, 10)))
        if not _LINE_STARTS_BLANK.search(text):
            assert textwrap.dedent(text) == text, repr(text)


def test_a_cut_program_keeps_the_assignments_its_calls_read_through_others():
    from toolbench.core.call_env import cut_program

    program = (
        'city = Loc("New York")\nplace = city\nday = Date(3, 1, 2024)\nAPI.set_destination(place)\nAPI.set_date(day)'
    )
    assert (
        cut_program(program, {"set_destination"}) == 'city = Loc("New York")\nplace = city\nAPI.set_destination(place)'
    )
