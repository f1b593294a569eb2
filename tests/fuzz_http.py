"""Seeded fuzzing of the served fakes over real HTTP, as ``toolbench serve`` serves them (waitress).

Each request starts from a real request of the service (its paths, parameters, keys and bodies)
and is broken in one to three ways: bytes that are not UTF-8 in the query, path, headers or body,
percent-escapes of invalid bytes, hostile values (huge numbers, NaN, unicode, control characters),
deeply nested JSON, chunked bodies (well formed and broken), a Content-Length that is wrong, huge,
negative or not a number, wrong or unknown methods, very long paths and headers. It is sent over a
socket, byte for byte (an HTTP client library would clean it up). No answer may be a 5xx, every
request the server can frame must be answered, and every so often a good request must still get
its 200.

``python -m tests.fuzzing`` runs it after the envs; ``tests/core/test_fuzz_served.py`` runs a slice.
"""

from __future__ import annotations

import json
import random
import socket
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from tests.fuzz_actions import HOSTILE_VALUES, text_of
from toolbench.core.server import WsgiApp, make_production_server
from toolbench.mock_services import create_service_app, service_api_key


@dataclass
class Request:
    method: str
    path: bytes
    query: list[tuple[bytes, bytes]] = field(default_factory=list)
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    body: bytes = b""
    chunked: bool = False  # the body is sent chunked (as one chunk, or as ``raw_chunks`` where they are set)
    raw_chunks: bytes | None = None
    length: bytes | None = None  # the Content-Length sent; None: the body's own
    incomplete: bool = False  # the request says more is coming than is sent: the server may wait, then close

    def encode(self) -> bytes:
        query = b"&".join(name + b"=" + value for name, value in self.query)
        target = self.path + (b"?" + query if query else b"")
        lines = [self.method.encode("latin-1") + b" " + target + b" HTTP/1.1", b"Host: 127.0.0.1"]
        lines += [name + b": " + value for name, value in self.headers]
        body = self.body
        if self.chunked:
            lines.append(b"Transfer-Encoding: chunked")
            body = self.raw_chunks if self.raw_chunks is not None else b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
        elif self.body or self.length is not None:
            lines.append(b"Content-Length: " + (self.length if self.length is not None else str(len(body)).encode()))
        lines.append(b"Connection: close")
        return b"\r\n".join(lines) + b"\r\n\r\n" + body


