"""toolbench/RapidAPI-v0: ToolLLM's multi-step function calling over an offline RapidAPI hub."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from toolbench.core import store
from toolbench.core.env import ActionError, Outcome, ToolEnv
from toolbench.core.tasks import Task, TaskSet, fixture_file, read_records
from toolbench.mock_services.rapidapi import TEST_SETS
from toolbench.mock_services.rapidapi.catalog import api_record, hub
from toolbench.mock_services.rapidapi.functions import FINISH, api_function, finish_function, observation
from toolbench.mock_services.rapidapi.hub import call, reply
from toolbench.mock_services.rapidapi.original import (
    CALL_SOURCES,
    PLACEHOLDER,
    SIMULATED,
    OriginalBackend,
    ResponseCache,
    read_query_file,
    tally_sources,
)
from toolbench.mock_services.rapidapi.passrule import NeededCalls, Returned, judge, shown_texts
from toolbench.mock_services.rapidapi.steps import (
    ANSWERED_OBSERVATION,
    FINAL_ANSWER,
    GAVE_UP,
    GAVE_UP_OBSERVATION,
    INPUT_ERROR,
    NO_FUNCTION,
    read_finish,
    route,
    status_of,
)

#: The metric every info carries: whether the ending passed (the reward).
METRICS = ("passed",)
#: With ``diagnostics=True`` (run records) also how many answer facts the answer states, of how many:
#: counts an agent that replays a task privately could learn the answer's shape from.
DIAGNOSTIC_METRICS = ("passed", "facts_found", "facts_total")
OK = 0
TOOLBENCH_RESPONSE_LIMIT = 2048
RESPONSE_FORMATS = ("json", "toolbench")
MAX_CALLS_PER_ACTION = 8
PARSE_ERROR = {"error": "Tool input parse error...\n", "response": ""}
#: Tasks whose episode plans a process keeps (a plan is about 20 kB: its tool schemas and docs).
MAX_PLANS_KEPT = 1024


def calls_of(action: str) -> list[tuple[str, Any]]:
    """The (name, arguments) of each call an action holds: ``{"name", "arguments"}``, an OpenAI
    ``tool_calls`` entry, a list of either, or ``{"tool_calls": [...]}``. Arguments stay as given (a
    JSON string is parsed later, as ToolBench's server parses ``tool_input``)."""
    try:
        data = json.loads(action)
    except (ValueError, RecursionError):
        raise ActionError(
            'an action is a tool call as JSON: {"name": "<function>", "arguments": {...}} (or a list of them)'
        ) from None
    if type(data) is dict and type(data.get("name")) is str and "function" not in data and "tool_calls" not in data:
        return [(data["name"], data.get("arguments", {}))]  # one plain call (most actions): read as below, sooner
    if isinstance(data, dict) and isinstance(data.get("tool_calls"), list):
        data = data["tool_calls"]
    items = data if isinstance(data, list) else [data]
    if not items:
        raise ActionError("the action holds no tool call")
    if len(items) > MAX_CALLS_PER_ACTION:
        raise ActionError(f"at most {MAX_CALLS_PER_ACTION} calls per action, got {len(items)}")
    calls = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("function"), dict):
            item = item["function"]
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ActionError('each tool call needs a "name" (a function of info["tools"]) and "arguments"')
        calls.append((item["name"], item.get("arguments", {})))
    return calls


def test_set_of(task_id: str) -> str | None:
    """The ToolBench test set a shipped task's id names (``rapidapi-G1_tool-0007``), else None."""
    return next((name for name in TEST_SETS if f"-{name}-" in task_id), None)


def _arguments(raw: Any) -> dict[str, Any] | None:
    """Arguments as an object (None when they are not one), from an object or its JSON text."""
    if isinstance(raw, dict):
        return raw
    if raw is None or raw == "":
        return {}
    if not isinstance(raw, str):
        return None
    try:
        parsed = json.loads(raw, strict=False)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


def _task(record: dict[str, Any], default_id: str) -> Task:
    query = record.get("query", record.get("prompt"))
    if isinstance(query, list):
        query = query[0] if query else ""
    extra = {k: v for k, v in record.items() if k not in ("id", "category", "completion")}
    return Task(
        str(record.get("id", default_id)),
        str(query or ""),
        tuple(record.get("completion") or ()),
        record.get("category"),
        extra,
    )


