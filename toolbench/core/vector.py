"""A vector env that steps several envs per worker process: one pipe round trip serves a batch.

Gymnasium's ``AsyncVectorEnv`` gives every env its own process and a round trip through a pipe per
step. A text env's episode (a parse, a service call, a score) takes 50 to 300 µs, about what that
round trip costs on a small machine, so two such workers reach a fraction of what two independent
processes do. ``BatchedVectorEnv`` puts ``num_envs / workers`` envs in each worker, which steps all
of them per round trip: the trip's cost is shared by the batch. Results, autoreset and infos are
those of Gymnasium's vector envs (the same ``autoreset_mode`` values and the same info arrays), so
training code written for ``gym.make_vec`` runs unchanged::

    envs = toolbench.BatchedVectorEnv(
        "toolbench/HomeSearch-v0", num_envs=128, workers=2, autoreset_mode="SameStep", mode="program"
    )
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import socket
import traceback
from collections.abc import Sequence
from itertools import chain
from multiprocessing.connection import Connection, wait
from multiprocessing.reduction import ForkingPickler
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space


class WorkerError(RuntimeError):
    """An env in a worker raised; the message carries the worker's traceback."""


class BatchedVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` copies of ``gym.make(env_id, **env_kwargs)`` in ``workers`` processes.

    Each worker holds a contiguous slice of the envs, the slices as equal as they can be;
    ``reset(seed=s)`` seeds env ``i`` with ``s + i`` as Gymnasium's vector envs do. ``call``,
    ``get_attr`` and ``set_attr`` reach every env, e.g. ``envs.call("get_state")``.

    ``pin_workers=True`` keeps worker ``w`` on the ``w``-th CPU this process may use (Linux). On a
    machine given to the run it removes the stalls of workers waiting for a CPU after each round
    trip (on two cores, the mean round trip fell from 900 to 300 µs); leave it off where other
    work, or another pinned vector env, shares those CPUs.
    """

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        workers: int = 2,
        *,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        pin_workers: bool = False,
        context: str | None = None,
        **env_kwargs: Any,
    ) -> None:
        self._plan_slices(num_envs, workers, autoreset_mode)
        ctx = mp.get_context(context)
        cpus = sorted(os.sched_getaffinity(0)) if pin_workers and hasattr(os, "sched_getaffinity") else []
        self._pipes: list[Connection] = []
        self._processes: list[Any] = []
        for worker, (start, stop) in enumerate(self._slices):
            parent, child = ctx.Pipe()
            _widen(parent)
            _widen(child)
            cpu = cpus[worker % len(cpus)] if cpus else None
            process = ctx.Process(
                target=_worker,
                args=(child, parent, env_id, env_kwargs, start, stop - start, self.autoreset_mode, cpu),
                daemon=True,
                name=f"toolbench-vector-worker-{start}",
            )
            process.start()
            child.close()
            self._pipes.append(parent)
            self._processes.append(process)
        self._unread = [1] * workers  # answers sent and not yet read: each worker says hello first
        self._take_spaces(self._gather()[0])

    def _plan_slices(self, num_envs: int, workers: int, autoreset_mode: AutoresetMode | str) -> None:
        if workers < 1 or num_envs < workers:
            raise ValueError(f"need 1 <= workers <= num_envs, got workers={workers}, num_envs={num_envs}")
        self.num_envs = num_envs
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.closed = False
        # Contiguous, near-equal slices: worker w holds envs [start, stop).
        self._slices = [(num_envs * w // workers, num_envs * (w + 1) // workers) for w in range(workers)]

    def _take_spaces(self, hello: tuple[Any, ...]) -> None:
        """The vector env's spaces and metadata from a worker's ``EnvSlice.hello()``."""
        observation_space, action_space, render_mode, metadata = hello
        self.metadata = {**metadata, "autoreset_mode": self.autoreset_mode}
        self.single_observation_space = observation_space
        self.single_action_space = action_space
        self.observation_space = batch_space(observation_space, self.num_envs)
        self.action_space = batch_space(action_space, self.num_envs)
        self.render_mode = render_mode
        self._observations: list[Any] = [None] * self.num_envs

    # ----------------------------------------------------------------- the vector API
    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if seed is None or isinstance(seed, int):
            seeds = [None if seed is None else seed + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"{len(seeds)} seeds for {self.num_envs} envs")
        chosen = [True] * self.num_envs
        if options is not None and "reset_mask" in options:
            options = dict(options)
            chosen = _checked_mask(options.pop("reset_mask"), self.num_envs)
        answers = self._round_trip(
            [("reset", ([(seeds[i], chosen[i]) for i in range(start, stop)], options)) for start, stop in self._slices]
        )
        for observations, _ in answers:
            for index, observation in observations:
                self._observations[index] = observation
        return tuple(self._observations), self._merge_infos(_joined([columns for _, columns in answers]))

    def step(self, actions: Sequence[Any]) -> tuple[tuple[Any, ...], Any, Any, Any, dict[str, Any]]:
        actions = list(actions)
        if len(actions) != self.num_envs:
            raise ValueError(f"{len(actions)} actions for {self.num_envs} envs")
        answers = self._round_trip([("step", actions[start:stop]) for start, stop in self._slices])
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminations = np.zeros(self.num_envs, dtype=np.bool_)
        truncations = np.zeros(self.num_envs, dtype=np.bool_)
        for (start, stop), (observations, step_rewards, terminated, truncated, _) in zip(self._slices, answers):
            self._observations[start:stop] = observations
            rewards[start:stop], terminations[start:stop], truncations[start:stop] = step_rewards, terminated, truncated
        columns = _joined([answer[4] for answer in answers])
        return tuple(self._observations), rewards, terminations, truncations, self._merge_infos(columns)

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Each env's ``name(*args, **kwargs)``, or its attribute ``name`` if that is not callable."""
        if name in ("reset", "step", "close", "_setattr", "_check_spaces"):
            raise ValueError(f"Trying to call function `{name}` with `call`, use `{name}` directly instead.")
        answers = self._round_trip([("call", (name, args, kwargs))] * len(self._slices))
        return tuple(value for results in answers for value in results)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return self.call(name)

    @property
    def np_random_seed(self) -> tuple[int, ...]:  # type: ignore[override]
        return self.get_attr("np_random_seed")

    @property
    def np_random(self) -> tuple[np.random.Generator, ...]:  # type: ignore[override]
        return self.get_attr("np_random")

    def set_attr(self, name: str, values: Any) -> None:
        if not isinstance(values, (list, tuple)):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ValueError(f"{len(values)} values for {self.num_envs} envs")
        self._round_trip([("set_attr", (name, values[start:stop])) for start, stop in self._slices])

    def render(self) -> tuple[Any, ...] | None:
        return self.call("render") if self.render_mode is not None else None

    def close_extras(self, **kwargs: Any) -> None:
        for pipe in self._pipes:
            with contextlib.suppress(OSError):  # a worker that already ended
                pipe.send(("close", None))
        for process in self._processes:
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
                process.join()
        for pipe in self._pipes:
            pipe.close()

    # ----------------------------------------------------------------- plumbing
    def _merge_infos(self, columns: dict[str, Column]) -> dict[str, Any]:
        """What Gymnasium's ``_add_info`` builds from each env's info in turn (the same keys in the
        same order, arrays of the same dtypes, masks ``_key``), built a key at a time from the
        workers' columns: env by env, the main process's merging would rival the workers' steps."""
        merged: dict[str, Any] = {}
        for key, (indices, values, nested, mixed) in columns.items():
            if nested is not None:
                array: Any = self._merge_infos(nested)
            elif mixed:
                # A dict in some envs only: what that means is Gymnasium's to say.
                part: dict[str, Any] = {}
                for index, value in zip(indices, values):
                    part = self._add_info(part, {key: value}, index)
                merged[key], merged[f"_{key}"] = part[key], part[f"_{key}"]
                continue
            else:
                array = self._info_array(key, indices, values)
            if len(indices) == self.num_envs:  # every env has the key (the usual case)
                mask = np.ones(self.num_envs, dtype=np.bool_)
            else:
                mask = np.zeros(self.num_envs, dtype=np.bool_)
                mask[indices] = True
            merged[key], merged[f"_{key}"] = array, mask
        return merged

    def _info_array(self, key: str, indices: list[int], values: list[Any]) -> np.ndarray:
        first = values[0]
        numeric = key != "final_obs" and (type(first) in (int, float, bool) or isinstance(first, np.number))
        dtype = type(first) if numeric else object
        if set(map(type, values)) <= _SCALARS:  # built in one call: scalars cannot broadcast
            if len(indices) == self.num_envs:
                return np.array(values, dtype=dtype)
            array = np.zeros(self.num_envs, dtype=dtype) if numeric else np.full(self.num_envs, None, dtype=object)
            array[indices] = np.array(values, dtype=dtype)
            return array
        if numeric:
            array = np.zeros(self.num_envs, dtype=dtype)
        elif key != "final_obs" and isinstance(first, np.ndarray):
            array = np.zeros((self.num_envs, *first.shape), dtype=first.dtype)
        else:
            array = np.full(self.num_envs, fill_value=None, dtype=object)
        for index, value in zip(indices, values):
            array[index] = value
        return array

    def __del__(self) -> None:
        # Dropped without close(): end the workers (with fork, workers started later hold copies of
        # these pipes, so the workers would not see them close).
        if not getattr(self, "closed", True) and getattr(self, "_processes", None):
            with contextlib.suppress(Exception):
                self.close()

    def _round_trip(self, messages: list[Any]) -> list[Any]:
        """Send worker ``w`` ``messages[w]`` and gather the answers, in worker order. Everything is
        pickled before anything is sent, and answers that an interrupted round trip left unread (a
        KeyboardInterrupt while waiting) are read first, so the pipes never fall out of step."""
        if self.closed:
            raise gym.error.ClosedEnvironmentError("the vector env is closed")
        try:
            payloads = [ForkingPickler.dumps(message) for message in messages]
        except Exception as exc:  # pickle's errors vary (PicklingError, AttributeError, TypeError)
            raise TypeError(f"cannot send this to a worker process: {exc}") from exc
        self._drain()
        for worker, (pipe, payload) in enumerate(zip(self._pipes, payloads)):
            try:
                pipe.send_bytes(payload)
            except OSError as exc:
                raise WorkerError(f"worker {worker} cannot be reached ({exc}); close the vector env") from None
            self._unread[worker] += 1
        return self._gather()

    def _drain(self) -> None:
        for worker, pipe in enumerate(self._pipes):
            while self._unread[worker]:
                try:
                    pipe.recv()
                except (EOFError, OSError):
                    self._unread[worker] = 0
                    break
                self._unread[worker] -= 1

    def _gather(self) -> list[Any]:
        """Every worker's answer to the command just sent, in worker order. Answers are read as they
        come, so the main process unpickles one worker's answer while the others still step."""
        answers: list[Any] = [None] * len(self._pipes)
        failures: dict[int, str] = {}
        waiting = {pipe: worker for worker, pipe in enumerate(self._pipes)}
        while waiting:
            for pipe in wait(list(waiting)):
                worker = waiting.pop(pipe)
                try:
                    ok, answers[worker] = pipe.recv()
                    self._unread[worker] -= 1
                except (EOFError, OSError):
                    self._unread[worker] = 0
                    ok, answers[worker] = False, f"worker {worker}: the worker process ended"
                if not ok:
                    failures[worker] = answers[worker]
        if failures:
            raise WorkerError("an env raised in a worker process:\n" + "\n".join(failures[w] for w in sorted(failures)))
        return answers


def _checked_mask(mask: Any, num_envs: int) -> list[bool]:
    """``options["reset_mask"]`` checked as Gymnasium's vector envs check it."""
    if not isinstance(mask, np.ndarray):
        raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
    if mask.shape != (num_envs,):
        raise ValueError(f"`options['reset_mask']` must have shape `({num_envs},)`, got {mask.shape}")
    if mask.dtype != np.bool_:
        raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
    if not mask.any():
        raise ValueError(f"`options['reset_mask']` must contain at least one True value, got reset_mask={mask}")
    return [bool(chosen) for chosen in mask]


#: A worker's answer for 64 envs of a curl task is some 400 kB (each final observation is a response
#: body): with room for all of it, the worker writes it at once, instead of in turns with the reader.
_SOCKET_BUFFER = 4 * 2**20


def _widen(connection: Connection) -> None:
    """Ask for larger socket buffers on a pipe's socket pair (the kernel caps them at its maximum)."""
    descriptor = os.dup(connection.fileno())
    try:
        sock = socket.socket(fileno=descriptor)
    except OSError:  # not a socket here: nothing to widen
        os.close(descriptor)
        return
    with contextlib.suppress(OSError), sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _SOCKET_BUFFER)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _SOCKET_BUFFER)


class EnvSlice:
    """A contiguous slice of a vector env's envs, ``start`` to ``start + count``, and the commands
    that drive them; a worker process (or a Ray actor) holds one and answers the main process."""

    def __init__(
        self, env_id: str, env_kwargs: dict[str, Any], start: int, count: int, autoreset_mode: AutoresetMode
    ) -> None:
        self.start = start
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.envs = [gym.make(env_id, **env_kwargs) for _ in range(count)]
        self.ended = [False] * count  # NEXT_STEP: the env's last step ended its episode; this step resets it

    def hello(self) -> tuple[Any, ...]:
        """What the main process needs to build its spaces: the first env's spaces, render mode, metadata."""
        first = self.envs[0]
        return first.observation_space, first.action_space, first.render_mode, dict(first.metadata)

    def handle(self, command: str, data: Any) -> Any:
        """The answer to one command (``step``, ``reset``, ``call``, ``set_attr``); raises what an env raises."""
        envs, start = self.envs, self.start
        if command == "step":
            mode = self.autoreset_mode
            results = [_step(env, action, i, self.ended, mode) for i, (env, action) in enumerate(zip(envs, data))]
            observations, rewards, terminations, truncations, infos = zip(*results)
            return observations, rewards, terminations, truncations, _columns(enumerate(infos, start))
        if command == "reset":
            seeds_and_mask, options = data
            observations, infos = [], []  # of the envs reset, with their indices
            for i, (env, (seed, chosen)) in enumerate(zip(envs, seeds_and_mask)):
                if chosen:
                    observation, info = env.reset(seed=seed, options=options)
                    observations.append((start + i, observation))
                    infos.append((start + i, info))
                    self.ended[i] = False
            return observations, _columns(infos)
        if command == "call":
            name, args, kwargs = data
            values = [env.get_wrapper_attr(name) for env in envs]
            return [value(*args, **kwargs) if callable(value) else value for value in values]
        if command == "set_attr":
            name, values = data
            for env, value in zip(envs, values):
                env.set_wrapper_attr(name, value)
            return None
        raise ValueError(f"unknown command {command!r}")

    def close(self) -> None:
        for env in self.envs:
            env.close()


def _as_batch_work() -> None:
    """Schedule this worker as batch work (Linux's SCHED_BATCH): a worker woken by the main process's
    actions then does not preempt the main process, which would otherwise lose its CPU after writing
    to the first worker and hand the second its actions late, every step."""
    with contextlib.suppress(AttributeError, OSError):  # elsewhere the default policy does the same work
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))


def _worker(
    pipe: Connection,
    parent: Connection,
    env_id: str,
    env_kwargs: dict[str, Any],
    start: int,
    count: int,
    autoreset_mode: AutoresetMode,
    cpu: int | None,
) -> None:
    parent.close()
    _as_batch_work()
    if cpu is not None:
        with contextlib.suppress(OSError):  # pinning is a preference: a worker runs without it
            os.sched_setaffinity(0, {cpu})
    try:
        envs = EnvSlice(env_id, env_kwargs, start, count, autoreset_mode)
        pipe.send((True, envs.hello()))
    except Exception:
        pipe.send((False, traceback.format_exc()))
        return
    while True:
        try:
            command, data = pipe.recv()
        except (EOFError, KeyboardInterrupt):
            break
        if command == "close":
            pipe.send((True, None))
            break
        try:
            answer = envs.handle(command, data)
        except Exception:
            pipe.send((False, traceback.format_exc()))
            continue
        pipe.send((True, answer))
    envs.close()


class Column(NamedTuple):
    """One info key's values across envs."""

    indices: list[int]  # the envs that have the key
    values: list[Any]  # their values (empty when ``nested`` holds them)
    nested: dict[str, Column] | None  # when every value is a dict: the columns of their keys
    mixed: bool  # some values only are dicts


_SCALARS = {str, int, float, bool, type(None)}


def _columns(indexed_infos: Any) -> dict[str, Column]:
    """Infos by key instead of by env, built in the worker, in parallel with the other workers.

    Key by key rather than env by env: the envs' infos mostly share their keys, so each column is
    one pass over the infos, and the keys (in the order they first appear, as Gymnasium adds them)
    come from one pass too."""
    pairs = list(indexed_infos)
    if not pairs:
        return {}
    indices = [index for index, _ in pairs]
    infos = [info for _, info in pairs]
    key_tuples = list(map(tuple, infos))
    if key_tuples.count(key_tuples[0]) == len(key_tuples):  # every env has the same keys (the usual case)
        return {
            key: _column(key, indices, list(values))
            for key, values in zip(key_tuples[0], zip(*map(dict.values, infos)))
        }
    columns: dict[str, Column] = {}
    for key in dict.fromkeys(chain.from_iterable(key_tuples)):
        holders = [(index, info[key]) for index, info in pairs if key in info]
        columns[key] = _column(key, [index for index, _ in holders], [value for _, value in holders])
    return columns


def _column(key: str, indices: list[int], values: list[Any]) -> Column:
    """One key's column; its values' own keys become columns in turn where every value is a dict."""
    kinds = set(map(type, values))
    if key == "final_obs" or not any(issubclass(kind, dict) for kind in kinds):
        return Column(indices, values, None, False)
    if all(issubclass(kind, dict) for kind in kinds):
        return Column(indices, [], _columns(zip(indices, values)), False)
    return Column(indices, values, None, True)  # some values only are dicts


def _joined(parts: list[dict[str, Column]]) -> dict[str, Column]:
    """The workers' columns as one (workers hold ascending slices, so env order is kept)."""
    joined: dict[str, Column] = {}
    for part in parts:
        for key, column in part.items():
            joined[key] = _concatenated(joined[key], column) if key in joined else column
    return joined


def _concatenated(first: Column, second: Column) -> Column:
    indices = first.indices + second.indices
    if first.nested is not None and second.nested is not None:
        return Column(indices, [], _joined([first.nested, second.nested]), False)
    # Dicts in one worker's envs only, or in some envs of either: back to each env's own values.
    mixed = first.nested is not None or second.nested is not None or first.mixed or second.mixed
    return Column(indices, _raw(first) + _raw(second), None, mixed)


def _raw(column: Column) -> list[Any]:
    """A column's values as the envs' own (dict columns rebuilt into each env's dict)."""
    if column.nested is None:
        return list(column.values)
    rebuilt: dict[int, dict[str, Any]] = {index: {} for index in column.indices}
    for key, sub in column.nested.items():
        for index, value in zip(sub.indices, _raw(sub)):
            rebuilt[index][key] = value
    return [rebuilt[index] for index in column.indices]


def _step(env: gym.Env, action: Any, index: int, ended: list[bool], autoreset_mode: AutoresetMode) -> tuple:
    """One env's part of a vector step, autoreset as Gymnasium's vector envs do it."""
    if autoreset_mode == AutoresetMode.NEXT_STEP and ended[index]:
        observation, info = env.reset()
        ended[index] = False
        return observation, 0.0, False, False, info
    observation, reward, terminated, truncated, info = env.step(action)
    if autoreset_mode == AutoresetMode.NEXT_STEP:
        ended[index] = terminated or truncated
    elif autoreset_mode == AutoresetMode.SAME_STEP and (terminated or truncated):
        reset_observation, reset_info = env.reset()
        info = {"final_info": info, "final_obs": observation, **reset_info}
        observation = reset_observation
    return observation, reward, terminated, truncated, info
