"""A task of another package joins toolbench through one catalog line.

The toy package is written to a temporary folder: an env class in the shape of the shipped ones, a
generator of its four splits, an empty fixture folder, and a mock service. ``register_task`` adds its
one catalog line; from then on ``python -m toolbench.taskgen toy`` writes its splits, Gymnasium makes it, the env server serves it, ``toolbench serve`` serves its service,
the audit plays its cheap policies on it under the ceilings its class allows, prompts take its
generation settings, and the shared env contract tests pass on it. Nothing of toolbench is touched,
and unregistering leaves the usual catalog.
"""

from __future__ import annotations

import importlib
import importlib.resources
import inspect
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import gymnasium as gym
import pytest

import toolbench
from toolbench.catalog import register_task, unregister_task
from toolbench.core.taskspec import TaskSpec
from toolbench.taskgen import GENERATORS
from toolbench.taskgen.__main__ import main as taskgen_main

PACKAGE = "toolbench_toy_task"
ENV_ID = "toolbench/Toy-v0"

SERVICE = '''
"""The toy word service: ``GET /v1/words?word=W`` answers the word and the word spelled backwards."""

from flask import Flask, jsonify, request

HOST = "api.words.example"
DEMO_API_KEY = "toy-demo-key"


def create_app(api_key: str | None = None) -> Flask:
    app = Flask(__name__)
    accepted = api_key or DEMO_API_KEY

    @app.get("/v1/words")
    def words():
        if request.headers.get("x-api-key") != accepted:
            return jsonify(message="Invalid API key"), 401
        word = request.args.get("word", "")
        if not word.isalpha():
            return jsonify(message="word: one word of letters"), 400
        return jsonify(word=word.lower(), backwards=word.lower()[::-1])

    return app
'''

ENV = '''
"""toolbench/Toy-v0: ask the word service about one word with one curl call."""

from functools import cache
from typing import Any

from toolbench.core.curl_env import CurlProgramEnv
from toolbench.core.env import AuditAllowance
from toolbench.core.transport import HttpRequest, Router

from .service import DEMO_API_KEY, HOST, create_app

API_DOCS = """# The word {word} and the word spelled backwards
curl -X GET 'https://api.words.example/v1/words?word={word}'

Parameters:
word: (required) one word of letters."""


@cache
def _router() -> Router:
    return Router({HOST: create_app()})


class ToyEnv(CurlProgramEnv):
    """Ask a local word service about the word a request names.

    ## Description
    A toy task: the agent reads a request ("look up the word 'apple'") and writes the curl command
    that asks the word service about that word.

    ## Action Space
    Free text (``UnicodeText``). The first line starting with ``curl`` is the call.

    ## Observation Space
    Text: the request after ``reset``; the response body (or an error message) after ``step``.

    ## Rewards
    The F1 between the fields of the call's response and the reference's (``precision``, ``recall``
    and ``f1`` in ``info``); ``success`` is F1 = 1.

    ## Starting State
    A task of the split drawn with the seeded RNG, or named by ``options={"task_id": ...}``.

    ## Episode End
    ``mode="program"``: after one action.

    ## Arguments
    ``gym.make("toolbench/Toy-v0", split="test", mode="program", render_mode=None, max_steps=None)``.
    """

    service_host = HOST
    api_key = DEMO_API_KEY
    generation_max_tokens = 64
    audit_allowances = (
        AuditAllowance("demo_answer", {"score": 0.2}, "the toy's allowance, to show it is read", split="unseen"),
    )

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._router = _router()

    def _episode_router(self) -> Router:
        return self._router

    def _fresh_router(self) -> Router:
        return self._router

    def _prepare(self, request: HttpRequest) -> HttpRequest:
        return request.with_default_header("x-api-key", self.api_key)

    def api_docs(self) -> str:
        return API_DOCS
'''

#: A class whose own task name contradicts its catalog line.
CONTRADICTING = """
from toolbench.core.env import ToolEnv


class ContradictingEnv(ToolEnv):
    task_name = "NotTheLine"
"""

