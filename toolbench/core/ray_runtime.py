"""Connecting to Ray (an optional extra: ``pip install toolbench-gym[ray]``).

Ray is imported only here and only when asked for, so the package works without it. A Ray already
started by the caller (``ray.init(runtime_env=...)`` in a training script) is used as it is.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

INSTALL_HINT = "Ray is not installed: pip install 'toolbench-gym[ray]'"


def import_ray() -> ModuleType:
    """The ``ray`` module; raises ImportError saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return ray


def connect(address: str | None = None, **init_kwargs: Any) -> ModuleType:
    """``ray``, initialised: the running instance if there is one, else ``ray.init(address)``.

    ``address=None`` starts a local instance (or joins the one ``RAY_ADDRESS`` names, as
    ``ray.init`` does), ``"auto"`` joins the cluster this machine is part of, ``"ray://host:10001"``
    a remote cluster through Ray Client. ``init_kwargs`` go to ``ray.init`` (``runtime_env``, ...).
    """
    ray = import_ray()
    if not ray.is_initialized():
        ray.init(address=address, **init_kwargs)
    return ray


def cluster_cpus(ray: ModuleType) -> int:
    """The CPUs the cluster has in all (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))
