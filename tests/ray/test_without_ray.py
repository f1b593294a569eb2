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
