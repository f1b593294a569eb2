"""The openai:MODEL agent against a scripted local chat endpoint (tests/eval/fake_llm.py)."""

import json

import gymnasium as gym
import pytest

import toolbench
from toolbench.agents.llm import ModelSettings, OpenAIChatAgent
from toolbench.cli import main
from toolbench.eval.harness import run_episode


def agent(**settings) -> OpenAIChatAgent:
    return OpenAIChatAgent("tiny", settings=ModelSettings(max_retries=0, **settings))


def test_tool_calling_model_completes_home_search_interactively(model):
    env = gym.make("toolbench/HomeSearch-v0", mode="interactive").unwrapped
    task = env.tasks[3]
    result = run_episode(env, agent(), task.id)
    assert result.success and result.score == 1.0 and result.steps == len(env.oracle_actions(task))
    first, last = model.requests[0], model.requests[-1]
    names = {tool["function"]["name"] for tool in first["tools"]}
    assert {"set_location", "search"} <= names
    assert all(json.loads(a)["name"] in names for a in result.actions)  # each tool call became a JSON action
    roles = [m["role"] for m in last["messages"]]
    assert roles[0] == "user" and roles.count("tool") == result.steps - 1
    tool_ids = [m["tool_call_id"] for m in last["messages"] if m["role"] == "tool"]
    call_ids = [c["id"] for m in last["messages"] if m.get("tool_calls") for c in m["tool_calls"]]
    assert tool_ids == call_ids[: len(tool_ids)]
    log = result.agent_log
    assert log["usage"]["total_tokens"] == 110 * result.steps and len(log["model_calls"]) == result.steps
    assert log["model_calls"][0]["completion"]["choices"][0]["message"]["tool_calls"]
    assert "finish with a call of the search tool" in first["messages"][0]["content"]  # the finishing action is stated


@pytest.mark.parametrize(
    "task, mode", [("GoogleSheets", "interactive"), ("Tabletop", "interactive"), ("TripBooking", "interactive")]
)
def test_tool_calling_model_on_other_interactive_tasks(model, task, mode):
    spec = toolbench.find_task(task)
    env = gym.make(spec.env_id, mode=mode).unwrapped
    result = run_episode(env, agent(top_k_example=1), env.tasks[0].id)
    assert result.success, result.observations
    tools = {t["function"]["name"] for t in model.requests[0]["tools"]}
    finishing_tool = env.finishing_action.removeprefix("API.").removesuffix("()")
    assert f"finish with a call of the {finishing_tool} tool" in model.requests[0]["messages"][0]["content"]
    if task != "TripBooking":
        assert tools == {"run_code", env.finishing_action}


def test_text_model_without_tools_plays_interactive_mode(model):
    model.behaviour = "text"
    env = gym.make("toolbench/TripBooking-v0", mode="interactive").unwrapped
    result = run_episode(env, agent(native_tools=False), env.tasks[5].id)
    assert result.success
    assert all("tools" not in r for r in model.requests)
    second = model.requests[1]["messages"]
    assert second[-1]["role"] == "user" and second[-1]["content"].startswith("Observation 1:")
    assert second[-1]["content"].endswith("Action 2:")


def test_an_empty_reply_is_refused_the_model_reads_why_and_the_turn_cap_ends_the_episode(model):
    model.behaviour = "empty"
    env = gym.make("toolbench/HomeSearch-v0", mode="interactive", max_steps=3).unwrapped
    result = run_episode(env, agent(max_turns=4), env.tasks[0].id)
    # A reply without an action takes no env step (as in every trainer adapter); the model is told why.
    assert not result.success and result.steps == 0 and len(model.requests) == 4
    assert "4 turns, the most an episode may take" in result.error
    shown = model.requests[1]["messages"][-1]
    assert shown["role"] == "user" and shown["content"].startswith("Error: the reply holds no action: write one call")


