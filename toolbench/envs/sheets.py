"""toolbench/GoogleSheets-v0: edit a worksheet with real gspread/pandas code against a local Sheets API."""

from __future__ import annotations

import hashlib
import io
import json
import math
import reprlib
from collections.abc import Collection
from functools import cache
from typing import Any, ClassVar

import gspread
import numpy as np
import pandas as pd
from gspread_dataframe import get_as_dataframe, set_with_dataframe
from pandas.io.json import read_json

from toolbench.core.env import ActionError, Outcome, ToolEnv
from toolbench.core.replies import code_in_reply
from toolbench.core.sandbox import CpuAccount, Limits, budgets, run_in_worker, start_worker
from toolbench.core.seeding import stable_hash
from toolbench.core.surface import library_samples
from toolbench.core.tasks import Task, fixture_file
from toolbench.core.toolcalls import ToolCallError, code_cell, code_tools
from toolbench.core.transport import (
    HostNotServed,
    HttpRequest,
    RemoteRouter,
    Router,
    request_from_data,
    response_to_data,
)
from toolbench.envs import code_env_modules
from toolbench.mock_services.http import with_state
from toolbench.mock_services.sheets import HOSTS, SheetsStore, build_spreadsheet, create_app, read_workbook, warm, work

SPREADSHEET_TITLE = "ToolBench Sheets"
MAX_REQUESTS = 5000  # API requests one action may make
MAX_STEP_BODY_BYTES = 16 * 2**20  # request bodies one action may send
MAX_EPISODE_BODY_BYTES = 64 * 2**20  # and one episode (interactive cells add up in the env's store)
MAX_STEP_WORK = 1_000_000  # the emulator's cell operations one action may cause (mock_services/sheets/work.py)
GIVEN_NAMES = frozenset({"worksheet", "sheet", "get_as_dataframe", "set_with_dataframe", "pd", "np"})
MAX_CARRIED_BYTES = 2_000_000  # variables carried between interactive cells
MAX_MISMATCHES = 20
#: The part of an answer every task shares (``shared_parts_actions``): read the sheet, keep its header.
SHARED_PARTS = "rows = worksheet.get_all_values()\nworksheet.update([rows[0]], 'A1')"

API_DOCS = """# The names your code can use:
#   worksheet: the gspread Worksheet of the task; sheet: its gspread Spreadsheet
#   get_as_dataframe(worksheet), set_with_dataframe(worksheet, df): gspread-dataframe
#   pd: pandas; np: numpy
# gspread 6 passes values first, then the range: worksheet.update([[1, 2]], "A1:B1").

# Set values in a range (raw=False parses formulas, numbers and dates as if typed).
worksheet.update(values, range_name=None, raw=True)

# Update the value of one cell (1-based row and column).
worksheet.update_cell(row, col, value)

# Read values.
worksheet.get_all_values(); worksheet.get_all_records(); worksheet.acell(label).value; worksheet.get(range_name)

# Add rows or columns.
worksheet.append_row(values); worksheet.insert_row(values, index=1); worksheet.insert_cols(values, col=1)

# Delete rows or columns (1-based, end inclusive).
worksheet.delete_rows(start_index, end_index=None); worksheet.delete_columns(start_index, end_index=None)

# Sort a range by columns: specs are (column number, "asc" | "des").
worksheet.sort(*specs, range=None)

# Merge cells, set a basic filter, format cells (a Sheets API CellFormat dict).
worksheet.merge_cells(name, merge_type="MERGE_ALL"); worksheet.set_basic_filter(name=None)
worksheet.format(ranges, format)

# Send Sheets API batchUpdate requests (e.g. a pivot table through updateCells).
sheet.batch_update(body)
"""


@cache
def _shared_app() -> Any:
    """One Sheets app per process; each env's requests name its own store (``with_state``)."""
    return create_app(None)


@cache
def workbooks() -> dict[str, list[list[Any]]]:
    """The shipped worksheets, by name (``fixtures/sheets/workbooks.json``)."""
    with open(fixture_file("sheets", "workbooks.json"), encoding="utf-8") as handle:
        return json.load(handle)


