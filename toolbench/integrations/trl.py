"""TRL adapter: ``environment_factory`` and dataset rows for ``trl.GRPOTrainer`` (TRL 1.16), on ``Session``.

TRL's GRPO trainer takes a mapping {environment name: factory} (its multi-environment mode): each
dataset row names its environment, TRL creates instances per rollout, calls ``reset(**row)`` and
appends the text it returns to the row's last (user) message, offers every public method as a tool
(the schema read by transformers' ``get_json_schema`` from the signature and Google docstring), and
scores the rollout with ``get_reward()``. Here every environment plays a ``Session``: a tool method
is ``Session.call``, ``reset`` is ``Session.open``, ``get_reward`` is ``Session.reward``, so the
parsing, limits, tools and rewards are those of every other adapter.

    from datasets import Dataset
    from toolbench.integrations.session import task_rows
    from toolbench.integrations.trl import ToolbenchGRPOTrainer, dataset_rows, environment_factory

    rows = task_rows({"HomeSearch": 2, "WebShop": 1, "RapidAPI": 1}, split="train", size=4000)
    trainer = ToolbenchGRPOTrainer(
        model="Qwen/Qwen2.5-0.5B-Instruct", args=GRPOConfig(...),
        train_dataset=Dataset.from_list(dataset_rows(rows)), environment_factory=environment_factory(rows),
    )

Environment names: the task's name (``HomeSearch``; ``HomeSearch_program`` for a mode other than
``training_mode``'s), and for envs whose tools differ per task (RapidAPI) one name per distinct tool
set, ``RapidAPI_<hash>``: TRL shows each rollout its environment's tools only. AppBench's
interactive tools are ``select_apps``, ``finish`` and every app's APIs from the start (TRL's tool
set is fixed per environment; the env still answers an API call by its own rules).

Long prompts: ``top_k_api=k`` (``dataset_rows`` and ``environment_factory`` alike) shows each task
only the k API functions most relevant to it, by BM25 as the prompt builder retrieves docs: in the
docs of the prompt (``Session``'s option: VirtualHome's object lists make ~47,000 characters
otherwise), and for AppBench among the API tools offered up front (33 APIs: ~24,000 characters of schemas),
so each AppBench task gets a tool set of its own (``AppBench_<hash>``) beside ``select_apps`` and
``finish``. An API left out cannot be called, which costs tasks: on the train split the top 10 hold
every API the reference plan calls in about half of AppBench's tasks, the top 20 in three quarters.

The schemas TRL reads equal the env's (``Session.tools``) in type, ``enum``, ``items``,
``required`` and descriptions; keys JSON schemas in Python hints cannot carry (RapidAPI's
``example_value`` and ``optional``) are left out, and a parameter the env describes with nothing is
described by its name, since ``get_json_schema`` needs a description for each.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache, lru_cache
from typing import Any, Literal, Union

import trl

from toolbench.catalog import find_task
from toolbench.integrations.session import Limits, Session, task_rows, training_mode
from toolbench.prompting import Matcher

_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "object": dict,
    "array": list,
    "null": type(None),
}
#: Names TRL gives a meaning of its own, so a tool may not take them.
RESERVED = ("reset", "get_reward")


# --------------------------------------------------------------------------- rows and tool sets
def _rows(rows_or_tasks: Iterable[Mapping[str, Any]] | Sequence[str] | Mapping[str, float] | str, split: str):
    """``task_rows`` output as given, or every task of the named envs' ``split``."""
    if isinstance(rows_or_tasks, str):
        return task_rows([rows_or_tasks], split)
    if isinstance(rows_or_tasks, Mapping):
        return task_rows(rows_or_tasks, split)
    items = list(rows_or_tasks)
    if items and all(isinstance(item, str) for item in items):
        return task_rows(items, split)
    return [dict(row) for row in items]


def _freeze(make_kwargs: Mapping[str, Any]) -> str:
    return json.dumps(make_kwargs, sort_keys=True, default=repr)


@lru_cache(maxsize=64)
def _probe(
    task: str, mode: str, split: str, frozen: str, top_k_api: int | None = None, prompt_setting: str = "system"
) -> Session:
    """One session per env setting, to read prompts and tool sets (never played by a rollout)."""
    return Session(
        task, split=split, mode=mode, top_k_api=top_k_api, prompt_setting=prompt_setting, **json.loads(frozen)
    )


