"""What bench_serve_scale.py and bench_serve_fairness.py share: asyncio sessions of OpenEnv's protocol,
env servers as subprocesses, and what those processes hold (RSS, CPU time).

A session is what a trainer keeps per env. Over WebSocket it is one connection to ``/ws`` (one
connection, one session, in both our server and openenv-core's): ``{"type": "reset" | "step" |
"state" | "close", "data": ...}`` answered with ``{"type": "observation" | "state" | "error",
"data": ...}``. Over HTTP (our server only) it is one keep-alive connection whose requests carry the
``X-Session-Id`` that the first ``POST /reset`` answered with. Both clients are small and written
here on asyncio (the ``websockets`` library, and raw streams for HTTP/1.1) so that thousands of
sessions fit in one client process and the client costs as little as it can beside the server.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import resource
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from bench_serve_load import percentile_ms

CALL_TIMEOUT = 120.0  # seconds: a call unanswered for this long is an error (the session is lost), not a hang
BANNER_ADDRESS = re.compile(r"http://127\.0\.0\.1:(\d+)")
RESULTS = Path(__file__).resolve().parent / "results"


class CallFailed(Exception):
    """A call the server answered with an error, or a connection that broke."""


class Session(Protocol):
    async def reset(self, task_id: str) -> dict[str, Any]: ...
    async def step(self, action: str) -> dict[str, Any]: ...
    async def state(self) -> dict[str, Any]: ...
    async def close(self) -> None: ...


class WsSession:
    """One OpenEnv-protocol WebSocket connection: one session (as openenv-core's ``EnvClient`` opens it)."""

    def __init__(self, connection: Any):
        self.connection = connection

    @classmethod
    async def open(cls, port: int) -> WsSession:
        from websockets.asyncio.client import connect

        # EnvClient's own options (the library's defaults: compression and pings on), no proxy for loopback.
        connection = await connect(f"ws://127.0.0.1:{port}/ws", open_timeout=CALL_TIMEOUT, max_size=None, proxy=None)
        return cls(connection)

    async def call(self, kind: str, data: Any = None) -> dict[str, Any]:
        # openenv-core's state and close messages forbid a "data" field: send it only where it means something.
        message = {"type": kind} if data is None else {"type": kind, "data": data}
        try:
            await self.connection.send(json.dumps(message))
            reply = json.loads(await asyncio.wait_for(self.connection.recv(), CALL_TIMEOUT))
        except (OSError, TimeoutError, asyncio.TimeoutError) as exc:
            raise CallFailed(f"{kind}: {type(exc).__name__}: {exc}") from None
        except Exception as exc:  # the library's ConnectionClosed and kin: the session is gone
            raise CallFailed(f"{kind}: {type(exc).__name__}: {str(exc)[:200]}") from None
        if reply.get("type") == "error":
            raise CallFailed(f"{kind}: {str(reply.get('data'))[:300]}")
        return reply["data"]

    async def reset(self, task_id: str) -> dict[str, Any]:
        return await self.call("reset", {"task_id": task_id})

    async def step(self, action: str) -> dict[str, Any]:
        return await self.call("step", {"text": action})

    async def state(self) -> dict[str, Any]:
        return await self.call("state")

    async def close(self) -> None:
        # The close message, then the server's closing handshake: closing at once from this side too
        # (as EnvClient.disconnect does) makes openenv-core's server log a traceback per session.
        try:
            await self.connection.send(json.dumps({"type": "close"}))
            await asyncio.wait_for(self.connection.wait_closed(), 10)
        except Exception:  # best effort: the connection is closed below either way
            pass
        finally:
            await self.connection.close()


class HttpSession:
    """One keep-alive HTTP/1.1 connection and the session it carries (``X-Session-Id``). Requests are
    written by hand: an HTTP client library's per-request cost would bound the client before the server."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: int):
        self.reader, self.writer = reader, writer
        self.host = f"127.0.0.1:{port}"
        self.session_id: str | None = None

    @classmethod
    async def open(cls, port: int) -> HttpSession:
        # asyncio sets TCP_NODELAY on the connections it opens: no Nagle delay between head and body.
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), CALL_TIMEOUT)
        return cls(reader, writer, port)

    async def request(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        try:
            return await asyncio.wait_for(self._exchange(method, path, body), CALL_TIMEOUT)
        except CallFailed:
            raise
        except (OSError, ValueError, asyncio.IncompleteReadError, TimeoutError, asyncio.TimeoutError) as exc:
            raise CallFailed(f"{method} {path}: {type(exc).__name__}: {exc}") from None

    async def _exchange(self, method: str, path: str, body: Any) -> dict[str, Any]:
        payload = b"" if body is None else json.dumps(body).encode()
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\n"
        )
        if self.session_id:
            head += f"X-Session-Id: {self.session_id}\r\n"
        self.writer.write(head.encode() + b"\r\n" + payload)
        status_line = await self.reader.readline()
        if not status_line:
            raise CallFailed(f"{method} {path}: the server closed the connection")
        status = int(status_line.split()[1])
        headers: dict[str, str] = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" not in headers:
            raise CallFailed(f"{method} {path}: {status} without a Content-Length (this client reads no other framing)")
        answer = await self.reader.readexactly(int(headers["content-length"]))
        if status != 200:
            raise CallFailed(f"{method} {path}: {status} {answer[:300]!r}")
        self.session_id = headers.get("x-session-id", self.session_id)
        return json.loads(answer)

    async def reset(self, task_id: str) -> dict[str, Any]:
        return await self.request("POST", "/reset", {"task_id": task_id})

    async def step(self, action: str) -> dict[str, Any]:
        return await self.request("POST", "/step", {"action": action})

    async def state(self) -> dict[str, Any]:
        return await self.request("GET", "/state")

    async def close(self) -> None:
        try:
            if self.session_id:
                await self.request("DELETE", "/session")
        finally:
            self.writer.close()


SESSION_KINDS = {"ws": WsSession, "http": HttpSession}


@dataclass
class SessionStats:
    """What one session did; ``held`` once it was open from the start to the end of the run."""

    opened: bool = False
    held: bool = False
    steps: int = 0
    resets: int = 0
    episodes: int = 0
    rewarded: int = 0  # finished episodes with the oracle's reward of 1.0
    errors: int = 0
    first_error: str | None = None
    step_latencies: list[float] = field(default_factory=list)
    reset_latencies: list[float] = field(default_factory=list)

    def fail(self, what: str) -> None:
        self.errors += 1
        self.first_error = self.first_error or what


def latency_summary(latencies: list[float], prefix: str = "") -> dict[str, float | None]:
    """p50, p99 and the longest, in ms (None without a sample)."""
    ordered = sorted(latencies)
    if not ordered:
        return {f"{prefix}p50_ms": None, f"{prefix}p99_ms": None, f"{prefix}max_ms": None}
    return {
        f"{prefix}p50_ms": percentile_ms(ordered, 0.50),
        f"{prefix}p99_ms": percentile_ms(ordered, 0.99),
        f"{prefix}max_ms": round(ordered[-1] * 1000, 1),
    }


def shown(value: float | None, spec: str = ".1f") -> str:
    """A number for a table; "-" where there is none."""
    return "-" if value is None else format(value, spec)


def first_error(stats: list[SessionStats]) -> str | None:
    return next((s.first_error for s in stats if s.first_error), None)


# --------------------------------------------------------------------- oracle plans
def oracle_plans(task: str, env_kwargs: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(task id, the oracle's actions) for every test task of ``task`` in the served configuration."""
    import gymnasium as gym

    import toolbench  # noqa: F401 (registers the ids)

    env = gym.make(f"toolbench/{task}-v0", **env_kwargs)
    try:
        base = env.unwrapped
        return [(t.id, base.oracle_actions(t)) for t in base.tasks]
    finally:
        env.close()


# --------------------------------------------------------------------- server processes
def raise_open_files(needed: int) -> int:
    """Raise this process's soft RLIMIT_NOFILE towards ``needed`` (up to the hard limit); server
    subprocesses started after this inherit it. Returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def _parents() -> dict[int, int]:
    """Every process's parent, from /proc."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    parents[int(entry)] = int(handle.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue  # it exited while we looked
    return parents


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (a code env's sandbox worker and its children)."""
    parents = _parents()
    tree, frontier = [pid], [pid]
    while frontier:
        frontier = [child for child, parent in parents.items() if parent in frontier]
        tree.extend(frontier)
    return tree


def rss_mb(pid: int) -> float:
    """VmRSS of ``pid``, in MB (0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of ``pid``, all its threads, and of its children it has waited for."""
    ticks = os.sysconf("SC_CLK_TCK")
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / ticks  # utime, stime, cutime, cstime


@dataclass
class ServerProcess:
    """A server subprocess on 127.0.0.1, its port (read from its banner) and its stderr log."""

    process: subprocess.Popen[bytes]
    port: int
    command: list[str]
    log: IO[bytes]

    def rss_mb(self) -> float:
        """RSS of the server and every process under it."""
        return sum(rss_mb(pid) for pid in process_tree(self.process.pid))

    def cpu_seconds(self) -> float:
        """CPU time of the server, its live descendants and the children it has reaped."""
        return sum(cpu_seconds(pid) for pid in process_tree(self.process.pid))

    def stop(self) -> int:
        """Terminate it; the number of tracebacks it printed."""
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self.log.seek(0)
        return self.log.read().count(b"Traceback (most recent call last)")


def start_server(command: list[str], log: IO[bytes]) -> ServerProcess:
    """Run ``command`` (a server that prints its address, port 0 resolved, on its first stdout line)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log)
    banner = process.stdout.readline().decode() if process.stdout else ""
    found = BANNER_ADDRESS.search(banner)
    if not found:
        process.kill()
        process.wait()
        log.seek(0)
        raise RuntimeError(f"{' '.join(command)} printed no address: {banner!r}; stderr: {log.read()[-2000:]!r}")
    return ServerProcess(process, int(found.group(1)), command, log)


def shell_line(command: list[str]) -> str:
    """The command as one would type it from the repository's root: ``toolbench`` for ``python -m
    toolbench``, paths relative to the root, JSON arguments quoted."""
    root = str(Path(__file__).resolve().parent.parent) + os.sep
    if command[1:3] == ["-m", "toolbench"]:
        command = ["toolbench", *command[3:]]
    elif command[0] == sys.executable:
        command = ["python", *command[1:]]
    parts = [part.removeprefix(root) for part in command]
    return " ".join(f"'{part}'" if any(c in part for c in ' {}"') else part for part in parts)


def machine_busy_seconds() -> float:
    """CPU time every core of the machine spent busy (not idle, not waiting for I/O), from /proc/stat:
    beside the server's and the client's, it shows what else ran (other people's work on a shared host)."""
    with open("/proc/stat") as handle:
        fields = [int(x) for x in handle.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def save_results(name: str, results: dict[str, Any]) -> Path:
    """``benchmarks/results/<name>.json`` (the folder is not committed)."""
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(results, indent=2) + "\n")
    return path


class Stopwatch:
    """Wall-clock time, this process's CPU time and the machine's busy time since it started."""

    def __init__(self) -> None:
        self.wall, self.cpu, self.busy = time.perf_counter(), time.process_time(), machine_busy_seconds()

    def elapsed(self) -> float:
        return time.perf_counter() - self.wall

    def cpu_elapsed(self) -> float:
        return time.process_time() - self.cpu

    def busy_elapsed(self) -> float:
        return machine_busy_seconds() - self.busy
