"""The Docker image: built from docker/Dockerfile, it serves envs and mocks to the host, as a non-root user.

Selected by ``make docker-test`` (the ``docker`` marker; the default run leaves it out: building the
image takes minutes). Skips, saying why, where no docker daemon answers.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import pytest
import requests

import toolbench
from toolbench.remote import RemoteEnv

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[2]
IMAGE = os.environ.get("TOOLBENCH_DOCKER_IMAGE", "toolbench-gym:latest")
#: The env server binds 0.0.0.0 in its container, which it does only with a token (given as the
#: README says: in the container's environment).
TOKEN = "docker-test-" + uuid.uuid4().hex + uuid.uuid4().hex
#: (task, gym.make arguments): a curl task, a call task played step by step, and a code task whose
#: actions run in the sandbox inside the container.
SERVED = [
    ("OpenWeather", {}),
    ("HomeSearch", {"mode": "interactive"}),
    ("GoogleSheets", {}),
]


def _docker(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def image() -> str:
    if shutil.which("docker") is None:
        pytest.skip("no docker client on this machine")
    info = _docker("info", "--format", "{{.ServerVersion}}", timeout=30)
    if info.returncode != 0:
        pytest.skip(f"no docker daemon answers: {info.stderr.strip()[:300]}")
    # make docker-test builds it first; run alone, the test builds it the same way.
    if _docker("image", "inspect", IMAGE).returncode != 0:
        subprocess.run(["make", "docker", f"DOCKER_IMAGE={IMAGE}"], cwd=ROOT, check=True, timeout=1800)
    return IMAGE


def _start(image: str, *command: str) -> tuple[str, str]:
    """A detached container running ``toolbench COMMAND`` on port 8000, published on a free loopback
    port of the host, with ``TOOLBENCH_TOKEN`` set; its name and the host's URL."""
    name = f"toolbench-test-{uuid.uuid4().hex[:12]}"
    started = _docker("run", "--detach", "--rm", "--name", name, "--publish", "127.0.0.1::8000",
                      "--env", f"TOOLBENCH_TOKEN={TOKEN}", image, *command)  # fmt: skip
    assert started.returncode == 0, started.stderr
    port = _docker("port", name, "8000/tcp").stdout.split()[0].rsplit(":", 1)[1]
    return name, f"http://127.0.0.1:{port}"


