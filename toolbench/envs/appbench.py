"""toolbench/AppBench-v0: plan API calls across 15 mobile apps, run on the apps' back-ends and scored as a graph."""

from __future__ import annotations

import json
import re
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from toolbench.core.env import ActionError, Outcome, ToolEnv
from toolbench.core.tasks import Task, TaskFileError, read_task_file, record_place
from toolbench.core.toolcalls import NOT_JSON, ToolCallError, json_action, tool_call_of
from toolbench.mock_services.apps.backend import AppError, Apps
from toolbench.mock_services.apps.extend import grown_world
from toolbench.mock_services.apps.paper import PaperTally
from toolbench.mock_services.apps.plan import (
    MAX_LINE_CHARS,
    Call,
    PlanError,
    Ref,
    format_call,
    parse_plan,
    resolve,
    resolve_call,
)
from toolbench.mock_services.apps.records import gold_calls, gold_plan_text
from toolbench.mock_services.apps.registry import APP_DESCRIPTIONS, Api, apis, by_app
from toolbench.mock_services.apps.scoring import f1, score_plan

FINISH = "finish()"
METRICS = ("f1_app", "f1_api", "succ", "executed")
PROMPTINGS = ("hierarchical", "flat")
SCORERS = ("ours", "paper")
TODAY = "2019-03-01"
#: Selections of apps whose docs and tools a process keeps built (there are few in practice).
MAX_SELECTIONS_KEPT = 256
#: The docs and tools of each selection, by prompting, mode and the apps in their order: shared by
#: the envs of a process, so a vector env's worker sends one copy of a selection's tools for all its envs.
_SHOWN: dict[tuple[str, str, tuple[str, ...]], tuple[str, list[dict[str, Any]]]] = {}


def api_doc(api: Api) -> str:
    """One API in the docs: what it does, its arguments and what it returns, and the line to call it."""
    required = ", ".join(f"#{name} ({kind})" for name, kind in api.required) or "none"
    optional = ", ".join(f"#{name} ({kind}, default {default})" for name, kind, default in api.optional) or "none"
    return (
        f"# {api.app}.{api.name}: {api.description} Required: {required}. Optional: {optional}. "
        f"Returns: {', '.join(api.returns)}.\n"
        f"{api.app}: [{', '.join(api.returns)} = {api.name}(...)]"
    )


def docs_for(apps: list[str]) -> str:
    return _docs_text(tuple(apps))


@cache
def _docs_text(apps: tuple[str, ...]) -> str:
    """The docs of ``apps``, built once per process (every env of it shows the same text)."""
    rules = (
        "# Write one call per line: App: [r1, r2 = api(#arg='value', #arg2=r1)]. Quote every value you "
        f"know ('2', 'True', '{TODAY}', '19:00'); write a name a call returned, unquoted, to use its value. "
        f"Only an API's own app may call it. Today is {TODAY}."
    )
    return "\n\n".join([rules, *(api_doc(api) for app in apps for api in by_app()[app].values())])


SELECT_RULES = {
    "program": (
        "# First answer with select_apps(['App1', 'App2']) alone, naming the apps the task needs: the reply "
        "documents their APIs. Then answer with the whole plan, one call per line, App: [r1 = api(#arg='value')]."
    ),
    "interactive": (
        "# First choose the apps the task needs: select_apps(['App1', 'App2']) shows their APIs. Then make one "
        f"call per step, App: [r1 = api(#arg='value')], and end with {FINISH}."
    ),
}


def app_list(mode: str) -> str:
    """The first stage of hierarchical prompting: every app and what it is for, no API."""
    listed = "\n".join(f"# {app}: {what}" for app, what in APP_DESCRIPTIONS.items())
    return f"{SELECT_RULES[mode]}\n\n{listed}"


_SELECT_APPS = re.compile(r"select_apps\(\s*\[(.*)\]\s*\)", flags=re.DOTALL)


def selected_apps(text: str, data: Any = None) -> list[str] | None:
    """The apps of a ``select_apps([...])`` action (or its JSON tool call), else None. ``data``: what
    ``json_action`` read from the action, when the caller has read it already."""
    if data is None:
        data = json_action(text)
    if data is not NOT_JSON:
        try:
            call = tool_call_of(data)
        except ToolCallError:
            return None
        apps = call.arguments.get("apps")
        return [str(app) for app in apps] if call.name == "select_apps" and isinstance(apps, list) else None
    match = _SELECT_APPS.fullmatch(text)
    if match is None:
        return None
    return [name.strip().strip("'\"") for name in match.group(1).split(",") if name.strip()]


