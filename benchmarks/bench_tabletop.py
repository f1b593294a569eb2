"""Tabletop simulator speed: one pick-and-place, simulated time per wall second, and a full
reference run over 105 sampled cases (7 per template), each built, solved and checked.

Run: ``python benchmarks/bench_tabletop.py``. ``main()`` returns the numbers, as the other
benchmarks do, so ``run_all.py`` can add them.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

from toolbench.mock_services.tabletop import (
    TEMPLATE_IDS,
    TabletopSim,
    check,
    make_agent_api,
    reference_program,
    sample_layout,
)

SCENE = {
    "red block": (-0.1, -0.4),
    "blue block": (0.1, -0.6),
    "green bowl": (0.1, -0.4),
    "yellow block": (-0.12, -0.62),
}
CASES_PER_TEMPLATE = 7


def pick_place_timing(repeats: int = 12) -> dict[str, float]:
    """Move the red block back and forth between the blue block and a corner."""
    sim = TabletopSim(list(SCENE), SCENE)
    walls, sims = [], []
    targets = [lambda: sim.get_obj_pos("blue block")[:2], lambda: np.array([-0.25, -0.25])]
    for index in range(repeats):
        place = targets[index % 2]()
        start = time.perf_counter()
        result = sim.pick_place(sim.get_obj_pos("red block")[:2], place)
        walls.append(time.perf_counter() - start)
        sims.append(result.sim_seconds)
        assert result.clean, result
    sim.close()
    return {
        "pick_place_wall_s_median": statistics.median(walls),
        "pick_place_sim_s_median": statistics.median(sims),
        "sim_to_wall_ratio": sum(sims) / sum(walls),
    }


def reference_run(cases_per_template: int = CASES_PER_TEMPLATE) -> dict[str, Any]:
    successes, clean, sim_seconds = 0, 0, 0.0
    start = time.perf_counter()
    for template_id in TEMPLATE_IDS:
        rng = np.random.default_rng(sum(map(ord, template_id)) + 1000)
        for _ in range(cases_per_template):
            layout = sample_layout(template_id, rng)
            sim = TabletopSim(layout.objects, layout.positions)
            program = reference_program(template_id, layout.variables, layout.objects, layout.positions)
            exec(program, make_agent_api(sim))  # a benchmark of our own programs, not agent code
            ok, _ = check(template_id, layout.variables, layout.objects, layout.positions, sim.positions())
            successes += ok
            clean += not sim.events
            sim_seconds += sim.sim_time
            sim.close()
    wall = time.perf_counter() - start
    cases = cases_per_template * len(TEMPLATE_IDS)
    return {
        "cases": cases,
        "success_rate": successes / cases,
        "collision_free_rate": clean / cases,
        "wall_s": wall,
        "sim_s": sim_seconds,
        "sim_to_wall_ratio": sim_seconds / wall,
    }


def main() -> dict[str, Any]:
    single = pick_place_timing()
    print(
        f"pick_place: {single['pick_place_wall_s_median'] * 1000:.0f} ms wall (median) for "
        f"{single['pick_place_sim_s_median']:.2f} s simulated; {single['sim_to_wall_ratio']:.0f}x real time"
    )
    run = reference_run()
    print(
        f"reference run: {run['cases']} cases in {run['wall_s']:.1f} s wall ({run['sim_s']:.0f} s simulated, "
        f"{run['sim_to_wall_ratio']:.0f}x real time); success {run['success_rate']:.3f}, "
        f"collision-free {run['collision_free_rate']:.3f}"
    )
    return {"pick_place": single, "reference_run": run}


if __name__ == "__main__":
    main()
