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