FINISH_TOOL = {
    "type": "function",
    "function": {
        "name": "finish",
        "description": "End the episode: the calls made so far are the plan.",
        "parameters": {"type": "object", "properties": {}},
    },
}


SELECT_TOOL = {
    "type": "function",
    "function": {
        "name": "select_apps",
        "description": "Choose the apps the task needs: their APIs are shown and become callable tools.",
        "parameters": {
            "type": "object",
            "properties": {"apps": {"type": "array", "items": {"type": "string", "enum": list(APP_DESCRIPTIONS)}}},
            "required": ["apps"],
        },
    },
}


def _is_finish_call(data: Any) -> bool:
    """Whether an action's parsed JSON (``json_action``) is a call of finish."""
    if data is NOT_JSON:
        return False
    try:
        return tool_call_of(data).name == "finish"
    except ToolCallError:
        return False


def _json_value(name: str, value: Any) -> str | Ref:
    """A JSON tool call's argument: text (numbers and booleans as AppBench writes them), or
    ``{"ref": "address"}`` for a value an earlier call returned."""
    if isinstance(value, dict) and set(value) == {"ref"} and isinstance(value["ref"], str):
        return Ref(value["ref"])
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (int, float)) and abs(value) < 1e15:
        return str(value)
    if not isinstance(value, str):
        raise ToolCallError(f'{name}: give text, a number, true/false, or {{"ref": "<returned name>"}}')
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ToolCallError(f"{name}: the value is not valid Unicode text") from None
    if len(value) > MAX_LINE_CHARS:
        raise ToolCallError(f"{name}: the value is {len(value)} characters long; the limit is {MAX_LINE_CHARS}")
    return value


@lru_cache(maxsize=1024)
def tool_schema(api: Api) -> dict[str, Any]:
    """An API's tool schema, built once per process (read-only): every selection that shows the API
    holds the same object, so a vector env's worker sends it once for all its envs."""
    properties = {
        name: {"description": f"{kind}, or {{'ref': name}} for a value an earlier call returned"}
        for name, kind in api.arguments().items()
    }
    return {
        "type": "function",
        "function": {
            "name": api.key,
            "description": f"{api.app}: {api.description} Returns {', '.join(api.returns)}.",
            "parameters": {"type": "object", "properties": properties, "required": [n for n, _ in api.required]},
        },
    }


