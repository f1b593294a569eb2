"""Run every benchmark and save the numbers to ``benchmarks/results/latest.json`` (``make bench``)."""

from __future__ import annotations

import json
import os
import platform
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_agent  # noqa: E402
import bench_appbench  # noqa: E402
import bench_code_tasks  # noqa: E402
import bench_dfsdt  # noqa: E402
import bench_env_instances  # noqa: E402
import bench_episodes  # noqa: E402
import bench_rapidapi  # noqa: E402
import bench_rapidapi_serve  # noqa: E402
import bench_rest_tasks  # noqa: E402
import bench_serve_env_load  # noqa: E402
import bench_serve_fairness  # noqa: E402
import bench_serve_load  # noqa: E402
import bench_serve_scale  # noqa: E402
import bench_sheets_api  # noqa: E402
import bench_sheets_sandbox  # noqa: E402
import bench_tabletop  # noqa: E402
import bench_text_envs  # noqa: E402
import bench_virtualhome  # noqa: E402
import bench_webshop  # noqa: E402
from summary import print_summary  # noqa: E402

BENCHMARKS = {
    "episodes": bench_episodes.main,
    "text_envs": bench_text_envs.main,
    "rest_tasks": bench_rest_tasks.main,
    "serve_load": bench_serve_load.main,
    "serve_env_load": bench_serve_env_load.main,
    "serve_scale": bench_serve_scale.main,
    "serve_fairness": bench_serve_fairness.main,
    "tabletop": bench_tabletop.main,
    "sheets_api": bench_sheets_api.main,
    "agent": bench_agent.main,
    "env_instances": bench_env_instances.main,
    "code_tasks": bench_code_tasks.main,
    "sheets_sandbox": lambda: bench_sheets_sandbox.main([]),
    "virtualhome": bench_virtualhome.main,
    "webshop": bench_webshop.main,
    "appbench": bench_appbench.main,
    "rapidapi": bench_rapidapi.main,
    "rapidapi_serve": bench_rapidapi_serve.main,
    "dfsdt": bench_dfsdt.main,
}
try:  # the ray extra
    import bench_ray_vector  # noqa: E402
    import ray  # noqa: F401

    BENCHMARKS["ray_vector"] = bench_ray_vector.main
except ImportError:
    pass


def main() -> None:
    machine = {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()}
    results = {"machine": machine}
    for name, run in BENCHMARKS.items():
        print(f"== {name}")
        results[name] = run()
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    (out / "latest.json").write_text(json.dumps(results, indent=2) + "\n")
    print(f"saved {out / 'latest.json'}")
    print("\n== summary")
    print_summary(results)


if __name__ == "__main__":
    main()
