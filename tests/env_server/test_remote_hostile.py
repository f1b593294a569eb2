"""``RemoteEnv`` against a malicious server: every answer is bounded and held to its shape."""

from __future__ import annotations

import gzip
import json
import threading
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
