"""The shared machinery of tasks whose answer is a sequence of API calls that set criteria.

Home Search and Trip Booking (ToolBench) both work like this: an API object collects criteria
through setter calls that follow rules, ``search()`` submits them, and the score is the dict F1
between the criteria the prediction set and those each reference sets, paid only for criteria
that a ``search()`` submitted.

- ``mode="program"``: the action is the whole program, parsed by ``core.program`` (never
  executed); a broken rule makes it not executable.
- ``mode="interactive"``: one call per step, written as Python (``API.set_num_beds(2)``) or as a
  JSON tool call (``{"name": "set_num_beds", "arguments": {"value": 2}}``). The observation is
  the call's result; the episode ends at ``search()`` or at ``max_steps``.
"""

from __future__ import annotations

import ast
import inspect
import reprlib
from collections.abc import Callable, Collection, Mapping
from types import MappingProxyType
from typing import Any, ClassVar

from toolbench.core.env import ActionError, Outcome, ToolEnv
from toolbench.core.functions import FunctionSpec, api_docs
from toolbench.core.program import Call, ProgramError, RuleError, parse_program
from toolbench.core.scoring import PRF, ZERO, best_prf, deep_equal, dict_f1, f1_without
from toolbench.core.tasks import Task
from toolbench.core.toolcalls import ToolCallError, parse_tool_call, unfenced


