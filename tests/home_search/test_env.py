"""toolbench/HomeSearch-v0: both modes, equivalent programs, broken rules, hostile programs."""

import json

import gymnasium as gym
import pytest

import toolbench
from tests.episodes import play

ENV_ID = "toolbench/HomeSearch-v0"
UNSEEN = ("set_num_balconies", "set_floor_number", "set_max_commute_time")


@pytest.mark.parametrize("mode", ["program", "interactive"])
@pytest.mark.parametrize("split", ["test", "demo"])
def test_oracle_solves_every_task(mode, split):
    env = gym.make(ENV_ID, mode=mode, split=split)
    for task in toolbench.load_tasks("HomeSearch", split):
        _, reward, terminated, _, info = play(env, task.id, env.unwrapped.oracle_actions(task))
        assert terminated and info["success"] and reward == 1.0, task.id


def test_task_sets():
    tests, demos = toolbench.load_tasks("HomeSearch"), toolbench.load_tasks("HomeSearch", "demo")
    assert len(tests) == 100 and len(demos) == 10
    for name in UNSEEN:
        assert not any(name in d.references[0] for d in demos)
        assert sum(name in t.references[0] for t in tests) >= 5
    env = gym.make(ENV_ID).unwrapped
    for task in tests:  # answerable: the reference's search finds homes
        env.reset(options={"task_id": task.id})
        assert "Found 0 homes" not in env.step(task.references[0])[0]


PROMPT = "Rent an apartment or condo in Denver with 2 bedrooms, under $4,000."
REFERENCE = """API.set_location("Denver")
API.set_buy_or_rent("rent")
API.select_home_type(["Apartment", "Condo"])
API.set_num_beds(2)
API.set_max_price(4000)
API.search()"""


@pytest.fixture
def denver(tmp_path):
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps({"id": "denver", "prompt": PROMPT, "completion": [REFERENCE]}) + "\n")
    return gym.make(ENV_ID, task_file=str(path))


@pytest.mark.parametrize(
    "program",
    [
        REFERENCE,
        # criteria reordered where the rules allow, keyword arguments, other spellings
        """API.set_location(value="denver")
API.set_buy_or_rent(value="Rent")
API.set_max_price(4000)
API.set_num_beds(value=2.0)
API.select_home_type(home_types=["condo", "apartment"])
API.search()""",
        # values through variables, a tuple, comments, explicit defaults, Markdown fences
        """```python
city = "Denver"
kinds = ("Condo", "Apartment")
API.set_location(city)  # where
API.set_buy_or_rent("rent")
API.select_home_type(kinds)
API.set_min_price(0)
API.set_num_beds(2)
API.set_max_price(4_000)
API.search()
```""",
    ],
)
def test_equivalent_programs_succeed(denver, program):
    _, reward, _, _, info = play(denver, "denver", [program])
    assert info["success"] and reward == 1.0, info


@pytest.mark.parametrize(
    "program, message",
    [
        (
            'API.set_buy_or_rent("rent")\nAPI.set_location("Denver")\nAPI.search()',
            "line 1: set_buy_or_rent was called before set_location",
        ),
        (
            'API.set_location("Denver")\nAPI.set_num_beds(2)\nAPI.set_buy_or_rent("rent")',
            "line 2: set_num_beds was called before set_buy_or_rent",
        ),
        (
            'API.set_location("Denver")\nAPI.set_buy_or_rent("rent")\nAPI.select_home_type(["Co-op"])',
            "line 3: 'Co-op' is not a home type for renting",
        ),
        (
            'API.set_location("Denver")\nAPI.set_buy_or_rent("rent")\nAPI.set_num_beds()',
            "line 3: set_num_beds(): missing a required argument: 'value'",
        ),
        (
            'API.set_location("Denver")\nAPI.set_buy_or_rent("rent")\nAPI.set_beds(2)',
            "line 3: unknown function API.set_beds",
        ),
    ],
)
def test_broken_rules_are_not_executable(denver, program, message):
    obs, reward, terminated, _, info = play(denver, "denver", [program])
    assert terminated and reward == 0.0 and info["executable"] is False and info["success"] is False
    assert message in info["error"] and obs == f"Error: {info['error']}"


def test_partial_credit(denver):
    _, reward, _, _, info = play(denver, "denver", [REFERENCE.replace("set_num_beds(2)", "set_num_beds(3)")])
    assert info["executable"] and not info["success"] and info["precision"] == info["recall"] == 6 / 7
    assert 0.0 < reward <= info["f1"]
    _, reward, _, _, info = play(denver, "denver", [REFERENCE.replace("API.search()", "")])
    assert info["executable"] and not info["success"]  # no search(): the defaults are missing
    assert 0.0 < info["f1"] < 1.0 and reward == 0.0  # and criteria never submitted earn no reward


