"""What agent code can reach of numpy, pandas and gspread: the allowlist, walked through the guard itself."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from toolbench.core import reachable, sandbox, surface
from toolbench.core.sandbox import Limits, run_code
from toolbench.envs import CODE_ENV_MODULES

LIMITS = Limits(seconds=5, memory_mb=512)


@pytest.fixture(scope="module")
def roots() -> list:
    return surface.roots_of_code_envs(CODE_ENV_MODULES)


def guarded_walk(roots: list) -> surface.Surface:
    """Everything the attribute guard hands out, from the names and samples of both code envs."""
    return surface.walk(roots, sandbox.guarded_getattr, lambda key, owner, value: True)


@pytest.fixture(scope="module")
def agent_world() -> dict:
    """The guard's walk in a fresh interpreter with the libraries loaded as the worker loads them."""
    return surface.report_in_agent_world(CODE_ENV_MODULES)


def test_the_walk_covers_both_code_envs_names(agent_world):
    for cls in (
        "gspread.worksheet.Worksheet",
        "pandas.DataFrame",
        "numpy.ndarray",
        "numpy.random._generator.Generator",
    ):
        assert cls in agent_world["classes"]
    assert agent_world["reached"] > 2000


def test_everything_agent_code_reaches_is_allowed_and_classified(agent_world):
    assert agent_world["violations"] == []


def test_nothing_reachable_makes_system_calls_or_is_a_module_beyond_the_allowed(agent_world):
    assert agent_world["system_reach"] == []


def test_agent_code_s_world_is_the_same_with_or_without_pyarrow(agent_world):
    """pyarrow, where installed, is withheld: pandas keeps strings in Python objects and no Arrow
    type is reachable, so the walk (and the allowlist) is the same on every machine."""
    assert "pyarrow" not in agent_world["modules"]
    arrow = [cls for cls in agent_world["classes"] if cls.startswith("pyarrow") or ("Arrow" in cls and "Array" in cls)]
    assert arrow == []


def test_a_reachable_system_module_or_call_is_caught():
    import os
    import socket

    walked = surface.Surface(
        reached={"a.system": True, "a.os": False, "a.sock": True, "a.mean": True},
        candidates={"a.system": os.system, "a.os": os, "a.sock": socket.socket, "a.mean": np.mean},
    )
    assert surface.system_reach(walked) == ["a.os", "a.sock", "a.system"]


def test_agent_code_runs_without_pyarrow_even_where_it_is_installed(monkeypatch):
    monkeypatch.setattr(sandbox.for_tests, "UNGUARDED_FOR_TESTS", True)  # to import sys and read its modules
    code = (
        "import sys, pandas as pd\nresult = [pd.array(['a'], dtype='string').dtype.storage, sys.modules.get('pyarrow')]"
    )
    names, collect = "toolbench.core.sandbox:no_names", "toolbench.core.sandbox:result_variable"
    outcome = sandbox.run_in_worker(code, names, collect, serve=lambda kind, payload: None, limits=LIMITS)
    assert outcome.ok and outcome.payload == ["python", None], outcome.error


def test_no_allowed_key_matches_a_denial_rule():
    offending = {key: surface.name_denial(key) for key in reachable.allowlist() if surface.name_denial(key)}
    assert offending == {}


def test_the_memory_members_are_denied_not_forgotten():
    denied = reachable._allowlist_data()["denied"]
    for key in ("numpy.ndarray.resize", "numpy.ndarray.ctypes", "numpy.ndarray.view", "numpy.frombuffer",
                "numpy.generic.resize", "numpy.ndarray.data", "numpy.random.bit_generator.BitGenerator.ctypes"):  # fmt: skip
        assert key in denied and key not in reachable.allowlist()
    assert "numpy.resize" in reachable.allowlist()  # the function returns a new array


