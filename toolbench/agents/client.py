"""The model client of ``openai:MODEL``: the ``openai`` SDK, its retries and timeouts, and a breaker.

Any OpenAI-compatible chat-completions endpoint works: ``OPENAI_BASE_URL`` (default OpenAI's)
and ``OPENAI_API_KEY``. The SDK retries connection errors, 408/409/429 and 5xx with backoff; a
call that still fails is one failed call. After ``breaker`` failed calls in a row the client
raises ``RunStopped``, so a dead endpoint stops the run in seconds instead of failing every
episode one by one. This is the one part of the suite that may use the network, and only
because the user names their model's endpoint.
"""

from __future__ import annotations

import os
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, NoReturn

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class AgentError(RuntimeError):
    """The agent could not produce an action: the episode ends as an error of this ``kind`` (the
    model endpoint failed), not as the agent's failure; ``toolbench eval --retry-errors`` plays it again."""

    kind = "model"


class LimitReached(AgentError):
    """The episode reached one of its limits (turns, tokens, time, cost): it ends as a failure,
    with the limit as its reason. Not an error: the agent used what it was given."""

    kind = "limit"


class RunStopped(AgentError):
    """Too many model calls failed in a row: the whole run stops (finished episodes are kept)."""


@dataclass
class Completion:
    """One model reply, with what a run record keeps of it."""

    content: str
    tool_calls: list[dict[str, Any]]
    usage: dict[str, int]
    latency_s: float
    finish_reason: str | None
    raw: dict[str, Any] = field(repr=False)


def _usage(raw: dict[str, Any]) -> dict[str, int]:
    usage = raw.get("usage") or {}
    if not isinstance(usage, dict):
        return {key: 0 for key in ("prompt_tokens", "completion_tokens", "total_tokens")}
    return {key: int(usage.get(key) or 0) for key in ("prompt_tokens", "completion_tokens", "total_tokens")}


def _completion(response: Any, started: float) -> Completion:
    """The reply, checked: a proxy's error page or a half-compatible server can send anything."""
    with warnings.catch_warnings():  # pydantic warns about fields of the wrong type; they are checked below
        warnings.simplefilter("ignore")
        raw = response.model_dump(mode="json", exclude_unset=True)
    choice = raw["choices"][0]
    message = choice["message"]
    if not isinstance(message, dict):
        raise TypeError("the reply has no message")
    content = message.get("content") or ""
    tool_calls = message.get("tool_calls") or []
    if not isinstance(content, str) or not isinstance(tool_calls, list):
        raise TypeError("the message's content or tool_calls have the wrong type")
    return Completion(
        content=content,
        tool_calls=[call for call in tool_calls if isinstance(call, dict)],
        usage=_usage(raw),
        latency_s=round(time.monotonic() - started, 3),
        finish_reason=choice.get("finish_reason"),
        raw=raw,
    )


class ChatClient:
    """``complete(messages, tools)`` against one endpoint, counting failures in a row."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 2,
        breaker: int = 5,
    ) -> None:
        import openai  # imported here: `toolbench list` and the scripted agents never need it

        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        # The SDK refuses an empty key; local endpoints usually want none, so send a placeholder.
        self._client = openai.OpenAI(
            base_url=self.base_url, api_key=key or "none", timeout=timeout, max_retries=max_retries
        )
        self._errors = openai.OpenAIError
        self._bad_request = openai.BadRequestError
        self.breaker = breaker
        self.failures_in_a_row = 0
        self.length_parameter = "max_tokens"  # OpenAI's reasoning models take max_completion_tokens

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: list[str] | None = None,
    ) -> Completion:
        request: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            request["tools"] = tools
        if max_tokens is not None:
            request[self.length_parameter] = max_tokens
        if temperature is not None:
            request["temperature"] = temperature
        if stop:
            request["stop"] = stop
        started = time.monotonic()
        try:
            try:
                response = self._client.chat.completions.create(**request)
            except self._bad_request as exc:
                if "max_completion_tokens" not in str(exc) or "max_tokens" not in request:
                    raise
                # The model wants the newer name for the same limit: use it from now on.
                self.length_parameter = "max_completion_tokens"
                request["max_completion_tokens"] = request.pop("max_tokens")
                response = self._client.chat.completions.create(**request)
            completion = _completion(response, started)
        except self._bad_request as exc:
            # A 400 is about this request (too long a context, say), not a dead endpoint: the
            # episode fails, but it does not count towards stopping the run.
            raise AgentError(f"the model endpoint refused the request: {str(exc)[:500]}") from None
        except self._errors as exc:
            self._failed(f"{type(exc).__name__}: {exc}")
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            self._failed(f"unexpected completion body ({type(exc).__name__}: {exc})")
        self.failures_in_a_row = 0
        return completion

    def _failed(self, reason: str) -> NoReturn:
        self.failures_in_a_row += 1
        message = f"the model endpoint {self.base_url} failed: {reason[:500]}"
        if self.failures_in_a_row >= self.breaker:
            raise RunStopped(
                f"{self.failures_in_a_row} model calls failed in a row, so the run stops; last: {message}"
            ) from None
        raise AgentError(message) from None