@dataclass(frozen=True)
class _EpisodePlan:
    """What an episode of one task is offered, the same at every reset of it (built once per task)."""

    apis: list[dict[str, Any]]
    functions: dict[str, tuple[str, str, str]]  # function -> (category, tool, api)
    hub_apis: dict[str, tuple[Any, Any]]  # function -> the hub's (tool, api)
    functions_key: dict[str, str]  # function -> what its API does ("weather.current")
    docs: str
    tools: list[dict[str, Any]]
    needed: NeededCalls  # the calls of the task's solution an answer must rest on

    @cached_property
    def function_names(self) -> tuple[str, ...]:
        """The functions in the order calls are routed to them (ToolBench's first match)."""
        return tuple(self.functions)

    @cached_property
    def routes(self) -> dict[str, str | None]:
        """Where a call of each offered function's own name goes (most calls), routed once."""
        return {name: route(name, self.function_names) for name in self.function_names}

    def route(self, name: str) -> str | None:
        """The function a called name means (ToolBench's rule: ``steps.route``)."""
        return self.routes.get(name) or route(name, self.function_names)

    def key_of(self, function: str) -> str:
        """What a function does (its API's key), or its own name when the hub has no such API."""
        return self.functions_key.get(function, function)


#: Episode plans shared by the envs of a process (their tasks are shared too, read-only): by the task
#: object (kept alive here, so its id stays its own) and the retriever settings that choose its APIs.
_PLANS: dict[tuple[int, str | None, int], tuple[Task, _EpisodePlan]] = {}


