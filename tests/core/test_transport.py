import json

import pytest
import requests
from flask import Flask, jsonify, request

from toolbench.core.transport import (
    HostNotServed,
    HttpRequest,
    RemoteRouter,
    Router,
    ServedApp,
    request_from_data,
    response_from_data,
    response_to_data,
)


def echo_app() -> Flask:
    app = Flask(__name__)

    @app.route("/echo/<path:rest>", methods=["GET", "POST", "DELETE", "PUT"])
    def echo(rest):
        return jsonify(
            method=request.method,
            path=rest,
            args=request.args.to_dict(flat=False),
            header=request.headers.get("X-Test"),
            body=request.get_data(as_text=True),
        )

    return app


def test_router_passes_method_query_headers_and_body():
    router = Router({"svc.test": echo_app()})
    response = router.send(
        HttpRequest("POST", "https://svc.test/echo/a/b?x=1&x=2&q=S%C3%A3o+Paulo", (("X-Test", "yes"),), b"payload")
    )
    body = response.json()
    assert response.status == 200
    assert body == {
        "method": "POST",
        "path": "a/b",
        "args": {"x": ["1", "2"], "q": ["São Paulo"]},
        "header": "yes",
        "body": "payload",
    }


def test_the_path_reaches_the_app_exactly():
    router = Router({"svc.test": echo_app()})
    assert router.send(HttpRequest("GET", "https://svc.test/echo/a%2Fb")).json()["path"] == "a/b"
    # "//x/echo/..." is a path a server sees as such, not a host followed by "/echo/..."
    assert router.send(HttpRequest("GET", "https://svc.test//x/echo/a")).status in (308, 404)


def test_a_crashing_app_is_a_500_not_an_exception():
    app = Flask(__name__)

    @app.get("/boom")
    def boom():
        raise RuntimeError("bug")

    app.config["PROPAGATE_EXCEPTIONS"] = True  # even when the app would re-raise (FLASK_DEBUG)
    response = Router({"svc.test": app}).send(HttpRequest("GET", "https://svc.test/boom"))
    assert response.status == 500


def test_unknown_host_is_refused():
    router = Router({"svc.test": echo_app()})
    with pytest.raises(HostNotServed, match="evil.example"):
        router.send(HttpRequest("GET", "https://evil.example/echo/x"))


def test_remote_router_carries_requests_and_responses_as_data():
    """What a sandboxed child uses: each request crosses as JSON data and comes back answered."""
    app_router = Router({"svc.test": echo_app()})
    crossed = []

    def forward(data):
        crossed.append(json.loads(json.dumps(data)))
        try:
            return json.loads(json.dumps(response_to_data(app_router.send(request_from_data(crossed[-1])))))
        except HostNotServed as exc:
            return {"unserved": str(exc)}

    session = RemoteRouter(forward).session()
    response = session.post("https://svc.test/echo/write", data=b"\xff raw", headers={"X-Test": "t"})
    assert response.status_code == 200 and response.json()["body"] == "\ufffd raw"
    assert crossed[0]["method"] == "POST" and crossed[0]["body"] == "\xff raw"
    with pytest.raises(requests.ConnectionError, match="evil.example"):
        session.get("https://evil.example/echo/x")
    with pytest.raises(ValueError):
        request_from_data({"method": "GET", "url": 3, "headers": [], "body": ""})
    with pytest.raises(ValueError):
        response_from_data({"status": "200", "headers": [], "body": ""})


def test_requests_session_reaches_the_app_in_process():
    session = Router({"svc.test": echo_app()}).session()
    response = session.post("https://svc.test/echo/z", params={"k": "v"}, json={"a": 1}, headers={"X-Test": "t"})
    assert response.status_code == 200 and response.reason == "OK"
    assert response.json()["args"] == {"k": ["v"]}
    assert json.loads(response.json()["body"]) == {"a": 1}
    with pytest.raises(requests.ConnectionError):
        session.get("https://not-served.example/")


def test_served_app_answers_real_http_on_loopback():
    with ServedApp(echo_app()) as served:
        assert served.url.startswith("http://127.0.0.1:")
        response = requests.get(f"{served.url}/echo/real?x=1", headers={"X-Test": "net"}, timeout=10)
    assert response.json()["args"] == {"x": ["1"]} and response.json()["header"] == "net"


def test_head_text_looks_like_curl_include():
    router = Router({"svc.test": echo_app()})
    response = router.send(HttpRequest("GET", "http://svc.test/echo/x"))
    assert response.head_text().startswith("HTTP/1.1 200 OK\r\n")
    assert "Content-Type: application/json" in response.head_text()
