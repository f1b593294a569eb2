"""The SkyRL-gym adapter: ``skyrl_gym.make("toolbench", ...)`` from a dataset row, replies dressed as a
model writes them, caps, and rollouts in SkyRL-train's generator loop with a tiny random model;
every reward is the env's own replay of the actions the session played."""

import ast
import copy
import json
import os
import re

import pytest

skyrl_gym = pytest.importorskip("skyrl_gym", reason="the 'skyrl' extra is not installed (pip install -e '.[skyrl]')")

import gymnasium as gym  # noqa: E402

import toolbench  # noqa: E402
from toolbench.agents.turns import ACTION_TOOL, PROGRAM_TOOL  # noqa: E402
from toolbench.integrations.session import Limits  # noqa: E402
from toolbench.integrations.skyrl import ENV_CLASS, ToolbenchTextEnv, register, task_rows  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
TASKS = [spec.name for spec in toolbench.TASKS]
# Rows that show only the k API functions most relevant to their task, to keep a CPU model's prompt short.
TOP_K_API = {"VirtualHome": 5}


def _extras(row):
    """What SkyRL-train's dataset hands the env: every column but the prompt and the env class."""
    return {k: v for k, v in row.items() if k not in ("prompt", "env_class")}


def _make(row, env_config=None, **extras):
    register()
    env = skyrl_gym.make(row["env_class"], env_config=env_config or {}, extras={**_extras(row), **extras})
    assert isinstance(env, ToolbenchTextEnv)
    return env


def _replayed(row, actions):
    """The reward the env itself pays ``actions`` on the row's task, then empty steps (what a cap plays)
    until the episode ends."""
    env = gym.make(row["env_id"], mode=row["mode"], split=row["split"]).unwrapped
    env.reset(options={"task_id": row["task_id"]})
    for action in [*actions, *[""] * 1000]:
        _, reward, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            return float(reward)
    raise AssertionError("the replay never ended")


def _oracle(env):
    return env.session.env.oracle_actions(env.session.env.task)


def _as_tool_call(action, tools):
    """``API.set_num_beds(2)`` as the JSON call of the tool of that name, if it has literal arguments."""
    try:
        call = ast.parse(action.strip()).body[0].value
        name, values = call.func.attr, [ast.literal_eval(arg) for arg in call.args]
    except (SyntaxError, AttributeError, IndexError, ValueError):
        return None
    schemas = {tool["function"]["name"]: tool["function"]["parameters"] for tool in tools}
    if name not in schemas or call.keywords:
        return None
    return {"name": name, "arguments": dict(zip(schemas[name]["properties"], values, strict=False))}


def _dressed(env, action, n):
    """``action`` as a model might write it: prose, then a ``<tool_call>`` block, a bare action line
    or a fenced block, then more prose and Qwen's end-of-turn marker."""
    names = {tool["function"]["name"] for tool in env.session.tools}
    line = env.session.env.action_line
    call = None
    if action.lstrip().startswith("{"):
        call = json.loads(action)
    elif PROGRAM_TOOL in names:
        call = {"name": PROGRAM_TOOL, "arguments": {"program": action}}
    elif ACTION_TOOL in names and n % 2 == 0:
        call = {"name": ACTION_TOOL, "arguments": {"action": action}}
    elif n % 3 == 1:
        call = _as_tool_call(action, env.session.tools)
    if call is not None:
        body = f"<tool_call>\n{json.dumps(call)}\n</tool_call>"
    elif line and n % 2 == 0 and re.fullmatch(line, action.strip()):
        body = action
    else:
        body = f"```python\n{action}\n```"
    return f"Let me look at what the task needs next.\n{body}\nThat should move it along.<|im_end|>"


