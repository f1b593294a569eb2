"""The AppBench task generator (toolbench/taskgen/appbench.py): split sizes and categories, AppBench's
statistics, gold plans that run in the env and score 1, determinism, and fresh alignment records."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolbench.core.tasks import task_from_record
from toolbench.envs.appbench import AppBenchEnv
from toolbench.mock_services.apps.plan import parse_plan, resolve
from toolbench.mock_services.apps.records import gold_calls, gold_plan_text
from toolbench.mock_services.apps.registry import APP_DESCRIPTIONS, by_app
from toolbench.taskgen import appbench, appbench_common

ROOT = Path(__file__).resolve().parents[2]
SPLITS = ("test", "train", "demo", "unseen")
RECORD_KEYS = {"id", "category", "template", "combination", "difficulty", "prompt", "completion", "output"}
OUTPUT_KEYS = {
    "used_app",
    "used_api",
    "result_arguments",
    "api_results",
    "middle_arguments",
    "user_aware_arguments",
}


@pytest.fixture(scope="module")
def files() -> dict[str, str]:
    return appbench.generate()


@pytest.fixture(scope="module")
def records(files: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    return {split: [json.loads(line) for line in files[f"{split}.jsonl"].splitlines()] for split in SPLITS}


def shape(record: dict[str, Any]) -> tuple[int, int, int, int]:
    """Calls, apps, largest connected component and number of components of a record's gold plan."""
    calls = gold_calls(record["output"])
    sizes = appbench_common.components(calls)
    return len(calls), len({c.app for c in calls}), sizes[0], len(sizes)


def play(records: list[dict[str, Any]]) -> list[tuple[str, bool, float]]:
    """Each record's gold plan played in the env (program mode): (id, executed, succ)."""
    tasks = [task_from_record(r, r["id"]) for r in records]
    env = AppBenchEnv(mode="program", tasks=tasks)
    found = []
    for task in tasks:
        env.reset(options={"task_id": task.id})
        _, reward, terminated, _, info = env.step(task.references[0])
        assert terminated
        found.append((task.id, bool(info["executed"]), float(info["succ"])))
        assert reward == info["succ"]
    env.close()
    return found


def test_split_sizes_and_categories(records):
    for split, total in (("test", 800), ("train", 4000), ("demo", 100), ("unseen", 200)):
        rows = records[split]
        assert len(rows) == total
        assert [r["id"] for r in rows] == [f"appbench-{split}-{n:04d}" for n in range(total)]
        for category in appbench.CATEGORIES:
            assert sum(r["category"] == category for r in rows) == total // 4


def test_record_shape(records):
    for split in SPLITS:
        for r in records[split]:
            assert set(r) == RECORD_KEYS
            assert r["difficulty"] == len(r["output"]["used_app"])
            out = r["output"]
            assert set(out) == OUTPUT_KEYS
            n = len(out["used_app"])
            assert len(out["used_api"]) == len(out["result_arguments"]) == len(out["api_results"]) == n
            assert r["completion"] == [gold_plan_text(out)]
            for app, used, returned, line in zip(
                out["used_app"], out["used_api"], out["result_arguments"], out["api_results"], strict=True
            ):
                ((api, values),) = used.items()
                assert returned == list(by_app()[app][api].returns)  # the API's full list, as AppBench writes it
                assert line.startswith(", ".join(returned) + f" = {api}(")
                call = parse_plan(f"{app}: [{line}]")[0]
                assert list(call.args) == sorted(call.args)  # arguments sorted, as in AppBench's data
                assert set(call.args) == set(values)
            assert out["middle_arguments"] == sorted({name for names in out["result_arguments"] for name in names})
            resolve(parse_plan(r["completion"][0]))  # every reference names an earlier call's value


def test_every_literal_is_stated(records):
    """A quoted value of the plan is one the instruction states (user_aware_arguments)."""
    for split in SPLITS:
        for r in records[split]:
            said = r["output"]["user_aware_arguments"]
            for call in parse_plan(r["completion"][0]):
                for name, value in call.args.items():
                    if isinstance(value, str):
                        assert name in said, (r["id"], name)


