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
        toolbench.load_tasks("OpenWeather", "train")
    with pytest.raises(KeyError):
        toolbench.load_tasks("NoSuchTask")
