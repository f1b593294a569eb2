"""ToolEval: the pass rate and win rate of ToolLLM's runs, from ToolEval's converted answers.

Input is ToolEval's converted-answer file, ``{query_id: {query, available_tools, answer: {method,
total_steps, final_answer, answer_details}}}``, which ToolBench's and StableToolBench's converters
write and which our runs can be turned into.

**Pass rate.** Each query gets ``votes`` verdicts, as ToolEval gives them:
- no ``Finish`` in the last tool step, an empty answer or one that gives up: Unsolved;
- otherwise the judge's ``answer_status`` (Solved, Unsolved, Unsure), and when Unsure its
  ``parse_answer_status`` over the whole answer;
- with ``solvability``, the judge's ``task_solvable`` too, combined as ToolBench does: Solved
  passes; Unsolved fails on a solvable task, passes on an unsolvable one, is unsure otherwise;
  Unsure passes on an unsolvable task and is unsure otherwise.

A vote whose judge reply cannot be read (no call to the function, arguments that are not JSON, no
decision among the allowed ones), after ``JUDGE_ATTEMPTS`` tries, is Unjudged: never a coin flip
or an Unsure. A query with an Unjudged vote is left out of the rate, which is over the judged
queries and is always reported with their count.

The votes are then counted in one of two ways:
- ``count="toolbench"`` (the paper): an unsure vote is a coin flip, seeded by the query and the vote
  so a re-run agrees; a query passes when its failed votes are no more than its passed ones; the
  rate is the share of passed queries;
- ``count="sopr"`` (StableToolBench): each vote scores Solved 1, Unsure 0.5, Unsolved 0; the rate
  is the mean over the queries, with its spread over the votes.

Unlike StableToolBench, the denominator is the whole test set (less its unjudged queries): a query
without an answer fails every vote.

**Calls without a real answer.** Our runs' converted answers carry ``call_sources``: how many of the
run's calls were answered from StableToolBench's response cache, by the hub's service for the API, or
by a placeholder (an original query's call with no cache entry: values made up from the API's
shape). A judge's verdict on an answer built on placeholders means nothing, so such queries are left
out of the rate and counted apart (``excluded``), unless ``placeholders=True``. Answers without the
record (ToolBench's and StableToolBench's own, made against their servers) are all counted.

**Win rate** of a candidate against a reference. A passed answer beats a failed one. Between two
of the same kind, either the judge's ``better`` decides, over ``votes`` rounds with the answers'
order shuffled per round, or our deterministic tie-breakers do: fewer failed calls, then fewer
repeated calls, then fewer steps. Ties are reported, and also split half and half as the paper's
Table 4 does. A query that neither run answered is not compared (it says nothing of either), and
where no query was answered by both runs there is no win rate at all.

**Judges.** ``ChatJudge`` asks a model on an OpenAI-compatible endpoint. Each question is one
forced function call, with an enum and a ``reason``, following ToolEval's decision steps in our own
words. Every answer read is cached on disk by a hash of the model and the exact messages, so a
re-run is free and identical; a reply that could not be read is asked again, not cached.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from toolbench.mock_services.rapidapi import TEST_SETS
from toolbench.mock_services.rapidapi.original import CALL_SOURCES, PLACEHOLDER

SOLVED, UNSOLVED, UNSURE = "Solved", "Unsolved", "Unsure"
UNJUDGED = "Unjudged"  # no readable judge reply: counted apart, never as a verdict
SOLVABLE, UNSOLVABLE = "Solvable", "Unsolvable"
PASS, FAIL = "pass", "fail"
COUNTS = ("toolbench", "sopr")
ANSWER_CHARS = 1000  # of a final answer the win-rate judge reads (StableToolBench cuts there too)
MAX_NODES = 10_000  # of an answer's chain that are read
JUDGE_ATTEMPTS = 3  # a judge question is asked at most this often when its reply cannot be read
FINISH_MARK = "'name': 'Finish'"  # what ToolEval looks for in the text of an answer's last tool step
_STEP_NAME = re.compile(r"\{'name': '([^'\\]*)'")  # the name a tool message's Python text starts with


# ---------------------------------------------------------------------- converted answers
@dataclass(frozen=True)
class Answer:
    """One converted answer."""

    query_id: str
    query: str
    tools: list[Any]
    method: str
    total_steps: int
    final_answer: str
    details: list[Any] = field(repr=False)
    call_sources: dict[str, int] | None = None  # calls per source (our runs); None where not recorded

    def placeholder_calls(self) -> int:
        """How many of the run's calls got a placeholder response (0 where that is not recorded)."""
        return (self.call_sources or {}).get(PLACEHOLDER, 0)

    def chain(self) -> list[dict[str, Any]]:
        """The answer's nodes in order (the details are a linked list: each node's first ``next``)."""
        nodes, level = [], self.details
        while isinstance(level, list) and level and isinstance(level[0], dict) and len(nodes) < MAX_NODES:
            node = level[0]
            nodes.append(node)
            level = node.get("next") or []
        return nodes

    def tool_steps(self) -> list[dict[str, Any]]:
        """Each tool node's message as a dict (``name``, ``arguments``, ``response``). A message that
        is not a whole dict's text (ToolBench's released answers cut each to 100 characters) is kept
        as ``text``, with the ``name`` it starts with where that much is there."""
        return [_tool_step(node.get("message")) for node in self.chain() if node.get("role") == "tool"]

    def final_step(self) -> str:
        """The text of the last tool node that has a message, read as ToolEval reads an answer: the
        chain from its first node, up to a node without a ``next`` key (which is not read), each
        message as its ``str`` (a dict's Python text)."""
        text = ""
        for node in self.chain():
            if "next" not in node:
                break
            message = node.get("message")
            if message and node.get("role") == "tool":
                text = str(message)
        return text

    def finished(self) -> bool:
        """ToolEval's first check: the last tool step's text holds ``'name': 'Finish'``."""
        return FINISH_MARK in self.final_step()

    def gave_up(self) -> bool:
        return self.final_answer == "" or "give_up_and_restart" in self.final_answer


