"""``toolbench serve env`` beside openenv-core's own server, with 64 to 2,048 sessions open at once.

For each N (64, 128, 256, 512, 1024, 2048; ``--sessions`` to choose) and each server and transport,
a fresh server runs as a subprocess on 127.0.0.1 (what users run):

- ours over WebSocket and over HTTP: ``toolbench serve env --task HomeSearch --env-kwargs
  '{"mode": "interactive"}' --port 0 --max-sessions N --no-access-log`` (the connection cap's
  default follows ``--max-sessions``, so HTTP's keep-alive clients fit as WebSocket's do);
- openenv-core's server over WebSocket: the same env through our adapter (``openenv_adapter.py``:
  an openenv ``Environment`` wrapping ``gym.make``), ``create_app(..., max_concurrent_envs=N)`` on
  uvicorn's defaults. Its HTTP column is n/a: openenv-core 0.3's ``POST /reset`` and ``POST /step``
  each build a new env and close it after the request, so no episode outlives one HTTP request.

One asyncio client process (``serve_sessions.py``) opens all N sessions at once (connect, then the
first episode's reset) and only then starts the clock: every session plays the oracle's HomeSearch
episodes, interactive mode, in turn from its own starting task, one call at a time and as fast as
answers come, for ``--seconds`` and until every session has finished an episode (at 2,048 sessions
one episode each takes longer than the default window). Every finished episode must pay the
oracle's reward of 1.0 (a session that saw another's state would lose it); an episode the window
cuts is not counted. At the end each session asks for its state: a session is *held* when it
opened, every call it made was answered, and that last one too. The client raises its soft
RLIMIT_NOFILE to 2N + 256 (up to the hard limit) before it starts the servers, which inherit it.

Reported per (server, transport, N): sessions held, episodes finished, their success rate, wrong
rewards, errors (and the first one's text), steps per second in the window, step latency p50/p99,
the server's RSS (its process and any children, VmRSS; the most sampled while the sessions were
held) and RSS per session over the idle server's, the time to open the N sessions, and the CPU
cores used in the window by the server, by the client (near 1.0 core, the client would be what
bounds the rate) and by anything else on the machine (a shared host's other work slows both
servers). Floors, measured first in this process: HomeSearch's oracle steps per CPU second of one
env with no server (each server runs its envs under one GIL), and the RSS an env adds in one process.

``python benchmarks/bench_serve_scale.py`` (about 3.5 minutes on 2 cores); ``--quick`` for N = 64 and
256 for 3 s each; ``--sessions 64 2048 --seconds 10`` to choose. Results go to
``benchmarks/results/serve_scale.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import importlib.util
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from serve_sessions import (  # noqa: E402
    SESSION_KINDS,
    ServerProcess,
    Session,
    SessionStats,
    Stopwatch,
    first_error,
    latency_summary,
    oracle_plans,
    raise_open_files,
    rss_mb,
    save_results,
    shell_line,
    shown,
    start_server,
)

TASK = "HomeSearch"
ENV_KWARGS = {"mode": "interactive"}
SESSIONS = (64, 128, 256, 512, 1024, 2048)
SECONDS = 6.0
QUICK_SESSIONS, QUICK_SECONDS = (64, 256), 3.0
RSS_SAMPLE_EVERY = 0.5  # seconds
MAX_EXTRA_SECONDS = 120.0  # the window waits this long at most for every session's first episode
ADAPTER = Path(__file__).resolve().parent / "openenv_adapter.py"
TARGETS = (("toolbench", "ws"), ("toolbench", "http"), ("openenv-core", "ws"))
OPENENV_HTTP = (
    "n/a: openenv-core 0.3's POST /reset and POST /step each build a new env and close it after the "
    "request (stateless HTTP), so an episode cannot span two HTTP requests"
)
NO_OPENENV = "n/a: openenv-core is not installed (pip install 'toolbench-gym[openenv]')"
Plans = list[tuple[str, list[str]]]


def server_command(server: str, sessions: int) -> list[str]:
    kwargs = json.dumps(ENV_KWARGS)
    if server == "toolbench":
        return [sys.executable, "-m", "toolbench", "serve", "env", "--task", TASK, "--env-kwargs", kwargs,
                "--port", "0", "--max-sessions", str(sessions), "--no-access-log"]  # fmt: skip
    return [sys.executable, str(ADAPTER), "--task", TASK, "--env-kwargs", kwargs,
            "--max-concurrent-envs", str(sessions), "--port", "0"]  # fmt: skip


# --------------------------------------------------------------------- floors
def steps_floor(plans: Plans, seconds: float = 2.0) -> float:
    """Oracle steps per CPU second of one env in this process, no server (resets made but not counted).
    CPU time, so that other work on the machine does not move the floor."""
    import gymnasium as gym

    env = gym.make(f"toolbench/{TASK}-v0", **ENV_KWARGS).unwrapped
    steps, index, spent = 0, 0, 0.0
    while spent < seconds:
        task_id, actions = plans[index % len(plans)]
        index += 1
        env.reset(options={"task_id": task_id})
        began = time.process_time()
        for action in actions:
            env.step(action)
        spent += time.process_time() - began
        steps += len(actions)
    return round(steps / spent, 1)


def env_memory_floor(plans: Plans, count: int = 256) -> float:
    """MB of RSS one more env adds in one process, after it played an episode (what a session holds)."""
    import gymnasium as gym

    gc.collect()
    before = rss_mb(os.getpid())
    envs = []
    for index in range(count):
        env = gym.make(f"toolbench/{TASK}-v0", **ENV_KWARGS)
        task_id, actions = plans[index % len(plans)]
        env.reset(options={"task_id": task_id})
        for action in actions:
            env.step(action)
        envs.append(env)
    grown = rss_mb(os.getpid()) - before
    for env in envs:
        env.close()
    return round(grown / count, 3)


# --------------------------------------------------------------------- one session
async def open_session(kind: str, port: int, task_id: str, stats: SessionStats) -> Session | None:
    """Connect and start the first episode; None (and the error counted) if the server refused."""
    try:
        session = await SESSION_KINDS[kind].open(port)
    except Exception as exc:  # counted: a session the server did not take
        stats.fail(f"open: {type(exc).__name__}: {str(exc)[:300]}")
        return None
    try:
        await session.reset(task_id)
    except Exception as exc:
        stats.fail(f"{type(exc).__name__}: {str(exc)[:300]}")
        await close_quietly(session)
        return None
    stats.opened = True
    stats.resets += 1
    return session


class Window:
    """The timed window: at least ``seconds`` long, and until every session finished an episode (or
    failed), so that at 2,048 sessions each one's episodes are judged, not only the quick ones'."""

    def __init__(self, seconds: float, sessions: list[int]):
        self.deadline = time.perf_counter() + seconds
        self.cap = self.deadline + MAX_EXTRA_SECONDS
        self.pending = set(sessions)  # sessions yet to finish their first episode

    def over(self) -> bool:
        now = time.perf_counter()
        return now >= self.cap or (now >= self.deadline and not self.pending)


async def play(session: Session, key: int, plans: Plans, index: int, window: Window, stats: SessionStats) -> bool:
    """Session ``key``'s oracle episodes in turn, from plan ``index`` (already reset), until the
    window closes; False once a call failed."""
    reset_first = False
    try:
        while not window.over():
            task_id, actions = plans[index % len(plans)]
            index += 1
            if reset_first:
                await session.reset(task_id)
                stats.resets += 1
            reset_first = True
            result: dict[str, Any] = {}
            for action in actions:
                if window.over():
                    return True  # an episode the window cut is not counted
                began = time.perf_counter()
                result = await session.step(action)
                stats.step_latencies.append(time.perf_counter() - began)
                stats.steps += 1
            stats.episodes += 1
            stats.rewarded += result.get("done") is True and result.get("reward") == 1.0
            window.pending.discard(key)
    except Exception as exc:  # counted and shown: the target is none
        stats.fail(f"{type(exc).__name__}: {str(exc)[:300]}")
        return False
    finally:
        window.pending.discard(key)
    return True


async def finish(session: Session, alive: bool, stats: SessionStats) -> None:
    """A last call proves the session was kept to the end; then it is closed."""
    if alive:
        try:
            await session.state()
            stats.held = True
        except Exception as exc:
            stats.fail(f"final state: {type(exc).__name__}: {str(exc)[:300]}")
    await close_quietly(session)


async def close_quietly(session: Session) -> None:
    with contextlib.suppress(Exception):  # closing is not measured; the server must cope either way
        await session.close()


async def sample_rss(server: ServerProcess, stop: asyncio.Event, samples: list[float]) -> None:
    while not stop.is_set():
        samples.append(server.rss_mb())
        with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), RSS_SAMPLE_EVERY)
    samples.append(server.rss_mb())


# --------------------------------------------------------------------- one case
@dataclass(frozen=True)
class Usage:
    """The window's length and the CPU time spent in it: by the server (and its children), by this
    client, and by the whole machine (the rest is other work on the host)."""

    seconds: float
    server_cpu: float
    client_cpu: float
    machine_busy: float

    def cores(self) -> dict[str, float]:
        other = max(0.0, self.machine_busy - self.server_cpu - self.client_cpu)  # below 0: clock-tick rounding
        spent = {"server_cores": self.server_cpu, "client_cores": self.client_cpu, "other_cores": other}
        return {name: round(value / self.seconds, 2) for name, value in spent.items()}


async def drive(server: ServerProcess, kind: str, plans: Plans, count: int, seconds: float) -> dict[str, Any]:
    """Open ``count`` sessions at once, play for ``seconds`` (and until each finished an episode),
    check and close them; what was measured."""
    stats = [SessionStats() for _ in range(count)]
    starts = [(i * 7) % len(plans) for i in range(count)]
    idle_rss = server.rss_mb()
    opening = Stopwatch()
    sessions = await asyncio.gather(
        *(open_session(kind, server.port, plans[starts[i]][0], stats[i]) for i in range(count))
    )
    open_s = opening.elapsed()
    stop, samples = asyncio.Event(), []
    sampler = asyncio.create_task(sample_rss(server, stop, samples))
    opened = [i for i, session in enumerate(sessions) if session is not None]
    server_cpu, clock, window = server.cpu_seconds(), Stopwatch(), Window(seconds, opened)
    alive = await asyncio.gather(*(play(sessions[i], i, plans, starts[i], window, stats[i]) for i in opened))
    usage = Usage(clock.elapsed(), server.cpu_seconds() - server_cpu, clock.cpu_elapsed(), clock.busy_elapsed())
    stop.set()
    await sampler
    await asyncio.gather(*(finish(sessions[i], ok, stats[i]) for i, ok in zip(opened, alive)))
    return {**summarize(stats, usage.seconds), "open_s": round(open_s, 2), **usage.cores(),
            **memory(idle_rss, max(samples), sum(s.held for s in stats))}  # fmt: skip


def summarize(stats: list[SessionStats], seconds: float) -> dict[str, Any]:
    episodes = sum(s.episodes for s in stats)
    rewarded = sum(s.rewarded for s in stats)
    steps = sum(s.steps for s in stats)
    return {
        "sessions": len(stats),
        "opened": sum(s.opened for s in stats),
        "held": sum(s.held for s in stats),
        "sessions_with_episode": sum(s.episodes > 0 for s in stats),
        "episodes": episodes,
        "success_rate": round(rewarded / episodes, 4) if episodes else None,
        "wrong_rewards": episodes - rewarded,
        "errors": sum(s.errors for s in stats),
        "first_error": first_error(stats),
        "seconds": round(seconds, 2),
        "steps": steps,
        "steps_per_s": round(steps / seconds, 1),
        **latency_summary([x for s in stats for x in s.step_latencies]),
    }


def memory(idle_rss: float, held_rss: float, held: int) -> dict[str, Any]:
    return {
        "rss_idle_mb": round(idle_rss, 1),
        "rss_mb": round(held_rss, 1),
        "rss_per_session_mb": round((held_rss - idle_rss) / held, 3) if held else None,
    }


def run_case(server_name: str, kind: str, count: int, seconds: float, plans: Plans) -> dict[str, Any]:
    command = server_command(server_name, count)
    with tempfile.TemporaryFile() as log:
        server = start_server(command, log)
        try:
            result = asyncio.run(drive(server, kind, plans, count, seconds))
        finally:
            tracebacks = server.stop()
    return {"server": server_name, "transport": kind, "command": shell_line(command), **result,
            "server_tracebacks": tracebacks}  # fmt: skip


# --------------------------------------------------------------------- report
def print_table(rows: list[dict[str, Any]]) -> None:
    print(f"{'server':12} {'via':4} {'N':>5} {'held':>5} {'episodes':>8} {'w/ ep':>5} {'success':>7} {'wrong':>5} "
          f"{'errors':>6} {'steps/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'RSS MB':>7} {'MB/sess':>7} {'open s':>6} "
          f"{'cores srv/cli/other':>19}")  # fmt: skip
    for row in rows:
        if "na" in row:
            print(f"{row['server']:12} {row['transport']:4} {row['sessions']:5d} n/a (below)")
            continue
        success = "-" if row["success_rate"] is None else f"{row['success_rate']:.3f}"
        per_session = "-" if row["rss_per_session_mb"] is None else f"{row['rss_per_session_mb']:.3f}"
        cores = f"{row['server_cores']:.2f}/{row['client_cores']:.2f}/{row['other_cores']:.2f}"
        print(f"{row['server']:12} {row['transport']:4} {row['sessions']:5d} {row['held']:5d} {row['episodes']:8d} "
              f"{row['sessions_with_episode']:5d} {success:>7} {row['wrong_rewards']:5d} {row['errors']:6d} "
              f"{row['steps_per_s']:8.1f} {shown(row['p50_ms']):>7} {shown(row['p99_ms']):>7} {row['rss_mb']:7.1f} "
              f"{per_session:>7} {row['open_s']:6.1f} {cores:>19}")  # fmt: skip
    print("w/ ep: sessions that finished an episode; cores: CPU used in the window by the server (with its")
    print("children), this client, and anything else on the machine")
    for reason in dict.fromkeys(f"{row['server']} {row['transport']}: {row['na']}" for row in rows if "na" in row):
        print(reason)
    for row in rows:
        where = f"{row['server']} {row['transport']} N={row['sessions']}"
        if row.get("first_error"):
            print(f"  {where}: {row['errors']} errors, first: {row['first_error']}")
        if row.get("server_tracebacks"):
            print(f"  {where}: {row['server_tracebacks']} server tracebacks")


def main(sessions: tuple[int, ...] = SESSIONS, seconds: float = SECONDS) -> dict[str, Any]:
    open_files = raise_open_files(2 * max(sessions) + 256)  # each session is a socket at both ends
    plans = oracle_plans(TASK, ENV_KWARGS)
    floors = {"steps_per_s": steps_floor(plans), "env_mb": env_memory_floor(plans)}
    has_openenv = importlib.util.find_spec("openenv") is not None
    rows: list[dict[str, Any]] = []
    for count in sessions:
        for server_name, kind in TARGETS:
            if server_name == "openenv-core" and not has_openenv:
                rows.append({"server": server_name, "transport": kind, "sessions": count, "na": NO_OPENENV})
                continue
            rows.append(run_case(server_name, kind, count, seconds, plans))
            print(f"  done: {server_name} {kind} N={count}: {rows[-1]['held']} held, "
                  f"{rows[-1]['steps_per_s']} steps/s", flush=True)  # fmt: skip
        rows.append({"server": "openenv-core", "transport": "http", "sessions": count, "na": OPENENV_HTTP})
    results = {
        "task": TASK,
        "env_kwargs": ENV_KWARGS,
        "seconds": seconds,
        "open_files_soft_limit": open_files,
        "client": "one asyncio process (serve_sessions.py): websockets for /ws, raw asyncio streams for HTTP",
        "floors": floors,
        "rows": rows,
    }
    print(f"\n{TASK} interactive, oracle episodes; all N sessions open at once, then {seconds:g} s of play and "
          f"until each session finished an episode; "
          f"client: one asyncio process, RLIMIT_NOFILE soft {open_files}")  # fmt: skip
    print(f"floors: one env in one process, no server: {floors['steps_per_s']:,.0f} steps per CPU second; "
          f"an env's RSS in one process: {floors['env_mb']:.3f} MB")  # fmt: skip
    print_table(rows)
    print(f"measured by: {shell_line([sys.executable, *sys.argv])}")
    for server_name in ("toolbench", "openenv-core"):
        print(f"{server_name}: {shell_line(server_command(server_name, max(sessions)))}")
    print(f"saved {save_results('serve_scale', results)}")
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, nargs="+", default=list(SESSIONS))
    parser.add_argument("--seconds", type=float, default=None, help=f"of play per case (default {SECONDS:g})")
    parser.add_argument("--quick", action="store_true", help=f"N = {QUICK_SESSIONS}, {QUICK_SECONDS:g} s each")
    args = parser.parse_args()
    chosen = QUICK_SESSIONS if args.quick else tuple(args.sessions)
    main(chosen, args.seconds or (QUICK_SECONDS if args.quick else SECONDS))
