"""toolbench/VirtualHome-v0: household action programs, run on a symbolic home and scored by LCS."""

from __future__ import annotations

import re
from collections.abc import Collection
from functools import cache
from pathlib import Path
from typing import Any

from toolbench.core.env import ActionError, AuditAllowance, Outcome, ToolEnv
from toolbench.core.tasks import Task, read_task_file
from toolbench.mock_services.virtualhome import (
    ACTIONS,
    PROPERTIES,
    Call,
    World,
    accepted,
    build_home,
    clean_lines,
    fact,
    parse_program,
    start_world,
)
from toolbench.mock_services.virtualhome.original import goal_sets, read_original_examples, record_from_original
from toolbench.mock_services.virtualhome.program import CHECKS, best_lcs, ground, lcs_score, paper_vocabulary

FINISH = "Agent.Done()"
METRICS = ("lcs", "goal_rate")  # always in info; a scored episode adds simulated, failed_line, failure
#: Lines that get the character to a room or an object, or turn it there: nearly every program
#: opens with them, whatever its activity does there, so the reward pays only for the other lines.
NAVIGATION = frozenset({"WalkTo", "RunTo", "Find", "TurnTo"})
#: Goal facts that walking and turning alone bring about (under the original rules, going to a place
#: is a goal of most activities): the goal reward pays for the others.
NAVIGATION_GOALS = ("did(go_to,", "did(turn_to,", "in_room(", "close_to(", "facing(")
_FUNCTION = re.compile(r"^(?:Agent\.)?(\w+)\s*\(")


RULES = """# How the home works: one call per line, objects in lower case with underscores. Be close to an
# object (WalkTo or Find it) before grabbing, opening, switching or using it; take things out of
# closed containers only after opening them; two hands hold two things; plug in before switching
# on; stand up before walking. In interactive mode, Agent.Done() ends the episode."""


@cache
def api_docs(check: str = "ours") -> str:
    """One entry per function, listing the objects it accepts (under ``check``), in ToolBench's doc format."""
    entries = [RULES]
    vocabulary = paper_vocabulary() if check == "paper" else accepted()
    for action in ACTIONS:
        lists = vocabulary[f"Agent.{action.name}"]
        description = action.doc[0].upper() + action.doc[1:]
        if not lists:
            entries.append(f"# {description}.\nAgent.{action.name}()")
        elif len(lists) == 1:
            entries.append(f"# {description}. 'object' can only be: {sorted(lists[0])}.\nAgent.{action.name}(object)")
        else:
            entries.append(
                f"# {description}. 'object1' can only be: {sorted(lists[0])}. 'object2' can only be: "
                f"{sorted(lists[1])}.\nAgent.{action.name}(object1, object2)"
            )
    return "\n\n".join(entries)


_LCS_SHARED = (
    "test shares its activity kinds with demo and train (the papers' setting): the closest example, a "
    "similar activity on the same objects, brings about some of the task's goal facts (it opens, grabs "
    "and puts the same things), which the reward pays"
)
_ERRAND_PART = (
    "an unseen errand joins two or three activities in a grammar of its own; the closest seen program "
    "does one activity the errand names, and the reward pays the share of the errand's goal facts it "
    "brings about (success, every goal of the errand, stays 0)"
)


