"""One client cannot stop every session: idle sockets, slow heads and bodies, inflated WebSocket messages."""

from __future__ import annotations

import contextlib
import json
import resource
import socket
import threading
import time

import pytest
import requests

from tests.env_server.conftest import SLOW_ID, serve
from tests.env_server.test_http import post
from toolbench.env_server import EnvServerConfig, RunningEnvServer

ws_client = pytest.importorskip("websockets.sync.client")


def raw_connection(server, data: bytes = b"") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    if data:
        sock.sendall(data)
    return sock


def read_all(sock: socket.socket, timeout: float) -> bytes:
    sock.settimeout(timeout)
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except (TimeoutError, ConnectionResetError):
        pass
    return b"".join(chunks)


def stalled_step(server, session: str, sent: int = 10, declared: int = 100) -> socket.socket:
    head = (f"POST /step HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nX-Session-Id: {session}"
            f"\r\nContent-Length: {declared}\r\n\r\n").encode()  # fmt: skip
    return raw_connection(server, head + b'{"action":'[:sent])


def test_connections_that_send_nothing_cannot_lock_out_a_client():
    """100 silent sockets must not fill the connection cap (uvicorn's limit_concurrency 503s everyone then)."""
    running = serve(max_connections=16)
    idle = [raw_connection(running) for _ in range(60)]
    idle += [raw_connection(running, b"GET /health HTTP/1.1\r\nHost: local") for _ in range(40)]  # half a head
    try:
        time.sleep(0.2)
        for _ in range(5):
            reply = requests.post(running.url + "/reset", json={}, timeout=10)
            assert reply.status_code == 200, reply.text
    finally:
        for sock in idle:
            sock.close()
        running.stop()


def test_a_head_or_body_that_does_not_arrive_in_time_is_a_408_and_the_connection_closes():
    running = serve(header_timeout=0.5, body_timeout=0.5)
    try:
        session = post(running.url, "/reset", {}).headers["X-Session-Id"]
        began = time.monotonic()
        silent = raw_connection(running)
        half_head = raw_connection(running, b"GET /health HTTP/1.1\r\nHost: localhost\r\n")
        half_body = stalled_step(running, session)
        trickle = raw_connection(running, b"G")
        for byte in b"ET /health HT":  # a byte every 0.1 s: the head's deadline holds however it trickles
            time.sleep(0.1)
            try:
                trickle.sendall(bytes([byte]))
            except OSError:  # closed by the server: what is checked below
                break
        answers = [read_all(sock, 3) for sock in (silent, half_head, trickle, half_body)]
        assert time.monotonic() - began < 3
        for answer, code in zip(answers, ["HEADER_TIMEOUT"] * 3 + ["BODY_TIMEOUT"]):
            assert answer.startswith(b"HTTP/1.1 408 "), answer[:80]
            assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["code"] == code
        assert post(running.url, "/step", {"action": "API.set_location('Raleigh')"}, session).status_code == 200
    finally:
        running.stop()


def test_a_body_that_never_finishes_pins_no_session():
    """A stalled POST /step must not hold its session busy: it stays usable, closable and reapable."""
    running = serve(body_timeout=30)
    try:
        session = post(running.url, "/reset", {}).headers["X-Session-Id"]
        stalled = stalled_step(running, session)
        time.sleep(0.2)
        assert post(running.url, "/step", {"action": "API.set_location('Raleigh')"}, session).status_code == 200
        closed = requests.delete(running.url + "/session", headers={"X-Session-Id": session}, timeout=10)
        assert closed.status_code == 200, closed.text
        stalled.close()
    finally:
        running.stop()


def test_a_session_whose_request_stalls_is_reaped_like_an_idle_one():
    running = serve(idle_timeout=0.3, body_timeout=30)
    try:
        session = post(running.url, "/reset", {}).headers["X-Session-Id"]
        stalled = stalled_step(running, session)
        time.sleep(1.0)
        assert requests.get(running.url + "/health", timeout=10).json()["sessions"] == 0
        stalled.close()
    finally:
        running.stop()


