"""A vector env whose envs live in Ray actors, several per actor, on one machine or a cluster.

``RayVectorEnv`` is ``BatchedVectorEnv`` with Ray actors in place of worker processes: each actor
holds a contiguous slice of the envs and steps all of them per call, and the main process merges
the answers into Gymnasium's vector results (the same autoreset modes, the same info arrays). So the
two are interchangeable in training code::

    envs = toolbench.RayVectorEnv("toolbench/HomeSearch-v0", num_envs=512, workers=16, autoreset_mode="SameStep")

A Ray call costs more than a pipe round trip, so on one machine ``BatchedVectorEnv`` is faster; Ray
pays where the envs need more CPUs than one machine has (``benchmarks/bench_ray_vector.py``).
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any

import gymnasium as gym
from gymnasium.vector import AutoresetMode

from toolbench.core.ray_runtime import connect
from toolbench.core.vector import BatchedVectorEnv, EnvSlice, WorkerError


@functools.cache
def _slice_actor() -> Any:
    import ray

    @ray.remote
    class SliceActor:
        def __init__(self, *args: Any) -> None:
            self.envs = EnvSlice(*args)

        def hello(self) -> tuple[Any, ...]:
            return self.envs.hello()

        def handle(self, command: str, data: Any) -> Any:
            return self.envs.handle(command, data)

        def close(self) -> None:
            self.envs.close()

    return SliceActor


class RayVectorEnv(BatchedVectorEnv):
    """``num_envs`` copies of ``gym.make(env_id, **env_kwargs)`` in ``workers`` Ray actors.

    As ``BatchedVectorEnv``: actor ``w`` holds a contiguous, near-equal slice of the envs;
    ``reset(seed=s)`` seeds env ``i`` with ``s + i``; ``call``, ``get_attr`` and ``set_attr`` reach
    every env. The same seeds give the same episodes as ``BatchedVectorEnv`` and ``gym.make_vec``.

    Ray is joined if it is running, else started: ``ray.init(address=ray_address)`` (``None``, a
    local instance). ``actor_options`` go to each actor's ``.options()``: by default one CPU each;
    ``{"num_cpus": 0.5}`` packs two actors on a CPU, ``{"runtime_env": ...}`` ships code or settings.
    """

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        workers: int = 2,
        *,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        ray_address: str | None = None,
        actor_options: dict[str, Any] | None = None,
        **env_kwargs: Any,
    ) -> None:
        self._plan_slices(num_envs, workers, autoreset_mode)
        self._ray = connect(ray_address)
        actor = _slice_actor().options(**{"num_cpus": 1, **(actor_options or {})})
        self._actors = [
            actor.remote(env_id, env_kwargs, start, stop - start, self.autoreset_mode) for start, stop in self._slices
        ]
        self._take_spaces(self._ray_get([actor.hello.remote() for actor in self._actors])[0])

    def _round_trip(self, messages: list[Any]) -> list[Any]:
        """Send actor ``w`` ``messages[w]`` and gather the answers, in actor order."""
        if self.closed:
            raise gym.error.ClosedEnvironmentError("the vector env is closed")
        return self._ray_get([actor.handle.remote(*message) for actor, message in zip(self._actors, messages)])

    def _ray_get(self, refs: list[Any]) -> list[Any]:
        try:
            return self._ray.get(refs)
        except self._ray.exceptions.RayTaskError as exc:
            raise WorkerError(f"an env raised in a Ray actor:\n{exc}") from None
        except self._ray.exceptions.RayActorError as exc:
            raise WorkerError(f"a Ray actor ended ({exc}); close the vector env") from None

    def close_extras(self, **kwargs: Any) -> None:
        # Each actor closes its envs (Sheets' and Tabletop's hold processes of their own), then ends.
        refs = [actor.close.remote() for actor in self._actors]
        with contextlib.suppress(Exception):  # an actor that already ended, or hangs: it is killed below all the same
            self._ray.get(refs, timeout=30)
        for actor in self._actors:
            self._ray.kill(actor)
        self._actors = []

    def __del__(self) -> None:
        # Ray ends an actor once no handle to it is left; nothing here needs the close of a pipe.
        pass
