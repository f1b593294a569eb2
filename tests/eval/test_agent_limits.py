"""An episode's limits (EpisodeLimits) in the model agents: each of max_turns, max_tokens, max_cost and
timeout_s ends the episode with LimitReached naming it; a call never waits longer than the episode
has left; a timed-out call is an error of kind timeout; without limits an episode plays as before."""

from __future__ import annotations

import time

import gymnasium as gym
import pytest

from tests.eval.fake_llm import play_episode
from tests.eval.test_toolllm_agents import explorer, files_task, model_app
from toolbench.agents.base import EpisodeLimits
from toolbench.agents.client import ChatClient, EpisodeMeter, LimitReached, RunStopped
from toolbench.agents.llm import ModelSettings, OpenAIChatAgent
from toolbench.agents.toolllm import ToolLLMAgent
from toolbench.core.transport import ServedApp
from toolbench.envs.rapidapi import RapidAPIEnv


def home_search(agent: OpenAIChatAgent, limits: EpisodeLimits | None = None) -> dict:
    """HomeSearch's fourth task, interactive with native tools: six calls, so six replies."""
    env = gym.make("toolbench/HomeSearch-v0", mode="interactive").unwrapped
    return play_episode(env, agent, env.tasks[3].id, limits=limits)


def agent(**settings) -> OpenAIChatAgent:
    return OpenAIChatAgent("tiny", settings=ModelSettings(max_retries=0, **settings))


def test_without_limits_the_episode_plays_as_before_and_the_log_shows_none(model):
    episode = home_search(agent())
    assert episode["success"] and episode["error"] is None and len(episode["actions"]) == 6
    log = episode["agent_log"]
    assert log["limits"] == {"max_turns": 40, "max_tokens": None, "timeout_s": None, "max_cost": None}
    assert log["usage"] == {"prompt_tokens": 600, "completion_tokens": 60, "total_tokens": 660}
    assert log["cost_reported"] is False


def test_max_turns_is_the_lower_of_the_setting_and_the_limit(model):
    model.behaviour = "empty"  # replies without an action: only the turn cap ends the episode
    episode = home_search(agent(), EpisodeLimits(max_turns=2))
    assert episode["kind"] == "limit" and len(model.requests) == 2 and episode["actions"] == []
    assert episode["error"].startswith("limit reached: max_turns 2 (model replies in the episode)")
    assert episode["agent_log"]["limits"]["max_turns"] == 2
    model.requests.clear()
    episode = home_search(agent(max_turns=3), EpisodeLimits(max_turns=5))
    assert episode["error"].startswith("limit reached: max_turns 3") and len(model.requests) == 3


def test_max_tokens_stops_before_the_reply_that_passes_it_is_played(model):
    episode = home_search(agent(), EpisodeLimits(max_tokens=250))  # 110 tokens a reply: the third passes
    assert episode["kind"] == "limit" and not episode["success"]
    assert episode["error"] == "limit reached: max_tokens 250 (tokens the model used in the episode: 330)"
    assert len(model.requests) == 3 and len(episode["actions"]) == 2  # the third reply was not played
    log = episode["agent_log"]
    assert log["usage"]["total_tokens"] == 330 and len(log["model_calls"]) == 3
    assert home_search(agent(), EpisodeLimits(max_tokens=660))["success"]  # the limit itself is allowed


def test_max_cost_counts_the_cost_the_endpoint_reports(model):
    model.cost = 0.01
    episode = home_search(agent(), EpisodeLimits(max_cost=0.025))
    assert episode["kind"] == "limit" and episode["error"].startswith("limit reached: max_cost 0.025")
    assert len(episode["actions"]) == 2
    log = episode["agent_log"]
    assert log["usage"]["cost"] == pytest.approx(0.03) and log["cost_reported"] is True
    assert log["model_calls"][0]["usage"]["cost"] == 0.01
    assert home_search(agent(), EpisodeLimits(max_cost=1.0))["success"]


