"""Connecting to Ray (an optional extra: ``pip install toolbench-gym[ray]``).

Ray is imported only here and only when asked for, so the package works without it. A Ray already
started by the caller (``ray.init(runtime_env=...)`` in a training script) is used as it is.
"""

from __future__ import annotations

import os
import sys
import time
from types import ModuleType
from typing import Any

INSTALL_HINT = "Ray is not installed: pip install 'toolbench-gym[ray]'"

#: How a ``ray://`` head reports that the server it started for this client died before it served: the
#: proxy saw the process exit, or found it a zombie (or gone) while waiting for it. A head whose proxy
#: runs with gRPC's fork support on (Ray's default) forks that server while its gRPC threads run, and
#: now and then the child dies in gRPC's fork handling; a new connection gets a new server.
SERVER_DIED = ("Starting Ray client server failed", "ZombieProcess", "NoSuchProcess")
CONNECT_TRIES = 3


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
    A ``ray://`` connection whose server died on the head as it started (``SERVER_DIED``) is made
    again, up to ``CONNECT_TRIES`` times in all, each retry said on stderr.
    """
    ray = import_ray()
    if ray.is_initialized():
        return ray
    through_client = (address or os.environ.get("RAY_ADDRESS") or "").startswith("ray://")
    for attempt in range(1, CONNECT_TRIES):
        try:
            ray.init(address=address, **init_kwargs)
            return ray
        except ConnectionAbortedError as error:
            if not (through_client and any(sign in str(error) for sign in SERVER_DIED)):
                raise
        print(f"ray: the head's server for this client died as it started; connecting again "
              f"({attempt + 1} of {CONNECT_TRIES})", file=sys.stderr)  # fmt: skip
        ray.shutdown()
        time.sleep(1)
    ray.init(address=address, **init_kwargs)
    return ray


def cluster_cpus(ray: ModuleType) -> int:
    """The CPUs the cluster has in all (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))
