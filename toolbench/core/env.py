"""The base class of every toolbench environment.

It owns what is the same for every task: text spaces, seeding and task selection, the step
bookkeeping (rewards paid at the end, error observations instead of exceptions, ``max_steps``),
the episode transcript behind ``render_mode="ansi"``, and ``get_state``/``set_state``. A task's env
subclasses it and implements ``_begin`` (start an episode on a task) and ``_act`` (one action).
"""

from __future__ import annotations

import copy
import functools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym

from toolbench.core import store
from toolbench.core.spaces import UnicodeText
from toolbench.core.tasks import Task, TaskFileError, TaskSet, read_task_file, record_place
from toolbench.core.taskspec import SHIPPED_FIXTURES, fixture_path, line_of, take_line
from toolbench.core.under_way import step_under_way

logger = logging.getLogger("toolbench")

OBSERVATION_MAX_LENGTH = 2**18
ACTION_MAX_LENGTH = 2**17
TRUNCATION_NOTE = "\n...[observation truncated at {n} characters]"
#: What an episode's transcript (``render``, ``get_state``) keeps: a few full steps' worth.
TRANSCRIPT_MAX_CHARS = 2**21


def _unpaired_surrogate(text: str) -> int | None:
    """Position of the first lone surrogate: such text cannot be encoded, sent or stored."""
    if text.isascii():  # a flag of the string, read without a scan: most text is ASCII
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


#: Types ``_valid_text`` passes through as they are (checked first: most info values are these).
_NOT_TEXT = frozenset({int, float, bool, type(None), dict, tuple})


def _valid_text(value: Any) -> Any:
    """``value`` with lone surrogates (say, from code that printed "\\ud800") written as escapes, so
    observations, info and saved trajectories always encode as UTF-8. A list comes back as a copy."""
    if isinstance(value, str):
        return value if _unpaired_surrogate(value) is None else value.encode("utf-8", "backslashreplace").decode()
    if isinstance(value, list):
        return [
            item if type(item) in _NOT_TEXT or (type(item) is str and item.isascii()) else _valid_text(item)
            for item in value
        ]
    return value


@functools.cache
def _zeros(names: tuple[str, ...]) -> dict[str, float]:
    """Every metric 0.0, built once per env class's names (read-only: ``dict.update`` copies it)."""
    return dict.fromkeys(names, 0.0)


class VerdictKept(RuntimeError):
    """A restore that would discard an ended episode's verdict, on an env that keeps verdicts."""


class ActionError(Exception):
    """An action that cannot be carried out; its message becomes the observation."""


@dataclass(frozen=True)
class AuditAllowance:
    """A ceiling other than ``toolbench audit``'s defaults for one cheap policy on one of the task's
    splits, and why doing that little may earn that much there."""

    policy: str
    ceilings: dict[str, float]
    why: str
    split: str = "test"


@dataclass
class Outcome:
    """What one action did. ``done`` ends the episode; ``score`` counts only then."""

    observation: str
    done: bool
    score: float = 0.0
    success: bool = False
    executable: bool = True
    error: str | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    #: What the episode's end says about its own grade (Tabletop's "Success: ..."), added to the
    #: observation only by a graded env.
    verdict: str | None = None

    @classmethod
    def failure(cls, message: str, done: bool) -> Outcome:
        return cls(observation=f"Error: {message}", done=done, executable=False, error=message)


