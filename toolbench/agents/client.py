"""The model client of ``openai:MODEL``: the ``openai`` SDK, its retries and timeouts, and a breaker.

Any OpenAI-compatible chat-completions endpoint works: ``OPENAI_BASE_URL`` (default OpenAI's)
and ``OPENAI_API_KEY``. The SDK retries connection errors, 408/409/429 and 5xx with backoff; a
call that still fails is one failed call. After ``breaker`` failed calls in a row the client
raises ``RunStopped``, so a dead endpoint stops the run in seconds instead of failing every
episode one by one. This is the one part of the suite that may use the network, and only
because the user names their model's endpoint.

Errors have kinds (``AgentError.kind``), which the harness records on an episode that ends in one:
``ModelTimeout`` ("timeout") is a call the SDK gave up on after its timeout and retries; any other
failed call is an ``AgentError`` of kind "model"; ``LimitReached`` ("limit") is not an error but the
episode using up what it was given; a reply cache in replay mode raises ``CacheMiss`` ("cache_miss",
``toolbench.agents.reply_cache``). Only failed calls to the endpoint count towards the breaker.

With a ``ReplyCache`` the client looks a request up before sending it, and stores what it gets:
``start_episode(trial)`` tells it which trial it plays, part of every key, and restarts the count
of identical requests within the episode, also part of the key.
"""

from __future__ import annotations

import os
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, NoReturn, Protocol

from toolbench.agents.base import EpisodeLimits
from toolbench.agents.canonical import canonical_digest

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class AgentError(RuntimeError):
    """The agent could not produce an action: the episode ends as an error of this ``kind`` (the
    model endpoint failed), not as the agent's failure; ``toolbench eval --retry-errors`` plays it again."""

    kind = "model"


class LimitReached(AgentError):
    """The episode reached one of its limits (turns, tokens, time, cost): it ends as a failure,
    with the limit as its reason. Not an error: the agent used what it was given."""

    kind = "limit"


class ModelTimeout(AgentError):
    """A model call timed out (after the SDK's retries): the episode ends as an error of kind "timeout"."""

    kind = "timeout"


class RunStopped(AgentError):
    """Too many model calls failed in a row: the whole run stops (finished episodes are kept)."""


@dataclass
class Completion:
    """One model reply, with what a run record keeps of it. ``usage`` holds the token counts, and
    ``cost`` where the endpoint reports one (OpenRouter and LiteLLM do)."""

    content: str
    tool_calls: list[dict[str, Any]]
    usage: dict[str, float]
    latency_s: float
    finish_reason: str | None
    raw: dict[str, Any] = field(repr=False)


TOKEN_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


def _usage(raw: dict[str, Any]) -> dict[str, float]:
    usage = raw.get("usage") or {}
    if not isinstance(usage, dict):
        return {key: 0 for key in TOKEN_KEYS}
    counts: dict[str, float] = {key: int(usage.get(key) or 0) for key in TOKEN_KEYS}
    cost = usage.get("cost")
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        counts["cost"] = float(cost)
    return counts


def _completion(response: Any, started: float) -> Completion:
    """The reply, checked: a proxy's error page or a half-compatible server can send anything."""
    with warnings.catch_warnings():  # pydantic warns about fields of the wrong type; they are checked below
        warnings.simplefilter("ignore")
        raw = response.model_dump(mode="json", exclude_unset=True)
    return completion_of(raw, round(time.monotonic() - started, 3))


def completion_of(raw: dict[str, Any], latency_s: float) -> Completion:
    """A ``Completion`` from a completion's JSON body (as the endpoint sent it, or as a reply cache
    kept it); raises ``KeyError``, ``IndexError`` or ``TypeError`` on a body that is not one."""
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
        latency_s=latency_s,
        finish_reason=choice.get("finish_reason"),
        raw=raw,
    )


class RepliesCache(Protocol):
    """What the client asks of a reply cache (``toolbench.agents.reply_cache.ReplyCache`` is one):
    typed here because that module builds on this one's ``Completion`` and errors."""

    def get(
        self, endpoint: str, model: str, request: dict[str, Any], trial: int, occurrence: int
    ) -> Completion | None: ...

    def put(
        self,
        endpoint: str,
        model: str,
        request: dict[str, Any],
        trial: int,
        occurrence: int,
        completion: Completion,
        sent_length_parameter: str | None = None,
    ) -> Any: ...