def _tools_grow(task: str, mode: str) -> bool:
    """Whether a step adds tools mid-episode (AppBench's select_apps), which TRL offers from the start."""
    return task == "AppBench" and mode == "interactive"


_PROBE_LOCK = threading.Lock()


@cache
def _episode(
    task: str, mode: str, split: str, task_id: str, frozen: str, top_k_api: int | None, prompt_setting: str
) -> tuple[str, str]:
    """The system message and the tool set (JSON) a rollout of ``task_id`` is offered."""
    with _PROBE_LOCK:
        session = _probe(task, mode, split, frozen, top_k_api, prompt_setting)
        messages = session.open(task_id)
        tools = list(session.tools)
        if _tools_grow(session.task, mode):
            # The APIs select_apps shows become tools mid-episode; TRL fixes a rollout's tools at its start.
            flat = _probe(task, "program", split, frozen)
            flat.open(task_id)
            names = {tool["function"]["name"] for tool in tools}
            apis = [tool for tool in flat.info.get("tools") or [] if tool["function"]["name"] not in names]
            if top_k_api is not None:  # the task's k best by their schemas' text, in the env's order
                texts = [json.dumps(tool, sort_keys=True) for tool in apis]
                apis = [apis[n] for n in sorted(Matcher(texts).top_k(flat.env.task.prompt, top_k_api))]
            tools = apis + tools
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    return system, json.dumps(tools, sort_keys=True)


def _per_task_tools(task: str, mode: str, split: str, frozen: str, top_k_api: int | None) -> bool:
    """Whether each task is offered its own tools: the env's (RapidAPI's ``docs_per_task``), or the APIs
    ``top_k_api`` retrieves for it (AppBench)."""
    if mode == "program":
        return False
    return bool(getattr(_probe(task, mode, split, frozen).env, "docs_per_task", False)) or (
        top_k_api is not None and _tools_grow(task, mode)
    )


def _environment_name(task: str, mode: str, tools: str, per_task: bool) -> str:
    name = task if mode == training_mode(task) else f"{task}_{mode}"
    if per_task:
        name += "_" + hashlib.sha1(tools.encode()).hexdigest()[:10]
    return name


def _resolved(
    rows: list[dict[str, Any]], make_kwargs: Mapping[str, Any], top_k_api: int | None, prompt_setting: str = "system"
):
    """Each row with its mode, split, system message, tool set and environment name."""
    frozen = _freeze(make_kwargs)
    for row in rows:
        task = find_task(row["task"]).name
        mode, split = row.get("mode") or training_mode(task), row.get("split") or "train"
        per_task = _per_task_tools(task, mode, split, frozen, top_k_api)
        # One tool set per env unless its tasks have their own: then each task's is read.
        system, tools = _episode(
            task, mode, split, row["task_id"] if per_task else "", frozen, top_k_api, prompt_setting
        )
        name = _environment_name(task, mode, tools, per_task)
        yield {**row, "task": task, "mode": mode, "split": split}, system, tools, name


def dataset_rows(
    rows_or_tasks: Iterable[Mapping[str, Any]] | Sequence[str] | Mapping[str, float] | str,
    split: str = "train",
    top_k_api: int | None = None,
    prompt_setting: str = "system",
    **make_kwargs: Any,
) -> list[dict[str, Any]]:
    """TRL dataset rows: ``prompt`` (the env's system message and an empty user turn that ``reset``
    fills with the task), ``environment`` (a key of ``environment_factory``'s mapping), and the row's
    ``task``, ``split``, ``mode`` and ``task_id`` (which ``reset`` reads). ``top_k_api``,
    ``prompt_setting`` and ``make_kwargs`` must be those given to ``environment_factory``: the row's
    system message and the user turn ``reset`` fills are then one prompt builder's."""
    out = []
    for row, system, _, name in _resolved(_rows(rows_or_tasks, split), make_kwargs, top_k_api, prompt_setting):
        prompt = [{"role": "system", "content": system}] if system else []
        out.append(
            {
                "prompt": [*prompt, {"role": "user", "content": ""}],
                "environment": name,
                "task": row["task"],
                "split": row["split"],
                "mode": row["mode"],
                "task_id": row["task_id"],
            }
        )
    return out


