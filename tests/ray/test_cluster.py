"""A Ray cluster of two nodes on this machine, with token authentication: what docs/cluster.md says.

The head and a second node are started by ``ray start`` with ``RAY_AUTH_MODE=token`` and the same
``RAY_AUTH_TOKEN``; a driver joins through a ``ray://`` address and plays episodes in an actor on the second
node, the same as they play here; ``ray list`` (the state API) sees that actor; a node, a driver, a
``ray://`` client or ``ray list`` without the token is refused. Takes about half a minute, most of it
starting two nodes.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import pickle
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .cluster_driver import DRIVER, EPISODES, local_episode
from .conftest import RAY_GROUP

pytestmark = [pytest.mark.slow, RAY_GROUP]

pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'toolbench-gym[ray]'")
for _module, _needs in [("aiohttp_cors", "ray[default]: `ray list`"), ("grpc", "ray[client]: ray:// addresses")]:
    if importlib.util.find_spec(_module) is None:
        pytest.skip(f"{_needs} needs {_module}: pip install 'toolbench-gym[ray]'", allow_module_level=True)

RAY = str(Path(sys.executable).with_name("ray"))


@dataclass
class Cluster:
    gcs: str  # host:port, for ray start --address, ray list --address and drivers
    client: str  # ray://host:port
    token: str
    home: Path  # an empty home: no ~/.ray/auth_token for a process to fall back on
    processes: list[subprocess.Popen]

    def env(self, token: str | None = "") -> dict[str, str]:
        """This process's environment with the cluster's token (``""``), another token, or none (``None``),
        and gRPC's fork handlers off, as docs/cluster.md starts a head."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH") and k != "RAY_ADDRESS"}
        env.update(HOME=str(self.home), RAY_USAGE_STATS_ENABLED="0", GRPC_ENABLE_FORK_SUPPORT="0")
        if token is not None:
            env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token or self.token)
        return env


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start_node(args: list[str], env: dict[str, str], log: Path, seconds: float = 90) -> subprocess.Popen:
    """``ray start --block ARGS`` in a process group of its own (so it is stopped without ``ray stop``,
    which would stop every Ray on the machine), once it reports the node started."""
    out = log.open("w")
    process = subprocess.Popen(
        [RAY, "start", "--block", "--disable-usage-stats", "--num-cpus", "1", "--dashboard-agent-listen-port", "0",
         "--min-worker-port", "0", "--max-worker-port", "0", "--object-store-memory", str(100 * 2**20), *args],
        stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + seconds
    while "block forever" not in log.read_text():
        if process.poll() is not None or time.monotonic() > deadline:
            _stop([process])
            raise AssertionError(f"ray start {' '.join(args)} did not start a node:\n{log.read_text()[-3000:]}")
        time.sleep(0.5)
    return process


def _stop(processes: list[subprocess.Popen]) -> None:
    for process in reversed(processes):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # its workers, in sessions of their own, exit with their raylet
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    # A short folder: Ray's socket paths under it must stay under the kernel's 107 characters.
    root = Path(tempfile.mkdtemp(prefix="tbray-", dir="/tmp"))
    (root / "home").mkdir()
    gcs, dashboard, client = _free_port(), _free_port(), _free_port()
    cluster = Cluster(f"127.0.0.1:{gcs}", f"ray://127.0.0.1:{client}", secrets.token_hex(32), root / "home", [])
    try:
        cluster.processes.append(_start_node(
            ["--head", "--node-ip-address", "127.0.0.1", "--port", str(gcs), "--dashboard-port", str(dashboard),
             "--ray-client-server-port", str(client), "--temp-dir", str(root / "ray")],
            cluster.env(), root / "head.log",
        ))  # fmt: skip
        cluster.processes.append(
            _start_node(["--address", cluster.gcs, "--resources", '{"second": 1}'], cluster.env(), root / "node.log")
        )
        yield cluster
    finally:
        _stop(cluster.processes)
        shutil.rmtree(root, ignore_errors=True)


def _ray_list(cluster: Cluster, what: str, token: str | None = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [RAY, "list", what, "--address", cluster.gcs, "--format", "json", "--detail"],
        capture_output=True, text=True, env=cluster.env(token), timeout=120, check=False,
    )  # fmt: skip


def test_episodes_in_an_actor_on_the_second_node_equal_the_local_ones(cluster, tmp_path):
    out = tmp_path / "played.pickle"
    driver = subprocess.run(
        [sys.executable, "-c", DRIVER, cluster.client, pickle.dumps(EPISODES).hex(), str(out)],
        capture_output=True, text=True, env=cluster.env(), timeout=300, check=False,
    )  # fmt: skip
    assert driver.returncode == 0, driver.stderr[-3000:]
    played = pickle.loads(out.read_bytes())
    assert len(played["nodes"]) == 2
    (second,) = [node for node, resources in played["nodes"].items() if "second" in resources]
    assert played["actor_node"] == second
    for (task, kwargs), remote in zip(EPISODES, played["episodes"], strict=True):
        local = local_episode(task, kwargs)
        assert remote == local, task
        assert local[-1][1] == 1.0 and local[-1][2] is True
    # The state API (ray[default]'s dashboard, asked with the token) saw the actor, on the second node.
    listed = _ray_list(cluster, "actors")
    assert listed.returncode == 0, listed.stderr[-2000:]
    actors = [actor for actor in json.loads(listed.stdout) if actor["class_name"] == "Player"]
    assert [actor["node_id"] for actor in actors] == [second]


def test_a_process_without_the_token_is_refused(cluster):
    # Each one retries before it gives up, all at once: a node 20 times a second apart unless told
    # otherwise (here 3), a client 3 times with its connection timeout (here 1 s).
    node_env = {**cluster.env(None), "RAY_gcs_server_port_wait_time_s": "3"}
    refused_node = subprocess.Popen(
        [RAY, "start", "--address", cluster.gcs, "--num-cpus", "1", "--dashboard-agent-listen-port", "0",
         "--min-worker-port", "0", "--max-worker-port", "0", "--disable-usage-stats"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=node_env, start_new_session=True,
    )  # fmt: skip
    client_env = {**cluster.env(None), "RAY_CLIENT_INITIAL_CONNECTION_TIMEOUT_S": "1", "RAY_CLIENT_MAX_CONNECTION_TIMEOUT_S": "1"}  # fmt: skip
    refused_client = subprocess.Popen(
        [sys.executable, "-c", "import ray, sys; ray.init(sys.argv[1])", cluster.client],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=client_env,
    )  # fmt: skip
    try:
        for token in (None, secrets.token_hex(32)):  # none, and the wrong one
            listed = _ray_list(cluster, "nodes", token)
            assert listed.returncode != 0 and "Authentication token is missing or incorrect" in listed.stderr
        node_output, _ = refused_node.communicate(timeout=180)
        client_output, _ = refused_client.communicate(timeout=180)
    finally:
        for process in (refused_node, refused_client):
            if process.poll() is None:
                process.kill()
    assert refused_node.returncode != 0 and "InvalidAuthToken" in node_output, node_output[-2000:]
    assert refused_client.returncode != 0 and "ray client connection timeout" in client_output, client_output[-2000:]
    listed = _ray_list(cluster, "nodes")  # with the token: still the two nodes, all alive
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert sorted(node["state"] for node in json.loads(listed.stdout)) == ["ALIVE", "ALIVE"]
