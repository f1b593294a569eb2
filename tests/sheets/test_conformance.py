"""gspread's own tests and Google's recorded traffic, against the emulator.

Both run from the suite in ``../shared/conformance/gspread`` (or ``$TOOLBENCH_CONFORMANCE``) and
skip, with the reason, where it is absent. The live run is a pytest subprocess of about 5 seconds;
the replay of the 2,116 recorded requests takes about 3.
"""

from __future__ import annotations

import json

import pytest

from conformance import gspread_missing, gspread_suite
from conformance.gspread_live import EXPECTED_TESTS, run_live
from conformance.gspread_replay import STRUCTURE_TARGET, run_replay


def _recorded_interactions() -> int:
    cassettes = (gspread_suite() / "tests" / "cassettes").glob("*.json")
    return sum(len(json.loads(path.read_text(encoding="utf-8"))["interactions"]) for path in cassettes)


@pytest.mark.skipif(gspread_missing(live=False) is not None, reason=str(gspread_missing(live=False)))
def test_replayed_cassettes_match_google():
    report = run_replay()
    assert report.total == _recorded_interactions()
    assert report.count("status_equal") == report.total, report.render()
    assert report.count("structure_equal") >= STRUCTURE_TARGET * report.total, report.render()
    assert report.ok()


@pytest.mark.skipif(gspread_missing(live=True) is not None, reason=str(gspread_missing(live=True)))
def test_gspread_suite_passes_live_against_the_emulator():
    report = run_live()
    assert len(report.results) == EXPECTED_TESTS, report.render()
    assert not report.failures, report.render()
    assert report.passed == EXPECTED_TESTS
