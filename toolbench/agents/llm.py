"""An agent backed by any OpenAI-compatible chat-completions endpoint (``--agent openai:MODEL``).

Program mode (the benchmark's protocol): one user message with the retrieved API docs, the
demonstrations and the task; the reply is the whole program. Interactive mode: the same start
with one-call demonstrations, then one call per step. Where the env has ``info["tools"]`` the
tools are sent natively: each ``tool_call`` becomes the env's JSON action and each observation a
``tool`` message; a model that answers in text instead gets the observation as a user message.
Everything sent and received is kept for the run record (``episode_log``).

Limits. The harness sets ``agent.limits`` (``EpisodeLimits``) and ``agent.trial`` before each
``begin``. An episode ends with ``LimitReached`` (a failure, not an error) when the model has
replied ``max_turns`` times (the lower of ``ModelSettings.max_turns`` and the limit), when its
replies' tokens or reported cost pass ``max_tokens`` or ``max_cost`` (that reply is not played),
or when ``timeout_s`` has passed since ``begin``; a call never waits longer than the time left.
An endpoint that reports no cost cannot reach ``max_cost``: the log says ``"cost_reported": false``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from toolbench.agents.base import EpisodeLimits
from toolbench.agents.client import (
    AgentError,
    ChatClient,
    Completion,
    EpisodeMeter,
    LimitReached,
    ModelTimeout,
    RunStopped,
)
from toolbench.agents.turns import MAX_CALLS_PER_REPLY, ReplyError, reply_actions
from toolbench.core.env import ToolEnv
from toolbench.core.tasks import Task
from toolbench.core.toolcalls import tool_call_action
from toolbench.prompting import PromptBuilder, generation_defaults

if TYPE_CHECKING:
    from toolbench.agents.reply_cache import ReplyCache

__all__ = ["AgentError", "LimitReached", "ModelSettings", "OpenAIChatAgent", "RunStopped"]

MAX_HISTORY_REPLY = 32_000  # characters of one reply kept in the conversation


@dataclass(frozen=True)
class ModelSettings:
    """How the model is called and prompted. ``None`` fields take the task's defaults
    (ToolBench's Table 8: generation length and stop sequences per task)."""

    prompt: str = "fewshot"
    max_tokens: int | None = None
    temperature: float = 0.0
    stop: tuple[str, ...] | None = None
    top_k_api: int | None = None
    top_k_example: int | None = None
    native_tools: bool = True
    timeout: float = 120.0
    max_retries: int = 2
    breaker: int = 5
    restore: bool = True  # DFSDT: restore the env's state when it backtracks (False: ToolBench's behaviour)
    max_turns: int = 40  # model replies per episode, a reply without an action included

    def for_task(self, task_name: str, mode: str) -> ModelSettings:
        """These settings with the task's defaults filled in."""
        defaults = generation_defaults(task_name, mode)
        return replace(
            self,
            max_tokens=self.max_tokens if self.max_tokens is not None else defaults.max_tokens,
            stop=self.stop if self.stop is not None else defaults.stop,
            top_k_api=self.top_k_api if self.top_k_api is not None else defaults.top_k_api,
            top_k_example=self.top_k_example if self.top_k_example is not None else defaults.top_k_example,
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["stop"] = list(self.stop) if self.stop is not None else None
        return data


@dataclass
class _Episode:
    """What one episode sent and received."""

    settings: ModelSettings  # with the task's defaults filled in
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    meter: EpisodeMeter  # the model calls' turns, tokens, cost and time, against the episode's limits
    calls: list[dict[str, Any]] = field(default_factory=list)
    pending: list[tuple[str, str]] = field(default_factory=list)  # (tool_call_id, action) not yet played
    answered_by: str | None = None  # the tool_call_id the last action came from, or None for text
    observed: list[str] = field(default_factory=list)  # what a text reply's calls returned so far
    refused: int = 0  # calls of the last text reply past MAX_CALLS_PER_REPLY


class OpenAIChatAgent:
    """Prompts a chat model with retrieved API docs and demonstrations; one completion per reply.
    ``cache``: the client's reply cache (ignored when ``client`` is given: give it to that client)."""

    trial = 0  # which of the task's trials is played (set by the harness before ``begin``)
    limits = EpisodeLimits()  # the episode's limits (set by the harness before ``begin``)

    def __init__(
        self,
        model: str,
        settings: ModelSettings | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        client: ChatClient | None = None,
        cache: ReplyCache | None = None,
    ) -> None:
        self.model = model
        self.name = f"openai:{model}"
        self.settings = settings or ModelSettings()
        self.client = client or ChatClient(
            model,
            base_url=base_url,
            api_key=api_key,
            timeout=self.settings.timeout,
            max_retries=self.settings.max_retries,
            breaker=self.settings.breaker,
            cache=cache,
        )
        self._builders: dict[tuple[str, str], tuple[PromptBuilder, ModelSettings]] = {}
        self._episode: _Episode | None = None

    def _builder(self, env: ToolEnv, info: dict[str, Any]) -> tuple[PromptBuilder, ModelSettings]:
        key = (env.task_name, env.mode)
        if key not in self._builders:
            settings = self.settings.for_task(env.task_name, env.mode)
            builder = PromptBuilder.for_env(
                env,
                info.get("api_docs", ""),
                setting=settings.prompt,
                top_k_api=settings.top_k_api or 0,
                top_k_example=settings.top_k_example or 0,
                native_tools=self._uses_tools(env, info),
            )
            self._builders[key] = (builder, settings)
        return self._builders[key]

    def _uses_tools(self, env: ToolEnv, info: dict[str, Any]) -> bool:
        return self.settings.native_tools and env.mode == "interactive" and bool(info.get("tools"))

    def begin(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> None:
        meter = EpisodeMeter(self.limits, max_turns=self.settings.max_turns)  # the episode's clock starts here
        if hasattr(self.client, "start_episode"):
            self.client.start_episode(self.trial)
        self._env = env
        builder, settings = self._builder(env, info)
        self._episode = _Episode(
            settings=settings,
            messages=builder.messages(observation),
            tools=info["tools"] if self._uses_tools(env, info) else None,
            meter=meter,
        )

    def act(self, observation: str, info: dict[str, Any]) -> str:
        episode = self._episode
        if episode is None:
            raise AgentError("act() before begin()")
        if episode.tools is not None and isinstance(info.get("tools"), list):
            episode.tools = info["tools"]  # a step changed what can be called (AppBench's select_apps)
        if episode.answered_by is not None:
            episode.messages.append({"role": "tool", "tool_call_id": episode.answered_by, "content": observation})
        elif len(episode.messages) and episode.messages[-1]["role"] == "assistant":
            episode.observed.append(observation)
            if episode.pending:  # the reply held several calls: their results go back together
                return episode.pending.pop(0)[1]
            episode.messages.append({"role": "user", "content": self._observations_message(episode)})
        if episode.pending:  # the model asked for several tool calls in one reply: play them in order
            episode.answered_by, action = episode.pending.pop(0)
            return action
        while True:
            completion = self._complete(episode)
            # Some servers refuse a null content without tool calls, others an empty one with them. A
            # reply longer than any action is cut in the history, or every later request would carry it.
            content = completion.content if completion.content or not completion.tool_calls else None
            if content and len(content) > MAX_HISTORY_REPLY:
                content = content[:MAX_HISTORY_REPLY] + f"\n[... reply cut at {MAX_HISTORY_REPLY} characters]"
            assistant: dict[str, Any] = {"role": "assistant", "content": content}
            if completion.tool_calls:
                assistant["tool_calls"] = completion.tool_calls
            episode.messages.append(assistant)
            if completion.tool_calls:
                break
            try:  # the rule every trainer adapter reads replies by: prose, fences, several calls
                actions = reply_actions(self._env, completion.content or "")
            except ReplyError as exc:  # no env step: the model reads why and answers again
                episode.messages.append({"role": "user", "content": f"Error: {exc}"})
                continue
            episode.answered_by, episode.observed = None, []
            kept = actions[:MAX_CALLS_PER_REPLY]
            episode.refused = len(actions) - len(kept)
            episode.pending = [("", action) for action in kept[1:]]
            return kept[0]
        queued = []
        for call in completion.tool_calls:
            function = call.get("function") or {}
            queued.append(
                (str(call.get("id", "")), tool_call_action(str(function.get("name", "")), function.get("arguments")))
            )
        episode.answered_by, action = queued[0]
        episode.pending = queued[1:]
        return action

    @staticmethod
    def _observations_message(episode: _Episode) -> str:
        """What a text reply's calls returned: numbered as the demonstrations are ("Observation 1:"
        answers "Action 1:"), each call's result marked [n] when the reply held several."""
        step = sum(1 for m in episode.messages if m["role"] == "assistant")
        results = episode.observed
        if len(results) > 1 or episode.refused:
            results = [f"[{n}] {text}" for n, text in enumerate(results, start=1)]
        if episode.refused:
            results.append(f"Error: {episode.refused} more calls refused: a reply plays at most {MAX_CALLS_PER_REPLY}")
        return f"Observation {step}:\n" + "\n".join(results) + f"\nAction {step + 1}:"

    def _complete(self, episode: _Episode) -> Completion:
        settings, meter = episode.settings, episode.meter
        timeout = meter.before_call(getattr(self.client, "timeout", settings.timeout))
        record: dict[str, Any] = {"messages_sent": len(episode.messages)}
        options: dict[str, Any] = {"timeout": timeout} if timeout is not None else {}
        try:
            try:
                completion = self.client.complete(
                    episode.messages,
                    tools=episode.tools,
                    max_tokens=settings.max_tokens,
                    temperature=settings.temperature,
                    stop=list(settings.stop) if settings.stop else None,
                    **options,
                )
            except ModelTimeout:
                if meter.cut:  # the call had only the episode's time left: the episode ran out of time
                    raise meter.timed_out() from None
                raise
        except AgentError as exc:
            record["error"] = str(exc)
            episode.calls.append(record)
            raise
        record.update(  # the raw completion holds the content and tool calls; they are not copied again
            completion=completion.raw,
            finish_reason=completion.finish_reason,
            usage=completion.usage,
            latency_s=completion.latency_s,
        )
        episode.calls.append(record)
        meter.after_call(completion)  # a reply that passes a token or cost limit is logged, not played
        return completion

    def episode_log(self) -> dict[str, Any]:
        """The episode's messages, tools, model calls (raw completions, usage, latency), settings,
        the limits in force, and the usage (with the cost when the endpoint reports it)."""
        episode = self._episode
        if episode is None:
            return {}
        return json.loads(
            json.dumps(
                {
                    "settings": {"model": self.model, **episode.settings.to_json()},
                    "messages": episode.messages,
                    "tools": episode.tools,
                    "model_calls": episode.calls,
                    **episode.meter.to_json(),
                },
                ensure_ascii=False,
                default=str,
            )
        )
