"""toolbench/GoogleSheets-v0: oracle, equivalent and wrong answers, formats, interactive cells, hostile code."""

import json
import time

import gymnasium as gym
import pytest

import toolbench
from tests.episodes import play
from toolbench.core.sandbox import Limits

ENV_ID = "toolbench/GoogleSheets-v0"


def first(category, check_format=None):
    return next(
        t
        for t in toolbench.load_tasks("GoogleSheets")
        if t.category == category and (check_format is None or t.get("check_format") == check_format)
    )


@pytest.mark.parametrize("mode", ["program", "interactive"])
def test_oracle_solves_every_task(mode):
    env = gym.make(ENV_ID, mode=mode)
    tasks = toolbench.load_tasks("GoogleSheets")
    assert len(tasks) == 70 and len({t.category for t in tasks}) == 15
    for task in tasks:
        _, reward, terminated, _, info = play(env, task.id, env.unwrapped.oracle_actions(task))
        assert terminated and info["success"] and reward == 1.0, (task.id, info)


def test_equivalent_answers_succeed():
    env = gym.make(ENV_ID)
    task = first("update_cell")
    row, col, value = (part.strip() for part in task.references[0].split("(", 1)[1].rstrip(")").split(","))
    letter = chr(ord("A") + int(col) - 1)
    for answer in [
        f"worksheet.update([[{value}]], '{letter}{row}')",
        f"worksheet.update_acell('{letter}{row}', {value})",
        f"df = get_as_dataframe(worksheet)\ndf.iloc[{int(row) - 2}, {int(col) - 1}] = {value}\n"
        "set_with_dataframe(worksheet, df)",
        f"```python\nworksheet.update(range_name='{letter}{row}', values=[['{value}']], raw=False)\n```",
    ]:
        _, reward, _, _, info = play(env, task.id, [answer])
        assert info["success"] and reward == 1.0, (answer, info)
    total = first("formula_total")  # a formula and the number it computes are equal answers
    _, _, _, _, info = play(env, total.id, [total.references[0]])
    assert info["success"]


def test_one_cell_changed_fails_and_run_records_say_where():
    env = gym.make(ENV_ID)
    task = first("update_cell")
    wrong = task.references[0].rsplit(",", 1)[0] + ", 1)"
    _, reward, _, _, info = play(env, task.id, [wrong])
    assert not info["success"] and info["executable"] and reward == 0.0  # the one changed cell is wrong
    # How many, not where: cell names alone let a search that never reads the instruction find the answer.
    assert info["mismatch_count"] == 1 and "mismatches" not in info
    diagnosing = gym.make(ENV_ID, diagnostics=True)
    _, _, _, _, info = play(diagnosing, task.id, [wrong])
    (mismatch,) = info["mismatches"]
    assert ": expected " in mismatch and mismatch.endswith(", got 1")
    _, reward, _, _, info = play(env, task.id, [""])  # doing nothing earns nothing
    assert reward == 0.0 and info["cell_accuracy"] == 0.0


def test_a_dropped_format_fails_where_format_is_checked():
    env = gym.make(ENV_ID, diagnostics=True)
    task = first("format", check_format=True)
    _, _, _, _, info = play(env, task.id, ["worksheet.update_cell(1, 1, worksheet.acell('A1').value)"])
    assert not info["success"] and any("format" in m for m in info["mismatches"])
    assert play(env, task.id, [task.references[0]])[4]["success"]


def test_interactive_cells_carry_values_and_dataframes():
    env = gym.make(ENV_ID, mode="interactive")
    task = first("pandas")
    env.reset(options={"task_id": task.id})
    obs, reward, terminated, _, info = env.step("df = get_as_dataframe(worksheet)\nlen(df)")
    assert not terminated and obs.strip().isdigit()
    rows = int(obs)
    obs, *_ = env.step("n = len(df) * 2\nn")
    assert obs == str(2 * rows)
    obs, *_ = env.step("print(isinstance(n, int), df.shape[0] == n // 2)")
    assert obs == "True True"
    obs, *_ = env.step("undefined_name")
    assert obs.startswith("Error:") and "NameError" in obs
    obs, reward, terminated, _, info = env.step("submit")
    assert terminated and not info["success"] and reward < 1.0  # nothing was changed yet


