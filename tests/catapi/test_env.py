"""toolbench/CatAPI-v0: state-based scoring, equivalent spellings, isolation, hostile actions."""

import json
import subprocess

import gymnasium as gym
import pytest

import toolbench
from toolbench.core.transport import ServedApp
from toolbench.mock_services.catapi import DEMO_API_KEY, CatStore, create_app

ENV_ID = "toolbench/CatAPI-v0"
BASE = "https://api.thecatapi.com/v1"


@pytest.fixture
def env():
    return gym.make(ENV_ID)


def play(env, task_id, action):
    env.reset(options={"task_id": task_id})
    return env.step(action)


def first(category):
    return next(t for t in toolbench.load_tasks("CatAPI") if t.category == category)


@pytest.mark.parametrize("split", ["test", "demo"])
def test_oracle_solves_every_task(split):
    env = gym.make(ENV_ID, split=split)
    for task in toolbench.load_tasks("CatAPI", split):
        _, reward, _, _, info = play(env, task.id, task.references[0])
        assert info["success"] and reward == 1.0, task.id


def test_task_set_covers_the_six_categories():
    tasks = toolbench.load_tasks("CatAPI")
    counts = {}
    for task in tasks:
        counts[task.category] = counts.get(task.category, 0) + 1
        assert task.get("compare_string_only") is False
    assert len(counts) == 6 and min(counts.values()) >= 16
    demos = toolbench.load_tasks("CatAPI", "demo")
    assert sorted(t.category for t in demos) == sorted(list(counts) * 2)


def vote_task():
    task = next(t for t in toolbench.load_tasks("CatAPI") if t.category == "vote" and "sub_id" not in t.references[0])
    body = json.loads(task.references[0].split("--data '", 1)[1].rstrip("'"))
    return task, body["image_id"], body["value"]


def test_equivalent_spellings_of_a_vote_succeed(env):
    task, image, value = vote_task()
    for action in [
        f'curl -X POST \'{BASE}/votes\' --data \'{{"image_id":"{image}", "value":{value}}}\'',
        f'curl \'{BASE}/votes\' -d \'{{"value": {value}, "image_id": "{image}"}}\'',
        f'curl --request POST "{BASE}/votes" -H "Content-Type: application/json" --data-raw \'{{"image_id":"{image}","value":{value}}}\'',
        f'curl -sS {BASE}/votes --json \'{{"image_id":"{image}","value":{value}}}\' -H \'x-api-key: {{API_KEY}}\'',
        f"curl -X POST {BASE}/votes -H 'Content-Type: application/x-www-form-urlencoded' -d image_id={image} -d value={value}",
    ]:
        _, reward, _, _, info = play(env, task.id, action)
        assert info["success"] and reward == 1.0, (action, info)


def test_wrong_votes_fail(env):
    task, image, value = vote_task()
    for action in [
        f'curl -X POST \'{BASE}/votes\' --data \'{{"image_id":"{image}", "value":{-value}}}\'',
        f'curl -X POST \'{BASE}/votes\' --data \'{{"image_id":"{image}", "value":{value}, "sub_id":"x"}}\'',
        f"curl -X GET '{BASE}/votes'",
    ]:
        _, reward, _, _, info = play(env, task.id, action)
        assert info["executable"] and not info["success"] and reward == 0.0, action
    _, reward, _, _, info = play(env, task.id, f"curl -X POST '{BASE}/votes' --data '{{\"image_id\":\"{image}\"}}'")
    assert not info["executable"] and info["error"] == 'HTTP 400: "value" is required'


def test_deletes_are_compared_by_their_effect(env):
    task = first("delete_favourite")
    favourite_id = task.references[0].rsplit("/", 1)[1].rstrip("'")
    for action in [
        f"curl -X DELETE {BASE}/favourites/{favourite_id}",
        f"curl --request DELETE '{BASE}/favourites/{favourite_id}' -sSL",
    ]:
        assert play(env, task.id, action)[4]["success"]
    _, _, _, _, info = play(env, task.id, f"curl -X DELETE {BASE}/favourites/1")
    assert not info["executable"] and "INVALID_ACCOUNT" in info["error"]


def test_every_episode_starts_from_the_same_account(env):
    listing = first("list_favourites")
    deletion = first("delete_favourite")
    before, *_ = play(env, listing.id, f"curl {BASE}/favourites")
    play(env, deletion.id, deletion.references[0])
    assert env.unwrapped.get_state()["backend"] != CatStore.with_account(DEMO_API_KEY).snapshot()
    after, _, _, _, info = play(env, listing.id, f"curl {BASE}/favourites")
    assert after == before


def test_snapshot_carries_the_account_state(env):
    task = first("add_favourite")
    play(env, task.id, task.references[0])
    snapshot = env.unwrapped.get_state()
    other = gym.make(ENV_ID).unwrapped
    other.set_state(snapshot)
    assert other._store.snapshot() == env.unwrapped._store.snapshot()
    image_id = json.loads(task.references[0].split("--data '", 1)[1].rstrip("'"))["image_id"]
    assert any(f["image_id"] == image_id for f in other._store.snapshot()["accounts"][DEMO_API_KEY]["favourites"])