def _tool_step(message: Any) -> dict[str, Any]:
    """A tool node's message as a dict; text that is not a whole dict's is kept as ``text``."""
    if isinstance(message, dict):
        return message
    if not isinstance(message, str):
        return {}
    try:
        parsed = ast.literal_eval(message)  # ToolEval writes the Python text of a dict
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        parsed = None
    if isinstance(parsed, dict):
        return parsed
    name = _STEP_NAME.match(message)
    return {"name": name[1] if name else "", "arguments": "", "response": "", "text": message}


def load_answers(path: str | Path) -> dict[str, Answer]:
    """A converted-answer file, by query id."""
    return load_answers_from(json.loads(Path(path).read_text(encoding="utf-8")), str(path))


def load_answers_from(data: Any, path: str = "converted answers") -> dict[str, Answer]:
    """Converted answers already read (as ``convert_run`` returns them), by query id."""
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a converted-answer file holds a JSON object keyed by query id")
    answers = {}
    for query_id, record in data.items():
        where = f"{path}: query {str(query_id)[:40]}"
        if not isinstance(record, dict):
            raise ValueError(f"{where}: a converted answer must be an object")
        answer = record.get("answer") or {}
        if not isinstance(answer, dict):
            raise ValueError(f"{where}: 'answer' must be an object")
        steps, details = answer.get("total_steps") or 0, answer.get("answer_details") or []
        if not isinstance(steps, int) or isinstance(steps, bool) or not isinstance(details, list):
            raise ValueError(f"{where}: 'total_steps' must be a number and 'answer_details' a list")
        final = answer.get("final_answer")
        answers[str(query_id)] = Answer(
            str(query_id),
            str(record.get("query", "")),
            list(record.get("available_tools") or []) if isinstance(record.get("available_tools"), list) else [],
            str(answer.get("method", "")),
            steps,
            "" if final is None else final if isinstance(final, str) else json.dumps(final),
            details,
            _call_sources(answer.get("call_sources"), where),
        )
    return answers


def _call_sources(value: Any, where: str) -> dict[str, int] | None:
    """An answer's ``call_sources`` (``{source: count}``), or None when it has none."""
    if value is None:
        return None
    if not isinstance(value, dict) or not all(
        key in CALL_SOURCES and isinstance(count, int) and not isinstance(count, bool) and count >= 0
        for key, count in value.items()
    ):
        raise ValueError(f"{where}: 'call_sources' must map {', '.join(CALL_SOURCES)} to counts")
    return dict(value)


def load_ids(path: str | Path) -> list[str]:
    """A test-id file (``{"<query_id>": 0}``) or a JSON list of ids."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return [str(key) for key in (data if isinstance(data, list) else data.keys())]


# ---------------------------------------------------------------------- judges
class Judge(Protocol):
    name: str

    def answer_status(self, query: str, final_answer: str, vote: int = 0) -> str: ...

    def parse_answer_status(self, query: str, answer: Mapping[str, Any], vote: int = 0) -> str: ...

    def task_solvable(self, query: str, tools: list[Any], vote: int = 0) -> str: ...

    def better(self, query: str, first: Mapping[str, Any], second: Mapping[str, Any], vote: int = 0) -> int: ...


class JudgeError(RuntimeError):
    """The judge's reply could not be read."""


