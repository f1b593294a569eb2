"""Requests the hub cannot read are 400s in the protocol's error shape (``{"error": ..., "response":
""}``), never 500s: a query string that is not UTF-8, on the virtual server and on the gateway. Sent
over a real socket to the server ``toolbench serve`` runs: a test client would clean them up."""

from __future__ import annotations

import json

import pytest

from tests.fuzz_http import send
from toolbench.core.server import make_production_server
from toolbench.mock_services.rapidapi.virtual import create_app

REQUESTS = [
    b"GET /campaigns/search?q=\xff HTTP/1.1\r\nX-RapidAPI-Host: adpulse-metrics.p.rapidapi.com\r\n",
    b"POST /hash?q=caf\xe9 HTTP/1.1\r\nX-RapidAPI-Host: cipherkit.p.rapidapi.com\r\nContent-Length: 2\r\n",
    b"GET /v1/performance?x=\xc3\x28 HTTP/1.1\r\nX-RapidAPI-Host: campaign-ledger.p.rapidapi.com\r\n",
]


@pytest.fixture(scope="module")
def served():
    with make_production_server(create_app()) as server:
        yield server


@pytest.mark.parametrize("head", REQUESTS)
def test_a_query_that_is_not_utf8_is_a_400_in_the_protocols_shape(served, head):
    body = b"{}" if b"Content-Length" in head else b""
    status, answer = send(served.port, head + b"Host: x\r\nConnection: close\r\n\r\n" + body)
    assert status == 400 and json.loads(answer) == {
        "error": "Bad Request: the request is not valid UTF-8",
        "response": "",
    }
    reset = b"POST /reset HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
    assert send(served.port, reset)[0] == 200  # and it keeps serving
