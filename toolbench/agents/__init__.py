"""Reference agents: ``oracle``, ``random`` and ``openai:MODEL``."""

from __future__ import annotations

from toolbench.agents.base import Agent
from toolbench.agents.llm import AgentError, OpenAIChatAgent
from toolbench.agents.oracle import OracleAgent
from toolbench.agents.random_agent import RandomAgent


def make_agent(spec: str, seed: int = 0) -> Agent:
    """An agent from its command-line name: ``oracle``, ``random`` or ``openai:MODEL``."""
    if spec == "oracle":
        return OracleAgent()
    if spec == "random":
        return RandomAgent(seed=seed)
    if spec.startswith("openai:") and len(spec) > len("openai:"):
        return OpenAIChatAgent(spec.split(":", 1)[1])
    raise ValueError(f"unknown agent {spec!r}: use oracle, random or openai:MODEL")


__all__ = ["Agent", "AgentError", "OpenAIChatAgent", "OracleAgent", "RandomAgent", "make_agent"]
