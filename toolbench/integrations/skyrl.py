"""SkyRL-gym adapter: a ``BaseTextEnv`` (skyrl-gym 0.4) over any toolbench env, built on ``Session``.

SkyRL-train reads a dataset of rows (``prompt``, ``env_class``, and every other column as the
row's extras), builds one env per rollout with ``skyrl_gym.make(env_class, env_config=...,
extras=...)``, calls ``init(prompt)`` and then ``step(model_text)`` until ``done``. Here:

- ``task_rows`` writes those rows over one env or several at once (``{task: weight}``): each row's
  extras name its ``task``, ``split``, ``mode`` and ``task_id``, so one run mixes envs and each
  rollout is scored by its own env.
- The row's prompt is the session's opening messages with the tools the model is offered written
  into the system message as Qwen2.5's chat template writes them (the Hermes ``<tools>`` format and
  the instruction to answer with ``<tool_call>{...}</tool_call>`` blocks), since SkyRL-train
  applies the chat template without a ``tools`` argument.
- ``step(text)`` is ``Session.reply``: prose, fences, end-of-turn markers and several calls in one
  turn are read by the one reply rule every adapter shares; the reward, the env's own score, is
  paid on the step that ends the episode.
- Caps are ``Limits``: the defaults, then ``env_config["limits"]`` (the trainer's
  ``environment.skyrl_gym.toolbench`` config), then ``extras["max_turns"]`` (SkyRL-train's
  generator writes its ``generator.max_turns`` there), then the row's own ``extras["limits"]``.
- Long prompts: ``task_rows(..., top_k_api=k)`` shows each task only the k API functions of its docs
  most relevant to it (``Session``'s option; VirtualHome's object lists make a prompt of ~48,000
  characters otherwise); the row carries ``top_k_api`` so its env opens the same prompt. The env
  still takes every action.

    from toolbench.integrations.skyrl import register, task_rows
    register()   # skyrl_gym.make("toolbench", env_config={}, extras=row) now builds a ToolbenchTextEnv
    rows = task_rows({"WebShop": 2, "HomeSearch": 1, "OpenWeather": 1}, split="train", size=4000)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, fields, replace
from typing import Any

from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput

from toolbench.agents.turns import model_tools
from toolbench.integrations import session as _session
from toolbench.integrations.session import Limits, Session

ENV_CLASS = "toolbench"

# Qwen2.5's chat template writes exactly this after the system message when given tools (one JSON
# object a line), so a Qwen or Hermes model reads the offer in the words it was tuned on.
_TOOLS_HEAD = (
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
_TOOLS_TAIL = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within "
    '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n'
    "</tool_call>"
)


def tools_text(tools: Sequence[Mapping[str, Any]]) -> str:
    """The Hermes ``<tools>`` block and the ``<tool_call>`` instruction, as Qwen2.5's template writes them."""
    return _TOOLS_HEAD + "".join("\n" + json.dumps(tool, ensure_ascii=False) for tool in tools) + _TOOLS_TAIL


