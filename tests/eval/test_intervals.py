"""The 95% intervals of compare: Wilson's for rates, a seeded bootstrap for means."""

import math

import numpy as np
import pytest

from toolbench.eval.intervals import Z95, bootstrap_mean, interval, wilson


@pytest.mark.parametrize(("successes", "n"), [(0, 1), (0, 10), (3, 10), (5, 10), (81, 263), (10, 10), (99, 100)])
def test_wilson_bounds_are_where_the_score_test_just_accepts(successes, n):
    low, high = wilson(successes, n)
    p = successes / n
    assert 0.0 <= low <= p <= high <= 1.0
    for bound in (low, high):  # Wilson's interval: the rates p for which |p^ - p| = z * sqrt(p(1 - p) / n)
        if bound not in (0.0, 1.0) or bound == p:
            assert (p - bound) ** 2 == pytest.approx(Z95**2 * bound * (1 - bound) / n, rel=1e-9, abs=1e-12)
    assert (low == 0.0) == (successes == 0) and (high == 1.0) == (successes == n)


def test_wilson_narrows_with_more_trials_and_refuses_none():
    widths = [high - low for low, high in (wilson(n // 2, n) for n in (10, 100, 1000))]
    assert widths[0] > widths[1] > widths[2]
    with pytest.raises(ValueError):
        wilson(0, 0)


def test_the_bootstrap_is_seeded_and_close_to_the_normal_interval_for_many_values():
    values = np.random.default_rng(7).random(2000)
    low, high = bootstrap_mean(values)
    assert bootstrap_mean(values) == (low, high)  # the same values, the same interval
    assert bootstrap_mean(values, seed=1) != (low, high)
    half = Z95 * values.std(ddof=1) / math.sqrt(len(values))
    assert low == pytest.approx(values.mean() - half, abs=half / 10)
    assert high == pytest.approx(values.mean() + half, abs=half / 10)
    assert bootstrap_mean([0.25] * 5) == (0.25, 0.25)
    with pytest.raises(ValueError):
        bootstrap_mean([])


def test_rates_get_wilsons_interval_and_means_the_bootstrap():
    assert interval([1.0, 0.0, 1.0, 1.0]) == wilson(3, 4)
    assert interval([1.0] * 3) == wilson(3, 3)  # all passed: not the zero-width [1, 1] a bootstrap gives
    assert interval([0.5, 0.25, 1.0]) == bootstrap_mean([0.5, 0.25, 1.0])