def test_with_every_connection_running_a_request_a_new_one_is_a_503_until_one_ends():
    running = serve(SLOW_ID, max_connections=4)
    try:
        sessions = [post(running.url, "/reset", {}).headers["X-Session-Id"] for _ in range(4)]
        time.sleep(0.1)
        body = b'{"action": "sleep2"}'
        busy = [
            raw_connection(running, (f"POST /step HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                                     f"X-Session-Id: {s}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body)
            for s in sessions
        ]  # fmt: skip
        time.sleep(0.3)
        refused = read_all(raw_connection(running, b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n"), 3)
        assert refused.startswith(b"HTTP/1.1 503 "), refused[:80]
        assert json.loads(refused.split(b"\r\n\r\n", 1)[1])["code"] == "TOO_MANY_CONNECTIONS"
        for sock in busy:  # their steps end and are answered: the connections are served, idle, evictable
            sock.settimeout(5)
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
        assert requests.get(running.url + "/health", timeout=10).status_code == 200
        for sock in busy:
            sock.close()
    finally:
        running.stop()


def test_at_the_cap_a_websocket_without_a_session_gives_way_and_one_with_a_session_does_not():
    running = serve(max_connections=4)
    url = running.url.replace("http://", "ws://") + "/ws"
    try:
        with contextlib.ExitStack() as idle:
            for _ in range(4):  # connected, no message: no session
                idle.enter_context(ws_client.connect(url))
            assert requests.get(running.url + "/health", timeout=10).status_code == 200
        time.sleep(0.2)
        stack = contextlib.ExitStack()
        playing = [stack.enter_context(ws_client.connect(url)) for _ in range(4)]
        for ws in playing:
            ws.send(json.dumps({"type": "reset", "data": {}}))
            assert json.loads(ws.recv(timeout=10))["type"] == "observation"
        refused = read_all(raw_connection(running, b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n"), 3)
        assert refused.startswith(b"HTTP/1.1 503 "), refused[:80]
        for ws in playing:  # the sessions went on
            ws.send(json.dumps({"type": "step", "data": {"text": "API.set_location('Raleigh')"}}))
            assert json.loads(ws.recv(timeout=10))["type"] == "observation"
        stack.close()
    finally:
        running.stop()


def test_a_client_that_does_not_read_its_answers_loses_the_connection():
    running = serve(body_timeout=1.0)
    try:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", running.port))
        sock.sendall(b"GET /schema HTTP/1.1\r\nHost: localhost\r\n\r\n" * 3000)  # pipelined, never read
        connections = running.server.server_state.connections
        began = time.monotonic()
        while not connections and time.monotonic() < began + 5:  # accepted
            time.sleep(0.01)
        time.sleep(0.5)
        assert connections  # its answers are still being written
        while connections and time.monotonic() < began + 10:
            time.sleep(0.05)
        assert not connections  # the server closed it, its write buffer full for a second
        assert requests.get(running.url + "/health", timeout=10).status_code == 200
        sock.close()
    finally:
        running.stop()


def test_the_default_cap_fits_http_clients_for_every_session_and_the_descriptor_limit_is_raised():
    config = EnvServerConfig(env_id="toolbench/HomeSearch-v0", max_sessions=1024)
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2112 + 256:
        pytest.skip(f"the hard limit on open files here is {hard}, too low for 2,112 connections")
    running = RunningEnvServer(config)
    try:
        assert running.max_connections == 2 * 1024 + 64
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        assert soft == resource.RLIM_INFINITY or soft >= running.max_connections + 256
    finally:
        running.socket.close()


def test_websocket_compression_is_refused_so_a_message_is_its_size_on_the_wire(server):
    """With permessage-deflate a 10 KB message can inflate to 10 MiB of JSON: the extension is refused."""
    with ws_client.connect(server.url.replace("http://", "ws://") + "/ws", compression="deflate") as ws:
        assert ws.response.headers.get("Sec-WebSocket-Extensions") is None
        ws.send(json.dumps({"type": "reset", "data": {}}))
        assert json.loads(ws.recv(timeout=10))["type"] == "observation"


def test_large_messages_and_bodies_are_parsed_off_the_event_loop(server, monkeypatch):
    from toolbench.env_server import protocol

    threads: list[str] = []
    original = protocol.load_json
    monkeypatch.setattr(protocol, "load_json", lambda raw: (threads.append(threading.current_thread().name),
                                                            original(raw))[1])  # fmt: skip
    with ws_client.connect(server.url.replace("http://", "ws://") + "/ws", max_size=None) as ws:
        ws.send(json.dumps({"type": "schema"}))
        ws.recv(timeout=10)
        ws.send(json.dumps({"type": "schema", "padding": "x" * 200_000}))
        ws.recv(timeout=10)
    session = post(server.url, "/reset", {}).headers["X-Session-Id"]
    post(server.url, "/step", {"action": "x" * 200_000}, session)
    loop = "toolbench-env-server"  # small ones (a message, then the reset's body) on the event loop's thread
    assert [name == loop for name in threads] == [True, False, True, False], threads


def test_sigterm_stops_the_server_within_seconds_however_many_requests_are_stuck(tmp_path):
    import subprocess
    import sys

    command = [sys.executable, "-m", "toolbench", "serve", "env", "--task", "HomeSearch", "--port", "0",
               "--env-kwargs", '{"mode": "interactive"}', "--no-access-log"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = process.stdout.readline().split(" on ")[1].split(";")[0]
        port = int(url.rsplit(":", 1)[1])

        class Server:
            pass

        target = Server()
        target.port = port  # type: ignore[attr-defined]
        session = requests.post(url + "/reset", json={}, timeout=10).headers["X-Session-Id"]
        stuck = [stalled_step(target, session) for _ in range(5)]
        stuck += [raw_connection(target, b"GET /health HTTP/1.1\r\n") for _ in range(5)]
        time.sleep(0.3)
        began = time.monotonic()
        process.terminate()
        process.wait(timeout=10)
        assert time.monotonic() - began < 5
        for sock in stuck:
            sock.close()
    finally:
        process.kill()
        process.wait()
