"""``toolbench serve env`` as users run it: the real command, answered by curl."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from toolbench.cli import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve", "env"], "--task is required"),
        (["serve", "env", "--task", "Nope"], "unknown task 'Nope'"),
        (["serve", "env", "--task", "HomeSearch", "--env-kwargs", "[1]"], "must be a JSON object"),
        (["serve", "env", "--task", "HomeSearch", "--env-kwargs", "{bad"], "Expecting property name"),
        (["serve", "env", "--task", "HomeSearch", "--env-kwargs", '{"mode": "nope"}'], "has modes"),
        (["serve", "env", "--task", "HomeSearch", "--env-kwargs", '{"colour": 1}'], "colour"),
        (["serve", "env", "--task", "HomeSearch", "--api-key", "k"], "--api-key apply to the mock services only"),
        (["serve", "openweather", "--task", "HomeSearch"], "--task apply to 'toolbench serve env' only"),
        (["serve", "env", "--task", "HomeSearch", "--allow-origin", "null"], "sandboxed frames and file: pages"),
        (["serve", "env", "--task", "HomeSearch", "--allow-origin", "*"], "would let every web page"),
    ],
)
def test_bad_serve_env_arguments_exit_2_with_a_message(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.slow
def test_toolbench_serve_env_answers_curl_and_stops_on_ctrl_c(curl_binary, tmp_path):
    command = [sys.executable, "-m", "toolbench", "serve", "env", "--task", "HomeSearch",
               "--env-kwargs", '{"mode": "interactive"}', "--port", "0"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        banner = process.stdout.readline()
        assert banner.startswith("serving toolbench/HomeSearch-v0 (OpenEnv protocol"), banner
        url = banner.split(" on ")[1].split(";")[0]
        exposure = [process.stdout.readline().rstrip() for _ in range(8)]
        assert exposure[:3] == ["exposure:", "  bound to 127.0.0.1 (loopback only)", "  token: none"], exposure
        assert "  Origin header: none allowed: requests from web pages are refused" in exposure
        assert exposure[-1] == "  connections: at most 192; sessions: at most 64"
        jar = str(tmp_path / "cookies")

        def curl(*args: str) -> dict:
            out = subprocess.run(
                [curl_binary, "-s", "-b", jar, "-c", jar, *args], capture_output=True, text=True, check=True
            )
            return json.loads(out.stdout)

        assert curl(f"{url}/health")["status"] == "healthy"
        json_type = ("-H", "Content-Type: application/json")
        reset = curl("-X", "POST", f"{url}/reset", *json_type, "-d", '{"seed": 0}')
        assert reset["observation"]["info"]["mode"] == "interactive"
        step = curl("-X", "POST", f"{url}/step", *json_type, "-d", """{"action": "API.set_location('Raleigh')"}""")
        assert step["observation"]["text"] == "OK: location = 'Raleigh'" and step["done"] is False
        assert curl(f"{url}/state")["step_count"] == 1
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
        log = process.stderr.read()
        assert '"POST /step HTTP/1.1" 200' in log  # one line per request, on stderr
    finally:
        process.kill()
        process.wait()


def test_threads_is_ignored_by_serve_env_with_a_note(capsys):
    assert main(["serve", "env", "--task", "HomeSearch", "--threads", "4", "--env-kwargs", "[1]"]) == 2
    err = capsys.readouterr().err
    assert "--threads no longer applies here and is ignored" in err and "must be a JSON object" in err


def test_connection_limit_defaults_for_services_and_is_derived_for_env():
    from toolbench.cli import build_parser

    services = build_parser().parse_args(["serve", "sheets"])
    assert (services.threads, services.connection_limit) == (8, 100) and not getattr(services, "explicit", set())
    given = build_parser().parse_args(["serve", "env", "--task", "HomeSearch", "--connection-limit", "50"])
    assert given.connection_limit == 50 and given.explicit == {"connection_limit"}
