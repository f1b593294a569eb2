import json
import pickle

import pytest

import toolbench
from toolbench.core.tasks import Task, TaskFileError, read_task_file, task_from_record


def test_original_record_shape_loads_with_line_ids(tmp_path):
    path = tmp_path / "test.jsonl"
    path.write_text(
        json.dumps({"prompt": "Task one", "completion": ["curl a", "curl b"]})
        + "\n\n"
        + json.dumps({"prompt": "Task two", "completion": "curl c", "compare_string_only": True})
        + "\n"
    )
    tasks = read_task_file(path, id_prefix="orig")
    assert [t.id for t in tasks] == ["orig-0000", "orig-0001"]
    assert tasks[0].references == ("curl a", "curl b")
    assert tasks[1].references == ("curl c",)
    assert tasks[1].get("compare_string_only") is True


def test_record_round_trip_and_pickle():
    task = Task("t1", "p", ("r",), category="c", extra={"check_format": True})
    assert task_from_record(task.to_record(), "x") == task
    assert pickle.loads(pickle.dumps(task)) == task


def test_bad_files_say_where(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"prompt": "ok", "completion": []}\n{not json}\n')
    with pytest.raises(TaskFileError, match="bad.jsonl:2"):
        read_task_file(path)
    path.write_text('{"id": "a", "prompt": "x"}\n{"id": "a", "prompt": "y"}\n')
    with pytest.raises(TaskFileError, match="duplicate"):
        read_task_file(path)
    with pytest.raises(TaskFileError, match="completion"):
        task_from_record({"prompt": "x", "completion": [1]}, "z")


def test_load_tasks_public_helper():
    tasks = toolbench.load_tasks("OpenWeather", "test")
    assert len(tasks) == 100 and all(t.references for t in tasks)
    assert toolbench.load_tasks("toolbench/CatAPI-v0", "demo")[0].id.startswith("catapi-demo-")
    with pytest.raises(ValueError):
        toolbench.load_tasks("OpenWeather", "G1_tool")  # another task's split
    with pytest.raises(KeyError):
        toolbench.load_tasks("NoSuchTask")


@pytest.mark.parametrize(
    ("task", "record", "missing"),
    [
        ("OpenWeather", {"foo": 1}, "no 'prompt' and no 'completion'"),
        ("CatAPI", {"prompt": "List my favourites"}, "no 'completion'"),
        ("HomeSearch", {"prompt": " ", "completion": ["API.search()"]}, "no 'prompt'"),
        ("TripBooking", {"prompt": "Book a flight", "completion": [""]}, "no 'completion'"),
        ("VirtualHome", {"foo": 1}, "no 'prompt' and no 'completion'"),
        ("AppBench", {"prompt": "Book a table"}, "no 'completion'"),
        ("RapidAPI", {"query_id": 7, "completion": ['{"name": "Finish"}']}, "no 'query'"),
        (
            "GoogleSheets",
            {"prompt": "Sort the rows", "completion": ["worksheet.sort((1, 'asc'))"]},
            "no 'question_sheet_name'",
        ),  # fmt: skip
        ("WebShop", {"foo": 1}, "names no session"),
        ("Tabletop", {"foo": 1}, "'tester_id' and 'configs'"),
    ],
)
def test_a_record_that_cannot_be_played_names_its_file_and_line(tmp_path, capsys, task, record, missing):
    from toolbench.cli import main

    good = toolbench.load_tasks(task)[0].to_record()
    del good["id"]
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps(good) + "\n\n" + json.dumps(record) + "\n")
    with pytest.raises(TaskFileError, match=f"mine.jsonl:3: .*{missing}"):
        toolbench.find_task(task).env_class()(task_file=str(path))
    assert main(["eval", "--agent", "oracle", "--task", task, "--task-file", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:3: " in err and missing in err
    path.write_text(json.dumps(good) + "\n")
    assert len(toolbench.find_task(task).env_class().tasks_from_file(path)) == 1  # the good record alone plays


@pytest.mark.parametrize("content", ["", "\n  \n"])
def test_an_empty_task_file_is_refused(tmp_path, capsys, content):
    from toolbench.cli import main

    path = tmp_path / "empty.jsonl"
    path.write_text(content)
    with pytest.raises(TaskFileError, match="empty.jsonl: the file holds no task records"):
        toolbench.find_task("CatAPI").env_class()(task_file=str(path))
    assert main(["eval", "--agent", "oracle", "--task", "CatAPI", "--task-file", str(path), "--quiet"]) == 2
    captured = capsys.readouterr()
    assert "holds no task records" in captured.err and captured.out == ""


def test_original_formats_that_envs_complete_still_load(tmp_path):
    """Records the envs fill from other fields or score without a completion: WebShop's session ids,
    RapidAPI's records (answer facts; ToolBench's queries: a judge), AppBench's input/output lists."""
    webshop = tmp_path / "test.jsonl"
    webshop.write_text('{"id": 3}\n')
    assert toolbench.find_task("WebShop").env_class().tasks_from_file(webshop)[0].get("session") == 3
    queries = tmp_path / "G1_instruction.json"
    queries.write_text(json.dumps([{"query": "Find the weather in Oslo", "query_id": 1}, {"query": "", "query_id": 2}]))
    rapidapi = toolbench.find_task("RapidAPI").env_class()
    with pytest.raises(TaskFileError, match=r"G1_instruction.json: record 2: .*no 'query'"):
        rapidapi.tasks_from_file(queries)
    queries.write_text(json.dumps([{"query": "Find the weather in Oslo", "query_id": 1}]))
    assert rapidapi.tasks_from_file(queries)[0].references == ()
    ours = {key: value for key, value in toolbench.load_tasks("RapidAPI")[0].to_record().items() if key != "completion"}
    (tmp_path / "ours.jsonl").write_text(json.dumps(ours) + "\n")  # the pass rule scores by its answer facts
    assert rapidapi.tasks_from_file(tmp_path / "ours.jsonl")[0].get("answer_facts")
    del ours["answer_facts"]
    (tmp_path / "ours.jsonl").write_text(json.dumps(ours) + "\n")
    with pytest.raises(TaskFileError, match=r"ours.jsonl:1: the RapidAPI record has no 'answer_facts'"):
        rapidapi.tasks_from_file(tmp_path / "ours.jsonl")
    appbench = tmp_path / "test_ss.json"
    output = {"used_app": ["Weather"], "api_results": ["weather = getweather(#city='Oslo')"]}
    appbench.write_text(json.dumps([{"input": "Weather in Oslo?", "output": output}, {"input": "x"}]))
    with pytest.raises(TaskFileError, match=r"test_ss.json: record 2: an AppBench record holds"):
        toolbench.find_task("AppBench").env_class().tasks_from_file(appbench)
    appbench.write_text(json.dumps([{"input": "Weather in Oslo?", "output": output}]))
    assert toolbench.find_task("AppBench").env_class().tasks_from_file(appbench)[0].prompt == "Weather in Oslo?"
