"""Who keeps a connection at the cap, and what a connection can cost: a trickling body is cut and evictable,
eviction takes junk before a client that has been served, an evicted or closed connection is gone at once,
and no client can make the server buffer without bound (answers, pongs) or hold a session by not reading."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import os
import socket
import time

import pytest
import requests

from tests.env_server.conftest import BIG_RENDER_ID, serve
from tests.env_server.test_connections import raw_connection, read_all
from tests.env_server.test_http import post
from toolbench.env_server import AccessPolicy

ws_client = pytest.importorskip("websockets.sync.client")
TOKEN = "c" * 40
HEAD = b"POST /step HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"


def trickle(sockets: list[socket.socket], seconds: float, every: float = 0.2) -> None:
    """One byte every ``every`` seconds on each socket, for ``seconds``: a body far slower than 1 KiB/s."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(every)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.sendall(b" ")


def keep_alive_client(server, headers: dict[str, str] | None = None) -> socket.socket:
    """A connection that completed a request (GET /schema) and now idles, as a trainer's between steps."""
    sock = raw_connection(server)
    extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
    sock.sendall(f"GET /schema HTTP/1.1\r\nHost: localhost\r\n{extra}\r\n".encode())
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(65536)
    head, _, body = answer.partition(b"\r\n\r\n")
    length = int([line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")][0])
    while len(body) < length:
        body += sock.recv(65536)
    assert head.startswith(b"HTTP/1.1 200"), head
    return sock


def still_serves(sock: socket.socket, headers: str = "") -> bool:
    try:
        sock.sendall(f"GET /metadata HTTP/1.1\r\nHost: localhost\r\n{headers}\r\n".encode())
        sock.settimeout(5)
        return sock.recv(65536).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def connections(server) -> set:
    return server.server.server_state.connections


def test_a_body_slower_than_the_minimum_rate_is_cut_with_a_408_after_its_grace():
    running = serve(body_rate_grace=0.5, body_timeout=30)
    try:
        sock = raw_connection(running, HEAD)
        began = time.monotonic()
        trickle([sock], 1.5)
        answer = read_all(sock, 3)
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:80]
        assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["code"] == "BODY_TOO_SLOW"
        assert time.monotonic() - began < 4
    finally:
        running.stop()


def test_at_the_cap_trickling_bodies_give_way_and_a_served_keep_alive_client_keeps_its_connection():
    running = serve(max_connections=8, body_rate_grace=30, body_timeout=60)
    try:
        trainer = keep_alive_client(running)
        junk = [raw_connection(running, HEAD) for _ in range(7)]  # the cap, with the trainer's
        trickle(junk, 1.3)  # each has been slower than the minimum rate for over a second
        for _ in range(5):  # new clients get in, each by closing a trickling body
            assert requests.get(running.url + "/health", timeout=10).status_code == 200
        assert still_serves(trainer)
        for sock in junk:
            sock.close()
    finally:
        running.stop()


def test_at_the_cap_sessionless_websockets_give_way_before_a_served_keep_alive_client():
    running = serve(max_connections=6)
    url = running.url.replace("http://", "ws://") + "/ws"
    try:
        trainer = keep_alive_client(running)
        with contextlib.ExitStack() as stack:
            for _ in range(5):
                stack.enter_context(ws_client.connect(url))
            time.sleep(0.1)
            for _ in range(5):
                assert requests.get(running.url + "/health", timeout=10).status_code == 200
            assert still_serves(trainer)
    finally:
        running.stop()


def test_with_a_token_unauthenticated_connections_give_way_before_authenticated_ones():
    running = serve(max_connections=6, access=AccessPolicy(token=TOKEN.encode()))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    try:
        trainer = keep_alive_client(running, auth)
        strangers = [raw_connection(running, b"GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n") for _ in range(5)]
        time.sleep(0.2)  # each served its liveness answer: idle, unauthenticated
        for _ in range(5):
            assert requests.get(running.url + "/health", timeout=10).status_code == 200
        assert still_serves(trainer, f"Authorization: Bearer {TOKEN}\r\n")
        for sock in strangers:
            sock.close()
    finally:
        running.stop()


def unread_render(server, session: str) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", server.port))
    sock.sendall(f"GET /render HTTP/1.1\r\nHost: localhost\r\nX-Session-Id: {session}\r\n\r\n".encode())
    return sock


def test_evicted_connections_with_unread_answers_are_gone_at_once_and_count_until_then():
    """Closing a connection waits for its buffer to drain, for ever if the client reads nothing: eviction
    aborts instead, and a connection counts against the cap until it is gone."""
    running = serve(BIG_RENDER_ID, max_connections=4, body_timeout=60)
    try:
        session = post(running.url, "/reset", {}).headers["X-Session-Id"]
        readers = [unread_render(running, session) for _ in range(4)]
        time.sleep(0.5)  # each answer written, mostly still in the server's buffer: idle connections
        peak = 0
        for _ in range(8):  # each new connection evicts one of them
            readers.append(unread_render(running, session))
            time.sleep(0.15)
            peak = max(peak, len(connections(running)))
        time.sleep(0.3)
        assert peak <= 5 and len(connections(running)) <= 4  # never more than the cap (and the one arriving)
        for sock in readers:
            sock.close()
    finally:
        running.stop()


def test_the_total_of_unread_answers_is_capped():
    running = serve(BIG_RENDER_ID, max_buffered_output=12_000_000, body_timeout=60)
    try:
        session = post(running.url, "/reset", {}).headers["X-Session-Id"]
        readers = []
        for _ in range(6):
            readers.append(unread_render(running, session))
            time.sleep(0.3)
        total = sum(c.transport.get_write_buffer_size() for c in list(connections(running)) if c.transport)
        assert total <= 12_000_000 + 8_000_000, total  # at most one answer over the cap, until the next check
        assert requests.get(running.url + "/health", timeout=10).status_code == 200
        for sock in readers:
            sock.close()
    finally:
        running.stop()


def test_a_closed_connection_whose_client_reads_nothing_is_aborted_once_its_writes_stall():
    """uvicorn closes a keep-alive connection after its idle timeout; an unread answer would keep it for ever."""
    running = serve(BIG_RENDER_ID, connection_idle=0.5, body_timeout=1.0)
    try:
        session = post(running.url, "/reset", {}).headers["X-Session-Id"]
        readers = [unread_render(running, session) for _ in range(3)]
        time.sleep(3.5)
        assert len(connections(running)) == 0
        for sock in readers:
            sock.close()
    finally:
        running.stop()


def test_accept_errors_are_logged_once_per_interval(caplog):
    from toolbench.env_server.loop_errors import ACCEPT_ERROR, install_accept_error_limiter

    loop = asyncio.new_event_loop()
    try:
        install_accept_error_limiter(loop, interval=60)
        with caplog.at_level(logging.ERROR):
            for _ in range(1000):
                loop.call_exception_handler({"message": ACCEPT_ERROR, "exception": OSError(24, "Too many open files")})
            loop.call_exception_handler({"message": "something else"})
        accept_logs = [r for r in caplog.records if "accept" in r.getMessage()]
        assert len(accept_logs) == 1 and "Too many open files" in accept_logs[0].getMessage()
        assert any("something else" in r.getMessage() for r in caplog.records)  # other errors as before
    finally:
        loop.close()


def raw_websocket(server, rcvbuf: int = 4096) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.connect(("127.0.0.1", server.port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(f"GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())  # fmt: skip
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 101"), answer
    return sock


def frame(text: str, opcode: int = 0x1) -> bytes:
    data, mask = text.encode(), os.urandom(4)
    length = bytes([0x80 | len(data)]) if len(data) < 126 else bytes([0x80 | 126]) + len(data).to_bytes(2, "big")
    return bytes([0x80 | opcode]) + length + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))


def test_a_ping_flood_from_a_client_that_reads_no_pongs_is_bounded_and_then_closed():
    running = serve(body_timeout=1.0)
    try:
        sock = raw_websocket(running)
        sock.settimeout(0.05)
        ping = frame("p" * 125, opcode=0x9)
        sent, largest, began = 0, 0, time.monotonic()
        while time.monotonic() - began < 2.5:
            try:
                sock.sendall(ping * 200)
                sent += 200
            except (TimeoutError, OSError):
                pass  # the server stopped reading: what is checked
            buffered = [c.transport.get_write_buffer_size() for c in list(connections(running)) if c.transport]
            largest = max([largest, *buffered])
        assert sent > 1000
        assert largest < 1_000_000, largest  # pongs stop being read for once writes are paused
        time.sleep(0.5)
        assert len(connections(running)) == 0  # writes stalled past the body timeout: aborted
        sock.close()
    finally:
        running.stop()


def test_a_websocket_client_that_reads_nothing_loses_its_connection_and_its_session():
    running = serve(body_timeout=1.0, idle_timeout=600)
    try:
        sock = raw_websocket(running)
        sock.sendall(frame(json.dumps({"type": "reset", "data": {}})))
        sock.settimeout(0.2)
        with contextlib.suppress(TimeoutError, OSError):
            for _ in range(5000):
                sock.sendall(frame('{"type":"schema"}'))
        began = time.monotonic()
        while time.monotonic() - began < 6 and requests.get(running.url + "/health", timeout=10).json()["sessions"]:
            time.sleep(0.2)
        assert requests.get(running.url + "/health", timeout=10).json()["sessions"] == 0
        assert time.monotonic() - began < 6
        sock.close()
    finally:
        running.stop()
