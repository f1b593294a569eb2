"""pass^k and pass@k of repeated trials: tau-bench's formulas against brute force, errors, intervals."""

import itertools
import json

import numpy as np
import pytest

from toolbench.eval.harness import EpisodeResult
from toolbench.eval.intervals import bootstrap_mean
from toolbench.eval.trials import bootstrap_rows, format_trials, trial_stats


def episode(task_id, trial, success, task="webshop", category=None, score=None, status=None, error_kind=None):
    return EpisodeResult(
        task=task,
        task_id=task_id,
        category=category,
        success=success,
        score=float(success) if score is None else score,
        executable=True,
        error=None,
        metrics={},
        steps=1,
        trial=trial,
        status=status or ("success" if success else "failure"),
        error_kind=error_kind,
    )


def random_run(seed, tasks=30, trials=(5,), categories=("a", "b")):
    """Tasks of varied difficulty, each played a number of trials drawn from ``trials``."""
    rng = np.random.default_rng(seed)
    episodes = []
    for t in range(tasks):
        p, n = rng.random(), int(rng.choice(trials))
        episodes += [
            episode(f"t{t}", k, bool(rng.random() < p), category=categories[t % len(categories)], score=rng.random())
            for k in range(n)
        ]
    return episodes


def brute_force(episodes, k):
    """pass^k and pass@k by enumerating every k-subset of each task's trials."""
    by_task = {}
    for e in episodes:
        by_task.setdefault(e.task_id, []).append(e.success)
    hats, ats = [], []
    for outcomes in by_task.values():
        subsets = list(itertools.combinations(outcomes, k))
        hats.append(sum(all(s) for s in subsets) / len(subsets))
        ats.append(sum(any(s) for s in subsets) / len(subsets))
    return float(np.mean(hats)), float(np.mean(ats))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_values_equal_brute_force_over_all_k_subsets(seed):
    episodes = random_run(seed, trials=(6,))
    stats = trial_stats(episodes)
    assert stats["k_max"] == 6 and stats["tasks"] == 30
    for k in range(1, 7):
        hat, at = brute_force(episodes, k)
        assert stats["pass_hat_k"][str(k)] == pytest.approx(hat, abs=1e-12)
        assert stats["pass_at_k"][str(k)] == pytest.approx(at, abs=1e-12)
    # pass^k falls and pass@k rises with k
    hats = [stats["pass_hat_k"][str(k)] for k in range(1, 7)]
    ats = [stats["pass_at_k"][str(k)] for k in range(1, 7)]
    assert hats == sorted(hats, reverse=True) and ats == sorted(ats)


def test_k1_is_the_mean_success_and_the_stats_are_json_safe():
    episodes = random_run(3, trials=(4,))
    stats = trial_stats(episodes)
    # with equal trials, k = 1 is the success rate over all episodes
    mean = float(np.mean([e.success for e in episodes]))
    assert stats["pass_hat_k"]["1"] == pytest.approx(mean) == stats["pass_at_k"]["1"]
    assert json.loads(json.dumps(stats)) == stats


def test_unequal_trials_use_each_tasks_own_n_and_k_up_to_the_fewest():
    episodes = random_run(4, trials=(3, 5, 7))
    stats = trial_stats(episodes)
    counts = {}
    for e in episodes:
        counts[e.task_id] = counts.get(e.task_id, 0) + 1
    assert stats["trials"]["min"] == min(counts.values()) == stats["k_max"] == 3
    assert stats["trials"]["max"] == 7 and "k goes only up to 3" in stats["trials"]["note"]
    for k in range(1, 4):
        assert stats["pass_hat_k"][str(k)] == pytest.approx(brute_force(episodes, k)[0], abs=1e-12)
    assert "k goes only up to 3" in format_trials(stats)


def test_one_trial_each_degenerates_to_the_success_rate():
    episodes = [episode(f"t{i}", 0, i % 3 == 0) for i in range(12)]
    stats = trial_stats(episodes)
    assert stats["k_max"] == 1 and list(stats["pass_hat_k"]) == ["1"]
    assert stats["pass_hat_k"]["1"] == stats["pass_at_k"]["1"] == pytest.approx(4 / 12)
    assert stats["spread"]["mixed_tasks"] == 0 and stats["spread"]["mean_score_std"] == 0.0


def test_intervals_hold_the_value_are_seeded_and_are_the_bootstrap_of_the_per_task_values():
    episodes = random_run(5, tasks=60, trials=(4,))
    stats = trial_stats(episodes)
    assert trial_stats(episodes) == stats
    assert trial_stats(episodes, seed=1)["pass_hat_k_interval"] != stats["pass_hat_k_interval"]
    for name in ("pass_hat_k", "pass_at_k"):
        for k, value in stats[name].items():
            low, high = stats[f"{name}_interval"][k]
            assert low <= value <= high and high - low > 0
    # the same draws as intervals.bootstrap_mean of the tasks' pass^2 values
    per_task = {}
    for e in episodes:
        per_task.setdefault(e.task_id, []).append(e.success)
    hat2 = [sum(s) * (sum(s) - 1) / (len(s) * (len(s) - 1)) for s in per_task.values()]
    assert tuple(stats["pass_hat_k_interval"]["2"]) == pytest.approx(bootstrap_mean(hat2))
    rows = np.random.default_rng(0).random((3, 40))
    assert bootstrap_rows(rows) == [pytest.approx(bootstrap_mean(row)) for row in rows]


