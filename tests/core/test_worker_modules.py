"""The clean worker imports the env modules it is given: the code envs pass the ones the catalog marks as running code."""

import importlib

import toolbench
from toolbench.core import sandbox
from toolbench.core.worker import WorkerServer
from toolbench.envs import CODE_ENV_MODULES


def test_the_code_envs_list_exactly_the_modules_of_the_tasks_the_catalog_marks_as_running_code():
    for spec in toolbench.TASKS:
        module = importlib.import_module(spec.module)
        assert spec.runs_code == hasattr(module, "code_names"), spec.name
    assert set(CODE_ENV_MODULES) == {spec.module for spec in toolbench.TASKS if spec.runs_code}


def test_only_the_worker_s_modules_and_the_sandbox_may_name_code_side_functions():
    assert sandbox.import_dotted("toolbench.core.sandbox:no_names", CODE_ENV_MODULES) is sandbox.no_names
    assert sandbox.import_dotted("toolbench.envs.sheets:code_names", CODE_ENV_MODULES).__name__ == "code_names"
    refused = ("toolbench.envs.webshop:WebShopEnv", "os:system", "toolbench.catalog:TASKS", "toolbench.envs.sheets:x")
    for path, modules in [(path, CODE_ENV_MODULES) for path in refused[:3]] + [(refused[3], ())]:
        try:
            sandbox.import_dotted(path, modules)
        except ValueError:
            continue
        raise AssertionError(f"{path} was imported with {modules}")


def test_a_worker_without_a_run_s_module_is_replaced_by_one_that_also_has_the_old_one_s():
    before = WorkerServer.get()
    server = WorkerServer.get(("toolbench.envs",))
    assert server.modules[-1] == "toolbench.envs" and set(before.modules) <= set(server.modules)
    assert (server is before) == ("toolbench.envs" in before.modules)
    assert WorkerServer.get() is server and WorkerServer.get(server.modules[:1]) is server
    result = sandbox.run_in_worker(
        "result = 6 * 7", "toolbench.core.sandbox:no_names", "toolbench.core.sandbox:result_variable", lambda k, p: None
    )
    assert result.ok and result.payload == 42, result.error
