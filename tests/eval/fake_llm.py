"""A scripted OpenAI-compatible chat endpoint, served on loopback for the LLM agent's tests.

The "model" plays each task's first reference: it finds the task by its prompt in the request,
counts the results it has already been shown, and answers with the next call, as a native tool
call when the request has ``tools`` and as text otherwise. ``behaviour`` switches it to failing
(HTTP 500), empty replies, or fails after a number of good replies.

For trials and limits: ``fail_rate`` makes it answer wrongly (the finishing call at once, or a
program that solves nothing) with that probability, drawn per request from its own RNG seeded by
``seed``, so repeated trials of a task differ and the same seed and request order repeat them;
``cost`` puts a cost in each reply's usage (as OpenRouter and LiteLLM do); ``delay`` is the seconds
it takes to answer.
"""

from __future__ import annotations

import ast
import functools
import json
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from flask import Flask, jsonify, request

import toolbench
from toolbench.core.transport import ServedApp


def tool_call_of(action: str, functions: dict[str, list[str]]) -> tuple[str, dict[str, Any]]:
    """``API.f(x)`` as (``f``, {param: x}); code tasks' actions as ``run_code`` / finishing calls."""
    if action in ("submit", "done"):
        return action, {}
    try:
        tree = ast.parse(action.strip())
    except SyntaxError:
        return "run_code", {"code": action}
    node = tree.body[0].value if len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr) else None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in functions):
        return "run_code", {"code": action}
    name = node.func.attr
    arguments = dict(zip(functions[name], (json_value(a) for a in node.args)))
    arguments.update({k.arg: json_value(k.value) for k in node.keywords})
    return name, arguments


