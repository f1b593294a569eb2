"""The sandbox for agent code: what runs, what is refused, and the budgets."""

import os
import time

import numpy as np
import pandas as pd
import pytest

from toolbench.core.sandbox import CodeError, Limits, compile_code, run_code

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
        ("getattr(df, '__class__')", "invalid attribute name"),
        ("'{0.__class__}'.format(df)", "not safe"),
        ("pd.read_csv('/etc/passwd')", "file access is not allowed"),
        ("df.to_csv('written.csv')", "file access is not allowed"),
        ("pd.io.common.os.system('echo pwned > pwned.txt')", "not allowed here: os.system"),
        ("pd.io.common.os.listdir('.')", "not allowed here: os.listdir"),
        ("pd.io.common.os.remove('x')", "not allowed here: os.remove"),
        ("np.ctypeslib.ctypes.CDLL(None)", "not allowed here: ctypes"),
        ("pd.read_csv('http://127.0.0.1:9/x.csv')", "not allowed here"),
        ("raise SystemExit(3)", "SystemExit: 3"),
    ],
)
def test_refused_while_running(code, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run(code)
    assert not result.ok and message in result.error, result.error
    assert result.payload == {"prices": [3, 11]}  # the result is still collected after an error
    assert list(tmp_path.iterdir()) == []


def test_secrets_in_the_environment_are_not_visible(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    result = run("print(dict(pd.io.common.os.environ))")
    assert result.ok and "sk-secret" not in result.output and result.output == "{}\n"


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


def test_the_parent_never_trusts_the_pipe():
    # Agent code that reaches os.write and floods every descriptor: the parent's own descriptors
    # were closed in the child, and whatever reaches the reply pipe is rejected as malformed.
    read_end, write_end = os.pipe()
    try:
        code = (
            "o = pd.io.common.os\n"
            "for fd in range(3, 64):\n"
            "    try:\n        o.write(fd, b'\\x80\\x04 not json')\n"
            "    except Exception:\n        pass"
        )
        result = run(code)
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
