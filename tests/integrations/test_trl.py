"""The TRL adapter: TRL's own GRPO loop trains on every env with a tiny local model, the tools it reads
are the env's, and the oracle's calls played as TRL plays them earn the env's reward."""

import ast
import inspect
import json
import math
import os
import re

import pytest

pytest.importorskip("trl", reason="the 'trl' extra is not installed (pip install -e '.[trl]')")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

import gymnasium as gym  # noqa: E402
import pandas as pd  # noqa: E402
from datasets import Dataset  # noqa: E402
from transformers import TrainerCallback  # noqa: E402
from transformers.utils import get_json_schema  # noqa: E402  (TRL reads tool schemas with it)
from trl import GRPOConfig  # noqa: E402

import toolbench  # noqa: E402
from tests.episodes import play  # noqa: E402
from toolbench.envs.appbench import parse_plan  # noqa: E402
from toolbench.integrations.session import Session, task_rows  # noqa: E402
from toolbench.integrations.tiny_model import tiny_model_and_tokenizer  # noqa: E402
from toolbench.integrations.trl import (  # noqa: E402
    ToolbenchGRPOTrainer,
    _loggable,
    dataset_rows,
    environment_factory,
    tool_method,
)

TASKS = [spec.name for spec in toolbench.TASKS]
KEYWORDS = ("type", "enum", "items", "description")


def _rows(tasks, index=5):
    """One train row per env: its ``index``-th task."""
    rows = task_rows(tasks, split="train")
    by_task = {}
    for row in rows:
        by_task.setdefault(row["task"], []).append(row)
    return [by_task[task][index] for task in by_task]


def _instances(rows, **options):
    """What GRPOTrainer does per rollout: an instance of the row's environment, reset with the row."""
    factories = environment_factory(rows, **options)
    for row in dataset_rows(rows, top_k_api=options.get("top_k_api")):
        env = factories[row["environment"]]()
        prompt = env.reset(**{k: v for k, v in row.items() if k != "environment"})
        yield row, env, prompt


def _tools(env):
    """The methods TRL offers as tools, as it lists them."""
    return {
        name: getattr(env, name)
        for name, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    }


def _expected(schema):
    """The env's schema in the keywords a signature and docstring state (undescribed: the name)."""
    function = schema["function"]
    params = function.get("parameters") or {}

    def keep(name, spec):
        out = {k: v for k, v in spec.items() if k in KEYWORDS}
        if isinstance(out.get("items"), dict):
            out["items"] = keep(None, out["items"])
        if name is not None and "description" not in out:
            out["description"] = name
        return out

    properties = {name: keep(name, spec) for name, spec in (params.get("properties") or {}).items()}
    return function["name"], function["description"], properties, set(params.get("required") or [])


def _seen(method):
    function = get_json_schema(method)["function"]
    params = function["parameters"]
    return function["name"], function["description"], params["properties"], set(params.get("required", []))


def test_the_tools_trl_reads_are_the_envs_for_every_env_and_tool_set():
    rows = task_rows({task: 1 for task in TASKS}, split="train", size=60, seed=3)
    rows += task_rows(["RapidAPI"], split="train")[:80]
    factories = environment_factory(rows)
    assert {row["environment"] for row in dataset_rows(rows)} == set(factories)
    rapid = [name for name in factories if name.startswith("RapidAPI_")]
    assert len(rapid) > 40  # one environment per distinct tool set
    checked = 0
    for name, factory in factories.items():
        env = factory()
        tools = _tools(env)
        row = next(r for r in dataset_rows(rows) if r["environment"] == name)
        env.reset(**{k: v for k, v in row.items() if k != "environment"})
        offered = env._session.tools
        if name == "AppBench":  # every app's APIs too, besides the env's select_apps and finish
            assert {t["function"]["name"] for t in offered} < set(tools) and len(tools) == 35
            flat = gym.make("toolbench/AppBench-v0", mode="program").unwrapped
            offered = offered + flat.reset(seed=0)[1]["tools"]
        assert set(tools) == {t["function"]["name"] for t in offered}, name
        for schema in offered:
            assert _seen(tools[schema["function"]["name"]]) == _expected(schema), (name, schema["function"]["name"])
            checked += 1
        env.get_reward()
    assert "done" in _tools(factories["Tabletop"]())  # no state attribute hides Tabletop's done tool
    date = get_json_schema(_tools(factories["TripBooking"]())["set_departure_date"])["function"]["parameters"]
    assert date["properties"]["value"]["type"] == "string"
    assert checked > 300