def test_a_value_json_cannot_carry_is_left_behind_not_a_broken_session():
    env = gym.make(ENV_ID, mode="interactive")
    env.reset(options={"task_id": first("pandas").id})
    obs, *_ = env.step("x = float('nan')\ny = [float('inf')]\nz = 3\nprint('set')")
    assert obs == "set"
    obs, _, _, _, info = env.step("print(z)")
    assert obs == "3" and info["error"] is None
    obs, *_ = env.step("x")
    assert "NameError" in obs  # not carried, like a function or a module


def test_a_number_format_is_compared_as_it_shows():
    env = gym.make(ENV_ID)
    task = next(t for t in toolbench.load_tasks("GoogleSheets") if "'CURRENCY'" in t.references[0])
    same_look = task.references[0].replace("'CURRENCY'", "'NUMBER'")
    assert play(env, task.id, [same_look])[4]["success"]
    other_pattern = task.references[0].replace("$#,##0.00", "#,##0.0")
    assert not play(env, task.id, [other_pattern])[4]["success"]


def test_carried_dataframes_keep_their_types_and_names():
    env = gym.make(ENV_ID, mode="interactive")
    env.reset(options={"task_id": first("pandas").id})
    env.step(
        "codes = pd.DataFrame({'code': ['007', '010']})\n"
        "keyed = pd.DataFrame({'v': [1, 2]}, index=pd.Index(['a', 'b'], name='key'))\n"
        "price = pd.Series([1.5, 2.5], name='price')\n"
        "numbered = pd.DataFrame([[1, 2]], columns=[0, 1])"
    )
    obs, *_ = env.step(
        "print(codes['code'].tolist(), keyed.index.name, price.name, price.tolist(), numbered.columns.tolist())"
    )
    assert obs == "['007', '010'] key price [1.5, 2.5] [0, 1]"


def test_mismatch_messages_stay_short():
    env = gym.make(ENV_ID, diagnostics=True)
    task = first("update_cell")
    *_, info = play(env, task.id, ["worksheet.update([['x' * 40000] * 3] * 20, 'A1')"])
    assert info["mismatches"] and all(len(message) < 400 for message in info["mismatches"])


def test_random_numbers_in_code_are_the_same_in_every_process():
    code = "worksheet.update_cell(2, 1, float(np.random.rand()))\nprint(worksheet.acell('A2').value)"
    task = first("update_cell")
    seen = {play(gym.make(ENV_ID), task.id, [code])[0] for _ in range(2)}
    assert len(seen) == 1 and float(seen.pop()) < 1.0


def test_references_do_not_see_the_agents_variables():
    env = gym.make(ENV_ID, mode="interactive")  # a fresh env: references run at the first submit
    task = next(t for t in toolbench.load_tasks("GoogleSheets") if "range(" in t.references[0])
    _, _, _, _, info = play(env, task.id, [task.references[0], "range = 0", "submit"])
    assert info["success"], info


def test_code_cannot_rewrite_the_log_of_its_requests():
    env = gym.make(ENV_ID)
    task = first("update_cell")
    router = "worksheet.client.session.adapters['https://'].router"
    obs, reward, _, _, info = play(env, task.id, [f"{task.references[0]}\n{router}._recorded.clear()"])
    assert not info["executable"] and "_recorded" in obs
    code = f"{task.references[0]}\ntry:\n    {router}.recorded.clear()\nexcept AttributeError:\n    print('refused')"
    obs, reward, _, _, info = play(env, task.id, [code])
    assert obs.startswith("refused") and info["success"]  # the change was applied all the same


def test_lone_surrogates_in_output_become_escapes():
    env = gym.make(ENV_ID, mode="interactive", render_mode="ansi")
    env.reset(options={"task_id": first("update_cell").id})
    obs, *_ = env.step("print('a\\ud800b')\nraise ValueError('\\udfff')")
    assert obs.startswith("a\\ud800b") and "ValueError: \\udfff" in obs
    _, _, _, _, info = env.step("raise ValueError('\\udfff')")
    json.dumps(info, ensure_ascii=False).encode("utf-8")  # would raise on a lone surrogate
    env.render().encode("utf-8")