class VirtualHomeEnv(ToolEnv):
    """Plan household activities as programs of ``Agent.<Action>(...)`` calls in a symbolic home.

    ## Description
    The ToolBench VirtualHome task (Xu et al. 2023, appendix A.6): given an activity such as
    "Put milk in the fridge", the agent writes a program of household actions
    (``Agent.WalkTo(kitchen)``, ``Agent.Open(fridge)``, ``Agent.PutIn(milk, fridge)``) from a
    40-function API. As in ToolBench, a program is *executable* when it names only known functions
    and objects they accept, and it is scored by the longest common subsequence with the reference
    programs. Unlike ToolBench, the program also runs in a symbolic home (five homes, 182 kinds of
    objects with VirtualHome's properties and states) where every action checks its
    preconditions (grab only what is close and not inside a closed container, put things in open
    containers, switch on what is plugged in, ...), and the activity's goal conditions are checked
    on the state the program reaches.

    ## Action Space
    Text (``UnicodeText``). ``mode="program"``: the whole program, one call per line, with or
    without the ``Agent.`` prefix, in a Markdown fence or not; it is parsed, never executed.
    ``mode="interactive"``: one call per step; ``Agent.Done()`` ends the episode.

    ## Observation Space
    Text: the activity after ``reset``. In interactive mode, after each step, what happened (or
    which precondition failed) and what the character now sees, is close to and holds.

    ## Rewards
    Paid when the episode ends. ``reward="lcs"`` (the default for the original files' tasks):
    ToolBench's LCS over whole cleaned lines divided by the longer program's length, the maximum
    over the references, taken over the lines that act (walking, running, finding and turning to
    things left out of both programs: every program has them, so walking to the rooms and objects
    of the activity and doing nothing there earns 0). A reference with no other line is compared
    whole. ToolBench's own LCS over every line is ``info["lcs"]``.
    ``reward="goal"`` (the default for ours): the fraction of the activity's goal conditions that hold
    in the final state (of the alternative that pays the most, where a task has ``goal_options``; 0
    for a program that is not executable), since lines a list of the prompt's nouns guesses (find
    and grab what it names) earn the LCS much of its value, and imitating a reference should not be
    the target; conditions that
    walking or turning alone bring about (having gone to a place, being in a room, close to or
    facing something), and conditions that already held at the start (a closed fridge), count only in
    a task that has no other (``info["goal_rate"]`` counts them all);
    counted only when the actions that ran are at most twice the longest solution's and four more
    (goal facts stay true once reached, so doing everything in the home would otherwise meet many
    goals); in interactive mode a call that failed or was not executable counts against that budget
    as well, so retrying costs actions. ``info`` has ``executable``, ``lcs``, ``simulated`` (every
    line ran with no failed precondition), ``failed_line`` (the first line that failed, or None),
    ``failure`` (why), ``goal_rate`` and ``success``: in program mode, every goal (of one
    alternative) met by a program that ran to its end; in interactive mode, every goal met when the episode ends (failed
    steps on the way are feedback, and ``simulated`` says whether there were any); in both, within
    that budget of actions.

    ## Starting State
    The task's home (``home``, 0 to 4) with its start facts (``start``: e.g. dirty dishes, the
    character asleep in bed); otherwise the character stands in the living room. The first
    observation is the activity; ``info["scene"]`` describes where the character is and what it
    sees. A task from the split
    (``test``: 100 activities, ``demo``: 83 with about 500 solutions, ``train``: 1,000 other
    activities in several homes and wordings, ``unseen``: 100 errands of two or three activities of
    different kinds, worded as no other split is) drawn by the seeded RNG or named by
    ``options={"task_id": ...}``.

    ## Episode End
    ``program``: after one action. ``interactive``: at ``Agent.Done()`` or ``max_steps``
    (default 40), when the episode is scored as at ``Done``.

    ## Arguments
    ``gym.make("toolbench/VirtualHome-v0", split="test", mode="program", render_mode=None,
    max_steps=None, task_file=None, reward=None, check=None)``. ``task_file`` may be a JSONL file of
    records (ours, or ToolBench's ``test.jsonl``) or the language-planner's
    ``available_examples.json``; English steps ("Step 1: Walk to kitchen") become API calls.
    Tasks from the original files play in home 0 under VirtualHome's rules, from a start built
    from what all their programs presume, with goals drawn from what their programs bring about:
    what they all agree on or, where they disagree, alternatives (``goal_options``), one per group
    of programs that agree on what they did, any of which succeeds.
    ``check``: ``"paper"`` (ToolBench's evaluator exactly: its object lists per function,
    ``Agent.`` required, no Markdown fence) or ``"ours"`` (every object the properties allow,
    prefix and fence optional); by default ``paper`` for the original files, ``ours`` otherwise.
    """

    default_max_steps = 40
    metric_names = METRICS
    headline_metric = "lcs"  # ToolBench's Table 11 (beside the executability rate)
    finishing_action = FINISH
    action_line = r"Agent\.\w+\(.*\)"
    input_fields = ("home", "start", "rules")  # the home, the state it starts in, how it behaves
    generation_max_tokens = 128
    audit_allowances = (
        *(
            AuditAllowance(policy, {"score": 0.25}, _ERRAND_PART, split="unseen")
            for policy in ("demo_answer", "train_answer", "nearest_copy", "reward_search")
        ),
        AuditAllowance("demo_answer", {"score": 0.30}, _LCS_SHARED),
        AuditAllowance("train_answer", {"score": 0.35}, _LCS_SHARED),
    )

    def __init__(self, reward: str | None = None, check: str | None = None, **kwargs: Any) -> None:
        if reward not in (None, "lcs", "goal"):
            raise ValueError(f"reward must be 'lcs' or 'goal', not {reward!r}")
        if check is not None and check not in CHECKS:
            raise ValueError(f"check must be one of {CHECKS}, not {check!r}")
        super().__init__(**kwargs)
        # The original files' tasks say "paper"; ours say nothing.
        self.check = check or ("paper" if self.tasks and all(t.get("check") == "paper" for t in self.tasks) else "ours")
        # The goals a program brings about, by default: lines a list of the prompt's nouns guesses
        # (Find and Grab what it names) earn the LCS much of its value. The originals' goals are
        # read off their references, some of which do not run here: they keep ToolBench's LCS.
        self.reward_kind = reward or ("lcs" if self.check == "paper" else "goal")
        self._world: World | None = None
        self._lines: list[str] = []
        self._failed: tuple[int, str, str] | None = None  # (line number, line, why)
        self._all_known = True
        self._carried_out = 0
        self._references: dict[str, list[list[str]]] = {}
        self._acting_references: dict[str, list[list[str]]] = {}

    # ------------------------------------------------------------------ tasks
    @classmethod
    def read_tasks(cls, path: str | Path, id_prefix: str) -> list[Task]:
        """Our JSONL, ToolBench's ``test.jsonl``, or the language-planner's example list."""
        if Path(path).suffix == ".json":
            return read_original_examples(path, id_prefix)
        return read_task_file(path, id_prefix)

    @classmethod
    def complete_task(cls, task: Task) -> Task:
        return record_from_original(task)

    # ------------------------------------------------------------------ episode
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        observation, info = super().reset(seed=seed, options=options)
        assert self._world is not None
        info["scene"] = self._world.describe()  # where the character starts (asleep in bed, say)
        return observation, info

    def _begin(self, task: Task) -> str:
        self._world = start_world(
            build_home(int(task.get("home", 0))), task.get("start", ()), task.get("rules", "ours")
        )
        self._lines, self._failed, self._all_known = [], None, True
        # Actions the budget counts: those that ran and, in interactive mode, failed and unknown calls.
        self._carried_out = 0
        return task.prompt

    def _held_at_start(self, task: Task) -> frozenset[str]:
        """The goal facts of ``task`` (any alternative) that hold in its start state."""
        cache = self._task_set.derived((type(self), "goals held at start"))
        if task.id not in cache:
            world = start_world(build_home(int(task.get("home", 0))), task.get("start", ()), task.get("rules", "ours"))
            cache[task.id] = frozenset(goal for facts in goal_sets(task) for goal in facts if world.holds(goal))
        return cache[task.id]

    def _act(self, action: str) -> Outcome:
        assert self._world is not None
        if self.mode == "program":
            return self._program(action)
        return self._interactive(action)

    def _program(self, text: str) -> Outcome:
        if "\x00" in text:
            raise ActionError("the program is not text (it holds NUL bytes)")
        try:
            calls = parse_program(text, self.check)
        except ValueError as exc:
            raise ActionError(str(exc)) from None
        if not calls:
            raise ActionError("the program is empty: write one Agent.<Action>(...) call per line")
        outputs = []
        for number, call in enumerate(calls, start=1):
            if call.line:  # a line that cleaning emptied is not executable, and takes no part in the LCS
                self._lines.append(call.line)
            message = self._run(number, call)
            if message is not None:
                outputs.append(f"{number}. {call.line}: {message}")
        self._all_known = all(call.executable for call in calls)
        return self._scored("\n".join(outputs) if outputs else "The program ran.")

    def _run(self, number: int, call: Call) -> str | None:
        """Run one line unless an earlier one failed; the failure message, if this line failed."""
        if self._failed is not None:
            return None
        assert self._world is not None
        if not call.executable:
            why = call.problem or ""
            self._failed = (number, call.line, why)
            return f"not executable: {why}"
        result = self._world.do(call.action or "", call.args)
        if not result.ok:
            self._failed = (number, call.line, result.message)
            return result.message
        self._carried_out += 1
        return None

    def _interactive(self, text: str) -> Outcome:
        assert self._world is not None
        lines = clean_lines(text, self.check)
        if len(lines) != 1:
            raise ActionError(
                f"send exactly one call per step (got {len(lines)} lines), e.g. Agent.WalkTo(kitchen); "
                f"{FINISH} ends the episode"
            )
        if lines[0] in (FINISH, "Agent.Done", "Done()", "Done"):
            return self._scored("Done.")
        trailing = lines[0][lines[0].find(")") + 1 :].strip() if ")" in lines[0] else ""
        if trailing:  # "Agent.WalkTo(kitchen) Agent.Grab(cup)": the second call would be dropped silently
            raise ActionError(f"one call per step: nothing may follow the call's ')' (found {trailing[:40]!r})")
        call = ground(lines[0], self.check)
        self._lines.append(call.line)
        self._carried_out += 1  # tried: a retry after a failure costs an action of the budget too
        if not call.executable:
            self._all_known = False
            why = call.problem or ""
            if self._failed is None:
                self._failed = (len(self._lines), call.line, why)
            return Outcome(f"Error: {why}", done=False, executable=False, error=why)
        result = self._world.do(call.action or "", call.args)
        if not result.ok:
            if self._failed is None:
                self._failed = (len(self._lines), call.line, result.message)
            return Outcome(f"Failed: {result.message}\n{self._world.describe()}", done=False, error=result.message)
        return Outcome(f"{result.message}\n{self._world.describe()}", done=False)

    def _on_truncation(self, last: Outcome) -> Outcome | None:
        return self._scored(last.observation)

    # ------------------------------------------------------------------ scoring
    def _scored(self, observation: str) -> Outcome:
        assert self.task is not None and self._world is not None
        lcs = best_lcs(self._lines, self._reference_lines(self.task))
        # The goals, or the alternative of them that the state comes closest to meeting.
        goals = max(goal_sets(self.task), key=lambda facts: self._share_met(facts), default=[])
        met = sum(self._world.holds(goal) for goal in goals)
        goal_rate = met / len(goals) if goals else 0.0
        executable = self._all_known and bool(self._lines)
        simulated = executable and self._failed is None
        # Goal facts such as did(watch, television) stay true once reached, so doing everything in
        # the home meets many activities' goals: goals count only when reached within twice the
        # actions of the longest solution, and four more.
        within = self._carried_out <= self._action_budget(self.task)
        success = simulated and bool(goals) and met == len(goals) and within
        if self.mode == "interactive":  # failed attempts on the way are feedback
            success = bool(goals) and met == len(goals) and within
        metrics = {
            "executable": executable,
            "lcs": lcs,
            "simulated": simulated,
            "failed_line": None if self._failed is None else f"{self._failed[0]}: {self._failed[1]}",
            "failure": None if self._failed is None else self._failed[2],
            "goal_rate": goal_rate,
        }
        if self.diagnostics:  # which facts the goals are is the answer
            metrics["goals_met"] = [goal for goal in goals if self._world.holds(goal)]
        # The goal reward needs a program ToolBench would call executable: a right start followed by
        # lines of junk earns nothing.
        # (In interactive mode failed and unknown calls are feedback: the goals reached are paid.)
        # The best alternative by the goals it pays for (walking's aside), which may not be the one
        # closest to met when walking's goals are counted.
        start = self._held_at_start(self.task)
        best_own = max((own_goal_rate(facts, self._world, start) for facts in goal_sets(self.task)), default=0.0)
        paid_goals = best_own if within and (executable or self.mode == "interactive") else 0.0
        score = paid_goals if self.reward_kind == "goal" else self._acting_lcs(self.task)
        error = self._failed[2] if self._failed is not None and not executable else None
        return Outcome(
            observation, done=True, score=score, success=success, executable=executable, error=error, metrics=metrics
        )

    def _share_met(self, goals: list[str]) -> float:
        assert self._world is not None
        return sum(self._world.holds(goal) for goal in goals) / len(goals) if goals else 0.0

    def _action_budget(self, task: Task) -> int:
        """The most actions whose goals count: twice the longest solution's, and four more (none
        without a solution)."""
        solutions = self._reference_lines(task)
        return 2 * max(len(lines) for lines in solutions) + 4 if solutions else 1 << 30

    def _acting_lcs(self, task: Task) -> float:
        """ToolBench's LCS over the lines that act, the best over the references."""
        mine = acting_lines(self._lines)
        best = 0.0
        for reference, acting in zip(self._reference_lines(task), self._acting_reference_lines(task)):
            best = max(best, lcs_score(mine, acting) if acting else lcs_score(self._lines, reference))
        return best

    def _acting_reference_lines(self, task: Task) -> list[list[str]]:
        if task.id not in self._acting_references:
            self._acting_references[task.id] = [acting_lines(lines) for lines in self._reference_lines(task)]
        return self._acting_references[task.id]

    def _reference_lines(self, task: Task) -> list[list[str]]:
        if task.id not in self._references:
            self._references[task.id] = [
                [line for line in clean_lines(reference, self.check) if line] for reference in task.references
            ]
        return self._references[task.id]

    # ------------------------------------------------------------------ contract hooks
    def api_docs(self) -> str:
        return api_docs(self.check)

    def oracle_actions(self, task: Task) -> list[str]:
        if self.mode == "program":
            return super().oracle_actions(task)
        return [*clean_lines(task.references[0]), FINISH]

    def shared_parts_actions(self, task: Task) -> list[str]:
        """The first reference's walking, finding and turning lines: to the activity's rooms and
        objects, doing nothing there."""
        lines = [line for line in clean_lines(task.references[0]) if line and _function(line) in NAVIGATION]
        cut = Task(task.id, task.prompt, ("\n".join(lines),), task.category, task.extra)
        return self.oracle_actions(cut)

    def _get_backend_state(self) -> Any:
        if self._world is None:  # before the first reset: no home yet
            return None
        return {
            "world": self._world.snapshot(),
            "home": self._world.home.number,
            "rules": self._world.rules,
            "lines": list(self._lines),
            "failed": self._failed,
            "all_known": self._all_known,
            "carried_out": self._carried_out,
        }

    def _set_backend_state(self, state: Any) -> None:
        if state is None:
            self._world, self._lines, self._failed, self._all_known, self._carried_out = None, [], None, True, 0
            return
        self._world = World(build_home(state["home"]), rules=state.get("rules", "ours"))
        self._world.restore(state["world"])
        self._lines = list(state["lines"])
        self._failed = state["failed"]
        self._all_known = state["all_known"]
        self._carried_out = state.get("carried_out", 0)

    def render(self) -> str | None:
        text = super().render()
        if text is None or self._world is None or self.task is None:
            return text
        # The goals and their objects are the answer: shown only with diagnostics (run records).
        goal_objects = _goal_objects(self.task) if self.diagnostics else set()
        touched = sorted({arg for line in self._lines for arg in ground(line, self.check).args} | goal_objects)
        states = []
        for name in touched:
            for node in self._world.home.ids(name):
                where = self._world.place.get(node)
                place = (
                    "held"
                    if self._world.is_held(node)
                    else "worn"
                    if node in self._world.worn
                    else f"{where[0]} {self._world.name(where[1])}"
                    if where
                    else "with the character"
                )
                flags = ", ".join(sorted(self._world.states[node]))
                states.append(f"  {name}: {place}" + (f" [{flags}]" if flags else ""))
        alternatives = goal_sets(self.task) if self.diagnostics else []
        goals = [
            ("  or:\n" if number else "") + "\n".join(f"  {'✓' if self._world.holds(g) else '✗'} {g}" for g in facts)
            for number, facts in enumerate(alternatives)
        ]
        return (
            text
            + "--- final state ---\n"
            + self._world.describe()
            + "\n"
            + "\n".join(states)
            + ("\n--- goals ---\n" + "\n".join(goals) if goals else "")
            + "\n"
        )


def _function(line: str) -> str | None:
    match = _FUNCTION.match(line)
    return match.group(1) if match else None


def own_goal_rate(goals: list[str], world: World, held_at_start: Collection[str] = ()) -> float:
    """The share of ``goals`` met in ``world``, leaving out those walking and turning bring about
    and those that already held at the start (a closed fridge stays closed by doing nothing), unless
    every goal is one of them."""
    own = [goal for goal in goals if not goal.replace(" ", "").startswith(NAVIGATION_GOALS)] or goals
    own = [goal for goal in own if goal not in held_at_start] or own
    return sum(world.holds(goal) for goal in own) / len(own) if own else 0.0


def acting_lines(lines: list[str]) -> list[str]:
    """The lines that do something where the character is: all but walking, finding and turning."""
    return [line for line in lines if _function(line) not in NAVIGATION]


def _goal_objects(task: Task) -> set[str]:
    names = set()
    for goal in (goal for facts in goal_sets(task) for goal in facts):
        names.update(arg for arg in fact(goal)[1] if arg in PROPERTIES)
    return names
