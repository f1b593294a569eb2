"""A session's slowness costs no other session: slow steps and a huge state leave the others' steps fast."""

from __future__ import annotations

import threading
import time

import requests

from tests.env_server.conftest import BIG_STATE_ID, SLOW_ID, serve
from tests.env_server.test_http import post


def step_times(url: str, session: str, count: int, pause: float = 0.05) -> list[float]:
    took = []
    for _ in range(count):
        began = time.perf_counter()
        reply = post(url, "/step", {"action": "API.set_location('Raleigh')"}, session)
        took.append(time.perf_counter() - began)
        assert reply.status_code == 200, reply.text
        time.sleep(pause)
    return took


def test_sixteen_sessions_in_slow_steps_leave_a_seventeenth_fast():
    """Slow sessions must not hold the threads other sessions' steps need (a shared pool of 8 would)."""
    running = serve(SLOW_ID)
    try:
        slow = [post(running.url, "/reset", {}).headers["X-Session-Id"] for _ in range(16)]
        fast = post(running.url, "/reset", {}).headers["X-Session-Id"]
        answers: list[int] = []
        threads = [
            threading.Thread(
                target=lambda s=s: answers.append(post(running.url, "/step", {"action": "sleep2"}, s).status_code)
            )
            for s in slow
        ]
        for thread in threads:
            thread.start()
        time.sleep(0.3)  # every slow step is running
        took = step_times(running.url, fast, 5)
        for thread in threads:
            thread.join()
        assert answers == [200] * 16
        assert max(took) < 0.5, took
    finally:
        running.stop()


def test_a_state_too_large_to_snapshot_is_refused_within_its_budget_and_others_stay_fast():
    """A huge state is refused at the codec's budget, on its session's thread, while other sessions step."""
    running = serve(BIG_STATE_ID)
    try:
        big = post(running.url, "/reset", {}).headers["X-Session-Id"]
        fast = post(running.url, "/reset", {}).headers["X-Session-Id"]
        result: list[requests.Response] = []
        began = time.perf_counter()
        thread = threading.Thread(target=lambda: result.append(
            requests.get(running.url + "/state", headers={"X-Session-Id": big}, timeout=60)))  # fmt: skip
        thread.start()
        took = step_times(running.url, fast, 10)
        thread.join()
        assert (result[0].status_code, result[0].json()["code"]) == (413, "STATE_TOO_LARGE")
        assert time.perf_counter() - began < 10
        assert max(took) < 0.5, took
    finally:
        running.stop()
