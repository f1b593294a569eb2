"""``import toolbench`` stays light: no Gymnasium, NumPy, env module or heavy library until an env is
made, and the env ids are still registered whenever Gymnasium is."""

import subprocess
import sys

HEAVY = (
    "numpy",
    "gymnasium",
    "pandas",
    "gspread",
    "pybullet",
    "bm25s",
    "openai",
    "matplotlib",
    "starlette",
    "uvicorn",
    "flask",
    "requests",
    "toolbench.envs",
    "toolbench.core.env",
)


def run_python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_import_toolbench_loads_no_heavy_module():
    loaded = run_python(f"import sys, toolbench; print(sorted(m for m in sys.modules if m.startswith({HEAVY!r})))")
    assert loaded == "[]"


def test_ids_registered_when_gymnasium_comes_after_toolbench():
    code = (
        "import toolbench, gymnasium as gym;"
        "print(all(spec.env_id in gym.registry for spec in toolbench.TASKS), 'toolbench/Remote-v0' in gym.registry,"
        " gym.make('toolbench/CatAPI-v0').reset(seed=0)[1]['task_id'].startswith('catapi-test'))"
    )
    assert run_python(code) == "True True True"


def test_ids_registered_when_gymnasium_comes_first_or_alone():
    before = "import gymnasium as gym, toolbench; print(gym.registry['toolbench/Tabletop-v0'].entry_point)"
    assert run_python(before) == "toolbench.envs.tabletop:TabletopEnv"
    alone = "import gymnasium as gym; print(type(gym.make('toolbench:toolbench/OpenWeather-v0').unwrapped).__name__)"
    assert run_python(alone) == "OpenWeatherEnv"


def test_gymnasium_keeps_its_own_loader_after_the_hook():
    code = "import toolbench, gymnasium; print(type(gymnasium.__spec__.loader).__name__, type(gymnasium.__loader__).__name__)"
    assert run_python(code) == "SourceFileLoader SourceFileLoader"


def test_lazy_names_resolve():
    code = "import toolbench; print(toolbench.Task.__name__, toolbench.BatchedVectorEnv.__name__, toolbench.read_task_file.__name__)"
    assert run_python(code) == "Task BatchedVectorEnv read_task_file"