#: The toy's generator: made-up words of three letters, a split's words apart from every other split's;
#: test, demo and train share a template, unseen has a phrasing of its own.
TASKGEN = '''
"""The toy's task sets: ``python -m toolbench.taskgen toy`` writes them into the toy's fixture folder."""

import itertools

from toolbench.taskgen import Files, generator, jsonl

_MADE_UP = ["".join(letters) for letters in itertools.product("bdfgklmnprst", "aeiou", "bdfgklmnprst")]
WORDS = {"test": _MADE_UP[:100], "demo": _MADE_UP[100:106], "train": _MADE_UP[106:156], "unseen": _MADE_UP[156:176]}


def _record(split: str, index: int, word: str) -> dict:
    if split == "unseen":
        template, prompt = "lookup/backwards", f"What does {word} read like from its last letter to its first?"
    else:
        template, prompt = "lookup/plain", f"Look up the word '{word}'."
    return {
        "id": f"toy-{split}-{index:04d}",
        "category": "lookup",
        "prompt": prompt,
        "completion": [f"curl -X GET 'https://api.words.example/v1/words?word={word}'"],
        "template": template,
    }


@generator("toy")
def toy_task_sets() -> Files:
    return {f"{split}.jsonl": jsonl(_record(split, i, w) for i, w in enumerate(words)) for split, words in WORDS.items()}
'''


def _write_package(root: Path) -> None:
    package = root / PACKAGE
    (package / "fixtures" / "toy").mkdir(parents=True)
    (package / "__init__.py").write_text('"""A toy task package."""\n')
    (package / "service.py").write_text(textwrap.dedent(SERVICE))
    (package / "env.py").write_text(textwrap.dedent(ENV))
    (package / "contradicting.py").write_text(textwrap.dedent(CONTRADICTING))
    (package / "taskgen.py").write_text(textwrap.dedent(TASKGEN))
    (package / "fixtures" / "__init__.py").write_text("")


#: The toy's one catalog line.
TOY = TaskSpec(
    "Toy",
    f"{PACKAGE}.env:ToyEnv",
    ("program",),
    ("test", "demo", "train", "unseen"),
    "toy",
    fixture_package=f"{PACKAGE}.fixtures",
    service=f"{PACKAGE}.service:create_app",
    service_key=f"{PACKAGE}.service:DEMO_API_KEY",
    generator=f"{PACKAGE}.taskgen",
)


def _usual_catalog() -> tuple[list[TaskSpec], bool, list[str], list[str]]:
    from toolbench.mock_services import SERVICES
    from toolbench.taskgen import load_generators

    return list(toolbench.TASKS), ENV_ID in gym.registry, list(SERVICES), sorted(load_generators())


def _fixture_files() -> set[Path]:
    """toolbench's fixture files (not the bytecode Python writes beside its modules)."""
    folder = Path(str(importlib.resources.files("toolbench.fixtures")))
    return {path for path in folder.rglob("*") if "__pycache__" not in path.parts}


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TaskSpec]:
    root = tmp_path_factory.mktemp("toy")
    _write_package(root)
    before = _usual_catalog()
    shipped = _fixture_files()
    sys.path.insert(0, str(root))
    register_task(TOY)
    try:
        assert taskgen_main(["toy"]) == 0  # the toy's generator writes its four splits
        yield TOY
    finally:
        unregister_task(TOY.name)
        GENERATORS.pop("toy", None)
        sys.path.remove(str(root))
        for name in [name for name in sys.modules if name.split(".")[0] == PACKAGE]:
            del sys.modules[name]
    assert _usual_catalog() == before
    assert _fixture_files() == shipped


def _words() -> dict[str, list[str]]:
    return importlib.import_module(f"{PACKAGE}.taskgen").WORDS


