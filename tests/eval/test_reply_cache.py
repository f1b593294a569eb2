"""The model-reply cache (toolbench/agents/reply_cache.py): a recorded run replays without the endpoint
and equals it but for wall time; a request that differs in anything that decides the reply misses
without a call; identical requests in an episode get their recorded replies in order; refresh asks
again; an unusable file is a miss in replay and asked again in record; the files are readable JSON."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import gymnasium as gym
import openai
import pytest
from flask import jsonify, request

from tests.eval.fake_llm import FakeModel, play_episode, scripted_endpoint, serve_fake_model
from tests.eval.test_toolllm_agents import explorer, files_task, model_app, play
from toolbench.agents import make_agent
from toolbench.agents.client import ChatClient
from toolbench.agents.llm import ModelSettings
from toolbench.agents.reply_cache import CacheMiss, ReplyCache
from toolbench.agents.toolllm import ToolLLMAgent
from toolbench.core.transport import ServedApp
from toolbench.envs.rapidapi import RapidAPIEnv
from toolbench.eval.harness import run_episode

SETTINGS = ModelSettings(max_retries=0)
MESSAGES = [{"role": "user", "content": "Wie spät ist es? ☃"}]


def refuse_network(monkeypatch) -> list[dict]:
    """Makes every call of the SDK's chat completions fail the test; returns what was attempted."""
    attempted: list[dict] = []

    def create(self, *args, **kwargs):
        attempted.append(kwargs)
        raise AssertionError("a replaying client called the endpoint")

    monkeypatch.setattr(openai.resources.chat.completions.Completions, "create", create)
    return attempted


def closed_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed at once: nothing listens there
    return f"http://127.0.0.1:{port}/v1"


def counting_endpoint():
    """An endpoint whose n-th reply is "reply n", whatever it is asked."""
    app = scripted_endpoint(lambda body: {"role": "assistant", "content": f"reply {app.config['calls']}"})
    return app


def client(url: str, cache: ReplyCache, model: str = "tiny", key: str = "sk-secret") -> ChatClient:
    return ChatClient(model, base_url=url, api_key=key, max_retries=0, cache=cache)


def play_tasks(agent, env_id: str, mode: str, count: int) -> list:
    env = gym.make(env_id, mode=mode).unwrapped
    results = [run_episode(env, agent, task.id) for task in env.tasks[:count]]
    env.close()
    return results


def without_wall_time(result) -> str:
    data = result.to_json()
    data.pop("seconds")
    return json.dumps(data, sort_keys=True, ensure_ascii=False)


