"""The verifiers adapter under verifiers' own eval loop: ``vf-eval``'s ``main`` runs the taskset
with the ``null`` harness in the ``subprocess`` runtime, no push, against an OpenAI-compatible
endpoint on localhost (no hosted account, nothing downloaded) whose replies are scripted, or
written by the tiny random model of ``toolbench.integrations.tiny_model``.

The harness's chat program is a uv script whose dependencies (openai, mcp, httpx) verifiers would
install with uv on first use; here they are this venv's, so the runtime's interpreter cache is
seeded with this interpreter instead of running ``uv sync``.
"""

from __future__ import annotations

import ast
import hashlib
import json
import sys
import threading

import pytest

vf = pytest.importorskip(
    "verifiers.v1", reason="the 'verifiers' extra is not installed (pip install -e '.[verifiers]')"
)

import gymnasium as gym  # noqa: E402

import toolbench  # noqa: E402
from tests.episodes import play  # noqa: E402
from toolbench.agents.turns import reply_actions  # noqa: E402
from toolbench.integrations.session import Session, task_rows  # noqa: E402

ALL = [spec.name for spec in toolbench.TASKS]
# Envs whose episodes the scripted model plays with native tool calls; the rest reply in text.
NATIVE = {"OpenWeather", "CatAPI", "HomeSearch", "TripBooking", "VirtualHome", "RapidAPI"}
MODEL_TURNS = 1  # the turn cap of the episodes the tiny model plays
PROSE = "Let me take the next step.\n```\n{}\n```\nI will read the result before going on."


def _native_call(session: Session, action: str) -> dict | None:
    """``action`` as a native tool call on the session's tools, if it reads as one."""
    tools = {t["function"]["name"]: t["function"] for t in session.tools}
    params = lambda name: list(tools[name]["parameters"].get("properties", {}))  # noqa: E731
    if session.mode == "program" or list(tools) == ["take_action"]:
        (name,) = tools
        return {"name": name, "arguments": {params(name)[0]: action}}
    if action.lstrip().startswith("{"):
        return json.loads(action)
    try:
        call = ast.parse(action.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call):
        return None
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
    if name not in tools:
        return None
    try:
        arguments = dict(zip(params(name), (ast.literal_eval(a) for a in call.args), strict=False))
        arguments.update({k.arg: ast.literal_eval(k.value) for k in call.keywords})
    except ValueError:  # an argument that is an expression, not a value: the text form plays it
        return None
    return {"name": name, "arguments": arguments}


def _script(row: dict, native: bool) -> tuple[str, list[dict]]:
    """The prompt the model will see for ``row`` and the oracle's actions as assistant messages."""
    session = Session(row["task"], row["task_id"], row["split"], row["mode"])
    messages = session.open()
    prompt = "\n\n".join(m["content"] for m in messages if m["role"] != "system")
    actions = session.env.oracle_actions(session.env.task)
    calls = [_native_call(session, a) for a in actions] if native else []
    if native and all(calls):
        replies = [{"tool_calls": [c]} for c in calls]
    else:
        # The first action in a fence amid prose, the rest in one reply of action lines where
        # the reply rule reads them back as they are, else one reply each.
        rest = "Next:\n" + "\n".join(actions[1:]) + "\nThat should finish it."
        together = len(actions) > 2 and [a.strip() for a in _actions(session, rest)] == [a.strip() for a in actions[1:]]
        texts = [PROSE.format(actions[0])] + ([rest] if together else [PROSE.format(a) for a in actions[1:]])
        replies = [{"content": text} for text in texts]
    session.close()
    return prompt, replies


def _actions(session: Session, text: str) -> list[str]:
    try:
        return reply_actions(session.env, text)
    except ValueError:
        return []


def _text(content: str | list[dict] | None) -> str:
    """A message's content as text (the OpenAI API also sends a list of parts)."""
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content or [])


