"""The clean worker imports the env modules of the tasks the catalog marks as running code."""

import importlib

import toolbench
from toolbench.core import sandbox


def test_the_catalog_marks_exactly_the_tasks_whose_modules_give_agent_code_its_names():
    for spec in toolbench.TASKS:
        module = importlib.import_module(spec.module)
        assert spec.runs_code == hasattr(module, "code_names"), spec.name
    assert set(sandbox.worker_modules()) == {spec.module for spec in toolbench.TASKS if spec.runs_code}


def test_only_worker_modules_and_the_sandbox_may_name_code_side_functions():
    assert sandbox.import_dotted("toolbench.core.sandbox:no_names") is sandbox.no_names
    for refused in ("toolbench.envs.webshop:WebShopEnv", "os:system", "toolbench.catalog:TASKS"):
        try:
            sandbox.import_dotted(refused)
        except ValueError:
            continue
        raise AssertionError(f"{refused} was imported")
