"""RapidAPI hub behind StableToolBench's virtual protocol: calls per second, served versus the floor.

A fixed list of 200 calls (every few APIs across the hub's 49 categories, each with its example
arguments) is made three ways, a fresh session per round:

- floor: ``hub.call`` in-process (argument checks and the handler, no protocol);
- protocol: ``POST /virtual`` through the Flask test client (request parsing, names, JSON; no HTTP);
- served: ``POST /virtual`` over HTTP to ``ServedApp`` on 127.0.0.1 (what ``toolbench serve rapidapi``
  runs), one ``requests.post`` per call with the ``toolbench_key`` header, as StableToolBench's env sends.
"""

from __future__ import annotations

import json
import time
from typing import Any

import requests

from toolbench.core.transport import ServedApp
from toolbench.mock_services import create_service_app
from toolbench.mock_services.rapidapi.catalog import example_arguments, hub
from toolbench.mock_services.rapidapi.functions import change_name, standardize
from toolbench.mock_services.rapidapi.hub import Api, Tool, call

CALLS = 200
ROUNDS = 3


def fixed_calls(count: int = CALLS) -> list[tuple[Tool, Api, dict[str, Any]]]:
    """``count`` calls spread evenly over the hub's APIs (in catalog order), with example arguments."""
    every = [(tool, api) for tool in hub().tools for api in tool.apis]
    step = max(1, len(every) // count)
    return [(tool, api, example_arguments(api)) for tool, api in every[::step][:count]]


def payload(tool: Tool, api: Api, arguments: dict[str, Any], key: str) -> dict[str, Any]:
    """The body StableToolBench's env posts for one call."""
    return {
        "category": tool.category,
        "tool_name": tool.standard_name,
        "api_name": change_name(standardize(api.name)),
        "tool_input": json.dumps(arguments),
        "strip": "truncate",
        "toolbench_key": key,
    }


def floor_rate(calls: list[tuple[Tool, Api, dict[str, Any]]]) -> float:
    start = time.perf_counter()
    for _ in range(ROUNDS):
        sessions: dict[str, dict[str, Any]] = {}
        for tool, api, arguments in calls:
            call(tool, api, arguments, sessions.setdefault(tool.standard_name, {}))
    return ROUNDS * len(calls) / (time.perf_counter() - start)


def protocol_rate(calls: list[tuple[Tool, Api, dict[str, Any]]]) -> float:
    client = create_service_app("rapidapi").test_client()
    start = time.perf_counter()
    for round_number in range(ROUNDS):
        key = f"bench-protocol-{round_number}"
        for tool, api, arguments in calls:
            body = json.dumps(payload(tool, api, arguments, key))
            response = client.post(
                "/virtual", data=body, headers={"toolbench_key": key}, content_type="application/json"
            )
            assert response.status_code == 200, response.data[:200]
    return ROUNDS * len(calls) / (time.perf_counter() - start)


def served_rate(calls: list[tuple[Tool, Api, dict[str, Any]]]) -> tuple[float, int]:
    """Calls per second over HTTP, and how many of the last round's answers had an empty ``error``."""
    with ServedApp(create_service_app("rapidapi")) as served:
        url = f"{served.url}/virtual"
        ok = 0
        start = time.perf_counter()
        for round_number in range(ROUNDS):
            key = f"bench-served-{round_number}"
            ok = 0
            for tool, api, arguments in calls:
                response = requests.post(
                    url, json=payload(tool, api, arguments, key), headers={"toolbench_key": key}, timeout=30
                )
                response.raise_for_status()
                ok += response.json()["error"] == ""
        return ROUNDS * len(calls) / (time.perf_counter() - start), ok


def main() -> dict[str, Any]:
    calls = fixed_calls()
    for tool, api, arguments in calls:  # warm the world and every handler's caches
        call(tool, api, arguments, {})
    floor = floor_rate(calls)
    protocol = protocol_rate(calls)
    served, ok = served_rate(calls)
    print(
        f"RapidAPI virtual server, {len(calls)} calls x {ROUNDS}: served on 127.0.0.1 {served:8.1f} calls/s   "
        f"test client {protocol:8.1f}/s   floor (hub.call in-process) {floor:8.1f}/s   "
        f"({ok}/{len(calls)} answered without error)"
    )
    return {
        "calls": len(calls),
        "rounds": ROUNDS,
        "answered_without_error": ok,
        "served_calls_per_s": round(served, 1),
        "test_client_calls_per_s": round(protocol, 1),
        "floor_calls_per_s": round(floor, 1),
    }


if __name__ == "__main__":
    main()
