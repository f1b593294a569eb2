"""What agent code can reach of numpy, pandas and gspread: the allowlist, walked through the guard itself."""

from __future__ import annotations

import sys
from types import ModuleType

import numpy as np
import pandas as pd
import pytest

from toolbench.core import sandbox, surface
from toolbench.core.sandbox import Limits, run_code

LIMITS = Limits(seconds=5, memory_mb=512)
NATIVE_MODULES = ("ctypes", "_ctypes", "posix", "os", "toolbench.core.kernel", "pyseccomp", "socket", "_socket")


@pytest.fixture(scope="module")
def roots() -> list:
    return surface.roots_of_code_envs()


def guarded_walk(roots: list) -> surface.Surface:
    """Everything the attribute guard hands out, from the names and samples of both code envs."""
    return surface.walk(roots, sandbox.guarded_getattr, lambda key, owner, value: True)


@pytest.fixture(scope="module")
def walked(roots) -> surface.Surface:
    return guarded_walk(roots)


def test_the_walk_covers_both_code_envs_names(walked):
    for cls in (
        "gspread.worksheet.Worksheet",
        "pandas.DataFrame",
        "numpy.ndarray",
        "numpy.random._generator.Generator",
    ):
        assert cls in walked.classes
    assert len(walked.reached) > 2000


def test_everything_agent_code_reaches_is_allowed_and_classified(walked):
    assert surface.violations(walked) == []


def test_no_allowed_key_matches_a_denial_rule():
    offending = {key: surface.name_denial(key) for key in surface.allowlist() if surface.name_denial(key)}
    assert offending == {}


def test_the_memory_members_are_denied_not_forgotten():
    denied = surface._allowlist_data()["denied"]
    for key in ("numpy.ndarray.resize", "numpy.ndarray.ctypes", "numpy.ndarray.view", "numpy.frombuffer",
                "numpy.generic.resize", "numpy.ndarray.data", "numpy.random.bit_generator.BitGenerator.ctypes"):  # fmt: skip
        assert key in denied and key not in surface.allowlist()
    assert "numpy.resize" in surface.allowlist()  # the function returns a new array


def test_a_denied_member_made_reachable_is_caught(roots, monkeypatch):
    """Put ndarray.resize (a use-after-free) on the allowlist: the guard hands it out, and the
    walk's check names it."""
    grown = surface.allowlist() | {"numpy.ndarray.resize"}
    monkeypatch.setattr(surface, "allowlist", lambda: grown)
    monkeypatch.setattr(surface, "_DECISIONS", {})
    walked = guarded_walk(roots)
    assert walked.reached.get("numpy.ndarray.resize") is True
    assert any(
        problem.startswith("numpy.ndarray.resize: reached, but denied") for problem in surface.violations(walked)
    )


def test_an_attribute_the_allowlist_never_heard_of_is_caught(roots, monkeypatch):
    """A library upgrade that adds a member: refused by the guard, and reported as unclassified."""
    data = surface._allowlist_data()
    smaller = {**data, "allowed": [k for k in data["allowed"] if k != "numpy.ndarray.sum"], "denied": {
        k: v for k, v in data["denied"].items()}}  # fmt: skip
    monkeypatch.setattr(surface, "_allowlist_data", lambda: smaller)
    monkeypatch.setattr(surface, "allowlist", lambda: frozenset(smaller["allowed"]))
    monkeypatch.setattr(surface, "_DECISIONS", {})
    walked = guarded_walk(roots)
    assert "numpy.ndarray.sum" not in walked.reached
    problems = surface.violations(walked)
    assert len(problems) == 1 and "neither allowed nor denied" in problems[0] and "numpy.ndarray.sum" in problems[0]


def test_nothing_reachable_makes_system_calls_or_is_a_module_beyond_the_allowed(walked):
    for key, value in walked.candidates.items():
        if key not in walked.reached:
            continue
        if isinstance(value, ModuleType):
            assert value.__name__ in surface.ALLOWED_MODULES, key
        module = getattr(type(value), "__module__", "") or ""
        assert not module.startswith(NATIVE_MODULES), key
        if callable(value) and not isinstance(value, type):
            assert not (getattr(value, "__module__", None) or "").startswith(NATIVE_MODULES), key


