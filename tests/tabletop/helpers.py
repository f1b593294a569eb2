"""Shared helpers for the Tabletop backend tests."""

from __future__ import annotations

from pathlib import Path

REFDATA = Path(__file__).resolve().parents[2].parent / "shared" / "refdata"
CAP_DIR = REFDATA / "sambanova_toolbench" / "extracted" / "evaluator" / "code_as_policies_env"

# A small scene used across tests: two blocks, a bowl, room around each.
SCENE = {
    "red block": (-0.1, -0.4),
    "blue block": (0.1, -0.6),
    "green bowl": (0.1, -0.4),
    "yellow block": (-0.12, -0.62),
}


def rounded(positions: dict, digits: int = 4) -> dict:
    return {name: tuple(round(float(v), digits) for v in xyz) for name, xyz in positions.items()}