def cache_files(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.json"))


@pytest.mark.parametrize(
    "env_id, mode, count, fail_rate",
    [("toolbench/HomeSearch-v0", "interactive", 3, 0.1), ("toolbench/CatAPI-v0", "program", 5, 0.3)],
)
def test_a_replayed_run_equals_the_recorded_one_with_the_endpoint_gone(
    tmp_path, monkeypatch, env_id, mode, count, fail_rate
):
    fake = FakeModel(fail_rate=fail_rate, seed=4)  # some wrong answers too: a replay gives those back as well
    served = serve_fake_model(fake)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{served.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    folder = tmp_path / "replies"
    try:
        recorder = make_agent("openai:tiny", settings=SETTINGS, cache=ReplyCache(folder, "record"))
        recorded = play_tasks(recorder, env_id, mode, count)
    finally:
        served.stop()  # the replays below have no endpoint: its port is closed
    assert any(fake.wrong) and not all(fake.wrong)
    assert {r.success for r in recorded} == {True, False}
    if mode == "interactive":
        assert all(r.agent_log["tools"] for r in recorded)  # native tool calls were recorded and replayed
    assert len(cache_files(folder)) == len(fake.requests)  # one file per request
    attempted = refuse_network(monkeypatch)
    replays = [
        play_tasks(
            make_agent("openai:tiny", settings=SETTINGS, cache=ReplyCache(folder, "replay")), env_id, mode, count
        )
        for _ in range(2)
    ]
    assert attempted == []
    for replayed in replays:
        assert [without_wall_time(r) for r in replayed] == [without_wall_time(r) for r in recorded]
        assert [r.agent_log for r in replayed] == [r.agent_log for r in recorded]

    # Another trial was never recorded: the agent's act raises a cache miss, and nothing is sent.
    env = gym.make(env_id, mode=mode).unwrapped
    agent = make_agent("openai:tiny", settings=SETTINGS, cache=ReplyCache(folder, "replay"))
    agent.trial = 1
    observation, info = env.reset(options={"task_id": env.tasks[0].id})
    agent.begin(env, env.task, observation, info)
    with pytest.raises(CacheMiss) as miss:
        agent.act(observation, info)
    assert miss.value.kind == "cache_miss" and "trial 1" in str(miss.value) and attempted == []
    assert "replay: no recorded reply for model 'tiny'" in str(miss.value)
    assert agent.client.failures_in_a_row == 0  # a miss is not the endpoint failing: the breaker does not count it


def test_replay_gives_the_recorded_completions_in_order_and_any_change_misses(tmp_path, monkeypatch):
    folder = tmp_path / "replies"
    app = counting_endpoint()
    with ServedApp(app) as served:
        url = f"{served.url}/v1"
        recorder = client(url, ReplyCache(folder, "record"))
        recorder.start_episode(0)
        first = recorder.complete(MESSAGES, temperature=0.0, max_tokens=5)
        again = recorder.complete(MESSAGES, temperature=0.0, max_tokens=5)  # the very same request
        assert (first.content, again.content, app.config["calls"]) == ("reply 1", "reply 2", 2)
        recorder.start_episode(0)  # a new episode: the same two requests are the same two replies
        assert recorder.complete(MESSAGES, temperature=0.0, max_tokens=5) == first
        assert recorder.complete(MESSAGES, temperature=0.0, max_tokens=5) == again
        assert app.config["calls"] == 2
    attempted = refuse_network(monkeypatch)
    replay = ReplyCache(folder, "replay")
    replayer = client(f"{url}/", replay, key="another-key")  # the key is not part of the cache key
    replayer.start_episode(0)
    assert replayer.complete(MESSAGES, temperature=0.0, max_tokens=5) == first  # latency and raw body too
    assert replayer.complete(MESSAGES, temperature=0.0, max_tokens=5) == again
    with pytest.raises(CacheMiss, match="occurrence 2"):  # asked a third time: never recorded
        replayer.complete(MESSAGES, temperature=0.0, max_tokens=5)

    changes = [
        ("tiny", url, 0, {"temperature": 0.5, "max_tokens": 5}),
        ("tiny", url, 0, {"temperature": 0.0, "max_tokens": 6}),
        ("tiny", url, 0, {"temperature": 0.0, "max_tokens": 5, "stop": ["END"]}),
        ("tiny-2", url, 0, {"temperature": 0.0, "max_tokens": 5}),
        ("tiny", closed_url(), 0, {"temperature": 0.0, "max_tokens": 5}),
        ("tiny", url, 1, {"temperature": 0.0, "max_tokens": 5}),
    ]
    for model, endpoint, trial, options in changes:
        other = client(endpoint, replay, model=model)
        other.start_episode(trial)
        with pytest.raises(CacheMiss) as miss:
            other.complete(MESSAGES, **options)
        message = str(miss.value)
        assert miss.value.kind == "cache_miss" and f"model {model!r}" in message and "Wie spät ist es? ☃" in message
        assert other.failures_in_a_row == 0
    assert attempted == []


def test_refresh_asks_again_and_overwrites(tmp_path):
    folder = tmp_path / "replies"
    app = counting_endpoint()
    with ServedApp(app) as served:
        url = f"{served.url}/v1"
        for mode, expected in (("record", "reply 1"), ("record", "reply 1"), ("refresh", "reply 2")):
            chat = client(url, ReplyCache(folder, mode))
            assert chat.complete(MESSAGES).content == expected
    assert app.config["calls"] == 2
    (path,) = cache_files(folder)
    assert json.loads(path.read_text(encoding="utf-8"))["response"]["choices"][0]["message"]["content"] == "reply 2"
    assert client(url, ReplyCache(folder, "replay")).complete(MESSAGES).content == "reply 2"


@pytest.mark.parametrize(
    "damage, reason",
    [
        ("{not json", "unusable (JSONDecodeError"),
        (json.dumps({"format": 99}), "unusable (format 99, not 1)"),
        (json.dumps({"format": 1, "key": "0" * 64}), "unusable (it holds key"),
        ("[1, 2]", "unusable (format 'list', not 1)"),
    ],
)
def test_an_unusable_file_is_a_named_miss_in_replay_and_asked_again_in_record(tmp_path, monkeypatch, damage, reason):
    folder = tmp_path / "replies"
    app = counting_endpoint()
    with ServedApp(app) as served:
        url = f"{served.url}/v1"
        client(url, ReplyCache(folder, "record")).complete(MESSAGES)
        (path,) = cache_files(folder)
        path.write_text(damage, encoding="utf-8")
        with monkeypatch.context() as patched:
            attempted = refuse_network(patched)
            with pytest.raises(CacheMiss) as miss:
                client(url, ReplyCache(folder, "replay")).complete(MESSAGES)
            assert str(path) in str(miss.value) and reason in str(miss.value) and attempted == []
        assert client(url, ReplyCache(folder, "record")).complete(MESSAGES).content == "reply 2"
    assert app.config["calls"] == 2 and cache_files(folder) == [path]
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == 1


def test_files_are_readable_json_in_their_place_and_hold_no_api_key(tmp_path):
    folder = tmp_path / "replies"
    with ServedApp(counting_endpoint()) as served:
        url = f"{served.url}/v1"
        chat = client(f"{url}/", ReplyCache(folder, "record"), model="org/tiny:v2")
        chat.start_episode(3)
        completion = chat.complete(MESSAGES, temperature=0.25, max_tokens=9, stop=["END"])
    (path,) = cache_files(folder)
    text = path.read_text(encoding="utf-8")
    entry = json.loads(text)
    key = entry["key"]
    assert path.relative_to(folder).parts == ("v1", "org_tiny_v2", key[:2], f"{key}.json")
    assert list(entry)[:9] == [
        "format", "key", "endpoint", "model", "trial", "occurrence", "request", "response", "latency_s"
    ]  # fmt: skip
    assert entry["format"] == 1 and entry["endpoint"] == url and entry["model"] == "org/tiny:v2"
    assert (entry["trial"], entry["occurrence"]) == (3, 0)
    assert entry["request"] == {
        "model": "org/tiny:v2", "messages": MESSAGES, "max_tokens": 9, "temperature": 0.25, "stop": ["END"]
    }  # fmt: skip
    assert entry["response"] == completion.raw and entry["latency_s"] == completion.latency_s
    assert "☃" in text and '\n "format": 1' in text  # UTF-8 kept, indented to diff
    assert "sk-secret" not in text and "sk-secret" not in path.as_posix()
    assert not list(path.parent.glob("*.tmp"))


def test_a_model_that_wants_max_completion_tokens_replays_with_a_fresh_client(tmp_path, monkeypatch):
    sent = []

    def reply(body):
        return {"role": "assistant", "content": f"reply {len(sent)}"}

    app = scripted_endpoint(reply)

    @app.before_request
    def picky():
        body = request.get_json()
        sent.append(sorted(k for k in body if "tokens" in k))
        if "max_tokens" in body:
            message = "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens' instead."
            return jsonify({"error": {"message": message, "type": "invalid_request_error"}}), 400
        return None

    folder = tmp_path / "replies"
    with ServedApp(app) as served:
        url = f"{served.url}/v1"
        recorder = client(url, ReplyCache(folder, "record"))
        one = recorder.complete(MESSAGES, max_tokens=5)
        two = recorder.complete([{"role": "user", "content": "and now?"}], max_tokens=5)
    assert sent == [["max_tokens"], ["max_completion_tokens"], ["max_completion_tokens"]]
    entries = [json.loads(p.read_text(encoding="utf-8")) for p in cache_files(folder)]
    assert all(
        e["request"]["max_tokens"] == 5 and e["sent_length_parameter"] == "max_completion_tokens" for e in entries
    )
    refuse_network(monkeypatch)
    replayer = client(url, ReplyCache(folder, "replay"))  # has not learnt the newer name, and needs not
    assert replayer.complete(MESSAGES, max_tokens=5) == one
    assert replayer.complete([{"role": "user", "content": "and now?"}], max_tokens=5) == two


def test_dfsdt_search_replays_without_the_endpoint(tmp_path, monkeypatch):
    task = files_task()
    folder = tmp_path / "replies"
    app = model_app(explorer)
    with ServedApp(app) as served:
        url = f"{served.url}/v1"
        recorder = ToolLLMAgent("scripted", "dfsdt", client=client(url, ReplyCache(folder, "record"), "scripted"))
        recorded = play(recorder, RapidAPIEnv(tasks=[task]), task)
    assert recorded[0] == 1.0 and len(cache_files(folder)) == app.config["calls"] >= 4
    attempted = refuse_network(monkeypatch)
    replayer = ToolLLMAgent("scripted", "dfsdt", client=client(url, ReplyCache(folder, "replay"), "scripted"))
    assert play(replayer, RapidAPIEnv(tasks=[task]), task)[0] == 1.0
    assert replayer.episode_log() == recorder.episode_log() and attempted == []
    replayer.trial = 2  # never recorded: the search stops at its first call, the episode at the first act
    env = RapidAPIEnv(tasks=[task])
    observation, info = env.reset(options={"task_id": task.id})
    replayer.begin(env, task, observation, info)
    with pytest.raises(CacheMiss):
        replayer.act(observation, info)
    assert replayer.episode_log()["stopped"]["kind"] == "cache_miss" and attempted == []


def test_trials_of_a_noisy_model_differ_repeat_with_the_seed_and_replay(tmp_path, monkeypatch):
    env = gym.make("toolbench/CatAPI-v0").unwrapped

    def run(folder: Path, mode: str) -> list[tuple[str, int, bool]]:
        agent = make_agent("openai:tiny", settings=SETTINGS, cache=ReplyCache(folder, mode))
        episodes = [play_episode(env, agent, task.id, trial) for trial in range(3) for task in env.tasks[:6]]
        return [(e["task_id"], e["trial"], e["success"]) for e in episodes]

    outcomes, wrong = [], []
    for name in ("a", "b"):
        fake = FakeModel(fail_rate=0.4, seed=11)
        served = serve_fake_model(fake)
        monkeypatch.setenv("OPENAI_BASE_URL", f"{served.url}/v1")
        try:
            outcomes.append(run(tmp_path / name, "record"))
        finally:
            served.stop()
        wrong.append(fake.wrong)
    assert outcomes[0] == outcomes[1] and wrong[0] == wrong[1]  # the same seed and order: the same answers
    by_trial = [[ok for _, trial, ok in outcomes[0] if trial == k] for k in range(3)]
    assert len({tuple(t) for t in by_trial}) > 1  # the trials of the same tasks differ
    assert 0 < sum(ok for _, _, ok in outcomes[0]) < len(outcomes[0])
    attempted = refuse_network(monkeypatch)
    # the last recording's endpoint is OPENAI_BASE_URL still (the first one's was another port)
    assert run(tmp_path / "b", "replay") == outcomes[1] and attempted == []


def test_make_agent_gives_the_cache_to_every_model_agent(tmp_path):
    cache = ReplyCache(tmp_path, "record")
    for spec in ("openai:m", "react:m", "react@2:m", "dfsdt:m"):
        agent = make_agent(spec, cache=cache)
        assert agent.client.cache is cache and agent.trial == 0
    assert make_agent("openai:m").client.cache is None
    with pytest.raises(ValueError, match="record, replay, refresh"):
        ReplyCache(tmp_path, "replays")
    with pytest.raises(ValueError, match="nothing to replay"):
        ReplyCache(tmp_path / "absent", "replay")
