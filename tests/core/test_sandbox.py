"""The sandbox for agent code: what runs, what is refused, and the budgets."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import pandas as pd
import pytest

from toolbench.core import sandbox
from toolbench.core.sandbox import CodeError, Limits, _library_import, _readable_by_others, compile_code, run_code

LIMITS = Limits(seconds=3, memory_mb=512, output_chars=2000)


def setup():
    return {"np": np, "pd": pd, "df": pd.DataFrame({"Product": ["bolt", "clamp"], "Price": [3, 11]})}


def collect(namespace):
    return {"prices": namespace["df"]["Price"].tolist()} if "df" in namespace else None


def run(code, **kwargs):
    return run_code(code, setup, collect, kwargs.pop("limits", LIMITS), **kwargs)


def test_ordinary_data_code_runs():
    result = run(
        "df.loc[df['Product'] == 'clamp', 'Price'] += 2\n"
        "total: int = int(df['Price'].sum())\n"
        "def double(x):\n    return [v * 2 for v in x]\n"
        "print('total', total, sorted(double(df['Price'].tolist())))\n"
        "try:\n    1 / 0\nexcept ZeroDivisionError as exc:\n    print('caught', exc)\n"
        "x, *rest = [1, 2, 3]\nprint(rest, max(rest), dict(zip('ab', rest)))"
    )
    assert result.ok and result.error is None
    assert result.output == "total 16 [6, 26]\ncaught division by zero\n[2, 3] 3 {'a': 2, 'b': 3}\n"
    assert result.payload == {"prices": [3, 13]}


def test_last_expression_is_echoed_when_asked():
    assert run("x = [i * i for i in range(4)]\nx", echo_last_expression=True).output == "[0, 1, 4, 9]"
    assert run("x = 1\nx").output == ""


@pytest.mark.parametrize(
    "code, message",
    [
        ("import os", "import is not allowed"),
        ("from os import path", "import is not allowed"),
        ("().__class__.__subclasses__()", "invalid attribute name"),
        ("x = df.__dict__", "invalid attribute name"),
        ("__import__('os')", "invalid variable name"),
        ("eval('1')", "Eval calls are not allowed"),
        ("exec('x = 1')", "Exec calls are not allowed"),
        ("class A:\n    pass", "class definitions are not allowed"),
        ("x = (", "syntax error"),
        ("x" * 70_000, "the limit is"),
    ],
)
def test_refused_before_running(code, message):
    with pytest.raises(CodeError, match=message):
        compile_code(code)
    result = run(code)
    assert not result.ok and message in result.error and result.payload is None


@pytest.mark.parametrize(
    "code, message",
    [
        ("open('/etc/passwd').read()", "name 'open' is not defined"),
        ("getattr(df, '__class__')", "'__class__' is not available here"),
        ("'{0.__class__}'.format(df)", "not safe"),
        ("np.loadtxt('/etc/passwd')", "numpy.loadtxt is not available here"),
        ("df.to_csv('written.csv')", "file access is not allowed"),
        ("pd.io.common.os.system('echo pwned > pwned.txt')", "pandas.io is not available here"),
        ("np.f2py.subprocess.builtins", "not available here"),
        ("getattr(np, 'f2py')", "not available here"),
        ("np.lib.npyio", "numpy.lib is not available here"),
        ("pd.compat.platform.os", "pandas.compat is not available here"),
        ("np.ctypeslib.ctypes.CDLL(None)", "not available here"),
        ("pd.read_pickle(None)", "not available here"),
        ("pd.eval('1 + 1')", "not available here"),
        ("df.query('Price > 3')", "not available here"),
        ("g = (x for x in [1])\ng.gi_frame", "restricted name"),
        ("np.random.seed(3)\nnp.linalg.norm([3, 4])", None),
        ("pd.read_csv('http://127.0.0.1:9/x.csv')", "Error"),  # refused on the way (imports, sockets)
        ("raise SystemExit(3)", "SystemExit: 3"),
    ],
)
def test_refused_while_running(code, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run(code)
    if message is None:  # allowed: numpy's random and linalg modules
        assert result.ok, result.error
        return
    assert not result.ok and message in result.error, result.error
    if "restricted name" not in result.error:  # refused while compiling: nothing ran, nothing to collect
        assert result.payload == {"prices": [3, 11]}  # the result is still collected after an error
    assert list(tmp_path.iterdir()) == []


def with_os():
    """A namespace that hands the code the os module on purpose, to test the layers behind the
    guarded attribute access (which normally keeps modules out of reach): the tests using it
    trust ``os`` (``trusted_os``), so that its attributes pass the guard."""
    return {**setup(), "os_module": os}


@pytest.fixture
def trusted_os(monkeypatch):
    """The guard lets agent code read the attributes of ``os`` and ``json`` (in the forked child too)."""
    monkeypatch.setattr(sandbox.for_tests, "TRUSTED_MODULES_FOR_TESTS", frozenset({"os", "json"}))


def run_with_os(code, **kwargs):
    return run_code(code, with_os, collect, kwargs.pop("limits", LIMITS), **kwargs)


def test_behind_the_attribute_guard(tmp_path, monkeypatch, trusted_os):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    result = run_with_os("print(dict(os_module.environ))")
    assert result.ok and "sk-secret" not in result.output
    assert result.output == "{'OMP_NUM_THREADS': '1', 'OPENBLAS_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1'}\n"
    for code, message in [
        ("os_module.system('touch pwned')", "os.system"),
        ("os_module.listdir('/etc')", "os.listdir"),
        ("os_module.remove('x')", "os.remove"),
        (f"open_ = os_module.open('/proc/{os.getpid()}/environ', 0)", "file access is not allowed"),
    ]:
        result = run_with_os(code)
        assert not result.ok and message in result.error, (code, result.error)
    assert (
        "BlockingIOError" in run_with_os("os_module.fork()").error
        or "not allowed" in run_with_os("os_module.fork()").error
    )
    assert list(tmp_path.iterdir()) == []


def test_closing_the_pipe_does_not_outlive_the_budget(trusted_os):
    start = time.perf_counter()
    code = "for fd in range(3, 64):\n    try:\n        os_module.close(fd)\n    except OSError:\n        pass\nwhile True:\n    pass"
    result = run_with_os(code, limits=Limits(seconds=1, memory_mb=512))
    assert result.timed_out and time.perf_counter() - start < 4


def test_the_parents_stdio_is_out_of_reach(capfd, trusted_os):
    result = run_with_os("os_module.write(1, b'{\"agent\": \"pwned\"}')\nprint('fine')")
    assert result.ok and result.output == "fine\n"
    assert "pwned" not in capfd.readouterr().out


def test_numpy_is_seeded_per_run():
    draws = [run("print(np.random.randint(0, 10**9))", seed=7).output for _ in range(2)]
    assert draws[0] == draws[1] != run("print(np.random.randint(0, 10**9))", seed=8).output


def test_time_budget():
    start = time.perf_counter()
    result = run("while True:\n    pass", limits=Limits(seconds=1, memory_mb=512))
    assert result.timed_out and "1 s time budget" in result.error
    assert time.perf_counter() - start < 5


def test_memory_budget():
    result = run("x = np.ones(10 * 2**30, dtype=np.uint8)")  # 10 GB
    assert not result.ok and "MemoryError" in result.error


def test_recursion_and_output_limits():
    assert "RecursionError" in run("def f(n):\n    return f(n + 1)\nf(0)").error
    result = run("for i in range(100000):\n    print('spam spam spam')")
    assert result.ok and len(result.output) < 2100 and "output truncated" in result.output


def test_the_parent_never_trusts_the_pipe(trusted_os):
    # Agent code that reaches os.write and floods every descriptor: the parent's own descriptors
    # were closed in the child, and whatever reaches the reply pipe is rejected as malformed.
    read_end, write_end = os.pipe()
    try:
        code = (
            "o = os_module\n"
            "for fd in range(3, 64):\n"
            "    try:\n        o.write(fd, b'\\x80\\x04 not json')\n"
            "    except Exception:\n        pass"
        )
        result = run_with_os(code)
        assert not result.ok and result.error == "the code sent back a malformed result"
        os.set_blocking(read_end, False)
        with pytest.raises(BlockingIOError):
            os.read(read_end, 10)
    finally:
        os.close(read_end)
        os.close(write_end)


def test_parent_state_is_untouched():
    frame = pd.DataFrame({"a": [1]})

    def shared():
        return {"frame": frame}

    result = run_code("frame.loc[0, 'a'] = 99", shared, lambda ns: ns["frame"]["a"].tolist(), LIMITS)
    assert result.ok and result.payload == [99] and frame.loc[0, "a"] == 1


def test_a_missing_attribute_is_an_attribute_error():
    result = run("x = [1]\nx.no_such_method()")
    assert not result.ok and "AttributeError: 'list' object has no attribute 'no_such_method'" in result.error
    result = run("print(getattr([1], 'missing', 'fallback'), hasattr([1], 'append'), hasattr([1], 'nope'))")
    assert result.ok and result.output.strip() == "fallback True False", result


def test_readable_by_others_needs_every_folder_on_the_way():
    # Not pytest's tmp_path: its parents are private to the user, which is just what is tested here.
    base = tempfile.mkdtemp(dir="/tmp" if os.path.isdir("/tmp") else None)
    try:
        inner = os.path.join(base, "outer", "lib")
        os.makedirs(inner)
        for folder in (base, os.path.dirname(inner), inner):
            os.chmod(folder, 0o755)
        if not _readable_by_others(base):
            pytest.skip("the temporary folder's parents are not open to other users here")
        assert _readable_by_others(inner)
        os.chmod(os.path.dirname(inner), 0o700)  # like /root: what is below cannot be reached
        assert not _readable_by_others(inner)
        os.chmod(os.path.dirname(inner), 0o755)
        os.chmod(inner, 0o711)  # reachable but not listable
        assert not _readable_by_others(inner)
        assert not _readable_by_others(os.path.join(base, "missing"))
    finally:
        shutil.rmtree(base)


def test_late_imports_still_work_in_the_child(trusted_os):
    # The child imports on demand (a library's lazy submodule); whether or not it drops to an
    # unprivileged user, the installation must stay readable.
    result = run_code(
        "value = json_module.dumps([1])", lambda: {"json_module": __import__("json")}, lambda ns: ns["value"]
    )
    assert result.ok and result.payload == "[1]", result.error


def test_array_methods_work_in_a_fresh_interpreter():
    # ndarray.sum and friends import numpy's helpers lazily from C, through the agent frame's
    # __import__; pytest's process has long imported them, so only a new interpreter shows it.
    script = (
        "import numpy as np\n"
        "from toolbench.core.sandbox import run_code\n"
        "import pandas as pd\n"
        "code = 'a = np.arange(4.0)\\nvalue = [float(a.sum()), float(a.mean()), float(a.std()), bool(a.any()),"
        ' pd.Timestamp(2024, 1, 5).strftime("%d/%m")]\'\n'
        "result = run_code(code, lambda: {'np': np, 'pd': pd}, lambda ns: ns['value'])\n"
        "print(result.error or result.payload)\n"
    )
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert completed.stdout.strip() == "[6.0, 1.5, 1.118033988749895, True, '05/01']", completed.stderr


def test_imports_from_agent_frames_are_limited_to_loaded_modules_and_the_data_libraries():
    assert _library_import("numpy.linalg").__name__ == "numpy"
    assert _library_import("time").__name__ == "time"  # already loaded: nothing new is read
    for name in ("antigravity", "this", "tkinter"):
        with pytest.raises(ImportError, match="not allowed"):
            _library_import(name)
    with pytest.raises(ImportError):
        _library_import("numpy", level=1)


@pytest.mark.parametrize(
    "code",
    [
        "value = np.zeros(2).ctypes",
        "value = np.random.default_rng().bit_generator.ctypes",
        "value = np.random.default_rng().bit_generator.cffi",
        "value = np.random.default_rng().bit_generator.capsule",
    ],
)
def test_native_pointers_are_out_of_reach(code):
    result = run_code(code, lambda: {"np": np}, lambda ns: None)
    assert not result.ok and "is not available here" in result.error


@pytest.mark.parametrize("code", ["a = 1" + "+1" * 400, "a = x" + ".y" * 2000, "a = " + "-" * 3000 + "1"])
def test_deep_expressions_are_refused_before_running(code):
    with pytest.raises(CodeError, match="nested too deeply|cannot be parsed|levels deep"):
        compile_code(code)


def test_values_and_errors_that_cannot_be_shown_keep_the_result():
    deep = "a = []\nfor i in range(100000):\n    a = [a]\n"
    shown = run_code(deep + "done = 1\na", lambda: {}, lambda ns: ns["done"], echo_last_expression=True)
    assert shown.ok and shown.payload == 1 and "cannot be shown" in shown.output
    raised = run_code(deep + "done = 1\nraise KeyError(a)", lambda: {}, lambda ns: ns["done"])
    assert raised.payload == 1 and raised.error == "line 5: KeyError: <cannot be shown: RecursionError>"


def test_error_messages_are_capped():
    result = run_code("raise ValueError('x' * 100000)", lambda: {}, lambda ns: None)
    assert len(result.error) < 2_100 and result.error.endswith("(98000 more characters)")


def test_matrix_products_finish_in_the_child():
    # Where the child runs as an ordinary user, RLIMIT_NPROC = 0 forbids new threads: BLAS must
    # be limited to one, or OpenBLAS waits for its workers until the deadline.
    result = run_code(
        "b = float((a @ a).sum())", lambda: {"a": np.ones((300, 300))}, lambda ns: ns["b"], Limits(seconds=10)
    )
    assert result.ok and result.payload == 300.0**3, result.error


@pytest.mark.parametrize(
    "code",
    [
        "v = np.ndarray((1,), dtype=np.dtype('O'), buffer=np.zeros(2))",
        "v = np.ndarray((1,), np.dtype('O'), np.zeros(2))",
        "v = np.recarray((1,), dtype=[('a', 'O')], buf=np.zeros(2))",
    ],
)
def test_arrays_over_raw_buffers_are_refused(code):
    # An object array over a buffer would read its bytes as object pointers.
    result = run_code(code, lambda: {"np": np}, lambda ns: None)
    assert not result.ok and "is not available here" in result.error


def test_array_types_still_work_for_checks_and_building():
    code = (
        "value = [isinstance(np.zeros(2), np.ndarray), isinstance(3, np.ndarray),"
        " issubclass(np.recarray, np.ndarray), np.ndarray((2, 3)).shape == (2, 3)]"
    )
    result = run_code(code, lambda: {"np": np}, lambda ns: ns["value"])
    assert result.payload == [True, False, True, True], result.error


@pytest.mark.parametrize(
    "code",
    [
        "v = pd.DataFrame({'a': [1]}).style",
        "v = pd.DataFrame({'a': [1]}).agg('style')",  # pandas looks methods up by name itself
        "v = pd.DataFrame({'a': [1]}).apply('eval', expr='a + 1')",
        "v = pd.DataFrame({'a': [1]}).to_latex()",
        "v = pd.read_csv('/etc/passwd')",
        "v = pd.read_xml('<a/>')",
        "v = pd.DataFrame({'a': [1]}).to_parquet('x.parquet')",
    ],
)
def test_library_entry_points_that_run_code_or_touch_files_are_disarmed(code):
    result = run_code(code, lambda: {"pd": pd}, lambda ns: None)
    assert not result.ok and "is not available here" in result.error
    assert type(pd.DataFrame({"a": [1]}).style).__name__ == "Styler"  # only the child is changed


def test_template_engines_are_out_of_reach_even_when_obtained():
    # A Styler's jinja2 Environment renders templates that reach the real builtins.
    def setup():
        return {"styler": pd.DataFrame({"a": [1]}).style}

    result = run_code("v = styler.env", setup, lambda ns: None)
    assert not result.ok and "not available here" in result.error


def test_everyday_pandas_output_still_works():
    code = "df = pd.DataFrame({'a': [1, 2]})\nvalue = [df.to_csv(index=False), df.to_dict('list'), df.to_json()]"
    result = run_code(code, lambda: {"pd": pd}, lambda ns: ns["value"])
    assert result.payload == ["a\n1\n2\n", {"a": [1, 2]}, '{"a":{"0":1,"1":2}}'], result.error


@pytest.mark.parametrize(
    "code, message",
    [
        ("v = np.matrix.mro()", "'mro' is not available here"),  # would hand out the real np.ndarray
        ("v = pd.Series([1, 2]).agg('__dict__')", "'__dict__' is not available here"),
        ("v = pd.DataFrame({'a': [1, 1]}).groupby('a').agg('__class__')", "'__class__' is not available here"),
        ("v = pd.DataFrame({'a': [1]}).plot(backend='json')", "pandas.DataFrame.plot is not available here"),
        ("v = pd.set_option('plotting.backend', 'json')", "pandas.set_option is not available here"),
    ],
)
def test_paths_to_real_classes_and_imports_are_closed(code, message):
    result = run_code(code, lambda: {"np": np, "pd": pd}, lambda ns: None)
    assert not result.ok and message in result.error


def test_iteration_hands_out_the_same_stand_ins_as_attributes():
    code = 'value = [repr(c).startswith("<class \'numpy.") for c in [np.ndarray, np.recarray, np.matrix]]'
    result = run_code(code, lambda: {"np": np}, lambda ns: ns["value"])
    assert result.payload == [False, False, True], result.error
    result = run_code(
        "for m in [np.random, os_module]:\n    pass", lambda: {"np": np, "os_module": os}, lambda ns: None
    )
    assert not result.ok and "modules are not available here" in result.error


@pytest.mark.parametrize(
    "code, message",
    [
        ("s = np.zeros(2, dtype=[('p', 'O'), ('i', '<i8')])\nv = s['p']\nv.strides = (8,)", "assigning .strides"),
        ("a = np.zeros(4)\na.shape = (2, 2)", "assigning .shape"),
        ("a = np.zeros(4)\ndel a.dtype", "assigning .dtype"),
    ],
)
def test_array_layouts_cannot_be_rewritten_in_place(code, message):
    # An object view with new strides would read integers as object pointers.
    with pytest.raises(CodeError, match=message):
        compile_code(code)


def test_addresses_and_dunder_labels_are_out_of_reach():
    result = run_code("out = id(np)", lambda: {"np": np}, lambda ns: None)
    assert not result.ok and "name 'id' is not defined" in result.error
    # A Series answers unknown attributes with rows; numpy asks objects for __array_interface__.
    code = "iface = {'data': (16, True), 'typestr': '|O', 'shape': (2,), 'version': 3}\n"
    code += "out = np.asarray(pd.Series([iface], index=['__array_interface__'], dtype='O')).tolist()"
    result = run_code(code, lambda: {"np": np, "pd": pd}, lambda ns: ns["out"])
    assert result.ok and result.payload == [{"data": [16, True], "typestr": "|O", "shape": [2], "version": 3}]


def test_the_audit_hook_survives_rebinding_the_module_and_sees_os_open():
    site_file = os.path.join(np.__path__[0], "toolbench_probe.txt")

    def collect(namespace):  # runs in the child with the hook installed, as escaped code would
        from toolbench.core.sandbox import confine

        confine._under = lambda path, roots: True  # the module whose names the hook was built from
        confine._DENIED_EVENT_PREFIXES = ()
        outcomes = []
        for attempt in (
            lambda: open("/etc/hostname").close(),
            lambda: os.close(os.open(site_file, os.O_WRONLY | os.O_CREAT)),
        ):
            try:
                attempt()
                outcomes.append("allowed")
            except PermissionError:
                outcomes.append("refused")
        return outcomes

    result = run_code("x = 1", lambda: {}, collect)
    assert result.payload == ["refused", "refused"] and not os.path.exists(site_file)


@pytest.mark.parametrize(
    "code",
    [
        "g = pd.Series([1]).groupby([0])\nprint(g.agg('__getattribute__', '__class__'))",
        "g = pd.Series([1]).groupby([0])\nprint(g.aggregate(g, '__getattribute__', '__class__'))",
        "print(pd.Series([1.0, 2.0]).rolling(1).agg('__class__'))",
        "print(df.groupby('Product').agg({'Price': '__len__'}))",
        "print(df.groupby('Product').agg(total=('Price', '_reduce')))",
        "print(df.resample if False else df.groupby('Product').transform('__class__'))",
    ],
)
def test_pandas_lookups_by_name_obey_the_attribute_rules(code):
    result = run(code)
    assert not result.ok and "is not available here" in result.error


def test_pandas_lookups_by_name_still_work_for_ordinary_names():
    result = run(
        "print(df.groupby('Product').agg(total=('Price', 'sum'))['total'].tolist(), pd.Series([1, 2]).groupby([0, 0]).transform('max').tolist())"
    )
    assert result.ok and result.output.strip() == "[3, 11] [2, 2]"


OBJECTS = [
    "df",
    "df['Price']",
    "df.groupby('Product')",
    "df.groupby('Product')['Price']",
    "df['Price'].rolling(1)",
    "df.rolling(1)",
    "df['Price'].expanding()",
    "df['Price'].ewm(span=2)",
    "df.set_index(pd.date_range('2024-01-01', periods=2, freq='D')).resample('D')",
]


@pytest.mark.parametrize("method", ["agg", "aggregate", "transform", "apply"])
@pytest.mark.parametrize("target", OBJECTS)
def test_no_pandas_object_looks_up_a_dunder_by_name(target, method):
    """Every pandas object agent code can make, every method that takes a function's name: the
    name "__class__" must never come back as the class (the route the red team used)."""
    code = f"x = {target}\ntry:\n    m = x.{method}\nexcept AttributeError:\n    m = None\n"
    result = run(code + "print('absent' if m is None else m('__class__'))")
    assert "<class" not in result.output, (target, method, result)
    assert result.output.strip() == "absent" or "is not available here" in (result.error or ""), (
        target,
        method,
        result,
    )


@pytest.mark.parametrize(
    "code, said",
    [
        ("return 1", "'return' outside function"),
        ("break", "'break' outside loop"),
        ("def f(a, a): pass", "duplicate argument"),
        ("x = 1\nyield x", "line 2: syntax error: 'yield' outside function"),
        ("def f():\n    x = 1\n    global x", "line 3: syntax error"),
    ],
)
def test_code_that_parses_but_does_not_compile_is_a_code_error_naming_the_line(code, said):
    with pytest.raises(CodeError, match=re.escape(said)):
        compile_code(code)


def test_compiler_warnings_about_agent_code_stay_out_of_the_log(capfd):
    """`1.0(x)` and invalid escapes make the compiler warn; the env's process must not print that."""
    import warnings

    from toolbench.core.sandbox import compile_code

    before = list(warnings.filters)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would raise here
        compile_code('x = 1.0(2)\ny = "\\d"')
    assert warnings.filters == before
    assert "Warning" not in capfd.readouterr().err


def test_a_dataframe_fits_the_budget_after_an_env_used_arrow():
    # Arrow's own pools reserve address space in large chunks: a process that used pyarrow before
    # forking (pandas keeps strings in Arrow where it is installed; building an env's world does)
    # must still leave run_code's code its budget for a DataFrame.
    pytest.importorskip("pyarrow", reason="pyarrow is not installed")
    from tests.conftest import run_python

    out = run_python(
        "import gymnasium as gym, pandas as pd, toolbench\n"
        "from toolbench.core.sandbox import run_code\n"
        "gym.make('toolbench/HomeSearch-v0', mode='interactive').reset(seed=0)\n"
        "r = run_code(\"v = len(pd.DataFrame({'a': ['s', 't']}))\", lambda: {'pd': pd}, lambda ns: ns['v'])\n"
        "print(r.ok, r.payload, r.error)\n"
    )
    assert out.split() == ["True", "2", "None"], out
