"""Reference agents: ``oracle``, ``random`` and ``openai:MODEL``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolbench.agents.base import Agent
from toolbench.agents.client import AgentError, RunStopped
from toolbench.agents.oracle import OracleAgent
from toolbench.agents.random_agent import RandomAgent

if TYPE_CHECKING:
    from toolbench.agents.llm import ModelSettings


def make_agent(spec: str, seed: int = 0, settings: ModelSettings | None = None) -> Agent:
    """An agent from its command-line name: ``oracle``, ``random`` or ``openai:MODEL``."""
    if spec == "oracle":
        return OracleAgent()
    if spec == "random":
        return RandomAgent(seed=seed)
    if spec.startswith("openai:") and len(spec) > len("openai:"):
        from toolbench.agents.llm import OpenAIChatAgent

        return OpenAIChatAgent(spec.split(":", 1)[1], settings=settings)
    raise ValueError(f"unknown agent {spec!r}: use oracle, random or openai:MODEL")


__all__ = ["Agent", "AgentError", "OracleAgent", "RandomAgent", "RunStopped", "make_agent"]
