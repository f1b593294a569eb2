"""Reference agents: ``oracle``, ``random``, ``openai:MODEL``, and ToolLLM's ``react[@N]:MODEL`` and ``dfsdt:MODEL``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolbench.agents.base import Agent
from toolbench.agents.client import AgentError, RunStopped
from toolbench.agents.oracle import OracleAgent
from toolbench.agents.random_agent import RandomAgent

if TYPE_CHECKING:
    from toolbench.agents.llm import ModelSettings


def make_agent(spec: str, seed: int = 0, settings: ModelSettings | None = None) -> Agent:
    """An agent from its command-line name: ``oracle``, ``random``, ``openai:MODEL``, ``react[@N]:MODEL``
    or ``dfsdt:MODEL`` (the last two for RapidAPI)."""
    if spec == "oracle":
        return OracleAgent()
    if spec == "random":
        return RandomAgent(seed=seed)
    if spec.startswith("openai:") and len(spec) > len("openai:"):
        from toolbench.agents.llm import OpenAIChatAgent

        return OpenAIChatAgent(spec.split(":", 1)[1], settings=settings)
    method, _, model = spec.partition(":")
    name, _, tries = method.partition("@")
    if name in ("react", "dfsdt") and model and (not tries or (tries.isdigit() and name == "react" and int(tries) > 0)):
        from toolbench.agents.client import ChatClient
        from toolbench.agents.toolllm import ToolLLMAgent

        timeout = settings.timeout if settings else 120.0
        client = ChatClient(model, timeout=timeout)
        return ToolLLMAgent(model, name, int(tries or 1), client=client)
    raise ValueError(f"unknown agent {spec!r}: use oracle, random, openai:MODEL, react[@N]:MODEL or dfsdt:MODEL")


__all__ = ["Agent", "AgentError", "OracleAgent", "RandomAgent", "RunStopped", "make_agent"]