@pytest.mark.parametrize("bad", ["reset", "get_reward", "_private", "not-an-identifier"])
def test_tool_names_trl_cannot_offer_are_refused(bad):
    with pytest.raises(ValueError, match="cannot be a TRL environment method"):
        tool_method({"type": "function", "function": {"name": bad, "description": "x", "parameters": {}}})


# --------------------------------------------------------------------------- the oracle's calls
def _python_call(line, params):
    """``API.set_num_beds(2)`` as (name, arguments); ``Loc("X")`` is "X", ``Date(m, d, y)`` "YYYY-MM-DD"."""

    def value(node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            args = [ast.literal_eval(a) for a in node.args]
            if node.func.id == "Date":
                month, day, year = args
                return f"{year:04d}-{month:02d}-{day:02d}"
            return args[0]
        return ast.literal_eval(node)

    call = ast.parse(line.strip()).body[0].value
    arguments = dict(zip(params[call.func.attr], map(value, call.args), strict=False))
    arguments.update({k.arg: value(k.value) for k in call.keywords})
    return call.func.attr, arguments


def _oracle_calls(env, tools):
    """The oracle's actions as the tool calls a model would make in this environment."""
    session_env = env._session.env
    actions = session_env.oracle_actions(session_env.task)
    if "submit_program" in tools:
        return [("submit_program", {"program": actions[0]})]
    if "take_action" in tools:
        return [("take_action", {"action": a}) for a in actions]
    params = {n: list(json.loads(json.dumps(s))) for n, s in _params(env._session.tools).items()}
    calls = []
    for action in actions:
        text = action.strip()
        if text.startswith("{"):
            data = json.loads(text)
            calls.append((data["name"], data["arguments"]))
        elif text in tools:  # submit, done
            calls.append((text, {}))
        elif text.startswith("API."):
            calls.append(_python_call(text, params))
        elif m := re.fullmatch(r"(search|click)\[(.*)\]", text, re.S):
            calls.append((m.group(1), {"query" if m.group(1) == "search" else "button": m.group(2)}))
        elif m := re.fullmatch(r"select_apps\((.*)\)", text):
            calls.append(("select_apps", {"apps": ast.literal_eval(m.group(1))}))
        elif text == "finish()":
            calls.append(("finish", {}))
        elif "run_code" in tools:
            calls.append(("run_code", {"code": action}))
        else:  # an AppBench plan line
            (call,) = parse_plan(text)
            name = {t.lower(): t for t in tools}[f"{call.app}__{call.api}".lower()]
            args = {k: {"ref": v.name} if hasattr(v, "name") else v for k, v in call.args.items()}
            calls.append((name, args))
    return calls


def _params(tools):
    return {t["function"]["name"]: t["function"]["parameters"].get("properties", {}) for t in tools}


def _replay(task, mode, task_id, actions):
    """The reward the env itself pays ``actions``, in a fresh env (none: the unfinished episode's 0)."""
    fresh = gym.make(f"toolbench/{task}-v0", mode=mode, split="train").unwrapped
    if not actions:
        fresh.reset(options={"task_id": task_id})
        return 0.0
    return play(fresh, task_id, actions)[1]


def _replayed(env):
    return _replay(env._task, env._mode, env._task_id, env._actions)


def test_the_oracles_calls_played_as_trl_plays_them_earn_reward_one_on_every_env():
    played = {}
    for row, env, prompt in _instances(_rows(TASKS)):
        tools = _tools(env)
        assert env._session.env.task.prompt in prompt
        for name, arguments in _oracle_calls(env, tools):
            answer = tools[name](**arguments)
            assert isinstance(answer, str)
        reward = env.get_reward()
        played[row["task"]] = reward
        assert reward == _replayed(env), row["task"]
        assert env._session is None and "over" in next(iter(tools.values()))(**{})  # given back at get_reward
    assert played == dict.fromkeys(TASKS, 1.0)


def test_a_wrong_rollout_earns_the_envs_partial_score():
    (row, env, _), *_ = _instances(_rows(["HomeSearch"], index=0))
    tools = _tools(env)
    tools["set_location"](value="Lincoln")
    tools["set_buy_or_rent"](value="buy")
    tools["search"]()
    reward = env.get_reward()
    assert reward == _replayed(env) < 1.0 and len(env._actions) == 3
    (row, env, _), *_ = _instances(_rows(["HomeSearch"], index=0), pay="success")
    assert env._session.pay == "success"  # not the session the first rollout gave back, which paid scores
    for name, arguments in [("set_location", {"value": "Lincoln"}), ("search", {})]:
        _tools(env)[name](**arguments)
    assert env.get_reward() == 0.0  # paid for success only


# --------------------------------------------------------------------------- TRL's own loop
def _config(tmp_path, **kwargs):
    defaults = dict(
        output_dir=str(tmp_path),
        use_cpu=True,
        report_to="none",
        max_steps=1,
        num_generations=2,
        max_completion_length=6,
        max_tool_calling_iterations=2,
        learning_rate=1e-4,
        logging_steps=1,
        save_strategy="no",
        seed=0,
        dataloader_num_workers=0,
        bf16=False,
        gradient_checkpointing=False,  # TRL's default recomputes activations: slower, and nothing to save here
    )
    return GRPOConfig(**(defaults | kwargs))


def _instrumented(factories, record):
    """The factories' classes, each recording (task id, actions, reward) at every get_reward."""

    def subclass(cls):
        def get_reward(self):
            reward = cls.get_reward(self)
            record.append((self, self._task_id, list(self._actions), reward))
            return reward

        return type(cls.__name__, (cls,), {"get_reward": get_reward})

    return {name: subclass(cls) for name, cls in factories.items()}


class _RewardSnapshots(TrainerCallback):
    """The rewards TRL logged for each step's rollouts (its log keeps only the last batch)."""

    def __init__(self):
        self.trainer, self.steps = None, []

    def on_step_end(self, args, state, control, **kwargs):
        self.steps.append({name: list(column) for name, column in self.trainer._logs["rewards"].items()})


def _train(tmp_path, rows, top_k_api=None, **config):
    record = []
    model, tokenizer = tiny_model_and_tokenizer()
    snapshots = _RewardSnapshots()
    trainer = ToolbenchGRPOTrainer(
        model=model,
        processing_class=tokenizer,
        args=_config(tmp_path, **config),
        train_dataset=Dataset.from_list(dataset_rows(rows, top_k_api=top_k_api)),
        environment_factory=_instrumented(environment_factory(rows, top_k_api=top_k_api), record),
        callbacks=[snapshots],
    )
    snapshots.trainer = trainer
    trainer.train()
    return trainer, record, snapshots.steps


def _assert_logged_rewards_are_the_envs_replays(trainer, record, steps):
    """Every rollout's reward as TRL logged it is its env's, and the env's replay of its actions.

    TRL calls get_reward class by class, each over the batch's rollouts in order: so, class by
    class, the logged rewards and the recorded ones come in the same order."""
    assert trainer.state.global_step == trainer.args.max_steps == len(steps)
    logged: dict[str, list[float]] = {}
    for step in steps:
        for name, column in step.items():
            logged.setdefault(name, []).extend(r for r in column if not math.isnan(r))
    recorded: dict[str, list[float]] = {}
    for env, task_id, actions, reward in record:
        recorded.setdefault(type(env).__name__, []).append(reward)
        assert reward == _replay(env._task, env._mode, task_id, actions), (env._task, actions)
    assert logged == recorded
    assert sum(map(len, logged.values())) == trainer.args.max_steps * trainer.args.generation_batch_size


#: The API functions a prompt shows in the trainer test: every env's prompt then stays under ~2,500
#: tokens with the tiny tokenizer (a CPU step's cost grows faster than its prompt), where the full
#: docs and tools make AppBench's ~7,000 (every app's API as a tool) and VirtualHome's ~15,000.
TOP_K = 5


def _prompt_tokens(rows, **options):
    """Each row's prompt as TRL renders it (its system message, reset's text, its environment's tools)."""
    _, tokenizer = tiny_model_and_tokenizer()
    out = {}
    for row, env, prompt in _instances(rows, **options):
        messages = [*row["prompt"][:-1], {"role": "user", "content": prompt}]
        tools = [get_json_schema(method) for method in _tools(env).values()]
        text = tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=True, tokenize=False)
        out[row["task"]] = len(tokenizer(text)["input_ids"])
        env.get_reward()
    return out


