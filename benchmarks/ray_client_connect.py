"""How often a Ray head's ``ray://`` proxy fails to start a client's server, with gRPC's fork handlers
on (Ray's default) and off (``GRPC_ENABLE_FORK_SUPPORT=0``, as the Ray image runs its nodes), in one run.

For each setting it starts a head on this machine (``ray start --head``, token authentication, a temp dir
of its own), connects ``--clients`` clients through ``ray://``, ``--batch`` at a time, each with a plain
``ray.init`` (no retry) and one ``ray.get``, and counts the ones refused with "Initialization failure from
server". ``--load N`` keeps N busy-looping processes running meanwhile: the race shows more often on a
loaded machine. Needs the ray extra: ``pip install 'toolbench-gym[ray]'``.

    .venv/bin/python benchmarks/ray_client_connect.py --clients 36 --batch 3 --load 2
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))
CLIENT = "import ray, sys\nray.init(sys.argv[1], log_to_driver=False)\nassert ray.get(ray.put(1)) == 1\nray.shutdown()"
SETTINGS = {"fork handlers on (Ray's default)": {}, "GRPC_ENABLE_FORK_SUPPORT=0": {"GRPC_ENABLE_FORK_SUPPORT": "0"}}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def failed_connections(head_env: dict[str, str], clients: int, batch: int) -> tuple[int, list[str]]:
    """(clients refused, their last error lines) against a fresh head started with ``head_env``."""
    root = Path(tempfile.mkdtemp(prefix="tbrc-", dir="/tmp"))  # short: Ray's socket paths live under it
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_") and k != "GRPC_ENABLE_FORK_SUPPORT"}
    env.update(HOME=str(root), RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32))
    gcs, dashboard, client = _free_port(), _free_port(), _free_port()
    log = root / "head.log"
    head = subprocess.Popen(
        [RAY, "start", "--block", "--head", "--port", str(gcs), "--dashboard-port", str(dashboard),
         "--ray-client-server-port", str(client), "--num-cpus", "1", "--dashboard-agent-listen-port", "0",
         "--min-worker-port", "0", "--max-worker-port", "0", "--object-store-memory", str(100 * 2**20),
         "--temp-dir", str(root / "ray")],
        stdout=log.open("w"), stderr=subprocess.STDOUT, env={**env, **head_env}, start_new_session=True,
    )  # fmt: skip
    refused: list[str] = []
    try:
        deadline = time.monotonic() + 120
        while "block forever" not in log.read_text():
            if head.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the head did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.5)
        for start in range(0, clients, batch):
            running = [
                subprocess.Popen([sys.executable, "-c", CLIENT, f"ray://127.0.0.1:{client}"], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                for _ in range(min(batch, clients - start))
            ]  # fmt: skip
            for process in running:
                _, err = process.communicate(timeout=300)
                if process.returncode != 0:
                    lines = err.strip().splitlines() or ["(no output)"]
                    refused.append(lines[-1][:160])
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(head.pid, signal.SIGKILL)
        head.wait(timeout=30)
    return len(refused), refused


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=36, help="ray:// connections per setting")
    parser.add_argument("--batch", type=int, default=3, help="connections made at the same time")
    parser.add_argument("--load", type=int, default=2, help="busy-looping processes running meanwhile")
    args = parser.parse_args(argv)
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
    results: dict[str, dict[str, float]] = {}
    try:
        for name, head_env in SETTINGS.items():
            started = time.monotonic()
            failed, errors = failed_connections(head_env, args.clients, args.batch)
            results[name] = {"clients": args.clients, "failed": failed, "seconds": round(time.monotonic() - started, 1)}
            print(f"{name:36} {failed:3} of {args.clients} connections failed ({results[name]['seconds']} s)")
            # The same error with another port or pid is the same error.
            for error, count in collections.Counter(re.sub(r"\d+", "N", e) for e in errors).most_common():
                print(f"    {count} x {error}")
    finally:
        for burner in burners:
            burner.kill()
    return results


if __name__ == "__main__":
    main()