INSTRUCTIONS = {
    "answer_status": (
        "You grade whether an assistant's final answer solves a user's query. Decide in steps: if the "
        "answer apologises, refuses or does not answer positively and directly, it is Unsolved. If it "
        "answers directly but you cannot tell whether it is enough, it is Unsure. If you are confident, "
        "it is Solved or Unsolved. Call the function with your decision and a short reason."
    ),
    "parse_answer_status": (
        "You grade whether an assistant solved a user's query, from its whole run: the tool calls, their "
        "responses and the final answer. If every tool call failed, it is Unsolved. If the final answer is "
        "not supported by the tool responses, it is Unsolved. If you cannot verify it, it is Unsure. If "
        "successful tool calls solve the query, it is Solved. Call the function with your decision."
    ),
    "task_solvable": (
        "You judge whether a query can be solved with the tools offered. If it holds invalid information "
        "(a malformed email or phone number, say) or needs information the user did not give, it is "
        "Unsolvable. If you cannot decide, it is Unsure. If the tools are enough, it is Solvable. Call "
        "the function with your decision."
    ),
    "better": (
        "You compare two answers to the same query. Prefer the final answer that is more informative, "
        "more accurate and, when it fails, explains why better; if they are equal there, prefer the run "
        "with fewer failed or repeated tool calls and more progress. Call the function with the index "
        "(0 or 1) of the better answer."
    ),
}
CHOICES = {
    "answer_status": (SOLVED, UNSOLVED, UNSURE),
    "parse_answer_status": (SOLVED, UNSOLVED, UNSURE),
    "task_solvable": (SOLVABLE, UNSOLVABLE, UNSURE),
}


class ChatJudge:
    """ToolEval's judge on an OpenAI-compatible endpoint, every readable answer cached on disk."""

    def __init__(self, client: Any, cache_dir: str | Path | None = None) -> None:
        self.client = client  # toolbench.agents.client.ChatClient, or anything with complete(messages, tools)
        self.name = f"chat:{getattr(client, 'model', '?')}"
        self.cache = Path(cache_dir) if cache_dir is not None else None
        if self.cache is not None:  # an unusable folder fails here, before any call is paid for
            self.cache.mkdir(parents=True, exist_ok=True)
        self.calls = 0  # model calls made (cache hits are free)
        self.unreadable = 0  # replies that could not be read (each was asked again, up to JUDGE_ATTEMPTS)

    def _ask(self, function: str, payload: Mapping[str, Any], vote: int) -> Any:
        messages = [
            {"role": "system", "content": INSTRUCTIONS[function]},
            {"role": "user", "content": json.dumps(payload, ensure_ascii=False, sort_keys=True)},
        ]
        key = hashlib.sha256(
            # The vote is part of the key: each of a query's votes is its own sample of the judge.
            json.dumps({"model": self.name, "messages": messages, "vote": vote}, sort_keys=True).encode()
        ).hexdigest()
        stored = self.cache / f"{key}.json" if self.cache is not None else None
        if stored is not None and stored.exists():
            try:
                return json.loads(stored.read_text(encoding="utf-8"))["value"]
            except (ValueError, KeyError, TypeError):
                pass  # a damaged entry is asked again and rewritten
        field_name = "index" if function == "better" else "status"
        schema = (
            {"type": "integer", "enum": [0, 1]}
            if function == "better"
            else {"type": "string", "enum": list(CHOICES[function])}
        )
        tool = {
            "type": "function",
            "function": {
                "name": function,
                "description": INSTRUCTIONS[function],
                "parameters": {
                    "type": "object",
                    "properties": {"reason": {"type": "string"}, field_name: schema},
                    "required": ["reason", field_name],
                },
            },
        }
        value = self._read_reply(messages, tool, field_name, schema["enum"])
        if stored is not None:  # written whole, then renamed: a killed run leaves no half entry
            partial = stored.with_suffix(".part")
            partial.write_text(json.dumps({"function": function, "value": value}), encoding="utf-8")
            partial.replace(stored)
        return value

    def _read_reply(
        self, messages: list[dict[str, Any]], tool: dict[str, Any], field_name: str, allowed: list[Any]
    ) -> Any:
        """The judge's decision, asking again while its reply cannot be read (at temperature 0.2 a
        second sample often can); ``JudgeError`` when no reply could be, or the call failed."""
        from toolbench.agents.client import AgentError, RunStopped

        problem = ""
        for _ in range(JUDGE_ATTEMPTS):
            self.calls += 1
            try:
                completion = self.client.complete(messages, [tool], max_tokens=1000, temperature=0.2)
            except RunStopped:
                raise
            except AgentError as exc:  # the SDK has retried already; this question goes unjudged
                raise JudgeError(str(exc)) from None
            try:
                return _read_choice(completion, tool["function"]["name"], field_name, allowed)
            except JudgeError as exc:
                self.unreadable += 1
                problem = str(exc)
        raise JudgeError(f"{problem} (asked {JUDGE_ATTEMPTS} times)")

    def answer_status(self, query: str, final_answer: str, vote: int = 0) -> str:
        return self._ask("answer_status", {"query": query, "final_answer": final_answer}, vote)

    def parse_answer_status(self, query: str, answer: Mapping[str, Any], vote: int = 0) -> str:
        return self._ask("parse_answer_status", {"query": query, "answer": answer}, vote)

    def task_solvable(self, query: str, tools: list[Any], vote: int = 0) -> str:
        return self._ask("task_solvable", {"query": query, "available_tools": tools}, vote)

    def better(self, query: str, first: Mapping[str, Any], second: Mapping[str, Any], vote: int = 0) -> int:
        return int(self._ask("better", {"query": query, "answer_0": first, "answer_1": second}, vote))