def test_a_denied_member_made_reachable_is_caught(roots, monkeypatch):
    """Put ndarray.resize (a use-after-free) on the allowlist: the guard hands it out, and the
    walk's check names it."""
    grown = reachable.allowlist() | {"numpy.ndarray.resize"}
    monkeypatch.setattr(reachable, "allowlist", lambda: grown)
    monkeypatch.setattr(reachable, "_DECISIONS", {})
    walked = guarded_walk(roots)
    assert walked.reached.get("numpy.ndarray.resize") is True
    assert any(
        problem.startswith("numpy.ndarray.resize: reached, but denied") for problem in surface.violations(walked)
    )


def test_an_attribute_the_allowlist_never_heard_of_is_caught(roots, monkeypatch):
    """A library upgrade that adds a member: refused by the guard, and reported as unclassified."""
    data = reachable._allowlist_data()
    smaller = {**data, "allowed": [k for k in data["allowed"] if k != "numpy.ndarray.sum"], "denied": {
        k: v for k, v in data["denied"].items()}}  # fmt: skip
    monkeypatch.setattr(reachable, "_allowlist_data", lambda: smaller)
    monkeypatch.setattr(reachable, "allowlist", lambda: frozenset(smaller["allowed"]))
    monkeypatch.setattr(reachable, "_DECISIONS", {})
    walked = guarded_walk(roots)
    assert "numpy.ndarray.sum" not in walked.reached
    problems = surface.violations(walked)
    assert len(problems) == 1 and "neither allowed nor denied" in problems[0] and "numpy.ndarray.sum" in problems[0]


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


@pytest.mark.parametrize(
    "code, said",
    [
        # Object fields overlapping integer fields of the next row: forged pointers.
        (
            "dt = np.dtype([('a', 'i8'), ('b', 'O')])\nv = np.ndarray((2,), dtype=dt, strides=(8,))",
            "strides=(8,) is not available here",
        ),
        ("v = np.ndarray((2,), 'O', None, 8)", "offset=8 is not available here"),
        ("v = np.char.chararray((2,), strides=(1,))", "strides=(1,) is not available here"),
        ("v = np.recarray((2,), dtype=[('a', 'O')], strides=(4,))", "strides=(4,) is not available here"),
        # A Categorical's or MultiIndex's codes index their categories without bounds checks.
        ("c = pd.Categorical(['a', 'b'])\nv = c.view('int16')", "is not available here"),
        ("c = pd.Categorical(['a', 'b'])\nc.codes.flags.writeable = True", "cannot be assigned here"),
        ("b = np.broadcast_to(np.array([1]), (4,))\nb.flags.writeable = True", "cannot be assigned here"),
        ("v = pd.Categorical.from_codes([300], ['a'], validate=False)", "validate=False is not available here"),
        ("v = pd.MultiIndex(levels=[[1]], codes=[[9]], verify_integrity=False)", "verify_integrity=False"),
        (
            "m = pd.MultiIndex.from_arrays([[1, 2]])\nv = m.set_codes([[7, 7]], verify_integrity=False)",
            "verify_integrity=False",
        ),
        # Containers that hand out what the guard would not: np.ScalarType holds memoryview.
        ("v = next(iter(np.ScalarType))", "numpy.ScalarType is not available here"),
        ("v = pd.Series([np.random.default_rng(0).bit_generator]).to_json()", "cannot be written as JSON here"),
        ("v = pd.DataFrame({'a': [1.5]}).to_string(float_format='{0.__class__}')", "may not read attributes"),
        ("v = pd.Series([1.0, 2.0]).rolling(2, win_type='__class__')", "a plain name"),
        ("np.sctypeDict['float64'] = 'O'", "mappingproxy items cannot be assigned here"),
        ("np.typecodes['All'] = 'O'", "mappingproxy items cannot be assigned here"),
    ],
)
def test_constructor_arguments_flags_and_library_state_that_break_invariants_are_refused(code, said):
    result = run(code)
    assert not result.ok and said in result.error, result.error


