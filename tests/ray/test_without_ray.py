"""What the Ray options say where Ray is absent or not asked for (no Ray instance needed)."""

from __future__ import annotations

import sys

import pytest

from toolbench.cli import main
from toolbench.eval.harness import evaluate


def test_without_ray_installed_the_backend_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails
    with pytest.raises(ImportError, match=r"pip install 'toolbench-gym\[ray\]'"):
        evaluate("oracle", ["CatAPI"], limit=1, backend="ray")
    assert main(["eval", "--agent", "oracle", "--task", "CatAPI", "--backend", "ray"]) == 2
    assert "pip install 'toolbench-gym[ray]'" in capsys.readouterr().err


def test_ray_options_are_checked(capsys):
    assert main(["eval", "--agent", "oracle", "--task", "CatAPI", "--ray-address", "auto"]) == 2
    assert "--ray-address needs --backend ray" in capsys.readouterr().err
    with pytest.raises(ValueError, match="backend 'spark'"):
        evaluate("oracle", ["CatAPI"], limit=1, backend="spark")


class _FlakyRay:
    """A stand-in for ``ray`` whose ``init`` raises the given errors first, then connects."""

    def __init__(self, *errors: Exception) -> None:
        self.errors = list(errors)
        self.inits: list[str | None] = []
        self.shutdowns = 0

    def is_initialized(self) -> bool:
        return False

    def init(self, address=None, **kwargs) -> None:
        self.inits.append(address)
        if self.errors:
            raise self.errors.pop(0)

    def shutdown(self) -> None:
        self.shutdowns += 1


def _server_died(how: str) -> ConnectionAbortedError:
    return ConnectionAbortedError(f"Initialization failure from server:\nTraceback ...\n{how}\n")


def test_a_ray_client_whose_server_died_on_the_head_connects_again(monkeypatch, capsys):
    from toolbench.core import ray_runtime

    monkeypatch.setattr(ray_runtime.time, "sleep", lambda seconds: None)
    fake = _FlakyRay(
        _server_died("RuntimeError: Starting Ray client server failed. See ray_client_server_23007.err"),
        _server_died("psutil.ZombieProcess: PID still exists but it's a zombie (pid=399)"),
    )
    monkeypatch.setattr(ray_runtime, "import_ray", lambda: fake)
    assert ray_runtime.connect("ray://127.0.0.1:10001") is fake
    assert fake.inits == ["ray://127.0.0.1:10001"] * 3 and fake.shutdowns == 2
    assert capsys.readouterr().err.count("connecting again") == 2
    # The same where the address comes from RAY_ADDRESS, as ray.init reads it.
    monkeypatch.setenv("RAY_ADDRESS", "ray://127.0.0.1:10001")
    fake = _FlakyRay(_server_died("Starting Ray client server failed"))
    monkeypatch.setattr(ray_runtime, "import_ray", lambda: fake)
    assert ray_runtime.connect() is fake and fake.inits == [None, None]
    monkeypatch.delenv("RAY_ADDRESS")

    # A third death in a row is the caller's to see, as is any other failure, or one not through ray://.
    for address, errors, inits in [
        ("ray://127.0.0.1:10001", [_server_died("NoSuchProcess")] * 3, 3),
        ("ray://127.0.0.1:10001", [_server_died("RuntimeEnvSetupError: pip install failed")], 1),
        ("127.0.0.1:6379", [_server_died("Starting Ray client server failed")], 1),
        ("ray://127.0.0.1:10001", [ConnectionError("ray client connection timeout")], 1),
    ]:
        fake = _FlakyRay(*errors)
        monkeypatch.setattr(ray_runtime, "import_ray", lambda fake=fake: fake)
        with pytest.raises(ConnectionError):
            ray_runtime.connect(address)
        assert len(fake.inits) == inits, (address, errors)