def _read_choice(completion: Any, function: str, field_name: str, allowed: list[Any]) -> Any:
    """The decision a judge's reply holds: its call to ``function``'s arguments, else JSON in its text."""
    calls = [call.get("function") for call in getattr(completion, "tool_calls", []) or [] if isinstance(call, dict)]
    texts = [call.get("arguments", "") for call in calls if isinstance(call, dict) and call.get("name") == function]
    texts.append(getattr(completion, "content", "") or "")
    for text in texts:
        try:
            data = json.loads(text) if isinstance(text, str) else text
        except (ValueError, RecursionError):
            continue
        value = data.get(field_name) if isinstance(data, dict) else None
        if value in allowed and not isinstance(value, bool):  # True == 1 would pass for an index
            return value
    raise JudgeError(f"the judge's reply has no call to {function} with a {field_name} among {allowed}")


# ---------------------------------------------------------------------- pass rate
def _flip(*key: object) -> bool:
    """A coin flip named by ``key`` (the same in every run and process)."""
    return hashlib.sha256("/".join(map(str, key)).encode()).digest()[0] % 2 == 0


def solved_status(judge: Judge, answer: Answer, vote: int = 0) -> str:
    """ToolEval's ``check_is_solved``; ``UNJUDGED`` when the judge's reply could not be read."""
    if not answer.finished() or answer.gave_up():
        return UNSOLVED
    try:
        status = judge.answer_status(answer.query, answer.final_answer, vote)
        if status == UNSURE:
            whole = {"final_answer": answer.final_answer, "answer_details": answer.details}
            status = judge.parse_answer_status(answer.query, whole, vote)
    except JudgeError:
        return UNJUDGED
    return status


def combined(solved: str, solvable: str) -> str:
    """ToolBench's verdict from the answer's and the task's status: pass, fail or unsure."""
    if solved == SOLVED:
        return PASS
    if solved == UNSOLVED:
        return {SOLVABLE: FAIL, UNSOLVABLE: PASS}.get(solvable, UNSURE)
    return PASS if solvable == UNSOLVABLE else UNSURE


@dataclass
class PassReport:
    count: str
    rate: float | None  # a share of the judged queries, 0..1; None when no query was judged
    spread: float  # SoPR's standard deviation over the votes (0 for ToolBench's count)
    queries: dict[str, dict[str, Any]]  # per query: its votes and whether it passed (None: unjudged)
    answered: int = 0  # queries of the test set that have an answer
    excluded: list[str] = field(default_factory=list)  # left out: a call got a placeholder response
    call_records: bool = False  # whether the answers say where their calls' responses came from

    @property
    def unjudged(self) -> int:
        return sum(entry["passed"] is None for entry in self.queries.values())

    @property
    def judged(self) -> int:
        return len(self.queries) - self.unjudged

    def passed(self) -> dict[str, bool | None]:
        """Per query: whether it passed, ``None`` when it is unjudged."""
        return {qid: None if entry["passed"] is None else bool(entry["passed"]) for qid, entry in self.queries.items()}

    def to_json(self) -> dict[str, Any]:
        return {"rate": self.rate, "spread": self.spread, "count": self.count, "total": len(self.queries),
                "answered": self.answered, "judged": self.judged, "unjudged": self.unjudged,
                "excluded": len(self.excluded), "excluded_queries": self.excluded,
                "queries": self.queries}  # fmt: skip


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return sum(values) / len(values) if values else None


