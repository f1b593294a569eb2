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


BIG_STATE_ID = "toolbench-test/BigStateHomeSearch-v0"
BIG_RENDER_ID = "toolbench-test/BigRenderHomeSearch-v0"


class SlowHomeSearchEnv(HomeSearchEnv):
    """HomeSearch whose action "slow" takes half a second, and "sleep2" two seconds: a step still running
    when another comes."""

    def _act(self, action: str) -> Any:
        if action == "slow":
            time.sleep(0.5)
        elif action == "sleep60":
            time.sleep(60.0)
        elif action == "sleep2":
            time.sleep(2.0)
        return super()._act(action)


class BigStateHomeSearchEnv(HomeSearchEnv):
    """HomeSearch whose state holds 100 MB of text, as a large workbook's would (returned without a copy)."""

    ROWS = ["x" * 100] * 1_000_000

    def get_state(self) -> dict[str, Any]:
        return {**super().get_state(), "rows": self.ROWS}


class BigRenderHomeSearchEnv(HomeSearchEnv):
    """HomeSearch whose transcript is 8 MB: an answer a client that does not read leaves in the server's buffer."""

    def ansi_transcript(self) -> str:
        return "x" * 8_000_000


for env_id, entry_point in (
    (SLOW_ID, SlowHomeSearchEnv),
    (BIG_STATE_ID, BigStateHomeSearchEnv),
    (BIG_RENDER_ID, BigRenderHomeSearchEnv),
):
    if env_id not in gym.registry:
        gym.register(id=env_id, entry_point=entry_point)


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