def test_what_a_container_hands_out_is_checked_like_an_item():
    import os

    for code in ("v = next(iter(things))", "v = min(things, key=lambda m: 1)", "v = max(things, key=lambda m: 1)"):
        result = run_code(code, lambda: {"things": [os, os]}, lambda ns: None, LIMITS)
        assert not result.ok and "modules are not available here" in result.error, (code, result.error)


def test_the_stand_ins_and_the_shortcuts_keep_ordinary_code_working():
    code = (
        "df = pd.DataFrame({'Price': [3.0, 11.0], 'Name': ['a', 'b']})\n"
        "value = [np.ndarray.sum(np.ones(3)).item(), isinstance(np.zeros(2), np.ndarray), np.ndarray((2, 3)).shape,"
        " [row.Price for row in df.itertuples()], pd.api.types.is_numeric_dtype(df['Price']),"
        " issubclass(pd.errors.ParserError, ValueError), df.to_string(float_format=lambda x: str(x)) != '',"
        " df.to_string(float_format='{:.1f}') != '', pd.Categorical.from_codes([0], ['a']).tolist(),"
        " str(np.strings.upper(np.array(['x']))[0]), df['Price'].to_json()]"
    )
    result = run(code)
    assert result.ok, result.error
    assert result.payload == [3.0, True, [2, 3], [3.0, 11.0], True, True, True, True, ["a"], "X", '{"0":3.0,"1":11.0}']


def test_a_library_that_loads_its_own_blas_in_the_child_runs_single_threaded():
    pytest.importorskip("scipy", reason="scipy is not installed")
    code = "value = pd.Series([1.0, None, 3.0]).interpolate(method='polynomial', order=1).tolist()"
    result = run_code(
        code, lambda: {"np": np, "pd": pd}, lambda ns: ns.get("value"), Limits(seconds=30, memory_mb=1024)
    )
    assert result.ok and result.payload == [1.0, 2.0, 3.0], result.error


@pytest.mark.parametrize(
    "code, said",
    [
        ("setattr(np, 'x', 1)", "name 'setattr' is not defined"),  # it would write past _write_
        ("delattr(np, 'mean')", "name 'delattr' is not defined"),
        ("value = hash(np.mean)", "name 'hash' is not defined"),  # an address, rotated
        ("c = pd.Categorical(['a'])\nc.codes.flags['WRITEABLE'] = True", "flagsobj items cannot be assigned here"),
        ("np.random.RandomState(0).set_state(('MT19937', np.zeros(624, 'uint32'), -24))", "set_state"),
        ("value = pd.DataFrame({'a': [1.5]}).agg('to_string', float_format='{0.__class__}')", "'to_string'"),
        ("value = pd.DataFrame({'a': [np.random.MT19937(0)]}).agg('to_json')", "cannot be written as JSON here"),
        ("value = pd.CategoricalDtype(['a']).construct_array_type()", "is not available here"),
    ],
)
def test_writes_addresses_raw_states_and_by_name_calls_past_the_rules_are_refused(code, said):
    result = run(code)
    assert not result.ok and said in result.error, result.error


def test_codes_a_constructor_keeps_are_the_constructors_own():
    """pandas checks a Categorical's (a MultiIndex's) codes once and keeps the array: changing the
    array afterwards must not change the codes, which index categories without bounds checks."""
    code = (
        "src = np.array([0, 1], dtype='int16')\nc = pd.Categorical.from_codes(src, ['a', 'b'])\n"
        "m = pd.MultiIndex(levels=[['x', 'y']], codes=[src])\nn = m.set_codes([pd.Series(src)])\n"
        "src[:] = 30000\nvalue = [c.tolist(), list(m), list(n)]"
    )
    result = run(code)
    assert result.ok and result.payload == [["a", "b"], [["x"], ["y"]], [["x"], ["y"]]], result.error


