"""Env servers on loopback for the tests: uvicorn in a thread of the test process."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import pytest

from toolbench.env_server import EnvServerConfig, RunningEnvServer
from toolbench.envs.home_search import HomeSearchEnv

HOME_SEARCH = "toolbench/HomeSearch-v0"
INTERACTIVE = {"mode": "interactive"}
SLOW_ID = "toolbench-test/SlowHomeSearch-v0"


class SlowHomeSearchEnv(HomeSearchEnv):
    """HomeSearch whose action "slow" takes half a second: a step still running when another comes."""

    def _act(self, action: str) -> Any:
        if action == "slow":
            time.sleep(0.5)
        return super()._act(action)


if SLOW_ID not in gym.registry:
    gym.register(id=SLOW_ID, entry_point=SlowHomeSearchEnv)


def serve(env_id: str = HOME_SEARCH, env_kwargs: dict[str, Any] | None = None, **bounds: Any) -> RunningEnvServer:
    config = EnvServerConfig(
        env_id=env_id, env_kwargs=dict(INTERACTIVE if env_kwargs is None else env_kwargs), **bounds
    )
    return RunningEnvServer(config).start()


@pytest.fixture(scope="module")
def server() -> Iterator[RunningEnvServer]:
    """HomeSearch, interactive, with default bounds."""
    running = serve()
    yield running
    running.stop()