def test_a_text_reply_with_prose_and_every_call_plays_them_all_in_order(model):
    model.behaviour = "batch"
    env = gym.make("toolbench/HomeSearch-v0", mode="interactive").unwrapped
    task = env.tasks[3]
    result = run_episode(env, agent(native_tools=False), task.id)
    assert result.success and result.steps == len(env.oracle_actions(task)) and len(model.requests) == 1


def test_program_mode_sends_no_tools_and_the_harness_stops(model):
    env = gym.make("toolbench/OpenWeather-v0").unwrapped
    result = run_episode(env, agent(), env.tasks[0].id)
    assert result.success
    (request,) = model.requests
    assert "tools" not in request and request["max_tokens"] == 128 and request["stop"] == ["------", "Task:"]
    assert request["temperature"] == 0.0


def prompt_of(request):
    return [m["content"] for m in request["messages"]]


@pytest.mark.parametrize(
    "setting, system, demos",
    [("zero", False, False), ("system", True, False), ("fewshot", False, True), ("system+fewshot", True, True)],
)
def test_prompt_settings_shape_the_request(model, capsys, setting, system, demos):
    code = main(
        [
            "eval",
            "--agent",
            "openai:tiny",
            "--task",
            "HomeSearch",
            "--limit",
            "2",
            "--prompt",
            setting,
            "--quiet",
            "--max-retries",
            "0",
        ]
    )
    assert code == 0
    request = model.requests[0]
    roles = [m["role"] for m in request["messages"]]
    assert roles == (["system", "user"] if system else ["user"])
    user = request["messages"][-1]["content"]
    assert ("solved examples" in user) == demos
    # three retrieved demonstrations, then the task; the system prompt's answer format adds a template task
    assert user.count("Task: ") == (4 if demos else 1) + system
    assert "API.set_location" in user and user.rstrip().endswith("Action:")
    if system:
        assert "API assistant" in request["messages"][0]["content"]
        assert user.count("```") == 2 + 2 * 3 * demos  # the format's fences, and each demonstration's


def test_system_prompt_follows_figure_5_order(model):
    """Role statement, API functions, separator, answer format, demonstrations, separator, task."""
    env = gym.make("toolbench/HomeSearch-v0").unwrapped
    result = run_episode(env, agent(prompt="system+fewshot"), env.tasks[0].id)
    assert result.success
    system, user = model.requests[0]["messages"]
    assert system["role"] == "system" and "API.set_location" not in system["content"]
    blocks = user["content"].split("\n-------------\n")
    assert len(blocks) == 3
    docs, form_and_demos, task = blocks
    assert "API.set_location(" in docs and "Task:" not in docs
    form, demos = form_and_demos.split("solved examples")
    assert form.count("```") == 2 and "Task: the goal" in form
    assert demos.count("Task: ") == 3 and demos.count("```") == 6
    assert task.startswith("Task: ") and task.rstrip().endswith("Action:")


def test_system_prompt_without_demonstrations_keeps_the_format(model):
    env = gym.make("toolbench/HomeSearch-v0").unwrapped
    run_episode(env, agent(prompt="system"), env.tasks[0].id)
    _, user = model.requests[0]["messages"]
    blocks = user["content"].split("\n-------------\n")
    assert len(blocks) == 3 and blocks[1].startswith("Answer in the form below") and "solved" not in blocks[1]


# Google Sheets and Tabletop read fenced replies in their own tests (tests/sheets, tests/tabletop).
@pytest.mark.parametrize("task", ["OpenWeather", "CatAPI", "HomeSearch", "TripBooking", "VirtualHome", "WebShop"])
def test_a_reply_in_the_system_prompts_format_scores_as_the_bare_program(model, task):
    model.behaviour = "fenced"
    env = gym.make(toolbench.find_task(task).env_id, mode="program").unwrapped
    result = run_episode(env, agent(prompt="system+fewshot", top_k_example=1), env.tasks[0].id)
    # The program is read out of the fences (the reply rule of every adapter), and scores as the bare one.
    assert "```" not in result.actions[0] and result.actions[0] == result.actions[0].strip()
    assert result.success, result.observations


