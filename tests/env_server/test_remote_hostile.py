"""``RemoteEnv`` against a malicious server: every answer is bounded and held to its shape."""

from __future__ import annotations

import contextlib
import gzip
import json
import threading
import time
import tracemalloc
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from toolbench.remote import RemoteEnv, RemoteEnvError

SCHEMA = {"env_id": "toolbench/Evil-v0", "mode": "interactive", "observation_max_length": 1000,
          "action_max_length": 1000}  # fmt: skip
Answer = tuple[int, dict[str, str], bytes]


def as_json(payload: Any, headers: dict[str, str] | None = None) -> Answer:
    return (
        200,
        {"Content-Type": "application/json", "X-Session-Id": "s1", **(headers or {})},
        json.dumps(payload).encode(),
    )


def step_answer(text: Any = "ok", reward: Any = 0.0, terminated: Any = False, truncated: Any = False, info: Any = None):
    observation = {"text": text, "info": {} if info is None else info, "terminated": terminated, "truncated": truncated}
    return as_json({"observation": observation, "reward": reward, "done": False})


class QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that stops reading a bomb is what the tests expect


class EvilServers:
    """Servers answering each path with the given (status, headers, body); ``seen``: the request headers."""

    def __init__(self) -> None:
        self.servers: list[ThreadingHTTPServer] = []
        self.seen: list[dict[str, str]] = []

    def __call__(self, answers: dict[str, Answer]) -> str:
        seen = self.seen

        class Handler(BaseHTTPRequestHandler):
            def answer(self) -> None:
                seen.append(dict(self.headers))
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                status, headers, body = answers.get(self.path, as_json(SCHEMA))
                self.send_response(status)
                for name, value in {"Content-Length": str(len(body)), **headers}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_DELETE = answer

            def log_message(self, *args: Any) -> None:
                pass

        server = QuietServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.servers.append(server)
        return f"http://127.0.0.1:{server.server_port}"


@pytest.fixture
def evil() -> Iterator[EvilServers]:
    servers = EvilServers()
    yield servers
    for server in servers.servers:
        server.shutdown()
        server.server_close()


def test_a_gzip_bomb_is_stopped_at_the_cap_without_inflating_it(evil):
    """A few hundred KB of gzip can inflate to a 256 MiB observation: the client stops at its cap."""
    stream = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip framing
    parts = [stream.compress(b'{"observation": {"text": "')]
    parts += [stream.compress(b"a" * (1024 * 1024)) for _ in range(256)]
    bomb = b"".join(parts) + stream.flush()
    assert len(bomb) < 400_000
    url = evil({"/reset": (200, {"Content-Type": "application/json", "Content-Encoding": "gzip"}, bomb)})
    env = RemoteEnv(url, max_response_bytes=8 * 1024 * 1024)
    tracemalloc.start()
    try:
        with pytest.raises(RemoteEnvError, match="inflates past|over"):
            env.reset()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 40 * 1024 * 1024, peak  # the 256 MiB it would inflate to were never held


def test_the_client_asks_for_uncompressed_answers_and_reads_a_modest_gzip_one(evil):
    url = evil({"/reset": (200, {"Content-Type": "application/json", "Content-Encoding": "gzip", "X-Session-Id": "s1"},
                           gzip.compress(json.dumps({"observation": {"text": "hi", "info": {}, "terminated": False,
                                                                     "truncated": False}, "reward": None}).encode()))})  # fmt: skip
    env = RemoteEnv(url)
    assert env.reset() == ("hi", {})


def test_an_answer_over_the_cap_on_the_wire_is_stopped(evil):
    url = evil({"/reset": step_answer(text="a" * 3_000_000)})
    with pytest.raises(RemoteEnvError, match="over 1048576 bytes on the wire"):
        RemoteEnv(url, max_response_bytes=1024 * 1024).reset()


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (step_answer(text="a" * 1001), "not in the observation space"),
        (step_answer(text=7), "not in the observation space"),
        (step_answer(reward="1"), "not a finite number"),
        (step_answer(reward=True), "not a finite number"),
        (step_answer(reward=None), "not a finite number"),
        (
            (
                200,
                {"X-Session-Id": "s1"},
                b'{"observation": {"text": "x", "info": {}, "terminated": false, "truncated": false}, "reward": NaN}',
            ),
            "not a finite number",
        ),  # fmt: skip
        (step_answer(terminated="yes"), "must be booleans"),
        (step_answer(truncated=0), "must be booleans"),
        (step_answer(info=[1]), "info must be a JSON object"),
        (as_json({"observation": "x"}), "no observation object"),
        (as_json([1, 2]), "no observation object"),
        ((200, {"X-Session-Id": "s1"}, b"not json"), "not JSON"),
        (as_json({}, {"X-Session-Id": "a b\tc"}), "not one this server writes"),
    ],
)
def test_answers_of_the_wrong_shape_are_clear_errors(evil, answer, message):
    url = evil({"/reset": step_answer(), "/step": answer})
    env = RemoteEnv(url)
    env.reset()
    with pytest.raises(RemoteEnvError, match=message):
        env.step("x")


@pytest.mark.parametrize("schema", [{**SCHEMA, "observation_max_length": 10**12}, {**SCHEMA, "env_id": None}, [1]])
def test_a_schema_of_the_wrong_shape_is_refused(evil, schema):
    url = evil({"/schema": as_json(schema)})
    with pytest.raises(RemoteEnvError, match="GET /schema"):
        RemoteEnv(url)