def _wait(url: str, name: str, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if requests.get(url, timeout=2).status_code < 500:
                return
        except requests.ConnectionError:
            pass
        time.sleep(0.5)
    logs = _docker("logs", name).stderr
    raise AssertionError(f"{url} did not answer within {seconds} s; the container's log:\n{logs[-2000:]}")


@pytest.fixture
def container(image: str) -> Iterator[Callable[..., str]]:
    names: list[str] = []

    def start(*command: str) -> str:
        name, url = _start(image, *command)
        names.append(name)
        return url

    yield start
    for name in names:
        _docker("rm", "--force", name)


def test_runs_as_an_unprivileged_user(image: str) -> None:
    who = _docker("run", "--rm", "--entrypoint", "id", image, "-u")
    assert who.returncode == 0, who.stderr
    assert who.stdout.strip() != "0"


def test_doctor_inside_reports_the_layers_a_run_gets(image: str) -> None:
    doctor = _docker("run", "--rm", image, "doctor", "--json")
    assert doctor.returncode == 0, doctor.stderr
    report = json.loads(doctor.stdout)
    # Docker's default flags: no namespaces for a non-root user, every other layer applied.
    assert set(report["applied_in_a_run"]) >= {"no_new_privs", "unprivileged uid", "seccomp"}
    assert any(layer.startswith("landlock") for layer in report["applied_in_a_run"]) == (
        report["layers"]["landlock"].startswith("available")
    )
    assert report["layers"]["network namespace"].startswith("unavailable")


def test_doctor_with_the_namespace_flags_gets_the_namespaces(image: str) -> None:
    doctor = _docker("run", "--rm", "--user", "0", "--cap-add", "SYS_ADMIN", image, "doctor", "--json")
    assert doctor.returncode == 0, doctor.stderr
    applied = json.loads(doctor.stdout)["applied_in_a_run"]
    assert {"network namespace", "IPC namespace", "UTS namespace", "PID namespace", "unprivileged uid"} <= set(applied)


@pytest.mark.parametrize(("task", "kwargs"), SERVED, ids=[task for task, _ in SERVED])
def test_an_episode_played_from_the_host_through_the_env_server(container, task: str, kwargs: dict) -> None:
    url = container("serve", "env", "--task", task, "--env-kwargs", json.dumps(kwargs), "--host", "0.0.0.0")
    _wait(f"{url}/health", url)
    local = gym.make(f"toolbench/{task}-v0", **kwargs)
    record = toolbench.load_tasks(task, "test")[0]
    remote = RemoteEnv(url, token=TOKEN)
    try:
        observation, info = remote.reset(options={"task_id": record.id})
        expected_observation, expected_info = local.reset(options={"task_id": record.id})
        assert (observation, info["task_id"]) == (expected_observation, expected_info["task_id"])
        for action in local.unwrapped.oracle_actions(record):
            observation, reward, terminated, truncated, info = remote.step(action)
            expected = local.step(action)
            assert (observation, reward, terminated, truncated) == expected[:4]
        assert terminated and reward == 1.0 and info["success"] is True
    finally:
        remote.close()
        local.close()


def test_the_env_server_in_a_container_refuses_to_start_without_a_token(image: str) -> None:
    refused = _docker("run", "--rm", image, "serve", "env", "--task", "HomeSearch", "--host", "0.0.0.0")
    assert refused.returncode == 2
    assert "give it a token" in refused.stderr and "TOOLBENCH_TOKEN" in refused.stderr


def test_the_env_server_in_a_container_answers_only_with_its_token(container) -> None:
    url = container("serve", "env", "--task", "HomeSearch", "--host", "0.0.0.0")
    _wait(f"{url}/health", url)
    assert requests.get(f"{url}/health", timeout=10).json() == {"status": "healthy"}  # liveness only, without it
    full = requests.get(f"{url}/health", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10).json()
    assert full["exposure"]["token_required"] is True
    assert requests.get(f"{url}/schema", timeout=10).status_code == 401
    assert requests.get(f"{url}/schema", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10).status_code == 200


def test_a_served_mock_api_answers_the_host(container) -> None:
    url = container("serve", "openweather", "--host", "0.0.0.0", "--port", "8000")
    from toolbench.mock_services import openweather

    _wait(f"{url}/data/2.5/weather?q=Copenhagen&appid={openweather.DEMO_API_KEY}", url)
    answer = requests.get(
        f"{url}/data/2.5/weather",
        params={"q": "Copenhagen", "units": "metric", "appid": openweather.DEMO_API_KEY},
        timeout=10,
    )
    assert answer.status_code == 200
    assert answer.json()["name"] == "Copenhagen"
    refused = requests.get(f"{url}/data/2.5/weather", params={"q": "Copenhagen", "appid": "wrong"}, timeout=10)
    assert refused.status_code == 401


# The image's variants (docker/build.sh VARIANT; docs/cluster.md): the same Dockerfile with EXTRAS.
RAY_IMAGE = os.environ.get("TOOLBENCH_DOCKER_RAY_IMAGE", "toolbench-gym:ray")
OPENENV_IMAGE = os.environ.get("TOOLBENCH_DOCKER_OPENENV_IMAGE", "toolbench-gym:openenv")


def _variant(image: str, variant: str) -> str:
    """``image``, built by ``docker/build.sh VARIANT`` where it is missing (make docker-test builds it first)."""
    if shutil.which("docker") is None:
        pytest.skip("no docker client on this machine")
    info = _docker("info", "--format", "{{.ServerVersion}}", timeout=30)
    if info.returncode != 0:
        pytest.skip(f"no docker daemon answers: {info.stderr.strip()[:300]}")
    if _docker("image", "inspect", image).returncode != 0:
        subprocess.run([str(ROOT / "docker" / "build.sh"), variant, image], cwd=ROOT, check=True, timeout=1800)
    return image


@pytest.fixture(scope="module")
def ray_image() -> str:
    return _variant(RAY_IMAGE, "ray")


@pytest.fixture(scope="module")
def openenv_image() -> str:
    return _variant(OPENENV_IMAGE, "openenv")


def _python_in(image: str, code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return _docker("run", "--rm", "--entrypoint", "python", image, "-c", code, *args, timeout=300)


def test_the_ray_variant_holds_ray_with_its_state_api_and_client_server(ray_image: str) -> None:
    labels = json.loads(_docker("image", "inspect", "--format", "{{json .Config.Labels}}", ray_image).stdout)
    assert labels["io.toolbench.extras"] == "ray"
    # gRPC's fork handlers off, so the head's ray:// proxy starts each client's server reliably
    # (docs/cluster.md; benchmarks/ray_client_connect.py measures the difference).
    env = json.loads(_docker("image", "inspect", "--format", "{{json .Config.Env}}", ray_image).stdout)
    assert "GRPC_ENABLE_FORK_SUPPORT=0" in env
    # ray[default]: the dashboard's optional dependencies (the state API); ray[client]: grpc.
    found = _python_in(
        ray_image, "import os, grpc, ray, ray.dashboard.optional_deps; print(ray.__version__, os.getuid())"
    )
    assert found.returncode == 0, found.stderr
    version, uid = found.stdout.split()
    assert tuple(int(part) for part in version.split(".")[:2]) >= (2, 60) and uid != "0"


@dataclass
class _RayContainers:
    gcs: str
    client: str
    env: dict[str, str]  # the host's environment with the cluster's token
    head: str  # the head's container

    def client_server_logs(self) -> str:
        """The head's ray:// server logs (the proxy's, and each client's own server's)."""
        logs = _docker("exec", self.head, "sh", "-c", "tail -n 40 /tmp/ray/session_latest/logs/ray_client_server*")
        return logs.stdout[-6000:]


@pytest.fixture
def ray_containers(ray_image: str) -> Iterator[_RayContainers]:
    """A Ray head and a second node, each a container of the Ray image on the host's network (Ray's nodes
    connect to each other on ports they pick), with token authentication; the second node has the
    resource ``second``."""
    pytest.importorskip("ray", reason="the host's driver needs the ray extra: pip install 'toolbench-gym[ray]'")
    pytest.importorskip("grpc", reason="a ray:// driver needs ray[client]: pip install 'toolbench-gym[ray]'")
    token = uuid.uuid4().hex + uuid.uuid4().hex
    gcs, dashboard, client = (_free_port() for _ in range(3))
    auth = ["--env", "RAY_AUTH_MODE=token", "--env", f"RAY_AUTH_TOKEN={token}", "--env", "RAY_USAGE_STATS_ENABLED=0"]
    node = ["--num-cpus", "1", "--dashboard-agent-listen-port", "0", "--min-worker-port", "0", "--max-worker-port", "0",
            "--object-store-memory", str(100 * 2**20)]  # fmt: skip
    names = [f"toolbench-ray-head-{uuid.uuid4().hex[:8]}", f"toolbench-ray-node-{uuid.uuid4().hex[:8]}"]
    commands = [
        ["--head", "--port", str(gcs), "--dashboard-port", str(dashboard), "--ray-client-server-port", str(client)],
        ["--address", f"127.0.0.1:{gcs}", "--resources", '{"second": 1}'],
    ]
    try:
        for name, command in zip(names, commands, strict=True):
            started = _docker("run", "--detach", "--rm", "--name", name, "--network", "host", "--shm-size", "256m",
                              *auth, "--entrypoint", "ray", ray_image, "start", "--block", *node, *command)  # fmt: skip
            assert started.returncode == 0, started.stderr
            deadline = time.monotonic() + 90
            while "block forever" not in (logs := _docker("logs", name)).stdout + logs.stderr:
                assert time.monotonic() < deadline, f"{name} did not start a Ray node:\n{logs.stderr[-3000:]}"
                time.sleep(0.5)
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH") and k != "RAY_ADDRESS"}
        yield _RayContainers(f"127.0.0.1:{gcs}", f"ray://127.0.0.1:{client}",
                             {**env, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token}, names[0])  # fmt: skip
    finally:
        for name in names:
            _docker("rm", "--force", name)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_ray_nodes_in_containers_play_episodes_as_the_host_does(ray_containers, tmp_path) -> None:
    from tests.ray.cluster_driver import DRIVER, EPISODES, local_episode

    out = tmp_path / "played.pickle"
    # The host's driver joins through ray://: its Python (the venv's) need not be the image's to the patch
    # level, as a node's or a direct driver's must.
    driver = subprocess.run(
        [sys.executable, "-c", DRIVER, ray_containers.client, pickle.dumps(EPISODES).hex(), str(out)],
        capture_output=True, text=True, env=ray_containers.env, timeout=300, check=False,
    )  # fmt: skip
    assert driver.returncode == 0, (
        driver.stderr[-3000:] + "\nthe head's ray:// server:\n" + ray_containers.client_server_logs()
    )
    played = pickle.loads(out.read_bytes())
    (second,) = [node for node, resources in played["nodes"].items() if "second" in resources]
    assert len(played["nodes"]) == 2 and played["actor_node"] == second
    for (task, kwargs), remote in zip(EPISODES, played["episodes"], strict=True):
        assert remote == local_episode(task, kwargs), task
    listed = subprocess.run(
        [str(Path(sys.executable).with_name("ray")), "list", "actors", "--address", ray_containers.gcs,
         "--format", "json", "--detail"],
        capture_output=True, text=True, env=ray_containers.env, timeout=120, check=False,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr[-2000:]
    assert [a["node_id"] for a in json.loads(listed.stdout) if a["class_name"] == "Player"] == [second]


#: Run in the openenv image: the env server on the container's loopback, openenv-core's own client playing
#: the oracle's episode against it, and SkyRL-gym's make() of the adapter's env on a dataset row.
OPENENV_IN_CONTAINER = """
import json, subprocess, sys, time
import requests
import gymnasium as gym
from openenv.core import GenericEnvClient
import toolbench

server = subprocess.Popen(["toolbench", "serve", "env", "--task", "HomeSearch", "--env-kwargs",
                           '{"mode": "interactive"}', "--port", "8000"])
for _ in range(120):
    try:
        if requests.get("http://127.0.0.1:8000/health", timeout=1).ok:
            break
    except requests.ConnectionError:
        time.sleep(0.5)
env = gym.make("toolbench/HomeSearch-v0", mode="interactive").unwrapped
task_id = sys.argv[1]
with GenericEnvClient(base_url="http://127.0.0.1:8000").sync() as client:
    first = client.reset(seed=0, task_id=task_id)
    got = [[first.observation["text"], first.observation["info"]]]
    for action in env.oracle_actions(env._tasks_by_id[task_id]):
        result = client.step({"text": action})
        obs = result.observation
        got.append([obs["text"], result.reward, obs["terminated"], obs["truncated"], obs["info"]])
server.terminate()

import skyrl_gym
import toolbench.integrations.verifiers
from toolbench.integrations.skyrl import register, task_rows
(row,) = task_rows(["HomeSearch"], split="train", size=1, seed=7)
register()
skyrl_env = skyrl_gym.make(row["env_class"], env_config={},
                           extras={k: v for k, v in row.items() if k not in ("prompt", "env_class")})
_, info = skyrl_env.init(row["prompt"])
print(json.dumps({"episode": got, "skyrl_task": [info["task_id"], row["task_id"]]}))
"""


def test_the_openenv_variant_serves_to_openenv_cores_client_and_holds_the_trainer_adapters(openenv_image) -> None:
    from tests.env_server.test_http import TASK_IDS, local_episode

    labels = json.loads(_docker("image", "inspect", "--format", "{{json .Config.Labels}}", openenv_image).stdout)
    assert labels["io.toolbench.extras"] == "openenv,skyrl,verifiers"
    absent = _python_in(
        openenv_image, "import importlib.util as u; print([m for m in ('torch', 'trl') if u.find_spec(m)])"
    )
    assert absent.returncode == 0 and absent.stdout.strip() == "[]", absent.stderr  # the trainers stay out
    played = _python_in(openenv_image, OPENENV_IN_CONTAINER, TASK_IDS[0])
    assert played.returncode == 0, played.stderr[-3000:]
    report = json.loads(played.stdout.strip().splitlines()[-1])
    assert report["episode"] == local_episode(TASK_IDS[0])
    assert report["episode"][-1][1] == 1.0
    first, expected = report["skyrl_task"]
    assert first == expected