def test_max_cost_without_a_reported_cost_does_not_fail_and_says_so(model):
    episode = home_search(agent(), EpisodeLimits(max_cost=0.0001))
    assert episode["success"] and episode["error"] is None
    log = episode["agent_log"]
    assert log["cost_reported"] is False and "cost" not in log["usage"] and log["limits"]["max_cost"] == 0.0001


def test_timeout_cuts_the_call_that_would_overrun_the_episode(model):
    model.delay = 1.0
    chat = agent()
    started = time.monotonic()
    episode = home_search(chat, EpisodeLimits(timeout_s=1.3))
    elapsed = time.monotonic() - started
    assert episode["kind"] == "limit" and episode["error"].startswith("limit reached: episode_timeout 1.3 s")
    assert len(episode["actions"]) == 1  # the first reply came in time; the second was cut at the time left
    assert elapsed < 1.9  # not 2 s and more: the second call did not get its full timeout
    assert chat.client.failures_in_a_row == 0  # the episode's clock cut it, not the endpoint failing


def test_a_timed_out_call_is_an_error_of_kind_timeout_and_counts_towards_the_breaker(model):
    model.delay = 0.6
    episode = home_search(agent(timeout=0.2))
    assert episode["kind"] == "timeout" and "APITimeoutError" in episode["error"]
    client = ChatClient("tiny", timeout=0.2, max_retries=0, breaker=2)
    env = gym.make("toolbench/OpenWeather-v0").unwrapped
    assert play_episode(env, OpenAIChatAgent("tiny", client=client), env.tasks[0].id)["kind"] == "timeout"
    assert client.failures_in_a_row == 1
    with pytest.raises(RunStopped):
        play_episode(env, OpenAIChatAgent("tiny", client=client), env.tasks[0].id)


def test_the_meter_checks_time_before_each_call_and_caps_the_call():
    now = [100.0]
    meter = EpisodeMeter(EpisodeLimits(timeout_s=10.0, max_turns=5), max_turns=40, clock=lambda: now[0])
    assert meter.max_turns == 5
    assert meter.before_call(120.0) == 10.0 and meter.cut  # the episode has less time than a call may take
    now[0] = 105.0
    assert meter.before_call(3.0) is None and not meter.cut  # a call's own timeout is shorter
    now[0] = 110.5
    with pytest.raises(LimitReached, match=r"limit reached: episode_timeout 10 s \(wall time of the episode; 10.5"):
        meter.before_call(120.0)
    assert meter.turns == 2
    assert EpisodeMeter().to_json() == {
        "limits": {"max_turns": None, "max_tokens": None, "timeout_s": None, "max_cost": None},
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        "cost_reported": False,
    }


def dfsdt(served_app: ServedApp) -> ToolLLMAgent:
    return ToolLLMAgent("scripted", "dfsdt", client=ChatClient("scripted", base_url=f"{served_app.url}/v1"))


@pytest.mark.parametrize(
    "limits, calls, reason",
    [
        (EpisodeLimits(max_turns=2), 2, "limit reached: max_turns 2"),
        (EpisodeLimits(max_tokens=3), 2, "limit reached: max_tokens 3"),  # 2 tokens a reply here
        (EpisodeLimits(timeout_s=1e-9), 0, "limit reached: episode_timeout"),
    ],
)
def test_a_search_is_held_to_the_limits_over_all_its_calls(limits, calls, reason):
    task = files_task()
    app = model_app(explorer)
    with ServedApp(app) as served_app:
        unlimited = play_episode(RapidAPIEnv(tasks=[task]), dfsdt(served_app), task.id)
        assert unlimited["success"] and app.config["calls"] == 4  # the search needs four calls
        assert unlimited["agent_log"]["usage"]["total_tokens"] == 8
        app.config["calls"] = 0
        episode = play_episode(RapidAPIEnv(tasks=[task]), dfsdt(served_app), task.id, limits=limits)
    assert episode["kind"] == "limit" and episode["error"].startswith(reason) and episode["actions"] == []
    assert app.config["calls"] == calls
    log = episode["agent_log"]
    assert log["stopped"] == {"kind": "limit", "reason": episode["error"]} and log["tree"]
    assert log["limits"] == {**limits.to_json(), "max_turns": limits.max_turns}