def _toolbench_labels(
    judge: Judge, answer: Answer | None, statuses: list[str], solvability: bool, key: tuple[Any, ...]
) -> list[str]:
    """Each vote's pass or fail as ToolBench counts it: an Unsure is a coin flip named by ``key`` and
    the vote; an unreadable judge reply makes the vote ``UNJUDGED`` and ends the list there."""
    labels = []
    for vote, status in enumerate(statuses):
        if status == UNJUDGED:
            return [*labels, UNJUDGED]
        solvable = SOLVABLE
        if solvability and answer is not None and answer.finished() and status != SOLVED:
            try:
                solvable = judge.task_solvable(answer.query, answer.tools, vote)
            except JudgeError:
                return [*labels, UNJUDGED]
        unanswered = answer is None or not answer.finished()  # no Finish: failed, no judge asked (ToolBench)
        label = FAIL if unanswered else combined(status, solvable)
        labels.append(label if label != UNSURE else (PASS if _flip(*key, vote) else FAIL))
    return labels


def pass_rate(
    answers: Mapping[str, Answer],
    ids: Iterable[str],
    judge: Judge,
    votes: int = 4,
    count: str = "toolbench",
    solvability: bool = True,
    seed: int = 0,
    placeholders: bool = False,
) -> PassReport:
    """The pass rate of ``answers`` over the test set ``ids`` (see the module's docstring); queries
    whose answer got a placeholder response are left out unless ``placeholders``."""
    if count not in COUNTS:
        raise ValueError(f"count must be one of {list(COUNTS)}, not {count!r}")
    if votes < 1:
        raise ValueError("votes must be at least 1")
    ids = [str(i) for i in ids]
    records = any(qid in answers and answers[qid].call_sources is not None for qid in ids)
    excluded = [] if placeholders else [qid for qid in ids if qid in answers and answers[qid].placeholder_calls()]
    left_out = frozenset(excluded)
    ids = [qid for qid in ids if qid not in left_out]
    queries: dict[str, dict[str, Any]] = {}
    scores_per_vote: list[list[float]] = [[] for _ in range(votes)]
    for qid in ids:
        answer = answers.get(qid)
        statuses: list[str] = []
        while len(statuses) < votes and UNJUDGED not in statuses:  # one unjudged vote leaves the query unjudged
            statuses.append(solved_status(judge, answer, len(statuses)) if answer else UNSOLVED)
        if count == "sopr":
            if UNJUDGED in statuses:
                queries[qid] = {"votes": statuses, "score": None, "passed": None}
                continue
            scores = [{SOLVED: 1.0, UNSURE: 0.5}.get(s, 0.0) for s in statuses]
            for vote, score in enumerate(scores):
                scores_per_vote[vote].append(score)
            queries[qid] = {"votes": statuses, "score": sum(scores) / votes, "passed": sum(scores) / votes >= 0.5}
            continue
        labels = _toolbench_labels(judge, answer, statuses, solvability, (seed, qid))
        passed = None if UNJUDGED in labels else labels.count(FAIL) <= labels.count(PASS)
        queries[qid] = {"votes": statuses, "labels": labels, "passed": passed}
    answered = sum(qid in answers for qid in ids)
    if count == "sopr" and scores_per_vote[0]:
        means = [statistics.fmean(scores) for scores in scores_per_vote]
        return PassReport(
            count, statistics.fmean(means), statistics.pstdev(means), queries, answered, excluded, records
        )
    report = PassReport(count, None, 0.0, queries, answered, excluded, records)
    report.rate = _mean(passed for passed in report.passed().values() if passed is not None)
    return report


# ---------------------------------------------------------------------- win rate
def call_costs(answer: Answer) -> tuple[int, int, int]:
    """Our tie-breakers, each lower is better: failed calls, repeated calls, steps."""
    failed = repeated = 0
    seen: set[tuple[str, str]] = set()
    for step in answer.tool_steps():
        if step.get("name") == "Finish":
            continue
        # A step kept as cut text is told apart by that text: its arguments are not all there.
        call = (str(step.get("name")), str(step.get("text") or step.get("arguments")))
        repeated += call in seen
        seen.add(call)
        try:
            response = json.loads(step.get("response") or "{}")
        except (TypeError, ValueError):
            response = {}
        failed += bool(isinstance(response, dict) and response.get("error"))
    return failed, repeated, answer.total_steps


