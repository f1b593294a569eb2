"""The driver a cluster test runs (tests/ray/test_cluster.py, and the Ray image's in tests/docker/), and
the local episodes it is compared with."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

import toolbench

#: (task, gym.make arguments): a curl task, a call task step by step, and a code task run in the sandbox
#: of the actor's node.
EPISODES = [("CatAPI", {}), ("HomeSearch", {"mode": "interactive"}), ("GoogleSheets", {})]

#: The driver: joins through ray:// (as the package's Ray backend does, so a client's server that died on
#: the head as it started is connected again), plays EPISODES' oracle episodes in an actor that only
#: the second node can hold (its custom resource), and pickles what the actor saw and where it ran.
DRIVER = """
import pickle, sys
from toolbench.core.ray_runtime import connect

ray = connect(sys.argv[1], log_to_driver=False)

@ray.remote(num_cpus=1, resources={"second": 1})
class Player:
    def play(self, task, kwargs):
        import gymnasium as gym
        import toolbench
        env = gym.make(f"toolbench/{task}-v0", **kwargs)
        record = toolbench.load_tasks(task, "test")[0]
        steps = [env.reset(options={"task_id": record.id})]
        steps += [env.step(action) for action in env.unwrapped.oracle_actions(record)]
        env.close()
        return steps

    def node(self):
        return ray.get_runtime_context().get_node_id()

player = Player.remote()
episodes = ray.get([player.play.remote(task, kwargs) for task, kwargs in pickle.loads(bytes.fromhex(sys.argv[2]))])
nodes = {node["NodeID"]: node["Resources"] for node in ray.nodes() if node["Alive"]}
with open(sys.argv[3], "wb") as out:
    pickle.dump({"episodes": episodes, "actor_node": ray.get(player.node.remote()), "nodes": nodes}, out)
"""


def local_episode(task: str, kwargs: dict[str, Any]) -> list[tuple]:
    """The reset and every step of the oracle's episode on ``task``'s first test task, played here."""
    env = gym.make(f"toolbench/{task}-v0", **kwargs)
    record = toolbench.load_tasks(task, "test")[0]
    steps = [env.reset(options={"task_id": record.id})]
    steps += [env.step(action) for action in env.unwrapped.oracle_actions(record)]
    env.close()
    return steps
