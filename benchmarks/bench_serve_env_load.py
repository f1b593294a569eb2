"""``toolbench serve env`` under load: 50 clients playing whole episodes for 20 s, then malformed requests.

``toolbench serve env --task HomeSearch --env-kwargs '{"mode": "interactive"}' --port 0`` runs as a
subprocess (what users run; the server does not share the clients' GIL). Then:

1. HTTP load: 50 client threads, each with its own keep-alive connection and its own session, play
   the oracle's episodes of the test tasks in turn for ``seconds`` (20 by default): ``POST /reset``
   with a ``task_id``, one ``POST /step`` per action, and at every fourth episode a ``GET /state``
   and a ``POST /restore`` of that snapshot mid-episode. Every request is valid, so anything but a
   2xx is an error, and so is a finished episode whose reward is not the oracle's 1.0 (a session
   that saw another's state would lose it). Counted: answers, errors, episodes, requests/s, p50/p99.
2. WebSocket load: the same with 50 OpenEnv-protocol WebSocket clients (``/ws``, one session per
   connection), as openenv-core's client speaks it.
3. malformed: 2,000 malformed requests from bench_serve_load's generator, aimed at ``/step``, ``/reset``
   and ``/state`` with a live session's header: each must get a non-5xx answer or a close.
4. after: a new session still plays an episode to reward 1.0; the server printed no traceback.

The clients run in this one process; on a small machine they, not the server, may bound throughput.
``python benchmarks/bench_serve_env_load.py --seconds 5`` for a quick run.
"""

from __future__ import annotations

import argparse
import http.client
import json
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import bench_serve_load
from bench_serve_load import Request, run_malformed

CLIENTS = 50
TASK = "HomeSearch"
ENV_KWARGS = {"mode": "interactive"}


@dataclass
class ClientStats:
    answered: int = 0
    errors: int = 0
    episodes: int = 0
    wrong_rewards: int = 0
    restores: int = 0
    latencies: list[float] = field(default_factory=list)
    first_error: str | None = None

    def fail(self, what: str) -> None:
        self.errors += 1
        self.first_error = self.first_error or what


def oracle_plans() -> list[tuple[str, list[str]]]:
    """(task id, the oracle's actions) for every test task."""
    import gymnasium as gym

    import toolbench  # noqa: F401 (registers the ids)

    env = gym.make(f"toolbench/{TASK}-v0", **ENV_KWARGS).unwrapped
    return [(task.id, env.oracle_actions(task)) for task in env.tasks]


def in_process_floor(plans: list[tuple[str, list[str]]], seconds: float = 3.0) -> float:
    """Env calls per second for the same resets and steps in this process, with no server: the floor."""
    import gymnasium as gym

    env = gym.make(f"toolbench/{TASK}-v0", **ENV_KWARGS).unwrapped
    calls, index = 0, 0
    deadline = time.perf_counter() + seconds
    began = time.perf_counter()
    while time.perf_counter() < deadline:
        task_id, actions = plans[index % len(plans)]
        index += 1
        env.reset(options={"task_id": task_id})
        for action in actions:
            env.step(action)
        calls += 1 + len(actions)
    return round(calls / (time.perf_counter() - began), 1)


def start_server(log: Any, clients: int) -> tuple[subprocess.Popen[bytes], int]:
    options = ["--task", TASK, "--env-kwargs", json.dumps(ENV_KWARGS), "--max-sessions", str(clients + 8),
               "--no-access-log"]  # fmt: skip
    return bench_serve_load.start_server("env", log, options)


