"""A bounded, seeded fuzz of every served fake over real HTTP: 100 broken requests each (``make
fuzz`` sends 2,000)."""

from __future__ import annotations

import pytest
from flask import Flask, request

from tests.fuzz_http import fuzz_served
from toolbench.mock_services import SERVICES


@pytest.mark.parametrize("service", sorted(SERVICES))
def test_broken_requests_get_no_5xx_and_the_fake_keeps_serving(service):
    report = fuzz_served(service, 100)
    assert report.requests == 100 and not report.failures, report.failures[:5]
    assert sum(n for status, n in report.statuses.items() if 400 <= status < 500) > 20  # they were refused


def test_the_fuzzer_reports_5xx_answers_and_a_fake_that_stops_serving():
    app = Flask("fragile")
    broken = []

    @app.route("/<path:path>", methods=["GET", "POST", "PUT", "DELETE", "PATCH"])
    def anything(path: str) -> str:
        if broken:
            raise RuntimeError("broken")
        if request.query_string and b"\xff" in request.query_string:
            broken.append(1)  # from then on nothing works
        request.args.get("x")  # a query that is not UTF-8 raises here: a 500
        return "ok"

    report = fuzz_served("webshop", 100, app=app)
    assert report.server_errors > 0 and report.health_failures > 0
    assert any(failure.startswith("500") for failure in report.failures)
