"""The episode every trainer adapter plays (``integrations.session``) and the reply rule
(``agents.turns``): one env's answer to the same actions however a model dresses them."""

import json

import pytest

import toolbench
from tests.episodes import play
from toolbench.agents.turns import ACTION_TOOL, PROGRAM_TOOL, ReplyError, model_tools, reply_actions
from toolbench.integrations.session import Limits, Session, task_rows, training_mode

TASKS = [spec.name for spec in toolbench.TASKS]


def _oracle(session):
    return session.env.oracle_actions(session.env.task)


def _replayed(task, mode, task_id, actions):
    """The reward the env itself pays ``actions`` (what a session must pay too)."""
    import gymnasium as gym

    env = gym.make(f"toolbench/{task}-v0", mode=mode, split="train").unwrapped
    return play(env, task_id, actions)[1]


@pytest.mark.parametrize("task", TASKS)
def test_replies_with_prose_fences_and_end_markers_earn_the_envs_reward(task):
    session = Session(task, split="train")
    messages = session.open(toolbench.load_tasks(task, "train")[3].id)
    assert messages[-1]["role"] == "user" and session.env.task.prompt in messages[-1]["content"]
    for action in _oracle(session):
        session.reply(f"Let me do the next step.\n```\n{action}\n```\nI will wait for the result.<|im_end|>")
        if session.done:
            break
    assert session.done and session.reward == 1.0 and session.success
    assert [a.strip() for a in session.actions] == [a.strip() for a in _oracle(session)[: len(session.actions)]]


@pytest.mark.parametrize("task", TASKS)
def test_native_tool_calls_earn_the_envs_reward_and_the_tools_are_the_envs(task):
    session = Session(task, split="train")
    session.open(toolbench.load_tasks(task, "train")[5].id)
    names = {tool["function"]["name"] for tool in session.tools}
    if session.env.mode == "program":
        assert names == {PROGRAM_TOOL}
        session.call(PROGRAM_TOOL, {"program": _oracle(session)[0]})
    elif session.info.get("tools"):
        assert session.tools == session.env.reset(options={"task_id": session.task_id})[1]["tools"]
        session.open()
        for action in _oracle(session):
            data = json.loads(action) if action.lstrip().startswith("{") else None
            session.reply(action) if data is None else session.call(data["name"], json.dumps(data["arguments"]))
            if session.done:
                break
    else:
        assert names == {ACTION_TOOL}
        for action in _oracle(session):
            session.call(ACTION_TOOL, {"action": action})
            if session.done:
                break
    assert session.done and session.reward == 1.0


def test_several_calls_in_one_reply_play_in_order():
    session = Session("HomeSearch", split="train")
    session.open(toolbench.load_tasks("HomeSearch", "train")[0].id)
    oracle = _oracle(session)
    blocks = "\n".join(f"<tool_call>{json.dumps(_as_call(line))}</tool_call>" for line in oracle)
    answer = session.reply(f"Here is my plan.\n{blocks}")
    assert session.done and session.reward == 1.0 and answer.startswith("[1] ")
    assert session.turns == 1


def _as_call(line):
    """``API.set_num_beds(2)`` as a JSON tool call."""
    import ast

    call = ast.parse(line.strip()).body[0].value
    name = call.func.attr
    values = [ast.literal_eval(arg) for arg in call.args]
    tools = {t["function"]["name"]: t["function"] for t in model_tools_of("HomeSearch")}
    params = list(tools[name]["parameters"]["properties"])
    return {"name": name, "arguments": dict(zip(params, values, strict=False))}


def model_tools_of(task):
    session = Session(task, split="train")
    session.open()
    return session.tools


def test_a_reply_without_an_action_is_an_error_the_model_reads_and_the_turn_counts():
    session = Session("VirtualHome", split="train")
    session.open()
    answer = session.reply("I am not sure what to do here.")
    assert answer.startswith("Error: the reply holds no action") and "Agent." in answer
    assert session.turns == 1 and not session.done
    with pytest.raises(ReplyError, match="must hold"):
        reply_actions(session.env, "<tool_call>not json</tool_call>")


def test_turn_and_character_caps_end_the_episode_scored_as_it_stands():
    session = Session("HomeSearch", split="train", limits=Limits(max_turns=2))
    task_id = toolbench.load_tasks("HomeSearch", "train")[0].id
    session.open(task_id)
    oracle = _oracle(session)
    session.reply(oracle[0])
    answer = session.reply(oracle[1])
    assert session.done and "2 turns" in answer
    assert session.reward == _replayed("HomeSearch", "interactive", task_id, oracle[:2] + [""] * 30)
    long = Session("WebShop", split="train", limits=Limits(max_reply_chars=50))
    long.open()
    assert "characters long" in long.reply("search[" + "x" * 100 + "]") and long.done and long.reward == 0.0


def test_rows_mix_envs_in_proportion_and_name_each_rows_env():
    rows = task_rows({"HomeSearch": 2, "WebShop": 1, "VirtualHome": 1}, split="train", size=400, seed=3)
    assert len(rows) == 400
    counts = {task: sum(row["task"] == task for row in rows) for task in ("HomeSearch", "WebShop", "VirtualHome")}
    assert counts == {"HomeSearch": 200, "WebShop": 100, "VirtualHome": 100}
    assert rows == task_rows({"HomeSearch": 2, "WebShop": 1, "VirtualHome": 1}, split="train", size=400, seed=3)
    assert all(row["mode"] == training_mode(row["task"]) for row in rows)
    whole = task_rows(["OpenWeather"], split="unseen")
    assert [row["task_id"] for row in whole] == [t.id for t in toolbench.load_tasks("OpenWeather", "unseen")]
    assert {row["mode"] for row in whole} == {"program"}


def test_program_tool_and_action_tool_carry_the_grammar():
    import gymnasium as gym

    env = gym.make("toolbench/OpenWeather-v0").unwrapped
    _, info = env.reset(seed=0)
    (tool,) = model_tools(env, info)
    assert tool["function"]["name"] == PROGRAM_TOOL and "curl" in tool["function"]["description"]
    env = gym.make("toolbench/VirtualHome-v0", mode="interactive").unwrapped
    _, info = env.reset(seed=0)
    (tool,) = model_tools(env, info)
    assert tool["function"]["name"] == ACTION_TOOL and "Agent." in tool["function"]["description"]


def test_pay_success_only_and_stats_show_a_dead_signal():
    task_id = toolbench.load_tasks("HomeSearch", "train")[0].id
    partial = Session("HomeSearch", split="train")
    partial.open(task_id)
    oracle = _oracle(partial)
    one_wrong = oracle[:-2] + oracle[-1:]  # every criterion but the last, then search()
    partial.reply("\n".join(one_wrong))
    strict = Session("HomeSearch", split="train", pay="success")
    strict.open(task_id)
    strict.reply("\n".join(one_wrong))
    assert 0.0 < partial.reward < 1.0 and strict.reward == 0.0
    calls = float(len(one_wrong))
    assert partial.stats() == {"success": 0.0, "score": partial.reward, "calls": calls, "turns": 1.0, "finished": 1.0}
    cut = Session("HomeSearch", split="train", limits=Limits(max_turns=1))
    cut.open(task_id)
    cut.reply(oracle[0])
    assert cut.done and cut.stats()["finished"] == 0.0
    with pytest.raises(ValueError, match="pay must be"):
        Session("HomeSearch", pay="partial")
