"""Served fakes under load: ``toolbench serve`` (waitress) with 50 concurrent clients, then malformed requests.

For each of OpenWeather, The Cat API and Google Sheets, ``toolbench serve SERVICE --port 0 --threads 8``
runs as a subprocess: exactly what users run, and the server does not share the clients' GIL (a
server thread in this process would). Then:

1. load: 50 client threads, each with its own keep-alive ``http.client`` connection, send valid
   requests for ``seconds`` (20 by default): OpenWeather's and the Cat API's are the test tasks'
   reference curl commands (``env.parse_action(reference).request``, as bench_rest_tasks.py does);
   Sheets' are the requests real gspread makes for a read/update/format mix on the demo workbook.
   Counted: answers by status class, transport errors, throughput and p50/p99 latency. 4xx answers
   are expected (the Cat API's references delete favourites that a previous pass already deleted);
   the target is no 5xx and no errors.
2. malformed: 2,000 requests, each on a new connection (8 at a time), from a seeded mix of garbage
   request lines, bad percent-encoding, non-UTF-8 query bytes, invalid JSON bodies, broken chunked
   bodies, unsupported transfer codings, oversized bodies, wrong methods and huge headers. Each must
   be answered with a non-5xx status or closed; the 5xx count must be 0.
3. after: one valid request must still be answered with a 2xx.

The clients run in this one process; on a small machine they, not the server, may bound throughput.
``python benchmarks/bench_serve_load.py --seconds 5`` for a quick run.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import random
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

CLIENTS = 50
MALFORMED = 2000
THREADS = 8
MALFORMED_BODY_LIMIT = 10 * 1024 * 1024  # the server's --max-body default: larger bodies must be a 413


@dataclass(frozen=True)
class Request:
    method: str
    target: str  # path and query, ASCII (non-ASCII %-escaped)
    headers: dict[str, str]
    body: bytes


@dataclass
class LoadStats:
    statuses: Counter[str] = field(default_factory=Counter)
    errors: int = 0
    latencies: list[float] = field(default_factory=list)


def _ascii_target(url: str) -> str:
    """Path and query of ``url``, non-ASCII and spaces %-escaped (http.client sends ASCII only)."""
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return re.sub(r"[^\x21-\x7e]", lambda match: quote(match[0]), target)


def _from_http_request(request: Any) -> Request:
    skip = {"host", "content-length", "connection"}  # http.client sets these for the served address
    headers = {name: value for name, value in request.headers if name.lower() not in skip}
    return Request(request.method, _ascii_target(request.url), headers, request.body)


def rest_requests(task_name: str) -> list[Request]:
    """The test tasks' reference requests of a curl env (OpenWeather, CatAPI)."""
    import gymnasium as gym

    import toolbench

    env = gym.make(f"toolbench/{task_name}-v0").unwrapped
    return [
        _from_http_request(env.parse_action(task.references[0]).request) for task in toolbench.load_tasks(task_name)
    ]


def sheets_requests() -> list[Request]:
    """The requests real gspread sends for a read/update/format mix on the served demo workbook."""
    import gspread

    from toolbench.core.transport import session_for
    from toolbench.mock_services.sheets import create_demo_app, demo_store, make_router

    router = make_router(create_demo_app())
    sent: list[Any] = []

    class Recorder:
        def send(self, request: Any) -> Any:
            sent.append(request)
            return router.send(request)

    client = gspread.Client(auth=None, session=session_for(Recorder()))  # type: ignore[arg-type]
    sheet = client.open_by_key(next(iter(demo_store().spreadsheets))).sheet1
    sheet.get_all_values()
    sheet.acell("B2")
    sheet.get("A1:C3")
    sheet.batch_get(["A1:A5", "C1:C5"])
    sheet.update([[1, 2], [3, 4]], "E2")  # the same cells every time: the workbook does not grow
    sheet.format("A1:C1", {"textFormat": {"bold": True}})
    return [_from_http_request(request) for request in sent]


SERVICES = {
    "openweather": lambda: rest_requests("OpenWeather"),
    "catapi": lambda: rest_requests("CatAPI"),
    "sheets": sheets_requests,
}


def start_server(service: str, log: Any, options: Sequence[str] = ()) -> tuple[subprocess.Popen[bytes], int]:
    """``toolbench serve SERVICE [options]`` on a free port; the process and the port its banner shows."""
    threads = [] if service == "env" else ["--threads", str(THREADS)]  # an env session has a thread of its own
    command = [sys.executable, "-m", "toolbench", "serve", service, "--port", "0", *threads, *options]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log)
    banner = process.stdout.readline().decode() if process.stdout else ""
    found = re.search(r"http://127\.0\.0\.1:(\d+)", banner)
    if not found:
        process.kill()
        raise RuntimeError(f"toolbench serve {service} printed no address: {banner!r}")
    return process, int(found.group(1))


def _status_class(status: int) -> str:
    return f"{status // 100}xx" if 200 <= status < 600 else "other"


