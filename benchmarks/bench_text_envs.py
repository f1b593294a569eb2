"""The text envs against their floor, then the vector envs against two independent processes.

**Episodes and floor.** For each text env and mode (every text env but VirtualHome, which has its own
benchmark): oracle episodes per second over the test split (warm: every reference seen once before),
next to the floor measured in the same run on the same tasks, and the ratio (how many times its floor
an episode costs; the target is at most 2). The floor is the work no env can avoid, without the env
around it:

- curl tasks (OpenWeather, The Cat API): the command split into words by ``shlex.split`` (what the
  original harness's shell does first) and its request, built beforehand, sent to the fake
  in-process (The Cat API's store restored to its start first, as every episode starts there);
- call tasks (Home Search, Trip Booking): the original harness's own way, ``exec`` of the program
  text with the API object and the value constructors in scope, on a fresh backend (compiling the
  text, building its values such as ``Date(8, 25, 2023)``, and the backend's calls); interactive mode
  does the same for each call;
- RapidAPI: each action's JSON read, its calls run on the hub's handlers alone (tool and API looked
  up beforehand), each answer written as JSON, on a fresh session per task, and the final answer's
  facts looked for as the pass rule reads them (``bench_rapidapi.episode_floor``). The table's next
  line gives the floor of earlier runs too, the handlers' calls and their JSON alone
  (``bench_rapidapi.hub_floor``);
- AppBench: each task's answer read as AppBench's released parser reads it (two regular
  expressions per line), and its gold calls on the apps' back-ends alone, after a reset, their
  references already resolved (``bench_appbench.backend_floor``); the same for both modes;
- WebShop: each task's expert actions on the shop alone, with each page's text
  (``bench_webshop.shop_floor``); the same for both modes.

Env and floor passes alternate (9 of each), timed in CPU time; the rates are the median passes' and
the ratio the median of each env pass's ratio to the floor pass beside it (``profile_env.versus_floor``).

**Vector envs.** Then ``bench_vector_envs.main``: for every text env and mode, ``BatchedVectorEnv``
(as is and pinned) and ``gym.make_vec`` async beside two independent processes and beside one env in
one process (see that script).

``python benchmarks/bench_text_envs.py [--seconds S] [--batch N] [--floors-only]``
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Callable
from typing import Any

import bench_vector_envs
import gymnasium as gym
from bench_appbench import backend_floor
from bench_rapidapi import episode_floor, hub_floor
from bench_webshop import shop_floor
from profile_env import play_all, versus_floor

import toolbench
from toolbench.core.curl import find_curl_command

TEXT_ENVS = ("OpenWeather", "CatAPI", "HomeSearch", "TripBooking")
#: Every text env measured beside its floor (VirtualHome has its own benchmark).
FLOOR_ENVS = (*TEXT_ENVS, "RapidAPI", "AppBench", "WebShop")
PASSES = 9


def _curl_floor(env: Any, tasks: list[Any]) -> Callable[[], None]:
    commands = [find_curl_command(task.references[0]) for task in tasks]
    requests = [env.parse_action(task.references[0]).request for task in tasks]
    router = env._episode_router()
    store = getattr(env, "_store", None)  # The Cat API: each episode starts from the same store
    initial = getattr(env, "_initial", None)

    def floor() -> None:
        for command, request in zip(commands, requests):
            shlex.split(command)
            if store is not None:
                store.restore(initial)
            router.send(request)

    return floor


def _call_floor(env: Any, tasks: list[Any]) -> Callable[[], None]:
    # Per episode: the texts the env is given (the program, or one call per step), run as the original
    # harness ran them: exec with the API object and the value constructors in scope. These are our
    # own references, so exec is safe here; the env itself never runs an action.
    episodes = [env.oracle_actions(task) for task in tasks]

    def floor() -> None:
        for texts in episodes:
            namespace = {"API": env.new_api(), **env.constructors}
            for text in texts:
                exec(text, namespace)

    return floor


def _floor(name: str, env: Any, tasks: list[Any]) -> Callable[[], None]:
    """One pass of ``name``'s floor over ``tasks`` (see the module's docstring)."""
    if name == "RapidAPI":
        return episode_floor(tasks)
    if name == "AppBench":
        return backend_floor(tasks)
    if name == "WebShop":
        return shop_floor(env, tasks)
    return _curl_floor(env, tasks) if hasattr(env, "parse_action") else _call_floor(env, tasks)


def env_versus_floor(
    name: str, mode: str, floor_of: Callable[[list[Any]], Callable[[], None]] | None = None
) -> dict[str, float]:
    """``name``'s episodes in ``mode`` beside its floor (``floor_of(tasks)`` instead, where given)."""
    env_id = f"toolbench/{name}-v0"
    env = gym.make(env_id, mode=mode).unwrapped
    tasks = env.tasks
    actions = {task.id: env.oracle_actions(task) for task in tasks}
    floor = floor_of(tasks) if floor_of is not None else _floor(name, env, tasks)
    return versus_floor(lambda: play_all(env, tasks, actions), floor, len(tasks), PASSES)


def floor_table() -> dict[str, dict[str, float]]:
    """Every text env and mode beside its floor, printed as one table."""
    rows = {}
    print(f"{'env':12} {'mode':11} {'episodes/s':>11} {'floor/s':>9} {'cost/floor':>10}")
    for name in FLOOR_ENVS:
        for mode in toolbench.find_task(name).modes:
            row = env_versus_floor(name, mode)
            rows[f"{name}/{mode}"] = row
            print(
                f"{name:12} {mode:11} {row['episodes_per_s']:11.1f} {row['floor_per_s']:9.1f} "
                f"{row['cost_over_floor']:9.2f}x",
                flush=True,
            )
            if name == "RapidAPI":  # beside the floor of earlier runs as well: the handlers' calls alone
                row = rows[f"{name}/{mode} (hub calls alone)"] = env_versus_floor(name, mode, hub_floor)
                print(
                    f"{'  (floor: hub calls alone)':24} {row['episodes_per_s']:11.1f} {row['floor_per_s']:9.1f} "
                    f"{row['cost_over_floor']:9.2f}x",
                    flush=True,
                )
    return rows


def main(seconds: float = 0.75, batch: int = 128) -> dict[str, Any]:
    results: dict[str, Any] = {"episodes_and_floor": floor_table()}
    print()
    results["vector_envs"] = bench_vector_envs.main(seconds, batch)
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.75, help="wall time of each vector-env window")
    parser.add_argument("--batch", type=int, default=128, help="num_envs of the batched vector env (2 workers)")
    parser.add_argument("--floors-only", action="store_true", help="only the table of episodes beside their floor")
    arguments = parser.parse_args()
    if arguments.floors_only:
        floor_table()
    else:
        main(arguments.seconds, arguments.batch)