class HttpClient:
    """One client's keep-alive connection and session."""

    def __init__(self, port: int):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.session: str | None = None

    def call(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self.session:
            headers["X-Session-Id"] = self.session
        data = None if body is None else json.dumps(body).encode()
        try:
            self.connection.request(method, path, data, headers)
            response = self.connection.getresponse()
            payload = response.read()
        except (OSError, http.client.HTTPException):
            self.connection.close()
            raise
        if response.status != 200:
            raise RuntimeError(f"{method} {path}: {response.status} {payload[:200]!r}")
        self.session = response.getheader("X-Session-Id") or self.session
        return json.loads(payload)

    def reset(self, task_id: str) -> dict[str, Any]:
        return self.call("POST", "/reset", {"task_id": task_id})

    def step(self, action: str) -> dict[str, Any]:
        return self.call("POST", "/step", {"action": action})

    def state(self) -> dict[str, Any]:
        return self.call("GET", "/state")

    def restore(self, snapshot: str) -> dict[str, Any]:
        return self.call("POST", "/restore", {"snapshot": snapshot})

    def close(self) -> None:
        if self.session:
            self.call("DELETE", "/session")
        self.connection.close()


class WsClient:
    """One OpenEnv-protocol WebSocket connection: one session."""

    def __init__(self, port: int):
        from websockets.sync.client import connect

        self.connection = connect(f"ws://127.0.0.1:{port}/ws", max_size=None, open_timeout=60)
        self.ws = self.connection.__enter__()

    def call(self, kind: str, data: Any = None) -> dict[str, Any]:
        self.ws.send(json.dumps({"type": kind} if data is None else {"type": kind, "data": data}))
        reply = json.loads(self.ws.recv(timeout=60))
        if reply["type"] == "error":
            raise RuntimeError(f"{kind}: {reply['data']}")
        return reply["data"]

    def reset(self, task_id: str) -> dict[str, Any]:
        return self.call("reset", {"task_id": task_id})

    def step(self, action: str) -> dict[str, Any]:
        return self.call("step", {"text": action})

    def state(self) -> dict[str, Any]:
        return self.call("state")

    def restore(self, snapshot: str) -> dict[str, Any]:
        return self.call("restore", {"snapshot": snapshot})

    def close(self) -> None:
        self.ws.send(json.dumps({"type": "close"}))
        self.connection.__exit__(None, None, None)


def play(client: Any, plans: list[tuple[str, list[str]]], deadline: float, start: int, stats: ClientStats) -> None:
    """Oracle episodes in turn until the deadline; every fourth one restores a mid-episode snapshot."""

    def timed(call: Any, *args: Any) -> dict[str, Any]:
        began = time.perf_counter()
        result = call(*args)
        stats.latencies.append(time.perf_counter() - began)
        stats.answered += 1
        return result

    index = start
    while time.perf_counter() < deadline:
        task_id, actions = plans[index % len(plans)]
        index += 1
        try:
            timed(client.reset, task_id)
            result: dict[str, Any] = {}
            for number, action in enumerate(actions):
                if index % 4 == 0 and number == len(actions) // 2:
                    snapshot = timed(client.state)["snapshot"]
                    timed(client.step, action)  # a step the restore takes back
                    timed(client.restore, snapshot)
                    stats.restores += 1
                result = timed(client.step, action)
            stats.episodes += 1
            if not result.get("done") or result.get("reward") != 1.0:
                stats.wrong_rewards += 1
        except Exception as exc:  # counted and shown: the target is none
            stats.fail(f"{type(exc).__name__}: {exc}")


def run_load(make_client: Any, plans: list[tuple[str, list[str]]], seconds: float, clients: int) -> dict[str, Any]:
    stats = [ClientStats() for _ in range(clients)]
    connected = [make_client() for _ in range(clients)]
    deadline = time.perf_counter() + seconds
    threads = [
        threading.Thread(target=play, args=(connected[i], plans, deadline, i * 7, stats[i])) for i in range(clients)
    ]
    elapsed = bench_serve_load.run_threads(threads)
    for client, stat in zip(connected, stats):
        try:
            client.close()
        except Exception as exc:
            stat.fail(f"close: {exc}")
    latencies = sorted(x for s in stats for x in s.latencies)
    answered = sum(s.answered for s in stats)

    return {
        "clients": clients,
        "seconds": round(elapsed, 1),
        "answered": answered,
        "errors": sum(s.errors for s in stats),
        "first_error": next((s.first_error for s in stats if s.first_error), None),
        "episodes": sum(s.episodes for s in stats),
        "wrong_rewards": sum(s.wrong_rewards for s in stats),
        "restores": sum(s.restores for s in stats),
        "requests_per_s": round(answered / elapsed, 1),
        "p50_ms": bench_serve_load.percentile_ms(latencies, 0.50),
        "p99_ms": bench_serve_load.percentile_ms(latencies, 0.99),
    }


def plays_one_episode(port: int, plan: tuple[str, list[str]]) -> bool:
    """A new session plays the oracle's episode of one task to its reward of 1.0."""
    client = HttpClient(port)
    try:
        client.reset(plan[0])
        results = [client.step(action) for action in plan[1]]
        client.close()
    except Exception:
        return False
    return results[-1]["done"] is True and results[-1]["reward"] == 1.0


def malformed_targets(port: int) -> list[Request]:
    """Valid requests on a live session, for the malformed-request generator to break."""
    client = HttpClient(port)
    client.reset(oracle_plans()[0][0])
    headers = {"X-Session-Id": client.session or "", "Content-Type": "application/json"}
    step = json.dumps({"action": "API.set_location('Raleigh')"}).encode()
    return [
        Request("POST", "/step", headers, step),
        Request("POST", "/reset", headers, b"{}"),
        Request("GET", "/state", headers, b""),
    ]


def main(seconds: float = 20.0, clients: int = CLIENTS) -> dict[str, Any]:
    plans = oracle_plans()
    floor = in_process_floor(plans)
    with tempfile.TemporaryFile() as log:  # the server's log and any traceback
        process, port = start_server(log, clients)
        try:
            results: dict[str, Any] = {
                "http": run_load(lambda: HttpClient(port), plans, seconds, clients),
                "websocket": run_load(lambda: WsClient(port), plans, seconds, clients),
                "malformed": run_malformed(port, malformed_targets(port)),
            }
            results["answers_after"] = plays_one_episode(port, plans[0])
        finally:
            process.terminate()
            process.wait(timeout=20)
        log.seek(0)
        results["server_tracebacks"] = log.read().count(b"Traceback (most recent call last)")
    results["in_process_calls_per_s"] = floor
    print(
        f"toolbench serve env --task {TASK} (uvicorn): {clients} clients for {seconds:g} s each over HTTP and WebSocket"
    )
    print(f"floor: the same resets and steps in this process, no server: {floor:.1f} calls/s")
    print(f"{'transport':10s} {'answered':>9s} {'req/s':>8s} {'p50 ms':>7s} {'p99 ms':>7s} {'episodes':>8s} "
          f"{'restores':>8s} {'wrong':>5s} {'errors':>6s}")  # fmt: skip
    for name in ("http", "websocket"):
        load = results[name]
        print(f"{name:10s} {load['answered']:9d} {load['requests_per_s']:8.1f} {load['p50_ms']:7.2f} "
              f"{load['p99_ms']:7.2f} {load['episodes']:8d} {load['restores']:8d} {load['wrong_rewards']:5d} "
              f"{load['errors']:6d}")  # fmt: skip
        if load["first_error"]:
            print(f"  first error: {load['first_error']}")
    bad = results["malformed"]
    print(f"malformed: {bad['sent']} sent, answers {bad['statuses']}, 5xx {bad['5xx']}, errors {bad['errors']}; "
          f"a new episode after: {'yes' if results['answers_after'] else 'NO'}; "
          f"server tracebacks: {results['server_tracebacks']}")  # fmt: skip
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--clients", type=int, default=CLIENTS)
    args = parser.parse_args()
    main(args.seconds, args.clients)