class ScriptedModel:
    """An OpenAI-compatible chat endpoint on localhost that answers each episode (known by its
    prompt) with its scripted assistant messages in turn, then with a closing remark."""

    def __init__(self, scripts: dict[str, list[dict]], default: list[dict] | None = None) -> None:
        import asyncio

        from aiohttp import web

        self.scripts, self.default, self.requests = scripts, default, 0
        self.loop = asyncio.new_event_loop()
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._complete)
        self.runner = web.AppRunner(app)
        self.loop.run_until_complete(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}/v1"
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        import asyncio

        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()

    def _reply(self, messages: list[dict], tools: list[dict]) -> dict:
        """The next assistant message: ``content`` and/or ``tool_calls`` as ``{"name", "arguments"}``."""
        prompt = next(_text(m["content"]) for m in messages if m["role"] == "user")
        script = self.scripts.get(prompt, self.default)
        assert script is not None, f"no script for the prompt {prompt[:200]!r}"
        turn = sum(m["role"] == "assistant" for m in messages)
        return dict(script[min(turn, len(script) - 1)] if self.default is script else
                    (script[turn] if turn < len(script) else {"content": "Done."}))  # fmt: skip

    def _message(self, messages: list[dict], tools: list[dict]) -> dict:
        message = self._reply(messages, tools)
        turn = sum(m["role"] == "assistant" for m in messages)
        if "tool_calls" in message:
            message["tool_calls"] = [
                {"id": f"call_{turn}_{n}", "type": "function",
                 "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
                for n, c in enumerate(message["tool_calls"])
            ]  # fmt: skip
        return {"role": "assistant", "content": message.get("content"), **message}

    async def _complete(self, request):
        from aiohttp import web

        self.requests += 1
        body = await request.json()
        message = self._message(body["messages"], body.get("tools") or [])
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
        head = {"id": f"chatcmpl-{self.requests}", "created": 0, "model": body.get("model", "scripted")}
        if not body.get("stream"):
            choice = {"index": 0, "message": message, "finish_reason": finish}
            return web.json_response({**head, "object": "chat.completion", "choices": [choice], "usage": usage})
        delta = dict(message)
        if delta.get("tool_calls"):
            delta["tool_calls"] = [{"index": n, **c} for n, c in enumerate(delta["tool_calls"])]
        chunks = [
            {
                **head,
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
            },
            {
                **head,
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
            },
            {**head, "object": "chat.completion.chunk", "choices": [], "usage": usage},
        ]
        text = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        return web.Response(text=text, content_type="text/event-stream")


class TinyModel(ScriptedModel):
    """The same endpoint, its replies written by the tiny random model: the request's messages and
    tools rendered by the tokenizer's chat template (Qwen2.5's), a few sampled tokens, seeded by
    that text so a reply does not depend on the order rollouts ask in; a ``<tool_call>`` block that
    parses as a call is returned as a native tool call, everything else as the reply's text."""

    def __init__(self, max_new_tokens: int = 16) -> None:
        from toolbench.integrations.tiny_model import tiny_model_and_tokenizer

        self.model, self.tokenizer = tiny_model_and_tokenizer()
        self.max_new_tokens = max_new_tokens
        self.written: list[str] = []  # every reply as the model wrote it
        super().__init__({})

    def _reply(self, messages: list[dict], tools: list[dict]) -> dict:
        import re
        import zlib

        import torch

        chat = [{**m, "content": _text(m.get("content"))} for m in messages]
        text = self.tokenizer.apply_chat_template(chat, tools=tools or None, add_generation_prompt=True, tokenize=False)
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        torch.manual_seed(zlib.crc32(text.encode()))
        with torch.no_grad():
            out = self.model.generate(
                torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                max_new_tokens=self.max_new_tokens, do_sample=True, top_k=0,
            )  # fmt: skip
        reply = self.tokenizer.decode(out[0, len(ids) :], skip_special_tokens=True)
        self.written.append(reply)
        calls = []
        for block in re.findall(r"<tool_call>(.*?)</tool_call>", reply, re.S):
            try:
                call = json.loads(block)
            except ValueError:
                continue
            if isinstance(call, dict) and isinstance(call.get("name"), str) and isinstance(call.get("arguments"), dict):
                calls.append({"name": call["name"], "arguments": call["arguments"]})
        return {"content": reply, "tool_calls": calls} if calls else {"content": reply}


@pytest.fixture
def local_runtime(tmp_path, monkeypatch):
    """The subprocess runtime in tmp_path, its chat program run by this interpreter."""
    from verifiers.v1.harnesses.utils.launch import CHAT_PROGRAM_SOURCE
    from verifiers.v1.runtimes import subprocess as subprocess_runtime

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(subprocess_runtime, "CACHE_DIR", tmp_path / "cache")
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    monkeypatch.setattr(subprocess_runtime.SubprocessRuntime, "scripts_dir", str(scripts))
    path = scripts / f"{hashlib.sha256(CHAT_PROGRAM_SOURCE.encode()).hexdigest()}.py"
    path.write_text(CHAT_PROGRAM_SOURCE)
    monkeypatch.setitem(subprocess_runtime.SubprocessRuntime._interpreters, str(path), sys.executable)
    return tmp_path


def _vf_eval(tmp_path, model: ScriptedModel, taskset: list[str]) -> list[dict]:
    """``vf-eval`` as a user runs it locally; the traces it wrote."""
    from verifiers.v1.cli.eval.main import main

    run = f"run{len(list(tmp_path.glob('outputs/*')))}"
    main(["toolbench-verifiers", *taskset, "--model", "scripted", "--client.base-url", model.url,
          "--client.api-key-var", "TOOLBENCH_LOCAL_KEY", "--no-push", "--no-rich",
          "--output-dir", str(tmp_path / "outputs"), "--run.name", run])  # fmt: skip
    lines = (tmp_path / "outputs" / run / "traces.jsonl").read_text().splitlines()
    return [trace for line in lines for trace in json.loads(line)["traces"]]


def _replayed(info: dict) -> float:
    """The reward the env itself pays the actions the session played, then empty steps (what a cap
    plays: each counts a step and changes nothing) until the episode ends."""
    env = gym.make(info["env_id"], mode=info["mode"], split=info["split"]).unwrapped
    _, reward, terminated, truncated, _ = play(env, info["task_id"], info["actions"] or [""])
    while not (terminated or truncated):
        _, reward, terminated, truncated, _ = env.step("")
    return float(reward)


def test_every_env_under_vf_eval_earns_the_envs_reward(local_runtime, capsys):
    rows = task_rows(ALL, "train", size=len(ALL), seed=1)
    assert sorted(row["task"] for row in rows) == sorted(ALL)
    scripts = dict(_script(row, row["task"] in NATIVE) for row in rows)
    model = ScriptedModel(scripts)
    try:
        traces = _vf_eval(local_runtime, model, ["--env.taskset.tasks", json.dumps(ALL),
                                                 "--env.taskset.size", str(len(ALL)), "--env.taskset.seed", "1"])  # fmt: skip
    finally:
        model.close()
    assert sorted(t["info"]["toolbench"]["task"] for t in traces) == sorted(ALL)
    for trace in traces:
        info = trace["info"]["toolbench"]
        assert trace["rewards"]["toolbench_score"]["score"] == 1.0 == _replayed(info), (
            info["task"],
            trace.get("errors"),
        )
        assert trace["metrics"]["toolbench_success"] == 1.0
        offered = {t["name"] for t in trace["tools"] or []}
        if info["task"] in NATIVE:  # the env's tools were the model's tools
            session = Session(info["task"], info["task_id"], info["split"], info["mode"])
            session.open()
            assert offered == {t["function"]["name"] for t in session.tools}
            assert "bash" not in offered


def test_a_mixed_taskset_plays_each_row_in_its_own_env(local_runtime):
    mix = {"HomeSearch": 2, "WebShop": 1, "VirtualHome": 1}
    rows = task_rows(mix, "train", size=4, seed=5)
    scripts = dict(_script(row, row["task"] != "WebShop") for row in rows)
    model = ScriptedModel(scripts)
    try:
        traces = _vf_eval(local_runtime, model, ["--env.taskset.tasks", json.dumps(mix), "--env.taskset.size", "4",
                                                 "--env.taskset.seed", "5"])  # fmt: skip
    finally:
        model.close()
    played = sorted((t["info"]["toolbench"]["task"], t["info"]["toolbench"]["task_id"]) for t in traces)
    assert played == sorted((row["task"], row["task_id"]) for row in rows)
    assert all(t["rewards"]["toolbench_score"]["score"] == 1.0 == _replayed(t["info"]["toolbench"]) for t in traces)


def test_a_model_that_only_calls_unknown_tools_is_stopped_by_the_turn_cap(local_runtime):
    model = ScriptedModel({}, default=[{"tool_calls": [{"name": "no_such_tool", "arguments": {"x": 1}}]}])
    try:
        (trace,) = _vf_eval(local_runtime, model, ["--env.taskset.tasks", "WebShop", "--env.taskset.size", "1",
                                                   "--env.taskset.max-turns", "5"])  # fmt: skip
    finally:
        model.close()
    info = trace["info"]["toolbench"]
    assert info["turns"] == 5 and model.requests <= 6
    assert trace["rewards"]["toolbench_score"]["score"] == 0.0 == _replayed(info)
    assert trace["stop_condition"] == "episode_over"
    results = [n["message"]["content"] for n in trace["nodes"] if n["message"]["role"] == "tool"]
    assert len(results) == 4 and all("no_such_tool" in r for r in results)


def test_every_env_under_vf_eval_with_replies_the_tiny_model_writes_earns_the_envs_replay(local_runtime):
    """vf-eval's loop with a model in it: a random model's text is rarely an action an env takes, so
    most rewards are 0; each is the env's own replay of what the session played.

    One model turn an episode: the null harness runs each turn that ends in text as a new chat
    program process (Python importing openai and mcp, ~2 s of CPU), so a second turn over 10 envs
    doubles the test's cost; episodes of several turns are the scripted tests' above."""
    pytest.importorskip("torch", reason="the tiny model needs torch (the 'trl' extra)")
    pytest.importorskip("transformers", reason="the tiny model needs transformers")
    model = TinyModel()
    try:
        traces = _vf_eval(local_runtime, model, ["--env.taskset.tasks", json.dumps(ALL), "--env.taskset.size",
                                                 str(len(ALL)), "--env.taskset.seed", "3",
                                                 "--env.taskset.max-turns", str(MODEL_TURNS)])  # fmt: skip
    finally:
        model.close()
    assert sorted(t["info"]["toolbench"]["task"] for t in traces) == sorted(ALL)
    for trace in traces:
        info = trace["info"]["toolbench"]
        assert trace["rewards"]["toolbench_score"]["score"] == _replayed(info), (info["task"], trace.get("errors"))
        replies = [n["message"] for n in trace["nodes"] if n["message"]["role"] == "assistant"]
        # every model turn was a session turn, and every reply is text the model wrote
        assert len(replies) == info["turns"] == MODEL_TURNS, info["task"]
        assert all(reply["content"] in model.written for reply in replies)
    assert model.requests == len(model.written) == sum(t["info"]["toolbench"]["turns"] for t in traces)
    assert any(t["info"]["toolbench"]["actions"] for t in traces)  # some model text reached an env as an action