def _json_body(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


def seed_requests(service: str) -> list[Request]:
    """Real requests of each served fake: the paths, parameters, keys and bodies its clients send."""
    key = service_api_key(service).encode()
    json_type = (b"Content-Type", b"application/json")
    if service == "openweather":
        paths = [b"/data/2.5/weather", b"/data/2.5/forecast", b"/data/2.5/air_pollution", b"/geo/1.0/direct"]
        return [
            Request("GET", path, [(b"q", b"London"), (b"lat", b"51.5"), (b"lon", b"-0.12"), (b"units", b"metric"),
                                  (b"lang", b"fr"), (b"cnt", b"3"), (b"mode", b"xml"), (b"appid", key)][: 3 + i])
            for i, path in enumerate(paths)
        ]  # fmt: skip
    if service == "catapi":
        auth = [(b"x-api-key", key)]
        return [
            Request("GET", b"/v1/images/search", [(b"limit", b"3"), (b"breed_ids", b"beng"), (b"size", b"med")], auth),
            Request("GET", b"/v1/breeds/search", [(b"q", b"sib")], auth),
            Request("GET", b"/v1/favourites", [(b"sub_id", b"me"), (b"limit", b"2"), (b"page", b"0")], auth),
            Request("GET", b"/v1/votes/1160661", [], auth),
            Request("POST", b"/v1/favourites", [], [*auth, json_type], _json_body({"image_id": "0XYvRd7oD", "sub_id": "me"})),
            Request("POST", b"/v1/votes", [], [*auth, json_type], _json_body({"image_id": "0XYvRd7oD", "value": 1})),
            Request("DELETE", b"/v1/favourites/232401133", [], auth),
        ]  # fmt: skip
    if service == "sheets":
        auth = [(b"Authorization", b"Bearer token"), json_type]
        return [
            Request("POST", b"/v4/spreadsheets", [], auth, _json_body({"properties": {"title": "Fuzz"}})),
            Request("GET", b"/drive/v3/files", [(b"q", b"name%3D%27Fuzz%27"), (b"pageSize", b"10")], auth),
            Request("GET", b"/v4/spreadsheets/demo/values/Sheet1!A1:B2", [(b"valueRenderOption", b"FORMULA")], auth),
            Request("POST", b"/v4/spreadsheets/demo:batchUpdate", [], auth, _json_body({"requests": [{"x": {}}]})),
            Request("PUT", b"/v4/spreadsheets/demo/values/A1", [(b"valueInputOption", b"RAW")], auth,
                    _json_body({"values": [[1, "a"]]})),
        ]  # fmt: skip
    if service == "webshop":
        return [
            Request("GET", b"/fixed_0"),
            Request("GET", b"/search/fixed_0", [(b"search_query", b"red+shoes")]),
            Request("GET", b"/search_results/fixed_0/1", [(b"keywords", b"red+shoes")]),
            Request("GET", b"/search_results/fixed_0/2", [(b"keywords", b"tea"), (b"page", b"2")]),
            Request("GET", b"/item_page/fixed_0/B09QKP7XQL", [(b"keywords", b"tea"), (b"options", b"%7B%7D")]),
            Request("GET", b"/item_sub_page/fixed_0/B09QKP7XQL/Reviews", [(b"keywords", b"tea")]),
            Request("GET", b"/done/fixed_0/B09QKP7XQL", [(b"options", b"%7B%22size%22%3A%22small%22%7D")]),
        ]
    if service == "rapidapi":
        info = {"category": "Data", "tool_name": "cipherkit", "api_name": "hash_text", "strip": "",
                "tool_input": json.dumps({"text": "a", "algorithm": "md5"}), "toolbench_key": "fuzz"}  # fmt: skip
        return [
            Request("POST", b"/virtual", [], [json_type], _json_body(info)),
            Request("POST", b"/rapidapi", [], [json_type], _json_body(info)),
            Request("POST", b"/reset", [], [json_type], _json_body({"toolbench_key": "fuzz"})),
            Request("GET", b"/hash", [(b"text", b"a")], [(b"X-RapidAPI-Host", b"cipherkit.p.rapidapi.com")]),
            Request("POST", b"/hash", [], [(b"X-RapidAPI-Host", b"cipherkit.p.rapidapi.com"), json_type], b"{}"),
        ]
    raise KeyError(service)


HEALTH = {  # a good request and the status it must keep getting
    "openweather": Request("GET", b"/data/2.5/weather", [(b"q", b"London"), (b"appid", b"{key}")]),
    "catapi": Request("GET", b"/v1/breeds", [], [(b"x-api-key", b"{key}")]),
    "sheets": Request("GET", b"/drive/v3/files", [], [(b"Authorization", b"Bearer token")]),
    "webshop": Request("GET", b"/fixed_0"),
    "rapidapi": Request("POST", b"/reset", [], [(b"Content-Type", b"application/json")], b"{}"),
}

BAD_BYTES = (b"\xff", b"\xfe\xff", b"\xc3\x28", b"\xe2\x82", b"\xed\xa0\x80", b"\x80abc", b"caf\xe9")
BAD_ESCAPES = (b"%ff", b"%c3%28", b"%ed%a0%80", b"%", b"%z", b"%zz", b"%00", b"%e2%82")
METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE", "BREW", "get")


def _value(r: random.Random) -> bytes:
    """A hostile value, percent-encoded as a client would send it (or raw, half the time)."""
    text = text_of(r.choice(HOSTILE_VALUES)).encode("utf-8", "surrogatepass")
    return quote(text, safe="").encode() if r.random() < 0.5 else text.replace(b" ", b"+").replace(b"\n", b"%0A")


def _nested_json(r: random.Random) -> bytes:
    depth = r.choice((100, 1000, 5000, 100_000))
    return (b"[" * depth + b"]" * depth) if r.random() < 0.5 else (b'{"a":' * depth + b"1" + b"}" * depth)


def _break(r: random.Random, request: Request) -> str:
    """Break ``request`` one way; the way's name."""
    kind = r.randrange(14)
    if kind == 0:
        request.query.append((r.choice([b"q", b"x", *(n for n, _ in request.query)]), r.choice(BAD_BYTES)))
        return "query not UTF-8"
    if kind == 1:
        name = r.choice([b"q", *(n for n, _ in request.query)])
        request.query.append((name, b"a" + r.choice(BAD_ESCAPES) + b"b"))
        return "query escapes invalid bytes"
    if kind == 2:
        request.path += b"/" + r.choice(BAD_BYTES + BAD_ESCAPES)
        return "path not UTF-8"
    if kind == 3:
        request.query = [(name, _value(r)) for name, _ in request.query] or [(b"q", _value(r))]
        return "hostile values"
    if kind == 4:
        request.body = r.choice((b"\xff\xfe{", b'{"image_id": "\xff"}', b"a=\xff&b=%ff", b'{"a": "\xed\xa0\x80"}'))
        request.headers.append(r.choice(((b"Content-Type", b"application/json"),
                                          (b"Content-Type", b"application/x-www-form-urlencoded"))))  # fmt: skip
        return "body not UTF-8"
    if kind == 5:
        request.body = _nested_json(r)
        request.headers.append((b"Content-Type", b"application/json"))
        return "nested JSON"
    if kind == 6:
        number = r.choice((b"1e308", b"-1e309", b"1" + b"0" * 400, b"NaN", b"Infinity", b"-0", b"9" * 5000))
        request.body = b'{"image_id": ' + number + b', "value": ' + number + b', "tool_input": ' + number + b"}"
        request.headers.append((b"Content-Type", b"application/json"))
        return "huge numbers"
    if kind == 7:
        request.chunked = True
        if r.random() < 0.5:
            return "chunked"
        request.raw_chunks = r.choice((b"zz\r\nabc\r\n0\r\n\r\n", b"-1\r\nx\r\n0\r\n\r\n", b"3\r\nabcdef\r\n0\r\n\r\n"))
        return "chunked, broken"
    if kind == 8:
        request.body = request.body or b'{"a": 1}'
        choice = r.randrange(4)
        if choice == 0:
            request.length, request.incomplete = str(len(request.body) + r.randint(1, 100)).encode(), True
        elif choice == 1:
            request.length = str(10**12).encode()
        else:
            request.length = (b"-1", b"abc", b"1e3", b" 2", b"0x10", b"9" * 40)[r.randrange(6)]
        return "wrong Content-Length"
    if kind == 9:
        request.method = r.choice(METHODS)
        return "wrong method"
    if kind == 10:
        request.path += b"/" + b"a" * r.choice((2000, 20_000, 200_000))
        return "long path"
    if kind == 11:
        size = r.choice((2000, 20_000, 200_000))
        request.headers.append((b"X-Long", b"b" * size) if r.random() < 0.5 else (b"X-Many", b"c"))
        if request.headers[-1][0] == b"X-Many":
            request.headers.extend([(b"X-Many", b"c")] * (size // 100))
        return "long headers"
    if kind == 12:
        name = r.choice((b"x-api-key", b"X-RapidAPI-Host", b"X-RapidAPI-Key", b"toolbench_key", b"Content-Type"))
        request.headers.append((name, r.choice(BAD_BYTES) + b"\x01"))
        return "header not UTF-8"
    request.body = _json_body(r.choice(HOSTILE_VALUES))
    request.headers.append((b"Content-Type", b"application/json"))
    return "body of the wrong type"


def send(port: int, data: bytes, incomplete: bool = False, timeout: float = 10.0) -> tuple[int | None, bytes]:
    """Send raw bytes; the status code and body answered (None: the server closed without answering)."""
    with socket.create_connection(("127.0.0.1", port), timeout=1.0 if incomplete else timeout) as sock:
        try:
            sock.sendall(data)
            if incomplete:
                sock.shutdown(socket.SHUT_WR)
        except OSError:  # the server answered (a 4xx for a head it refuses) and closed before all was sent
            pass
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except (ConnectionResetError, TimeoutError):
            pass
    answer = b"".join(chunks)
    head, _, body = answer.partition(b"\r\n\r\n")
    parts = head.split(b" ", 2)
    if len(parts) < 2 or not parts[1].isdigit():
        return None, answer
    return int(parts[1]), body


@dataclass
class AppReport:
    service: str
    requests: int = 0
    server_errors: int = 0
    unanswered: int = 0  # complete requests the server closed on without an answer
    health_failures: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    slowest_s: float = 0.0
    slowest_request: str = ""


def _health(service: str) -> bytes:
    request = HEALTH[service]
    key = service_api_key(service).encode()
    request = Request(request.method, request.path, [(n, v.replace(b"{key}", key)) for n, v in request.query],
                      [(n, v.replace(b"{key}", key)) for n, v in request.headers], request.body)  # fmt: skip
    return request.encode()


def fuzz_served(
    service: str, count: int, seed: str = "fuzz", health_every: int = 100, app: WsgiApp | None = None
) -> AppReport:
    """``count`` broken requests to ``service`` served as ``toolbench serve`` serves it (or to
    ``app`` in its place, sent the same requests)."""
    r = random.Random(f"{seed}/served/{service}")
    report = AppReport(service)
    seeds = seed_requests(service)
    with make_production_server(app or create_service_app(service), timeout=5) as server:
        for index in range(1, count + 1):
            base = r.choice(seeds)
            request = Request(base.method, base.path, list(base.query), list(base.headers), base.body)
            ways = sorted({_break(r, request) for _ in range(r.randint(1, 3))})
            shown = f"{', '.join(ways)}: {request.encode()[:120]!r}"
            started = time.perf_counter()
            status, body = send(server.port, request.encode(), request.incomplete)
            elapsed = time.perf_counter() - started
            if elapsed > report.slowest_s:
                report.slowest_s, report.slowest_request = elapsed, shown
            report.requests += 1
            report.statuses[status or 0] = report.statuses.get(status or 0, 0) + 1
            if status is None and not request.incomplete:
                report.unanswered += 1
                report.failures.append(f"no answer <- {shown}")
            elif status is not None and status >= 500:
                report.server_errors += 1
                report.failures.append(f"{status} {body[:120]!r} <- {shown}")
            if index % health_every == 0 or index == count:
                status, body = send(server.port, _health(service))
                if status != 200:
                    report.health_failures += 1
                    report.failures.append(f"a good request got {status} {body[:120]!r} after {index} requests")
    return report
