"""The Docker image: built from docker/Dockerfile, it serves envs and mocks to the host, as a non-root user.

Selected by ``make docker-test`` (the ``docker`` marker; the default run leaves it out: building the
image takes minutes). Skips, saying why, where no docker daemon answers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
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
