"""The headline numbers of a ``make bench`` run, each beside its floor, as one table (``run_all.py``
prints it last; ``python benchmarks/summary.py`` prints it again from ``results/latest.json``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _floor_rows(results: dict[str, Any]) -> list[tuple[str, float, float, float]]:
    rows = []
    for key, row in results.get("text_envs", {}).get("episodes_and_floor", {}).items():
        rows.append((key, row["episodes_per_s"], row["floor_per_s"], row["cost_over_floor"]))
    for mode, row in results.get("virtualhome", {}).items():
        rows.append((f"VirtualHome/{mode}", row["episodes_per_s"], row["floor_per_s"], row["cost_over_floor"]))
    return rows


def _print_serve_scale(scale: dict[str, Any]) -> None:
    """Steps per second and step p99 per server and transport, N down the side; sessions not held shown."""
    columns = [("toolbench", "ws"), ("toolbench", "http"), ("openenv-core", "ws")]
    rows = {(r["server"], r["transport"], r["sessions"]): r for r in scale.get("rows", [])}
    counts = sorted({r["sessions"] for r in scale.get("rows", [])})
    if not counts:
        return
    floor = scale.get("floors", {}).get("steps_per_s", 0)
    print(f"\nserve env, {scale['task']}: N sessions at once, steps/s and p99 ms "
          f"(one env, no server: {floor:,.0f} per CPU s)")  # fmt: skip
    print(f"{'N':>5} " + " ".join(f"{server + ' ' + via:>24}" for server, via in columns))
    for count in counts:
        cells = []
        for server, via in columns:
            row = rows.get((server, via, count), {})
            if "steps_per_s" not in row:
                cells.append("n/a")
                continue
            lost = "" if row["held"] == count else f", {count - row['held']} lost"
            cells.append(f"{row['steps_per_s']:,.0f}/s {row['p99_ms'] or 0:,.0f} ms{lost}")
        print(f"{count:5d} " + " ".join(f"{cell:>24}" for cell in cells))


def _print_serve_fairness(fairness: dict[str, Any]) -> None:
    phases = fairness.get("phases", {})
    alone = phases.get("alone", {}).get("light", {})
    if not alone:
        return
    budget = fairness["budget_s"]
    print(f"\nserve env fairness, {fairness['task']}: {fairness['light']} light sessions' step p99 alone "
          f"{alone['p99_ms']:,.0f} ms (target at most 2x beside {fairness['bad']} bad sessions; "
          f"no step over {budget:g} + 0.5 s)")  # fmt: skip
    for name, phase in phases.items():
        if name == "alone" or "na" in phase:
            continue
        light = phase["light"]
        ratio = "no light step answered" if phase["p99_over_alone"] is None else f"{phase['p99_over_alone']:.2f}x"
        p99 = "-" if light["p99_ms"] is None else f"{light['p99_ms']:,.0f} ms"
        print(
            f"  beside {name:5}: p99 {p99} ({ratio}), longest step {phase['longest_step_s']:.2f} s"
            f"{'' if phase['within_targets'] else '  OVER'}"
        )


def print_summary(results: dict[str, Any]) -> None:
    print(f"{'env/mode':26} {'episodes/s':>10} {'floor/s':>9} {'cost/floor':>10}  (target at most 2)")
    for key, rate, floor, ratio in _floor_rows(results):
        if key.endswith("(hub calls alone)"):  # RapidAPI beside the earlier runs' floor, for comparison
            print(f"{'  beside hub calls alone':26} {rate:10,.0f} {floor:9,.0f} {ratio:9.2f}x  (earlier runs' floor)")
            continue
        print(f"{key:26} {rate:10,.0f} {floor:9,.0f} {ratio:9.2f}x{'' if ratio <= 2 else '  OVER'}")
    sheets = results.get("sheets_sandbox")
    if sheets:
        old = sheets.get("pre_sandbox", {})
        versus = (
            f"; pre-sandbox code {old['warm']}/s warm, {old['cold']}/s cold: now {sheets['speedup_warm']}x warm, "
            f"{sheets['speedup_cold']}x cold"
            if "speedup_warm" in sheets
            else f"; pre-sandbox code not measured ({old.get('skipped', 'absent')})"
        )
        print(
            f"GoogleSheets/program      {sheets['env_warm_per_s']:10,.1f} warm, empty sandbox run "
            f"{sheets['empty_run_per_s']}/s{versus}"
        )
    instance_rows = results.get("env_instances", {}).items()
    instances = {k: v for k, v in instance_rows if isinstance(v, dict) and "marginal_ms" in v}
    if instances:
        targets = "(targets < 5 ms, < 1 MB, < 300 MB)"
        print(f"\n{'task':13} {'next env ms':>11} {'next env MB':>11} {'64 envs MB':>10}  {targets}")
        for task, row in instances.items():
            if task == "pybullet_client_floor":
                continue
            print(f"{task:13} {row['marginal_ms']:11.2f} {row['marginal_mb']:11.3f} {row['total_mb']:10.1f}")
        floor = results["env_instances"].get("pybullet_client_floor")
        if floor:
            print(f"{'(a PyBullet client alone)':25} {floor['marginal_ms']:.2f} ms {floor['marginal_mb']:.3f} MB")
    cli = results.get("agent", {}).get("cli", {})
    if "import_toolbench_ratio" in cli:
        print(
            f"\nimport toolbench {cli['import_toolbench_s']:.3f} s, "
            f"empty interpreter {cli['empty_interpreter_s']:.3f} s: "
            f"{cli['import_toolbench_ratio']}x (target at most 3)"
        )
    if "serve_scale" in results:
        _print_serve_scale(results["serve_scale"])
    if "serve_fairness" in results:
        _print_serve_fairness(results["serve_fairness"])
    vector_rows = results.get("text_envs", {}).get("vector_envs", {}).items()
    vectors = {k: v for k, v in vector_rows if isinstance(v, dict) and "batched_ratio" in v}
    if vectors:
        print(f"\n{'vector env (128 on 2)':26} {'batch/2 procs':>13} {'pinned/2 pinned':>15} {'best/1 env':>10}")
        for key, row in vectors.items():
            print(
                f"{key:26} {row['batched_ratio']:13.2f} {row['batched_pinned_ratio']:15.2f} "
                f"{row['batched_over_one_env']:10.2f}"
            )


if __name__ == "__main__":
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "results" / "latest.json"
    print_summary(json.loads(path.read_text()))
