"""Shared test helpers."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import toolbench

ROOT = Path(__file__).resolve().parents[1]
REFDATA = ROOT.parent / "shared" / "refdata"
ENV_IDS = [spec.env_id for spec in toolbench.TASKS]
#: The slow tests, by node id (a parametrized test's id without its parameters marks all of them, a file's
#: path every test in it); they get the ``slow`` mark here, so ``make test-fast`` (``-m 'not slow'``)
#: leaves them out.
SLOW_TESTS = Path(__file__).with_name("slow_tests.txt")


def slow_test_ids(path: Path = SLOW_TESTS) -> set[str]:
    """The node ids ``path`` lists, one a line (``#`` starts a comment)."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return {line for line in lines if line}


@pytest.hookimpl(tryfirst=True)  # before pytest's own hook deselects by mark
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    slow = slow_test_ids()
    for item in items:
        if not slow.isdisjoint((item.nodeid, item.nodeid.split("[", 1)[0], item.nodeid.split("::", 1)[0])):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def refdata() -> Path:
    """``../shared/refdata``; tests that need it skip where it is absent."""
    if not REFDATA.is_dir():
        pytest.skip(f"reference data not found at {REFDATA}")
    return REFDATA


@pytest.fixture
def curl_binary() -> str:
    path = shutil.which("curl")
    if path is None:
        pytest.skip("the curl binary is not installed")
    return path


def readme_examples(refdata: Path, summary: str) -> list[tuple[str, str]]:
    """(task text, program) pairs from the examples of one task in the upstream ToolBench README."""
    text = (refdata / "sambanova_toolbench" / "README.md").read_text(encoding="utf-8")
    section = text.split(f"<summary>{summary}</summary>", 1)[1].split("</details>", 1)[0]
    examples = section.split("- Examples", 1)[1].strip().strip("`").strip()
    pairs = []
    for block in examples.split("\n\n"):
        lines = [line.strip() for line in block.strip().splitlines()]
        if "Actions:" not in lines:
            continue
        split = lines.index("Actions:")
        prompt = " ".join(lines[:split]).removeprefix("Task: ")
        pairs.append((prompt, "\n".join(line for line in lines[split + 1 :] if line and not line.startswith("`"))))
    return pairs


def run_python(code: str, env_overrides: dict[str, str] | None = None, timeout: float = 120) -> str:
    """Run ``code`` in a fresh interpreter (for cross-process checks) and return its stdout."""
    env = {**os.environ, **(env_overrides or {})}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    return result.stdout
