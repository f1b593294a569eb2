"""Requests the site cannot read are 400s (Flask's HTML error page), never 500s: a query string that
is not UTF-8, on every page that reads one. Sent over a real socket to the server ``toolbench serve``
runs: a test client would clean them up."""

from __future__ import annotations

import pytest

from tests.fuzz_http import send
from toolbench.core.server import make_production_server
from toolbench.mock_services.webshop.app import create_app

from .shopdata import GOAL, small_shop

PAGES = [
    "/search/fixed_0?search_query=\xfe\xff",
    "/search_results/fixed_0/1?keywords=caf\xe9",
    "/search_results/fixed_0/1?keywords=tea&page=\xc3\x28",
    "/item_page/fixed_0/{asin}?keywords=\xed\xa0\x80&options=%7B%7D",
    "/item_sub_page/fixed_0/{asin}/Reviews?keywords=\x80abc",
    "/done/fixed_0/{asin}?options=\xff",
]


@pytest.fixture(scope="module")
def served():
    shop = small_shop()
    with make_production_server(create_app(shop, [GOAL])) as server:
        yield server, shop.products[0].asin


@pytest.mark.parametrize("target", PAGES)
def test_a_query_that_is_not_utf8_is_a_400_page(served, target):
    server, asin = served
    request = f"GET {target.format(asin=asin)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode("latin-1")
    status, body = send(server.port, request)
    assert status == 400 and b"<title>400 Bad Request</title>" in body and b"not valid UTF-8" in body
    assert send(server.port, b"GET /fixed_0 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")[0] == 200