def test_taskgen_writes_the_toy_s_splits_into_its_own_folder_and_again_the_same_bytes(toy, capsys):
    folder = toy.fixture("")
    written = {path.name: path.read_bytes() for path in folder.glob("*.jsonl")}
    assert sorted(written) == sorted(f"{split}.jsonl" for split in toy.splits)
    assert taskgen_main(["toy"]) == 0
    assert {path.name: path.read_bytes() for path in folder.glob("*.jsonl")} == written
    assert all(Path(line.removeprefix("wrote ")).parent == folder for line in capsys.readouterr().out.splitlines())


def test_the_toy_is_in_the_catalog_and_its_env_class_takes_its_line(toy):
    assert toolbench.find_task("toy") is toy and toolbench.TASKS[-1] is toy
    env_class = toy.env_class()
    assert (env_class.task_name, env_class.modes, env_class.splits) == ("Toy", ("program",), toy.splits)
    assert (env_class.fixture_slug, env_class.fixture_package) == ("toy", f"{PACKAGE}.fixtures")
    words = _words()
    assert [toy.count(split) for split in toy.splits] == [len(words[split]) for split in toy.splits]
    assert (
        toolbench.load_tasks("Toy", "unseen")[0].prompt
        == f"What does {words['unseen'][0]} read like from its last letter to its first?"
    )
    # A subclass without a line of its own (a test's variant) keeps its parent's.
    variant = type("Variant", (env_class,), {})
    assert (variant.task_name, variant.fixture_slug) == ("Toy", "toy")


def test_gymnasium_makes_the_toy_and_the_oracle_solves_it(toy):
    env = gym.make(ENV_ID)
    observation, info = env.reset(seed=0)
    assert observation == env.unwrapped.task.prompt and info["task_id"].startswith("toy-test-")
    *_, reward, terminated, _, info = env.step(env.unwrapped.oracle_actions(env.unwrapped.task)[0])
    assert reward == 1.0 and terminated and info["success"] is True
    env.close()


def test_prompts_take_the_toy_s_generation_settings(toy):
    from toolbench.prompting import HARNESS_STOP, generation_defaults

    settings = generation_defaults("Toy", "program")
    assert (settings.max_tokens, settings.stop, settings.top_k_api) == (64, HARNESS_STOP, 10)


def test_the_env_server_serves_the_toy(toy):
    from tests.env_server.test_every_task import test_a_served_oracle_episode_equals_the_local_one

    test_a_served_oracle_episode_equals_the_local_one(toy)


def test_toolbench_serve_serves_the_toy_service(toy):
    from toolbench.mock_services import SERVICES, create_service_app, service_api_key

    assert "toy" in SERVICES and service_api_key("toy") == "toy-demo-key"
    client = create_service_app("toy").test_client()
    answer = client.get("/v1/words?word=Apple", headers={"x-api-key": "toy-demo-key"})
    assert answer.status_code == 200 and answer.get_json() == {"word": "apple", "backwards": "elppa"}
    assert client.get("/v1/words?word=apple").status_code == 401
    mine = create_service_app("toy", "my-key").test_client()
    assert mine.get("/v1/words?word=fig", headers={"x-api-key": "my-key"}).status_code == 200


def test_the_audit_plays_its_cheap_policies_on_the_toy(toy):
    from toolbench.eval.audit import SCORE_CEILING, SUCCESS_CEILING, format_audit, policies_for, run_audit

    rows = run_audit(["Toy"], splits=("test", "unseen"))
    played = {(row.split, row.policy) for row in rows}
    assert {("test", policy) for policy in policies_for(toy, "program")} <= played
    assert {row.mode for row in rows} == {"program"}  # the toy has no interactive mode
    assert all(row.metrics["success_rate"] == 1.0 for row in rows if row.policy == "oracle")
    # On unseen every cheap policy has the default ceilings, but for the one the toy's class allows more.
    unseen = {row.policy: row.ceilings for row in rows if row.split == "unseen" and row.policy != "oracle"}
    assert unseen.pop("demo_answer") == {"success_rate": SUCCESS_CEILING, "score": 0.2}
    assert unseen and all(
        ceilings == {"success_rate": SUCCESS_CEILING, "score": SCORE_CEILING} for ceilings in unseen.values()
    )
    assert "demo_answer on Toy unseen: the toy's allowance, to show it is read" in format_audit(rows)
    assert [f"{row.split}/{row.policy}: {row.over}" for row in rows if row.over] == []


