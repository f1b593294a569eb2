"""A pytest plugin (``-p conformance.gspread_plugin``) that runs gspread's own tests against the emulator.

Only the suite's ``client`` fixture changes: instead of a client whose traffic VCR answers from
cassettes, it is an unmodified ``gspread.Client`` talking over HTTP to the Sheets emulator, served
on a loopback port for the whole session (one emulator is one Google account, as the suite's
account was). Everything else runs as written. Two shims keep it so:

- pytest-vcr is not loaded (``-p no:vcr`` on the command line), so no cassette is replayed or
  recorded; this plugin declares the ``vcr`` mark the tests carry.
- pytest 9 refuses a mark on a fixture function, which the suite has once (``worksheet_test.py``,
  ``reset_sheet``); pytest 8 ignored such marks with a warning. The mark is dropped the same way,
  so the suite collects on either version.

The client uses gspread's plain ``HTTPClient`` where the suite used a ``BackOffHTTPClient``
subclass: back-off only matters on 408/429/5xx answers, where retrying a deterministic emulator
would only wait minutes for the same answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

import gspread
import pytest

from conformance.gspread_world import new_store
from toolbench.core.transport import ServedApp
from toolbench.mock_services.sheets import create_app, served_client


def _tolerate_marked_fixtures() -> None:
    """Let ``@pytest.fixture`` accept a function carrying marks, dropping them as pytest 8 did."""
    from _pytest.fixtures import FixtureFunctionMarker

    original = FixtureFunctionMarker.__call__
    if getattr(original, "_drops_marks", False):
        return

    def call(self: Any, function: Any) -> Any:
        if hasattr(function, "pytestmark"):
            del function.pytestmark  # a mark on a fixture never had an effect
        return original(self, function)

    call._drops_marks = True  # type: ignore[attr-defined]
    FixtureFunctionMarker.__call__ = call  # type: ignore[method-assign]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "vcr: the test replays a VCR cassette (not here: it runs live)")
    _tolerate_marked_fixtures()


@pytest.fixture(scope="session", name="client")
def emulator_client() -> Iterator[gspread.Client]:
    """A real gspread client talking HTTP to a fresh emulator served on loopback."""
    with ServedApp(create_app(new_store())) as served:
        yield served_client(served.url)


def _is_suite_conftest(plugin: object) -> bool:
    return (
        isinstance(plugin, ModuleType)
        and (getattr(plugin, "__file__", None) or "").endswith("conftest.py")
        and hasattr(plugin, "GspreadTest")
        and hasattr(plugin, "client")
    )


@pytest.hookimpl(tryfirst=True)
def pytest_plugin_registered(plugin: object, manager: Any) -> None:
    """Swap the suite's ``client`` fixture for ours before pytest reads the conftest's fixtures:
    a conftest's fixture always wins over a plugin's of the same name, so defining ours is not enough."""
    if _is_suite_conftest(plugin):
        plugin.client = emulator_client  # type: ignore[attr-defined]