# --------------------------------------------------------------------------- the environment
#: Free sessions by everything that makes one: task, mode, split, make kwargs and Session's options.
_FREE: dict[tuple[Any, ...], list[Session]] = {}
_FREE_LOCK = threading.Lock()


class ToolbenchEnvironment:
    """One rollout at a time of one toolbench task, in TRL's environment shape.

    Subclasses (built by ``environment_factory``) add one method per tool. State lives in
    underscore attributes only, since TRL offers every other attribute of the class as a tool and
    an env's tool may be named like state (Tabletop's ``done``). A rollout's ``Session`` is taken
    from a pool at ``reset`` and given back at ``get_reward``, so the many environment names of
    per-task tool sets share a few env instances."""

    _task: str = ""
    _mode: str = ""
    _make_kwargs: dict[str, Any] = {}
    _limits: Limits = Limits()
    _prompt_setting: str = "system"
    _pay: str = "score"
    _top_k_api: int | None = None

    def __init__(self) -> None:
        self._session: Session | None = None
        self._key: tuple[Any, ...] | None = None
        self._reward = 0.0
        self._success = False
        self._task_id: str | None = None
        self._actions: list[str] = []

    def reset(self, task_id: str | None = None, split: str = "train", **_: Any) -> str:
        """Start the row's task; the text TRL appends to the row's user turn."""
        self._release()
        # A session made with other options (another factory's limits, pay or top_k_api) is not this one's.
        self._key = (
            self._task, self._mode, split, _freeze(self._make_kwargs), self._limits, self._prompt_setting,
            self._pay, self._top_k_api,
        )  # fmt: skip
        with _FREE_LOCK:
            free = _FREE.setdefault(self._key, [])
            session = free.pop() if free else None
        if session is None:
            session = Session(
                self._task, split=split, mode=self._mode, limits=self._limits,
                prompt_setting=self._prompt_setting, pay=self._pay, top_k_api=self._top_k_api, **self._make_kwargs,
            )  # fmt: skip
        self._session = session
        messages = session.open(task_id)
        self._task_id, self._reward, self._success, self._actions = session.task_id, 0.0, False, session.actions
        return messages[-1]["content"]

    def get_reward(self) -> float:
        """The env's score of the rollout (``Session.reward``: paid when the episode ends, else 0)."""
        if self._session is not None:
            self._reward, self._success = self._session.reward, self._session.success
            self._release()
        return self._reward

    def _release(self) -> None:
        if self._session is not None and self._key is not None:
            self._actions = list(self._session.actions)
            with _FREE_LOCK:
                _FREE.setdefault(self._key, []).append(self._session)
        self._session = None

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        if self._session is None:
            return "The episode is over: no more tool calls."
        return self._session.call(name, arguments)


def _annotation(spec: Mapping[str, Any]) -> Any:
    """The Python hint ``get_json_schema`` turns back into ``spec``'s type, enum and items."""
    if spec.get("enum"):
        return Literal[tuple(spec["enum"])]
    kind = spec.get("type")
    if isinstance(kind, list):
        return Union[tuple(_TYPES.get(k, Any) for k in kind)]  # noqa: UP007  (a runtime-built union)
    if kind == "array" and isinstance(spec.get("items"), Mapping):
        return list[_annotation(spec["items"])]
    return _TYPES.get(kind, Any) if kind else Any


