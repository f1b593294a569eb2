"""95% confidence intervals of a run's numbers: Wilson's score interval for a rate, a seeded
percentile bootstrap for a mean (the same values give the same interval in every run)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Z95 = 1.959963984540054  # the standard normal's 97.5th percentile
RESAMPLES = 2000
SEED = 0
_CHUNK = 250  # resamples drawn at once: 250 x 4,000 episodes of indices stay near 8 MB


def wilson(successes: float, n: int) -> tuple[float, float]:
    """Wilson's 95% interval of a rate of ``successes`` in ``n`` trials (sound at 0 and n too)."""
    if n <= 0:
        raise ValueError("a rate needs at least one trial")
    p, z2 = successes / n, Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # At 0 and n the bounds are exactly 0 and 1; rounding would leave them a hair inside.
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    return low, 1.0 if successes >= n else min(1.0, centre + half)


def bootstrap_mean(values: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float, float]:
    """The 2.5th and 97.5th percentiles of the means of ``resamples`` resamples of ``values``."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        raise ValueError("a mean needs at least one value")
    rng = np.random.default_rng(seed)
    means = np.concatenate(
        [
            data[rng.integers(0, data.size, size=(min(_CHUNK, resamples - start), data.size))].mean(axis=1)
            for start in range(0, resamples, _CHUNK)
        ]
    )
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def interval(values: Sequence[float]) -> tuple[float, float]:
    """The 95% interval of the mean of per-episode ``values``: Wilson's when every value is 0 or 1
    (the mean is a rate: success, executable, a pass), the bootstrap's otherwise (a score, an F1)."""
    if all(value in (0, 1) for value in values):
        return wilson(sum(values), len(values))
    return bootstrap_mean(values)
