"""ToolBench-style prompts: the API docs and demonstrations most relevant to the task, then the task.

As in the original harness, docs and demonstrations are retrieved with BM25 (the ``rank_bm25``
package) against the task text, so long API references fit a model's context. ToolBench's
prompt experiments (Xu et al. 2023, Table 11) are the four ``--prompt`` settings:

- ``zero``: the retrieved API docs and the task;
- ``system``: the system prompt, in the structure of the paper's Figure 5 (our words): a role
  statement as the system message, then the API docs, the answer format, the task;
- ``fewshot``: the API docs, retrieved demonstrations, then the task (the suite's default);
- ``system+fewshot``: the system prompt with the demonstrations after the answer format.

Program-mode demonstrations are whole programs; interactive ones are played in the task's own
env, one call per step with what each call returned, and the finishing action is stated.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from rank_bm25 import BM25Okapi

from toolbench.core.tasks import Task

SEPARATOR = "-------------"
PROMPT_SETTINGS = ("zero", "system", "fewshot", "system+fewshot")
DEMO_OBSERVATION_CHARS = 600  # an interactive demonstration shows this much of each result


# ----------------------------------------------------------------------------- retrieval
def tokenize(text: str) -> list[str]:
    """Lower-cased words of two or more characters, as the original harness's BM25 index has them."""
    return re.findall(r"(?u)\b\w\w+\b", text.lower())


def split_api_docs(docs: str) -> list[str]:
    """The documentation of each function: the paragraphs (blocks between blank lines) that start
    with a ``# `` comment, each with the paragraphs that follow it up to the next such one. A
    function's whole comment block stays with its signature, however many ``# `` lines it has."""
    blocks: list[list[str]] = []
    for paragraph in re.split(r"\n[ \t]*\n", docs.strip()):
        if not paragraph.strip():
            continue
        if paragraph.lstrip().startswith("# ") or not blocks:
            blocks.append([])
        blocks[-1].append(paragraph.strip("\n"))
    return ["\n\n".join(block).strip() for block in blocks]


class Matcher:
    """A BM25 index of ``corpus``, built once for many queries. Scores are ``rank_bm25``'s
    ``BM25Okapi.get_scores``, bit for bit, computed from postings (the documents that hold each query
    word) instead of a pass over every document per word: a train split of thousands of prompts is
    searched in microseconds per word instead of milliseconds."""

    def __init__(self, corpus: Sequence[str]) -> None:
        self.size = len(corpus)
        self.index = BM25Okapi([tokenize(text) or ["_"] for text in corpus]) if corpus else None
        self._postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        if self.index is not None:
            documents: dict[str, list[int]] = {}
            counts: dict[str, list[int]] = {}
            for position, frequencies in enumerate(self.index.doc_freqs):
                for word, count in frequencies.items():
                    documents.setdefault(word, []).append(position)
                    counts.setdefault(word, []).append(count)
            self._postings = {word: (np.array(documents[word]), np.array(counts[word])) for word in documents}
            self._lengths = np.array(self.index.doc_len)

    def scores(self, query: str) -> np.ndarray:
        """Each document's BM25 score for ``query``: ``BM25Okapi.get_scores``'s arithmetic, in its
        order, on the documents that hold each word (a document without it gains 0.0 there)."""
        index = self.index
        total = np.zeros(self.size)
        if index is None:
            return total
        k1, b, average = index.k1, index.b, index.avgdl
        for word in tokenize(query) or ["_"]:
            if word not in self._postings:
                continue
            documents, counts = self._postings[word]
            lengths = self._lengths[documents]
            total[documents] += (index.idf.get(word) or 0) * (
                counts * (k1 + 1) / (counts + k1 * (1 - b + b * lengths / average))
            )
        return total

    def top_k(self, query: str, k: int) -> list[int]:
        """Indexes of the k best matches, best first as the original harness orders them (ties by
        position, so the order is the same on every machine)."""
        if k <= 0 or self.index is None:
            return []
        return [int(i) for i in np.argsort(-self.scores(query), kind="stable")[:k]]  # stable: ties by position


# ----------------------------------------------------------------------------- the texts
# The system prompt of the ``system`` settings follows the structure of ToolBench's Figure 5 (our
# words): a role statement, the API functions, a separator, the answer format (a template task with
# its calls between three backticks), the demonstrations, a separator, then the task and "Action:".
# The role statement is the chat's system message; the rest, which changes with each task, is the
# user message, in the figure's order. The figure's prompt ends with an opening fence, for a model
# that continues the text; a chat model starts a reply of its own, so ours stops at "Action:" and
# the format asks for the fences.
FENCE = "```"