def with_tools(messages: Sequence[Mapping[str, str]], tools: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """``messages`` with ``tools`` written into the system message (one is added if there is none)."""
    out = [dict(m) for m in messages]
    if out and out[0].get("role") == "system":
        out[0]["content"] = out[0]["content"] + tools_text(tools)
    else:
        out.insert(0, {"role": "system", "content": tools_text(tools).lstrip("\n")})
    return out


def _plain(value: Any) -> Any:
    """A trainer's config node (an OmegaConf ``DictConfig`` or a dict) as plain dicts."""
    if hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _limits(config: Mapping[str, Any], extras: Mapping[str, Any]) -> Limits:
    names = {f.name for f in fields(Limits)}

    def given(overrides: Any, where: str) -> dict[str, Any]:
        overrides = {k: v for k, v in (_plain(overrides) or {}).items() if v is not None}
        unknown = set(overrides) - names
        if unknown:
            raise ValueError(f"{where} names no limit {sorted(unknown)}; limits are {sorted(names)}")
        return {k: int(v) for k, v in overrides.items()}

    limits = replace(Limits(), **given(config.get("limits"), "env_config['limits']"))
    if extras.get("max_turns") is not None:
        limits = replace(limits, max_turns=int(extras["max_turns"]))
    return replace(limits, **given(extras.get("limits"), "the row's limits"))


class ToolbenchTextEnv(BaseTextEnv):
    """One toolbench episode as a SkyRL text env: a model turn is ``Session.reply``, the env's answer
    the next user message; the reward is the env's score, paid when the episode ends."""

    def __init__(self, env_config: Any = None, extras: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        config, extras = _plain(env_config) or {}, _plain(extras) or {}
        if "task" not in extras:
            raise ValueError("a toolbench row's extras name its task (task_rows writes them): 'task' is missing")
        self.limits = _limits(config, extras)
        self.max_turns = self.limits.max_turns
        self.observation_role = str(config.get("observation_role", "user"))
        self.session = Session(
            extras["task"],
            task_id=extras.get("task_id"),
            split=extras.get("split") or "train",
            mode=extras.get("mode"),
            limits=self.limits,
            prompt_setting=str(config.get("prompt_setting", "system")),
            pay=str(extras.get("pay") or config.get("pay", "score")),
            top_k_api=extras["top_k_api"] if extras.get("top_k_api") is not None else config.get("top_k_api"),
        )
        self._offered: set[str] = set()

    def init(self, prompt: list[dict[str, str]]) -> tuple[list[dict[str, str]], dict[str, Any]]:
        """Open the session on the row's task. The row's prompt is what the model reads (``task_rows``
        writes the session's opening there); an empty one is replaced by that opening."""
        messages = with_tools(self.session.open(), self.session.tools)
        self._offered = {tool["function"]["name"] for tool in self.session.tools}
        self.turns = 0
        info = {"task": self.session.task, "task_id": self.session.task_id, "mode": self.session.mode}
        return (list(prompt) if prompt else messages), info

    def step(self, action: str) -> BaseTextEnvStepOutput:
        played = len(self.session.actions)
        observation = self.session.reply(action)
        self.turns = self.session.turns
        metadata = {
            "task": self.session.task,
            "task_id": self.session.task_id,
            "turn": self.session.turns,
            "actions": self.session.actions[played:],
        }
        if self.session.done:
            return BaseTextEnvStepOutput(
                observations=[], reward=float(self.session.reward), done=True, metadata=metadata
            )
        return BaseTextEnvStepOutput(
            observations=[{"role": self.observation_role, "content": observation + self._new_tools()}],
            reward=0.0,
            done=False,
            metadata=metadata,
        )

    def _new_tools(self) -> str:
        """Tools an action made available (AppBench's chosen apps), offered as the first ones were:
        the prompt is text, so a tool the model is not shown cannot be called by name."""
        if not self.session.info.get("tools"):  # a step says which tools it adds only when it adds some
            return ""
        offer = model_tools(self.session.env, self.session.info)
        tools = [tool for tool in offer if tool["function"]["name"] not in self._offered]
        if not tools:
            return ""
        self._offered |= {tool["function"]["name"] for tool in tools}
        listed = "".join("\n" + json.dumps(tool, ensure_ascii=False) for tool in tools)
        return f"\n\nNew tools you may call:\n<tools>{listed}\n</tools>"

    def get_metrics(self) -> dict[str, Any]:
        """The episode's ``Session.stats()`` (success, score, calls, turns, finished), and success and
        score again under the task's name, so a run over several envs reports each env's share
        (SkyRL averages each key where it appears)."""
        stats = self.session.stats()
        task = self.session.task
        return {**stats, f"{task}/success": stats["success"], f"{task}/score": stats["score"]}

    def close(self) -> None:
        self.session.close()


def task_rows(
    tasks: Sequence[str] | Mapping[str, float],
    split: str = "train",
    size: int | None = None,
    seed: int = 0,
    modes: Mapping[str, str] | None = None,
    limits: Limits | None = None,
    prompt_setting: str = "system",
    top_k_api: int | None = None,
) -> list[dict[str, Any]]:
    """SkyRL-train dataset rows over one or several envs (``Session``'s ``task_rows`` picks them).

    Each row is ``{"prompt", "env_class": "toolbench", "task", "env_id", "split", "mode",
    "task_id"}``, and ``"limits"`` (every ``Limits`` field) when ``limits`` is given, ``"top_k_api"``
    when it is (the prompt's docs then hold the k functions most relevant to the task); SkyRL-train
    passes all but ``prompt`` and ``env_class`` to the env as its extras."""
    rows = _session.task_rows(tasks, split=split, size=size, seed=seed, modes=modes)
    sessions: dict[tuple[str, str], Session] = {}
    out = []
    try:
        for row in rows:
            key = (row["task"], row["mode"])
            if key not in sessions:
                sessions[key] = Session(
                    row["task"], split=split, mode=row["mode"], prompt_setting=prompt_setting, top_k_api=top_k_api
                )
            session = sessions[key]
            messages = session.open(row["task_id"])
            extra = {"limits": asdict(limits)} if limits is not None else {}
            if top_k_api is not None:
                extra["top_k_api"] = top_k_api
            out.append({"prompt": with_tools(messages, session.tools), "env_class": ENV_CLASS, **row, **extra})
    finally:
        for session in sessions.values():
            session.close()
    return out


def register() -> None:
    """Register ``ToolbenchTextEnv`` as ``env_class="toolbench"`` in skyrl_gym's registry (idempotent)."""
    from skyrl_gym.envs.registration import register as skyrl_register
    from skyrl_gym.envs.registration import registry

    if ENV_CLASS not in registry:
        skyrl_register(id=ENV_CLASS, entry_point=f"{__name__}:ToolbenchTextEnv")