def _shown(answer: Answer) -> dict[str, Any]:
    return {"final_answer": answer.final_answer[:ANSWER_CHARS], "answer_details": answer.details}


WIN, LOSS, TIE, NOT_JUDGED = "win", "loss", "tie", "unjudged"
UNANSWERED = "unanswered"  # a query neither run answered: it says nothing of either, so it is not compared


@dataclass
class WinReport:
    queries: dict[str, str]  # per query, of the candidate: win, loss, tie, unjudged or unanswered
    answered_by_both: frozenset[str] = frozenset()
    wins: int = field(init=False)
    losses: int = field(init=False)
    ties: int = field(init=False)
    unjudged: int = field(init=False)
    unanswered: int = field(init=False)

    def __post_init__(self) -> None:
        counts = Counter(self.queries.values())
        self.wins, self.losses, self.ties = counts[WIN], counts[LOSS], counts[TIE]
        self.unjudged, self.unanswered = counts[NOT_JUDGED], counts[UNANSWERED]

    @property
    def judged(self) -> int:
        return self.wins + self.losses + self.ties

    @property
    def rate(self) -> float | None:
        """Wins plus half the ties over the judged queries, as the paper's Table 4 counts; ``None``
        when no query was answered by both runs (there is nothing to compare) or none was judged."""
        if not self.answered_by_both or not self.judged:
            return None
        return (self.wins + self.ties / 2) / self.judged

    def subset(self, ids: Iterable[str]) -> WinReport:
        """The report of some of its queries (one test set, say)."""
        ids = [qid for qid in ids if qid in self.queries]
        return WinReport({qid: self.queries[qid] for qid in ids}, self.answered_by_both.intersection(ids))

    def counts(self) -> dict[str, Any]:
        return {"rate": self.rate, "total": len(self.queries), "answered_by_both": len(self.answered_by_both),
                "judged": self.judged, "wins": self.wins, "losses": self.losses, "ties": self.ties,
                "unjudged": self.unjudged, "unanswered": self.unanswered}  # fmt: skip


def win_rate(
    candidate: Mapping[str, Answer],
    reference: Mapping[str, Answer],
    ids: Iterable[str],
    passed_candidate: Mapping[str, bool | None],
    passed_reference: Mapping[str, bool | None],
    judge: Judge | None = None,
    votes: int = 2,
    seed: int = 0,
) -> WinReport:
    """The candidate's wins, losses and ties against the reference over ``ids``. A pass verdict of
    ``None`` (unjudged), or a judge reply that cannot be read, leaves the query unjudged."""
    outcomes: dict[str, str] = {}
    both: set[str] = set()
    for qid in (str(i) for i in ids):
        mine, theirs = candidate.get(qid), reference.get(qid)
        if mine is None or theirs is None:
            outcomes[qid] = UNANSWERED if mine is theirs else (WIN if theirs is None else LOSS)
            continue
        both.add(qid)
        a, b = passed_candidate.get(qid, False), passed_reference.get(qid, False)
        if a is None or b is None:
            outcomes[qid] = NOT_JUDGED
        elif a != b:
            outcomes[qid] = WIN if a else LOSS
        elif judge is None:
            ours, others = call_costs(mine), call_costs(theirs)
            outcomes[qid] = WIN if ours < others else LOSS if ours > others else TIE
        else:
            outcomes[qid] = _judged_better(judge, mine, theirs, votes, (seed, "order", qid))
    return WinReport(outcomes, frozenset(both))


def _judged_better(judge: Judge, mine: Answer, theirs: Answer, votes: int, key: tuple[Any, ...]) -> str:
    score = 0
    for vote in range(votes):  # the order is shuffled per vote: a judge may favour a position
        swap = _flip(*key, vote)
        first, second = (theirs, mine) if swap else (mine, theirs)
        try:
            choice = judge.better(mine.query, _shown(first), _shown(second), vote)
        except JudgeError:
            return NOT_JUDGED
        score += 1 if (choice == 0) != swap else -1
    return WIN if score > 0 else LOSS if score < 0 else TIE