def test_top_k_api_shows_the_tasks_best_functions_and_offers_appbench_the_best_apis():
    rows = _rows(["VirtualHome", "AppBench", "HomeSearch"], index=7)
    full, short = _prompt_tokens(rows), _prompt_tokens(rows, top_k_api=TOP_K)
    assert full["VirtualHome"] > 10_000 and full["AppBench"] > 5_000
    assert max(short.values()) < 2_500 and all(short[task] < full[task] for task in short)
    for row, env, prompt in _instances(rows, top_k_api=TOP_K):
        assert env._session.env.task.prompt in prompt and env._session.top_k_api == TOP_K
        tools = _tools(env)
        if row["task"] == "AppBench":  # the task's own tool set: select_apps, finish and the k best APIs
            assert row["environment"].startswith("AppBench_") and len(tools) == TOP_K + 2
            flat = gym.make("toolbench/AppBench-v0", mode="program").unwrapped.reset(seed=0)[1]["tools"]
            offered = [t for t in env._session.tools + flat if t["function"]["name"] in tools]
            assert {t["function"]["name"] for t in offered} == set(tools)
            assert all(_seen(tools[t["function"]["name"]]) == _expected(t) for t in offered)
        else:  # the same tools as without the option
            assert set(tools) == {t["function"]["name"] for t in env._session.tools}
        env.get_reward()
    # Each AppBench task its own tool set, retrieved by its text: rides and hotels are different APIs.
    appbench = dataset_rows(task_rows(["AppBench"], split="train")[:40], top_k_api=TOP_K)
    assert len({row["environment"] for row in appbench}) > 10
    with pytest.raises(ValueError, match="top_k_api"):
        Session("HomeSearch", top_k_api=-1)


