"""An agent backed by any OpenAI-compatible chat-completions endpoint (``--agent openai:MODEL``).

The endpoint comes from ``OPENAI_BASE_URL`` (default ``https://api.openai.com/v1``) and the key
from ``OPENAI_API_KEY``. This is the one part of the suite that may use the network, and only
because the user asks it to call their model.
"""

from __future__ import annotations

import os
import time
from typing import Any

import requests

from toolbench.core.env import ToolEnv
from toolbench.core.tasks import Task
from toolbench.eval.prompts import PromptBuilder

DEFAULT_BASE_URL = "https://api.openai.com/v1"
RETRIES = 3


class AgentError(RuntimeError):
    """The agent could not produce an action (e.g. its model endpoint failed)."""


class OpenAIChatAgent:
    """Prompts a chat model with retrieved API docs and demonstrations; one completion per action."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
        top_k_api: int = 10,
        top_k_example: int = 3,
        session: requests.Session | None = None,
        timeout: float = 120.0,
    ):
        self.model = model
        self.name = f"openai:{model}"
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.top_k_api = top_k_api
        self.top_k_example = top_k_example
        self.session = session or requests.Session()
        self.timeout = timeout
        self._builders: dict[str, PromptBuilder] = {}
        self.messages: list[dict[str, str]] = []
        self._fresh = True

    def _builder(self, env: ToolEnv, info: dict[str, Any]) -> PromptBuilder:
        key = env.task_name
        if key not in self._builders:
            demos = env.load_split("demo") if "demo" in env.splits else []
            self._builders[key] = PromptBuilder(info.get("api_docs", ""), demos, self.top_k_api, self.top_k_example)
        return self._builders[key]

    def begin(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> None:
        self.messages = [{"role": "user", "content": self._builder(env, info).build(observation)}]
        self._fresh = True

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if not self._fresh:  # later steps of interactive episodes: show what the last action returned
            self.messages.append({"role": "user", "content": f"Observation:\n{observation}\nNext action:"})
        self._fresh = False
        content = self._complete(self.messages)
        self.messages.append({"role": "assistant", "content": content})
        return content

    def _complete(self, messages: list[dict[str, str]]) -> str:
        payload = {
            "model": self.model,
            "messages": messages,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        last_error = ""
        for attempt in range(RETRIES):
            try:
                response = self.session.post(
                    f"{self.base_url}/chat/completions", json=payload, headers=headers, timeout=self.timeout
                )
            except requests.RequestException as exc:
                last_error = str(exc)
            else:
                if response.status_code == 200:
                    try:
                        return response.json()["choices"][0]["message"]["content"] or ""
                    except (ValueError, KeyError, IndexError, TypeError) as exc:
                        raise AgentError(f"unexpected completion body: {response.text[:300]}") from exc
                last_error = f"HTTP {response.status_code}: {response.text[:300]}"
                if response.status_code not in (408, 409, 429) and response.status_code < 500:
                    break
            time.sleep(2**attempt)
        raise AgentError(f"the model endpoint failed: {last_error}")