def json_value(node: ast.expr) -> Any:
    """A Python argument as its tool-call JSON: ``Loc("X")`` is "X", ``Date(m, d, y)`` an object."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        values = [ast.literal_eval(a) for a in node.args]
        if node.func.id == "Loc":
            return values[0]
        if node.func.id == "Date":
            return dict(zip(("month", "day", "year"), values))
    return ast.literal_eval(node)


@functools.cache
def scripts() -> dict[tuple[str, str], tuple[str, list[str], dict[str, list[str]]]]:
    """(task prompt, mode) -> (task id, the oracle's actions, each tool's parameter names)."""
    found = {}
    for spec in toolbench.TASKS:
        env_class = spec.env_class()
        for mode in spec.modes:
            env = env_class(mode=mode)
            functions = {
                tool["function"]["name"]: list(tool["function"]["parameters"]["properties"])
                for tool in (env.tools() or [])
            }
            for task in env.tasks:
                found[(task.prompt, mode)] = (task.id, env.oracle_actions(task), functions)
            env.close()
    return found


@dataclass
class FakeModel:
    """The scripted model and what it was sent."""

    # play | fenced (program replies between ``` lines) | fail | empty | text | garbage (HTML, status 200) | refuse (400)
    behaviour: str = "play"
    good_replies_left: int | None = None  # then fail
    fail_rate: float = 0.0  # the chance that a reply answers wrongly
    seed: int = 0  # of the RNG that draws the wrong answers
    cost: float | None = None  # reported in each reply's usage
    delay: float = 0.0  # seconds before each reply
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    wrong: list[bool] = field(default_factory=list)  # per request: whether it was answered wrongly
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.scripts = scripts()
        self.rng = random.Random(self.seed)

    def reply(self, body: dict[str, Any]) -> tuple[dict[str, Any], int]:
        with self.lock:
            self.requests.append(body)
            wrong = self.fail_rate > 0 and self.rng.random() < self.fail_rate
            self.wrong.append(wrong)
            if self.good_replies_left is not None:
                if self.good_replies_left <= 0:
                    return {"error": {"message": "the model is down", "type": "server_error"}}, 500
                self.good_replies_left -= 1
        if self.delay:
            time.sleep(self.delay)
        if self.behaviour == "fail":
            return {"error": {"message": "the model is down", "type": "server_error"}}, 500
        if self.behaviour == "refuse":
            return {"error": {"message": "context too long", "type": "invalid_request_error"}}, 400
        message: dict[str, Any] = {"role": "assistant", "content": ""}
        if self.behaviour != "empty":
            message = self._play(body, wrong)
        usage: dict[str, Any] = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
        if self.cost is not None:
            usage["cost"] = self.cost
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": usage,
        }, 200

    def _play(self, body: dict[str, Any], wrong: bool = False) -> dict[str, Any]:
        prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
        tools = body.get("tools")
        mode = "interactive" if tools or "Action 1:" in prompt or "Work step by step" in prompt else "program"
        task_prompt = prompt.rsplit("Task: ", 1)[1]
        match = [key for key in self.scripts if key[1] == mode and task_prompt.startswith(key[0])]
        if not match:
            return {"role": "assistant", "content": "I do not know this task."}
        _, actions, functions = self.scripts[max(match, key=lambda key: len(key[0]))]
        step = sum(1 for m in body["messages"] if m["role"] == "assistant")
        action = actions[min(step, len(actions) - 1)]
        if wrong and mode == "program":  # a program without its first line (it still runs), or one that does nothing
            lines = action.strip().splitlines()
            action = "\n".join(lines[1:]) if len(lines) > 1 else "API.no_answer()"
        elif wrong:  # the finishing call before its time
            action = actions[-1]
        if mode == "interactive" and self.behaviour == "batch":  # every call left, amid prose, in one reply
            return {"role": "assistant", "content": "All at once:\n" + "\n".join(actions[step:]) + "\nDone.<|im_end|>"}
        if mode == "program" and self.behaviour == "fenced":
            return {"role": "assistant", "content": f"```\n{action}\n```"}
        if mode == "program" or not tools or self.behaviour == "text":
            return {"role": "assistant", "content": action}
        name, arguments = tool_call_of(action, functions)
        call = {
            "id": f"call_{step}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}


def serve_fake_model(model: FakeModel, port: int = 0) -> ServedApp:
    app = Flask("fake-llm")

    @app.post("/v1/chat/completions")
    def complete() -> Any:
        model.headers.append(dict(request.headers))
        if model.behaviour == "garbage":
            model.requests.append(request.get_json())
            return "<html><body>502 from a proxy</body></html>", 200, {"Content-Type": "text/html"}
        body, status = model.reply(request.get_json())
        return jsonify(body), status

    return ServedApp(app, port=port).start()


def scripted_endpoint(reply: Any) -> Flask:
    """An OpenAI-compatible chat endpoint whose assistant message is ``reply(request body)``;
    ``app.config["calls"]`` counts the requests and ``app.config["requests"]`` keeps their bodies."""
    app = Flask(__name__)
    app.config["calls"] = 0
    app.config["requests"] = []

    @app.post("/v1/chat/completions")
    def complete() -> Any:
        body = request.get_json()
        app.config["calls"] += 1
        app.config["requests"].append(body)
        message = reply(body)
        return jsonify({"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})  # fmt: skip

    return app


def tool_call_message(
    name: str, arguments: dict[str, Any], call_id: str = "c1", content: str | None = None
) -> dict[str, Any]:
    """An assistant message holding one native tool call."""
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    return {"role": "assistant", "content": content, "tool_calls": [call]}


def play_episode(env: Any, agent: Any, task_id: str, trial: int = 0, limits: Any = None) -> dict[str, Any]:
    """One episode played as the harness plays it (``agent.trial`` and ``agent.limits`` set before
    ``begin``), without the harness: what was played and how it ended, as JSON. An agent's error
    ends it, its message and kind kept; ``RunStopped`` is raised."""
    from toolbench.agents.base import EpisodeLimits
    from toolbench.agents.client import AgentError, RunStopped

    agent.trial, agent.limits = trial, limits or EpisodeLimits()
    observation, info = env.reset(options={"task_id": task_id})
    agent.begin(env, env.task, observation, info)
    actions, observations, error, kind = [], [], None, None
    while True:
        try:
            action = agent.act(observation, info)
        except RunStopped:
            raise
        except AgentError as exc:
            error, kind = str(exc), exc.kind
            break
        observation, _, terminated, truncated, info = env.step(action)
        actions.append(action)
        observations.append(observation)
        if terminated or truncated:
            break
    return json.loads(
        json.dumps(
            {
                "task_id": task_id,
                "trial": trial,
                "success": bool(info.get("success")) and error is None,
                "error": error,
                "kind": kind,
                "actions": actions,
                "observations": observations,
                "agent_log": agent.episode_log(),
            },
            default=str,
        )
    )
