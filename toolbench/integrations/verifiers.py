"""verifiers adapter (verifiers 0.4, its ``verifiers.v1`` stack): a Taskset and an Env over any interactive env.

verifiers 0.4 loads an environment from a taskset id: the id names an importable module whose
``__all__`` exports one ``vf.Taskset`` subclass and, optionally, one ``vf.Env`` subclass that runs
the rollout. The top-level module ``toolbench_verifiers`` re-exports this one as that plugin, so

    import verifiers.v1 as vf
    config = vf.resolve_env_config({"taskset": {"id": "toolbench-verifiers", "env_id": "toolbench/HomeSearch-v0"}})
    env = vf.load_environment(config)

gives an env whose tasks are the split's tasks (the prompt, with the env's API docs as system
prompt). Its ``run`` plays the env the way verifiers' TextArena env plays a game: the model speaks
first, each reply is one interactive step (a ``<tool_call>{...}</tool_call>`` block, else the whole
text), the env's answer is the next user turn, and the env's scorer is the reward (``toolbench_score``,
with ``success`` in the trace's info).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import gymnasium as gym
import verifiers.v1 as vf

import toolbench

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def action_from_reply(reply: str) -> str:
    """The env action in a model reply: its first ``<tool_call>`` block, else the whole text."""
    call = _TOOL_CALL.search(reply)
    return call.group(1) if call else reply


class ToolbenchConfig(vf.TasksetConfig):
    env_id: str = "toolbench/HomeSearch-v0"
    split: str = "train"
    max_turns: int = 20


class ToolbenchData(vf.TaskData):
    info: dict
    """The env id, split and task id the rollout replays."""


class ToolbenchTask(vf.Task[ToolbenchData, vf.State, vf.TaskConfig]):
    pass


class ToolbenchTaskset(vf.Taskset[ToolbenchTask, ToolbenchConfig]):
    def load(self) -> Iterator[ToolbenchTask]:
        env = gym.make(self.config.env_id, mode="interactive", split=self.config.split)
        docs = env.unwrapped.api_docs()
        env.close()
        task_name = gym.spec(self.config.env_id).id.split("/")[-1].rsplit("-v", 1)[0]
        for task in toolbench.load_tasks(task_name, self.config.split):
            info = {"env_id": self.config.env_id, "split": self.config.split, "task_id": task.id}
            info["max_turns"] = self.config.max_turns
            data = ToolbenchData(id=task.id, name=task.id, prompt=task.prompt, system_prompt=docs, info=info)
            yield ToolbenchTask(data, self.config.task)


class ToolbenchEnvConfig(vf.EnvConfig):
    player: vf.AgentConfig = vf.AgentConfig()


class ToolbenchEnv(vf.Env[ToolbenchEnvConfig]):
    async def run(self, task, agents):
        info = task.data.info
        env = gym.make(info["env_id"], mode="interactive", split=info["split"])
        env.reset(options={"task_id": info["task_id"]})
        outcome = {"reward": 0.0, "success": False}
        try:
            async with agents.player.interaction(task) as interaction:
                segment = await interaction.turn()
                for _ in range(int(info.get("max_turns", 20))):
                    if segment.terminated:
                        break
                    observation, reward, terminated, truncated, step_info = env.step(
                        action_from_reply(segment.last_reply)
                    )
                    outcome = {"reward": float(reward), "success": bool(step_info["success"])}
                    if terminated or truncated:
                        break  # scored: end the exchange
                    segment = await interaction.turn(observation)
        finally:
            env.close()
        trace = interaction.trace
        trace.record_reward("toolbench_score", outcome["reward"], 1.0)
        trace.info["success"] = outcome["success"]


__all__ = [
    "ToolbenchConfig",
    "ToolbenchData",
    "ToolbenchEnv",
    "ToolbenchEnvConfig",
    "ToolbenchTask",
    "ToolbenchTaskset",
]
