"""Who may talk to the server: a web page cannot drive it (Host, Origin, content type), a token gates it."""

from __future__ import annotations

import json

import pytest
import requests

from tests.env_server.conftest import serve
from toolbench.cli import main
from toolbench.env_server import AccessPolicy, EnvServerConfig, ExposureRefused, RunningEnvServer
from toolbench.remote import RemoteEnv, RemoteEnvError

ws_client = pytest.importorskip("websockets.sync.client")
TOKEN = "t0ken-" + "x" * 40
AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def guarded():
    running = serve(access=AccessPolicy(allowed_origins=("https://trainer.example",), extra_hosts=("envs.internal",)))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def tokened():
    running = serve(access=AccessPolicy(token=TOKEN.encode(), token_source="test"))
    yield running
    running.stop()


def ws_url(server) -> str:
    return server.url.replace("http://", "ws://") + "/ws"


def test_a_rebound_host_name_is_refused_before_any_endpoint_runs(guarded):
    """DNS rebinding: a page's own name resolved to 127.0.0.1 makes its requests same-origin, with its Host."""
    for host in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example", "localhost.", "", "localhost:evil.com",
                 "[::1]evil.com", "localhost:80:80", "[::1]:x", "localhost:", "localhost:+80", "[::1]/x"):  # fmt: skip
        reply = requests.post(guarded.url + "/reset", json={}, headers={"Host": host}, timeout=10)
        assert (reply.status_code, reply.json()["code"]) == (421, "HOST_NOT_ALLOWED"), host
    assert len(guarded.app.state.env_server.pool) == 0  # no session was made
    for host in ("localhost:1234", "127.0.0.1", "[::1]:9", "envs.internal:80", "LOCALHOST"):
        assert requests.get(guarded.url + "/health", headers={"Host": host}, timeout=10).status_code == 200, host


def test_a_web_pages_requests_are_refused_over_http_and_websocket(guarded):
    page = {"Origin": "https://evil.example"}
    reply = requests.post(guarded.url + "/reset", json={}, headers=page, timeout=10)
    assert (reply.status_code, reply.json()["code"]) == (403, "ORIGIN_NOT_ALLOWED")
    with pytest.raises(Exception, match="403"):
        ws_client.connect(ws_url(guarded), additional_headers=page, open_timeout=5)
    with pytest.raises(Exception, match="421"):  # a rebound name on the handshake too
        ws_client.connect(ws_url(guarded), additional_headers={"Host": "evil.example"}, open_timeout=5)
    for null_origin in ("null", "file://"):
        assert requests.get(guarded.url + "/schema", headers={"Origin": null_origin}, timeout=10).status_code == 403
    assert len(guarded.app.state.env_server.pool) == 0


def test_bodies_must_be_declared_json_so_a_simple_cross_origin_post_cannot_carry_one(guarded):
    """A page may POST text/plain or a form anywhere without a preflight: such bodies are 415."""
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                         "application/json; charset=latin-1", None):  # fmt: skip
        headers = {"Content-Type": content_type} if content_type else {}
        reply = requests.post(guarded.url + "/reset", data=b'{"seed": 1}', headers=headers, timeout=10)
        assert (reply.status_code, reply.json()["code"]) == (415, "UNSUPPORTED_MEDIA_TYPE"), content_type
    assert len(guarded.app.state.env_server.pool) == 0
    for content_type in ("application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8"):
        reply = requests.post(guarded.url + "/reset", data=b"{}", headers={"Content-Type": content_type}, timeout=10)
        assert reply.status_code == 200, content_type
    assert requests.post(guarded.url + "/reset", timeout=10).status_code == 200  # an empty reset needs no type


def test_an_allowed_origin_may_call_and_read_the_answers(guarded):
    page = {"Origin": "https://trainer.example"}
    preflight = requests.options(guarded.url + "/reset", timeout=10, headers={
        **page, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"})  # fmt: skip
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "https://trainer.example"
    reply = requests.post(guarded.url + "/reset", json={}, headers=page, timeout=10)
    assert reply.status_code == 200 and reply.headers["access-control-allow-origin"] == "https://trainer.example"
    with ws_client.connect(ws_url(guarded), additional_headers=page, open_timeout=5) as ws:
        ws.send(json.dumps({"type": "reset", "data": {}}))
        assert json.loads(ws.recv(timeout=10))["type"] == "observation"


def test_with_a_token_every_request_but_health_needs_it(tokened):
    for method, path in (("POST", "/reset"), ("GET", "/schema"), ("GET", "/metadata"), ("POST", "/step")):
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}, {"Authorization": "Basic x"}):
            reply = requests.request(method, tokened.url + path, json={}, headers=headers, timeout=10)
            assert (reply.status_code, reply.json()["code"]) == (401, "TOKEN_REQUIRED"), (path, headers)
            assert reply.headers["WWW-Authenticate"].startswith("Bearer")
    health = requests.get(tokened.url + "/health", timeout=10)
    assert health.status_code == 200 and health.json() == {"status": "healthy"}  # liveness only
    assert requests.post(tokened.url + "/reset", json={}, headers=AUTH, timeout=10).status_code == 200


