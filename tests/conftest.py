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


def run_python(code: str, env_overrides: dict[str, str] | None = None, timeout: float = 120) -> str:
    """Run ``code`` in a fresh interpreter (for cross-process checks) and return its stdout."""
    env = {**os.environ, **(env_overrides or {})}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
    return result.stdout
