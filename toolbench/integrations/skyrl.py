"""SkyRL-gym adapter: a ``BaseTextEnv`` (skyrl-gym 0.4) over any toolbench env in interactive mode.

SkyRL-train builds one env per dataset row, ``env_class(env_config, extras)``, calls
``init(prompt)`` with the row's chat prompt, then ``step(model_text)`` until ``done``. The row's
extras name the toolbench env and task (``task_rows`` writes them); each model turn is one
interactive step, and the reward is the env's scorer, paid when the episode ends.

    from toolbench.integrations.skyrl import register, task_rows
    register()                                   # skyrl_gym.make("toolbench", extras=row) then works
    rows = task_rows("toolbench/HomeSearch-v0", "HomeSearch", "train")   # a SkyRL-train dataset

A model turn may hold its call in a ``<tool_call>{"name": ..., "arguments": ...}</tool_call>`` block
(the Hermes format most open chat templates emit); otherwise the whole text is the env's action.
"""

from __future__ import annotations

import re
from typing import Any

import gymnasium as gym
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

import toolbench

ENV_CLASS = "toolbench"
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def task_rows(env_id: str, task: str, split: str = "train", max_turns: int = 20) -> list[dict[str, Any]]:
    """SkyRL-train dataset rows: the task prompt with the API docs, and the extras ``ToolbenchTextEnv`` reads."""
    env = gym.make(env_id, mode="interactive", split=split)
    docs = env.unwrapped.api_docs()
    env.close()
    return [
        {
            "prompt": [{"role": "system", "content": docs}, {"role": "user", "content": t.prompt}],
            "env_class": ENV_CLASS,
            "env_id": env_id,
            "split": split,
            "task_id": t.id,
            "max_turns": max_turns,
        }
        for t in toolbench.load_tasks(task, split)
    ]


class ToolbenchTextEnv(BaseTextEnv):
    """One toolbench episode as a SkyRL text env: a model turn is an action, the env's answer is the next user turn."""

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None) -> None:
        super().__init__()
        extras = extras or {}
        self.env = gym.make(extras["env_id"], mode="interactive", split=extras.get("split", "test"))
        self.task_id = extras.get("task_id")
        self.max_turns = int(extras.get("max_turns", 20))
        self.info: dict[str, Any] = {}

    def init(self, prompt: list[dict[str, str]]) -> tuple[list[dict[str, str]], dict[str, Any]]:
        observation, self.info = self.env.reset(options={"task_id": self.task_id} if self.task_id else None)
        self.turns = 0
        # the row's prompt already holds the task when task_rows wrote it; otherwise start from the env's own
        return (prompt or [{"role": "user", "content": observation}]), {"task_id": self.info["task_id"]}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        self.turns += 1
        call = _TOOL_CALL.search(action)
        observation, reward, terminated, truncated, self.info = self.env.step(call.group(1) if call else action)
        done = terminated or truncated or self.turns >= self.max_turns
        metadata = {k: self.info[k] for k in ("success", "score", "executable", "error") if k in self.info}
        return BaseTextEnvStepOutput(
            observations=[] if done else [{"role": "user", "content": observation}],
            reward=float(reward),
            done=done,
            metadata=metadata,
        )

    def get_metrics(self) -> dict[str, Any]:
        return {"success": float(bool(self.info.get("success"))), "score": float(self.info.get("score", 0.0))}

    def close(self) -> None:
        self.env.close()


def register() -> None:
    """Register ``ToolbenchTextEnv`` as ``env_class="toolbench"`` in skyrl_gym's registry (idempotent)."""
    from skyrl_gym.envs.registration import register as skyrl_register
    from skyrl_gym.envs.registration import registry

    if ENV_CLASS not in registry:
        skyrl_register(id=ENV_CLASS, entry_point=f"{__name__}:ToolbenchTextEnv")