@pytest.mark.parametrize("task", TASKS)
def test_oracle_replies_dressed_as_a_model_writes_them_earn_one_and_the_envs_replay(task):
    (row,) = task_rows([task], split="train", size=1, seed=7)
    assert row["env_class"] == ENV_CLASS and row["task"] == task and row["split"] == "train"
    env = _make(row, max_turns=50)
    prompt, info = env.init(copy.deepcopy(row["prompt"]))
    assert prompt == row["prompt"] and info["task_id"] == row["task_id"]
    system = prompt[0]["content"]
    assert prompt[0]["role"] == "system" and "<tools>" in system and "<tool_call>" in system
    assert all(json.dumps(tool) in system for tool in env.session.tools)
    total, outputs = 0.0, []
    for n, action in enumerate(_oracle(env)):
        outputs.append(env.step(_dressed(env, action, n)))
        total += outputs[-1]["reward"]
        if outputs[-1]["done"]:
            break
    assert outputs[-1]["done"] and outputs[-1]["observations"] == []
    assert all(not out["done"] and out["reward"] == 0.0 and out["observations"] for out in outputs[:-1])
    assert total == 1.0 == _replayed(row, env.session.actions)
    # one action a turn, as each reply held one
    assert [out["metadata"]["actions"] for out in outputs] == [[action] for action in env.session.actions]
    metrics = env.get_metrics()
    assert metrics["success"] == metrics["score"] == metrics[f"{task}/success"] == 1.0
    assert metrics["turns"] == len(outputs)
    env.close()


@pytest.mark.parametrize("task", ["RapidAPI", "HomeSearch"])
def test_two_calls_in_one_turn_are_both_played(task):
    (row,) = task_rows([task], split="train", size=1, seed=1)
    env = _make(row, max_turns=50)
    env.init(row["prompt"])
    first, second, *rest = _oracle(env)
    if task == "RapidAPI":
        reply = f"Two lookups.\n<tool_call>\n{first}\n</tool_call>\n<tool_call>\n{second}\n</tool_call><|im_end|>"
    else:
        reply = f"I will set both now:\n{first}\n{second}\nthen look at the results.<|im_end|>"
    out = env.step(reply)
    assert out["metadata"]["actions"] == [first, second] and env.session.turns == 1
    answer = out["observations"][0]["content"]
    assert answer.startswith("[1] ") and "\n[2] " in answer
    for action in rest:
        out = env.step(f"<tool_call>{action}</tool_call>" if action.startswith("{") else action)
        if out["done"]:
            break
    assert out["done"] and out["reward"] == 1.0 == _replayed(row, env.session.actions)
    assert env.get_metrics()["turns"] == len(rest) + 1


def test_the_turn_cap_ends_the_episode_scored_as_it_stands():
    (row,) = task_rows(["HomeSearch"], split="train", size=1, seed=2, limits=Limits(max_turns=2))
    assert row["limits"]["max_turns"] == 2
    env = _make(row, max_turns=20)  # the row's own limits beat the generator's max_turns
    env.init(row["prompt"])
    oracle = _oracle(env)
    assert len(oracle) > 2
    assert not env.step(oracle[0])["done"]
    out = env.step(oracle[1])
    assert out["done"] and out["reward"] == _replayed(row, oracle[:2]) < 1.0
    assert env.get_metrics() == {**env.get_metrics(), "turns": 2, "success": 0.0}

    (plain,) = task_rows(["HomeSearch"], split="train", size=1, seed=2)
    env = _make(plain, max_turns=1)  # SkyRL-train's generator writes generator.max_turns here
    env.init(plain["prompt"])
    out = env.step("Nothing to do yet.")
    assert out["done"] and out["reward"] == _replayed(plain, [])
    env = _make(plain, env_config={"limits": {"max_turns": 3}})
    env.init(plain["prompt"])
    assert [env.step(action)["done"] for action in oracle[:3]] == [False, False, True]
    with pytest.raises(ValueError, match="max_turn"):
        _make(plain, env_config={"limits": {"max_turn": 3}})


def test_rows_mix_envs_and_each_row_is_its_own_envs_episode():
    rows = task_rows({"WebShop": 2, "HomeSearch": 1, "OpenWeather": 1}, split="train", size=8, seed=4)
    assert sorted(row["task"] for row in rows) == ["HomeSearch", "HomeSearch"] + ["OpenWeather"] * 2 + ["WebShop"] * 4
    for row in rows:
        env = _make(row)
        prompt, info = env.init([])  # an empty prompt gets the session's opening, the same as the row's
        assert prompt == row["prompt"] and info["task"] == row["task"] and env.session.mode == row["mode"]
    register()  # again: registering twice changes nothing
    assert skyrl_gym.envs.registration.registry[ENV_CLASS].entry_point.endswith(":ToolbenchTextEnv")