@cache
def shipped_books() -> dict[str, list[dict[str, Any]]]:
    """What each shipped task's references leave in the workbook (``fixtures/sheets/expected.json``,
    made by the generator by running them in the sandbox): task id -> per reference
    ``{"digest", "book"}``. Saves running every reference once per process."""
    try:
        with open(fixture_file("sheets", "expected.json"), encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        return {}


def reference_digest(task: Task, index: int) -> str:
    """What a reference's result depends on: its code, the worksheet's name and its rows."""
    name = task.get("question_sheet_name")
    text = json.dumps([task.references[index], name, workbooks().get(name)], sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def prompt_for(instruction: str, sheet_name: str, rows: list[list[Any]]) -> str:
    table = "\n".join("| " + " | ".join(str(v) for v in row) + " |" for row in rows)
    return f"{instruction}\n\nThe worksheet '{sheet_name}' (``worksheet``) holds:\n{table}"


def _frame_item(value: pd.DataFrame | pd.Series) -> dict[str, Any]:
    """A DataFrame or Series as JSON that reads back the same: the Table Schema keeps dtypes and
    index names ("007" stays text); frames it cannot hold (numbered or repeated columns) go as
    "split" data read back without type guessing."""
    kind = "dataframe" if isinstance(value, pd.DataFrame) else "series"
    try:
        data = value.to_json(orient="table", date_format="iso")
        if _frame_from({"kind": kind, "orient": "table", "data": data}).equals(value):
            return {"kind": kind, "orient": "table", "data": data}
    except (ValueError, TypeError, KeyError, NotImplementedError):
        pass
    item = {"kind": kind, "orient": "split", "data": value.to_json(orient="split", date_format="iso")}
    _frame_from(item)  # what does not read back is not carried (raises): the next cell would fail on it
    return item


def _frame_from(item: dict[str, Any]) -> pd.DataFrame | pd.Series:
    # read_json itself: the sandbox replaces pandas' readers (pd.read_json) in the child.
    orient = item.get("orient", "split")
    typ = "series" if item["kind"] == "series" else "frame"
    text = io.StringIO(item["data"])
    if orient == "table":
        frame = read_json(text, orient="table")
        return frame.iloc[:, 0].rename(frame.columns[0]) if typ == "series" else frame
    return read_json(text, orient="split", typ=typ, dtype=False)


def _carry(namespace: dict[str, Any], given: Collection[str]) -> dict[str, Any]:
    """The cell's variables that the next cell can have back: JSON values and DataFrames/Series."""
    carried, size = {}, 0
    for name, value in namespace.items():
        if name in given or name.startswith("_") or name == "toolbench_last_value":
            continue
        try:
            if isinstance(value, (pd.DataFrame, pd.Series)):
                item = _frame_item(value)
            else:
                json.dumps(value, allow_nan=False)  # the next cell's job is strict JSON: NaN is not carried
                item = {"kind": "json", "data": value}
        except (TypeError, ValueError, KeyError, OverflowError, NotImplementedError):
            continue  # functions, modules, gspread objects, frames that do not read back: not carried over
        size += len(json.dumps(item))
        if size > MAX_CARRIED_BYTES:
            break
        carried[name] = item
    return carried


def _restore(carried: dict[str, Any]) -> dict[str, Any]:
    return {
        name: _frame_from(item) if item["kind"] in ("dataframe", "series") else item["data"]
        for name, item in carried.items()
    }


def _shown_format(style: dict[str, Any] | None) -> dict[str, Any] | None:
    """A cell format as the sheet shows it: a number format with a pattern displays by the pattern,
    whatever its type says (NUMBER "$#,##0.00" looks like CURRENCY "$#,##0.00")."""
    if not style:
        return None
    number = style.get("numberFormat")
    if isinstance(number, dict) and number.get("pattern"):
        style = {**style, "numberFormat": {"pattern": number["pattern"]}}
    return style


def _items(book: dict[str, Any], check_format: bool) -> dict[str, Any]:
    """A workbook as comparable items: each non-empty cell's value (and format, when checked), each
    sheet's merges and basic filter, and the sheets themselves."""
    items: dict[str, Any] = {}
    for sheet in book["sheets"]:
        title = sheet["title"]
        items[f"sheet {title!r}"] = True
        for cell, data in sheet["cells"].items():
            value = None if data.get("value") == "" else data.get("value")
            style = _shown_format(data.get("format")) if check_format else None
            if value is not None or style is not None:
                items[f"{title}!{cell}"] = (value, style)
        items[f"{title}: merges"] = sorted(sheet.get("merges") or [])
        items[f"{title}: basic filter"] = sheet.get("basic_filter")
    return items


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    numbers = (int, float)
    if isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 120


def _shown(value: Any) -> str:
    """A value for a mismatch message, cut short: a cell may hold 50,000 characters."""
    return _SHORT.repr(value)


def _describe(key: str, got: Any, want: Any) -> str:
    """A mismatch: the expected value and the agent's."""
    if isinstance(got, tuple) or isinstance(want, tuple):  # a cell: (value, format)
        got, want = got or (None, None), want or (None, None)
        if not _same(got[0], want[0]):
            return f"{key}: expected {_shown(want[0])}, got {_shown(got[0])}"
        return f"{key}: expected format {_shown(want[1])}, got format {_shown(got[1])}"
    return f"{key}: expected {_shown(want)}, got {_shown(got)}"


def compare_workbooks(
    predicted: dict[str, Any], expected: dict[str, Any], initial: dict[str, Any], check_format: bool
) -> tuple[float, list[str]]:
    """(score, mismatch messages). Formulas are compared by their results, as ToolBench compared
    data frames. The score is the share of matching items among those the task or the answer
    changed, so doing nothing scores 0; any mismatch anywhere makes the answer a failure."""
    mine, theirs, start = (_items(book, check_format) for book in (predicted, expected, initial))
    relevant = matched = 0
    problems = []
    for key in sorted(mine.keys() | theirs.keys()):
        got, want, was = mine.get(key), theirs.get(key), start.get(key)
        same = _same(got, want)
        if not same:
            problems.append(_describe(key, got, want))
        if not (_same(got, was) and _same(want, was)):
            relevant += 1
            matched += same
    return (matched / relevant if relevant else 1.0), problems


def metadata_url(book_id: str) -> str:
    """The URL gspread's ``open_by_key`` and ``worksheet`` read the spreadsheet's metadata from."""
    return f"{gspread.urls.SPREADSHEET_URL % book_id}?includeGridData=false"


def code_names(
    call: Any, book_id: str, sheet_name: str, carried: dict[str, Any], ahead: dict[str, Any]
) -> dict[str, Any]:
    """In the worker's child: the names agent code gets. gspread is real; its HTTP session sends
    every request to the env, whose emulator answers it. ``ahead`` holds the env's answers to the
    set-up's own requests (the metadata reads), so building the names costs no round trip."""
    router = RemoteRouter(lambda data: call("http", data), ahead)
    client = gspread.Client(auth=None, session=router.session())
    spreadsheet = client.open_by_key(book_id)
    worksheet = spreadsheet.worksheet(sheet_name)
    router.ahead.clear()  # the code's own reads see the workbook as it is then
    names = {
        "worksheet": worksheet,
        "sheet": spreadsheet,
        "get_as_dataframe": get_as_dataframe,
        "set_with_dataframe": set_with_dataframe,
        "pd": pd,
        "np": np,
    }
    return {**_restore(carried), **names}


#: Our own calls, of the kinds tasks' code makes most, run once in the clean worker before it forks.
_WARM_UP = """
worksheet.update([["Name", "Count"], ["a", 1], ["b", 2]], "A1")
worksheet.update_cell(2, 2, 3)
worksheet.insert_row(["c", 4], 2)
worksheet.append_row(["d", 5])
worksheet.insert_cols([["x", "y"]], 3)
worksheet.delete_columns(3)
worksheet.sort((2, "des"), range="A2:B5")
worksheet.format("A1:B1", {"textFormat": {"bold": True}})
worksheet.merge_cells("D1:E1")
worksheet.set_basic_filter("A1:B5")
frame = get_as_dataframe(worksheet, usecols=[0, 1], nrows=5)
frame["Count"] = pd.to_numeric(frame["Count"]).round(1)
set_with_dataframe(worksheet, frame[frame["Count"] > np.mean(frame["Count"])])
sheet.batch_update({"requests": [{"repeatCell": {"range": {"sheetId": worksheet.id}, "cell": {}, "fields": "note"}}]})
worksheet.delete_rows(2)
worksheet.clear()
"""


def _throwaway_names(rows: list[list[Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The names agent code gets, against a throwaway emulator holding one made-up sheet (no task's),
    and the arguments that built them."""
    store = SheetsStore(seed=0)
    book = build_spreadsheet(store, {"title": "Warm-up", "sheets": [{"title": "Sheet1", "rows": rows}]})
    router = Router({host: create_app(store) for host in HOSTS})

    def call(kind: str, data: Any) -> Any:
        sent = json.loads(json.dumps(data))  # the same encoding a run's messages get
        return json.loads(json.dumps(response_to_data(router.send(request_from_data(sent)))))

    url = metadata_url(book.spreadsheet_id)
    ahead = {f"GET {url}": response_to_data(router.send(HttpRequest("GET", url)))}
    arguments = {"call": call, "book_id": book.spreadsheet_id, "sheet_name": "Sheet1", "carried": {}, "ahead": ahead}
    return code_names(**arguments), arguments


def warm_worker() -> None:
    """In the clean worker, before it forks: build the names and run ``_WARM_UP`` once against a
    throwaway emulator holding a made-up sheet. Every child then starts with what first calls fill
    (requests' and gspread's lazy imports and caches, pandas' first-use work) already filled by its
    parent, instead of filling it again, page by copied page, on every run (3 ms of 12 per episode)."""
    names, arguments = _throwaway_names([["Name"]])
    exec(_WARM_UP, {"__builtins__": __builtins__, **names})  # our own code, not an agent's
    _carry(names, GIVEN_NAMES)
    _WARM_CHILD_ARGS.update(arguments)


def surface_roots() -> dict[str, Any]:
    """The names agent code gets, and values of each kind their calls return (cells, value ranges,
    worksheets, frames), for the walk of what agent code can reach (``core.surface``)."""
    names, _ = _throwaway_names([["Name", "Count"], ["a", 1], ["b", 2]])
    worksheet, spreadsheet = names["worksheet"], names["sheet"]
    samples = {
        "cell": worksheet.acell("A1"),
        "value range": worksheet.get("A1:B2"),
        "worksheets": spreadsheet.worksheets()[0],
        "frame": names["get_as_dataframe"](worksheet),
        **library_samples(np, pd),
    }
    return {**names, **samples}


_WARM_CHILD_ARGS: dict[str, Any] = {}


def warm_child() -> None:
    """In a child of the clean worker, while it waits for its run: build the names once from the
    warm-up's answers (no request is sent). The pages they touch are copied now, off the step's path."""
    if _WARM_CHILD_ARGS:
        code_names(**_WARM_CHILD_ARGS)


def code_collect(namespace: dict[str, Any], interactive: bool) -> dict[str, Any]:
    """In the worker's child, after the code: the variables the next interactive cell gets back."""
    return {"carried": _carry(namespace, GIVEN_NAMES) if interactive else {}}


class GoogleSheetsEnv(ToolEnv):
    """Edit a worksheet with gspread and pandas code; a local Sheets API answers the real client.

    ## Description
    The ToolBench Google Sheets task (Xu et al. 2023): the agent writes Python that uses
    ``worksheet``, ``sheet``, ``get_as_dataframe``, ``set_with_dataframe``, ``pd`` and ``np`` to
    carry out an instruction (update cells, add formulas, sort, insert and delete rows and
    columns, merge, filter, format, build a pivot table, transform with pandas). The code calls
    the real ``gspread`` client; its HTTP requests are answered in-process by a Sheets API v4 and
    Drive v3 emulator (formulas evaluated with the ``formulas`` library).

    ## Action Space
    Python code (``UnicodeText``), run in the core sandbox: no imports, no names starting with
    ``_``, no files, network or processes, a time and a memory budget (``time_limit``,
    ``memory_limit``). It runs in the clean worker, and every API request its gspread client makes
    is answered by the env's own emulator, so the code can only change the workbook through the API.
    ``mode="program"``: the whole answer.
    ``mode="interactive"``: one code cell per step (values and DataFrames carry over between
    cells, functions do not); the action ``submit`` ends the episode. Interactive actions may also
    be the JSON tool calls of ``info["tools"]``: ``{"name": "run_code", "arguments": {"code":
    ...}}`` and ``{"name": "submit"}``.

    ## Observation Space
    Text: the instruction with the worksheet as a table; after a step, what the code printed (and,
    in interactive mode, the value of its last expression) or its error.

    ## Rewards
    Each reference runs on a fresh copy of the workbook (for the shipped tasks, its result is
    read from ``fixtures/sheets/expected.json``, which the generator made that way); every cell's
    value (formulas by their results) and, where the task checks format, its format are compared,
    with merges, filters and the set of sheets. ``score`` is the share of matching items,
    ``success`` is all of them matching; ``info["mismatch_count"]`` is how many items differ (which
    ones, with the expected and the agent's values, only with ``diagnostics=True``).

    ## Starting State
    A spreadsheet holding the task's worksheet (1000 x 26, as the original harness made it); a
    task from the split (``test``: 70, ``demo``: 10, ``train``: 1,000 of the test set's templates in
    more wordings and on more worksheets, ``unseen``: 100 of held-out templates and worksheets)
    drawn by the seeded RNG or named by ``options={"task_id": ...}``.

    ## Episode End
    ``program``: after one action. ``interactive``: at ``submit`` or ``max_steps`` (default 20).

    ## Arguments
    ``gym.make("toolbench/GoogleSheets-v0", split="test", mode="program", render_mode=None,
    max_steps=None, task_file=None, time_limit=10, memory_limit=1024, diagnostics=False)``:
    ``time_limit`` (seconds) and ``memory_limit`` (MB) bound each step's code; ``diagnostics=True``
    adds ``info["mismatches"]``, the differing items with their expected values (for run records,
    not for agents).
    """

    metric_names = ("cell_accuracy",)
    finishing_action = "submit"
    input_fields = ("question_sheet_name",)  # the worksheet the code gets, named in the prompt
    score_details = ("mismatch_count",)
    limits: ClassVar[Limits] = Limits(seconds=10.0, memory_mb=1024, output_chars=20_000)

    def __init__(self, time_limit: float | None = None, memory_limit: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.limits = budgets(self.limits, time_limit, memory_limit)
        warm()  # the formula engine's one-time start-up, paid here rather than in every sandboxed run
        self._store = SheetsStore(seed=0)
        app = with_state(_shared_app(), self._store)
        self._router = Router({host: app for host in HOSTS})
        self._initial: dict[str, tuple[dict[str, Any], str]] = {}
        self._book_id = ""
        self._carried: dict[str, Any] = {}
        self._episode_sent = 0  # request body bytes this episode's code has sent
        self._cpu = CpuAccount()  # this env's (a served session's) recent CPU use in the sandbox
        self._reference_books: dict[str, dict[str, Any] | None] = {}
        self._shipped_books = shipped_books()

    # ------------------------------------------------------------------ workbook set-up
    def _fresh(self, task: Task) -> tuple[dict[str, Any], str]:
        """The store snapshot every run of ``task`` starts from, and the spreadsheet's id."""
        if task.id not in self._initial:
            name = task.get("question_sheet_name")
            if name not in workbooks():
                raise KeyError(f"no worksheet named {name!r}; the shipped ones are {', '.join(workbooks())}")
            store = SheetsStore(seed=0)
            book = build_spreadsheet(
                store,
                {
                    "title": SPREADSHEET_TITLE,
                    "sheets": [{"title": name, "rows": workbooks()[name], "row_count": 1000, "column_count": 26}],
                },
            )
            self._initial[task.id] = (store.snapshot(), book.spreadsheet_id)
        return self._initial[task.id]

    def _read(self) -> dict[str, Any]:
        """The workbook as scoring sees it (empty if the code deleted the spreadsheet)."""
        try:
            with work.budget(MAX_STEP_WORK, self.limits.seconds):
                return read_workbook(self._store, self._book_id)
        except Exception:  # the emulator's own "not found" and similar: nothing left to compare
            return {"sheets": []}

    # ------------------------------------------------------------------ episode
    def _begin(self, task: Task) -> str:
        start_worker(code_env_modules())
        snapshot, self._book_id = self._fresh(task)
        self._store.restore(snapshot)
        self._carried = {}
        self._episode_sent = 0
        return task.prompt

    def _run(self, code: str, interactive: bool, seed: int) -> tuple[Any, int]:
        """Run agent code in the clean worker; its gspread requests are served here, by the env's
        emulator, as they come. Returns the sandbox result and the number of requests served."""
        assert self.task is not None
        served, sent = 0, 0

        def serve(kind: str, payload: Any) -> Any:
            nonlocal served, sent
            if kind != "http":
                raise ValueError(f"unknown call {kind!r}")
            served += 1
            if served > MAX_REQUESTS:
                raise ValueError(f"the code made more than {MAX_REQUESTS} API requests in one step")
            request = request_from_data(payload)
            sent += len(request.body)
            self._episode_sent += len(request.body)
            if sent > MAX_STEP_BODY_BYTES:  # what a step may write bounds what the env's store may grow by
                raise ValueError(
                    f"the code sent more than {MAX_STEP_BODY_BYTES // 2**20} MB of request bodies in one step"
                )
            if self._episode_sent > MAX_EPISODE_BODY_BYTES:
                raise ValueError(
                    f"the code sent more than {MAX_EPISODE_BODY_BYTES // 2**20} MB of request bodies in one episode"
                )
            try:
                response = self._router.send(request)
            except HostNotServed as exc:
                return {"unserved": str(exc)}
            return response_to_data(response)

        # What the emulator does for this code, in this process: bounded in work and by the step's
        # wall-clock deadline, which the sandbox holds the code's own time to as well.
        with work.budget(MAX_STEP_WORK, self.limits.seconds):
            url = metadata_url(self._book_id)
            metadata = response_to_data(self._router.send(HttpRequest("GET", url)))
            result = run_in_worker(
                code,
                names="toolbench.envs.sheets:code_names",
                collect="toolbench.envs.sheets:code_collect",
                serve=serve,
                limits=self.limits,
                echo_last_expression=interactive,
                seed=seed,
                names_args={"book_id": self._book_id, "sheet_name": self.task.get("question_sheet_name"),
                            "carried": self._carried, "ahead": {f"GET {url}": metadata}},
                collect_args={"interactive": interactive},
                account=self._cpu,
            )  # fmt: skip
        payload = result.payload if isinstance(result.payload, dict) else {}
        if interactive and isinstance(payload.get("carried"), dict):
            self._carried = payload["carried"]
        return result, served

    def _act(self, action: str) -> Outcome:
        assert self.task is not None
        interactive = self.mode == "interactive"
        code = action
        if interactive:
            try:
                code = code_cell(action, self.finishing_action)
            except ToolCallError as exc:
                raise ActionError(str(exc)) from None
            if code is None:
                return self._scored("Submitted.", executable=True, error=None)
        result, _ = self._run(code_in_reply(code), interactive, seed=stable_hash(self.task.id, self._steps))
        observation = result.output.rstrip() or ("(no output)" if result.ok else "")
        if result.error:
            observation = (observation + "\n" if observation else "") + f"Error: {result.error}"
        if interactive:
            return Outcome(observation, done=False, executable=result.ok, error=result.error)
        if not result.ok:
            return Outcome(observation, done=True, executable=False, error=result.error, metrics={"cell_accuracy": 0.0})
        return self._scored(observation, executable=True, error=None)

    def _on_truncation(self, last: Outcome) -> Outcome | None:
        return self._scored(last.observation, last.executable, last.error)

    # ------------------------------------------------------------------ scoring
    def _reference_book(self, task: Task, index: int) -> dict[str, Any] | None:
        key = f"{task.id}#{index}"
        shipped = self._shipped_books.get(task.id, [])
        # A shipped result counts only for the task as shipped (same code, worksheet and rows); the
        # digest is checked once, on the task's first scoring, not on every one.
        known = key in self._reference_books
        if not known and index < len(shipped) and shipped[index]["digest"] == reference_digest(task, index):
            self._reference_books[key] = shipped[index]["book"]
        if key not in self._reference_books:
            saved_store, saved_carried, saved_id = self._store.snapshot(), self._carried, self._book_id
            saved_sent = self._episode_sent  # a reference's requests are not the agent's
            snapshot, self._book_id = self._fresh(task)
            self._store.restore(snapshot)
            self._carried = {}  # a reference never sees the agent's variables
            book: dict[str, Any] | None = None
            try:
                result, _ = self._run(task.references[index], interactive=False, seed=stable_hash(task.id, index))
                book = self._read() if result.ok else None
                # A reference that fails fails every time; one that ran out of time may not next time.
                if book is not None or not result.timed_out:
                    self._reference_books[key] = book
            except ActionError:
                pass  # a malformed reply: try again next time
            finally:
                self._store.restore(saved_store)
                self._carried, self._book_id, self._episode_sent = saved_carried, saved_id, saved_sent
            return book
        return self._reference_books[key]

    def _scored(self, observation: str, executable: bool, error: str | None) -> Outcome:
        assert self.task is not None
        mine = self._read()
        check_format = bool(self.task.get("check_format"))
        best: tuple[float, list[str]] = (-1.0, ["no reference of this task could be run"])
        for index in range(len(self.task.references)):
            expected = self._reference_book(self.task, index)
            if expected is not None:
                best = max(
                    best,
                    compare_workbooks(mine, expected, self._initial_book(self.task), check_format),
                    key=lambda pair: (not pair[1], pair[0]),
                )
        accuracy, problems = max(best[0], 0.0), best[1]
        success = executable and not problems
        return Outcome(
            observation,
            done=True,
            score=1.0 if success else accuracy,
            success=success,
            executable=executable,
            error=error,
            metrics=self._mismatch_metrics(accuracy, problems),
        )

    def _mismatch_metrics(self, accuracy: float, problems: list[str]) -> dict[str, Any]:
        """How many items differ; which ones only with diagnostics: cell names alone let a search
        that never reads the instruction find the answer, one cell at a time."""
        metrics: dict[str, Any] = {"cell_accuracy": accuracy, "mismatch_count": len(problems)}
        if self.diagnostics:
            metrics["mismatches"] = problems[:MAX_MISMATCHES]
        return metrics

    def _initial_book(self, task: Task) -> dict[str, Any]:
        key = f"{task.id}#initial"
        if key not in self._reference_books:
            saved, saved_id = self._store.snapshot(), self._book_id
            snapshot, self._book_id = self._fresh(task)
            self._store.restore(snapshot)
            self._reference_books[key] = self._read()
            self._store.restore(saved)
            self._book_id = saved_id
        return self._reference_books[key]

    # ------------------------------------------------------------------ contract hooks
    @classmethod
    def missing_fields(cls, task: Task) -> list[str]:
        """Also the worksheet the task starts from."""
        return super().missing_fields(task) + ([] if task.get("question_sheet_name") else ["question_sheet_name"])

    def api_docs(self) -> str:
        return API_DOCS

    def tools(self) -> list[dict[str, Any]] | None:
        if self.mode == "program":
            return None
        return code_tools("submit", "Submit the worksheet as it is now for scoring; this ends the episode.")

    def oracle_actions(self, task: Task) -> list[str]:
        if self.mode == "program":
            return super().oracle_actions(task)
        return [task.references[0], "submit"]

    def shared_parts_actions(self, task: Task) -> list[str] | None:
        """What every task's code shares: it opens the worksheet, reads it, and writes the header
        row back. Scoring counts only the items the task or the answer changed, so this earns 0."""
        code = SHARED_PARTS
        return [code] if self.mode == "program" else [code, self.finishing_action]

    def _get_backend_state(self) -> Any:
        return {
            "store": self._store.snapshot(),
            "carried": self._carried,
            "book_id": self._book_id,
            "sent": self._episode_sent,
        }

    def _set_backend_state(self, state: Any) -> None:
        self._store.restore(state["store"])
        self._carried = dict(state["carried"])
        self._book_id = state["book_id"]
        self._episode_sent = state.get("sent", 0)
