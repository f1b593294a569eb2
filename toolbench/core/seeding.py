"""Stable, process-independent randomness.

Python's ``hash()`` changes with ``PYTHONHASHSEED``; everything that must be identical in every
process (world data, per-task clocks, mock-service noise) derives its numbers from these helpers.
"""

from __future__ import annotations

import hashlib

import numpy as np


def stable_hash(*parts: object) -> int:
    """A 64-bit integer hash of ``parts`` that is the same in every process and on every machine."""
    text = "\x1f".join(str(part) for part in parts)
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")


def stable_uniform(*parts: object) -> float:
    """A float in [0, 1) determined by ``parts``."""
    return stable_hash(*parts) / 2.0**64


def stable_rng(*parts: object) -> np.random.Generator:
    """A numpy Generator seeded from ``parts`` (PCG64, stable across processes)."""
    return np.random.Generator(np.random.PCG64(stable_hash(*parts)))
