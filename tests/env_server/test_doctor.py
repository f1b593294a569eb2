"""``toolbench doctor``: what ``serve env`` exposes by default, and a running server's exposure, probed."""

from __future__ import annotations

import json

from tests.env_server.conftest import HOME_SEARCH, INTERACTIVE
from toolbench.cli import main
from toolbench.env_server import AccessPolicy, EnvServerConfig, RunningEnvServer, create_env_app

TOKEN = "d" * 40


def test_doctor_probes_a_guarded_server_and_every_probe_is_refused(capsys, tmp_path):
    config = EnvServerConfig(HOME_SEARCH, INTERACTIVE, access=AccessPolicy(token=TOKEN.encode(), token_source="t"))
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    with RunningEnvServer(config) as running:
        assert main(["doctor", "--url", running.url, "--token-file", str(token_file), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["ok"] and report["exposure"]["token_required"] is True
        assert {probe["name"]: probe["got"] for probe in report["probes"]} == {
            "a foreign Host (DNS rebinding)": "421 HOST_NOT_ALLOWED",
            "a foreign Origin (a web page)": "403 ORIGIN_NOT_ALLOWED",
            "a text/plain body (a cross-origin form post)": "415 UNSUPPORTED_MEDIA_TYPE",
            "no token": "401 TOKEN_REQUIRED",
            "a WebSocket from a foreign Origin": "403",
        }
        assert main(["doctor", "--url", running.url, "--token-file", str(token_file)]) == 0
        text = capsys.readouterr().out
        assert "token: required, from t" in text and "FAIL" not in text


def test_doctor_flags_a_server_without_the_checks(capsys):
    config = EnvServerConfig(HOME_SEARCH, INTERACTIVE)
    unguarded = create_env_app(config).app  # the app without its access guard
    with RunningEnvServer(config, app=unguarded) as running:
        assert main(["doctor", "--url", running.url]) == 1
        text = capsys.readouterr().out
        assert text.count("FAIL") == 4  # Host, Origin, body and WebSocket: a token is optional on loopback


def test_doctor_without_a_url_says_what_serve_env_does_by_default(capsys):
    assert main(["doctor", "--json"]) == 0
    defaults = json.loads(capsys.readouterr().out)["serve_env_defaults"]
    assert defaults["bound"] == "127.0.0.1" and defaults["loopback_only"] is True
    assert defaults["token_required"] is False and defaults["allowed_origins"] == []
    assert "required to bind any other address" in defaults["token_policy"]


def test_doctor_warns_that_any_local_user_can_drive_a_loopback_server_without_a_token(capsys):
    with RunningEnvServer(EnvServerConfig(HOME_SEARCH, INTERACTIVE)) as running:
        assert main(["doctor", "--url", running.url]) == 0  # allowed on loopback: a warning, not a failure
        assert "WARN the server has no token: any local user can drive it" in capsys.readouterr().out
        assert main(["doctor", "--url", running.url, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["warnings"] == [
            "the server has no token: any local user can drive it (start it with --token-file PATH)"
        ]


def test_doctor_bounds_its_own_reads_of_a_server_that_drips(capsys):
    import time

    from tests.env_server.test_remote_hostile import drip, raw_server
    from toolbench.env_server.probe import ProbeError, probe_server

    url = raw_server(drip(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"a" * 1000, every=0.05))
    began = time.monotonic()
    try:
        probe_server(url, None, timeout=1.0)
    except ProbeError as exc:
        assert "deadline" in str(exc)
    assert time.monotonic() - began < 2.0


def test_doctor_sends_the_environments_token_only_where_remote_env_would(monkeypatch, capsys):
    monkeypatch.setenv("TOOLBENCH_TOKEN", TOKEN)
    config = EnvServerConfig(HOME_SEARCH, INTERACTIVE, access=AccessPolicy(token=TOKEN.encode(), token_source="t"))
    with RunningEnvServer(config) as running:
        assert main(["doctor", "--url", running.url, "--json"]) == 0  # loopback: the environment's token is sent
        assert json.loads(capsys.readouterr().out)["exposure"]["token_required"] is True