def client_loop(port: int, requests: list[Request], deadline: float, start: int, stats: LoadStats) -> None:
    """One client: requests in turn on one keep-alive connection (a new one after an error or close)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    index = start
    while time.perf_counter() < deadline:
        request = requests[index % len(requests)]
        index += 1
        began = time.perf_counter()
        try:
            connection.request(request.method, request.target, request.body or None, request.headers)
            response = connection.getresponse()
            response.read()
            stats.statuses[_status_class(response.status)] += 1
            if response.will_close:
                connection.close()
        except (OSError, http.client.HTTPException):
            stats.errors += 1
            connection.close()
            continue
        stats.latencies.append(time.perf_counter() - began)
    connection.close()


def run_threads(threads: list[threading.Thread]) -> float:
    """Start every thread, wait for them all; the seconds that took."""
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - began


def percentile_ms(latencies: list[float], q: float) -> float:
    """The ``q`` quantile of sorted latencies in seconds, in milliseconds."""
    return round(latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000, 2) if latencies else float("nan")


def run_load(port: int, requests: list[Request], seconds: float, clients: int = CLIENTS) -> dict[str, Any]:
    stats = [LoadStats() for _ in range(clients)]
    deadline = time.perf_counter() + seconds
    threads = [
        threading.Thread(target=client_loop, args=(port, requests, deadline, i * 7, stats[i])) for i in range(clients)
    ]
    elapsed = run_threads(threads)
    statuses: Counter[str] = sum((s.statuses for s in stats), Counter())
    latencies = sorted(x for s in stats for x in s.latencies)
    answered = sum(statuses.values())
    return {
        "clients": clients,
        "seconds": round(elapsed, 1),
        "answered": answered,
        "statuses": dict(sorted(statuses.items())),
        "not_2xx_or_4xx": answered - statuses["2xx"] - statuses["4xx"],
        "errors": sum(s.errors for s in stats),
        "requests_per_s": round(answered / elapsed, 1),
        "p50_ms": percentile_ms(latencies, 0.50),
        "p99_ms": percentile_ms(latencies, 0.99),
    }


def _head(request: Request, method: str | None = None, target: bytes | None = None) -> bytes:
    """The request line and headers of ``request`` (its Content-Type left out), without the blank line."""
    line = f"{method or request.method} ".encode() + (target or request.target.encode()) + b" HTTP/1.1\r\n"
    headers = [f"{name}: {value}\r\n" for name, value in request.headers.items() if name.lower() != "content-type"]
    return line + b"Host: 127.0.0.1\r\n" + "".join(headers).encode("latin-1")


def malformed_request(rng: random.Random, valid: list[Request]) -> bytes:
    """One malformed but fully sent request (never a half-sent one: that would only wait for the timeout)."""
    base = rng.choice(valid)
    path = base.target.split("?")[0].encode()
    json_head = b"Content-Type: application/json\r\n"
    kind = rng.randrange(12)
    if kind == 0:  # garbage request line
        return bytes(rng.randrange(1, 256) for _ in range(rng.randrange(1, 80))).replace(b"\r\n", b"") + b"\r\n\r\n"
    if kind == 1:  # a TLS hello, a lowercase method, an HTTP/2 preface
        return rng.choice(
            [
                b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n",
                b"get / HTTP/1.1\r\n\r\n",
                b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
            ]
        )
    if kind == 2:  # bad percent-encoding
        return _head(base, target=path + b"?q=%zz%&limit=%FF%&x=%") + b"\r\n"
    if kind == 3:  # a query string that is not UTF-8
        return _head(base, target=path + b"?q=\xff\xfe&limit=\xc3(") + b"\r\n"
    if kind == 4:  # invalid JSON bodies
        body = rng.choice([b"{bad", b'{"a": ', b"\xff\xfe{}", b"[" * 5000, b"1" * 5000, b'{"values": [[1e999]]}'])
        return _head(base, method="POST") + json_head + b"Content-Length: %d\r\n\r\n" % len(body) + body
    if kind == 5:  # broken chunked bodies (not a huge chunk size: the server waits for its data, as it should)
        body = rng.choice(
            [
                b"zz\r\nabc\r\n0\r\n\r\n",
                b"5\r\nabc\r\n0\r\n\r\n",
                b"-1\r\n\r\n",
                b"5\r\nabcdefg\r\n0\r\n\r\n",
                b"0x3\r\nabc\r\n0\r\n\r\n",
            ]
        )
        return _head(base, method="POST") + json_head + b"Transfer-Encoding: chunked\r\n\r\n" + body
    if kind == 6:  # a transfer coding the server does not speak
        return _head(base, method="POST") + b"Transfer-Encoding: gzip, chunked, br\r\n\r\n"
    if kind == 7:  # a body over --max-body, announced (the server answers 413 before reading it)
        return _head(base, method="POST") + b"Content-Length: %d\r\n\r\n" % (MALFORMED_BODY_LIMIT + 1) + b"x" * 1000
    if kind == 8:  # wrong and unknown methods
        method = rng.choice(["PATCH", "PUT", "TRACE", "FOO", "CONNECT", "OPTIONS"])
        return _head(base, method=method) + b"\r\n"
    if kind == 9:  # huge headers (over waitress's 256 KB) and many headers
        if rng.random() < 0.5:
            return _head(base) + b"X-Big: " + b"a" * 300_000 + b"\r\n\r\n"
        return _head(base) + b"".join(b"X-H%d: v\r\n" % i for i in range(3000)) + b"\r\n"
    if kind == 10:  # invalid headers and lengths
        return (
            _head(base)
            + rng.choice([b"Bad Header\r\n", b"Content-Length: -5\r\n", b"Content-Length: 1, 2\r\n", b": x\r\n"])
            + b"\r\n"
        )
    # mutated paths: NUL, traversal, very long
    target = rng.choice([path + b"%00", b"/../../etc/passwd", b"/" + b"a" * 60_000, path + b"/%C0%AF", b"*"])
    return _head(base, target=target) + b"\r\n"


def send_raw(port: int, data: bytes) -> int | None:
    """The status answered to raw bytes on a new connection, or None if the server closed without one."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        with contextlib.suppress(OSError):  # answered and closed before reading it all (413, 431)
            sock.sendall(data)
        response = http.client.HTTPResponse(sock)
        try:
            response.begin()
            response.read()
        except (http.client.RemoteDisconnected, ConnectionResetError):
            return None
        return response.status