def test_requests_say_identity_and_carry_the_token(evil):
    url = evil({"/reset": step_answer()})
    RemoteEnv(url, token="secret-token").reset()
    for headers in evil.seen:
        assert headers["Accept-Encoding"] == "identity"
        assert headers["Authorization"] == "Bearer secret-token"


SCHEMA_BYTES = json.dumps(SCHEMA).encode()


def raw_server(behave) -> str:
    """A server that answers /schema properly and everything else with ``behave(connection)``."""
    import socket

    listener = socket.create_server(("127.0.0.1", 0))

    def handle(connection: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while True:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = connection.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                if b" /schema " in data.split(b"\r\n", 1)[0]:
                    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(SCHEMA_BYTES)
                                       + SCHEMA_BYTES)  # fmt: skip
                    continue
                behave(connection)
                return

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = listener.accept()
                threading.Thread(target=handle, args=(connection,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}"


def drip(data: bytes, every: float = 0.2):
    def behave(connection) -> None:
        for byte in data:
            connection.sendall(bytes([byte]))
            time.sleep(every)

    return behave


def endless(prefix: bytes, line: bytes):
    def behave(connection) -> None:
        connection.sendall(prefix)
        while True:
            connection.sendall(line)
            time.sleep(0.05)

    return behave


@pytest.mark.parametrize(
    "behave",
    [
        drip(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + b"a" * 1000, every=0.05),  # a body dripped
        drip(b"HTTP/1.1 200 OK\r\nX-A: " + b"a" * 1000),  # a head dripped
        endless(b"", b"HTTP/1.1 100 Continue\r\n\r\n"),  # interim answers without end
        endless(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n", b"X-T: " + b"a" * 100 + b"\r\n"
        ),
    ],
    ids=["dripped body", "dripped head", "endless 100 Continue", "endless trailers"],
)
def test_a_call_has_one_deadline_however_the_server_stretches_its_answer(behave):
    env = RemoteEnv(raw_server(behave), timeout=1.0)
    began = time.monotonic()
    with pytest.raises(RemoteEnvError):
        env.reset()
    assert time.monotonic() - began < 2.0
    env._session_id = "s1"  # close() asks the same server to end a session: bounded the same way
    began = time.monotonic()
    env.close()
    assert time.monotonic() - began < 2.0


def test_an_answer_of_millions_of_tiny_values_is_refused_before_it_is_parsed():
    """64 MiB of '{},' parse into 1.7 GB of objects: the values are counted first."""
    body = (
        b'{"observation": {"text": "x", "terminated": false, "truncated": false, "info": {"a": [' + b"{}," * 3_000_000
    )
    body += b'{}]}}, "reward": 0, "done": false}'
    # The whole answer is built before the measurement: the fake server's copy is not the client's memory.
    answer = b"HTTP/1.1 200 OK\r\nX-Session-Id: s1\r\nContent-Length: %d\r\n\r\n" % len(body) + body

    def behave(connection) -> None:
        connection.sendall(answer)

    env = RemoteEnv(raw_server(behave), timeout=10)
    tracemalloc.start()
    try:
        with pytest.raises(RemoteEnvError, match="JSON values"):
            env.reset()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * len(body), peak


def test_the_environments_token_goes_to_loopback_urls_only(evil, monkeypatch):
    from toolbench.remote import client_token

    monkeypatch.setenv("TOOLBENCH_TOKEN", "from-the-environment-" + "x" * 20)
    assert client_token("http://10.0.0.5:8000") == (None, True)
    assert client_token("https://envs.example.com") == (None, True)
    for loopback in ("http://127.0.0.1:8000", "http://localhost:1", "http://[::1]:8000", "http://127.9.9.9"):
        assert client_token(loopback)[0] == "from-the-environment-" + "x" * 20, loopback
    assert client_token("http://10.0.0.5:8000", token="given") == ("given", False)  # given: sent where told
    url = evil({"/reset": step_answer()})
    RemoteEnv(url).reset()
    assert evil.seen[-1]["Authorization"] == "Bearer from-the-environment-" + "x" * 20


def test_a_request_reset_before_it_was_sent_is_sent_once_more_and_no_other_is(evil, monkeypatch):
    from toolbench import bounded_http

    url = evil({"/reset": step_answer(), "/step": step_answer(text="stepped")})
    env = RemoteEnv(url)
    env.reset()
    real = bounded_http.BoundedConnection.request
    calls = []

    def reset_once(self, method, path, *args, **kwargs):
        calls.append(path)
        if len(calls) == 1:
            raise bounded_http.NotSent("the connection failed while the request was sent: reset")
        return real(self, method, path, *args, **kwargs)

    monkeypatch.setattr(bounded_http.BoundedConnection, "request", reset_once)
    assert env.step("x")[0] == "stepped" and calls == ["/step", "/step"]

    def lost_after_sending(self, method, path, *args, **kwargs):
        calls.append(path)
        raise bounded_http.HttpError("the connection failed before any answer")

    calls.clear()
    monkeypatch.setattr(bounded_http.BoundedConnection, "request", lost_after_sending)
    with pytest.raises(RemoteEnvError, match="before any answer"):
        env.step("x")
    assert calls == ["/step"]  # a step the server may have taken is not sent twice
