"""One session's bad code must not cost the others: ``toolbench serve env`` with a code env.

A code env (GoogleSheets by default, ``--task Tabletop`` too) runs each step's agent code in a
sandboxed child, with a per-step time budget (``time_limit``; 2 s here, passed in ``--env-kwargs``).
Each phase starts a fresh server, ``toolbench serve env --task GoogleSheets --env-kwargs '{"mode":
"interactive", "time_limit": 2}' --port 0 --max-sessions 224 --no-access-log``,
and opens every session over OpenEnv's WebSocket (one asyncio client process, ``serve_sessions.py``),
each reset to its first task (which builds its env) before any clock starts:

- light sessions (200) play the oracle's episodes, one call at a time with a fixed think time
  before each call (3 s: an agent's model call; session i starts i/200 of it late, so calls spread
  evenly). Their steps' latency p50/p99, their episodes and success (reward 1.0) are measured over
  ``--seconds`` (20). Without the think time the light sessions would only measure their own queue:
  on two cores 200 sessions thinking 1 s already keep the machine busy (a code step costs some
  12 ms of CPU between the server, its fork server and the step's child), and 2 s nearly so.
- phase ``alone``: the light sessions and nothing else: the baseline.
- phase ``spin``: 16 more sessions send ``while True: pass`` again and again (a new episode when
  one ends), so 16 children spin until their budget stops them. They start ``budget`` seconds before
  the light sessions' window and stop after it.
- phase ``env``: 16 sessions whose steps are slow in the env's own process, not in a child: code
  that calls the env's API in a loop, each call served by the env (GoogleSheets: ``worksheet.acell``
  requests answered by the emulator; Tabletop: ``put_first_on_second``, a physics simulation).
- Tabletop's phase ``calls``: a loop of cheap API calls (``get_obj_pos``): the child mostly waits
  for the env's answers (its budget is wall-clock time all the same).
- block: not run, for want of a way for agent code to block (reported as n/a with the reason).

Reported per phase: the light sessions' step p50/p99 and the p99 over the ``alone`` p99 (target:
at most 2), their longest step, reset p99, episodes, success and errors; the bad sessions' steps,
how many their budget stopped, and their longest step beside the budget (target: no step longer
than the budget + 0.5 s); the machine's busy cores in the window, the client's, and the machine's
before the phase (other work on a shared host); the server's RSS with its sandbox children. The
floor: the light sessions' p99 alone. (The server's own CPU is not shown: the sandbox's children
are reaped by the kernel, so their time reaches no parent's account.)

``python benchmarks/bench_serve_fairness.py`` (about 2 minutes on 2 cores); ``--quick`` (50 light
sessions, 8 s); ``--task Tabletop --light 32``; ``--server-args='--idle-timeout 60'`` adds server flags.
Results go to ``benchmarks/results/serve_fairness_<task>.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from serve_sessions import (  # noqa: E402
    ServerProcess,
    SessionStats,
    Stopwatch,
    WsSession,
    first_error,
    latency_summary,
    oracle_plans,
    raise_open_files,
    save_results,
    shell_line,
    shown,
    start_server,
)

BUDGET = 2.0  # seconds: each step's time_limit
SLACK = 0.5  # seconds a step may take beyond its budget (the target)
TARGET_RATIO = 2.0
LIGHT, BAD = 200, 16
THINK = 3.0
SECONDS = 20.0
QUICK_LIGHT, QUICK_SECONDS = 50, 8.0
SPIN = "while True:\n    pass"

# The bad sessions' code per task and phase. Blocking has no entry: agent code has no way to wait
# without using CPU that we found. In the sandbox, input, open, help and sys are not defined; pandas'
# readers and writers refuse files, /dev/stdin and descriptors; np.fromfile and np.memmap are not
# available; modules (time, threading, socket, pandas.io) cannot be reached as attributes.
BAD_CODE: dict[str, dict[str, str]] = {
    "GoogleSheets": {"spin": SPIN, "env": 'while True:\n    worksheet.acell("A1")'},
    "Tabletop": {
        "spin": SPIN,
        "env": 'objects = get_obj_names()\nwhile True:\n    put_first_on_second(objects[0], "top left corner")',
        "calls": 'while True:\n    get_obj_pos("top left corner")',
    },
}
NO_BLOCK = (
    "n/a: no way found for agent code to block without using CPU (no input/open/sys/time/threading; "
    "file and descriptor reads refused; modules unreachable)"
)
Plans = list[tuple[str, list[str]]]


@dataclass
class BadStats:
    steps: int = 0
    timed_out: int = 0  # steps the budget stopped
    errors: int = 0
    first_error: str | None = None
    step_latencies: list[float] = field(default_factory=list)


def env_kwargs(budget: float) -> dict[str, Any]:
    return {"mode": "interactive", "time_limit": budget}


def server_command(task: str, budget: float, sessions: int, extra: tuple[str, ...] = ()) -> list[str]:
    """``toolbench serve env`` for ``sessions`` sessions (and a few to spare), ``extra`` flags last."""
    return [sys.executable, "-m", "toolbench", "serve", "env", "--task", task, "--env-kwargs",
            json.dumps(env_kwargs(budget)), "--port", "0", "--max-sessions", str(sessions + 8),
            "--no-access-log", *extra]  # fmt: skip


# --------------------------------------------------------------------- sessions
async def light_session(
    session: WsSession, plans: Plans, start: int, offset: float, think: float, deadline: float, stats: SessionStats
) -> None:
    """Oracle episodes from plan ``start`` (already reset) with ``think`` seconds before every call,
    until the deadline."""
    await asyncio.sleep(offset)
    index, reset_first = start, False
    try:
        while time.perf_counter() < deadline:
            task_id, actions = plans[index % len(plans)]
            index += 1
            if reset_first:
                began = time.perf_counter()
                await session.reset(task_id)
                stats.reset_latencies.append(time.perf_counter() - began)
                stats.resets += 1
            reset_first = True
            result: dict[str, Any] = {}
            for action in actions:
                await asyncio.sleep(think)
                if time.perf_counter() >= deadline:
                    return  # an episode the window cut is not counted
                began = time.perf_counter()
                result = await session.step(action)
                stats.step_latencies.append(time.perf_counter() - began)
                stats.steps += 1
            stats.episodes += 1
            stats.rewarded += result.get("done") is True and result.get("reward") == 1.0
            await asyncio.sleep(think)
    except Exception as exc:  # counted and shown: the target is none
        stats.fail(f"{type(exc).__name__}: {str(exc)[:300]}")


async def bad_session(session: WsSession, task_id: str, code: str, stop: asyncio.Event, stats: BadStats) -> None:
    """The same bad step again and again (the episode already reset), as fast as answers come; a new
    episode when one ends."""
    try:
        while not stop.is_set():
            began = time.perf_counter()
            result = await session.step(code)
            stats.step_latencies.append(time.perf_counter() - began)
            stats.steps += 1
            stats.timed_out += "time budget" in result["observation"]["text"]
            if result.get("done"):
                await session.reset(task_id)
    except Exception as exc:
        stats.errors += 1
        stats.first_error = stats.first_error or f"{type(exc).__name__}: {str(exc)[:300]}"


async def open_all(port: int, task_ids: list[str]) -> list[WsSession | None]:
    """One session per task id, each connected and reset to its task before any clock starts (the
    server builds a session's env at its first message); None for a session that did not open."""

    async def one(task_id: str) -> WsSession | None:
        try:
            session = await WsSession.open(port)
        except Exception:  # counted by the caller as a session that never opened
            return None
        try:
            await session.reset(task_id)
        except Exception:
            await close_all([session])
            return None
        return session

    return list(await asyncio.gather(*(one(task_id) for task_id in task_ids)))


async def close_all(sessions: list[WsSession | None]) -> None:
    async def one(session: WsSession) -> None:
        with contextlib.suppress(Exception):  # closing is not measured
            await session.close()

    await asyncio.gather(*(one(s) for s in sessions if s is not None))


async def warm_up(port: int, plans: Plans) -> None:
    """One episode first: the server's sandbox worker starts on the first code step (seconds, once)."""
    session = await WsSession.open(port)
    task_id, actions = plans[0]
    await session.reset(task_id)
    for action in actions:
        await session.step(action)
    await session.close()


# --------------------------------------------------------------------- one phase
@dataclass(frozen=True)
class Load:
    light: int
    bad: int
    think: float
    seconds: float
    budget: float


async def drive(server: ServerProcess, plans: Plans, load: Load, bad_code: str | None) -> dict[str, Any]:
    await warm_up(server.port, plans)
    starts = [(i * 7) % len(plans) for i in range(load.light)]
    light_sessions = await open_all(server.port, [plans[start][0] for start in starts])
    bad_sessions = await open_all(server.port, [plans[i % len(plans)][0] for i in range(load.bad if bad_code else 0)])
    light_stats = [SessionStats() for _ in light_sessions]
    bad_stats = [BadStats() for _ in bad_sessions]
    stop_bad = asyncio.Event()
    bad_tasks = [
        asyncio.create_task(bad_session(s, plans[i % len(plans)][0], bad_code or "", stop_bad, bad_stats[i]))
        for i, s in enumerate(bad_sessions)
        if s is not None
    ]
    if bad_tasks:
        await asyncio.sleep(load.budget)  # the bad steps are under way before the window opens
    clock, rss = Stopwatch(), [server.rss_mb()]
    deadline = time.perf_counter() + load.seconds
    light_tasks = [
        light_session(s, plans, starts[i], i / load.light * load.think, load.think, deadline, light_stats[i])
        for i, s in enumerate(light_sessions)
        if s is not None
    ]
    await asyncio.gather(*light_tasks, sample_rss_until(server, deadline, rss))
    elapsed, client_cpu, busy = clock.elapsed(), clock.cpu_elapsed(), clock.busy_elapsed()
    stop_bad.set()
    await asyncio.gather(*bad_tasks)  # each finishes its step under way: its length is measured too
    await close_all(light_sessions + bad_sessions)
    return {
        "light": summarize_light(light_stats, sum(s is not None for s in light_sessions), elapsed),
        "bad": summarize_bad(bad_stats, sum(s is not None for s in bad_sessions)),
        "seconds": round(elapsed, 2),
        "machine_cores": round(busy / elapsed, 2),
        "client_cores": round(client_cpu / elapsed, 2),
        "rss_mb": round(max(rss), 1),
    }


async def sample_rss_until(server: ServerProcess, deadline: float, samples: list[float]) -> None:
    while time.perf_counter() < deadline:
        samples.append(server.rss_mb())
        await asyncio.sleep(1.0)


def summarize_light(stats: list[SessionStats], opened: int, elapsed: float) -> dict[str, Any]:
    episodes = sum(s.episodes for s in stats)
    rewarded = sum(s.rewarded for s in stats)
    steps = sum(s.steps for s in stats)
    return {
        "sessions": len(stats),
        "opened": opened,
        "steps": steps,
        "steps_per_s": round(steps / elapsed, 1),
        **latency_summary([x for s in stats for x in s.step_latencies]),
        "resets": sum(s.resets for s in stats),
        **latency_summary([x for s in stats for x in s.reset_latencies], "reset_"),
        "episodes": episodes,
        "success_rate": round(rewarded / episodes, 4) if episodes else None,
        "errors": sum(s.errors for s in stats),
        "first_error": first_error(stats),
    }


def summarize_bad(stats: list[BadStats], opened: int) -> dict[str, Any]:
    latencies = [x for s in stats for x in s.step_latencies]
    return {
        "sessions": len(stats),
        "opened": opened,
        "steps": sum(s.steps for s in stats),
        "timed_out": sum(s.timed_out for s in stats),
        "max_s": round(max(latencies), 2) if latencies else None,
        "errors": sum(s.errors for s in stats),
        "first_error": next((s.first_error for s in stats if s.first_error), None),
    }


def busy_cores(seconds: float = 2.0) -> float:
    """The machine's busy cores while this benchmark runs nothing: the other work on a shared host."""
    clock = Stopwatch()
    time.sleep(seconds)
    return round(clock.busy_elapsed() / clock.elapsed(), 2)


def run_phase(
    task: str, plans: Plans, load: Load, bad_code: str | None, server_args: tuple[str, ...] = ()
) -> dict[str, Any]:
    command = server_command(task, load.budget, load.light + load.bad, server_args)
    before = busy_cores()
    with tempfile.TemporaryFile() as log:
        server = start_server(command, log)
        try:
            result = asyncio.run(drive(server, plans, load, bad_code))
        finally:
            tracebacks = server.stop()
    return {"command": shell_line(command), "bad_code": bad_code, **result, "cores_before": before,
            "server_tracebacks": tracebacks}  # fmt: skip


# --------------------------------------------------------------------- report
def with_ratios(phases: dict[str, dict[str, Any]], budget: float) -> None:
    """Each phase's light p99 over the alone phase's, and its longest step beside the budget."""
    alone = phases["alone"]["light"]["p99_ms"]
    for phase in phases.values():
        if "na" in phase:
            continue
        light, bad = phase["light"], phase["bad"]
        answered = light["p99_ms"] is not None and alone
        phase["p99_over_alone"] = round(light["p99_ms"] / alone, 2) if answered else None
        longest = max((light["max_ms"] or 0.0) / 1000, bad["max_s"] or 0.0)
        phase["longest_step_s"] = round(longest, 2)
        ratio_met = phase["p99_over_alone"] is not None and phase["p99_over_alone"] <= TARGET_RATIO
        phase["within_targets"] = ratio_met and longest <= budget + SLACK


def print_table(task: str, load: Load, phases: dict[str, dict[str, Any]]) -> None:
    print(f"\n{task} interactive, time_limit {load.budget:g} s: {load.light} light sessions (oracle episodes, "
          f"{load.think:g} s think time) for {load.seconds:g} s, alone and beside {load.bad} bad sessions; "
          f"WebSocket, one asyncio client")  # fmt: skip
    print(f"targets: light step p99 at most {TARGET_RATIO:g}x its p99 alone (the floor); no step over the budget "
          f"+ {SLACK:g} s = {load.budget + SLACK:g} s")  # fmt: skip
    print(f"{'phase':6} {'light steps':>11} {'p50 ms':>7} {'p99 ms':>8} {'p99/alone':>9} {'max ms':>8} "
          f"{'reset p99':>9} {'success':>7} {'errors':>6} {'bad steps':>9} {'stopped':>7} {'bad max s':>9} "
          f"{'longest s':>9} {'cores all/cli/before':>20} {'RSS MB':>7}")  # fmt: skip
    for name, phase in phases.items():
        if "na" in phase:
            print(f"{name:6} {phase['na']}")
            continue
        light, bad = phase["light"], phase["bad"]
        ratio = "-" if phase["p99_over_alone"] is None else f"{phase['p99_over_alone']:.2f}x"
        cores = f"{phase['machine_cores']:.2f}/{phase['client_cores']:.2f}/{phase['cores_before']:.2f}"
        print(f"{name:6} {light['steps']:11d} {shown(light['p50_ms']):>7} {shown(light['p99_ms']):>8} {ratio:>9} "
              f"{shown(light['max_ms']):>8} {shown(light['reset_p99_ms']):>9} {shown(light['success_rate'], '.3f'):>7} "
              f"{light['errors']:6d} {bad['steps']:9d} {bad['timed_out']:7d} {shown(bad['max_s'], '.2f'):>9} "
              f"{phase['longest_step_s']:9.2f} {cores:>20} {phase['rss_mb']:7.1f}")  # fmt: skip
    print("stopped: bad steps the budget ended; longest: the longest step of any session; cores: the machine's")
    print("busy cores in the window (server, its sandbox children, client and anything else), this client's, and")
    print("the machine's in 2 s before the phase's server started (other work on the host)")
    for name, phase in phases.items():
        for side in ("light", "bad"):
            if phase.get(side, {}).get("first_error"):
                print(f"  {name} {side}: {phase[side]['errors']} errors, first: {phase[side]['first_error']}")
        if phase.get("server_tracebacks"):
            print(f"  {name}: {phase['server_tracebacks']} server tracebacks")
        if phase.get("bad_code"):
            print(f"  {name}: the bad sessions' code: {phase['bad_code']!r}")


def main(
    task: str = "GoogleSheets", light: int = LIGHT, think: float = THINK, seconds: float = SECONDS, bad: int = BAD,
    budget: float = BUDGET, server_args: tuple[str, ...] = (),
) -> dict[str, Any]:  # fmt: skip
    open_files = raise_open_files(2 * (light + bad) + 256)
    load = Load(light, bad, think, seconds, budget)
    plans = oracle_plans(task, env_kwargs(budget))
    phases: dict[str, dict[str, Any]] = {"alone": run_phase(task, plans, load, None, server_args)}
    for name, code in BAD_CODE[task].items():
        phases[name] = run_phase(task, plans, load, code, server_args)
    phases["block"] = {"na": NO_BLOCK}
    with_ratios(phases, budget)
    print_table(task, load, phases)
    print(f"server: {phases['alone']['command']}")
    print(f"measured by: {shell_line([sys.executable, *sys.argv])}")
    results = {
        "task": task,
        "budget_s": budget,
        "light": light,
        "bad": bad,
        "think_s": think,
        "seconds": seconds,
        "open_files_soft_limit": open_files,
        "phases": phases,
    }
    print(f"saved {save_results(f'serve_fairness_{task}', results)}")
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=sorted(BAD_CODE), default="GoogleSheets")
    parser.add_argument("--light", type=int, default=LIGHT, help="light sessions")
    parser.add_argument("--bad", type=int, default=BAD, help="bad sessions")
    parser.add_argument("--think", type=float, default=THINK, help="seconds a light session waits before each call")
    parser.add_argument("--seconds", type=float, default=SECONDS, help="the light sessions' window")
    parser.add_argument("--budget", type=float, default=BUDGET, help="each step's time_limit, seconds")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_LIGHT} light sessions, {QUICK_SECONDS:g} s")
    parser.add_argument(
        "--server-args", default="", help="more flags for the server, as one string: --server-args='--idle-timeout 60'"
    )
    args = parser.parse_args()
    main(
        args.task,
        QUICK_LIGHT if args.quick else args.light,
        args.think,
        QUICK_SECONDS if args.quick else args.seconds,
        args.bad,
        args.budget,
        tuple(shlex.split(args.server_args)),
    )