def role_statement(mode: str, native_tools: bool) -> str:
    """The system message of the ``system`` settings: what the assistant is for and what it must not
    do (Figure 5's first paragraph, our words)."""
    if mode == "program":
        job = "you reach a goal by putting the API functions you are given together, in the order the goal needs"
    elif native_tools:
        job = "you reach a goal by calling the tools you are given, one at a time, in the order the goal needs"
    else:
        job = "you reach a goal by calling the API functions you are given, one at a time, in the order the goal needs"
    sources = "the goal or the documentation" if mode == "program" else "the goal, the documentation or a result"
    return (
        f"You are an API assistant: {job}. Call no function that is not listed, and add nothing the goal"
        f" does not ask for: no explanation, no question, no value that {sources} does not give."
    )


def answer_format(mode: str, finishing_action: str | None, native_tools: bool) -> str:
    """The format section of the ``system`` settings: a template task and the shape of its answer."""
    if mode == "program":
        return (
            "Answer in the form below, with only code between the three backticks:\n"
            f"Task: the goal\nAction:\n{FENCE}\n"
            f"first_function(argument1, argument2)\nsecond_function(argument3)\n{FENCE}"
        )
    if native_tools:
        lines = ["Answer each time with one tool call; its result comes back before your next call."]
    else:
        lines = [
            "Answer in the form below, one call per reply; its result comes back as the next observation:",
            "Task: the goal\nAction 1:\nfirst_function(argument1, argument2)\nObservation 1:\nwhat it returned"
            "\nAction 2:\nsecond_function(argument3)",
        ]
    finish = finishing_words(finishing_action, native_tools)
    if finish:
        lines.append(f"When the goal is reached, finish with {finish}.")
    return "\n".join(lines)


def finishing_words(finishing_action: str | None, native_tools: bool) -> str | None:
    """How a prompt names the finishing action: the call (``API.search()``) or, with native tools,
    the tool (``the search tool``)."""
    if not finishing_action:
        return None
    if native_tools:
        name = finishing_action.removeprefix("API.").removesuffix("()")
        return f"a call of the {name} tool"
    return finishing_action


def interaction_rules(finishing_action: str | None, native_tools: bool) -> str:
    """What an interactive prompt says about taking steps (in every prompt setting)."""
    if native_tools:
        rule = "Work step by step: call one of the tools, read its result, then make the next call."
    else:
        rule = "Work step by step: answer with one call, read its result, then answer with the next call."
    finish = finishing_words(finishing_action, native_tools)
    if finish:
        rule += f" When the task is done, finish with {finish}."
    return rule


def format_demo(task: Task, fenced: bool = False) -> str:
    """A program demonstration; ``fenced``: its program between three backticks, as the ``system``
    settings' answer format asks."""
    program = task.references[0] if task.references else ""
    if fenced:
        program = f"{FENCE}\n{program}\n{FENCE}"
    return f"Task: {task.prompt}\nAction:\n{program}"


