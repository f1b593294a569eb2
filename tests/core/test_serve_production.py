"""``toolbench serve`` on waitress: the same answers as in-process, limits as 4xx, never a 5xx for
a malformed request, and still serving afterwards. Requests go over real sockets as raw bytes, so
nothing cleans them up on the way (curl sends ``?q=São`` unencoded, for one)."""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import socket
import subprocess
import sys
import time
from urllib.parse import urlsplit

import pytest

from toolbench.cli import build_parser
from toolbench.core.server import MAX_BODY, make_production_server
from toolbench.core.transport import HttpRequest, Router, wsgi_environ
from toolbench.mock_services import create_service_app, service_api_key
from toolbench.mock_services.sheets import MAX_BODY_BYTES, demo_store

SHEET = next(iter(demo_store().spreadsheets))
VIRTUAL = {
    "category": "Advertising",
    "tool_name": "adpulse_metrics",
    "api_name": "search_campaigns",
    "tool_input": json.dumps({"query": "shoes"}),
    "strip": "truncate",
    "toolbench_key": "test",
}
# (service, host, method, target, body): valid requests, as a client of each fake sends them
VALID = [
    ("openweather", "api.openweathermap.org", "GET", "/data/2.5/weather?q=Copenhagen&units=metric&appid={key}", b""),
    ("openweather", "api.openweathermap.org", "GET", "/data/2.5/weather?q=São+Paulo&appid={key}", b""),
    ("openweather", "api.openweathermap.org", "GET", "/data/2.5/weather?q=Z%C3%BCrich&lang=de&appid={key}", b""),
    ("catapi", "api.thecatapi.com", "GET", "/v1/favourites?limit=3", b""),
    ("catapi", "api.thecatapi.com", "GET", "/v1/breeds?limit=2", b""),
    ("catapi", "api.thecatapi.com", "POST", "/v1/votes", b'{"image_id": "MSrSteBhW", "value": 1}'),
    ("sheets", "sheets.googleapis.com", "GET", f"/v4/spreadsheets/{SHEET}", b""),
    ("sheets", "sheets.googleapis.com", "GET", f"/v4/spreadsheets/{SHEET}/values/Sheet1!A1:C3", b""),
    ("rapidapi", "localhost", "POST", "/virtual", json.dumps(VIRTUAL).encode()),
]


def exchange(port: int, data: bytes) -> tuple[int | None, bytes]:
    """Send raw bytes; the answer's status and body, or (None, b"") if the server closed without one."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        with contextlib.suppress(OSError):  # the server answered and closed before reading everything (a 413, say)
            sock.sendall(data)
        response = http.client.HTTPResponse(sock)
        try:
            response.begin()
        except (http.client.RemoteDisconnected, ConnectionResetError):
            return None, b""
        return response.status, response.read()


def raw_request(method: str, target: str, host: str, headers: tuple[tuple[str, str], ...], body: bytes) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}", *(f"{k}: {v}" for k, v in headers)]
    lines += [f"Content-Length: {len(body)}", "Connection: close"]
    return "\r\n".join(lines).encode() + b"\r\n\r\n" + body


@pytest.mark.parametrize("service", sorted({row[0] for row in VALID}))
def test_served_fakes_answer_like_the_in_process_router(service):
    key = service_api_key(service)
    router = Router({row[1]: create_service_app(service) for row in VALID if row[0] == service})
    with make_production_server(create_service_app(service)) as server:
        for _, host, method, target, body in (row for row in VALID if row[0] == service):
            target = target.replace("{key}", key)
            headers = (("x-api-key", key), ("Content-Type", "application/json"))
            served = exchange(server.port, raw_request(method, target, host, headers, body))
            url = f"http://{host}{target}"
            local = router.send(HttpRequest(method, url, (("Host", host), *headers), body))
            assert served == (local.status, local.body), target
            assert local.status < 300, (target, local.body[:200])


def echo(environ, start_response):
    """What the app sees of the URL and a header, and the body's length."""
    seen = [
        environ["PATH_INFO"],
        environ["QUERY_STRING"],
        environ.get("HTTP_X_NAME"),
        len(environ["wsgi.input"].read()),
    ]
    body = json.dumps(seen).encode()
    start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
    return [body]


@pytest.mark.parametrize(
    "target",
    [
        "/search?q=São",
        "/S%C3%A3o/ü?q=ñ&x=%FF&y=%2F",
        "//double//slash?a=b",
        "/a%2Fb?c=%20",
        "/x?q=\udcff",
        "/x?a=b#frag",
    ],
)
def test_raw_urls_reach_the_app_as_in_process(target):
    sent = target.encode("utf-8", "surrogateescape")  # raw bytes on the wire, as curl sends them
    url = "http://x" + target
    expected = wsgi_environ(HttpRequest("GET", url), urlsplit(url))
    with make_production_server(echo) as server:
        status, body = exchange(server.port, b"GET " + sent + b" HTTP/1.1\r\nHost: x\r\nX-Name: S\xc3\xa3o\r\n\r\n")
    assert status == 200
    assert json.loads(body) == [expected["PATH_INFO"], expected["QUERY_STRING"], "S\xc3\xa3o", 0]


def test_bodies_over_max_body_are_413_and_up_to_it_reach_the_app():
    with make_production_server(echo, max_body=1000) as server:
        post = b"POST /x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        assert exchange(server.port, post + b"Content-Length: 1000\r\n\r\n" + b"a" * 1000) == (
            200,
            b'["/x", "", null, 1000]',
        )
        assert exchange(server.port, post + b"Content-Length: 1001\r\n\r\n" + b"a" * 1001)[0] == 413
        chunked = post + b"Transfer-Encoding: chunked\r\n\r\n" + b"800\r\n" + b"a" * 2048 + b"\r\n0\r\n\r\n"
        assert exchange(server.port, chunked)[0] == 413


