"""TRL adapter: an ``environment_factory`` for ``trl.GRPOTrainer`` (TRL 1.16).

TRL's GRPO trainer takes a class whose instances it creates one per rollout: ``reset(**row)``
starts an episode from a dataset row and returns text appended to the prompt, every public
method is a tool the model may call (its schema read from the signature and Google-style
docstring), and ``get_reward()`` scores the finished rollout. This module builds that class
from an env's own ``tools`` schemas, so each tool call is one interactive ``step`` and the reward
is the env's scorer.

    from trl import GRPOConfig, GRPOTrainer
    from datasets import Dataset
    from toolbench.integrations.trl import environment_factory, task_rows

    trainer = GRPOTrainer(model=..., args=GRPOConfig(...),
                          train_dataset=Dataset.from_list(task_rows("HomeSearch", "demo")),
                          environment_factory=environment_factory("toolbench/HomeSearch-v0"))
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import gymnasium as gym

import toolbench

_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "object": dict}


def task_rows(task: str, split: str = "train") -> list[dict[str, Any]]:
    """Dataset rows for GRPOTrainer: an empty user turn (``reset`` appends the task's prompt) and the task id."""
    return [{"prompt": [{"role": "user", "content": ""}], "task_id": t.id} for t in toolbench.load_tasks(task, split)]


class ToolbenchEnvironment:
    """One episode of a toolbench env at a time, in TRL's environment shape; subclasses add the tools."""

    env_id: str
    make_kwargs: dict[str, Any]

    def __init__(self) -> None:
        self.env = gym.make(self.env_id, mode="interactive", **self.make_kwargs)
        self.reward = 0.0
        self.done = False
        self.info: dict[str, Any] = {}

    def reset(self, task_id: str | None = None, **_: Any) -> str:
        prompt, self.info = self.env.reset(options={"task_id": task_id} if task_id else None)
        self.reward, self.done = 0.0, False
        return prompt

    def get_reward(self) -> float:
        """The env's score of the episode: paid when the finishing tool is called (or max_steps cuts it off)."""
        return self.reward

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        if self.done:
            return "The episode is over: no more tool calls."
        observation, reward, terminated, truncated, self.info = self.env.step(
            json.dumps({"name": name, "arguments": arguments})
        )
        self.reward, self.done = float(reward), terminated or truncated
        return observation


def _annotation(spec: dict[str, Any]) -> Any:
    if spec.get("type") == "array":
        return list[_TYPES.get(spec.get("items", {}).get("type"), str)]
    return _TYPES.get(spec.get("type"), str)


def _tool_method(schema: dict[str, Any]):
    """A method whose signature and docstring describe ``schema`` as transformers' ``get_json_schema`` reads them."""
    name, params = schema["name"], schema.get("parameters", {})
    properties, required = params.get("properties", {}), set(params.get("required", []))
    bad = [p for p in properties if not p.isidentifier()]
    if bad or not name.isidentifier():
        raise ValueError(f"tool {name!r}: names {bad or [name]} are not Python identifiers, which TRL's tools need")

    def method(self: ToolbenchEnvironment, **arguments: Any) -> str:
        return self._call(name, arguments)

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for param, spec in properties.items():
        default = inspect.Parameter.empty if param in required else None
        parameters.append(
            inspect.Parameter(param, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=_annotation(spec))
        )
    method.__signature__ = inspect.Signature(parameters, return_annotation=str)
    method.__annotations__ = {p.name: p.annotation for p in parameters[1:]} | {"return": str}
    method.__name__ = method.__qualname__ = name
    args = "".join(f"\n    {p}: {s.get('description') or p}" for p, s in properties.items())
    summary = (schema.get("description") or name).replace("\n", " ")
    method.__doc__ = f"{summary}\n\nArgs:{args}\n\nReturns:\n    The env's answer." if args else summary
    return method


def environment_factory(env_id: str, **make_kwargs: Any) -> type[ToolbenchEnvironment]:
    """A class TRL instantiates per rollout, with one method per tool in the env's ``info["tools"]``."""
    probe = gym.make(env_id, mode="interactive", **make_kwargs)
    _, info = probe.reset(seed=0)
    probe.close()
    if not info.get("tools"):
        raise ValueError(f"{env_id} has no callable tools in interactive mode")
    methods = {t["function"]["name"]: _tool_method(t["function"]) for t in info["tools"]}
    name = env_id.split("/")[-1].replace("-", "_") + "Environment"
    return type(name, (ToolbenchEnvironment,), {"env_id": env_id, "make_kwargs": make_kwargs, **methods})
