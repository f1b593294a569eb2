"""Conformance runs: other projects' own test suites, run against our mock services.

The suites are not part of this project. They live next to it, in ``../shared/conformance`` seen
from the project root (or wherever ``TOOLBENCH_CONFORMANCE`` points), and every run here skips with
a reason when its suite, or a package it needs, is absent.

``python -m conformance`` runs gspread's own tests live against the Sheets emulator
(``conformance.gspread_live``) and replays gspread's recorded Google traffic against it
(``conformance.gspread_replay``), then prints both reports.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

#: The environment variable naming the folder that holds the suites (``gspread/`` inside it).
ENV_VAR = "TOOLBENCH_CONFORMANCE"


def project_root() -> Path:
    """The project's root: the folder holding this package."""
    return Path(__file__).resolve().parent.parent


def conformance_root() -> Path:
    """Where the suites are: ``$TOOLBENCH_CONFORMANCE``, else ``../shared/conformance`` from the project root."""
    override = os.environ.get(ENV_VAR)
    if override:
        return Path(override).expanduser().resolve()
    return (project_root().parent / "shared" / "conformance").resolve()


def gspread_suite() -> Path:
    """The gspread suite's folder (it holds ``tests/`` with ``conftest.py`` and ``cassettes/``)."""
    return conformance_root() / "gspread"


def gspread_missing(live: bool = True) -> str | None:
    """Why the gspread suite cannot run here, or None when it can. The replay reads the cassettes
    only; the live run also needs vcrpy, which the suite's ``conftest.py`` imports."""
    suite = gspread_suite()
    if not (suite / "tests" / "conftest.py").is_file():
        return f"gspread conformance suite not found at {suite} (set {ENV_VAR} to the folder holding gspread/)"
    if not (suite / "tests" / "cassettes").is_dir():
        return f"gspread conformance suite at {suite} has no tests/cassettes folder"
    if live and not _installed("vcr"):
        return "vcrpy is not installed (the suite's conftest.py imports it): pip install vcrpy"
    return None


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken install, or a module set to None in sys.modules
        return False
