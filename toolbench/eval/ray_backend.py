"""The Ray backend of the evaluation harness: episodes played by Ray actors, on one machine or a cluster.

Each actor is a worker as ``--workers`` makes them locally: it runs the same ``jobs.run_job``
and keeps its envs and its agent (so its breaker) from one job to the next. Jobs are the same chunks
of episodes, and the harness orders results by task id, so a run gives the same report and the same
episodes as the local backend. Camera frames are written by the actor to a folder of its own and
sent back with the episodes, so they reach the run folder from any node of a cluster.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from toolbench.catalog import TaskSpec
from toolbench.core.ray_runtime import cluster_cpus, connect
from toolbench.eval.episodes import EpisodeResult
from toolbench.eval.jobs import Job, chunked_jobs, run_job

#: The model endpoint's settings reach the actors wherever they run (Ray's local workers would
#: inherit them, a cluster's would not).
MODEL_ENVIRONMENT = ("OPENAI_BASE_URL", "OPENAI_API_KEY")
#: Jobs queued per actor beyond the one it plays: the next is there when it finishes one.
QUEUED_PER_ACTOR = 1


def play_job(job: Job) -> tuple[list[EpisodeResult], str | None, dict[str, bytes]]:
    """``run_job`` with its frames written to a temporary folder and returned as bytes by their
    path relative to the run folder (what an episode's ``frames`` names)."""
    if job.frames_dir is None:
        return (*run_job(job), {})
    scratch = tempfile.mkdtemp(prefix="toolbench-frames-")
    try:
        here = Path(scratch) / Path(job.frames_dir).name
        results, stopped = run_job(replace(job, frames_dir=str(here)))
        frames = {str(p.relative_to(scratch)): p.read_bytes() for p in Path(scratch).rglob("*") if p.is_file()}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return results, stopped, frames


@functools.cache
def _episode_actor() -> Any:
    import ray

    @ray.remote(num_cpus=1)
    class EpisodeActor:
        def play(self, job: Job) -> tuple[list[EpisodeResult], str | None, dict[str, bytes]]:
            return play_job(job)

    return EpisodeActor


class RayPlayers:
    """Plays a run's episodes on ``workers`` Ray actors (default: one per CPU of the cluster)."""

    def __init__(self, job: Job, workers: int | None, address: str | None = None) -> None:
        self.ray = connect(address)
        available = cluster_cpus(self.ray)
        self.workers = workers or available
        if self.workers > available:
            raise ValueError(
                f"--workers {self.workers}: the Ray cluster has {available} CPUs (one actor takes one); "
                "ask for at most that many, or add nodes first"
            )
        self.template = job  # the run's settings; each job adds its task and ids
        variables = {name: os.environ[name] for name in MODEL_ENVIRONMENT if os.environ.get(name)}
        options = {"runtime_env": {"env_vars": variables}} if variables and job.settings is not None else {}
        self.actors = [_episode_actor().options(**options).remote() for _ in range(self.workers)]

    def play(
        self,
        spec: TaskSpec,
        mode: str,
        todo: list[tuple[str, int]],
        keep: Callable[[list[EpisodeResult]], None],
    ) -> str | None:
        """Play ``todo`` ((task id, trial) pairs), handing results to ``keep`` as they come;
        returns why the run stopped, or None."""
        if not todo:
            return None
        jobs = chunked_jobs(self.template, spec, mode, todo, self.workers)
        jobs.reverse()  # popped from the end: played in order
        running: dict[Any, Any] = {}  # a job's result ref -> its actor
        for actor in self.actors:
            for _ in range(1 + QUEUED_PER_ACTOR):
                if jobs:
                    running[actor.play.remote(jobs.pop())] = actor
        stopped = None
        try:
            while running:
                done, _ = self.ray.wait(list(running), num_returns=1)
                actor = running.pop(done[0])
                batch, why, frames = self.ray.get(done[0])
                self._write_frames(frames)
                keep(batch)
                if why and stopped is None:
                    stopped = why
                    jobs.clear()  # those not sent; sent ones finish (or stop) and are kept
                if jobs:
                    running[actor.play.remote(jobs.pop())] = actor
        finally:
            for ref in running:  # after Ctrl-C: those still queued (close() ends the actors all the same)
                with contextlib.suppress(Exception):
                    self.ray.cancel(ref)
        return stopped

    def _write_frames(self, frames: dict[str, bytes]) -> None:
        if not frames or self.template.frames_dir is None:
            return
        run_folder = Path(self.template.frames_dir).parent
        for relative, data in frames.items():
            path = run_folder / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)

    def close(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor)
        self.actors = []