def test_statistics(records):
    """Calls per task and plan shapes in AppBench's ranges, averages near its own (2.21, 2.73, 3.64)."""
    targets = {"SS": 1.0, "SM": 2.21, "MS": 2.73, "MM": 3.64}
    for split in ("test", "train"):
        for category, target in targets.items():
            rows = [r for r in records[split] if r["category"] == category]
            shapes = [shape(r) for r in rows]
            limits = appbench_common.LIMITS[category]
            for calls, apps, seq, para in shapes:
                assert limits["calls"][0] <= calls <= limits["calls"][1]
                assert limits["apps"][0] <= apps <= limits["apps"][1]
                assert seq <= limits["seq"] and para <= limits["para"]
                if category == "MS":
                    assert apps == calls
                if category == "MM":
                    assert apps < calls
            mean = statistics.mean(s[0] for s in shapes)
            assert abs(mean - target) <= 0.15, (split, category, mean)
        mm = [shape(r) for r in records[split] if r["category"] == "MM"]
        assert 2.2 <= statistics.mean(s[1] for s in mm) <= 2.7
        assert max(s[2] for s in mm) >= 5 and max(s[3] for s in mm) == 3
        ms = [shape(r) for r in records[split] if r["category"] == "MS"]
        assert max(s[2] for s in ms) == 4 and max(s[3] for s in ms) == 4


def test_apps_and_apis_covered(records):
    for split in ("test", "train", "demo"):
        apps = {app for r in records[split] for app in r["output"]["used_app"]}
        assert apps == set(APP_DESCRIPTIONS), split
    apis = {
        (app, next(iter(used)))
        for r in records["train"]
        for app, used in zip(r["output"]["used_app"], r["output"]["used_api"], strict=True)
    }
    assert apis == {(api.app, api.name) for owned in by_app().values() for api in owned.values()}


def test_relative_dates_are_used(records):
    prompts = [r["prompt"] for r in records["test"]]
    for phrase in ("tomorrow", "next ", "the day after tomorrow", "March ", "the 1", "days"):
        assert any(phrase in p for p in prompts), phrase


def test_gold_plans_run_and_score_one(records):
    for split in ("test", "demo", "unseen"):
        for task_id, executed, succ in play(records[split]):
            assert executed and succ == 1.0, task_id


def test_no_instruction_repeats(records):
    prompts = [r["prompt"] for split in SPLITS for r in records[split]]
    assert len(prompts) == len(set(prompts))


def test_generator_is_deterministic(files):
    appbench.splits.cache_clear()
    again = appbench.generate()
    assert again == files
    code = (
        "from toolbench.taskgen import appbench; "
        "import sys; sys.stdout.write(''.join(appbench.generate()['test.jsonl'].splitlines(True)[:5]))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout == "".join(files["test.jsonl"].splitlines(True)[:5])


def test_aligner_records_are_fresh_and_valid(records):
    fresh = appbench.alignment_records(40, "unit")
    assert len(fresh) == 40
    shipped = {r["prompt"] for split in SPLITS for r in records[split]}
    assert not [r for r in fresh if r["prompt"] in shipped]
    assert {r["category"] for r in fresh} == set(appbench.CATEGORIES)
    for r in fresh:
        assert set(r) == RECORD_KEYS and set(r["output"]) == OUTPUT_KEYS
        assert not r["template"].startswith("unseen/") and not appbench.held_out(r["category"], gold_calls(r["output"]))
    assert all(executed and succ == 1.0 for _, executed, succ in play(fresh))
    assert appbench.alignment_records(40, "unit") == fresh
    assert appbench.alignment_records(40, "other")[0]["prompt"] != fresh[0]["prompt"]


@pytest.mark.parametrize("split", ["test", "demo", "train", "unseen"])
def test_every_prompt_names_the_car_type_its_plan_asks_for(split):
    import re

    import toolbench

    unstated = [
        t.id
        for t in toolbench.load_tasks("AppBench", split)
        for kind in re.findall(r"#car_type='([^']+)'", t.references[0])
        if kind.lower() not in t.prompt.lower()
    ]
    assert unstated == []