class CriteriaApiEnv(ToolEnv):
    """Base env; subclasses name the API's functions, value constructors and backend factory."""

    modes = ("program", "interactive")
    default_max_steps = 30
    metric_names = ("precision", "recall", "f1")
    functions: ClassVar[tuple[FunctionSpec, ...]]
    constructors: ClassVar[Mapping[str, Callable[..., Any]]] = {}
    #: For JSON tool calls: parameter kind -> function turning the JSON value into the Python value.
    json_values: ClassVar[Mapping[str, Callable[[Any], Any]]] = {}
    finish: ClassVar[str] = "search"
    finishing_action: ClassVar[str | None] = "API.search()"
    # A call, or a name given a value (``location_to = Loc("New York")``), as the programs write them.
    action_line: ClassVar[str | None] = r"(?:[A-Za-z_]\w*\s*=\s*)?(?:API\.\w+|[A-Z]\w*)\(.*\)"
    #: Criteria the API fills in by itself (``search()``'s defaults). The benchmark's F1 counts them,
    #: so a bare ``search()`` earns some; the reward (``score``) leaves them out of both sides.
    free_criteria: ClassVar[Mapping[str, Any]] = {}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._specs = {spec.name: spec for spec in self.functions}
        # Each reference runs on a new API, so the criteria it sets are the same for every env of this
        # class that plays these tasks: the envs of a vector env's worker share them (read-only).
        self._reference_criteria: dict[tuple[str, int], Mapping[str, Any] | None] = self._task_set.derived(
            (type(self), "reference criteria")
        )
        self._api: Any = None
        self._variables: dict[str, Any] = {}
        self._searched = False  # whether the finishing call ran and passed its checks

    def new_api(self) -> Any:
        """A backend in its starting state (an object with the functions and a ``criteria`` dict)."""
        raise NotImplementedError

    # ----------------------------------------------------------------- running calls
    def run_call(self, api: Any, call: Call) -> str:
        """Apply one call; raises ``ActionError`` naming the line and the rule when it fails."""
        method = getattr(api, call.function)
        signature, positional = _signature(api, call.function)
        if call.kwargs or len(call.args) != positional:  # else the arguments fit: one per parameter
            try:
                signature.bind(*call.args, **call.kwargs)
            except TypeError as exc:
                raise ActionError(f"{self._where(call)}{call.function}(): {exc}") from None
        try:
            result = method(*call.args, **call.kwargs)
        except RuleError as exc:
            raise ActionError(f"{self._where(call)}{exc}") from None
        self._searched = self._searched or call.function == self.finish
        return result

    def _where(self, call: Call) -> str:
        return f"line {call.line}: " if self.mode == "program" else ""

    def run_program(self, api: Any, text: str) -> str:
        try:
            calls = parse_program(text, self._specs, self.constructors)
        except ProgramError as exc:
            raise ActionError(str(exc)) from None
        outputs = [self.run_call(api, call) for call in calls]
        if not outputs or not any(call.function == self.finish for call in calls):
            outputs.append(f"Criteria set (search() was not called): {api.criteria}")
        return outputs[-1]

    # ----------------------------------------------------------------- episode
    def _begin(self, task: Task) -> str:
        self._api = self.new_api()
        self._variables = {}
        self._searched = False
        return task.prompt

    def _act(self, action: str) -> Outcome:
        assert self.task is not None
        if self.mode == "program":
            observation = self.run_program(self._api, action)
            return self._scored(observation)
        before = dict(self._variables)
        call = self._interactive_call(action)
        if call is None:
            assigned = [k for k, v in self._variables.items() if k not in before or before[k] is not v]
            return Outcome("OK: " + ", ".join(f"{k} = {_short(self._variables[k])}" for k in assigned), done=False)
        observation = self.run_call(self._api, call)
        if call.function == self.finish:
            return self._scored(observation)
        return Outcome(observation, done=False)

    def _on_truncation(self, last: Outcome) -> Outcome | None:
        final = self._scored(last.observation)  # cut off: score the criteria set so far
        final.executable, final.error = last.executable, last.error
        return final

    def _scored(self, observation: str) -> Outcome:
        prf = self.score_criteria(self.task, self._api.criteria)
        # The reward needs a search that passed its checks (the required criteria): criteria left
        # unsubmitted, or a search refused, earn the benchmark's F1 in info but no reward.
        reward = prf.f1 if self._searched else 0.0
        if self.free_criteria:  # never more than the benchmark's F1, nor anything for the defaults alone
            reward = min(reward, self.score_criteria(self.task, self._api.criteria, self.free_criteria).f1)
        return Outcome(observation, done=True, score=reward, success=prf.f1 == 1.0, metrics=prf.as_dict())

    def _interactive_call(self, action: str) -> Call | None:
        text = action.strip()
        # Fences aside, a JSON call starts with { or [; other text (most calls) skips unfencing.
        if text.startswith(("{", "[", "`")) and (bare := unfenced(text)).startswith(("{", "[")):
            return self._json_call(bare)
        try:
            calls = parse_program(text, self._specs, self.constructors, variables=self._variables)
        except ProgramError as exc:
            raise ActionError(str(exc)) from None
        if len(calls) > 1:
            raise ActionError(f"interactive mode takes one call per step, got {len(calls)}")
        return calls[0] if calls else None

    def _json_call(self, text: str) -> Call:
        try:
            tool_call = parse_tool_call(text)
        except ToolCallError as exc:
            raise ActionError(str(exc)) from None
        spec = self._specs.get(tool_call.name)
        if spec is None:
            raise ActionError(f"unknown function {tool_call.name!r}; see the tools list")
        arguments = tool_call.arguments
        kinds = {p.name: p.kind for p in spec.params}
        converted = {}
        for name, value in arguments.items():
            convert = self.json_values.get(kinds.get(name, ""))
            try:
                converted[name] = convert(value) if convert else value
            except (TypeError, ValueError) as exc:
                raise ActionError(f"{spec.name}: argument {name!r}: {exc}") from None
        return Call(1, spec.name, (), converted)

    # ----------------------------------------------------------------- scoring
    def score_criteria(
        self, task: Task, criteria: Mapping[str, Any], leave_out: Mapping[str, Any] | None = None
    ) -> PRF:
        """Dict F1 of ``criteria`` against each reference's criteria; the best reference wins.
        ``leave_out``: criteria values dropped from both sides first (where the reference keeps some)."""
        scores = []
        for index in range(len(task.references)):
            reference = self._reference(task, index)
            if reference is None:
                continue
            if leave_out and (kept := _without(reference, leave_out)):
                scores.append(dict_f1(_without(criteria, leave_out), kept))
            else:
                scores.append(dict_f1(criteria, reference))
        return best_prf(scores)[1] if scores else ZERO

    def _reference(self, task: Task, index: int) -> Mapping[str, Any] | None:
        key = (task.id, index)
        if key not in self._reference_criteria:
            api = self.new_api()
            try:
                calls = parse_program(task.references[index], self._specs, self.constructors)
                for call in calls:
                    getattr(api, call.function)(*call.args, **call.kwargs)
                self._reference_criteria[key] = MappingProxyType(dict(api.criteria))
            except (ProgramError, RuleError, TypeError):
                self._reference_criteria[key] = None  # an unusable reference (e.g. in a user's file)
        return self._reference_criteria[key]

    # ----------------------------------------------------------------- contract hooks
    def api_docs(self) -> str:
        return api_docs(self.functions)

    def tools(self) -> list[dict[str, Any]]:
        return [spec.schema() for spec in self.functions]

    def oracle_actions(self, task: Task) -> list[str]:
        """Program mode: the reference. Interactive: one call per step, with variables inlined."""
        if self.mode == "program":
            return super().oracle_actions(task)
        names: dict[str, ast.expr] = {}
        actions = []
        for statement in ast.parse(task.references[0]).body:
            if isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
                names[statement.targets[0].id] = statement.value
            elif isinstance(statement, ast.Expr):
                actions.append(ast.unparse(_Inline(names).visit(statement)))
        return actions

    def _get_backend_state(self) -> Any:
        return {
            "api": self._api.snapshot() if self._api is not None else None,
            "variables": dict(self._variables),
            "searched": self._searched,
        }

    def _set_backend_state(self, state: Any) -> None:
        self._api = None  # a snapshot from before the first reset has no backend, as a new env
        if state["api"] is not None:
            self._api = self.new_api()
            self._api.restore(state["api"])
        self._variables = dict(state["variables"])
        self._searched = bool(state.get("searched", False))


_SIGNATURES: dict[tuple[type, str], tuple[inspect.Signature, int]] = {}


