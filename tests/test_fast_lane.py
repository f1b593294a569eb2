"""``make test-fast``: tests/slow_tests.txt names only tests that exist, and the root conftest marks
each of them slow, so ``-m 'not slow'`` leaves them out."""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, SLOW_TESTS, pytest_collection_modifyitems, slow_test_ids


@functools.cache
def defined_tests(path: Path) -> set[str]:
    """``name`` and ``Class::name`` of every test function that ``path`` defines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    names = {node.name for node in tree.body if isinstance(node, functions)}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names |= {f"{node.name}::{item.name}" for item in node.body if isinstance(item, functions)}
    return names


def test_every_listed_slow_test_exists():
    listed = slow_test_ids()
    assert listed, "the list of slow tests is empty"
    lines = [line.split("#", 1)[0].strip() for line in SLOW_TESTS.read_text(encoding="utf-8").splitlines()]
    entries = [line for line in lines if line]
    assert len(entries) == len(listed), "a test is listed twice"
    missing = []
    for entry in sorted(listed):
        file, _, name = entry.partition("::")
        path = ROOT / file
        exists = (
            file.startswith("tests/") and path.is_file() and (not name or name.split("[", 1)[0] in defined_tests(path))
        )
        if not exists:
            missing.append(entry)
    assert not missing, f"tests/slow_tests.txt names tests that do not exist: {missing}"


class _Item:
    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid
        self.marks: list[str] = []

    def add_marker(self, mark: pytest.MarkDecorator) -> None:
        self.marks.append(mark.name)


def test_listed_tests_and_every_parameter_of_a_listed_function_or_file_are_marked_slow():
    entry = sorted(test for test in slow_test_ids() if "::" in test)[0]
    base = entry.split("[", 1)[0]
    items = [_Item(entry), _Item(f"{base}[any-parameter]"), _Item(f"{base}_not_listed"), _Item("tests/x.py::y")]
    whole = sorted(test for test in slow_test_ids() if "::" not in test)  # files all of whose tests are slow
    items += [_Item(f"{file}::test_any[parameter]") for file in whole]
    pytest_collection_modifyitems(items)  # type: ignore[arg-type]
    assert [item.marks for item in items] == [["slow"], ["slow"], [], [], *(["slow"] for _ in whole)]


def test_not_slow_leaves_the_listed_tests_out():
    listed = sorted(entry for entry in slow_test_ids() if entry.startswith("tests/test_fast_lane.py"))
    assert listed == ["tests/test_fast_lane.py::test_not_slow_leaves_the_listed_tests_out"]
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q", "-m", "not slow"]
    out = subprocess.run([*command, "tests/test_fast_lane.py"], capture_output=True, text=True, cwd=ROOT).stdout
    collected = {line for line in out.splitlines() if "::" in line}
    assert "tests/test_fast_lane.py::test_every_listed_slow_test_exists" in collected
    assert not collected & set(listed)