class ChatClient:
    """``complete(messages, tools)`` against one endpoint, counting failures in a row; with a
    ``cache``, a request is looked up before it is sent and its reply stored (``ReplyCache``)."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 2,
        breaker: int = 5,
        cache: RepliesCache | None = None,
    ) -> None:
        import openai  # imported here: `toolbench list` and the scripted agents never need it

        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY", "")
        # The SDK refuses an empty key; local endpoints usually want none, so send a placeholder.
        # Constructing it opens no connection, so a replaying client may have one too.
        self._client = openai.OpenAI(
            base_url=self.base_url, api_key=key or "none", timeout=timeout, max_retries=max_retries
        )
        self._errors = openai.OpenAIError
        self._bad_request = openai.BadRequestError
        self._timeout = openai.APITimeoutError
        self.timeout = timeout
        self.breaker = breaker
        self.failures_in_a_row = 0
        self.length_parameter = "max_tokens"  # OpenAI's reasoning models take max_completion_tokens
        self.cache = cache
        self.trial = 0
        self._answered: dict[str, int] = {}  # a request's digest -> how often it was answered this episode

    def start_episode(self, trial: int = 0) -> None:
        """A new episode, the task's trial ``trial``: the reply cache keys on both, and counts
        identical requests from 0 again (a judge that never calls this plays one long episode)."""
        self.trial = trial
        self._answered = {}

    def request(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: list[str] | None = None,
    ) -> dict[str, Any]:
        """The request body, its length limit named ``max_tokens`` whatever name the endpoint wants
        (``complete`` renames it when sending): the reply cache keys on this body, so a run recorded
        before the client learnt the newer name replays with a fresh client, which has not."""
        request: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            request["tools"] = tools
        if max_tokens is not None:
            request["max_tokens"] = max_tokens
        if temperature is not None:
            request["temperature"] = temperature
        if stop:
            request["stop"] = stop
        return request

    def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        stop: list[str] | None = None,
        timeout: float | None = None,
    ) -> Completion:
        """One reply. ``timeout``: this call's seconds when fewer than the client's (an episode's
        time running out); such a call gets one attempt, no retries, and its timeout does not count
        towards the breaker."""
        request = self.request(messages, tools, max_tokens, temperature, stop)
        if self.cache is None:
            return self._send(request, timeout)
        digest = canonical_digest(request)
        occurrence = self._answered.get(digest, 0)
        completion = self.cache.get(self.base_url, self.model, request, self.trial, occurrence)
        if completion is None:
            completion = self._send(request, timeout)
            sent_as = self.length_parameter if "max_tokens" in request else None
            self.cache.put(self.base_url, self.model, request, self.trial, occurrence, completion, sent_as)
        # Counted once answered: a failed call stores nothing, so its retry takes the same index.
        self._answered[digest] = occurrence + 1
        return completion

    def _send(self, request: dict[str, Any], timeout: float | None) -> Completion:
        """``request`` sent to the endpoint (its length limit under the name the endpoint takes)."""
        cut = timeout is not None and timeout < self.timeout
        client = self._client
        if cut:  # the episode's time is running out: a retry would overrun it
            client = client.with_options(timeout=max(timeout or 0.0, 0.001), max_retries=0)
        sent = dict(request)
        if "max_tokens" in sent and self.length_parameter != "max_tokens":
            sent[self.length_parameter] = sent.pop("max_tokens")
        started = time.monotonic()
        try:
            try:
                response = client.chat.completions.create(**sent)
            except self._bad_request as exc:
                if "max_completion_tokens" not in str(exc) or "max_tokens" not in sent:
                    raise
                # The model wants the newer name for the same limit: use it from now on.
                self.length_parameter = "max_completion_tokens"
                sent["max_completion_tokens"] = sent.pop("max_tokens")
                response = client.chat.completions.create(**sent)
            completion = _completion(response, started)
        except self._bad_request as exc:
            # A 400 is about this request (too long a context, say), not a dead endpoint: the
            # episode fails, but it does not count towards stopping the run.
            raise AgentError(f"the model endpoint refused the request: {str(exc)[:500]}") from None
        except self._timeout as exc:
            if cut:  # the episode's clock, not the endpoint, cut this call short
                raise ModelTimeout(
                    f"the model call was cut at {timeout:.1f} s, the time the episode had left"
                ) from None
            self._failed(f"{type(exc).__name__}: {exc} (after {self.timeout:g} s a try)", ModelTimeout)
        except self._errors as exc:
            self._failed(f"{type(exc).__name__}: {exc}")
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            self._failed(f"unexpected completion body ({type(exc).__name__}: {exc})")
        self.failures_in_a_row = 0
        return completion

    def _failed(self, reason: str, error: type[AgentError] = AgentError) -> NoReturn:
        self.failures_in_a_row += 1
        message = f"the model endpoint {self.base_url} failed: {reason[:500]}"
        if self.failures_in_a_row >= self.breaker:
            raise RunStopped(
                f"{self.failures_in_a_row} model calls failed in a row, so the run stops; last: {message}"
            ) from None
        raise error(message) from None


class EpisodeMeter:
    """What one episode's model calls used, held against its limits: ``before_call`` and
    ``after_call`` raise ``LimitReached`` naming the limit. ``max_turns`` is the agent's own cap
    (``ModelSettings.max_turns``); the lower of it and ``limits.max_turns`` holds."""

    def __init__(
        self, limits: EpisodeLimits | None = None, max_turns: int | None = None, clock: Any = time.monotonic
    ) -> None:
        self.limits = limits or EpisodeLimits()
        caps = [n for n in (max_turns, self.limits.max_turns) if n is not None]
        self.max_turns = min(caps) if caps else None
        self.clock = clock
        self.started = clock()
        self.turns = 0
        self.usage: dict[str, int] = {key: 0 for key in TOKEN_KEYS}
        self.cost = 0.0
        self.replies = 0
        self.costed = 0  # replies whose usage held a cost
        self.cut = False  # the last call's timeout was the episode's time left

    def before_call(self, call_timeout: float = float("inf")) -> float | None:
        """Before a model call: raises when a turn or the time is up, else counts the turn and
        returns the call's timeout when the episode has less time left than ``call_timeout``."""
        if self.max_turns is not None and self.turns >= self.max_turns:
            raise LimitReached(
                f"limit reached: max_turns {self.max_turns} (model replies in the episode): the model "
                f"took {self.max_turns} turns, the most an episode may take"
            )
        self.cut, timeout = False, None
        if self.limits.timeout_s is not None:
            left = self.limits.timeout_s - (self.clock() - self.started)
            if left <= 0:
                raise self.timed_out()
            if left < call_timeout:
                self.cut, timeout = True, left
        self.turns += 1
        return timeout

    def timed_out(self) -> LimitReached:
        """The episode's time is up (``before_call``, or a call it cut short timed out)."""
        used = self.clock() - self.started
        return LimitReached(
            f"limit reached: episode_timeout {self.limits.timeout_s:g} s (wall time of the episode; {used:.1f} s used)"
        )

    def after_call(self, completion: Completion) -> None:
        """Counts a reply's tokens and cost; raises once their sum is over a limit (the reply is not played)."""
        self.replies += 1
        for key in TOKEN_KEYS:
            self.usage[key] += int(completion.usage.get(key, 0))
        if "cost" in completion.usage:
            self.costed += 1
            self.cost += float(completion.usage["cost"])
        limits = self.limits
        if limits.max_tokens is not None and self.usage["total_tokens"] > limits.max_tokens:
            raise LimitReached(
                f"limit reached: max_tokens {limits.max_tokens} (tokens the model used in the episode: "
                f"{self.usage['total_tokens']})"
            )
        # An endpoint that reports no cost cannot reach max_cost: the log says so (cost_reported).
        if limits.max_cost is not None and self.costed and self.cost > limits.max_cost:
            raise LimitReached(
                f"limit reached: max_cost {limits.max_cost:g} (the cost the endpoint reported for the episode: "
                f"{self.cost:.6g})"
            )

    @property
    def cost_reported(self) -> bool:
        """Whether every reply so far reported its cost (false before the first)."""
        return self.replies > 0 and self.costed == self.replies

    def to_json(self) -> dict[str, Any]:
        """The limits in force and the usage, for an episode log."""
        usage: dict[str, Any] = dict(self.usage)
        if self.costed:
            usage["cost"] = round(self.cost, 10)
        return {
            "limits": {**self.limits.to_json(), "max_turns": self.max_turns},
            "usage": usage,
            "cost_reported": self.cost_reported,
        }