def _without(criteria: Mapping[str, Any], leave_out: Mapping[str, Any]) -> dict[str, Any]:
    return {
        key: value for key, value in criteria.items() if not (key in leave_out and deep_equal(value, leave_out[key]))
    }


def _signature(api: Any, function: str) -> tuple[inspect.Signature, int]:
    """The signature of ``api.function``, read once per API class (reading it costs more than the
    call), and how many positional arguments surely bind (-1 if that is not simply its length)."""
    key = (type(api), function)
    if key not in _SIGNATURES:
        signature = inspect.signature(getattr(api, function))
        simple = all(p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD for p in signature.parameters.values())
        _SIGNATURES[key] = signature, len(signature.parameters) if simple else -1
    return _SIGNATURES[key]


def _short(value: Any) -> str:
    return reprlib.repr(value)


class _Inline(ast.NodeTransformer):
    def __init__(self, names: dict[str, ast.expr]):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return self.names.get(node.id, node)


def cut_program(program: str, keep: Collection[str]) -> str:
    """``program`` with only its ``API.<name>(...)`` calls of the functions in ``keep`` and the
    assignments those calls read, directly or through other assignments."""
    statements = ast.parse(program).body
    kept = [
        s
        for s in statements
        if isinstance(s, ast.Expr)
        and isinstance(s.value, ast.Call)
        and isinstance(s.value.func, ast.Attribute)
        and s.value.func.attr in keep
    ]
    assignments = [s for s in statements if isinstance(s, ast.Assign)]
    while True:
        read = {node.id for statement in kept for node in ast.walk(statement) if isinstance(node, ast.Name)}
        more = [
            s for s in assignments if s not in kept and any(isinstance(t, ast.Name) and t.id in read for t in s.targets)
        ]
        if not more:
            break
        kept += more
    return "\n".join(ast.get_source_segment(program, s) or ast.unparse(s) for s in statements if s in kept)


class OwnCriteriaEnv(CriteriaApiEnv):
    """A criteria API env whose reward pays only for each task's own criteria.

    The benchmark's dict F1 (kept in ``info["f1"]``) also counts the criteria every task sets (those
    of ``shared_setters``) and ``search()``'s defaults, so a program that sets only those earns much
    of it. The reward, ``score``, is the dict F1 over the criteria beyond the ones the task's
    shared-parts answer (``shared_parts_actions``) gets right, paid only when every one of those
    shared criteria (``ungated_criteria`` aside) is right too (a search with a wrong shared criterion
    finds none of what was asked). A task whose criteria are all shared is all-or-nothing.
    """

    #: Shared criteria that earn nothing but need not be right for the rest to pay (one whose value
    #: narrows the search without emptying it, so a policy learning the rest still sees a reward).
    ungated_criteria: frozenset[str] = frozenset()

    def shared_setters(self, reference: str) -> Collection[str]:
        """The functions of ``reference`` that every task of its kind calls (``search`` aside)."""
        raise NotImplementedError

    def shared_parts_actions(self, task: Task) -> list[str]:
        program = task.references[0]
        cut = cut_program(program, {*self.shared_setters(program), self.finish})
        return self.oracle_actions(Task(task.id, task.prompt, (cut,), task.category, task.extra))

    def _scored(self, observation: str) -> Outcome:
        outcome = super()._scored(observation)
        outcome.score = self.own_score(self.task, self._api.criteria) if self._searched else 0.0
        return outcome

    def own_score(self, task: Task, criteria: Mapping[str, Any]) -> float:
        """The dict F1 over ``task``'s own criteria, for the best reference; 0 where a shared one is wrong."""
        best = 0.0
        for index in range(len(task.references)):
            reference, shared = self._reference(task, index), self._shared_criteria(task, index)
            if reference is None or shared is None:
                continue
            gates = {key: value for key, value in shared.items() if key not in self.ungated_criteria}
            if any(key not in criteria or not deep_equal(criteria[key], value) for key, value in gates.items()):
                continue
            best = max(best, f1_without(criteria, reference, shared).f1)
        return best

    def _shared_criteria(self, task: Task, index: int) -> Mapping[str, Any] | None:
        """The criteria of reference ``index`` that its shared-parts program sets to the same values
        (with what ``search()`` fills in from them)."""
        cache_ = self._task_set.derived((type(self), "shared criteria"))
        key = (task.id, index)
        if key not in cache_:
            reference = self._reference(task, index)
            cache_[key] = None
            if reference is not None:
                api = self.new_api()
                program = task.references[index]
                try:
                    for call in parse_program(
                        cut_program(program, {*self.shared_setters(program), self.finish}),
                        self._specs,
                        self.constructors,
                    ):
                        getattr(api, call.function)(*call.args, **call.kwargs)
                except (ProgramError, RuleError, TypeError, SyntaxError):
                    api = None  # a user's reference the cut cannot run: nothing is held as shared
                got = api.criteria if api is not None else {}
                cache_[key] = {k: v for k, v in got.items() if k in reference and deep_equal(v, reference[k])}
        return cache_[key]
