"""The cost of running agent code safely, next to running the same code in-process (the floor).

- Tabletop: the 105 test references through the env (clean worker, kernel layers, every API call
  served by the env's simulator), and the same programs exec'd in-process on a simulator of the
  same layouts;
- Google Sheets: the 70 test references through the env in program mode (cold: each task's first
  episode in the process, scored against the shipped expected workbooks; warm: again; and cold
  from a user's task file, where each reference runs once in the sandbox), and the same programs
  exec'd in-process against the emulator with gspread, on a fresh workbook each.

Our own reference programs are the code here; ``exec`` of them is the benchmark's floor, never
agent code.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import gspread
import gymnasium as gym
import numpy as np
import pandas as pd
from gspread_dataframe import get_as_dataframe, set_with_dataframe

import toolbench
from toolbench.core.transport import Router
from toolbench.core.worker import WorkerServer
from toolbench.envs import CODE_ENV_MODULES
from toolbench.mock_services.sheets import HOSTS, SheetsStore, build_spreadsheet, create_app
from toolbench.mock_services.tabletop import TabletopSim, make_agent_api


def tabletop() -> dict[str, Any]:
    env = gym.make("toolbench/Tabletop-v0").unwrapped
    tasks = env.tasks
    env.reset(options={"task_id": tasks[0].id})
    env.step(tasks[0].references[0])  # start the worker outside the timing
    started = time.perf_counter()
    for task in tasks:
        env.reset(options={"task_id": task.id})
        _, reward, *_ = env.step(task.references[0])
        assert reward == 1.0, task.id
    through_env = time.perf_counter() - started
    sim = TabletopSim()
    started = time.perf_counter()
    for task in tasks:  # one simulator reset per task, as the env does
        layout = env.layout(task)
        sim.reset(layout.objects, layout.positions)
        exec(task.references[0], make_agent_api(sim))  # our reference program: the floor
    in_process = time.perf_counter() - started
    sim.close()
    env.close()
    return {"cases": len(tasks), "env_s": round(through_env, 2), "in_process_s": round(in_process, 2),
            "ratio": round(through_env / in_process, 2)}  # fmt: skip


def sheets() -> dict[str, Any]:
    from toolbench.envs.sheets import SPREADSHEET_TITLE, workbooks

    tasks = toolbench.load_tasks("GoogleSheets")
    WorkerServer.get(CODE_ENV_MODULES)  # start the clean worker outside the timing (once per process)

    def rate(env: Any, played: list[Any]) -> float:
        started = time.perf_counter()
        for task in played:
            env.reset(options={"task_id": task.id})
            _, reward, *_ = env.step(task.references[0])
            assert reward == 1.0, task.id
        return len(played) / (time.perf_counter() - started)

    env = gym.make("toolbench/GoogleSheets-v0").unwrapped
    cold, warm = rate(env, tasks), rate(env, tasks)  # expected workbooks shipped, then also cached
    env.close()
    # A user's task file: no shipped expected workbooks, so each reference runs once, in the sandbox.
    renamed = [dataclasses.replace(task, id=f"user-{task.id}") for task in tasks]
    env = gym.make("toolbench/GoogleSheets-v0", tasks=renamed).unwrapped
    user_cold = rate(env, renamed)
    env.close()
    started = time.perf_counter()
    for task in tasks:
        store = SheetsStore(seed=0)
        name = task.get("question_sheet_name")
        book = build_spreadsheet(
            store, {"title": SPREADSHEET_TITLE, "sheets": [{"title": name, "rows": workbooks()[name]}]}
        )
        client = gspread.Client(auth=None, session=Router({h: create_app(store) for h in HOSTS}).session())
        spreadsheet = client.open_by_key(book.spreadsheet_id)
        names = {"worksheet": spreadsheet.worksheet(name), "sheet": spreadsheet, "pd": pd, "np": np,
                 "get_as_dataframe": get_as_dataframe, "set_with_dataframe": set_with_dataframe}  # fmt: skip
        exec(task.references[0], names)  # our reference program: the floor
    in_process = len(tasks) / (time.perf_counter() - started)
    return {"episodes": len(tasks), "env_cold_per_s": round(cold, 1), "env_warm_per_s": round(warm, 1),
            "env_user_file_cold_per_s": round(user_cold, 1), "in_process_per_s": round(in_process, 1)}  # fmt: skip


def main() -> dict[str, Any]:
    table = tabletop()
    print(
        f"Tabletop references: {table['cases']} through the env in {table['env_s']} s, "
        f"in-process {table['in_process_s']} s ({table['ratio']}x)"
    )
    sheet = sheets()
    print(
        f"Sheets program oracle: {sheet['env_cold_per_s']} episodes/s cold, {sheet['env_warm_per_s']} warm, "
        f"{sheet['env_user_file_cold_per_s']} cold from a user's task file (references run); "
        f"the same programs in-process {sheet['in_process_per_s']}/s"
    )
    return {"tabletop": table, "sheets": sheet}


if __name__ == "__main__":
    main()