def _parameter(name: str, annotation: Any, required: bool) -> inspect.Parameter:
    default = inspect.Parameter.empty if required else None
    parameter = inspect.Parameter("_", inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
    # A tool's argument may be a Python keyword (AppBench's "from", "class"); the method takes
    # **arguments, so only the signature TRL reads needs the name, and Parameter refuses keywords.
    object.__setattr__(parameter, "_name", name)
    return parameter


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def tool_method(schema: Mapping[str, Any]) -> Callable[..., str]:
    """A method whose signature and docstring ``get_json_schema`` reads back as ``schema``; calling
    it plays ``Session.call`` with the arguments as given (the env judges missing or extra ones)."""
    function = schema.get("function", schema)
    name, params = function["name"], function.get("parameters") or {}
    if name in RESERVED or name.startswith("_") or not name.isidentifier():
        raise ValueError(f"tool {name!r} cannot be a TRL environment method (reserved, private or not an identifier)")
    properties = params.get("properties") or {}
    required = set(params.get("required") or [])
    bad = [p for p in properties if not p.isidentifier()]
    if bad:
        raise ValueError(f"tool {name!r}: arguments {bad} are not identifiers, which TRL's docstring reader needs")

    def method(self: ToolbenchEnvironment, **arguments: Any) -> str:
        return self._call(name, arguments)

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations = {}
    for param, spec in properties.items():
        annotations[param] = _annotation(spec)
        parameters.append(_parameter(param, annotations[param], param in required))
    method.__signature__ = inspect.Signature(parameters, __validate_parameters__=False)  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    method.__name__ = method.__qualname__ = name
    # The summary keeps its lines (the docstring reader does); an argument's description is one line
    # in the reader's Args block.
    summary = (function.get("description") or name).strip()
    args = "".join(f"\n    {p}: {_one_line(s.get('description') or p)}" for p, s in properties.items())
    method.__doc__ = f"{summary}\n\nArgs:{args}" if args else summary
    return method


def _environment_class(name: str, task: str, mode: str, tools: list[dict[str, Any]], options: dict[str, Any]):
    methods = {}
    for tool in tools:
        method = tool_method(tool)
        if method.__name__ in methods:
            raise ValueError(f"{name}: two tools are named {method.__name__!r}")
        methods[method.__name__] = method
    attributes = {"_task": task, "_mode": mode, **options, **methods}
    class_name = "".join(part[:1].upper() + part[1:] for part in name.split("_")) + "Environment"
    return type(class_name, (ToolbenchEnvironment,), attributes)


def environment_factory(
    rows_or_tasks: Iterable[Mapping[str, Any]] | Sequence[str] | Mapping[str, float] | str,
    split: str = "train",
    limits: Limits | None = None,
    prompt_setting: str = "system",
    pay: str = "score",
    top_k_api: int | None = None,
    **make_kwargs: Any,
) -> dict[str, type[ToolbenchEnvironment]]:
    """{environment name: class} for ``GRPOTrainer(environment_factory=...)``: one class per env
    (and per tool set where tasks have their own tools) among ``rows_or_tasks`` (``task_rows``
    output, or env names: their ``split``). ``limits``, ``prompt_setting``, ``pay`` and ``top_k_api``
    are ``Session``'s (``top_k_api`` also picks AppBench's API tools: see the module's docs). Pass the
    same rows, ``top_k_api`` and ``make_kwargs`` to ``dataset_rows``."""
    classes: dict[str, type[ToolbenchEnvironment]] = {}
    options = {
        "_make_kwargs": dict(make_kwargs), "_limits": limits or Limits(), "_prompt_setting": prompt_setting,
        "_pay": pay, "_top_k_api": top_k_api,
    }  # fmt: skip
    for row, _, tools, name in _resolved(_rows(rows_or_tasks, split), make_kwargs, top_k_api, prompt_setting):
        if name not in classes:
            classes[name] = _environment_class(name, row["task"], row["mode"], json.loads(tools), options)
    return classes


# --------------------------------------------------------------------------- trainer
def _loggable(messages: Any) -> Any:
    """``messages`` with each tool call's arguments as JSON text: the completion logs are a parquet
    table, whose columns take one type, and the same argument name carries text in one tool and a
    number in another (Home Search's ``value``)."""
    if not isinstance(messages, list):
        return messages
    out = []
    for message in messages:
        if isinstance(message, dict) and message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict) and not isinstance(function.get("arguments"), str):
                    text = json.dumps(function.get("arguments"), sort_keys=True, default=str)
                    call = {**call, "function": {**function, "arguments": text}}
                calls.append(call)
            message = {**message, "tool_calls": calls}
        out.append(message)
    return out


class ToolbenchGRPOTrainer(trl.GRPOTrainer):
    """``trl.GRPOTrainer`` whose ``log_completions`` tables hold tool calls of any argument types."""

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        if self.log_completions:
            for key in ("prompt", "completion"):
                column = self._logs[key]
                for n, messages in enumerate(column):
                    column[n] = _loggable(messages)
        super().log(logs, start_time)