def test_a_failed_program_is_not_executable():
    env = gym.make(ENV_ID)
    task = first("update_cell")
    obs, reward, _, _, info = play(env, task.id, ["worksheet.update('A2', 'Hello world')"])  # gspread 5's order
    assert reward == 0.0 and not info["executable"] and "APIError" in info["error"]


HOSTILE = [
    "import os",
    "__import__('os').system('touch pwned')",
    "().__class__.__subclasses__()",
    "open('pwned', 'w')",
    "eval('1 + 1')",
    "while True:\n    pass",
    "x = bytearray(10 * 2**30)",
    "worksheet.append_rows([['x'] * 20 for _ in range(20000)])",
    "worksheet.resize(rows=10**7, cols=26)",
    "df = get_as_dataframe(worksheet)\ndf.to_csv('pwned.csv')",
    "pd.io.common.os.system('touch pwned')",
]


@pytest.mark.parametrize("code", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_code(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = gym.make(ENV_ID, disable_env_checker=True)
    env.unwrapped.limits = Limits(seconds=3, memory_mb=512)
    task = first("update_cell")
    obs, reward, terminated, _, info = play(env, task.id, [code])
    assert terminated and reward == 0.0 and not info["executable"] and "Error" in obs
    assert list(tmp_path.iterdir()) == []
    assert play(env, task.id, [task.references[0]])[1] == 1.0  # the next episode is clean


def test_original_record_shape(tmp_path):
    record = {
        "prompt": "Set the Price of Figs to 4.5",
        "completion": ["worksheet.update_cell(6, 3, 4.5)"],
        "question_sheet_name": "Products",
        "check_format": False,
    }
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps(record) + "\n")
    env = gym.make(ENV_ID, task_file=str(path))
    task = env.unwrapped.tasks[0]
    assert play(env, task.id, ["worksheet.update_acell('C6', 4.5)"])[4]["success"]


def test_step_budgets_are_arguments():
    env = gym.make(ENV_ID, time_limit=2, memory_limit=256)
    assert env.unwrapped.limits.seconds == 2 and env.unwrapped.limits.memory_mb == 256
    env.reset(options={"task_id": first("update_cell").id})
    started = time.monotonic()
    _, _, _, _, info = env.step("while True:\n    pass")
    assert "2 s time budget" in info["error"] and time.monotonic() - started < 8
    with pytest.raises(ValueError, match="time_limit"):
        gym.make(ENV_ID, time_limit=0)


def test_what_one_step_may_write_is_bounded():
    env = gym.make(ENV_ID, time_limit=30)
    env.reset(options={"task_id": first("update_cell").id})
    big = "rows = [['x' * 2000] * 20] * 50\nfor i in range(12):\n    worksheet.update(rows, 'A1')"
    _, _, _, _, info = env.step(big)  # 12 requests of about 2 MB each: the seventh or so is refused
    assert "MB of request bodies in one step" in info["error"]


def test_what_one_episode_may_write_is_bounded(monkeypatch):
    import toolbench.envs.sheets as sheets_env

    monkeypatch.setattr(sheets_env, "MAX_EPISODE_BODY_BYTES", 3 * 2**20)
    env = gym.make(ENV_ID, mode="interactive", time_limit=30)
    env.reset(options={"task_id": first("update_cell").id})
    cell = "worksheet.update([['x' * 2000] * 20] * 50, 'A1')"  # about 2 MB
    _, _, _, _, info = env.step(cell)
    assert info["error"] is None
    _, _, _, _, info = env.step(cell)
    assert "MB of request bodies in one episode" in info["error"]


def test_shipped_expected_workbooks_are_what_the_references_leave():
    """Scoring reads the shipped tasks' expected workbooks from fixtures/sheets/expected.json; each
    must be what its reference leaves when it runs in the sandbox today."""
    from toolbench.envs.sheets import shipped_books
    from toolbench.taskgen.sheets import expected_books

    records = [task.to_record() for split in ("test", "demo") for task in toolbench.load_tasks("GoogleSheets", split)]
    assert expected_books(records) == shipped_books()


def test_a_task_changed_from_the_shipped_one_runs_its_own_reference():
    import dataclasses

    task = first("update_cell")
    changed = task.references[0].replace(task.references[0].rsplit(",", 1)[1], " 'changed')")
    assert changed != task.references[0]
    env = gym.make(ENV_ID, tasks=[dataclasses.replace(task, references=(changed,))])
    _, reward, _, _, info = play(env, task.id, [changed])
    assert reward == 1.0 and info["success"]
    _, reward, _, _, _ = play(env, task.id, [task.references[0]])
    assert reward < 1.0


WORK_HEAVY = {
    "whole-sheet writes": (
        "sheet.batch_update({'requests': [{'appendDimension': {'sheetId': worksheet.id, 'dimension': 'ROWS',"
        " 'length': 6000}}]})\n"
        "bold = lambda i: {'repeatCell': {'range': {'sheetId': worksheet.id}, 'cell': {'userEnteredFormat':"
        " {'textFormat': {'bold': i % 2 == 0}}}, 'fields': 'userEnteredFormat.textFormat.bold'}}\n"
        "sheet.batch_update({'requests': [bold(i) for i in range(200)]})"
    ),
    "repeated reads": "worksheet.update([[1.5] * 26] * 1000, 'A1')\nworksheet.batch_get(['A1:Z1000'] * 3000)",
}


@pytest.mark.parametrize("name", WORK_HEAVY)
def test_requests_that_would_make_the_emulator_work_for_minutes_are_refused(name):
    """The emulator runs in the env's process: what requests make it do is budgeted (a 429)."""
    env = gym.make(ENV_ID)
    task = toolbench.load_tasks("GoogleSheets")[0]
    started = time.perf_counter()
    observation, reward, *_ = play(env, task.id, [WORK_HEAVY[name]])
    refused = "[429]" in observation or "time budget" in observation  # on a loaded machine the clock may come first
    assert refused and reward < 1.0 and time.perf_counter() - started < 20
    _, reward, *_ = play(env, task.id, [task.references[0]])
    assert reward == 1.0


def test_grid_data_reads_are_budgeted_too():
    env = gym.make(ENV_ID)
    task = toolbench.load_tasks("GoogleSheets")[0]
    code = (
        "worksheet.update([[1.5] * 26] * 1000, 'A1')\n"
        "sheet.client.request('get', 'https://sheets.googleapis.com/v4/spreadsheets/' + sheet.id,"
        " params={'includeGridData': 'true', 'ranges': [worksheet.title + '!A1:Z1000'] * 100})"
    )
    started = time.perf_counter()
    observation, *_ = play(env, task.id, [code])
    assert "[429]" in observation and time.perf_counter() - started < 20


def test_the_names_cost_no_round_trip_and_the_codes_reads_are_fresh():
    env = gym.make(ENV_ID).unwrapped
    env.reset(options={"task_id": first("update_cell").id})
    result, served = env._run("pass", interactive=False, seed=0)
    assert result.ok and served == 0  # the set-up's metadata reads were answered ahead
    code = "worksheet.update_title('Renamed')\nprint(sheet.worksheet('Renamed').title)"
    result, served = env._run(code, interactive=False, seed=0)
    assert result.ok and result.output == "Renamed\n" and served == 2, result


def test_the_steps_deadline_holds_inside_a_single_request(monkeypatch):
    """A read whose formulas would take 12 s to compute ends at the 2 s step deadline."""
    from toolbench.mock_services.sheets import formula

    env = gym.make(ENV_ID, mode="interactive", time_limit=2)
    env.reset(options={"task_id": first("update_cell").id})
    _, _, _, _, info = env.step("worksheet.update([[f'=ROW()*{i}'] for i in range(600)], 'H1', raw=False)")
    assert info["error"] is None
    compute = formula.Calculator._compute

    def slow_compute(self, key):
        time.sleep(0.02)
        return compute(self, key)

    monkeypatch.setattr(formula.Calculator, "_compute", slow_compute)
    started = time.monotonic()
    observation, _, _, _, info = env.step("values = worksheet.col_values(8)")
    assert time.monotonic() - started < 4.5
    assert "[504]" in observation or "2 s time budget" in observation, observation
    monkeypatch.undo()
    _, _, _, _, info = env.step("print(worksheet.acell('H3').value)")
    assert info["error"] is None