def test_with_a_token_the_websocket_handshake_needs_it(tokened):
    with pytest.raises(Exception, match="401"):
        ws_client.connect(ws_url(tokened), open_timeout=5)
    with ws_client.connect(ws_url(tokened), additional_headers=AUTH, open_timeout=5) as ws:
        ws.send(json.dumps({"type": "reset", "data": {}}))
        assert json.loads(ws.recv(timeout=10))["type"] == "observation"


def test_remote_env_sends_its_token_from_an_argument_a_file_or_the_environment(tokened, tmp_path, monkeypatch):
    monkeypatch.delenv("TOOLBENCH_TOKEN", raising=False)
    with pytest.raises(RemoteEnvError, match="401"):
        RemoteEnv(tokened.url)
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    monkeypatch.setenv("TOOLBENCH_TOKEN", TOKEN)
    for env in (RemoteEnv(tokened.url, token=TOKEN), RemoteEnv(tokened.url, token_file=path), RemoteEnv(tokened.url)):
        observation, info = env.reset(seed=0)
        assert observation and info["task_id"]
        env.close()


def test_binding_beyond_loopback_needs_a_token(monkeypatch, capsys):
    config = EnvServerConfig(env_id="toolbench/HomeSearch-v0")
    with pytest.raises(ExposureRefused, match="give it a token"):
        RunningEnvServer(config, host="0.0.0.0")
    monkeypatch.delenv("TOOLBENCH_TOKEN", raising=False)
    assert main(["serve", "env", "--task", "HomeSearch", "--host", "0.0.0.0", "--port", "0"]) == 2
    assert "--token-file PATH, or the TOOLBENCH_TOKEN" in capsys.readouterr().err


def test_a_wildcard_bind_with_a_token_answers_loopback_names_and_allowed_hosts_only():
    access = AccessPolicy(token=TOKEN.encode(), extra_hosts=("env",))
    running = RunningEnvServer(EnvServerConfig(env_id="toolbench/HomeSearch-v0", access=access), host="0.0.0.0").start()
    try:
        url = f"http://127.0.0.1:{running.port}"
        assert requests.get(url + "/schema", headers=AUTH, timeout=10).status_code == 200
        assert requests.get(url + "/schema", headers={**AUTH, "Host": "env:8000"}, timeout=10).status_code == 200
        assert requests.get(url + "/schema", headers={**AUTH, "Host": "10.1.2.3"}, timeout=10).status_code == 421
        exposure = requests.get(url + "/health", headers=AUTH, timeout=10).json()["exposure"]
        assert exposure["bound"] == "0.0.0.0" and exposure["loopback_only"] is False
        assert exposure["allowed_hosts"] == ["127.0.0.1", "[::1]", "env", "localhost"]
    finally:
        running.stop()


def test_health_reports_the_exposure(guarded):
    exposure = requests.get(guarded.url + "/health", timeout=10).json()["exposure"]
    assert exposure == {
        "bound": "127.0.0.1",
        "loopback_only": True,
        "token_required": False,
        "token_source": None,
        "allowed_hosts": ["127.0.0.1", "[::1]", "envs.internal", "localhost"],
        "allowed_origins": ["https://trainer.example"],
        "request_bodies": "application/json only",
        "snapshot_key": "random per process",
    }


def test_health_without_the_token_is_liveness_only_and_with_it_the_full_report(tmp_path):
    """Another local user learns that a server runs, not its files, sessions or settings."""
    token_file = tmp_path / "token"
    access = AccessPolicy(token=TOKEN.encode(), token_source=f"file {token_file}")
    running = serve(access=access, snapshot_key_source=f"file {tmp_path / 'snapshot.key'}")
    try:
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            reply = requests.get(running.url + "/health", headers=headers, timeout=10)
            assert reply.status_code == 200 and reply.json() == {"status": "healthy"}
            assert str(tmp_path) not in reply.text
        full = requests.get(running.url + "/health", headers=AUTH, timeout=10).json()
        assert full["sessions"] == 0 and full["exposure"]["token_source"] == f"file {token_file}"
    finally:
        running.stop()


@pytest.mark.parametrize("origin", ["null", "*", " NULL ", ""])
def test_origins_any_page_can_claim_are_refused_at_start(origin):
    with pytest.raises(ValueError, match="--allow-origin"):
        AccessPolicy(allowed_origins=(origin,))
