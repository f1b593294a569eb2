"""docker/compose.yaml: the env server and, with the profile ray, a Ray head and a worker with token auth.

Selected by ``make docker-test`` (the ``docker`` marker). Brings a stack up under a project name of its own,
with generated tokens and free loopback ports, and always takes it down. Skips, saying why, where docker,
its daemon or compose (``docker compose`` or Debian's ``docker-compose``) is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "docker" / "compose.yaml"
#: The images the compose file names, and docker/build.sh's variant for each.
IMAGES = {"toolbench-gym:latest": "latest", "toolbench-gym:ray": "ray"}
#: What the driver plays on the cluster and here: code tasks, whose code the sandbox runs on the nodes.
TASK = "GoogleSheets"


def _run(
    command: list[str], env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout, check=False)


def _compose_command() -> list[str]:
    """``docker compose`` (the v2 plugin) or ``docker-compose``; skips where neither is installed."""
    if shutil.which("docker") is None:
        pytest.skip("no docker client on this machine")
    if _run(["docker", "compose", "version"]).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    pytest.skip("no docker compose on this machine (Debian: apt-get install docker-compose)")


def _host_env(**extra: str) -> dict[str, str]:
    """This environment without Ray's and the env server's settings, and with ``extra``."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith("RAY_") and k != "TOOLBENCH_TOKEN"}
    return {**keep, **extra}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def compose() -> list[str]:
    command = _compose_command()
    return [*command, "--file", str(COMPOSE_FILE)]


@pytest.fixture(scope="module")
def images(compose) -> None:
    """The images the compose file runs, built by ``docker/build.sh`` where missing."""
    info = _run(["docker", "info", "--format", "{{.ServerVersion}}"], timeout=30)
    if info.returncode != 0:
        pytest.skip(f"no docker daemon answers: {info.stderr.strip()[:300]}")
    for image, variant in IMAGES.items():
        if _run(["docker", "image", "inspect", image]).returncode != 0:
            subprocess.run([str(ROOT / "docker" / "build.sh"), variant, image], cwd=ROOT, check=True, timeout=1800)


def _created_services(project: str) -> list[str]:
    listed = _run(["docker", "ps", "--all", "--filter", f"label=com.docker.compose.project={project}",
                   "--format", '{{.Label "com.docker.compose.service"}}'])  # fmt: skip
    return sorted(listed.stdout.split())


def test_without_the_profile_up_makes_no_ray_node_and_needs_no_ray_token(compose, images) -> None:
    name = f"toolbench-test-{uuid.uuid4().hex[:8]}"
    env = _host_env(TOOLBENCH_TOKEN="t" * 32)
    try:
        created = _run([*compose, "--project-name", name, "up", "--no-start"], env=env)
        assert created.returncode == 0, created.stderr[-3000:]
        assert _created_services(name) == ["catapi", "env", "openweather", "sheets"]
    finally:
        _run([*compose, "--project-name", name, "down", "--remove-orphans"], env=env)
    assert _created_services(name) == []
    no_token = _run([*compose, "config"], env=_host_env())
    assert no_token.returncode != 0 and "set TOOLBENCH_TOKEN" in no_token.stderr


@pytest.mark.parametrize("token", [None, "short"])
def test_a_ray_node_refuses_to_start_without_a_token(compose, images, token) -> None:
    project = ["--project-name", f"toolbench-test-{uuid.uuid4().hex[:8]}", "--profile", "ray"]
    env = _host_env(TOOLBENCH_TOKEN="t" * 32, **({"RAY_AUTH_TOKEN": token} if token else {}))
    try:
        started = _run([*compose, *project, "run", "--rm", "--no-deps", "-T", "ray-worker"], env=env)
    finally:
        _run([*compose, *project, "down", "--remove-orphans", "--timeout", "5"], env=env)
    assert started.returncode == 2, started.stdout + started.stderr
    assert "set RAY_AUTH_TOKEN" in started.stderr


