"""OpenWeather and The Cat API: in-process episode steps per second versus real curl to the served fake.

In-process: reset + one oracle step (parse, route through the Werkzeug test client, score against
the cached reference), episodes over the whole test split, repeated for a fixed wall time.
Real curl: the same requests sent by the curl binary to ``ServedApp`` on 127.0.0.1, one process per
call, as the original harness would do against the live APIs.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from typing import Any

import gymnasium as gym

import toolbench
from toolbench.core.transport import ServedApp
from toolbench.mock_services import create_service_app

SERVICES = {"OpenWeather": "openweather", "CatAPI": "catapi"}


def in_process_steps_per_second(task_name: str, seconds: float = 3.0) -> float:
    env = gym.make(f"toolbench/{task_name}-v0")
    tasks = toolbench.load_tasks(task_name)
    for task in tasks:  # warm the reference cache, as any run longer than one pass does
        env.reset(options={"task_id": task.id})
        env.step(task.references[0])
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for task in tasks:
            env.reset(options={"task_id": task.id})
            env.step(task.references[0])
            steps += 1
    return steps / (time.perf_counter() - start)


def curl_calls_per_second(task_name: str, calls: int = 100) -> float | None:
    curl = shutil.which("curl")
    if curl is None:
        return None
    env = gym.make(f"toolbench/{task_name}-v0").unwrapped
    tasks = toolbench.load_tasks(task_name)
    host = env.service_host
    with ServedApp(create_service_app(SERVICES[task_name])) as served:
        start = time.perf_counter()
        for index in range(calls):
            request = env.parse_action(tasks[index % len(tasks)].references[0]).request
            args = [curl, "-s", "-X", request.method, request.url.replace(f"https://{host}", served.url)]
            for name, value in request.headers:
                if name.lower() != "host":
                    args += ["-H", f"{name}: {value}"]
            if request.body:
                args += ["--data-binary", request.body.decode("utf-8")]
            subprocess.run(args, capture_output=True, check=True, timeout=30)
        return calls / (time.perf_counter() - start)


def main() -> dict[str, Any]:
    results: dict[str, Any] = {}
    for task_name in SERVICES:
        in_process = in_process_steps_per_second(task_name)
        curl = curl_calls_per_second(task_name)
        results[task_name] = {
            "in_process_steps_per_s": round(in_process, 1),
            "real_curl_calls_per_s": round(curl, 1) if curl else None,
        }
        ratio = f" ({in_process / curl:.0f}x)" if curl else ""
        print(
            f"{task_name:12s} in-process {in_process:8.1f} steps/s   real curl to served fake "
            f"{curl or float('nan'):7.1f} calls/s{ratio}"
        )
    return results


if __name__ == "__main__":
    main()
