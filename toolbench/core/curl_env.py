"""The shared machinery of REST tasks whose action is one curl command (OpenWeather, The Cat API).

As in ToolBench, the first line of the action that starts with ``curl`` is the call. It is parsed
(never run by a shell), sent in-process to the task's Flask fake, and the response body is the
observation. Scoring runs the prediction and each reference against fresh, identical state and
compares what they produced (``_compare``); the best reference wins.
"""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlsplit

from toolbench.core.curl import CurlCommand, CurlError, find_curl_command, parse_curl
from toolbench.core.env import ActionError, Outcome, ToolEnv
from toolbench.core.scoring import PRF, ZERO, best_prf, dict_f1, f1_without
from toolbench.core.tasks import Task
from toolbench.core.transport import HostNotServed, HttpRequest, HttpResponse, Router

API_KEY_PLACEHOLDER = "{API_KEY}"


@dataclass
class Execution:
    """One request run against a backend: the response and the state changes it made."""

    request: HttpRequest
    response: HttpResponse
    effects: dict[str, Any] = field(default_factory=dict)
    _fields: dict[Any, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.response.ok

    def fields(self) -> dict[Any, Any]:
        """``response_fields`` of the response, read once (a reference's are read at every step)."""
        if self._fields is None:
            self._fields = response_fields(self.response)
        return self._fields


def response_fields(response: HttpResponse) -> dict[Any, Any]:
    """A response body as a dict of comparable top-level fields.

    JSON objects as they are; JSON arrays keyed by index (as ToolBench does); XML documents keyed
    by their top-level elements (each compared as canonical text); anything else as one field.
    """
    text = response.text
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):
        body = None
        if text.lstrip().startswith("<"):
            try:
                root = ET.fromstring(response.body)
            except ET.ParseError:
                return {"body": text}
            fields: dict[Any, Any] = {"<root>": root.tag}
            for index, child in enumerate(root):
                key = child.tag if sum(1 for c in root if c.tag == child.tag) == 1 else f"{child.tag}[{index}]"
                fields[key] = ET.tostring(child, encoding="unicode")
            return fields
        return {"body": text}
    if isinstance(body, dict):
        return body
    if isinstance(body, list):
        return dict(enumerate(body))
    return {"body": body}


PERFECT = PRF(1.0, 1.0, 1.0)


def fields_f1(prediction: Execution, reference: Execution) -> PRF:
    """ToolBench's field comparison of two responses: ``dict_f1`` of their fields. Identical bodies
    have identical fields, each equal to itself (unless a JSON ``NaN``, equal to nothing, is in
    them), so they match without reading them: a correct answer costs no walk of the response."""
    body = prediction.response.body
    if body == reference.response.body and b"NaN" not in body:
        return PERFECT
    return dict_f1(prediction.fields(), reference.fields())


def canonical_request(request: HttpRequest, headers: tuple[str, ...] = ("x-api-key",)) -> tuple[Any, ...]:
    """A request reduced to what a service sees, so equivalent spellings compare equal.

    ``headers`` are the header names that change the answer (an API key sent as a header).
    """
    parts = urlsplit(request.url)
    query = tuple(sorted(parse_qsl(parts.query, keep_blank_values=True)))
    significant = tuple(request.header(name) for name in headers)
    path = parts.path.rstrip("/") or "/"  # the string-compared service (The Cat API) routes both alike
    return request.method.upper(), parts.hostname, path, query, _canonical_body(request.body), significant


def _canonical_body(body: bytes) -> Any:
    """A flat JSON object and the same fields form-encoded compare equal (the services read both
    alike, numbers in forms being text); anything else compares as sorted JSON or sorted form pairs."""
    try:
        data: Any = json.loads(body) if body else None
    except (ValueError, RecursionError):
        return tuple(sorted(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)))
    scalars = (str, int, float)
    if isinstance(data, dict) and all(isinstance(v, scalars) and not isinstance(v, bool) for v in data.values()):
        return tuple(
            sorted((key, value if isinstance(value, str) else json.dumps(value)) for key, value in data.items())
        )
    return json.dumps(data, sort_keys=True)