def format_interactive_demo(task: Task, steps: Sequence[tuple[str, str]]) -> str:
    lines = [f"Task: {task.prompt}"]
    for number, (action, observation) in enumerate(steps, start=1):
        lines.append(f"Action {number}:\n{action}")
        if len(observation) > DEMO_OBSERVATION_CHARS:
            observation = observation[:DEMO_OBSERVATION_CHARS] + " ..."
        lines.append(f"Observation {number}:\n{observation}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- the builder
class PromptBuilder:
    """Builds the messages that start an episode, from the env's API docs and demonstrations."""

    def __init__(
        self,
        api_docs: str,
        demos: Sequence[Task],
        top_k_api: int = 10,
        top_k_example: int = 3,
        setting: str = "fewshot",
        mode: str = "program",
        finishing_action: str | None = None,
        native_tools: bool = False,
        play_demo: _DemoPlayer | None = None,
    ) -> None:
        if setting not in PROMPT_SETTINGS:
            raise ValueError(f"unknown prompt setting {setting!r}; use one of {', '.join(PROMPT_SETTINGS)}")
        self.functions = split_api_docs(api_docs)
        self.demos = list(demos)
        self.top_k_api = top_k_api
        self.top_k_example = top_k_example if "fewshot" in setting else 0
        self.setting = setting
        self.mode = mode
        self.finishing_action = finishing_action
        self.native_tools = native_tools
        self._play_demo = play_demo
        self._played: dict[str, str] = {}

    @classmethod
    def for_env(cls, env: Any, api_docs: str, **options: Any) -> PromptBuilder:
        """A builder for ``env``'s task and mode, with its shipped demonstrations."""
        demos = env.load_split("demo") if "demo" in env.splits else []
        shown_as = {name: getattr(env, name) for name in env.presentation_options}
        play = _DemoPlayer(type(env), env.mode, shown_as)
        return cls(api_docs, demos, mode=env.mode, finishing_action=env.finishing_action, play_demo=play, **options)

    @property
    def has_system_prompt(self) -> bool:
        return self.setting.startswith("system")

    def _demo_text(self, task: Task) -> str:
        """A demonstration: the program, or, where an episode takes several actions (every
        interactive one; AppBench's two-stage programs), each action with what it returned."""
        if self._play_demo is None:
            return format_demo(task, fenced=self.has_system_prompt)
        if task.id not in self._played:
            if self.mode == "program" and len(self._play_demo.actions(task)) == 1:
                self._played[task.id] = format_demo(task, fenced=self.has_system_prompt)
            else:
                self._played[task.id] = format_interactive_demo(task, self._play_demo(task))
        return self._played[task.id]

    @functools.cached_property
    def _function_matcher(self) -> Matcher:
        """The API functions' index, built once for every prompt of this builder."""
        return Matcher(self.functions)

    @functools.cached_property
    def _demo_matcher(self) -> Matcher:
        return Matcher([t.prompt for t in self.demos])

    def _chosen_docs(self, query: str) -> list[str]:
        return [self.functions[i] for i in self._function_matcher.top_k(query, self.top_k_api)]

    def _chosen_demos(self, query: str) -> list[str]:
        """The demonstrations most like the task, chosen by the task's text alone."""
        if not self.demos or self.top_k_example <= 0:
            return []
        best = self._demo_matcher.top_k(query, self.top_k_example)
        return [self._demo_text(self.demos[i]) for i in best]

    def _task_part(self, query: str, rules: bool) -> str:
        if self.mode == "program":
            return f"Task: {query}\nAction:\n"
        stated = f"{interaction_rules(self.finishing_action, self.native_tools)}\n" if rules else ""
        return f"Task: {query}\n{stated}" + ("" if self.native_tools else "Action 1:\n")

    def build(self, query: str) -> str:
        """The user message: API docs, demonstrations (few-shot settings), then the task; in the
        ``system`` settings, the answer format comes before the demonstrations (Figure 5)."""
        docs, demos = self._chosen_docs(query), self._chosen_demos(query)
        parts = []
        if self.has_system_prompt:
            if docs:
                parts.append("These are the API functions you can use:\n\n" + "\n\n".join(docs))
            form = answer_format(self.mode, self.finishing_action, self.native_tools)
            parts.append(form + ("\n\nThese are solved examples:\n\n" + "\n\n".join(demos) if demos else ""))
            parts.append(self._task_part(query, rules=False))  # the format already says how to go on
        else:
            if docs:
                parts.append("Here is the API you can use:\n\n" + "\n\n".join(docs))
            if demos:
                parts.append("Here are some solved examples:\n\n" + "\n\n".join(demos))
            parts.append(self._task_part(query, rules=True))
        return f"\n{SEPARATOR}\n".join(parts)

    def messages(self, query: str) -> list[dict[str, str]]:
        """The chat messages that start an episode: the role statement (``system`` settings), then the prompt."""
        messages = []
        if self.has_system_prompt:
            messages.append({"role": "system", "content": role_statement(self.mode, self.native_tools)})
        messages.append({"role": "user", "content": self.build(query)})
        return messages


class _DemoPlayer:
    """Plays a demonstration task in a fresh env of the same task, mode and presentation, one call
    per step."""

    def __init__(self, env_class: type, mode: str, options: dict[str, Any] | None = None) -> None:
        self.env_class = env_class
        self.mode = mode
        self.options = dict(options or {})
        self._env: Any = None

    def _demo_env(self) -> Any:
        if self._env is None:
            self._env = self.env_class(split="demo", mode=self.mode, **self.options)
        return self._env

    def actions(self, task: Task) -> list[str]:
        return self._demo_env().oracle_actions(task)

    def __call__(self, task: Task) -> list[tuple[str, str]]:
        env = self._demo_env()
        env.reset(options={"task_id": task.id})
        steps = []
        for action in env.oracle_actions(task):
            observation, _, terminated, truncated, _ = env.step(action)
            steps.append((action, observation))
            if terminated or truncated:
                break
        return steps
