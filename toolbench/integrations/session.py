"""One toolbench episode as a trainer plays it, and the rows that say which episodes to play.

Every adapter (TRL, verifiers, SkyRL) drives a ``Session``: ``open()`` gives the messages that
start the episode and the tools the model is offered (``agents.turns.model_tools``), ``reply(text)``
plays a model's turn (``agents.turns.reply_actions``: prose, fences, several calls), ``call(name,
arguments)`` plays one native tool call, and ``reward`` is the env's score of the episode (with
``pay="success"``, 1.0 for success only), paid when it ends; ``stats()`` gives the calls and
turns taken and whether the agent finished the episode itself or a cap ended it.

The same limits hold in every adapter: ``Limits.max_turns`` model turns, ``max_calls_per_reply``
calls per turn, and ``max_reply_chars`` / ``max_episode_chars`` of model text (a character
budget, since adapters tokenize differently); past one the episode ends, scored as it stands.

A prompt shows every function of the env's API docs unless ``top_k_api`` is given: then the k
functions most relevant to the task, as the prompt builder retrieves them (BM25, the harness's
``top_k_api``), for envs whose docs make prompts too long (VirtualHome's object lists). The env
still takes every action; only the prompt shows fewer.

``task_rows`` writes the rows of one dataset over several envs: each row names its env, split,
mode and task, so one training run mixes envs and each row's reward comes from its own env.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

import toolbench
from toolbench.agents.turns import MAX_CALLS_PER_REPLY, ReplyError, call_action, model_tools, reply_actions
from toolbench.catalog import NAMESPACE, find_task
from toolbench.core.env import ToolEnv
from toolbench.prompting import PromptBuilder

#: What a session's reward pays: the env's partial score (``score``) or only success (``success``).
PAYS = ("score", "success")


@dataclass(frozen=True)
class Limits:
    """What one episode may take, in every adapter."""

    max_turns: int = 20
    max_calls_per_reply: int = MAX_CALLS_PER_REPLY
    max_reply_chars: int = 8_000
    max_episode_chars: int = 64_000


def training_mode(task: str) -> str:
    """The mode a trainer plays ``task`` in unless told: interactive where the env has it (a tool
    per call, the env's answer between calls), else program."""
    modes = find_task(task).modes
    return "interactive" if "interactive" in modes else modes[0]


def env_id_of(task: str) -> str:
    return f"{NAMESPACE}/{find_task(task).name}-v0"


class Session:
    """One episode of one task, played by a trainer's model."""

    def __init__(
        self,
        task: str,
        task_id: str | None = None,
        split: str = "train",
        mode: str | None = None,
        limits: Limits = Limits(),
        prompt_setting: str = "system",
        pay: str = "score",
        top_k_api: int | None = None,
        **make_kwargs: Any,
    ) -> None:
        if pay not in PAYS:
            raise ValueError(f"pay must be one of {PAYS}, not {pay!r}")
        if top_k_api is not None and top_k_api < 0:
            raise ValueError(f"top_k_api must be None (every function) or at least 0, not {top_k_api}")
        self.task = find_task(task).name
        self.mode = mode or training_mode(self.task)
        self.split = split
        self.task_id = task_id
        self.limits = limits
        self.prompt_setting = prompt_setting
        self.top_k_api = top_k_api
        self.env: ToolEnv = gym.make(env_id_of(self.task), mode=self.mode, split=split, **make_kwargs).unwrapped
        self.pay = pay
        self.reward = 0.0
        self.success = False
        #: The episode ended by the agent's own finishing action (or a program that ran), not cut
        #: off by a cap or the env's max_steps: a run where few episodes finish has a dead signal.
        self.finished = False
        self.done = False
        self.turns = 0
        self.chars = 0
        self.info: dict[str, Any] = {}
        self.actions: list[str] = []
        self.tools: list[dict[str, Any]] = []
        self._built: tuple[str, PromptBuilder] | None = None

    def open(self, task_id: str | None = None) -> list[dict[str, str]]:
        """Start the episode (on ``task_id``, else the session's); the messages that open it."""
        task_id = task_id or self.task_id
        observation, self.info = self.env.reset(options={"task_id": task_id} if task_id else None)
        self.task_id = self.info["task_id"]
        self.reward, self.success, self.done, self.turns, self.chars = 0.0, False, False, 0, 0
        self.finished = False
        self.actions = []
        self.tools = model_tools(self.env, self.info)
        messages = self._builder(self.info.get("api_docs", "")).messages(observation)
        if self.top_k_api is None and self.info.get("api_docs"):  # every function, not the builder's top k
            messages[-1]["content"] = f"{self.info['api_docs']}\n\n{messages[-1]['content']}"
        return messages

    def _builder(self, api_docs: str) -> PromptBuilder:
        """The prompt builder of these docs, made once: most envs' docs are the same at every reset,
        and a builder reads the demo split and indexes the docs' functions."""
        if self._built is None or self._built[0] != api_docs:
            builder = PromptBuilder.for_env(
                self.env, api_docs, setting=self.prompt_setting, top_k_api=self.top_k_api or 0, top_k_example=0,
                native_tools=True,
            )  # fmt: skip
            self._built = (api_docs, builder)
        return self._built[1]

    def reply(self, text: str) -> str:
        """Play one model turn given as text; what the model is told back."""
        if self.done:
            return "The episode is over: no more actions."
        self.turns += 1
        self.chars += len(text) if isinstance(text, str) else 0
        if isinstance(text, str) and len(text) > self.limits.max_reply_chars:
            return self._cut(f"the reply is {len(text)} characters long; a turn may take {self.limits.max_reply_chars}")
        try:
            actions = reply_actions(self.env, text)
        except ReplyError as exc:
            return self._after_turn(f"Error: {exc}")
        return self._play(actions)

    def call(self, name: str, arguments: Any) -> str:
        """Play one native tool call (a turn of its own); what the tool returns to the model."""
        if self.done:
            return "The episode is over: no more tool calls."
        self.turns += 1
        try:
            action = call_action(name, arguments)
        except ReplyError as exc:
            return self._after_turn(f"Error: {exc}")
        return self._play([action])

    def _play(self, actions: Sequence[str]) -> str:
        kept, refused = actions[: self.limits.max_calls_per_reply], len(actions) - self.limits.max_calls_per_reply
        observations = []
        for action in kept:
            observation, reward, terminated, truncated, self.info = self.env.step(action)
            self.actions.append(action)
            if isinstance(self.info.get("tools"), list):  # a step changed what can be called (select_apps)
                self.tools = model_tools(self.env, self.info)
            observations.append(observation)
            if terminated or truncated:
                self.finished = terminated
                self._end(float(reward))
                break
        if refused > 0 and not self.done:
            observations.append(f"Error: {refused} more calls refused: a turn plays at most {len(kept)}")
        if len(observations) > 1:
            observations = [f"[{n}] {text}" for n, text in enumerate(observations, start=1)]
        return self._after_turn("\n".join(observations))

    def _after_turn(self, observation: str) -> str:
        if not self.done and self.turns >= self.limits.max_turns:
            return self._cut(f"{self.limits.max_turns} turns, the most an episode may take")
        if not self.done and self.chars > self.limits.max_episode_chars:
            return self._cut(f"{self.limits.max_episode_chars} characters of replies, the most an episode may take")
        return observation

    def end(self, why: str = "the trainer ended the rollout") -> str:
        """End the episode now, scored as it stands (the env's truncation); a trainer that stops a
        rollout on its own limits calls it so the reward is the env's, not 0."""
        return self._cut(why) if not self.done else "The episode is over."

    def _cut(self, why: str) -> str:
        """End the episode at a limit, scored as it stands (the env's truncation)."""
        while not self.done:
            # An empty action counts a step and changes nothing (no answer is sent): the env's own
            # max_steps ends the episode and scores it.
            _, reward, terminated, truncated, self.info = self.env.step("")
            if terminated or truncated:
                self._end(float(reward))
        return f"The episode ended: {why}."

    def _end(self, score: float) -> None:
        self.done = True
        self.success = bool(self.info.get("success"))
        self.reward = score if self.pay == "score" else float(self.success)

    def stats(self) -> dict[str, float]:
        """What a trainer logs beside the reward: success, the env's score, calls and turns taken,
        and whether the agent finished the episode itself."""
        score = float(self.info.get("score") or 0.0) if self.done else 0.0
        return {"success": float(self.success), "score": score, "calls": float(len(self.actions)),
                "turns": float(self.turns), "finished": float(self.finished)}  # fmt: skip

    def close(self) -> None:
        self.env.close()


def task_rows(
    tasks: Sequence[str] | Mapping[str, float],
    split: str = "train",
    size: int | None = None,
    seed: int = 0,
    modes: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Rows of a dataset over one or several envs: ``{"task", "env_id", "split", "mode", "task_id"}``.

    ``tasks`` names the envs, or maps each to a weight: rows are drawn in those proportions (with
    ``size`` rows in all, by a seeded shuffle of each env's split); without weights and size, every
    task of every named env's split, env after env."""
    weights = dict(tasks) if isinstance(tasks, Mapping) else dict.fromkeys(tasks, 1.0)
    chosen: dict[str, list[str]] = {}
    rng = random.Random(seed)
    total = sum(weights.values())
    for n, (task, weight) in enumerate(weights.items()):
        ids = [t.id for t in toolbench.load_tasks(task, split)]
        if size is not None:
            rng.shuffle(ids)
            want = round(size * weight / total) if n < len(weights) - 1 else size - sum(map(len, chosen.values()))
            ids = (ids * (want // len(ids) + 1))[:want]
        chosen[task] = ids
    rows = [
        {"task": find_task(task).name, "env_id": env_id_of(task), "split": split,
         "mode": (modes or {}).get(task) or training_mode(task), "task_id": task_id}
        for task, ids in chosen.items()
        for task_id in ids
    ]  # fmt: skip
    if size is not None:
        rng.shuffle(rows)
    return rows