class AppBenchEnv(ToolEnv):
    """Plan API calls across mobile apps for one instruction; the plan runs on the apps' back-ends.

    ## Description
    AppBench (2024): an instruction such as "find a Korean restaurant in San Jose for Friday, then
    book a ride there for two" needs calls to several apps, where later calls use values earlier
    ones return. Each API belongs to one app, and only that app may call it.

    ## Action Space
    Text. ``mode="program"``: the whole plan, one call per line, ``App: [r1, r2 = api(#arg='value',
    #arg2=r1)]``; it is parsed, never executed as code; a bare name must be a value an earlier call
    returns. ``mode="interactive"``: one call per step, as that line or a JSON tool call of
    ``info["tools"]`` (``<App>__<api>``; ``{"ref": "address"}`` for a returned value); a refused
    call is feedback and not part of the plan; ``finish()`` (or the ``finish`` tool) ends. With
    ``prompting="hierarchical"`` (AppBench's main setting; the interactive default) the agent first
    sees only the apps and answers ``select_apps(['App', ...])`` (or the ``select_apps`` tool), which
    shows those apps' APIs (and, interactive, makes them the step info's ``tools``); in program mode
    the plan is then the second action. Nothing shown depends on the task's gold apps.

    ## Observation Space
    Text: the instruction; then each call's returned values or why it failed.

    ## Rewards
    ``succ`` (1 when the plan is the gold plan as an execution graph, else 0), paid at the end;
    ``info`` has ``f1_app``, ``f1_api`` (per-item matching) and ``executed`` (every call ran).
    ``scorer="paper"`` pays AppBench's own verdict instead (``paper_complete_match``), bugs
    included, to compare with published numbers; it is not a training reward (its substring
    matching passes empty values).

    ## Starting State
    A fresh set of app back-ends (no bookings); the task's instruction.

    ## Episode End
    Program mode: after the plan (with ``prompting="hierarchical"``, at most two actions:
    ``select_apps``, then the plan). Interactive: at ``finish()`` or ``max_steps`` (default 12).

    ## Arguments
    ``gym.make("toolbench/AppBench-v0", mode="program", prompting=None, scorer="ours",
    task_file=None)``. ``prompting="flat"`` (the program-mode default, one action) documents all
    15 apps and their 33 APIs at once; ``"hierarchical"`` (the interactive default) lists the apps
    and shows the APIs of those the agent selects.
    ``task_file``: our JSONL, or AppBench's ``test_ss/sm/ms/mm.json`` (played on our world grown with
    the places and things its gold plans name, ``mock_services/apps/extend.py``).
    """

    info_doc_keys = ("api_docs", "tools", "apps")  # the apps' descriptions are docs too
    default_max_steps = 12
    metric_names = METRICS
    headline_metric = "succ"  # AppBench's Succ
    finishing_action = FINISH
    presentation_options = ("prompting",)
    run_options = ("scorer",)
    score_details = ("counts", "paper_counts", "paper_complete_match")  # hits, predicted and gold items

    def __init__(self, prompting: str | None = None, scorer: str = "ours", **kwargs: Any) -> None:
        mode = kwargs.get("mode") or self.modes[0]
        prompting = prompting or ("hierarchical" if mode == "interactive" else "flat")
        if prompting not in PROMPTINGS:
            raise ValueError(f"prompting must be one of {list(PROMPTINGS)}, not {prompting!r}")
        if scorer not in SCORERS:
            raise ValueError(f"scorer must be one of {list(SCORERS)}, not {scorer!r}")
        self.prompting, self.scorer = prompting, scorer
        if prompting == "hierarchical" and mode == "program" and kwargs.get("max_steps") is None:
            kwargs["max_steps"] = 2  # select_apps, then the plan
        super().__init__(**kwargs)
        original = kwargs.get("task_file") is not None and Path(kwargs["task_file"]).suffix == ".json"
        self.apps = Apps(grown_world([dict(t.get("output") or {}) for t in self.tasks]) if original else None)
        self._selected: list[str] = []
        self._gold: dict[str, list[Call]] = {}  # each task's gold plan, parsed once
        self._calls: list[Call] = []
        self._results: list[dict[str, str] | None] = []

    # ------------------------------------------------------------------ tasks
    @classmethod
    def read_tasks(cls, path: str | Path, id_prefix: str) -> list[Task]:
        """Our JSONL, or AppBench's ``test_<kind>.json`` (a JSON list of ``{"input", "output"}``)."""
        if Path(path).suffix != ".json":
            return read_task_file(path, id_prefix)
        records = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(records, list):
            raise ValueError(f"{path}: an AppBench test file holds a JSON list of records")
        kind = Path(path).stem.rsplit("_", 1)[-1].upper()
        for n, r in enumerate(records):
            if not isinstance(r, dict) or not isinstance(r.get("input"), str) or not isinstance(r.get("output"), dict):
                raise TaskFileError(f"{record_place(path, n)}: an AppBench record holds an 'input' and an 'output'")
        return [
            Task(f"{id_prefix}-{n:04d}", r["input"], (gold_plan_text(r["output"]),), kind, {"output": r["output"]})
            for n, r in enumerate(records)
        ]

    # ------------------------------------------------------------------ episode
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        observation, info = super().reset(seed=seed, options=options)
        if self.info_docs:
            info["apps"] = dict(APP_DESCRIPTIONS)
        return observation, info

    def _begin(self, task: Task) -> str:
        self.apps.reset()
        self._calls, self._results, self._selected = [], [], []
        return task.prompt

    def _act(self, action: str) -> Outcome:
        if "\x00" in action:
            raise ActionError("the action is not text (it holds NUL bytes)")
        if self.mode == "program":
            chosen = selected_apps(action.strip())
            if chosen is not None:
                return self._select(chosen)
            try:
                calls = resolve(parse_plan(action))
            except PlanError as exc:
                raise ActionError(str(exc)) from None
            if not calls:
                raise ActionError("the plan is empty: write one call per line, App: [r1 = api(#arg='value')]")
            lines = [self._run(call) for call in calls]
            return self._scored("\n".join(lines))
        text = action.strip()
        data = json_action(text)  # read once: a finish, a selection or a call
        if text in (FINISH, "finish", "Finish()") or _is_finish_call(data):
            return self._scored("Finished.")
        chosen = selected_apps(text, data)
        if chosen is not None:
            return self._select(chosen)
        try:
            call = self._interactive_call(text, data)
        except (PlanError, ToolCallError) as exc:
            raise ActionError(str(exc)) from None
        line = self._run(call)
        if self._results[-1] is None:  # a refused call is feedback, not part of the plan
            self._calls.pop()
            self._results.pop()
            return Outcome(line, done=False, executable=False, error=line)
        return Outcome(line, done=False)

    def _select(self, chosen: list[str]) -> Outcome:
        """Hierarchical prompting's first stage: the chosen apps' APIs, as docs and (interactive) tools."""
        unknown = [app for app in chosen if app not in APP_DESCRIPTIONS]
        if unknown or not chosen:
            why = f"unknown apps {unknown}; the apps are {', '.join(APP_DESCRIPTIONS)}" if unknown else "no apps"
            raise ActionError(f"select_apps: {why}")
        self._selected = list(dict.fromkeys(chosen))
        docs, tools = self._shown_for(tuple(self._selected))
        metrics = {"tools": tools} if self.mode == "interactive" else {}
        return Outcome(docs, done=False, metrics=metrics)

    def _shown_for(self, apps: tuple[str, ...]) -> tuple[str, list[dict[str, Any]]]:
        """The docs and tool schemas of a selection of apps, built once per process and selection (they
        depend on nothing else): the same objects at every step that selects them, to be treated as
        read-only."""
        key = (self.prompting, self.mode, apps)
        shown = _SHOWN.get(key)
        if shown is None:
            if len(_SHOWN) >= MAX_SELECTIONS_KEPT:  # bounded whatever selections agents send
                _SHOWN.clear()
            shown = _SHOWN[key] = (docs_for(list(apps)), self._tools_for(list(apps)))
        return shown

    def _interactive_call(self, text: str, data: Any) -> Call:
        """One call from a JSON tool call (``data``, the action's parsed JSON) or a plan line, its
        references tied to earlier calls."""
        if data is not NOT_JSON:
            tool = tool_call_of(data)
            app, _, name = tool.name.partition("__")
            api = by_app().get(app, {}).get(name.lower())
            if api is None:
                raise ToolCallError(f"unknown tool {tool.name[:80]!r}: the tools are named <App>__<api>")
            call = Call(
                app, api.name, api.returns, {k.lower(): _json_value(k, v) for k, v in tool.arguments.items()}, ""
            )
        else:
            calls = parse_plan(text)
            if len(calls) != 1:
                raise PlanError(f"send one call per step (got {len(calls)}); {FINISH} ends the episode")
            call = calls[0]
        return resolve_call(self._calls, call)

    def _run(self, call: Call) -> str:
        """Run one call on the back-ends (references replaced by the values earlier calls returned)."""
        number = len(self._calls) + 1
        self._calls.append(call)
        args: dict[str, str] = {}
        for name, value in call.args.items():
            if isinstance(value, Ref):
                earlier = self._results[value.source] if value.source is not None else None
                if earlier is None or value.name not in earlier:
                    self._results.append(None)
                    return f"{number}. {call.app}.{call.api}: error: #{name} needs {value.name}, which no call returned"
                value = earlier[value.name]
            args[name] = value
        try:
            result = self.apps.call(call.app, call.api, args)
        except AppError as exc:
            self._results.append(None)
            return f"{number}. {call.app}.{call.api}: error: {exc}"
        self._results.append(result)
        shown = ", ".join([f"{key}={value!r}" for key, value in result.items()])
        return f"{number}. {call.app}.{call.api}: {shown}"

    # ------------------------------------------------------------------ scoring
    def _scored(self, observation: str) -> Outcome:
        assert self.task is not None
        output = self.task.get("output") or {}
        gold = self._gold_calls(self.task)
        said = output.get("user_aware_arguments") or {}
        ours = score_plan(self._calls, gold, said)
        executed = bool(self._calls) and all(result is not None for result in self._results)
        metrics: dict[str, Any] = {
            "f1_app": ours.f1_app,
            "f1_api": ours.f1_api,
            "succ": float(ours.succ),
            "executed": float(executed),
            # For the split's micro F1 (``summarize_episodes``): hits, predicted, gold.
            "counts": {
                "app": [ours.app_hits, ours.app_predicted, ours.app_gold],
                "api": [ours.api_hits, ours.api_predicted, ours.api_gold],
            },
        }
        succ = ours.succ
        if self.scorer == "paper":  # AppBench's verdict, bugs and all: for comparing with its numbers
            tally = PaperTally()
            succ = tally.add("\n".join(format_call(call) for call in self._calls), output)
            metrics["paper_complete_match"] = succ
            metrics["paper_counts"] = dict(tally.counts)
        return Outcome(observation, done=True, score=float(succ), success=succ, executable=executed, metrics=metrics)

    @staticmethod
    def summarize_episodes(infos: list[dict[str, Any]]) -> dict[str, float]:
        """Split-level metrics from the episodes' final infos: micro F1 over all apps and APIs, and
        with ``scorer="paper"`` AppBench's own corpus-level table (``paper_*``)."""
        summary: dict[str, float] = {}
        counted = [info["counts"] for info in infos if isinstance(info.get("counts"), dict)]
        for kind in ("app", "api"):
            hits, predicted, gold = (sum(c[kind][i] for c in counted) for i in range(3))
            summary[f"micro_f1_{kind}"] = f1(hits, predicted, gold)
        papers = [info["paper_counts"] for info in infos if isinstance(info.get("paper_counts"), dict)]
        if papers:
            tally = PaperTally(samples=len(papers))
            for counts in papers:
                for name, value in counts.items():
                    tally.counts[name] = tally.counts.get(name, 0) + int(value)
            summary.update({f"paper_{name}": value for name, value in tally.scores().items()})
        return summary

    def _gold_calls(self, task: Task) -> list[Call]:
        if task.id not in self._gold:
            self._gold[task.id] = gold_calls(task.get("output") or {})
        return self._gold[task.id]

    def _on_truncation(self, last: Outcome) -> Outcome | None:
        return self._scored(last.observation)

    # ------------------------------------------------------------------ contract hooks
    def api_docs(self) -> str:
        if self.prompting == "flat":
            return docs_for(list(APP_DESCRIPTIONS))
        return app_list(self.mode)

    def tools(self) -> list[dict[str, Any]] | None:
        return self._tools_for(list(APP_DESCRIPTIONS) if self.prompting == "flat" else [])

    def _tools_for(self, apps: list[str]) -> list[dict[str, Any]]:
        """The tools once ``apps`` are shown: their APIs' schemas, then select_apps (hierarchical) and finish."""
        chosen = set(apps)
        schemas = [tool_schema(api) for api in apis() if api.app in chosen]
        if self.prompting == "hierarchical":
            schemas.append(SELECT_TOOL)
        if self.mode == "interactive":
            schemas.append(FINISH_TOOL)
        return schemas

    def oracle_actions(self, task: Task) -> list[str]:
        """The gold plan; a reference in it that only the user answers (a few released records) is
        written as the user's value."""
        output = task.get("output")
        calls = gold_calls(output) if output else []
        reference = "\n".join(format_call(c) for c in calls) if output else (task.references or [""])[0]
        select = []
        if self.prompting == "hierarchical":
            apps = [app for app in APP_DESCRIPTIONS if app in {call.app for call in calls}]
            select = [f"select_apps({apps!r})"] if apps else []
        if self.mode == "program":
            return [*select, reference]
        return [*select, *(line for line in reference.splitlines() if line.strip()), FINISH]

    def shared_parts_actions(self, task: Task) -> list[str] | None:
        """The gold plan with what every task of its kind shares and nothing the instruction states:
        the apps, the APIs and the references between calls (a booking takes its pickup location
        from the search before it), with every literal argument left out. It names the right APIs
        (full ``f1_app`` and ``f1_api``, AppBench's own partial credit), but ``score`` is ``succ``,
        which needs the task's values, so it earns nothing."""
        output = task.get("output")
        calls = gold_calls(output) if output else resolve(parse_plan((task.references or [""])[0]))
        shared = [
            Call(call.app, call.api, call.returns, {k: v for k, v in call.args.items() if isinstance(v, Ref)})
            for call in calls
        ]
        lines = [format_call(call) for call in shared]
        select = []
        if self.prompting == "hierarchical":
            apps = [app for app in APP_DESCRIPTIONS if app in {call.app for call in calls}]
            select = [f"select_apps({apps!r})"] if apps else []
        if self.mode == "program":
            return [*select, "\n".join(lines)]
        return [*select, *lines, FINISH]

    def _get_backend_state(self) -> Any:
        calls = [
            {
                "app": call.app,
                "api": call.api,
                "returns": list(call.returns),
                "args": {k: [v.name, v.source] if isinstance(v, Ref) else v for k, v in call.args.items()},
            }
            for call in self._calls
        ]
        return {
            "apps": self.apps.snapshot(),
            "calls": calls,
            "results": list(self._results),
            "selected": self._selected,
        }

    def _set_backend_state(self, state: Any) -> None:
        self.apps.restore(state["apps"])
        self._calls = [
            Call(
                c["app"],
                c["api"],
                tuple(c["returns"]),
                {k: Ref(v[0], v[1]) if isinstance(v, list) else v for k, v in c["args"].items()},
            )  # fmt: skip
            for c in state["calls"]
        ]
        self._results = list(state["results"])
        self._selected = list(state.get("selected", []))
