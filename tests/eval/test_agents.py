import json

import gymnasium as gym
import pytest
import responses

import toolbench
from toolbench.agents import AgentError, OpenAIChatAgent, make_agent
from toolbench.envs.openweather import API_DOCS
from toolbench.eval.harness import evaluate, run_episode
from toolbench.eval.prompts import PromptBuilder, split_api_docs

CASES = [(spec.name, mode) for spec in toolbench.TASKS for mode in spec.env_class().modes]


@pytest.mark.parametrize("task, mode", CASES)
def test_oracle_and_random_baselines(task, mode):
    limit = 30 if task == "Tabletop" else None  # the whole Tabletop split is played in tests/tabletop
    oracle, _ = evaluate("oracle", [task], mode=mode, limit=limit, progress=False)
    chance, _ = evaluate("random", [task], mode=mode, limit=limit, progress=False)
    assert oracle["tasks"][task]["success_rate"] == 1.0
    assert oracle["tasks"][task]["n"] == (limit or len(toolbench.load_tasks(task)))
    assert chance["tasks"][task]["success_rate"] <= 0.1
    assert chance["tasks"][task]["score"] < 0.5


def test_random_agent_is_seeded():
    a, _ = evaluate("random", ["OpenWeather"], limit=20, seed=1, progress=False)
    b, _ = evaluate("random", ["OpenWeather"], limit=20, seed=1, progress=False)
    c, _ = evaluate("random", ["OpenWeather"], limit=20, seed=2, progress=False)
    assert a == b and a != c


def test_workers_give_the_same_report():
    single, episodes = evaluate("random", ["CatAPI"], limit=30, progress=False)
    multi, episodes_multi = evaluate("random", ["CatAPI"], limit=30, workers=2, progress=False)
    assert single == multi and episodes == episodes_multi


def test_unknown_agent():
    with pytest.raises(ValueError):
        make_agent("gpt")


def test_split_api_docs_one_block_per_function():
    blocks = split_api_docs(API_DOCS)
    assert len(blocks) == 9 and all(block.startswith("# ") and "curl" in block for block in blocks)


def test_prompt_retrieves_relevant_docs_and_demos():
    demos = toolbench.load_tasks("OpenWeather", "demo")
    builder = PromptBuilder(API_DOCS, demos, top_k_api=2, top_k_example=2)
    prompt = builder.build("How is the air pollution forecast at latitude 10, longitude 20?")
    assert "air_pollution/forecast" in prompt and "geo/1.0/direct" not in prompt
    assert prompt.count("Task: ") == 3 and prompt.rstrip().endswith("Action:")
    assert "air" in prompt.split("solved examples")[1].split("Task: ")[1].lower()


@responses.activate
def test_openai_agent_against_a_local_chat_endpoint():
    task = toolbench.load_tasks("OpenWeather")[0]
    seen = []

    def reply(request):
        body = json.loads(request.body)
        seen.append(body)
        assert request.headers["Authorization"] == "Bearer sk-test"
        content = f"Here is the call:\n```\n{task.references[0]}\n```"
        return 200, {}, json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]})

    responses.add_callback(responses.POST, "http://llm.local/v1/chat/completions", callback=reply)
    agent = OpenAIChatAgent("tiny-model", base_url="http://llm.local/v1", api_key="sk-test")
    env = gym.make("toolbench/OpenWeather-v0").unwrapped
    result = run_episode(env, agent, task.id)
    assert result.success and result.steps == 1
    (request,) = seen
    assert request["model"] == "tiny-model" and request["temperature"] == 0.0
    prompt = request["messages"][0]["content"]
    assert task.prompt in prompt and "api.openweathermap.org" in prompt and "solved examples" in prompt


@responses.activate
def test_openai_agent_failure_is_recorded_not_raised(monkeypatch):
    monkeypatch.setattr("toolbench.agents.llm.time.sleep", lambda seconds: None)
    responses.add(responses.POST, "http://llm.local/v1/chat/completions", status=500, body="boom")
    agent = OpenAIChatAgent("m", base_url="http://llm.local/v1", api_key="k")
    env = gym.make("toolbench/CatAPI-v0").unwrapped
    result = run_episode(env, agent, toolbench.load_tasks("CatAPI")[0].id)
    assert not result.success and result.steps == 0 and "HTTP 500" in result.error
    assert len(responses.calls) == 3  # retried
    with pytest.raises(AgentError):
        agent._complete([{"role": "user", "content": "x"}])