def test_flags_override_task_defaults(model):
    code = main(
        [
            "eval",
            "--agent",
            "openai:tiny",
            "--task",
            "CatAPI",
            "--limit",
            "1",
            "--quiet",
            "--max-tokens",
            "77",
            "--stop",
            "END",
            "--temperature",
            "0.5",
            "--top-k-api",
            "1",
            "--top-k-example",
            "2",
        ]
    )
    assert code == 0
    request = model.requests[0]
    assert request["max_tokens"] == 77 and request["stop"] == ["END"] and request["temperature"] == 0.5
    user = request["messages"][0]["content"]
    assert user.count("curl -X") == 1 + 2  # one API doc, two demonstrations


def test_interactive_prompt_has_one_call_demonstrations(model):
    code = main(
        [
            "eval",
            "--agent",
            "openai:tiny",
            "--task",
            "HomeSearch",
            "--mode",
            "interactive",
            "--limit",
            "1",
            "--quiet",
            "--no-tools",
        ]
    )
    assert code == 0
    user = model.requests[0]["messages"][0]["content"]
    assert "Action 1:\nAPI.set_location(" in user and "Observation 1:" in user
    assert "API.search()" in user.split("Task: ")[-1]  # the finishing action is stated for the task


def test_breaker_stops_the_run_and_resume_finishes_it(model, tmp_path, capsys):
    command = ["eval", "--agent", "openai:tiny", "--task", "CatAPI", "--limit", "12", "--json", "--max-retries", "0"]
    assert main([*command, "--out", str(tmp_path / "whole")]) == 0
    whole = json.loads(capsys.readouterr().out)

    model.good_replies_left = 4
    run = tmp_path / "run"
    assert main([*command, "--out", str(run)]) == 1
    err = capsys.readouterr().err
    assert "5 model calls failed in a row" in err and "--resume" in err
    lines = (run / "trajectories.jsonl").read_text().splitlines()
    assert len(lines) == 8  # four finished, four that the agent failed; the fifth failure stopped the run
    assert main([*command, "--out", str(run)]) == 2  # not empty
    assert "not empty" in capsys.readouterr().err

    model.good_replies_left = None
    before = len(model.requests)
    assert main([*command, "--out", str(run), "--resume"]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert resumed == whole
    assert len(model.requests) - before == 8  # the four failed episodes and the four never played
    episodes = [json.loads(line) for line in (run / "trajectories.jsonl").read_text().splitlines()]
    assert len(episodes) == 12 and len({e["task_id"] for e in episodes}) == 12
    assert json.loads((run / "summary.json").read_text()) == whole
    run_info = json.loads((run / "run.json").read_text())
    assert run_info["settings"]["agent"] == "openai:tiny" and run_info["toolbench"] == toolbench.__version__
    assert "resumed_from" in run_info and run_info["dependencies"]["openai"]
    assert run_info["endpoint"].startswith("http://127.0.0.1:")


def test_resume_refuses_other_settings(model, tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["eval", "--agent", "random", "--task", "CatAPI", "--limit", "3", "--out", str(run), "--quiet"]) == 0
    assert main(["eval", "--agent", "random", "--task", "CatAPI", "--limit", "4", "--out", str(run), "--resume"]) == 2
    assert "other settings (limit" in capsys.readouterr().err
    assert (
        main(
            [
                "eval",
                "--agent",
                "random",
                "--task",
                "CatAPI",
                "--limit",
                "4",
                "--out",
                str(run),
                "--overwrite",
                "--quiet",
            ]
        )
        == 0
    )
    assert len((run / "trajectories.jsonl").read_text().splitlines()) == 4


def test_trajectory_lines_hold_the_whole_exchange(model, tmp_path):
    run = tmp_path / "run"
    assert (
        main(
            [
                "eval",
                "--agent",
                "openai:tiny",
                "--task",
                "TripBooking",
                "--mode",
                "interactive",
                "--limit",
                "2",
                "--out",
                str(run),
                "--quiet",
            ]
        )
        == 0
    )
    episode = json.loads((run / "trajectories.jsonl").read_text().splitlines()[0])
    log = episode["agent_log"]
    assert log["settings"]["model"] == "tiny" and log["settings"]["prompt"] == "fewshot"
    assert log["messages"][0]["role"] == "user" and log["tools"]
    call = log["model_calls"][0]
    assert {"completion", "usage", "latency_s", "messages_sent", "finish_reason"} <= set(call)
    assert call["completion"]["choices"][0]["message"]["tool_calls"]
    assert episode["references"] and episode["metrics"]["f1"] == 1.0 and episode["prompt"]


def test_client_switches_to_max_completion_tokens_when_the_model_asks(model):
    calls = []
    original = model.reply

    def picky(body):
        calls.append(sorted(k for k in body if "tokens" in k))
        if "max_tokens" in body:
            message = "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
            return {"error": {"message": message, "type": "invalid_request_error", "param": "max_tokens"}}, 400
        return original(body)

    model.reply = picky
    env = gym.make("toolbench/OpenWeather-v0").unwrapped
    chat = agent()
    assert run_episode(env, chat, env.tasks[0].id).success
    assert run_episode(env, chat, env.tasks[1].id).success
    assert calls == [["max_tokens"], ["max_completion_tokens"], ["max_completion_tokens"]]


def test_tools_follow_appbench_select_apps():
    """Hierarchical prompting: the first request offers select_apps alone; once the model chooses
    Travel, the next requests offer Travel's APIs, which the model then calls."""
    from tests.eval.fake_llm import scripted_endpoint, tool_call_message
    from toolbench.agents.client import ChatClient
    from toolbench.core.transport import ServedApp

    def reply(body):
        names = {tool["function"]["name"] for tool in body["tools"]}
        if "Travel__findattractions" not in names:
            return tool_call_message("select_apps", {"apps": ["Travel"]}, call_id="c1")
        if body["messages"][-1]["content"].startswith("1. Travel.findattractions"):
            return tool_call_message("finish", {}, call_id="c3")
        return tool_call_message("Travel__findattractions", {"location": "London", "good_for_kids": True}, "c2")

    app = scripted_endpoint(reply)
    requests = []
    app.before_request(lambda: requests.append(__import__("flask").request.get_json()))
    served = ServedApp(app).start()
    try:
        env = gym.make("toolbench/AppBench-v0", mode="interactive").unwrapped
        client = ChatClient("tiny", base_url=f"{served.url}/v1", api_key="sk-test", max_retries=0)
        result = run_episode(env, OpenAIChatAgent("tiny", client=client), "appbench-test-0000")
    finally:
        served.stop()
    offered = [sorted(tool["function"]["name"] for tool in body["tools"]) for body in requests]
    assert offered[0] == ["finish", "select_apps"]
    assert "Travel__findattractions" in offered[1] and not any(name.startswith("Hotels__") for name in offered[1])
    assert result.success and result.steps == 3


def test_appbench_two_stage_program_demos_show_the_selection():
    from toolbench.prompting import PromptBuilder

    env = gym.make("toolbench/AppBench-v0", prompting="hierarchical").unwrapped
    _, info = env.reset(options={"task_id": "appbench-test-0000"})
    text = PromptBuilder.for_env(env, info["api_docs"], top_k_example=2).build(env.task.prompt)
    assert text.count("Action 1:\nselect_apps([") == 2 and "Observation 1:\n# " in text and "Action 2:\n" in text
    flat = gym.make("toolbench/AppBench-v0").unwrapped
    _, info = flat.reset(options={"task_id": "appbench-test-0000"})
    text = PromptBuilder.for_env(flat, info["api_docs"], top_k_example=2).build(flat.task.prompt)
    assert "select_apps" not in text and text.count("Task: ") == 3