def test_the_system_message_is_qwens_own_tool_offer_and_new_tools_are_offered_when_they_appear():
    pytest.importorskip("transformers", reason="the tiny tokenizer needs transformers")
    from toolbench.integrations.tiny_model import tiny_model_and_tokenizer

    _, tokenizer = tiny_model_and_tokenizer()
    (row,) = task_rows(["AppBench"], split="train", size=1, seed=3)
    env = _make(row, max_turns=50)
    env.init(row["prompt"])
    opening = env.session.open(row["task_id"])
    assert tokenizer.apply_chat_template(row["prompt"], tokenize=False) == tokenizer.apply_chat_template(
        opening, tools=env.session.tools, tokenize=False
    )
    env.init(row["prompt"])
    offered = list(env.session.tools)
    out = env.step(_oracle(env)[0])  # select_apps: the chosen apps' APIs become tools
    answer = out["observations"][0]["content"]
    added = [t["function"]["name"] for t in env.session.info["tools"] if t not in offered]
    assert env.session.tools == env.session.info["tools"]  # the session offers them from now on
    assert added and all(f'"name": "{name}"' in answer.split("New tools you may call:")[1] for name in added)
    assert not env.step(_oracle(env)[1])["observations"][0]["content"].count("New tools")


# SkyRL-train's generator (skyrl_train 0.3.1, generators/skyrl_gym_generator.py) needs Python 3.12,
# Ray 2.51 and flash-attn, none of which install here; ``_agent_loop`` below is its ``agent_loop``
# for the default multi-turn chat setting, line for line where it touches the env and the tokens,
# with ``generate(input_ids) -> output_ids`` (a local model, or a script) in place of the vLLM engine.
def _agent_loop(prompt, env_class, env_extras, skyrl_gym_cfg, max_turns, generate, tokenizer):
    def template(messages, **kwargs):
        return tokenizer.apply_chat_template(messages, tokenize=True, return_dict=False, **kwargs)

    base_conversation = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "I am a user."},
    ]
    base_ids = template(base_conversation, add_generation_prompt=False)
    last_eos = len(base_ids) - 1 - base_ids[::-1].index(tokenizer.eos_token_id)
    base_ids = base_ids[: last_eos + 1]

    env_extras["max_turns"] = max_turns
    env_config = skyrl_gym_cfg.get(env_class, {})
    env = skyrl_gym.make(env_class, env_config=env_config, extras=env_extras)
    chat_history = copy.deepcopy(prompt)
    chat_history, _ = env.init(chat_history)
    input_ids = template(chat_history, add_generation_prompt=True)
    prompt_length = len(input_ids)
    loss_mask, per_step_rewards, outputs, done = [], [], [], False
    while not done:
        output_ids = generate(input_ids)
        output = tokenizer.decode(output_ids, skip_special_tokens=True)  # as vLLM returns it
        outputs.append(output)
        step = env.step(output)
        new_obs, done = step["observations"], step["done"]
        obs_ids = []
        if new_obs:
            obs_ids = template([*base_conversation, *new_obs], add_generation_prompt=not done)[len(base_ids) :]
        input_ids = input_ids + output_ids + obs_ids
        loss_mask += [1] * len(output_ids) + [0] * len(obs_ids)
        per_step_rewards.append((step["reward"], len(input_ids) - len(obs_ids) - 1))
    metrics = env.get_metrics()
    env.close()
    response_end = per_step_rewards[-1][1]
    response_ids = input_ids[prompt_length : response_end + 1]
    token_rewards = [0.0] * len(response_ids)
    for reward, index in per_step_rewards:
        token_rewards[index - prompt_length] += reward
    return {"env": env, "outputs": outputs, "metrics": metrics, "rewards": token_rewards,
            "loss_mask": loss_mask[: len(response_ids)], "prompt_ids": input_ids[:prompt_length]}  # fmt: skip