def _contract_tests() -> list[tuple[str, str]]:
    """The shared env contract tests that take one env (``env_id`` or ``name``, and ``mode``): every
    test of the env contract, the no-leak check and the private copy's, as (module, function)."""
    modules = ("tests.core.test_env_contract", "tests.core.test_no_leaks", "tests.test_private_copy")
    found = []
    for module_name in modules:
        module = importlib.import_module(module_name)
        for name, function in inspect.getmembers(module, inspect.isfunction):
            parameters = tuple(inspect.signature(function).parameters)
            if name.startswith("test_") and parameters in (("env_id",), ("env_id", "mode"), ("name", "mode")):
                found.append((module_name, name))
    return found


@pytest.mark.parametrize("module_name, test_name", _contract_tests())
def test_the_toy_passes_the_env_contract(toy, module_name, test_name):
    test: Callable[..., Any] = getattr(importlib.import_module(module_name), test_name)
    parameters = tuple(inspect.signature(test).parameters)
    for mode in toy.modes:
        if parameters == ("env_id",):
            test(toy.env_id)
        elif parameters == ("env_id", "mode"):
            test(toy.env_id, mode)
        else:
            test(toy.name, mode)


def test_the_contract_tests_found_are_the_env_contract(toy):
    names = {name for _, name in _contract_tests()}
    assert {"test_check_env_passes_without_warnings", "test_state_snapshot_round_trip"} <= names
    assert "test_what_an_agent_sees_does_not_depend_on_the_answer" in names


def test_a_class_that_contradicts_its_line_is_refused(toy):
    line = TaskSpec("Contradicting", f"{PACKAGE}.contradicting:ContradictingEnv", ("program",), ("test",), "toy")
    register_task(line)
    try:
        with pytest.raises(TypeError, match="task_name = 'NotTheLine', but its catalog line says 'Contradicting'"):
            importlib.import_module(f"{PACKAGE}.contradicting")
    finally:
        unregister_task("Contradicting")
        sys.modules.pop(f"{PACKAGE}.contradicting", None)
    assert "Contradicting" not in [spec.name for spec in toolbench.TASKS]


def test_a_line_that_clashes_with_another_is_refused(toy):
    with pytest.raises(ValueError, match="clashes"):
        register_task(TaskSpec("homesearch", "elsewhere:HomeSearchEnv", ("program",), ("test",), "elsewhere"))
    with pytest.raises(ValueError, match="clashes"):
        register_task(TaskSpec("Other", TOY.entry_point, ("program",), ("test",), "other"))
    with pytest.raises(ValueError, match="shipped task"):
        unregister_task("HomeSearch")
    assert len(toolbench.TASKS) == 11


def test_a_late_line_reaches_a_class_loaded_before_it(toy):
    module = ModuleType(f"{PACKAGE}.late")
    exec(textwrap.dedent(CONTRADICTING).replace("NotTheLine", "Late"), module.__dict__)  # noqa: S102
    sys.modules[module.__name__] = module
    try:
        assert module.ContradictingEnv.task_name == "Late"
        register_task(TaskSpec("Late", f"{module.__name__}:ContradictingEnv", ("program",), ("test", "demo"), "toy"))
        assert module.ContradictingEnv.splits == ("test", "demo") and module.ContradictingEnv.fixture_slug == "toy"
        assert "toolbench/Late-v0" in gym.registry
    finally:
        unregister_task("Late")
        del sys.modules[module.__name__]
    assert "toolbench/Late-v0" not in gym.registry