def run_malformed(port: int, valid: list[Request], count: int = MALFORMED, seed: int = 0) -> dict[str, Any]:
    rng = random.Random(seed)
    payloads = [malformed_request(rng, valid) for _ in range(count)]
    statuses: Counter[str] = Counter()
    errors = 0
    with ThreadPoolExecutor(8) as pool:
        for future in [pool.submit(send_raw, port, data) for data in payloads]:
            try:
                status = future.result()
            except (OSError, http.client.HTTPException):  # no answer in time, or not an HTTP answer
                errors += 1
                continue
            statuses["closed" if status is None else _status_class(status)] += 1
    return {"sent": count, "statuses": dict(sorted(statuses.items())), "5xx": statuses["5xx"], "errors": errors}


def still_answers(port: int, request: Request) -> bool:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(request.method, request.target, request.body or None, request.headers)
        return 200 <= connection.getresponse().status < 300
    except (OSError, http.client.HTTPException):
        return False
    finally:
        connection.close()


def bench_service(service: str, seconds: float) -> dict[str, Any]:
    requests = SERVICES[service]()
    with tempfile.TemporaryFile() as log:  # the server's request log and any traceback
        process, port = start_server(service, log)
        try:
            for request in requests:  # warm up: each view once
                still_answers(port, request)
            load = run_load(port, requests, seconds)
            malformed = run_malformed(port, requests)
            after = still_answers(port, next(r for r in requests if r.method == "GET"))
        finally:
            process.terminate()
            process.wait(timeout=10)
        log.seek(0)
        tracebacks = log.read().count(b"Traceback (most recent call last)")
    return {"load": load, "malformed": malformed, "answers_after": after, "server_tracebacks": tracebacks}


def print_table(results: dict[str, Any]) -> None:
    print(
        f"{'service':12s} {'answered':>9s} {'req/s':>8s} {'p50 ms':>7s} {'p99 ms':>7s} {'2xx':>7s} {'4xx':>6s} "
        f"{'other':>5s} {'errors':>6s} | {'malformed':>9s} {'2-3xx':>5s} {'4xx':>5s} {'closed':>6s} {'5xx':>4s} "
        f"{'errors':>6s} "
        f"| after  tracebacks"
    )
    for service, result in results.items():
        load, bad = result["load"], result["malformed"]
        answered = bad["statuses"].get("2xx", 0) + bad["statuses"].get("3xx", 0)
        print(
            f"{service:12s} {load['answered']:9d} {load['requests_per_s']:8.1f} {load['p50_ms']:7.2f} "
            f"{load['p99_ms']:7.2f} {load['statuses'].get('2xx', 0):7d} {load['statuses'].get('4xx', 0):6d} "
            f"{load['not_2xx_or_4xx']:5d} {load['errors']:6d} | {bad['sent']:9d} {answered:5d} "
            f"{bad['statuses'].get('4xx', 0):5d} {bad['statuses'].get('closed', 0):6d} {bad['5xx']:4d} "
            f"{bad['errors']:6d} "
            f"| {'yes' if result['answers_after'] else 'NO':5s}  {result['server_tracebacks']}"
        )


def main(seconds: float = 20.0) -> dict[str, Any]:
    results = {service: bench_service(service, seconds) for service in SERVICES}
    print(
        f"toolbench serve (waitress, {THREADS} threads): {CLIENTS} clients for {seconds:g} s, "
        f"then {MALFORMED} malformed requests"
    )
    print_table(results)
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="load duration per service")
    main(parser.parse_args().seconds)
