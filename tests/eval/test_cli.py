import contextlib
import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import markupsafe
import pytest
import requests

import toolbench
from toolbench import TASKS
from toolbench.cli import main
from toolbench.mock_services.openweather import DEMO_API_KEY

from ..conftest import run_python
from .conftest import write_task_file


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "toolbench/OpenWeather-v0" in out and "test (100)" in out and "program" in out


def test_eval_json_shape(capsys):
    assert main(["eval", "--agent", "oracle", "--task", "all", "--limit", "5", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["agent"] == "oracle" and report["split"] == "test"
    assert set(report["tasks"]) == {spec.name for spec in TASKS}
    for name, row in report["tasks"].items():
        assert row["n"] == 5 and row["success_rate"] == 1.0 and row["executable_rate"] == 1.0
        assert {"score", *toolbench.find_task(name).env_class().metric_names} <= set(row)


def test_eval_table_and_outputs(tmp_path, capsys):
    assert main(["eval", "--agent", "random", "--task", "CatAPI", "--limit", "7", "--out", str(tmp_path)]) == 0
    table = capsys.readouterr().out
    assert "CatAPI" in table and "success" in table
    lines = (tmp_path / "trajectories.jsonl").read_text().splitlines()
    assert len(lines) == 7
    episode = json.loads(lines[0])
    assert {"agent", "task", "task_id", "success", "score", "actions", "observations"} <= set(episode)
    assert json.loads((tmp_path / "summary.json").read_text())["tasks"]["CatAPI"]["n"] == 7
    assert (tmp_path / "summary.txt").read_text().strip() == table.strip()


def test_eval_rejects_unknown_names_and_unsupported_choices(capsys):
    assert main(["eval", "--agent", "nobody", "--task", "all"]) == 2
    assert main(["eval", "--agent", "oracle", "--task", "Nowhere"]) == 2
    assert "unknown" in capsys.readouterr().err
    assert main(["eval", "--agent", "oracle", "--task", "CatAPI", "--mode", "interactive"]) == 2
    assert "modes ['program']" in capsys.readouterr().err
    assert main(["eval", "--agent", "oracle", "--task", "all", "--split", "nosuch"]) == 2


def test_eval_all_says_which_tasks_it_skips_and_why(tmp_path, capsys):
    lacking = [spec.name for spec in TASKS if "interactive" not in spec.modes]
    assert lacking  # the program-only tasks
    out = tmp_path / "run"
    args = ["eval", "--agent", "oracle", "--task", "all", "--mode", "interactive", "--limit", "1", "--quiet"]
    assert main([*args, "--json"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert set(report["skipped"]) == set(lacking) and set(report["tasks"]).isdisjoint(lacking)
    for name in lacking:
        assert report["skipped"][name] == "no 'interactive' mode (it has program)"
        assert f"{name}: no 'interactive' mode" in captured.err.split("--task all skips ")[1]
    assert main([*args, "--out", str(out)]) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[-1].startswith("(skipped: ") and all(name in table.splitlines()[-1] for name in lacking)
    assert json.loads((out / "summary.json").read_text())["skipped"] == report["skipped"]
    assert main(["eval", "--agent", "oracle", "--task", "all", "--limit", "1", "--json", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "skipped" not in json.loads(captured.out) and "skips" not in captured.err


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def serving(service: str, *options: str) -> Iterator[tuple[int, str]]:
    """``toolbench serve SERVICE`` in a process on a free port: the port and the banner it printed."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "toolbench.cli", "serve", service, "--port", str(port), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield port, process.stdout.readline()
    finally:
        process.terminate()
        process.wait(timeout=10)


def get_when_up(url: str) -> requests.Response:
    for _ in range(50):
        try:
            return requests.get(url, timeout=5)
        except requests.ConnectionError:
            time.sleep(0.1)
    pytest.fail("the server did not answer")


def test_serve_runs_a_real_server():
    with serving("openweather") as (port, banner):
        assert f"127.0.0.1:{port}" in banner and DEMO_API_KEY in banner
        response = get_when_up(f"http://127.0.0.1:{port}/data/2.5/weather?q=Rome&appid={DEMO_API_KEY}")
        assert response.status_code == 200 and response.json()["name"] == "Rome"


def test_record_saves_a_gif_of_a_tabletop_episode(tmp_path, capsys):
    from PIL import Image

    path = tmp_path / "episode.gif"
    assert main(["record", "--task", "Tabletop", "--task-id", "tabletop-test-0014", "--out", str(path)]) == 0
    assert "reward 1.00" in capsys.readouterr().out
    with Image.open(path) as image:
        assert image.n_frames >= 2 and image.size == (320, 240)
    assert main(["record", "--task", "CatAPI"]) == 2


def test_serve_sheets_answers_the_real_gspread_client():
    from toolbench.mock_services.sheets import served_client

    with serving("sheets") as (port, banner):
        assert f"127.0.0.1:{port}" in banner
        client = served_client(f"http://127.0.0.1:{port}")
        for _ in range(50):
            try:
                files = client.list_spreadsheet_files()
                break
            except requests.ConnectionError:
                time.sleep(0.1)
        else:
            pytest.fail("the server did not answer")
        worksheet = client.open_by_key(files[0]["id"]).sheet1
        worksheet.update([["=SUM(B2:B5)"]], "B6", raw=False)
        assert worksheet.acell("B6").value == "5.7"


def test_serve_webshop_prints_the_address_of_a_goals_session():
    with serving("webshop", "--goal", "7") as (port, banner):
        url = f"http://127.0.0.1:{port}/fixed_7"
        assert url in banner, banner
        page = get_when_up(url)
        instruction = toolbench.load_tasks("WebShop")[7].get("goal")["instruction_text"]
        assert page.status_code == 200 and str(markupsafe.escape(instruction)) in page.text


@pytest.mark.parametrize("task", [spec.name for spec in TASKS if spec.runs_code])
def test_code_tasks_score_in_a_fresh_process(task):
    # A new interpreter has imported nothing that pytest has, so a sandbox child that needs a late
    # import (e.g. sysconfig's data module) shows here.
    completed = subprocess.run(
        [sys.executable, "-m", "toolbench", "eval", "--agent", "oracle", "--task", task, "--limit", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=240,
        check=True,
    )
    row = json.loads(completed.stdout)["tasks"][task]
    assert row["success_rate"] == 1.0 and row["executable_rate"] == 1.0, completed.stderr


@pytest.mark.parametrize(
    "argv, message",
    [
        (["eval", "--agent", "oracle", "--limit", "0"], "--limit: must be at least 1"),
        (["eval", "--agent", "oracle", "--workers", "-2"], "--workers: must be at least 1"),
        (["serve", "catapi", "--port", "70000"], "--port: must be from 0 to 65535"),
        (["serve", "catapi", "--port", "x"], "--port: not an integer"),
        (["serve", "catapi", "--api-key", ""], "--api-key: must not be empty"),
    ],
)
def test_bad_numbers_and_keys_are_usage_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_an_agent_that_always_fails_is_reported_and_fails_the_command(monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")  # nothing listens there
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    assert (
        main(
            ["eval", "--agent", "openai:m", "--task", "CatAPI", "--limit", "2", "--max-retries", "0", "--breaker", "10"]
        )
        == 1
    )
    captured = capsys.readouterr()
    assert "CatAPI" in captured.out and "2 of 2 episodes (100.0%) ended in an error (model 2" in captured.err


@pytest.mark.parametrize("name, message", [("episode.mp4", "write a .gif"), ("missing/episode.gif", "does not exist")])
def test_record_refuses_what_it_cannot_write(tmp_path, capsys, name, message):
    assert main(["record", "--task", "Tabletop", "--out", str(tmp_path / name)]) == 2
    assert message in capsys.readouterr().err


def test_env_classes_take_their_catalog_lines_and_count_their_splits():
    for spec in TASKS:
        env_class = spec.env_class()
        assert (env_class.task_name, env_class.modes, env_class.splits) == (spec.name, spec.modes, spec.splits)
        assert env_class.fixture_slug == spec.fixture_slug
        assert all(spec.count(split) == len(env_class.load_split(split)) for split in spec.splits)


def test_list_imports_no_env_module():
    code = (
        "import sys; from toolbench.cli import main; main(['list']);"
        "print(sorted(m for m in ('pandas', 'pybullet', 'flask', 'gspread', 'openai', 'toolbench.envs.sheets') if m in sys.modules))"
    )
    assert run_python(code).splitlines()[-1] == "[]"


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0 and capsys.readouterr().out.strip() == f"toolbench-gym {toolbench.__version__}"


def test_pybullet_prints_no_banner():
    result = subprocess.run(
        [sys.executable, "-c", "import toolbench.envs.tabletop"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0 and result.stdout == "" and "pybullet build time" not in result.stderr


def test_progress_lines_on_stderr_when_not_a_terminal(capsys):
    assert main(["eval", "--agent", "oracle", "--task", "HomeSearch", "--limit", "3"]) == 0
    err = capsys.readouterr().err
    assert "HomeSearch: 3 episodes, success 1.000" in err
    assert main(["eval", "--agent", "oracle", "--task", "HomeSearch", "--limit", "3", "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_task_file_plays_a_users_records(tmp_path, capsys):
    path = write_task_file(tmp_path / "mine.jsonl", "HomeSearch", 4)
    assert (
        main(["eval", "--agent", "oracle", "--task", "HomeSearch", "--task-file", str(path), "--json", "--quiet"]) == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["split"] == "mine" and report["tasks"]["HomeSearch"]["n"] == 4
    assert report["tasks"]["HomeSearch"]["success_rate"] == 1.0
    assert main(["eval", "--agent", "oracle", "--task", "all", "--task-file", str(path)]) == 2
    assert main(["eval", "--agent", "oracle", "--task", "HomeSearch", "--task-file", str(tmp_path / "none.jsonl")]) == 2