def test_search_defaults_alone_earn_the_benchmarks_f1_but_no_reward(denver):
    _, reward, _, _, info = play(denver, "denver", ["API.search()"])
    assert info["executable"] and info["precision"] == 1.0 and info["f1"] > 0  # ToolBench's F1 counts them
    assert reward == info["score"] == 0.0 and not info["success"]
    wrong_city = REFERENCE.replace('"Denver"', '"Boston"')
    _, reward, _, _, info = play(denver, "denver", [wrong_city])
    assert reward == 0.0 < info["f1"] < 1.0  # a search in another city finds none of the homes asked for


def test_the_reward_pays_only_the_tasks_own_criteria(denver):
    """City, buy or rent and the home types, which every task sets, earn nothing by themselves; each
    criterion of the task's own (bedrooms, budget) earns its share of the F1 over those."""
    env = denver.unwrapped
    task = env.tasks[0]
    shared = env.shared_parts_actions(task)
    assert shared == [
        'API.set_location("Denver")\nAPI.set_buy_or_rent("rent")\nAPI.select_home_type(["Apartment", "Condo"])\n'
        "API.search()"
    ]
    _, reward, _, _, info = play(denver, "denver", shared)
    assert reward == 0.0 and info["f1"] > 0.5
    one_wrong = REFERENCE.replace("set_num_beds(2)", "set_num_beds(3)")
    _, reward, _, _, info = play(denver, "denver", [one_wrong])
    assert reward == pytest.approx(1 / 2) and reward < info["f1"]  # one of the two own criteria


HOSTILE = [
    "import os\nos.system('touch pwned')",
    "__import__('os').system('touch pwned')",
    "API.set_location(().__class__.__base__.__subclasses__())",
    "open('pwned', 'w').write('x')",
    "exec(\"open('pwned','w')\")",
    "API.search.__globals__",
    "API.set_location('x' * 10**9)",
    "API.set_location(" + "(" * 500 + "'x'" + ")" * 500 + ")",
    "API.search()\n" * 5000,
    "A" * 1_000_000,
]


@pytest.mark.parametrize("action", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize("mode", ["program", "interactive"])
def test_hostile_programs(action, mode, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = gym.make(ENV_ID, mode=mode, disable_env_checker=True)
    task = toolbench.load_tasks("HomeSearch")[0]
    env.reset(options={"task_id": task.id})
    obs, reward, *_, info = env.step(action)
    assert obs.startswith("Error:") and reward == 0.0 and not info["executable"]
    assert env.unwrapped.get_state()["backend"]["api"]["criteria"] == {}
    assert list(tmp_path.iterdir()) == []
    assert play(env, task.id, env.unwrapped.oracle_actions(task))[4]["success"]


def test_interactive_steps_and_json_tool_calls():
    env = gym.make(ENV_ID, mode="interactive")
    obs, info = env.reset(seed=0)
    assert len(info["tools"]) == 15 and info["tools"][0]["function"]["name"] == "set_location"
    assert "API.set_location(value: str)" in info["api_docs"]
    obs, reward, terminated, truncated, info = env.step("API.set_num_beds(2)")
    assert obs.startswith("Error:") and "before set_buy_or_rent" in obs and not terminated and reward == 0.0
    obs, *_ = env.step('{"name": "set_location", "arguments": {"value": "Denver"}}')
    assert obs == "OK: location = 'Denver'"
    obs, *_ = env.step(
        json.dumps({"type": "function", "function": {"name": "set_buy_or_rent", "arguments": '{"value": "rent"}'}})
    )
    assert obs == "OK: buy_or_rent = 'rent'"
    obs, *_ = env.step("API.set_num_beds(2)\nAPI.set_num_baths(1)")
    assert "one call per step" in obs
    obs, reward, terminated, truncated, info = env.step("API.search()")
    assert terminated and "Found" in obs and 0.0 <= reward < 1.0


def test_truncation_reports_the_criteria_so_far_but_pays_only_a_search():
    env = gym.make(ENV_ID, mode="interactive", max_steps=3)
    task = toolbench.load_tasks("HomeSearch")[0]
    actions = env.unwrapped.oracle_actions(task)
    obs, reward, terminated, truncated, info = play(env, task.id, actions[:3])
    assert truncated and not terminated and 0.0 < info["f1"] < 1.0 and not info["success"] and reward == 0.0
    env = gym.make(ENV_ID, mode="interactive", max_steps=5)
    obs, reward, terminated, truncated, info = play(env, task.id, [*actions[:4], "API.search()"])
    assert terminated and 0.0 < reward < 1.0 and not info["success"]


def test_original_records_from_the_reference_data(refdata, tmp_path):
    # The upstream README's demonstrations, in the original record shape, score their own completion.
    from tests.conftest import readme_examples

    examples = readme_examples(refdata, "Home Search")
    assert len(examples) >= 3
    path = tmp_path / "test.jsonl"
    path.write_text("".join(json.dumps({"prompt": p, "completion": [c]}) + "\n" for p, c in examples))
    for mode in ("program", "interactive"):
        env = gym.make(ENV_ID, task_file=str(path), mode=mode)
        for task in env.unwrapped.tasks:
            assert play(env, task.id, env.unwrapped.oracle_actions(task))[4]["success"], task.prompt
