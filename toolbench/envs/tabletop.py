"""toolbench/Tabletop-v0: Code-as-Policies pick-and-place programs on a simulated UR5e."""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np

from toolbench.core.env import ActionError, AuditAllowance, Outcome, ToolEnv
from toolbench.core.replies import code_in_reply
from toolbench.core.sandbox import CpuAccount, Limits, budgets, run_in_worker, start_worker
from toolbench.core.seeding import stable_hash
from toolbench.core.surface import library_samples
from toolbench.core.tasks import Task
from toolbench.core.toolcalls import ToolCallError, code_cell, code_tools
from toolbench.envs import code_env_modules
from toolbench.mock_services.tabletop import (
    TabletopSim,
    check,
    instruction,
    layout_from_record,
    make_agent_api,
    reference_program,
)
from toolbench.mock_services.tabletop.api import API_NAMES
from toolbench.mock_services.tabletop.layouts import Layout
from toolbench.mock_services.tabletop.scene import DT
from toolbench.mock_services.tabletop.sim import OutOfTime

MAX_MOVES = 100  # pick-and-place moves one action may make
#: Moves stop this long before the step's budget: undoing a stopped move, describing the scene and
#: answering still take time, which a process busy with other sessions' simulations stretches.
MOVES_END_EARLY = 0.25
FRAME_SIZE = (320, 240)

API_DOCS = """# The names of the objects on the table, e.g. ['blue block', 'red bowl'].
get_obj_names()

# The xy position (a numpy array, metres) of an object or of a named place such as 'top left corner'.
get_obj_pos(name)

# The object's bounding box seen from above: [min_x, min_y, max_x, max_y].
get_bbox(name)

# The RGBA colour of an object.
get_color(name)

# Whether the object is on the table, in the camera's view.
is_obj_visible(name)

# Map a normalized point in [0, 1]^2 ([0, 0] is the bottom left corner of the table) to workspace xy.
denormalize_xy(point)

# Pick up the first (a block's name or an xy point) and put it on the second (a name or an xy point).
# A block put on a block is stacked on it; put on a bowl it goes into the bowl.
put_first_on_second(first, second)

# Stack the objects bottom to top in the given order.
stack_objects_in_order(object_names)

# The name of the corner or of the side nearest to a point or an object.
get_corner_name(point)
get_side_name(point)

# The xy of a place phrase: 'top left corner', 'middle', 'left side', an object's name, or offsets such
# as '10cm left of the blue bowl' and '0.2 m to the top of the red bowl'.
parse_position(text)

# Say something to the user.
say(message)

# numpy is available as np. x grows to the right, y grows to the top; the table spans
# x in [-0.3, 0.3] and y in [-0.8, -0.2].
"""


def prompt_for(objects: list[str], text: str) -> str:
    """The Code-as-Policies prompt: the objects, then the instruction as a comment."""
    return f"objects = {objects!r}\n# {text.rstrip('.')}."


def to_wire(value: Any) -> Any:
    """An API value as JSON: arrays as {"ndarray": [...]}, numpy scalars as numbers, tuples as lists."""
    if isinstance(value, np.ndarray):
        return {"ndarray": value.tolist()}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return [to_wire(item) for item in value]
    return value


def from_wire(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"ndarray"}:
        return np.array(value["ndarray"], dtype=float)
    if isinstance(value, list):
        return [from_wire(item) for item in value]
    return value


def code_names(call: Any) -> dict[str, Any]:
    """In the worker's child: the Code-as-Policies names, each a call of the env's simulator."""

    def proxy(name: str) -> Any:
        def function(*args: Any) -> Any:
            return from_wire(call("api", {"name": name, "args": [to_wire(arg) for arg in args]}))

        function.__name__ = function.__qualname__ = name
        return function

    names: dict[str, Any] = {name: proxy(name) for name in API_NAMES if name != "np"}
    names["np"] = np
    return names


def surface_roots() -> dict[str, Any]:
    """The names agent code gets, and values of the kinds the API returns, for the walk of what
    agent code can reach (``core.surface``)."""
    return {**code_names(lambda kind, payload: None), **library_samples(np)}


def code_collect(namespace: dict[str, Any]) -> None:
    """Nothing comes back but the output: the world changed in the env's process already."""
    return None