class ToolEnv(gym.Env[str, str]):
    """Base class; see a task's env for the Gymnasium-style description of that task."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 1}

    # An env class with a catalog line (``toolbench.catalog``) takes these five from it when it is
    # defined (``__init_subclass__``); a class without one, such as a test's subclass, inherits them.
    #: Task name as in the env id (``toolbench/<task_name>-v0``).
    task_name: ClassVar[str]
    #: Folder of the task's fixtures in ``fixture_package``.
    fixture_slug: ClassVar[str]
    fixture_package: ClassVar[str] = SHIPPED_FIXTURES
    #: The first is the default mode.
    modes: ClassVar[tuple[str, ...]] = ("program",)
    splits: ClassVar[tuple[str, ...]] = ("test", "demo")
    default_max_steps: ClassVar[int] = 20
    #: Raised whenever a change to the task set's files or the scoring changes what an episode's
    #: actions earn: run folders record it, and ``toolbench score`` says a score moved because of it.
    scorer_version: ClassVar[str] = "1"
    #: The task's own metrics, always present in ``info`` (0.0 until the episode is scored).
    metric_names: ClassVar[tuple[str, ...]] = ()
    #: The summary key of the number the task's paper reports (``success_rate`` where that is its
    #: success rate): the one metric ``toolbench eval``'s table shows beside success and score.
    headline_metric: ClassVar[str] = "success_rate"
    #: ``gym.make`` arguments that ``toolbench eval``'s own flags set (AppBench's ``scorer`` by
    #: ``--scorer``, RapidAPI's ``cache_dir`` by ``--cache``): the flag applies to the tasks naming it.
    run_options: ClassVar[tuple[str, ...]] = ()
    #: The action that ends an interactive episode (``"submit"``, ``"API.search()"``), for prompts.
    finishing_action: ClassVar[str | None] = None
    #: Whether ``api_docs()`` and ``tools()`` change with the episode's task (RapidAPI's APIs). When
    #: they do not, reset builds them once per env and every reset info shares them.
    docs_per_task: ClassVar[bool] = False
    #: The reset info's keys that are docs, all left out with ``info_docs=False``.
    info_doc_keys: ClassVar[tuple[str, ...]] = ("api_docs", "tools")
    #: Task fields, beside the prompt, that are the task's input and not its answer: the world an
    #: episode starts in (a home, a scene), the tools it is given. ``"goal.instruction_text"`` names
    #: one key of a dict field. What an agent sees may depend on the prompt and these only; every
    #: other field (references, goals, gold plans, the category) is the answer. ``with_answer_of``
    #: makes the tasks the no-leak test compares.
    input_fields: ClassVar[tuple[str, ...]] = ()
    #: Keys of the final info, beside ``metric_names``, whose numbers are parts of the score (counts
    #: the score is made of). Only these, ``success``, ``score`` and ``executable`` may depend on the
    #: answer; the no-leak test holds every other key to it.
    score_details: ClassVar[tuple[str, ...]] = ()
    #: Other keys of the final info that state the grade (Tabletop's ``reason``): an ungraded env
    #: (``clone_for``) leaves them out with the metrics and score details.
    grade_keys: ClassVar[tuple[str, ...]] = ()
    #: A regular expression that one action line of the env's text grammar matches in full
    #: (``Agent.WalkTo(kitchen)``): how a model's reply is told from the prose around it.
    action_line: ClassVar[str | None] = None
    #: ``gym.make`` arguments that change what an agent is shown (AppBench's ``prompting``), kept as
    #: attributes of the same name: a prompt's demonstrations are played with them.
    presentation_options: ClassVar[tuple[str, ...]] = ()
    #: How a model writes this task's programs in ToolBench's harness (``toolbench.prompting``): the
    #: longest program in tokens, stop sequences beside the harness's own, and how many API docs and
    #: demonstrations a prompt retrieves.
    generation_max_tokens: ClassVar[int] = 256
    generation_extra_stop: ClassVar[tuple[str, ...]] = ()
    generation_top_k_api: ClassVar[int] = 10
    generation_top_k_example: ClassVar[int] = 3
    #: Where a cheap policy may earn more than ``toolbench audit``'s default ceilings, and why.
    audit_allowances: ClassVar[tuple[AuditAllowance, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        line = line_of(f"{cls.__module__}:{cls.__qualname__}")
        if line is not None:
            take_line(cls, line)

    def __init__(
        self,
        split: str = "test",
        mode: str | None = None,
        render_mode: str | None = None,
        max_steps: int | None = None,
        task_file: str | Path | None = None,
        tasks: Sequence[Task] | TaskSet | None = None,
        diagnostics: bool = False,
        info_docs: bool = True,
        graded: bool = True,
    ) -> None:
        mode = mode or self.modes[0]
        if mode not in self.modes:
            raise ValueError(f"{self.task_name} has modes {list(self.modes)}, not {mode!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, not {render_mode!r}")
        cls = type(self)
        if isinstance(tasks, TaskSet):  # completed and shared already (a store's task set)
            task_set = tasks
        elif tasks is not None:
            task_set = TaskSet.of(self.complete_task(task) for task in tasks)
        elif task_file is not None:
            split = Path(task_file).stem
            # Held while an env plays them; an edited file is another key.
            key = ("tasks", cls, *store.file_key(task_file))
            task_set = store.held(key, lambda: TaskSet.of(cls.tasks_from_file(task_file)))
        else:
            if split not in self.splits:
                raise ValueError(f"{self.task_name} has splits {list(self.splits)}, not {split!r}")
            task_set = cls.shared_split(split)
        if not task_set.tasks:
            raise ValueError(f"{self.task_name}: no tasks to play")
        # Shared by every env of the process that plays the same split or file: read-only.
        self._task_set = task_set
        self.tasks: Sequence[Task] = task_set.tasks
        self._tasks_by_id: Mapping[str, Task] = task_set.by_id
        self.split = split
        self.mode = mode
        # Expected values in info (say, Sheets' expected cells) only when asked: an RL agent that
        # sees them can learn the answers instead of the task.
        self.diagnostics = bool(diagnostics)
        # An ungraded env (an agent's private copy, ``clone_for``) plays the task as usual but its end
        # pays nothing and says nothing of the grade: a search on it cannot climb the score.
        self.graded = bool(graded)
        # Reset infos carry api_docs and tools (the contract); a training loop that reads them once
        # can drop them, so vector envs do not copy them across processes at every reset.
        self.info_docs = bool(info_docs)
        self._shared_docs: tuple[str, list[dict[str, Any]] | None] | None = None
        self.render_mode = render_mode
        if max_steps is None:
            max_steps = 1 if mode == "program" else self.default_max_steps
        self.max_steps = int(max_steps)
        if self.max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        self.observation_space = UnicodeText(OBSERVATION_MAX_LENGTH)
        self.action_space = UnicodeText(ACTION_MAX_LENGTH)
        self._task: Task | None = None
        self._steps = 0
        self._done = False
        self._transcript: list[tuple[str, str]] = []
        #: How many steps have ended an episode on this env, ever: no reset or restore lowers it, so a
        #: scorer can tell that an episode it scores ended once (``verdicts_given``).
        self._verdicts = 0
        #: When set (the harness sets it on the env whose episodes it scores), a restore that would
        #: take an ended episode back to before its end is refused: its verdict stands.
        self.keep_verdicts = False

    # ----------------------------------------------------------------- to implement per task
    def _begin(self, task: Task) -> str:
        """Set up a fresh episode on ``task``; return the first observation (the prompt)."""
        raise NotImplementedError

    def _act(self, action: str) -> Outcome:
        """Carry out one action (raise ``ActionError`` for an action that cannot be run)."""
        raise NotImplementedError

    def _on_truncation(self, last: Outcome) -> Outcome | None:
        """Score an episode cut off by ``max_steps`` (``last`` is the final step); ``None`` pays nothing."""
        return None

    def api_docs(self) -> str:
        """The API documentation shown to agents, as text."""
        return ""

    def oracle_actions(self, task: Task) -> list[str]:
        """The actions that play ``task``'s first reference in this env's mode."""
        return [task.references[0]] if task.references else [""]

    def shared_parts_actions(self, task: Task) -> list[str] | None:
        """The actions of ``task``'s answer cut down to the parts every task of the split shares
        (the endpoint, the fields every search requires, buy or rent...), with the task's own values
        where a part needs one: what a policy that fills in only those earns. Partial credit must not
        pay for them; ``None`` where the env pays no partial credit."""
        return None

    def answer_action(self, answer: str) -> str | None:
        """The action that ends the episode with ``answer`` as its free-text final answer (ToolLLM's
        ``Finish`` with ``give_answer``); ``None`` where the task takes no such answer."""
        return None

    def give_up_action(self) -> str:
        """The action that ends the episode without doing the task: the task's own way to give up
        where it has one, else its finishing action."""
        return self.finishing_action or ""

    def tools(self) -> list[dict[str, Any]] | None:
        """OpenAI function-calling schemas for tasks with callable tools, else ``None``."""
        return None

    def _get_backend_state(self) -> Any:
        return None

    def _set_backend_state(self, state: Any) -> None:
        pass

    # ----------------------------------------------------------------- Gymnasium API
    @classmethod
    def with_answer_of(cls, task: Task, other: Task) -> Task:
        """``task``'s id, prompt and input fields with ``other``'s answer (its references, category
        and every field that is not an input). An agent must see the same in episodes of both."""
        extra = dict(other.extra)
        for name in cls.input_fields:
            field_name, _, key = name.partition(".")
            if not key:
                if field_name in task.extra:
                    extra[field_name] = task.extra[field_name]
                else:
                    extra.pop(field_name, None)
                continue
            mine, theirs = task.extra.get(field_name), extra.get(field_name)
            if isinstance(mine, dict) and key in mine:
                extra[field_name] = {**(theirs if isinstance(theirs, dict) else {}), key: mine[key]}
        return Task(task.id, task.prompt, other.references, other.category, extra)

    @classmethod
    def complete_task(cls, task: Task) -> Task:
        """Fill what an original record leaves out (e.g. a prompt built from its configuration)."""
        return task

    @classmethod
    def read_tasks(cls, path: str | Path, id_prefix: str) -> list[Task]:
        """A user's task file (JSONL records; a task may also read its benchmark's other formats)."""
        return read_task_file(path, id_prefix=id_prefix)

    @classmethod
    def missing_fields(cls, task: Task) -> list[str]:
        """The record keys a completed task lacks to be played and scored (none: it can be)."""
        needed = (("prompt", task.prompt.strip()), ("completion", any(ref.strip() for ref in task.references)))
        return [key for key, present in needed if not present]

    @classmethod
    def tasks_from_file(cls, path: str | Path) -> list[Task]:
        """A user's task file (say, the original ``test.jsonl``) read and completed as this env plays
        it. Records without ids get ids that cannot clash with the shipped ones
        ("openweather:test-0007"). A file without records, or a record that cannot be completed or
        lacks what an episode needs, is a ``TaskFileError`` naming the file and the record's line."""
        tasks = cls.read_tasks(path, id_prefix=f"{cls.fixture_slug}:{Path(path).stem}")
        if not tasks:
            raise TaskFileError(f"{path}: the file holds no task records")
        completed = []
        for index, task in enumerate(tasks):
            try:
                task = cls.complete_task(task)
            except ValueError as exc:
                raise TaskFileError(f"{record_place(path, index)}: {exc}") from exc
            except (KeyError, TypeError) as exc:
                shape = f"not a {cls.task_name} record ({type(exc).__name__}: {exc})"
                raise TaskFileError(f"{record_place(path, index)}: {shape}") from exc
            missing = cls.missing_fields(task)
            if missing:
                keys = " and no ".join(repr(key) for key in missing)
                raise TaskFileError(f"{record_place(path, index)}: the {cls.task_name} record has no {keys}")
            completed.append(task)
        return completed

    @classmethod
    def shared_split(cls, split: str) -> TaskSet:
        """A shipped split's completed tasks, read once per process and shared by its envs."""
        return store.shared(
            ("split", cls, split), lambda: TaskSet.of(cls.complete_task(task) for task in cls.load_split(split))
        )

    @classmethod
    def load_split(cls, split: str) -> list[Task]:
        return read_task_file(cls.fixture(f"{split}.jsonl"), id_prefix=f"{cls.fixture_slug}-{split}")

    @classmethod
    def fixture(cls, filename: str) -> Path:
        """A file of the task's fixture folder."""
        return fixture_path(cls.fixture_package, cls.fixture_slug, filename)

    @property
    def task(self) -> Task | None:
        """The task of the current episode."""
        return self._task

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        task_id = (options or {}).get("task_id")
        if task_id is not None:
            if task_id not in self._tasks_by_id:
                raise KeyError(f"{self.task_name}: no task {task_id!r} in split {self.split!r}")
            task = self._tasks_by_id[task_id]
        else:
            task = self.tasks[int(self.np_random.integers(len(self.tasks)))]
        self._task = task
        self._steps = 0
        self._done = False
        with step_under_way():
            prompt = self._begin(task)
        self._transcript = [("task", prompt)]
        info: dict[str, Any] = {"task_id": task.id, "split": self.split, "mode": self.mode}
        if self.info_docs:
            docs, tools = self._docs_for_reset()
            info["api_docs"] = docs
            if tools is not None:
                info["tools"] = tools
        return self._fit(prompt), info

    def _docs_for_reset(self) -> tuple[str, list[dict[str, Any]] | None]:
        """The episode's docs and tool schemas: built once per env unless they change with the task.
        Shared ones are the same objects at every reset; treat them as read-only."""
        if self.docs_per_task:
            return self.api_docs(), self.tools()
        if self._shared_docs is None:
            self._shared_docs = (self.api_docs(), self.tools())
        return self._shared_docs

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._task is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        program_mode = self.mode == "program"
        if self._done:
            outcome = Outcome.failure("the episode is over; call reset() to start a new one", done=True)
        elif not isinstance(action, str):
            outcome = Outcome.failure(f"an action must be a str, not {type(action).__name__}", done=program_mode)
        elif len(action) > ACTION_MAX_LENGTH:
            outcome = Outcome.failure(
                f"the action is {len(action)} characters long; the limit is {ACTION_MAX_LENGTH}", done=program_mode
            )
        elif not program_mode and not action.strip():
            # An empty reply (say, a model that answered with nothing) is an error the agent sees, not a
            # step that "executed"; it still counts towards max_steps.
            finish = f"; {self.finishing_action!r} ends the episode" if self.finishing_action else ""
            outcome = Outcome.failure(f"the action is empty: send one call or code cell per step{finish}", done=False)
        elif (position := _unpaired_surrogate(action)) is not None:
            outcome = Outcome.failure(
                f"the action is not valid Unicode text (unpaired surrogate at position {position})", done=program_mode
            )
        else:
            try:
                with step_under_way():
                    outcome = self._act(action)
            except ActionError as exc:
                outcome = Outcome.failure(str(exc), done=program_mode)
            except Exception as exc:  # a bug of ours must not stop a training run; it is logged and reported
                logger.exception("internal error in %s on task %s", self.task_name, self._task.id)
                outcome = Outcome.failure(
                    f"internal error in the environment ({type(exc).__name__}: {exc})", done=program_mode
                )
        was_done = self._done
        self._steps += 1
        terminated, truncated = bool(outcome.done), False
        if not outcome.done and self._steps >= self.max_steps:
            truncated = True
            final = self._on_truncation(outcome)
            if final is not None:
                outcome = final
        ended = terminated or truncated
        self._verdicts += ended and not was_done
        reward = float(outcome.score) if ended and not was_done and self.graded else 0.0
        self._done = ended
        info = self._step_info(outcome) if self.graded else self._ungraded_info(outcome)
        shown = outcome.observation
        if outcome.verdict is not None and self.graded:
            shown = f"{shown}\n{outcome.verdict}"
        observation = self._fit(shown if self.graded else self._ungraded_observation(shown))
        if not was_done:  # steps after the end change nothing: the episode's record is complete
            self._record("action", self._fit(action if isinstance(action, str) else repr(action)[:1000]))
            self._record("observation", observation)
        if ended and not was_done:
            self._transcript.append(("end", f"reward={reward:.3f} success={info['success']} error={info['error']}"))
        return observation, reward, terminated, truncated, info

    def clone_for(self, task: Task) -> ToolEnv:
        """An ungraded env for ``task`` with this one's presentation: a search agent's private copy
        (DFSDT backtracks on it). Its steps are this env's, its ends pay nothing."""
        shown_as = {name: getattr(self, name) for name in self.presentation_options}
        return type(self)(tasks=[task], split=self.split, mode=self.mode, max_steps=self.max_steps, graded=False,
                          **shown_as)  # fmt: skip

    def _ungraded_info(self, outcome: Outcome) -> dict[str, Any]:
        """An ungraded step's info: the graded one less every part of the grade."""
        graded = self._step_info(outcome)
        grade = {*self.metric_names, *self.score_details, *self.grade_keys}
        info = {key: value for key, value in graded.items() if key not in grade}
        info.update(success=None, score=None, graded=False)
        return info

    def _ungraded_observation(self, observation: str) -> str:
        """The observation an ungraded env shows: the graded one less any grade it states (an env
        whose pages print a score, as WebShop's does, removes it here)."""
        return observation

    def _record(self, kind: str, text: str) -> None:
        """Add to the transcript within ``TRANSCRIPT_MAX_CHARS`` (a long episode of long actions and
        observations would otherwise hold gigabytes): past it, entries are cut, and then kept short."""
        used = sum(len(entry) for _, entry in self._transcript)
        room = max(TRANSCRIPT_MAX_CHARS - used, 200)
        if len(text) > room:
            text = text[: room - 100] + f"\n...[cut: the transcript keeps at most {TRANSCRIPT_MAX_CHARS} characters]"
        self._transcript.append((kind, text))

    def _step_info(self, outcome: Outcome) -> dict[str, Any]:
        assert self._task is not None
        info: dict[str, Any] = {
            "task_id": self._task.id,
            "success": bool(outcome.success),
            "score": float(outcome.score),
            "executable": bool(outcome.executable),
            "error": None if outcome.error is None else _valid_text(outcome.error),
        }
        if not outcome.metrics:  # most steps: every metric 0 until the episode is scored
            info.update(_zeros(tuple(self.metric_names)))
            return info
        for name in self.metric_names:
            info[name] = outcome.metrics.get(name, 0.0)
        for name, value in outcome.metrics.items():
            if name not in info:
                info[name] = value if type(value) in _NOT_TEXT else _valid_text(value)
        return info

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        return self.ansi_transcript()

    def ansi_transcript(self) -> str:
        """The episode as readable text: what ``render()`` returns with ``render_mode="ansi"``."""
        header = f"=== toolbench/{self.task_name}-v0 · {self._task.id if self._task else '(no episode)'} ==="
        blocks = [header]
        action_number = 0
        for kind, text in self._transcript:
            if kind == "action":
                action_number += 1
                blocks.append(f"--- action {action_number} ---\n{text}")
            elif kind == "observation":
                blocks.append(f"--- observation {action_number} ---\n{text}")
            elif kind == "end":
                blocks.append(f"--- episode end: {text} ---")
            else:
                blocks.append(f"--- {kind} ---\n{text}")
        return "\n".join(blocks) + "\n"

    # ----------------------------------------------------------------- snapshots for tree search
    def get_state(self) -> dict[str, Any]:
        """A picklable snapshot of everything the episode has changed."""
        return copy.deepcopy(
            {
                "task_id": self._task.id if self._task else None,
                "steps": self._steps,
                "done": self._done,
                "transcript": list(self._transcript),
                "rng": self.np_random.bit_generator.state,
                "backend": self._get_backend_state(),
            }
        )

    @property
    def verdicts_given(self) -> int:
        """How many steps of this env have ended an episode (resets and restores do not lower it)."""
        return self._verdicts

    def set_state(self, state: dict[str, Any]) -> None:
        """Restore a snapshot taken by ``get_state`` (on this env or another of the same task).
        With ``keep_verdicts`` set, a snapshot that would reopen an ended episode raises
        ``VerdictKept``: an episode is scored at its first end."""
        if self.keep_verdicts and self._done and not state.get("done"):
            raise VerdictKept(
                "the episode has ended and been scored; restoring an earlier state would discard its verdict"
            )
        state = copy.deepcopy(state)
        task_id = state["task_id"]
        self._task = self._tasks_by_id[task_id] if task_id is not None else None
        self._steps = state["steps"]
        self._done = state["done"]
        self._transcript = list(state["transcript"])
        self.np_random.bit_generator.state = state["rng"]
        self._set_backend_state(state["backend"])

    # ----------------------------------------------------------------- helpers
    @staticmethod
    def _fit(text: str) -> str:
        """Cut an observation to the observation space's maximum length (as valid UTF-8 text)."""
        if isinstance(text, str) and len(text) <= OBSERVATION_MAX_LENGTH and text.isascii():
            return text  # most observations: nothing to escape or cut
        text = _valid_text(text)
        if len(text) <= OBSERVATION_MAX_LENGTH:
            return text
        note = TRUNCATION_NOTE.format(n=OBSERVATION_MAX_LENGTH)
        return text[: OBSERVATION_MAX_LENGTH - len(note)] + note