def test_serve_limits_default_to_the_largest_body_a_fake_accepts():
    args = build_parser().parse_args(["serve", "sheets"])
    assert args.max_body == MAX_BODY == MAX_BODY_BYTES
    assert (args.threads, args.connection_limit, args.timeout, args.run.__name__) == (8, 100, 30, "cmd_serve")


HEAD = b"Host: api.thecatapi.com\r\nx-api-key: {key}\r\n"
MALFORMED = [
    b"HELLO\r\n\r\n",
    b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n",  # a TLS hello on the plain port
    b"get /v1/favourites HTTP/1.1\r\n" + HEAD + b"\r\n",
    b"GET /v1/favourites?x=\xff\xfe HTTP/1.1\r\n" + HEAD + b"\r\n",
    b"GET /v1/favourites?limit=%zz&page=%FF HTTP/1.1\r\n" + HEAD + b"\r\n",
    b"GET /v1/%ZZ%00 HTTP/1.1\r\n" + HEAD + b"\r\n",
    b"GET /v1/favourites HTTP/1.1\r\nBad Header\r\n\r\n",
    b"GET /v1/favourites HTTP/1.1\r\nX-Big: " + b"a" * 300_000 + b"\r\n\r\n",
    b"POST /v1/votes HTTP/1.1\r\n" + HEAD + b'Content-Type: application/json\r\nContent-Length: 8\r\n\r\n{"image_',
    b"POST /v1/votes HTTP/1.1\r\n" + HEAD + b"Content-Length: -5\r\n\r\n",
    b"POST /v1/votes HTTP/1.1\r\n" + HEAD + b"Content-Length: 99999999999\r\n\r\n",
    b"POST /v1/votes HTTP/1.1\r\n" + HEAD + b"Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
    b"POST /v1/votes HTTP/1.1\r\n" + HEAD + b"Transfer-Encoding: gzip\r\n\r\n",
    b"POST /v1/votes HTTP/1.1\r\n" + HEAD + b"Content-Type: application/json\r\nContent-Length: 4\r\n\r\n\xff\xfe{}",
    b"PATCH /v1/breeds HTTP/1.1\r\n" + HEAD + b"\r\n",
    b"GET /v1/favourites HTTP/9.9\r\n" + HEAD + b"\r\n",
]


def test_malformed_requests_are_4xx_or_closed_never_5xx_and_the_server_keeps_answering():
    key = service_api_key("catapi").encode()
    with make_production_server(create_service_app("catapi"), max_body=10_000) as server:
        for data in MALFORMED:
            status, body = exchange(server.port, data.replace(b"{key}", key))
            assert status is None or status < 500, (data[:60], status, body[:200])
        valid = raw_request("GET", "/v1/breeds?limit=1", "api.thecatapi.com", (("x-api-key", key.decode()),), b"")
        assert exchange(server.port, valid)[0] == 200


def test_an_app_exception_is_a_500_and_the_server_survives():
    def fragile(environ, start_response):
        if environ["PATH_INFO"] == "/boom":
            raise RuntimeError("a bug in a fake")
        return echo(environ, start_response)

    with make_production_server(fragile) as server:
        assert exchange(server.port, b"GET /boom HTTP/1.1\r\nHost: x\r\n\r\n")[0] == 500
        assert exchange(server.port, b"GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")[0] == 200


def test_an_idle_half_sent_request_is_closed_after_the_timeout():
    with (
        make_production_server(echo, timeout=1) as server,
        socket.create_connection(("127.0.0.1", server.port)) as sock,
    ):
        sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # never finished (a slow or dead client)
        sock.settimeout(5)
        start = time.monotonic()
        assert sock.recv(100) == b""
        assert time.monotonic() - start < 4


def test_toolbench_serve_on_port_0_prints_the_real_port_and_logs_requests():
    process = subprocess.Popen(
        [sys.executable, "-m", "toolbench", "serve", "openweather", "--port", "0", "--threads", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        banner = process.stdout.readline().decode()
        port = int(re.search(r"http://127\.0\.0\.1:(\d+)", banner).group(1))
        key = service_api_key("openweather")
        request = raw_request("GET", f"/data/2.5/weather?q=São+Paulo&appid={key}", "x", (), b"")
        status, body = exchange(port, request)
        assert port != 0 and status == 200 and json.loads(body)["name"] == "São Paulo"
        assert b'"GET /data/2.5/weather?q=S\xc3\xa3o+Paulo&appid=' in process.stderr.readline()
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_request_log_escapes_control_characters():
    """A request target with ESC sequences or CR/LF must not reach the operator's terminal raw."""
    from toolbench.core.server import _request_line

    raw = "/a\x1b[2Jb\r\nFORGED é".encode().decode("latin-1")  # WSGI's form of the raw bytes
    line = _request_line({"REQUEST_METHOD": "GET", "REQUEST_URI": raw, "SERVER_PROTOCOL": "HTTP/1.1"})
    assert line == "GET /a\\x1b[2Jb\\x0d\\x0aFORGED é HTTP/1.1"


def test_shutdown_ends_the_server_even_when_its_trigger_is_already_closed():
    server = make_production_server(create_service_app("openweather")).start()
    server._server.trigger.close()  # as if its descriptor had been closed under it
    server.shutdown()
    assert server._thread is not None and not server._thread.is_alive()
    with pytest.raises(OSError):
        socket.create_connection((server.host, server.port), timeout=2).close()
