"""The heavy lane: large parses, snapshots and restores run one at a time across all sessions, in turn by
session, so the event loop and light requests keep most of the GIL; and a request body's JSON is bounded
in items and number sizes before it is parsed."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import gymnasium as gym
import requests

from tests.env_server.conftest import serve
from tests.env_server.test_http import post
from toolbench.env_server.heavy_lane import HeavyLane
from toolbench.envs.home_search import HomeSearchEnv

HEAVY_RESTORE_ID = "toolbench-test/HeavyRestoreHomeSearch-v0"


class HeavyRestoreHomeSearchEnv(HomeSearchEnv):
    """HomeSearch whose set_state spins the CPU in Python for 0.2 s, as a large workbook's restore does, and
    counts how many run at once."""

    running = 0
    most_at_once = 0
    lock = threading.Lock()

    def set_state(self, state: Any) -> None:
        cls = type(self)
        with cls.lock:
            cls.running += 1
            cls.most_at_once = max(cls.most_at_once, cls.running)
        try:
            end = time.perf_counter() + 0.2
            while time.perf_counter() < end:
                pass
            super().set_state(state)
        finally:
            with cls.lock:
                cls.running -= 1


if HEAVY_RESTORE_ID not in gym.registry:
    gym.register(id=HEAVY_RESTORE_ID, entry_point=HeavyRestoreHomeSearchEnv)


def test_the_lane_runs_one_job_at_a_time_and_serves_keys_in_turn():
    lane = HeavyLane(slots=1)
    order: list[str] = []
    at_once, most = [0], [0]
    gate = threading.Event()

    def job(key: str) -> None:
        with lane.held(key):
            at_once[0] += 1
            most[0] = max(most[0], at_once[0])
            if key == "first":
                gate.wait(5)
            order.append(key)
            time.sleep(0.01)
            at_once[0] -= 1

    first = threading.Thread(target=job, args=("first",))
    first.start()
    time.sleep(0.05)
    threads = [threading.Thread(target=job, args=("hog",)) for _ in range(5)]
    for thread in threads:
        thread.start()
        time.sleep(0.01)
    late = threading.Thread(target=job, args=("victim",))
    late.start()
    time.sleep(0.05)
    gate.set()
    for thread in [first, *threads, late]:
        thread.join(10)
    assert most[0] == 1
    assert order.index("victim") <= 2, order  # in turn with the hog's queue, not behind all of it


def test_restores_of_every_session_take_the_lane_one_at_a_time_and_a_light_step_is_not_held_up():
    running = serve(HEAVY_RESTORE_ID)
    try:
        sessions = [post(running.url, "/reset", {}).headers["X-Session-Id"] for _ in range(5)]
        snapshot = requests.get(running.url + "/state", headers={"X-Session-Id": sessions[0]}, timeout=10).json()
        HeavyRestoreHomeSearchEnv.most_at_once = 0
        stop = threading.Event()

        def restore_forever(session: str) -> None:
            while not stop.is_set():
                post(running.url, "/restore", {"snapshot": snapshot["snapshot"]}, session)

        loops = [threading.Thread(target=restore_forever, args=(s,)) for s in sessions[1:]]
        for thread in loops:
            thread.start()
        time.sleep(0.3)
        latencies = []
        for _ in range(10):
            began = time.perf_counter()
            assert post(running.url, "/step", {"action": "API.set_location('Raleigh')"}, sessions[0]).ok
            latencies.append(time.perf_counter() - began)
        stop.set()
        for thread in loops:
            thread.join(10)
        assert HeavyRestoreHomeSearchEnv.most_at_once == 1
        assert sorted(latencies)[5] < 0.1, latencies
    finally:
        running.stop()


def test_a_body_of_too_many_json_items_is_refused_before_it_is_parsed(server):
    session = post(server.url, "/reset", {}).headers["X-Session-Id"]
    headers = {"X-Session-Id": session, "Content-Type": "application/json"}
    items = b'{"action": "x", "request_id": [' + b"{}," * 2_000_000 + b"{}]}"
    began = time.perf_counter()
    reply = requests.post(server.url + "/step", data=items, headers=headers, timeout=30)
    assert (reply.status_code, reply.json()["code"]) == (413, "TOO_MANY_ITEMS")
    assert time.perf_counter() - began < 2
    bignums = b'{"action": "x", "request_id": [' + b",".join([b"9" * 4000] * 1000) + b"]}"
    reply = requests.post(server.url + "/step", data=bignums, headers=headers, timeout=30)
    assert (reply.status_code, reply.json()["code"]) == (400, "INVALID_JSON")
    commas = json.dumps({"action": "," * 131_072}).encode()  # the longest action, all commas, still goes
    assert requests.post(server.url + "/step", data=commas, headers=headers, timeout=30).status_code == 200
