"""WebShop's human goal files (items_human_ins.json, human_goals.json) over our catalog."""

from __future__ import annotations

import json
import warnings

import gymnasium as gym
import pytest

from tests.conftest import REFDATA
from toolbench.envs.webshop import shipped_products
from toolbench.mock_services.webshop.catalog import purchase_price
from toolbench.mock_services.webshop.human_goals import NO_ANNOTATION, NO_TYPE, human_goals_from, product_type, words
from toolbench.mock_services.webshop.reward import Goal, get_reward

ENV_ID = "toolbench/WebShop-v0"


def human_goals_file():
    path = REFDATA / "webshop" / "baseline_models" / "data" / "human_goals.json"
    if not path.exists():
        pytest.skip(f"WebShop's human_goals.json is not at {path}")
    return path


def make(**kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gym.make(ENV_ID, **kwargs).unwrapped


@pytest.fixture(scope="module")
def original_env():
    return make(human_goals=human_goals_file())


def buys_target(env, goal):
    """The reward of buying the goal's product with the goal's options chosen."""
    product = env.shop.by_asin[goal["asin"]]
    chosen = {name: next((v for v in values if v in goal["goal_options"]), values[0])
              for name, values in product.options.items()}  # fmt: skip
    return get_reward(product, Goal.from_record(goal), purchase_price(product), chosen, env.shop.nouns).reward


def test_the_original_instruction_file_loads_and_every_instruction_is_counted(original_env):
    report = original_env.goal_report
    assert report.instructions == 12087
    assert report.goals + sum(report.not_matched.values()) == 12087
    assert len(original_env.tasks) == report.goals == report.by_text > 1000
    assert set(report.not_matched) <= {NO_TYPE, "no attribute of a product of its type named"}


def test_every_matched_original_goal_is_earned_in_full_by_its_target(original_env):
    assert all(buys_target(original_env, task.get("goal")) == 1.0 for task in original_env.tasks)


def test_a_matched_goal_keeps_the_text_and_asks_for_what_it_names(original_env):
    for task in original_env.tasks[:200]:
        goal = task.get("goal")
        text = words(goal["human"]["instruction"])
        assert goal["instruction_text"].startswith(goal["human"]["instruction"].strip().strip("."))
        assert all(words(a) in text for a in goal["attributes"])
        product = original_env.shop.by_asin[goal["asin"]]
        assert product.query == product_type(text).query


def test_the_original_file_is_a_task_file_too_and_loads_the_same(original_env):
    path = human_goals_file()
    with pytest.warns(UserWarning, match=r"goals from 12087 human instructions"):
        env = gym.make(ENV_ID, task_file=path).unwrapped
    assert env.split == "human_goals"
    assert [t.get("goal") for t in env.tasks] == [t.get("goal") for t in original_env.tasks]  # deterministic
    observation, _ = env.reset(options={"task_id": env.tasks[5].id})
    assert env.tasks[5].get("goal")["instruction_text"] in observation


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("i need a pair of men's running shoes in size 10", "men's running shoes"),
        ("looking for a blue t-shirt", "t-shirt"),
        ("i want an apple watch screen protector", "screen protector"),  # the longest name, not "watch"
        ("i need sulfate free shampoos", "shampoo"),  # plural
        ("a lamp for my floor", "floor lamp"),  # all of the type's nouns
        ("a garden hose", None),
    ],
)
def test_product_types_are_read_from_the_text(text, kind):
    found = product_type(words(text))
    assert (found.name if found else None) == kind


def test_items_human_ins_entries_load_by_asin_or_by_text(tmp_path):
    products = shipped_products()
    held = next(p for p in products if p.query == "shampoo" and len(p.options) >= 1)
    values = next(iter(held.options.values()))
    human = {
        held.asin: [
            {"instruction": "i need shampoo.", "instruction_attributes": [held.attributes[0]], "instruction_options": []},
            {"instruction": "no attributes", "instruction_attributes": [], "instruction_options": []},
        ],
        "B0ORIGINAL": [  # an asin of the original catalog: matched by text and annotation
            {"instruction": f"i want a {held.attributes[1]} shampoo", "instruction_attributes": [held.attributes[1]],
             "instruction_options": [values[-1].upper()]},
            {"instruction": "a garden hose that is long", "instruction_attributes": ["long"], "instruction_options": []},
        ],
    }  # fmt: skip
    goals, report = human_goals_from(products, human)
    assert (report.instructions, report.by_asin, report.by_text) == (4, 1, 1)
    assert report.not_matched == {NO_ANNOTATION: 1, NO_TYPE: 1}
    direct = next(g for g in goals if "annotation" not in g.get("human", {}) and g["asin"] == held.asin)
    assert direct["instruction_text"].startswith("i need shampoo") and "shampoo." not in direct["instruction_text"]
    matched = next(g for g in goals if g.get("human", {}).get("asin") == "B0ORIGINAL")
    assert matched["query"] == "shampoo" and held.attributes[1] in matched["attributes"]
    assert values[-1] in matched["goal_options"]  # the annotated option, upper case in the file, by fuzzy ratio
    (tmp_path / "items_human_ins.json").write_text(json.dumps(human))
    with pytest.warns(UserWarning, match="2 goals from 4 human instructions"):
        env = gym.make(ENV_ID, human_goals_file=tmp_path / "items_human_ins.json").unwrapped
    assert env.goal_report.goals == len(env.tasks) == 2


def test_files_that_are_not_human_goals_are_refused(tmp_path):
    (tmp_path / "bad.json").write_text(json.dumps({"B0X": {"instruction": "x"}}))
    with pytest.raises(ValueError, match="items_human_ins.json"):
        gym.make(ENV_ID, human_goals_file=tmp_path / "bad.json")
    with pytest.raises(ValueError, match="takes the path"):
        gym.make(ENV_ID, human_goals=True)
    (tmp_path / "none.json").write_text(json.dumps(["a garden hose", "a kite"]))
    with pytest.raises(ValueError, match="no goals over these products"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gym.make(ENV_ID, human_goals=tmp_path / "none.json")
