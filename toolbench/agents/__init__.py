"""Reference agents: ``oracle``, ``random``, ``openai:MODEL``, and ToolLLM's ``react[@N]:MODEL`` and ``dfsdt:MODEL``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolbench.agents.base import Agent
from toolbench.agents.client import AgentError, LimitReached, ModelTimeout, RunStopped
from toolbench.agents.oracle import OracleAgent
from toolbench.agents.random_agent import RandomAgent

if TYPE_CHECKING:
    from toolbench.agents.llm import ModelSettings
    from toolbench.agents.reply_cache import ReplyCache


def make_agent(
    spec: str, seed: int = 0, settings: ModelSettings | None = None, cache: ReplyCache | None = None
) -> Agent:
    """An agent from its command-line name: ``oracle``, ``random``, ``openai:MODEL``, ``react[@N]:MODEL``
    or ``dfsdt:MODEL`` (the last two for RapidAPI), or ``cheap:POLICY`` (the exploit baselines of
    ``toolbench audit``). ``cache``: the model agents' reply cache (record, replay or refresh); the
    other agents call no model and ignore it."""
    if spec == "oracle":
        return OracleAgent()
    if spec == "random":
        return RandomAgent(seed=seed)
    if spec.startswith("cheap:"):
        from toolbench.agents.cheap import cheap_policy

        return cheap_policy(spec.split(":", 1)[1], seed=seed)
    if spec.startswith("openai:") and len(spec) > len("openai:"):
        from toolbench.agents.llm import OpenAIChatAgent

        return OpenAIChatAgent(spec.split(":", 1)[1], settings=settings, cache=cache)
    method, _, model = spec.partition(":")
    name, _, tries = method.partition("@")
    if name in ("react", "dfsdt") and model and (not tries or (tries.isdigit() and name == "react" and int(tries) > 0)):
        from toolbench.agents.client import ChatClient
        from toolbench.agents.toolllm import ToolLLMAgent

        if settings is None:
            from toolbench.agents.llm import ModelSettings

            settings = ModelSettings()
        client = ChatClient(
            model, timeout=settings.timeout, max_retries=settings.max_retries, breaker=settings.breaker, cache=cache
        )
        options = {"restore": settings.restore, "temperature": settings.temperature}
        return ToolLLMAgent(model, name, int(tries or 1), client=client, **options)
    raise ValueError(
        f"unknown agent {spec!r}: use oracle, random, openai:MODEL, react[@N]:MODEL, dfsdt:MODEL or cheap:POLICY"
    )


def __getattr__(name: str) -> object:
    """``toolbench.agents.DFSDT``, ``ReACT``, ``ReplyCache`` and ``CacheMiss``, imported on first use."""
    if name in ("DFSDT", "ReACT", "ToolLLMAgent"):
        from toolbench.agents import toolllm

        return getattr(toolllm, name)
    if name in ("ReplyCache", "CacheMiss"):
        from toolbench.agents import reply_cache

        return getattr(reply_cache, name)
    raise AttributeError(name)


__all__ = [
    "DFSDT",
    "Agent",
    "AgentError",
    "CacheMiss",
    "LimitReached",
    "ModelTimeout",
    "OracleAgent",
    "RandomAgent",
    "ReACT",
    "ReplyCache",
    "RunStopped",
    "make_agent",
]