def test_grpo_trains_every_env_in_one_trainer_with_completion_logs(tmp_path):
    rows = _rows(TASKS, index=7)
    # One prompt (two rollouts) per step, a step per env: a batch pads to its longest prompt.
    trainer, record, steps = _train(
        tmp_path, rows, top_k_api=TOP_K, per_device_train_batch_size=2, max_steps=len(rows), log_completions=True
    )
    _assert_logged_rewards_are_the_envs_replays(trainer, record, steps)
    assert sorted({env._task for env, *_ in record}) == sorted(TASKS)
    assert list((tmp_path / "completions").glob("*.parquet"))


def test_grpo_trains_three_envs_at_once_and_logs_mixed_type_arguments(tmp_path):
    rows = _rows(["HomeSearch", "WebShop", "RapidAPI"], index=2)
    trainer, record, steps = _train(tmp_path, rows, per_device_train_batch_size=6, log_completions=True)
    _assert_logged_rewards_are_the_envs_replays(trainer, record, steps)
    assert {env._task for env in trainer.environments} == {"HomeSearch", "WebShop", "RapidAPI"}
    # A model's calls: one argument name, text in one tool and a number in another (a parquet column
    # takes one type), then a log writes them.
    calls = [("set_location", {"value": "Lincoln"}), ("set_max_price", {"value": 1250})]
    for name, arguments in calls:
        call = {"type": "function", "function": {"name": name, "arguments": arguments}}
        trainer._logs["completion"].append([{"role": "assistant", "content": "", "tool_calls": [call]}])
        trainer._logs["prompt"].append([{"role": "user", "content": "x"}])
        trainer._logs["advantages"].append(0.0)
        for column in trainer._logs["rewards"].values():
            column.append(0.0)
    trainer.log({"loss": 0.0})
    table = pd.read_parquet(sorted((tmp_path / "completions").glob("*.parquet"))[-1])
    written = [c[0]["tool_calls"][0]["function"]["arguments"] for c in table["completion"].iloc[-2:]]
    assert [json.loads(text) for text in written] == [arguments for _, arguments in calls]


def test_loggable_keeps_text_and_writes_arguments_as_json():
    messages = [{"role": "assistant", "content": "hi", "tool_calls": [{"function": {"name": "a", "arguments": {}}}]}]
    assert _loggable(messages)[0]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert messages[0]["tool_calls"][0]["function"]["arguments"] == {}  # the trainer's own copy is untouched
    assert _loggable("text") == "text"


@pytest.mark.parametrize("setting", ["zero", "system"])
def test_a_rows_prompt_after_reset_is_the_sessions_opening_for_the_same_prompt_setting(setting):
    from toolbench.integrations.session import Session, task_rows

    rows = task_rows(["HomeSearch"], split="train", size=1, seed=0, modes={"HomeSearch": "program"})
    (row,) = dataset_rows(rows, prompt_setting=setting)
    (factory,) = environment_factory(rows, prompt_setting=setting).values()
    filled = factory().reset(**{k: v for k, v in row.items() if k != "environment"})
    prompt = [*row["prompt"][:-1], {"role": "user", "content": filled}]
    assert prompt == Session("HomeSearch", split="train", mode="program", prompt_setting=setting).open(row["task_id"])