@pytest.mark.parametrize(
    "code, said",
    [
        (("a" + "[a" * 20 + "[0" + "]" * 21 + " += 1\n") * 150, "nested too deeply"),
        ("b = a" + ".x" * 70 + "\n", "levels deep"),
        ("x = [" + ",".join(["1"] * 21_000) + "]\n", "syntax nodes"),
    ],
)
def test_code_whose_checking_would_cost_the_env_seconds_is_refused_before_it(code, said):
    import gc
    import time

    # This thread's CPU time, with the collector paused: the check's own cost (a few hundredths of a
    # second), not that of other threads or of collecting what earlier tests of this process left.
    gc.disable()
    try:
        started = time.thread_time()
        with pytest.raises(sandbox.CodeError, match=said):
            sandbox.compile_code("a = 0\n" + code)
        spent = time.thread_time() - started
    finally:
        gc.enable()
    assert spent < 0.5


def test_codes_stay_the_objects_own_however_they_were_passed():
    code = (
        "src = np.array([0, 1], dtype='int16')\nview = src[:]\n"
        "frozen = pd.MultiIndex.from_arrays([[0], [0]]).codes[:0]\n"
        "m = pd.MultiIndex(levels=[['x', 'y']], codes=frozen + [src])\n"
        "c = pd.Categorical.from_codes(pd.Series(src), ['a', 'b'])\n"
        "view[:] = 30000\nvalue = [list(m), c.tolist()]"
    )
    result = run(code)
    assert result.ok and result.payload == [[["x"], ["y"]], ["a", "b"]], result.error


def test_rows_whose_length_and_iteration_disagree_build_as_their_iteration():
    # A DataFrame has one row but iterates its 50 column labels: pandas' row packer trusted len().
    code = (
        "wide = pd.DataFrame([[0] * 50], columns=['c%d' % i for i in range(50)])\n"
        "value = [pd.DataFrame([(1, 2)] + [wide] * 3).shape, pd.DataFrame([[1, 2], wide]).shape,"
        " len(pd.MultiIndex.from_tuples([(1, 2), wide]))]"
    )
    result = run(code)
    assert result.ok and result.payload == [[4, 50], [2, 50], 2], result.error


def test_an_objects_cached_containers_reach_the_code_as_copies():
    code = (
        "df = pd.DataFrame({'g': [0, 0, 1], 'v': [1.0, 2.0, 3.0]})\ngb = df.groupby('g')\n"
        "gb.indices[0][:] = 99\nindices = gb.indices\nindices[0] = np.arange(10**6)\n"
        "value = [gb.indices[0].tolist(), gb['v'].sum().tolist()]"
    )
    result = run(code)
    assert result.ok and result.payload == [[0, 1], [3.0, 3.0]], result.error


def test_the_envs_own_code_in_the_child_writes_no_object_by_its_attributes():
    import gymnasium as gym

    env = gym.make("toolbench/GoogleSheets-v0", mode="interactive")
    env.reset(seed=0)
    env.step("x = pd.DataFrame({'a': [np.random.MT19937(0)]})\ny = 1")
    observation, *_ = env.step("print(y)\nx")
    assert observation.startswith("1") and "NameError" in observation and "ctypes" not in observation
    env.close()


def test_match_objects_and_harmless_explicit_defaults_are_usable():
    code = (
        "s = pd.Series(['ab', 'cb'])\n"
        "value = [s.str.replace('b', lambda m: m.group(0).upper() + str(m.start()), regex=True).tolist(),"
        " pd.concat([s, s], verify_integrity=False, ignore_index=True).size]"
    )
    result = run(code)
    assert result.ok and result.payload == [["aB1", "cB1"], 4], result.error