@dataclass
class Stack:
    compose: list[str]  # compose with the stack's project name and profile
    env: dict[str, str]  # the environment the stack was brought up with: its tokens and ports
    up_seconds: float

    def container(self, service: str) -> str:
        found = _run([*self.compose, "ps", "-q", service], env=self.env).stdout.split()
        assert len(found) == 1, f"{service}: {found}"
        return found[0]

    def exec(self, service: str, *command: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        # docker exec, not compose exec: the same on compose v1 and v2.
        return _run(["docker", "exec", self.container(service), *command], timeout=timeout)

    def logs(self) -> str:
        return _run([*self.compose, "logs", "--no-color", "--tail", "30"], env=self.env).stdout[-6000:]

    def url(self, port_variable: str) -> str:
        return f"http://127.0.0.1:{self.env[port_variable]}"


def _alive_nodes(stack: Stack) -> list[dict]:
    listed = stack.exec("ray-head", "ray", "list", "nodes", "--format", "json")
    if listed.returncode != 0 or not listed.stdout.startswith("["):  # "No resource in the cluster" at first
        return []
    return [node for node in json.loads(listed.stdout) if node["state"] == "ALIVE"]


@pytest.fixture(scope="module")
def stack(compose, images) -> Iterator[Stack]:
    """The env server, the Ray head and the Ray worker, up until both nodes are alive and the server
    answers; taken down afterwards, whatever happened."""
    env = _host_env(
        TOOLBENCH_TOKEN="compose-test-" + uuid.uuid4().hex + uuid.uuid4().hex,
        RAY_AUTH_TOKEN=uuid.uuid4().hex + uuid.uuid4().hex,
        TOOLBENCH_ENV_PORT=str(_free_port()),
        RAY_CLIENT_PORT=str(_free_port()),
        RAY_DASHBOARD_PORT=str(_free_port()),
    )
    project = [*compose, "--project-name", f"toolbench-test-{uuid.uuid4().hex[:8]}", "--profile", "ray"]
    stack = Stack(project, env, 0.0)
    start = time.monotonic()
    try:
        # The named services only: the mocks publish fixed ports (8001-8003), which the host may be using.
        up = _run([*project, "up", "--detach", "env", "ray-head", "ray-worker"], env=env, timeout=300)
        assert up.returncode == 0, up.stderr[-3000:]
        deadline = time.monotonic() + 180
        while len(_alive_nodes(stack)) < 2:
            assert time.monotonic() < deadline, "the Ray nodes did not both come up:\n" + stack.logs()
            time.sleep(1)
        while True:
            try:
                if requests.get(f"{stack.url('TOOLBENCH_ENV_PORT')}/health", timeout=2).ok:
                    break
            except requests.ConnectionError:
                pass
            assert time.monotonic() < deadline, "the env server did not answer:\n" + stack.logs()
            time.sleep(0.5)
        stack.up_seconds = time.monotonic() - start
        print(f"the stack was up in {stack.up_seconds:.1f} s")
        yield stack
    finally:
        down = _run([*project, "down", "--remove-orphans", "--timeout", "5"], env=env, timeout=300)
        assert down.returncode == 0, down.stderr[-3000:]


def test_the_published_ports_are_on_loopback_only(stack: Stack) -> None:
    for service, port in (("env", "8000"), ("ray-head", "10001"), ("ray-head", "8265")):
        published = _run([*stack.compose, "port", service, port], env=stack.env).stdout.split()
        assert [address.rsplit(":", 1)[0] for address in published] == ["127.0.0.1"], (service, port, published)


def test_the_head_sees_two_alive_nodes_and_refuses_a_wrong_token(stack: Stack) -> None:
    nodes = _alive_nodes(stack)
    assert sorted(node["is_head_node"] for node in nodes) == [False, True]
    assert len({node["node_ip"] for node in nodes}) == 2  # each container its own address on the bridge
    wrong = stack.exec("ray-head", "env", "RAY_AUTH_TOKEN=" + "0" * 64, "ray", "list", "nodes")
    assert wrong.returncode != 0 and "InvalidAuthToken" in wrong.stdout + wrong.stderr
    # The dashboard's state API, published on the host's loopback, wants the token too.
    api = f"{stack.url('RAY_DASHBOARD_PORT')}/api/v0/nodes"
    assert requests.get(api, timeout=30).status_code == 401
    bearer = {"Authorization": f"Bearer {stack.env['RAY_AUTH_TOKEN']}"}
    assert requests.get(api, headers=bearer, timeout=30).status_code == 200


def _eval(out: Path, *backend: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "toolbench", "eval", *backend, "--workers", "2", "--task", TASK,
               "--agent", "oracle", "--json", "--quiet", "--out", str(out)]  # fmt: skip
    return _run(command, env=env, timeout=600)


def test_an_eval_on_the_cluster_through_ray_client_equals_the_local_one(stack: Stack, tmp_path) -> None:
    pytest.importorskip("ray", reason="the host's driver needs the ray extra: pip install 'toolbench-gym[ray]'")
    pytest.importorskip("grpc", reason="a ray:// driver needs ray[client]: pip install 'toolbench-gym[ray]'")
    driver_env = _host_env(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=stack.env["RAY_AUTH_TOKEN"])
    address = f"ray://127.0.0.1:{stack.env['RAY_CLIENT_PORT']}"
    remote = _eval(tmp_path / "ray", "--backend", "ray", "--ray-address", address, env=driver_env)
    assert remote.returncode == 0, remote.stderr[-3000:] + "\n" + stack.logs()
    local = _eval(tmp_path / "local", env=_host_env())
    assert local.returncode == 0, local.stderr[-3000:]
    assert json.loads(remote.stdout) == json.loads(local.stdout)
    summaries = [(tmp_path / run / "summary.json").read_text() for run in ("ray", "local")]
    assert summaries[0] == summaries[1]
    # One episode actor on each node: the worker played its share.
    listed = stack.exec("ray-head", "ray", "list", "actors", "--format", "json", "--detail")
    assert listed.returncode == 0, listed.stderr[-2000:]
    actor_nodes = {a["node_id"] for a in json.loads(listed.stdout) if a["class_name"] == "EpisodeActor"}
    assert actor_nodes == {node["node_id"] for node in _alive_nodes(stack)}


def test_the_env_server_answers_with_its_token_and_refuses_without(stack: Stack) -> None:
    url = stack.url("TOOLBENCH_ENV_PORT")
    bearer = {"Authorization": f"Bearer {stack.env['TOOLBENCH_TOKEN']}"}
    assert requests.get(f"{url}/health", timeout=10).json() == {"status": "healthy"}  # liveness, without it
    assert requests.get(f"{url}/schema", timeout=10).status_code == 401
    assert requests.get(f"{url}/schema", headers={"Authorization": "Bearer " + "0" * 64}, timeout=10).status_code == 401
    assert requests.get(f"{url}/schema", headers=bearer, timeout=10).status_code == 200
    # Another container of the stack reaches it as http://env:8000 (its --allow-host env).
    probe = ("import sys, requests; print(requests.get('http://env:8000/schema', timeout=10,"
             " headers={'Authorization': 'Bearer ' + sys.argv[1]}).status_code)")  # fmt: skip
    inside = stack.exec("ray-worker", "python", "-c", probe, stack.env["TOOLBENCH_TOKEN"])
    assert inside.returncode == 0 and inside.stdout.strip() == "200", inside.stderr[-2000:]