def _sampler(model, tokenizer, max_tokens=24):
    import torch

    def generate(input_ids):
        with torch.no_grad():
            generated = model.generate(
                torch.tensor([input_ids]), attention_mask=torch.ones(1, len(input_ids), dtype=torch.long),
                max_new_tokens=max_tokens, do_sample=True, top_k=0, eos_token_id=tokenizer.eos_token_id,
                pad_token_id=tokenizer.pad_token_id,
            )  # fmt: skip
        return generated[0, len(input_ids) :].tolist()

    return generate


def _scripted(replies, tokenizer):
    """An engine that writes ``replies`` in turn, ending each with the end-of-turn token."""
    replies = iter(replies)
    return lambda input_ids: tokenizer.encode(next(replies), add_special_tokens=False) + [tokenizer.eos_token_id]


def test_rollouts_in_the_trainers_loop_with_a_tiny_model_are_paid_the_envs_replay():
    torch = pytest.importorskip("torch", reason="the tiny model needs torch (the 'trl' extra)")
    pytest.importorskip("transformers", reason="the tiny model needs transformers")
    from toolbench.integrations.tiny_model import tiny_model_and_tokenizer

    model, tokenizer = tiny_model_and_tokenizer()
    torch.manual_seed(0)
    # One row of every env. A CPU model's cost grows with its prompt: VirtualHome's API docs (every
    # object each action takes) make ~15,000 tokens, so its row shows the 5 functions most relevant
    # to the task (``top_k_api``, as a run on long prompts would); every other opening is under
    # ~2,500 tokens as it stands (AppBench's offers select_apps and finish, its apps' APIs come later).
    rows = [task_rows([task], split="train", size=1, seed=5, top_k_api=TOP_K_API.get(task))[0] for task in TASKS]
    (full,) = task_rows(["VirtualHome"], split="train", size=1, seed=5)
    (short,) = [row for row in rows if row["task"] == "VirtualHome"]
    assert short["top_k_api"] == 5 and short["task_id"] == full["task_id"]
    assert 4 * len(json.dumps(short["prompt"])) < len(json.dumps(full["prompt"]))
    env = _make(short)
    assert env.init([])[0] == short["prompt"]  # the row's top_k_api reaches its env's session
    env.close()
    register()
    cfg = {ENV_CLASS: {"observation_role": "user"}}
    played = 0
    for n, row in enumerate(rows):
        max_turns = 2 if n % 2 == 0 else 1
        result = _agent_loop(
            row["prompt"], row["env_class"], _extras(row), cfg, max_turns, _sampler(model, tokenizer), tokenizer
        )
        session = result["env"].session
        assert session.done and session.turns == len(result["outputs"]) <= max_turns
        assert session.task == row["task"] and session.task_id == row["task_id"]
        assert result["prompt_ids"] == tokenizer.apply_chat_template(
            row["prompt"], add_generation_prompt=True, tokenize=True, return_dict=False
        )
        assert len(result["loss_mask"]) == len(result["rewards"]) and sum(result["loss_mask"]) > 0
        assert sum(result["rewards"]) == session.reward == _replayed(row, session.actions)
        assert result["metrics"]["score"] == session.reward and result["metrics"]["turns"] == session.turns
        played += len(session.actions)
    assert played > 0  # some model text reached an env as an action, not only as refused replies

    # The same loop pays a won episode its 1.0 on the last token of the last reply.
    row = rows[0]
    env = gym.make(row["env_id"], mode=row["mode"], split=row["split"]).unwrapped
    env.reset(options={"task_id": row["task_id"]})
    replies = [f"Next:\n```\n{action}\n```" for action in env.oracle_actions(env.task)]
    result = _agent_loop(
        row["prompt"], row["env_class"], _extras(row), cfg, 50, _scripted(replies, tokenizer), tokenizer
    )
    assert result["rewards"][-1] == sum(result["rewards"]) == 1.0 == _replayed(row, result["env"].session.actions)
    assert result["metrics"]["success"] == 1.0