# ---------------------------------------------------------------------- our runs and our tasks
def _calls_in(action: str) -> list[tuple[str, Any]]:
    """The calls a RapidAPI action holds, read as the env reads them (an unreadable action holds none)."""
    from toolbench.core.env import ActionError
    from toolbench.envs.rapidapi import calls_of

    try:
        return calls_of(action)
    except ActionError:
        return []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _env_of(trajectories: str | Path, split: str, envs: dict[str, Any]) -> Any:
    """The RapidAPI env holding a run's tasks: its ``--task-file`` (from ``run.json``) or its split."""
    import gymnasium as gym

    import toolbench  # noqa: F401  (registers the env ids)

    if split not in envs:
        settings_file = Path(trajectories).parent / "run.json"
        settings = (
            json.loads(settings_file.read_text(encoding="utf-8")).get("settings", {}) if settings_file.exists() else {}
        )
        if settings.get("task_file"):
            envs[split] = gym.make("toolbench/RapidAPI-v0", task_file=settings["task_file"]).unwrapped
        else:
            envs[split] = gym.make("toolbench/RapidAPI-v0", split=split).unwrapped
    return envs[split]


def convert_run(trajectories: str | Path) -> dict[str, dict[str, Any]]:
    """A ``toolbench eval --task RapidAPI --out DIR`` run's ``trajectories.jsonl`` as ToolEval's
    converted answers (keyed by each task's ``query_id``), so ToolEval, ours or the original, reads it."""

    import toolbench  # noqa: F401  (registers the env ids)

    converted: dict[str, dict[str, Any]] = {}
    envs: dict[str, Any] = {}
    for line in Path(trajectories).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if not isinstance(record, dict) or record.get("task") != "RapidAPI":
            continue
        env = _env_of(trajectories, record.get("split") or record.get("category"), envs)
        env.reset(options={"task_id": record["task_id"]})
        task = env.task
        steps: list[dict[str, Any]] = []
        final = ""
        for action, observation in zip(record.get("actions") or [], record.get("observations") or [], strict=False):
            lines = observation.splitlines() if isinstance(observation, str) else []
            for n, (name, arguments) in enumerate(_calls_in(action) if isinstance(action, str) else []):
                response = lines[n] if n < len(lines) else ""
                if name == "Finish":
                    final, response = _text(arguments), ""
                steps.append({"name": name, "arguments": _text(arguments), "response": response})
        node: dict[str, Any] = {"role": "system", "message": "", "next": []}
        root, tail = node, node
        for role, message in [("user", task.prompt), *(("tool", str(step)) for step in steps)]:
            child = {"role": role, "message": message, "next": []}
            tail["next"].append(child)
            tail = child
        answer: dict[str, Any] = {
            "method": str(record.get("agent", "")),
            "total_steps": 2 + len(steps),
            "final_answer": final,
            "answer_details": [root],
        }
        sources = (record.get("info") or {}).get("call_sources")
        if isinstance(sources, dict):  # our addition: ToolEval reads only the keys above
            answer["call_sources"] = sources
        converted[str(task.get("query_id", task.id))] = {
            "query": task.prompt,
            "available_tools": [tool["function"] for tool in env.tools()],
            "answer": answer,
        }
    for env in envs.values():
        env.close()
    return converted


def rule_pass_rate(answers: Mapping[str, Answer], tasks: Iterable[Any]) -> PassReport:
    """The RapidAPI env's deterministic pass rule over converted answers of our tasks: the final
    answer states every fact and rests on calls the run made (see ``passrule``); one vote per query."""
    from toolbench.mock_services.rapidapi.catalog import hub
    from toolbench.mock_services.rapidapi.passrule import Returned, judge, made_the_calls
    from toolbench.mock_services.rapidapi.steps import FINAL_ANSWER, GAVE_UP, read_finish

    functions = hub().functions
    key_of = lambda name: functions[name][1].key if name in functions else name  # noqa: E731
    queries: dict[str, dict[str, Any]] = {}
    for task in tasks:
        qid = str(task.get("query_id", task.id))
        answer = answers.get(qid)
        if answer is None:
            queries[qid] = {"votes": [UNSOLVED], "passed": False}
            continue
        ending = read_finish(answer.final_answer) if answer.finished() else None
        steps = [s for s in answer.tool_steps() if s.get("name") != "Finish"]
        calls = [(str(s.get("name")), _step_arguments(s)) for s in steps]
        ok = [s for s in steps if '"error": ""' in str(s.get("response", ""))[:40]]
        answered = [c for c, s in zip(calls, steps) if any(s is o for o in ok)]
        solvable = bool(task.get("solvable", True))
        evidence = made_the_calls(list(task.get("solution") or []), answered, calls, key_of, solvable)
        gave_up = ending is not None and ending.status == GAVE_UP
        text = ending.answer if ending is not None and ending.status == FINAL_ANSWER else None
        shown = [str(s.get("response", "")) for s in steps]
        facts = list(task.get("answer_facts") or [])
        returned = Returned.of([_response_of(s) for s in ok], task.prompt, facts)
        verdict = judge(text, gave_up, facts, solvable, evidence, shown, returned)
        queries[qid] = {"votes": [SOLVED if verdict.passed else UNSOLVED], "passed": verdict.passed}
    answered = sum(qid in answers for qid in queries)
    return PassReport("rule", _mean(q["passed"] for q in queries.values()), 0.0, queries, answered)


