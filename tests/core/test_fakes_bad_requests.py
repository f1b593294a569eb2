"""Requests a fake cannot read are the client's error (400), never a 500: a query string that is
not UTF-8, a broken chunked body. Sent over a real socket: a test client would clean them up."""

from __future__ import annotations

import socket

import pytest

from toolbench.core.transport import ServedApp
from toolbench.mock_services import create_service_app, service_api_key

REQUESTS = {
    "catapi": b"GET /v1/favourites?x=\xff HTTP/1.1\r\n",
    "openweather": b"GET /data/2.5/weather?q=\xff&appid={key} HTTP/1.1\r\n",
    "chunked": b"POST /v1/votes HTTP/1.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n",
}


def status_line(service: str, head: bytes, body: bytes = b"") -> bytes:
    key = service_api_key(service).encode()
    with ServedApp(create_service_app(service)) as served, socket.create_connection(("127.0.0.1", served.port)) as sock:
        sock.sendall(
            head.replace(b"{key}", key) + b"Host: x\r\nx-api-key: " + key + b"\r\nConnection: close\r\n\r\n" + body
        )
        return sock.recv(200).split(b"\r\n")[0]


@pytest.mark.parametrize("name", sorted(REQUESTS))
def test_unreadable_requests_are_400s(name):
    service = "catapi" if name == "chunked" else name
    body = b"zz\r\nabc\r\n0\r\n\r\n" if name == "chunked" else b""
    assert status_line(service, REQUESTS[name], body).startswith(b"HTTP/1.1 400")