class TabletopEnv(ToolEnv):
    """Write Code-as-Policies programs that move blocks and bowls with a simulated UR5e arm.

    ## Description
    The ToolBench Tabletop task, from Code as Policies (Liang et al.): a UR5e arm with a
    two-finger gripper picks and places 4 cm blocks among open bowls on a 0.6 m table. The
    agent writes Python against a small perception and action API (``get_obj_pos``,
    ``put_first_on_second``, ``parse_position``...). 15 instruction types (8 seen ``SI_*``, 7
    unseen ``UI_*``): stacking, moving to corners and sides, into bowls of matching or
    mismatched colours, relative placement, lines; and 8 of our own (``NI_*``: the middle, a
    midpoint, a swap, an ordered stack, the n nearest, all but one, an extreme, exactly n), which
    only the ``unseen`` split has. The world is a PyBullet simulation in
    DIRECT mode built from primitive shapes, deterministic to the bit.

    ## Action Space
    Python code (``UnicodeText``). It runs in the core sandbox: no imports, no names starting with
    ``_``, no files, network or processes, a time and a memory budget. ``mode="program"``: the
    action is the whole program. ``mode="interactive"``: each step runs one code cell; the action
    ``done`` ends the episode. Interactive actions may also be the JSON tool calls of
    ``info["tools"]``: ``{"name": "run_code", "arguments": {"code": ...}}`` and ``{"name": "done"}``.

    ## Observation Space
    Text: the prompt (``objects = [...]`` and the instruction as a comment); after a step, what the
    code printed or said, any error, and every object's position.

    ## Rewards
    1 when the final scene satisfies the instruction within 0.05 m (the checker checks what the
    instruction says: stacked means stacked, a diagonal line is diagonal, objects not mentioned
    stay put), else 0; paid when the episode ends. ``info`` has ``success``, ``score``,
    ``executable``, ``error``, ``collisions`` (contacts the arm made that it should not have) and
    ``reason`` (why the scene passes or fails).

    ## Starting State
    A layout of up to 4 blocks and 4 bowls from the split (``test``: 105, 7 per type; ``train``:
    1,000, seen types only, in more wordings, and no test instruction; ``unseen``: 100 of the
    ``NI_*`` types in wordings of their own; ``demo``: 8), drawn by the seeded RNG or named by
    ``options={"task_id": ...}``.

    ## Episode End
    ``program``: after one action. ``interactive``: at ``done`` or ``max_steps`` (default 20).

    ## Arguments
    ``gym.make("toolbench/Tabletop-v0", split="test", mode="program", render_mode=None,
    max_steps=None, task_file=None, time_limit=15, memory_limit=512)``: ``time_limit`` (seconds)
    and ``memory_limit`` (MB) bound each step's code; ``render_mode="rgb_array"`` returns the front camera,
    ``"ansi"`` the transcript. A ``task_file`` may hold the original test records
    (``tester_id``, ``configs``).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 2}
    default_max_steps = 20
    metric_names = ("collisions",)
    grade_keys = ("reason",)
    finishing_action = "done"
    input_fields = ("tester_id", "configs")  # the instruction type and the scene it is set in
    # The harness gives Tabletop no docs or demonstrations because its query is a whole Code-as-Policies
    # prompt with its own examples; our task prompt is only the scene and the instruction, so the API
    # docs and three demonstrations stand in for that prompt. "objects = [" starts the next scene.
    generation_extra_stop = ("objects = [",)
    generation_top_k_api = 20
    audit_allowances = (
        AuditAllowance(
            "demo_answer",
            {"success_rate": 0.15},
            "ToolBench gives each seen instruction type a demonstration; two of them name no object (stack "
            "all the blocks, ...), so one program solves every scene and their demonstration is their answer "
            "(14 of the 105 test tasks)",
        ),
    )
    limits = Limits(seconds=15.0, memory_mb=512, output_chars=20_000)
    #: Simulated time per simulation step: the clock of the motion frames (``motion_frame_steps``).
    simulation_step_seconds: ClassVar[float] = DT

    def __init__(self, time_limit: float | None = None, memory_limit: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.limits = budgets(self.limits, time_limit, memory_limit)
        self._sim: TabletopSim | None = None
        self._layout: Layout | None = None
        self._collisions = 0
        self._cpu = CpuAccount()  # this env's (a served session's) recent CPU use in the sandbox
        self.record_frames = False  # keep a frame after every move (for GIFs)
        #: With ``record_frames``, also a frame every this many simulation steps while a move runs
        #: (the arm's motion, for ``toolbench record``); 0: only the frame after each move.
        self.motion_frame_steps = 0
        self.frames: list[np.ndarray] = []

    # ------------------------------------------------------------------ tasks
    @classmethod
    def complete_task(cls, task: Task) -> Task:
        """Original test records carry only ``tester_id`` and ``configs``: build prompt and reference."""
        if task.prompt and task.references:
            return task
        layout = layout_from_record(task.extra)
        stated = task.extra.get("configs", {}).get("instruction") or layout.instruction
        return dataclasses.replace(
            task,
            prompt=task.prompt or prompt_for(list(layout.objects), stated),
            references=task.references
            or (reference_program(layout.template_id, layout.variables, layout.objects, layout.positions),),
            category=task.category or layout.template_id,
        )

    def layout(self, task: Task) -> Layout:
        return layout_from_record(task.extra)

    # ------------------------------------------------------------------ episode
    def _begin(self, task: Task) -> str:
        start_worker(code_env_modules())
        self._layout = self.layout(task)
        if self._sim is None:
            self._sim = TabletopSim(self._layout.objects, self._layout.positions)
        else:
            self._sim.reset(self._layout.objects, self._layout.positions)
        self._collisions = 0
        self.frames = [self._frame()] if self.record_frames else []
        return task.prompt

    def _act(self, action: str) -> Outcome:
        if self.mode == "interactive":
            try:
                code = code_cell(action, self.finishing_action)
            except ToolCallError as exc:
                raise ActionError(str(exc)) from None
            if code is None:
                return self._scored("Done.")
            action = code
        assert self._sim is not None and self.task is not None
        result, said = self._run(code_in_reply(action))
        parts = [p for p in (result.output.rstrip(), "\n".join(f"say: {m}" for m in said)) if p]
        if result.error:
            parts.append(f"Error: {result.error}")
        parts.append(self._describe_scene())
        observation = "\n".join(parts)
        if self.mode == "program":
            if result.error:
                return Outcome(
                    observation,
                    done=True,
                    executable=False,
                    error=result.error,
                    metrics={"collisions": self._collisions},
                )
            return self._scored(observation)
        return Outcome(
            observation, done=False, executable=result.ok, error=result.error, metrics={"collisions": self._collisions}
        )

    def _run(self, code: str) -> tuple[Any, list[str]]:
        """Run agent code in the clean worker. Its API calls are made here, on the env's own
        simulator, as they come: the world moves once, in this process. Returns the sandbox
        result and what the code said."""
        sim = self._sim
        assert sim is not None and self.task is not None
        api = make_agent_api(sim)
        perform, moves, said_before = sim.pick_place, 0, len(sim.messages)
        # One call may make many moves (stack_objects_in_order): the step's deadline holds between them too.
        ends = time.monotonic() + max(self.limits.seconds - MOVES_END_EARLY, self.limits.seconds / 2)

        def pick_place(pick_xy: Any, place_xy: Any) -> Any:
            nonlocal moves
            moves += 1
            if moves > MAX_MOVES:
                raise ValueError(f"a program may make at most {MAX_MOVES} pick-and-place moves")
            out_of_time = f"the step's {self.limits.seconds:g} s time budget ran out during its moves"
            if time.monotonic() > ends:
                raise ValueError(out_of_time)
            # The deadline holds within a move too (a move is many simulation steps, slow when many
            # sessions share the process); a move it stops is undone, so the world is never mid-motion.
            before, sim.deadline, filmed = sim.get_state(), ends, len(self.frames)
            try:
                with self._filming(sim):
                    result = perform(pick_xy, place_xy)
            except OutOfTime:
                sim.set_state(before)
                del self.frames[filmed:]  # the undone move's motion never happened
                raise ValueError(f"{out_of_time} (the last move was undone)") from None
            finally:
                sim.deadline = None
            self._collisions += len(result.collisions)
            if self.record_frames:
                self.frames.append(self._frame())
            return result

        def serve(kind: str, payload: Any) -> Any:
            if kind != "api" or not isinstance(payload, dict):
                raise ValueError(f"unknown call {kind!r}")
            name, args = payload.get("name"), payload.get("args")
            if name not in API_NAMES or name == "np" or not isinstance(args, list):
                raise ValueError(f"unknown function {name!r}")
            return to_wire(api[name](*(from_wire(arg) for arg in args)))

        sim.pick_place = pick_place  # type: ignore[method-assign]
        try:
            result = run_in_worker(
                code,
                names="toolbench.envs.tabletop:code_names",
                collect="toolbench.envs.tabletop:code_collect",
                serve=serve,
                limits=self.limits,
                echo_last_expression=self.mode == "interactive",
                seed=stable_hash(self.task.id, self._steps),
                account=self._cpu,
            )
        finally:
            sim.pick_place = perform  # type: ignore[method-assign]
        return result, sim.messages[said_before:]

    @contextlib.contextmanager
    def _filming(self, sim: TabletopSim) -> Iterator[None]:
        """While a move runs: a frame every ``motion_frame_steps`` simulation steps, when recording."""
        every = self.motion_frame_steps if self.record_frames else 0
        if every <= 0:
            yield
            return
        step = sim._step

        def filmed_step() -> None:
            step()
            if sim.steps % every == 0:
                self.frames.append(self._frame())

        # Every simulation step of a move goes through the simulator's ``_step``: wrapping it on this
        # instance films the motion without the simulator knowing of cameras or recordings.
        sim._step = filmed_step  # type: ignore[method-assign]
        try:
            yield
        finally:
            del sim._step

    def _scored(self, observation: str) -> Outcome:
        assert self._layout is not None and self._sim is not None
        final = self._sim.positions()
        success, reason = check(
            self._layout.template_id, self._layout.variables, self._layout.objects, self._layout.positions, final
        )
        return Outcome(
            observation,
            verdict=f"{'Success' if success else 'Not done'}: {reason}",
            done=True,
            score=float(success),
            success=success,
            metrics={"collisions": self._collisions, "reason": reason},
        )

    def _on_truncation(self, last: Outcome) -> Outcome | None:
        final = self._scored(last.observation)
        final.executable, final.error = last.executable, last.error
        return final

    def _describe_scene(self) -> str:
        assert self._sim is not None
        return "Objects: " + "; ".join(
            f"{name} at ({x:.3f}, {y:.3f}, {z:.3f})" for name, (x, y, z) in self._sim.positions().items()
        )

    # ------------------------------------------------------------------ contract hooks
    def _frame(self) -> np.ndarray:
        assert self._sim is not None
        return self._sim.render("front", *FRAME_SIZE)

    def render(self) -> Any:
        if self.render_mode == "rgb_array":
            if self._sim is None:
                return np.zeros((FRAME_SIZE[1], FRAME_SIZE[0], 3), dtype=np.uint8)
            return self._frame()
        return super().render()

    def api_docs(self) -> str:
        return API_DOCS

    def tools(self) -> list[dict[str, Any]] | None:
        if self.mode == "program":
            return None
        return code_tools("done", "Say the instruction is carried out; the scene is scored and the episode ends.")

    def oracle_actions(self, task: Task) -> list[str]:
        if self.mode == "program":
            return super().oracle_actions(task)
        return [task.references[0], "done"]

    def _get_backend_state(self) -> Any:
        return {"sim": self._sim.get_state() if self._sim is not None else None, "collisions": self._collisions}

    def _set_backend_state(self, state: Any) -> None:
        self._collisions = state["collisions"]
        if state["sim"] is None:  # a snapshot from before the first reset: no table yet, as in a new env
            if self._sim is not None:
                self._sim.close()
            self._sim, self._layout = None, None
            return
        if self._task is not None:
            self._layout = self.layout(self._task)
        if self._sim is None:
            self._sim = TabletopSim()
        self._sim.set_state(state["sim"])

    def close(self) -> None:
        if self._sim is not None:
            self._sim.close()
            self._sim = None


__all__ = ["TabletopEnv", "instruction", "prompt_for"]