def test_compare_string_only_records_compare_canonical_requests(tmp_path):
    record = {
        "prompt": "Remove the image tu from my favorites.",
        "compare_string_only": True,
        "completion": [f"curl -X DELETE '{BASE}/favourites/tu'"],
    }
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps(record) + "\n")
    env = gym.make(ENV_ID, task_file=str(path))
    task_id = env.unwrapped.tasks[0].id
    for action, success in [
        (f"curl --request DELETE {BASE}/favourites/tu", True),
        (f"curl -X DELETE '{BASE}/favourites/tu/'", True),
        (f"curl -X DELETE '{BASE}/favourites/tv'", False),
        (f"curl -X GET '{BASE}/favourites/tu'", False),
    ]:
        assert play(env, task_id, action)[4]["success"] is success, action


def test_compare_string_only_bodies_compare_by_their_fields(tmp_path):
    record = {
        "prompt": "Vote up the image abc.",
        "compare_string_only": True,
        "completion": [
            f"curl -X POST '{BASE}/votes' -H 'Content-Type: application/json' -d '{{\"image_id\": \"abc\", \"value\": 1}}'"
        ],
    }
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps(record) + "\n")
    env = gym.make(ENV_ID, task_file=str(path))
    task_id = env.unwrapped.tasks[0].id
    for action, success in [
        (f"curl -X POST '{BASE}/votes' -d 'value=1&image_id=abc'", True),  # the service reads both alike
        (f'curl \'{BASE}/votes/\' --json \'{{"value": "1", "image_id": "abc"}}\'', True),
        (f"curl -X POST '{BASE}/votes' -d 'value=-1&image_id=abc'", False),
        (f'curl -X POST \'{BASE}/votes\' --json \'{{"image_id": ["abc"], "value": 1}}\'', False),
    ]:
        assert play(env, task_id, action)[4]["success"] is success, action


HOSTILE = [
    f"curl -X DELETE '{BASE}/favourites/232401017' && curl -X DELETE '{BASE}/votes/1160452'",
    f"curl -X POST {BASE}/favourites -d @/etc/passwd",
    f'curl -X POST \'{BASE}/favourites\' --data "{{\\"image_id\\":\\"$(id)\\"}}"',
    "curl 'https://api.thedogapi.com/v1/favourites'",
    "curl gopher://api.thecatapi.com/",
    "\x00" * 10_000,
]


@pytest.mark.parametrize("action", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_actions_change_nothing(env, action):
    task = first("list_favourites")
    env.reset(options={"task_id": task.id})
    before = env.unwrapped.get_state()["backend"]
    obs, reward, _, _, info = env.step(action)
    assert obs.startswith("Error:") and reward == 0.0 and not info["executable"]
    assert env.unwrapped.get_state()["backend"] == before
    assert play(env, task.id, task.references[0])[4]["success"]


def test_real_curl_against_served_fake(curl_binary):
    store = CatStore.with_account(DEMO_API_KEY)
    with ServedApp(create_app(store)) as served:

        def curl(*args):
            result = subprocess.run(
                [curl_binary, "-s", "-H", f"x-api-key: {DEMO_API_KEY}", *args],
                capture_output=True,
                timeout=30,
                check=True,
            )
            return json.loads(result.stdout)

        favourites = curl(f"{served.url}/v1/favourites")
        env = gym.make(ENV_ID)
        in_process, *_ = play(env, first("list_favourites").id, f"curl {BASE}/favourites")
        assert favourites == json.loads(in_process)
        created = curl(
            "-X",
            "POST",
            f"{served.url}/v1/votes",
            "-H",
            "Content-Type: application/json",
            "-d",
            '{"image_id":"hdw","value":1}',
        )
        assert created["message"] == "SUCCESS" and created["value"] == 1
        assert curl(f"{served.url}/v1/votes?order=DESC&limit=1")[0]["id"] == created["id"]


def test_listings_earn_nothing_for_the_entries_every_listing_starts_with(tmp_path):
    records = [
        {"id": "oldest", "prompt": "Show my 3 oldest favourites.", "completion": [f"curl '{BASE}/favourites?limit=3'"]},
        {
            "id": "newest",
            "prompt": "Show my 3 newest favourites.",
            "completion": [f"curl '{BASE}/favourites?order=DESC&limit=3'"],
        },
    ]
    path = tmp_path / "tasks.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    env = gym.make(ENV_ID, task_file=str(path))
    # The 3 oldest are the first 3 of any listing in the default order: ToolBench's F1 pays them.
    *_, info = play(env, "oldest", f"curl '{BASE}/favourites?limit=4'")
    assert info["f1"] == pytest.approx(6 / 7) and info["score"] == 0.0 and not info["success"]
    *_, info = play(env, "oldest", f"curl '{BASE}/favourites'")
    assert info["f1"] > 0.3 and info["score"] == 0.0
    # The newest depend on the order asked for: five of them hold the three.
    *_, info = play(env, "newest", f"curl '{BASE}/favourites?order=DESC&limit=5'")
    assert info["f1"] == info["score"] == pytest.approx(0.75)
    *_, info = play(env, "newest", f"curl '{BASE}/favourites?limit=3'")
    assert info["score"] == 0.0


@pytest.mark.parametrize("split", ["test", "unseen"])
def test_the_request_kind_with_fixed_values_earns_almost_nothing(split):
    env = gym.make(ENV_ID, split=split).unwrapped
    results = [(task, play(env, task.id, env.shared_parts_actions(task)[0])[4]) for task in env.tasks]
    assert sum(info["score"] for _, info in results) / len(results) <= 0.15
    # It succeeds only where the whole answer is the request kind: "list all my votes".
    plain = {task.id for task, _ in results if task.references[0] == env.shared_parts_actions(task)[0]}
    assert {task.id for task, info in results if info["success"]} == plain
    assert len(plain) <= 0.10 * len(results)