@pytest.mark.parametrize(
    "code, said",
    [
        # A structured scalar's byteswap copies the uninitialised block the code freed just before.
        ("s = np.zeros(1, dtype=[('p', 'V32'), ('b', 'O')])[0]\nv = s.byteswap()", "byteswap"),
        ("v = np.arange(3).byteswap()", "byteswap"),
        ("v = np.bincount([2**63 - 1, 3], minlength=4)", "values from 0 to"),
        ("v = np.arange(4).repeat(2**62)", "counts adding up to"),
        ("v = np.repeat([1, 2], [2**62, 2**62])", "counts adding up to"),
        ("v = pd.Series([1, 2]).repeat(2**62)", "counts adding up to"),
        # Lists numpy converts element by element, which read as text or floats to a check of the whole.
        ("v = np.bincount(['9223372036854775807', '2002'])", "values from 0 to"),
        ("v = np.bincount([np.uint64(2**63 - 1), 2002], minlength=4)", "values from 0 to"),
        ("v = np.repeat([1, 2, 3, 4], [2.0**62] * 4)", "counts adding up to"),
        ("v = np.arange(4).repeat([np.uint64(2**62), 2**62, 2**62, 2**62])", "counts adding up to"),
        ("v = np.tile(np.ones((1, 1)), (4, 2**62 + 1))", "counts adding up to"),
        ("v = pd.Series(['a']).str.pad(2**62)", "values from 0 to"),
        ("np.random.set_bit_generator(0)", "set_bit_generator"),
        ("v = pd.Series([1, 2]).groupby([0, 0]).obj", "is not available here"),
    ],
)
def test_sizes_that_wrap_uninitialised_copies_and_swapped_generators_are_refused(code, said):
    result = run(code)
    assert not result.ok and said in result.error, result.error


def test_a_groupby_or_window_keeps_the_frame_as_it_was_when_made():
    """The code changes a grouped Series in place: the groupby computes over the rows it was made from,
    not past the end of the shrunk (or grown) arrays."""
    code = (
        "s = pd.Series(np.arange(400, dtype='int64'))\nkey = np.zeros(400)\ngb = s.groupby(key)\n"
        "t = pd.Series(np.arange(4.0))\ngt = t.groupby([0, 0, 1, 1])\nroll = t.rolling(2)\n"
        "s.drop(s.index[10:], inplace=True)\nkey[:] = 7\n"
        "for i in range(4, 200):\n    t.loc[i] = 1.0\n"
        "value = [int(gb.shift(1, fill_value=0).iloc[-1]), len(gb.shift(1)), gt.cumsum().tolist(),"
        " roll.sum().tolist()[1:], len(t)]"
    )
    result = run(code)
    assert result.ok and result.payload == [398, 400, [0.0, 1.0, 2.0, 5.0], [1.0, 3.0, 5.0], 200], result.error


def test_ordinary_repeats_and_counts_still_work():
    code = "value = [np.arange(3).repeat(2).tolist(), np.bincount([0, 1, 1]).tolist(), pd.Series(['a']).repeat(3).tolist()]"
    result = run(code)
    assert result.ok and result.payload == [[0, 0, 1, 1, 2, 2], [1, 2], ["a", "a", "a"]], result.error


def test_explode_counts_what_each_list_like_holds():
    """A DataFrame as an element has one length (its rows) and iterates another (its labels), and
    ranges' lengths add up past 2**64 for free: explode sizes its output from lists made first."""
    liar = "a = np.empty(2, dtype='O')\na[0] = pd.DataFrame([[1] * 50])\nvalue = pd.Series(a).explode().tolist()"
    result = run(liar)
    assert result.ok and result.payload[:50] == list(range(50)) and len(result.payload) == 51, result.error
    wrapped = "value = pd.Series([list(range(10))] + [range(2**62)] * 3 + [range(2**62 - 6)]).explode()"
    result = run(wrapped)
    assert not result.ok and "MemoryError" in result.error, result.error
    ordinary = (
        "frame = pd.DataFrame({'a': [[1, 2], [3], [], 'x', {4}], 'b': [1, 2, 3, 4, 5]})\n"
        "value = [frame.explode('a')['a'].fillna('none').tolist(), frame.explode('a').index.tolist()]"
    )
    result = run(ordinary)
    assert result.ok and result.payload == [[1, 2, 3, "none", "x", 4], [0, 0, 1, 2, 3, 4]], result.error