def test_spread_counts_mixed_tasks_and_the_std_of_scores():
    episodes = [
        *(episode("always", k, True, score=1.0) for k in range(4)),
        *(episode("never", k, False, score=0.0) for k in range(4)),
        *(episode("half", k, k < 2, score=[1.0, 1.0, 0.0, 0.0][k]) for k in range(4)),
    ]
    stats = trial_stats(episodes)
    assert stats["per_task"]["half"] == {"n": 4, "successes": 2, "errors": 0, "score_std": 0.5}
    assert stats["per_task"]["always"]["score_std"] == 0.0
    assert stats["spread"]["mixed_tasks"] == 1 and stats["spread"]["mixed_share"] == pytest.approx(1 / 3)
    assert stats["spread"]["mean_score_std"] == pytest.approx(0.5 / 3)
    # pass^4: only "always"; pass@4: "always" and "half"
    assert stats["pass_hat_k"]["4"] == pytest.approx(1 / 3) and stats["pass_at_k"]["4"] == pytest.approx(2 / 3)


def test_errors_are_failures_by_default_and_can_be_dropped():
    episodes = [
        episode("a", 0, True),
        episode("a", 1, False, status="error", error_kind="timeout"),
        episode("a", 2, True),
        episode("b", 0, False, status="error", error_kind="model"),
        episode("b", 1, False, status="error", error_kind="model"),
        episode("c", 0, True),
        episode("c", 1, True),
    ]
    # an errored episode that somehow says success is still not one
    episodes.append(episode("c", 2, True, status="error", error_kind="infrastructure"))
    counted = trial_stats(episodes)
    assert counted["errors"] == {
        "episodes": 4,
        "tasks": 3,
        "by_kind": {"infrastructure": 1, "model": 2, "timeout": 1},
        "policy": "counted as failures",
    }
    assert counted["per_task"]["a"] == {"n": 3, "successes": 2, "errors": 1, "score_std": pytest.approx(0.4714, 1e-3)}
    assert counted["per_task"]["c"]["successes"] == 2
    assert counted["k_max"] == 2 and counted["pass_hat_k"]["1"] == pytest.approx((2 / 3 + 0 + 2 / 3) / 3)
    dropped = trial_stats(episodes, exclude_errors=True)
    assert dropped["errors"]["policy"] == "dropped from their tasks' trials"
    assert dropped["errors"]["tasks_left_out"] == 1
    assert dropped["tasks"] == 2 and "b" not in dropped["per_task"]
    assert dropped["pass_hat_k"]["1"] == 1.0 and dropped["k_max"] == 2
    assert "errored episodes: 4 of 8 (counted as failures)" in format_trials(counted)
    assert "errored episodes: 4 of 8 (dropped from their tasks' trials)" in format_trials(dropped)


def test_resumed_lines_count_once_the_last_one():
    episodes = [episode("a", 0, False, status="error", error_kind="model"), episode("a", 0, True)]
    stats = trial_stats(episodes)
    assert stats["per_task"]["a"] == {"n": 1, "successes": 1, "errors": 0, "score_std": 0.0}
    assert stats["errors"]["episodes"] == 0


def test_categories_and_envs_are_tabled_apart():
    episodes = random_run(6, tasks=20, trials=(3,), categories=("G1", "G2", None))
    episodes += [episode(f"x{i}", k, k == 0, task="appbench") for i in range(5) for k in range(2)]
    stats = trial_stats(episodes)
    assert set(stats["by_category"]) == {"G1", "G2"}  # no category: skipped
    g1 = [e for e in episodes if e.category == "G1"]
    assert stats["by_category"]["G1"]["pass_hat_k"]["3"] == pytest.approx(brute_force(g1, 3)[0])
    assert set(stats["by_env"]) == {"webshop", "appbench"} and stats["k_max"] == 2
    assert stats["by_env"]["webshop"]["k_max"] == 3 and stats["by_env"]["appbench"]["pass_hat_k"]["2"] == 0.0
    assert "webshop/t0" in stats["per_task"] and "t0" in stats["by_env"]["webshop"]["per_task"]
    text = format_trials(stats)
    assert text.startswith("webshop: 20 tasks x 3 trials") and "\n\nappbench: 5 tasks x 2 trials" in text
    assert "pass^k [95%]" in text and "mixed outcomes:" in text
    assert format_trials({"webshop": stats["by_env"]["webshop"]}) == text.split("\n\n")[0]


def test_a_custom_success_and_no_episodes():
    episodes = [episode(f"t{i}", k, True, score=0.25 * k) for i in range(3) for k in range(4)]
    stats = trial_stats(episodes, success=lambda e: e.score >= 0.5)
    assert stats["pass_hat_k"]["1"] == 0.5 and stats["pass_hat_k"]["3"] == 0.0 and stats["pass_at_k"]["3"] == 1.0
    empty = trial_stats([])
    assert empty["tasks"] == 0 and empty["pass_hat_k"] == {} and "no task has a counted trial" in format_trials(empty)