class RapidAPIEnv(ToolEnv):
    """Answer a user's request by calling RapidAPI tools, then end with ``Finish``.

    ## Description
    ToolLLM (Qin et al. 2024): instructions that need one tool (G1), several tools of a category
    (G2) or of a collection (G3), called with OpenAI-style function calling. Here the tools are the
    hub's (``mock_services/rapidapi``: 215 tools, 1,245 APIs, 49 categories, one shared world), so
    every call has a correct, repeatable answer. ``query_file=`` plays ToolBench's own query files
    instead, answered from StableToolBench's cache (``cache_dir=``) or, without an entry there,
    by a placeholder shaped like the API's response (``info["call_sources"]`` counts which).

    ## Action Space
    Text: a tool call as JSON, ``{"name": "<function>", "arguments": {...}}`` (arguments may be a
    JSON string), an OpenAI ``tool_calls`` entry, or a list of calls (run in order, at most 8).
    Functions are named as ToolBench names them (``<api>_for_<tool>``, 64 characters at most) and
    routed as ToolBench routes them (the first function whose name ends with the called name).
    ``Finish`` with ``return_type`` ``give_answer`` (and ``final_answer``) or
    ``give_up_and_restart`` ends the episode.

    ## Observation Space
    The query; then, per call, ToolBench's observation: the JSON of ``{"error", "response"}``, cut
    at 1,024 characters with ``...`` (one line per call). ``response`` is the API's JSON answer; with
    ``response_format="toolbench"`` it is that answer's Python text cut at 2,048 characters, as
    ToolBench's service sends it. An API's error answer (a 4xx) has ``error`` ``"Message error..."``.

    ## Rewards
    1.0 when the ending passes, paid at the end. A solvable task passes when the final answer
    states every answer fact (numbers at the answer's precision, words in order, case, accents and
    date formats aside) and lists little else of what the calls returned; an unsolvable one when the
    agent gives up or says it cannot be done (``mock_services/rapidapi/passrule.py``).
    ``info`` has ``passed`` (and only with ``diagnostics=True``: ``facts_found``, ``facts_total``,
    ``made_the_calls`` and the ``verdict``'s ``solvable`` and ``listed``), ``status_code`` (ToolBench's: 0 the
    service answered, 1 no such function, 2 a Finish input error, 3 final answer, 4 gave up, 6-11
    the service's errors, 11 for an API's error answer), ``http_status`` of each hub call, and at
    the end the functions called and failed, and ``call_sources``: how many calls that reached an
    API were answered from StableToolBench's cache (``cache``), by the hub's service for the API
    (``simulated``) or by a placeholder with only the API's shape (``placeholder``: an original
    query's call with no cache entry). Original queries have no facts: ``passed`` is ``None``.

    ## Starting State
    A fresh hub session (no files, messages, payments or carts); the query.

    ## Episode End
    ``Finish`` with an answer or giving up, or ``max_steps`` (default 20; no answer then).

    ## Arguments
    ``gym.make("toolbench/RapidAPI-v0", split="G1_instruction", query_file=None, ids_file=None,
    cache_dir=None, response_format="json", retriever=None, top_k=5, diagnostics=False)``. Splits: the
    six test sets, ``test`` (all six), ``train``, ``demo`` and ``unseen`` (the held-out categories'
    tools, asked in phrasings no other split uses). ``retriever="bm25"`` or ``"dense"`` offers the
    ``top_k`` APIs the retriever finds for the query instead of the task's (ToolLLM's
    DFSDT-Retriever setting).
    """

    default_max_steps = 20
    metric_names = METRICS
    headline_metric = "passed"  # ToolLLM's pass rate
    run_options = ("cache_dir",)
    finishing_action = FINISH
    docs_per_task = True  # each query has its own APIs
    # The query, the APIs it comes with (relevant ones among others, in no telling order) and
    # whether it is one of ToolBench's own queries.
    input_fields = ("query", "query_id", "api_list", "original")
    score_details = ("verdict",)  # passed per test set (and solvable, with diagnostics), for the split's pass rates

    def __init__(
        self,
        query_file: str | Path | None = None,
        ids_file: str | Path | None = None,
        cache_dir: str | Path | None = None,
        response_format: str = "json",
        retriever: str | None = None,
        top_k: int = 5,
        **kwargs: Any,
    ) -> None:
        if retriever not in (None, "bm25", "dense"):
            raise ValueError(f"retriever must be None, 'bm25' or 'dense', not {retriever!r}")
        if top_k < 1:
            raise ValueError("top_k must be at least 1")
        self.retriever_name, self.top_k = retriever, top_k
        self._retriever: Any = None
        if response_format not in RESPONSE_FORMATS:
            raise ValueError(f"response_format must be one of {list(RESPONSE_FORMATS)}, not {response_format!r}")
        self.cache_dir = cache_dir
        self._cache = ResponseCache(cache_dir) if cache_dir is not None else None  # read once, kept across episodes
        self.response_format = response_format
        if query_file is not None:
            split = Path(query_file).stem

            def read() -> TaskSet:
                records = read_query_file(query_file, ids_file)
                return TaskSet.of(
                    _task({**r, "category": split, "original": True}, f"{split}-{n}") for n, r in enumerate(records)
                )

            # Read once for every env of the process made with the same files, while one plays them.
            key = ("rapidapi-queries", store.file_key(query_file), ids_file and store.file_key(ids_file))
            kwargs["tasks"] = store.held(key, read)
            kwargs["split"] = split
        super().__init__(**kwargs)
        self._functions: dict[str, tuple[str, str, str]] = {}  # function -> (category, tool, api)
        self._backend: OriginalBackend | None = None
        self._state: dict[str, Any] = {}
        self._called: list[str] = []
        self._failed: list[str] = []
        self._http: list[int] = []
        self._hub_calls: list[tuple[str, dict[str, Any], bool]] = []  # function, arguments, answered with a 200
        self._sources: list[str] = []  # where each call that reached an API got its response (CALL_SOURCES)
        self._returned: list[tuple[str, Any]] = []  # each call's observation and response, not to be pasted
        self._episode_apis: list[dict[str, Any]] = []  # the APIs offered this episode
        self._functions_key: dict[str, str] = {}
        self._hub_apis: dict[str, tuple[Any, Any]] = {}
        self._plan_now: _EpisodePlan | None = None
        # How many facts an answer states, and whether a task is solvable, are the answer's shape:
        # only run records see them (an agent that replays a task privately would learn it).
        self.metric_names = DIAGNOSTIC_METRICS if self.diagnostics else METRICS

    # ------------------------------------------------------------------ tasks
    def clone_for(self, task: Task) -> RapidAPIEnv:
        """An ungraded env for ``task`` with this one's settings (a search agent's private copy)."""
        return type(self)(  # never with diagnostics: the copy is the agent's
            tasks=[task], split=self.split, mode=self.mode, max_steps=self.max_steps, graded=False,
            cache_dir=self.cache_dir,
            response_format=self.response_format, retriever=self.retriever_name, top_k=self.top_k,
        )  # fmt: skip

    @classmethod
    def load_split(cls, split: str) -> list[Task]:
        names = TEST_SETS if split == "test" else (split,)
        return [
            _task(record, f"rapidapi-{name}-{n}")
            for name in names
            for n, record in enumerate(read_records(fixture_file(cls.fixture_slug, f"{name}.jsonl")))
        ]

    @classmethod
    def read_tasks(cls, path: str | Path, id_prefix: str) -> list[Task]:
        """Our JSONL, or one of ToolBench's query files (a JSON list)."""
        if Path(path).suffix == ".json":
            return [_task({**r, "original": True}, f"{id_prefix}-{n}") for n, r in enumerate(read_query_file(path))]
        return [_task(record, f"{id_prefix}-{n}") for n, record in enumerate(read_records(path))]

    @classmethod
    def missing_fields(cls, task: Task) -> list[str]:
        """A query, and what scores it: for our records a solvable task's answer facts (the pass
        rule needs no solution path); ToolBench's query files have none, a judge scores them."""
        missing = [] if task.prompt.strip() else ["query"]
        if not task.get("original") and task.get("solvable", True) and not task.get("answer_facts"):
            missing.append("answer_facts")
        return missing

    # ------------------------------------------------------------------ episode
    def _begin(self, task: Task) -> str:
        self._state, self._called, self._failed, self._http = {}, [], [], []
        self._hub_calls, self._returned, self._sources = [], [], []
        key = (id(task), self.retriever_name, self.top_k)
        kept = _PLANS.get(key)
        if kept is None or kept[0] is not task:
            while len(_PLANS) >= MAX_PLANS_KEPT:  # the oldest go: the process's memory stays bounded
                del _PLANS[next(iter(_PLANS))]
            kept = _PLANS[key] = (task, self._plan(task))
        plan = self._plan_now = kept[1]
        self._episode_apis, self._functions = plan.apis, plan.functions
        self._hub_apis, self._functions_key = plan.hub_apis, plan.functions_key
        self._backend = OriginalBackend(plan.apis, self._cache) if task.get("original") else None
        return task.prompt

    def _plan(self, task: Task) -> _EpisodePlan:
        """What every episode of ``task`` is offered: its APIs, their functions, the hub's tool and API
        behind each function, and the docs and tool schemas shown at reset."""
        api_list = self._api_list(task)
        functions: dict[str, tuple[str, str, str]] = {}  # function -> (category, tool, api)
        for entry in api_list:
            function = api_function({"name": entry["api_name"], **entry}, entry["tool_name"])["function"]["name"]
            functions.setdefault(function, (entry["category_name"], entry["tool_name"], entry["api_name"]))
        hub_apis = {}
        for function, (category, tool_name, api_name) in functions.items():
            tool = hub().tool(tool_name)
            api = tool.api(api_name) if tool is not None and tool.category == category else None
            if tool is not None and api is not None:
                hub_apis[function] = (tool, api)
        functions_key = {function: api.key for function, (_, api) in hub_apis.items()}
        schemas = [
            api_function({"name": e["api_name"], "description": e.get("api_description", ""), **e}, e["tool_name"])
            for e in api_list
        ]
        tools: dict[str, str] = {}
        for entry in api_list:
            tool = hub().tool(entry["tool_name"]) if not task.get("original") else None
            tools.setdefault(entry["tool_name"], tool.description if tool else entry.get("tool_description", ""))
        listed = "\n".join(f"{n}. {name}: {about}" for n, (name, about) in enumerate(tools.items(), start=1))
        docs = (
            "Call the functions to handle the user's request; end with Finish (give_answer with the whole "
            f"answer, or give_up_and_restart). The tools:\n{listed}"
        )
        needed = NeededCalls.of(
            list(task.get("solution") or []), lambda function: functions_key.get(function, function)
        )
        return _EpisodePlan(api_list, functions, hub_apis, functions_key, docs, [*schemas, finish_function()], needed)

    def _act(self, action: str) -> Outcome:
        lines, codes, http = [], [], len(self._http)
        failed_before = len(self._failed)
        for name, raw in calls_of(action):
            if name == FINISH:
                ending = read_finish(raw if isinstance(raw, (str, dict)) else json.dumps(raw))
                if ending.status in (FINAL_ANSWER, GAVE_UP):
                    said = ANSWERED_OBSERVATION if ending.status == FINAL_ANSWER else GAVE_UP_OBSERVATION
                    return self._scored("\n".join([*lines, said]), ending.answer, ending.status)
                lines.append(ending.error)
                codes.append(INPUT_ERROR)
                continue
            text, code = self._call(name, raw)
            lines.append(text)
            codes.append(code)
        failed = self._failed[failed_before:]
        error = None if not failed and all(c == OK for c in codes) else f"a call failed: {(failed or ['Finish'])[-1]}"
        metrics = {"status_code": codes[-1], "status_codes": codes, "http_status": self._http[http:]}
        return Outcome("\n".join(lines), done=False, executable=error is None, error=error, metrics=metrics)

    def _call(self, name: str, raw: Any) -> tuple[str, int]:
        """One API call: its observation and ToolBench's status code. As in ToolBench, a call the
        service answered is status 0 even when the API refused it, except that an API's error answer
        comes as ``"Message error..."`` (status 11); its HTTP status is in ``info["http_status"]``."""
        function = self._plan_now.route(name) if self._plan_now else None
        if function is None:
            self._failed.append(name[:80])
            return observation(f"No such function name: {name[:200]}", ""), NO_FUNCTION
        self._called.append(function)
        arguments = _arguments(raw)
        if arguments is None:
            self._failed.append(function)
            return observation(PARSE_ERROR["error"], ""), OK
        found = self._hub_apis.get(function)
        if self._backend is not None and found is None:  # an original query's API the hub does not have
            body, source = self._backend.call(*self._functions[function], arguments)
            self._sources.append(source)
            code = status_of(body.get("error"))
            if code != OK:
                self._failed.append(function)
            return observation(str(body.get("error", "")), self._shown(body.get("response", ""))), code
        if found is None:
            self._failed.append(function)
            self._sources.append(PLACEHOLDER)
            return observation("", self._shown({"message": "API doesn't exists"})), OK
        tool, api = found
        self._sources.append(SIMULATED)
        status, body = call(tool, api, arguments, self._state.setdefault(tool.standard_name, {}))
        self._http.append(status)
        if status != 200:
            self._failed.append(function)
        self._hub_calls.append((function, arguments, status == 200))
        answer = reply(status, body)  # an API's error answer is "Message error...", as ToolBench's service says
        text = observation(answer["error"], self._shown(answer["response"]))
        self._returned.append((text, answer["response"]))
        return text, status_of(answer["error"])

    def _shown(self, body: Any) -> Any:
        """A response as this env shows it: the JSON value, or with ``response_format="toolbench"``
        its Python text cut at 2,048 characters, as ToolBench's service sends it."""
        if self.response_format == "toolbench" and not isinstance(body, str):
            return str(body)[:TOOLBENCH_RESPONSE_LIMIT]
        return body

    def _api_list(self, task: Task) -> list[dict[str, Any]]:
        """The task's APIs, or, with a retriever, the hub's ``top_k`` APIs for its query (ToolLLM's
        DFSDT-Retriever setting: the agent gets what the retriever finds, not the ground truth)."""
        if self.retriever_name is None or task.get("original"):
            return list(task.get("api_list") or [])
        if self._retriever is None:
            from toolbench.retrieval.factory import retriever

            self._retriever = retriever(self.retriever_name)
        records = []
        for tool_name, api_name in self._retriever.search(task.prompt, self.top_k):
            tool = hub().tool(tool_name)
            api = tool.api(api_name) if tool is not None else None
            if tool is not None and api is not None:
                records.append(api_record(tool, api))
        return records

    # ------------------------------------------------------------------ scoring
    def _scored(self, text: str, answer: str | None, status: int) -> Outcome:
        assert self.task is not None
        sources = {source: self._sources.count(source) for source in CALL_SOURCES}
        metrics: dict[str, Any] = {"status_code": status, "apis_called": list(self._called),
                                   "apis_failed": list(self._failed), "final_answer": answer,
                                   "call_sources": sources}  # fmt: skip
        if self.task.get("original"):  # scored by the ToolEval judge, not here
            metrics.update(dict.fromkeys(self.metric_names))
            return Outcome(text, done=True, metrics=metrics)
        facts = list(self.task.get("answer_facts") or [])
        solvable = bool(self.task.get("solvable", True))
        evidence = self._evidence(solvable)
        shown = (part for text, response in self._returned for part in shown_texts(text, response))
        answered = (response for (_, _, ok), (_, response) in zip(self._hub_calls, self._returned) if ok)
        returned = Returned.of(answered, self.task.prompt, facts)
        verdict = judge(answer, status == GAVE_UP, facts, solvable, evidence, shown, returned)
        metrics["passed"] = verdict.passed
        # For the split's pass rates per test set (``summarize_episodes``), named by the task id.
        metrics["verdict"] = {"passed": verdict.passed, "test_set": test_set_of(self.task.id)}
        if self.diagnostics:  # the answer's shape: how many facts, solvable or not, the calls it rests on
            metrics.update(facts_found=verdict.facts_found, facts_total=verdict.facts_total, made_the_calls=evidence)
            metrics["verdict"].update(solvable=solvable, listed=verdict.listed)
        return Outcome(text, done=True, score=float(verdict.passed), success=verdict.passed, metrics=metrics)

    def _evidence(self, solvable: bool) -> bool:
        assert self.task is not None and self._plan_now is not None
        key_of = self._plan_now.key_of
        answered = [(function, arguments) for function, arguments, ok in self._hub_calls if ok]
        tried = [(function, arguments) for function, arguments, _ in self._hub_calls]
        return self._plan_now.needed.made(answered, tried, key_of, solvable)

    @staticmethod
    def summarize_episodes(infos: list[dict[str, Any]]) -> dict[str, float]:
        """Pass rates per ToolBench test set, and (from run records, made with ``diagnostics=True``) of
        the solvable and unsolvable tasks, over the episodes this env could judge. Where not every call was answered by
        the hub (original queries), also the share of calls answered from the cache or the hub
        (``calls_answered``) and of episodes with no placeholder response (``episodes_all_answered``)."""
        groups: dict[str, list[bool]] = {}
        for info in infos:
            verdict = info.get("verdict")
            if not isinstance(verdict, dict) or verdict.get("passed") is None:
                continue
            if verdict.get("test_set") in TEST_SETS:
                groups.setdefault(f"pass_{verdict['test_set']}", []).append(bool(verdict["passed"]))
            if "solvable" in verdict:  # diagnostics only (run records)
                kind = "pass_solvable" if verdict["solvable"] else "pass_unsolvable"
                groups.setdefault(kind, []).append(bool(verdict["passed"]))
        summary = {key: sum(values) / len(values) for key, values in sorted(groups.items())}
        tally = tally_sources(infos)
        if tally.cached or tally.placeholders:
            summary["calls_answered"] = (tally.calls - tally.placeholders) / tally.calls
            summary["episodes_all_answered"] = (tally.episodes - tally.with_placeholder) / tally.episodes
        return summary

    def _on_truncation(self, last: Outcome) -> Outcome | None:
        return self._scored(last.observation, None, last.metrics.get("status_code", OK))

    # ------------------------------------------------------------------ contract hooks
    def tools(self) -> list[dict[str, Any]] | None:
        """The episode's tool schemas; the same list at every reset of a task: treat it as read-only."""
        if self.task is None or self._plan_now is None:
            return [finish_function()]
        return self._plan_now.tools

    def api_docs(self) -> str:
        if self.task is None or self._plan_now is None:
            return ""
        return self._plan_now.docs

    def oracle_actions(self, task: Task) -> list[str]:
        return list(task.references)

    def shared_parts_actions(self, task: Task) -> list[str] | None:
        """What every task's answer shares: ending with ``Finish`` and an answer in the reference's
        words, without the calls (each task's own) and the facts they return."""
        return [self.answer_action("Here is what I found.")]

    def answer_action(self, answer: str) -> str:
        return json.dumps({"name": FINISH, "arguments": {"return_type": "give_answer", "final_answer": answer}})

    def give_up_action(self) -> str:
        return json.dumps({"name": FINISH, "arguments": {"return_type": "give_up_and_restart"}})

    def _get_backend_state(self) -> Any:
        return {
            "state": copy.deepcopy(self._state),
            "called": list(self._called),
            "failed": list(self._failed),
            "http": list(self._http),
            "hub_calls": copy.deepcopy(self._hub_calls),
            "returned": copy.deepcopy(self._returned),
            "sources": list(self._sources),
        }

    def _set_backend_state(self, state: Any) -> None:
        if self.task is not None:
            self._begin(self.task)
        self._state = copy.deepcopy(state["state"])
        self._called, self._failed = list(state["called"]), list(state["failed"])
        self._http = list(state["http"])
        self._hub_calls = copy.deepcopy(state.get("hub_calls", []))
        self._returned = copy.deepcopy(state.get("returned", []))
        self._sources = list(state.get("sources", []))
