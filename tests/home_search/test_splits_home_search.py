"""Home Search's train and unseen splits: the oracle solves them, a parser of the seen phrasings
solves test but not unseen, and the parts every task shares earn no reward."""

import re
from statistics import mean

import gymnasium as gym
import pytest

import toolbench
from tests.episodes import assert_the_oracle_solves, play, solved_share
from toolbench.taskgen.home_search import CITIES, TYPE_WORDS

ENV_ID = "toolbench/HomeSearch-v0"
CITY = re.compile(r"\b(?:in|to) (" + "|".join(re.escape(c) for c, *_ in CITIES) + r")\b")
TYPES = {words: kind for kind, words in TYPE_WORDS.items()}
AMOUNT = r"\$([\d,]+)"
# (pattern, program lines from its groups): the demo and train phrasings of each criterion.
CRITERIA = [
    (r"(\d+) bedroom", lambda g: [f"API.set_num_beds({g[0]})"]),
    (r"([\d.]+) bath", lambda g: [f"API.set_num_baths({float(g[0]):g})"]),
    (
        rf"price (?:between|from) {AMOUNT} (?:and|to) {AMOUNT}",
        lambda g: [f"API.set_min_price({_n(g[0])})", f"API.set_max_price({_n(g[1])})"],
    ),
    (rf"(?:budget of|maximum price of|price of at most) {AMOUNT}", lambda g: [f"API.set_max_price({_n(g[0])})"]),
    (
        r"([\d,]+) to ([\d,]+) square feet",
        lambda g: [f"API.set_min_square_feet({_n(g[0])})", f"API.set_max_square_feet({_n(g[1])})"],
    ),
    (r"at least ([\d,]+) (?:square feet|sq ft)", lambda g: [f"API.set_min_square_feet({_n(g[0])})"]),
    (r"no more than ([\d,]+) square feet", lambda g: [f"API.set_max_square_feet({_n(g[0])})"]),
    (r"(\d+) garage", lambda g: [f"API.set_num_garages({g[0]})"]),
    (r"(a|\d+) swimming pool", lambda g: [f"API.set_num_swimming_pools({_n(g[0])})"]),
    (r"(a|\d+) balcon", lambda g: [f"API.set_num_balconies({_n(g[0])})"]),
    (r"on the (\d+)\w\w floor", lambda g: [f"API.set_floor_number({g[0]})"]),
    (r"commute of at most (\d+) minutes", lambda g: [f"API.set_max_commute_time({g[0]})"]),
]


def _n(text):
    return 1 if text == "a" else int(text.replace(",", ""))


def parse(prompt):
    """The program a regular-expression reader of the seen prompts writes."""
    city = CITY.search(prompt)
    mode = "rent" if re.search(r"\brent\b", prompt) else "buy"
    kinds = sorted({kind for words, kind in TYPES.items() if re.search(rf"\b{re.escape(words)}\b", prompt)})
    if "multi-family home" in prompt or "mobile home" in prompt:
        kinds = [k for k in kinds if k != "house" or " house" in prompt.replace("-family house", "")]
    lines = [f'API.set_location("{city.group(1) if city else ""}")', f'API.set_buy_or_rent("{mode}")']
    lines.append("API.select_home_type([" + ", ".join(f'"{k.title()}"' for k in kinds) + "])")
    for pattern, build in CRITERIA:
        found = re.search(pattern, prompt)
        if found:
            lines += build(found.groups())
    return "\n".join(lines + ["API.search()"])


def success_rate(split, solver):
    env = gym.make(ENV_ID, split=split, disable_env_checker=True)
    return solved_share(env, toolbench.load_tasks("HomeSearch", split), solver)


def test_a_parser_of_the_seen_phrasings_solves_test_but_not_unseen():
    assert success_rate("test", parse) >= 0.8
    assert success_rate("unseen", parse) <= 0.10


@pytest.mark.parametrize("mode", ["program", "interactive"])
def test_the_oracle_solves_unseen_and_a_spread_of_train(mode):
    env = gym.make(ENV_ID, mode=mode, split="unseen")
    assert_the_oracle_solves(env, env.unwrapped.tasks)
    env = gym.make(ENV_ID, mode=mode, split="train")
    tasks = env.unwrapped.tasks
    assert_the_oracle_solves(env, tasks[:: len(tasks) // 50])


@pytest.mark.parametrize("mode", ["program", "interactive"])
@pytest.mark.parametrize("split", ["test", "unseen"])
def test_the_shared_parts_earn_nothing(split, mode):
    """The city and buy or rent, with the task's own values, and a search: ToolBench's F1 pays them
    about half; the reward pays nothing (every task has criteria of its own)."""
    env = gym.make(ENV_ID, mode=mode, split=split)
    results = [play(env, t.id, env.unwrapped.shared_parts_actions(t)) for t in env.unwrapped.tasks]
    assert mean(r[1] for r in results) <= 0.15 and not any(r[4]["success"] for r in results)
    assert mean(r[4]["f1"] for r in results) > 0.4  # what the benchmark's own F1 would have paid


def test_difficulty_counts_the_tasks_own_criteria():
    for task in toolbench.load_tasks("HomeSearch", "unseen"):
        own = [
            line
            for line in task.references[0].splitlines()
            if not line.startswith(("API.set_location", "API.set_buy_or_rent", "API.search"))
        ]
        assert task.get("difficulty") == len(own) >= 3