def _response_of(step: Mapping[str, Any]) -> Any:
    """What a converted tool step's call returned: its ``{"error": ..., "response": ...}`` text's
    response, read as JSON where it is."""
    value: Any = step.get("response", "")
    for _ in range(2):  # the step's text, then the response inside it (ToolBench keeps it as text)
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return value
        if isinstance(value, dict) and "response" in value and set(value) <= {"error", "response"}:
            value = value["response"]
    return value


def _step_arguments(step: Mapping[str, Any]) -> dict[str, Any]:
    """A converted tool step's arguments (ToolEval keeps them as JSON text)."""
    arguments = step.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return {}
    return arguments if isinstance(arguments, dict) else {}


def write_answer_files(trajectories: str | Path, folder: str | Path) -> int:
    """ToolBench's raw answer files (``<query_id>_<method>.json``) of a run of ``react``/``dfsdt``
    agents, from the search each episode's log keeps; returns how many were written."""

    import toolbench  # noqa: F401  (registers the env ids)

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written, envs = 0, {}
    for line in Path(trajectories).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        raw = (record.get("agent_log") or {}).get("answer_file")
        if record.get("task") != "RapidAPI" or not raw:
            continue
        env = _env_of(trajectories, record.get("split") or record.get("category"), envs)
        task = next((t for t in env.tasks if t.id == record["task_id"]), None)
        query_id = task.get("query_id", task.id) if task is not None else record["task_id"]
        method = str(record.get("agent", "agent")).split(":", 1)[0]
        (out / f"{query_id}_{method}.json").write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
        written += 1
    return written


def percent(rate: float | None, missing: str = "-") -> str:
    """A rate as a percentage with one decimal, ``missing`` where there is none."""
    return missing if rate is None else f"{100 * rate:.1f}"


def table_rows(runs: Mapping[str, Path], reference: str) -> tuple[list[str], list[list[str]], list[str]]:
    """The paper's Table 4 for runs over our test sets (``toolbench eval --task RapidAPI --split
    test --out DIR``): per method, the pass rate and the win rate against ``reference`` per test set
    and on average, by our deterministic rule and tie-breakers, with how many queries of each set
    the method and the reference both answered. A set where they answered none has no win rate, and
    then the average win rate is not given either; the notes (third value) say where."""
    import gymnasium as gym

    import toolbench  # noqa: F401  (registers the env ids)

    tasks = {name: gym.make("toolbench/RapidAPI-v0", split=name).unwrapped.tasks for name in TEST_SETS}
    answers = {method: load_answers_from(convert_run(folder / "trajectories.jsonl")) for method, folder in runs.items()}
    kinds = ("pass", "win", "both")
    header = ["method", *(f"{name} {kind}" for name in TEST_SETS for kind in kinds), "avg pass", "avg win"]
    verdicts = {(method, name): rule_pass_rate(answers[method], tasks[name]) for method in runs for name in TEST_SETS}
    rows, notes = [], []
    for method in runs:
        cells, passes, wins = [method], [], []
        for name in TEST_SETS:
            mine, theirs = verdicts[method, name], verdicts[reference, name]
            ids = list(mine.queries)
            won = win_rate(answers[method], answers[reference], ids, mine.passed(), theirs.passed())
            passes.append(mine.rate)
            wins.append(won.rate)
            cells += [percent(mine.rate), percent(won.rate), f"{len(won.answered_by_both)}/{len(ids)}"]
        missing = [name for name, rate in zip(TEST_SETS, wins) if rate is None]
        if missing:
            notes.append(f"{method}: no win rate in {', '.join(missing)} (no query there has an answer from both "
                         f"{method} and the reference {reference})")  # fmt: skip
        cells += [percent(None if None in passes else _mean(passes)), percent(None if missing else _mean(wins))]
        rows.append(cells)
    return header, rows, notes