def run(code: str, names=None) -> sandbox.SandboxResult:
    return run_code(code, lambda: names or {"np": np, "pd": pd}, lambda ns: ns.get("value"), LIMITS)


@pytest.mark.parametrize(
    "code, refused",
    [
        # The use-after-free: the buffer under a live view reallocated.
        ("a = np.zeros(16)\nv = a[:]\na.resize(10**6, refcheck=False)", "numpy.ndarray.resize"),
        ("m = np.matrix([[1.0]])\nm.resize((4, 4), refcheck=False)", "numpy.ndarray.resize"),
        ("s = np.float64(1.0)\ns.resize(4)", "numpy.generic.resize"),
        ("v = np.arange(4).view(np.float64)", "numpy.ndarray.view"),
        ("v = np.zeros(2, dtype=[('a', 'O')]).getfield(np.int64)", "numpy.ndarray.getfield"),
        ("v = pd.Series([1.0]).to_numpy().resize(9, refcheck=False)", "numpy.ndarray.resize"),
        ("v = np.zeros(2).ctypes.data", "'ctypes'"),
        ("v = np.zeros(2).data", "numpy.ndarray.data"),
        ("v = np.frombuffer(b'x' * 8)", "'frombuffer'"),
        ("v = np.lib.stride_tricks.as_strided(np.zeros(2), (9,), (8,))", "numpy.lib"),
        ("v = np.random.default_rng().bit_generator.ctypes", "'ctypes'"),
        ("v = np.random.default_rng().bit_generator.lock", "BitGenerator.lock"),
        ("v = pd.DataFrame({'a': [1]}).agg('plot')", "'plot' is not available here"),
        ("v = pd.Series([1.0]).pipe(np.nditer)", "numpy.nditer"),
    ],
)
def test_members_that_free_or_map_memory_are_refused(code, refused):
    result = run(code)
    assert not result.ok and refused in result.error and "is not available here" in result.error, result.error


def test_ordinary_code_still_runs_and_column_shortcuts_read_columns():
    code = (
        "df = pd.DataFrame({'Price': [3, 11], 'Qty': [1, 2]})\n"
        "value = [int(df.Price.sum()), df.groupby('Qty').Price.max().tolist(), float(np.resize(np.arange(3), 5).sum()),"
        " df.pipe(lambda d: d.Qty * 2).tolist(), pd.Series([1, 2]).agg('sum').item(), int(df.shape[0])]"
    )
    result = run(code)
    assert result.ok and result.payload == [14, [3, 11], 4.0, [2, 4], 3, 2], result.error
    result = run("df = pd.DataFrame({'a': [1]})\nvalue = df.no_such_thing")
    assert not result.ok and "'DataFrame' object has no attribute 'no_such_thing'" in result.error


@pytest.mark.parametrize(
    "code, said",
    [
        ("np.mean = print", "the module numpy cannot be changed here"),
        ("pd.DataFrame.head = print", "the class DataFrame cannot be changed here"),
        ("del np.linalg.norm", "the module numpy.linalg cannot be changed here"),
    ],
)
def test_modules_classes_and_library_functions_cannot_be_rewritten(code, said):
    result = run(code)
    assert not result.ok and said in result.error, result.error
    own = run("def f():\n    return 1\nf.calls = 2\nvalue = f.calls")
    assert own.ok and own.payload == 2, own.error


def test_the_child_holds_no_handle_on_the_c_library_or_libseccomp():
    """Once its layers are applied, a child has dropped the kernel module's libc handle and
    libseccomp's binding: code past every guard finds no ready-made way to raw system calls."""

    def collect(namespace):  # runs in the child after the code, as escaped code would
        kernel = sys.modules["toolbench.core.kernel"]
        return [kernel._libc is None, "pyseccomp" in sys.modules]

    result = run_code("x = 1", lambda: {}, collect, LIMITS)
    assert result.payload == [True, False], result