class CurlProgramEnv(ToolEnv):
    """Base env for curl tasks; subclasses wire the backend and say how responses compare."""

    service_host: ClassVar[str]
    api_key: ClassVar[str]
    metric_names = ("precision", "recall", "f1")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # Every reference runs on a fresh back end, so its result is the same for every env of this
        # class that plays these tasks: the envs of a vector env's worker share one cache.
        self._reference_cache: dict[tuple[str, int], Execution | str] = self._task_set.derived(
            (type(self), "references")
        )

    # ----------------------------------------------------------------- backend hooks
    def _episode_router(self) -> Router:
        """The router whose backend holds this episode's state."""
        raise NotImplementedError

    def _fresh_router(self) -> Router:
        """A router over a backend in the fresh state every episode starts from."""
        raise NotImplementedError

    def _snapshot(self, router: Router) -> Any:
        """State of ``router``'s backend, for computing effects (None when stateless)."""
        return None

    def _effects(self, before: Any, after: Any) -> dict[str, Any]:
        return {}

    def _prepare(self, request: HttpRequest) -> HttpRequest:
        """Add what the benchmark harness adds to every call (e.g. the API key header)."""
        return request

    def _compare(self, prediction: Execution, reference: Execution) -> PRF:
        """The benchmark's comparison (``info``'s precision, recall and F1; F1 = 1 is success)."""
        return fields_f1(prediction, reference)

    def shared_fields(self, reference: Execution) -> frozenset[Any]:
        """The fields of ``reference``'s response that do not depend on the task's input (the same
        call about another input gets them equal): the reward does not pay for them."""
        return frozenset()

    def _own_score(self, prediction: Execution, reference: Execution, paper: PRF) -> float:
        """The reward against one reference: ``paper``'s F1 over the fields that depend on the task's
        input. A change (effects) is one record under its id, with nothing shared in it."""
        if paper.f1 == 1.0 or prediction.effects or reference.effects:
            return paper.f1
        shared = self.shared_fields(reference)
        return f1_without(prediction.fields(), reference.fields(), shared).f1 if shared else paper.f1

    # ----------------------------------------------------------------- episode
    def _begin(self, task: Task) -> str:
        return task.prompt

    def parse_action(self, action: str) -> CurlCommand:
        """The request an action makes (raises ``ActionError`` with the reason when it cannot run)."""
        try:
            command = parse_curl(find_curl_command(action).replace(API_KEY_PLACEHOLDER, self.api_key))
        except CurlError as exc:
            raise ActionError(str(exc)) from None
        host = command.request.host  # the parser already dropped a fully qualified name's final dot
        if host != self.service_host:
            raise ActionError(
                f"refused: host {host!r} is not this task's service; send the call to {self.service_host}"
            )
        prepared = self._prepare(command.request)
        return command if prepared is command.request else dataclasses.replace(command, request=prepared)

    def execute(self, request: HttpRequest, router: Router) -> Execution:
        before = self._snapshot(router)
        try:
            response = router.send(request)
        except HostNotServed as exc:  # parse_action already checked the host; keep the env safe anyway
            raise ActionError(str(exc)) from None
        return Execution(request, response, self._effects(before, self._snapshot(router)))

    def _act(self, action: str) -> Outcome:
        assert self.task is not None
        command = self.parse_action(action)
        execution = self.execute(command.request, self._episode_router())
        response = execution.response
        observation = (response.head_text() if command.include_headers else "") + (
            "" if command.head_only else response.text
        )
        if self.task.get("compare_string_only"):
            # The original's records name ids of a live account: the request is the answer, as there
            # (our account may lack the id, so the fake's reply cannot decide).
            prf = self._string_score(self.task, command.request)
            matched = prf.f1 == 1.0
            return Outcome(
                observation,
                done=True,
                score=prf.f1,
                success=matched,
                executable=matched or execution.ok,
                error=None if matched else "the request differs from every reference",
                metrics=prf.as_dict(),
            )
        if not execution.ok:
            return Outcome(
                observation,
                done=True,
                executable=False,
                error=f"HTTP {response.status}: {response.text[:300]}",
                metrics=ZERO.as_dict(),
            )
        if command.head_only:
            return Outcome(
                observation,
                done=True,
                error="curl -I (--head) prints the status line and headers only, not the response the task asks for",
                metrics=ZERO.as_dict(),
            )
        references = [ref for ref in self._references(self.task) if isinstance(ref, Execution)]
        if not references:
            return Outcome(
                observation, done=True, error="no reference of this task could be executed", metrics=ZERO.as_dict()
            )
        compared = [self._compare(execution, ref) for ref in references]
        _, prf = best_prf(compared)
        score = max(self._own_score(execution, ref, paper) for ref, paper in zip(references, compared, strict=True))
        return Outcome(observation, done=True, score=score, success=prf.f1 == 1.0, metrics=prf.as_dict())

    # ----------------------------------------------------------------- references
    def _references(self, task: Task) -> list[Execution | str]:
        """Each reference run on fresh state (or why it could not run); cached per task."""
        results = []
        for index, reference in enumerate(task.references):
            key = (task.id, index)
            if key not in self._reference_cache:
                try:
                    command = self.parse_action(reference)
                    execution = self.execute(command.request, self._fresh_router())
                    self._reference_cache[key] = execution if execution.ok else f"HTTP {execution.response.status}"
                except ActionError as exc:
                    self._reference_cache[key] = str(exc)
            results.append(self._reference_cache[key])
        return results

    def _string_score(self, task: Task, request: HttpRequest) -> PRF:
        """ToolBench's ``compare_string_only`` mode, made robust: compare canonical requests."""
        ours = canonical_request(request)
        for reference in task.references:
            try:
                if canonical_request(self.parse_action(reference).request) == ours:
                    return PERFECT
            except ActionError:
                continue
        return ZERO
