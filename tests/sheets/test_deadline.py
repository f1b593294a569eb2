"""One deadline for a whole step that holds inside a single request too (``work.budget``'s seconds):
past it the emulator answers 504 DEADLINE_EXCEEDED, having changed nothing."""

from __future__ import annotations

import itertools

import gspread
import pytest

from toolbench.mock_services.sheets import work


def _status(caught: pytest.ExceptionInfo[gspread.exceptions.APIError]) -> tuple[int, str]:
    response = caught.value.response
    return response.status_code, response.json()["error"]["status"]


def test_a_write_past_the_deadline_is_refused_and_changes_nothing(ws):
    before = ws.get_all_values(value_render_option="FORMULA")
    with work.budget(10**9, seconds=-1.0), pytest.raises(gspread.exceptions.APIError) as caught:
        ws.update([[1, 2], [3, "=A1+B1"]], "A1", raw=False)
    assert _status(caught) == (504, "DEADLINE_EXCEEDED")
    assert ws.get_all_values(value_render_option="FORMULA") == before
    with work.budget(10**9, seconds=60.0):  # in time, the same write goes through
        ws.update([[1, 2], [3, "=A1+B1"]], "A1", raw=False)
    assert ws.get("A1:B2") == [["1", "2"], ["3", "3"]]


def test_a_formula_walk_cut_by_the_deadline_leaves_later_reads_right(ws, monkeypatch):
    ws.update([[1]] + [[f"=E{row}+1"] for row in range(1, 60)], "E1", raw=False)
    ticks = itertools.count()
    monkeypatch.setattr(work, "_now", lambda: float(next(ticks)))  # a clock that moves on each look
    with work.budget(10**9, seconds=20.0), pytest.raises(gspread.exceptions.APIError) as caught:
        ws.acell("E60")  # the walk down the chain of 60 formulas is stopped about 20 formulas in
    assert _status(caught) == (504, "DEADLINE_EXCEEDED")
    monkeypatch.undo()
    assert ws.acell("E60").value == "60"  # not a cycle: the cut walk left no formula half-visited


def test_the_deadline_is_checked_while_a_large_write_is_charged(ws, monkeypatch):
    ticks = itertools.count()
    monkeypatch.setattr(work, "_now", lambda: float(next(ticks)))
    rows = [[row] * 4 for row in range(500)]
    with work.budget(10**9, seconds=100.0), pytest.raises(gspread.exceptions.APIError) as caught:
        ws.update(rows, "A1")  # charged row by row, the clock read at each: out of time before row 100
    assert _status(caught) == (504, "DEADLINE_EXCEEDED")
    monkeypatch.undo()
    assert ws.acell("A100").value is None  # refused before anything was written
