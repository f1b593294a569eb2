"""The Tabletop simulator: a UR5e with a parallel gripper over blocks and bowls, in PyBullet.

Physics: PyBullet DIRECT mode (no GUI, no threads), a fixed 1/240 s step, 30 solver iterations,
sorted overlapping pairs, gravity 9.81 m/s^2. Nothing reads the clock or draws random numbers,
so a layout and a sequence of calls give the same floats in every process.

Grasping is constraint-based: the fingers really close (position-controlled prismatic joints)
and only when both pads touch the same block is the block fixed to the tool with a PyBullet
constraint, until the gripper opens. Friction-only grasps of a 10 g cube at a 1/240 s step slip
and spin by millimetres per move, which turns a 5 cm success threshold into a lottery; the
constraint keeps what is held exactly where the fingers took it, while everything else (the
block settling on a stack or in a bowl, knocking, toppling) stays ordinary rigid-body physics.

State: ``get_state()`` is a plain dict of lists and floats (picklable and JSON-safe, so a forked
sandbox can send it back over a pipe). Bullet also keeps hidden solver state (contact
manifolds, warm-starting impulses, pair order) that poses and velocities do not capture, so every
``pick_place`` starts by rebuilding the scene from the current snapshot: what happens next is
then a function of the snapshot alone, and ``set_state`` on another simulator continues
bit-for-bit like this one.
"""

from __future__ import annotations

import contextlib
import copy
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolbench.mock_services.tabletop import camera, robot, scene
from toolbench.mock_services.tabletop.robot import Arm, face_yaw, finger_axis
from toolbench.mock_services.tabletop.world import (
    BLOCK_HALF,
    BOWL_FLOOR,
    BOWL_HEIGHT,
    BOWL_RADIUS,
    BOWL_WALL,
    COLORS,
    ArgumentTypeError,
    as_point,
    color_of,
    in_workspace,
    kind_of,
    validate_objects,
)

STATE_FORMAT = "toolbench.tabletop.state/1"
HOVER_Z = 0.2
HOME_TCP = (0.1333, -0.4919, 0.3379)  # where the home joints put the tool
SETTLE_STEPS = 24
CONTACT_DISTANCE = 5e-4  # closer than this (or penetrating) counts as touching
MOVED_TOLERANCE = 0.01  # an object that shifts more than this during a pick-and-place was disturbed
TRANSIT_SPEED = 0.5  # m/s, average over a move
VERTICAL_SPEED = 0.4
CREEP_SPEED = 0.08  # while feeling for contact
YAW_SPEED = 2.5  # rad/s
SETTLE_TOLERANCE = 5e-4
MAX_SETTLE_STEPS = 120
YAW_CLEARANCE = 0.03  # fingers this far from every other object: no need to turn the wrist for room
BLOCK_REACH = BLOCK_HALF * math.sqrt(2)
GRASP_GAP = 5e-4  # a pad this close to a face is touching it


@dataclass(frozen=True)
class PickPlaceResult:
    """What one pick-and-place did. ``collisions`` are readable sentences; empty means a clean move."""

    pick_xy: tuple[float, float]
    place_xy: tuple[float, float]
    picked: str | None  # the block that was carried, or None when the fingers closed on nothing
    collisions: tuple[str, ...]
    notes: tuple[str, ...]  # what else the caller should know, e.g. that nothing was grasped
    sim_seconds: float

    @property
    def clean(self) -> bool:
        return self.picked is not None and not self.collisions


@dataclass
class _Watch:
    """Contacts allowed in the current phase, and the collisions seen so far."""

    phase: str = "moving"
    allowed: set[str] = field(default_factory=set)
    held: str | None = None
    watch_held: bool = False
    seen: list[str] = field(default_factory=list)

    def report(self, text: str) -> None:
        if text not in self.seen:
            self.seen.append(text)


def _minimum_jerk(s: float) -> float:
    return s * s * s * (10 - 15 * s + 6 * s * s)


class OutOfTime(Exception):
    """A motion passed the simulator's ``deadline`` (the world is then mid-motion: restore it)."""


class TabletopSim:
    """The world of one episode. Build it with the objects and their xy positions. ``deadline`` (a
    ``time.monotonic()`` time, or None) stops a motion between two simulation steps with ``OutOfTime``."""

    def __init__(self, objects: Sequence[str] = (), positions: Mapping[str, Sequence[float]] | None = None):
        self.client: Any = scene.Client()
        self.dt = scene.DT
        self.steps = 0
        self.messages: list[str] = []
        self.events: list[str] = []
        self._canonical: dict[str, Any] | None = None
        self._watch: _Watch | None = None
        self._grasp: int | None = None
        self._tool_goal = np.zeros(3)  # the tool position and yaw last commanded
        self._tool_yaw = 0.0
        self.deadline: float | None = None
        self.reset(objects, positions or {})

    # ------------------------------------------------------------------ lifecycle
    def reset(self, objects: Sequence[str], positions: Mapping[str, Sequence[float]]) -> None:
        """A fresh world: ``objects`` resting at the xy of ``positions`` (z is ignored), the arm at home."""
        names = validate_objects(objects)
        poses = {}
        for name in names:
            if name not in positions:
                raise KeyError(f"no position given for {name!r}")
            xy = as_point(positions[name], f"position of {name!r}")
            if not in_workspace(xy):
                raise ValueError(f"{name!r} at {list(xy)} is outside the workspace x [-0.3, 0.3], y [-0.8, -0.2]")
            z = BLOCK_HALF if kind_of(name) == "block" else 0.0
            poses[name] = [float(xy[0]), float(xy[1]), z, 0.0, 0.0, 0.0, 1.0]
        self.set_state(
            {
                "format": STATE_FORMAT,
                "objects": list(names),
                "poses": poses,
                "velocities": {name: [0.0] * 6 for name in names},
                "joints": [[q, 0.0] for q in robot.HOME_JOINTS] + [[robot.FINGER_OPEN, 0.0]] * 2,
                "steps": 0,
                "messages": [],
                "events": [],
            }
        )
        self._run(SETTLE_STEPS)

    def close(self) -> None:
        """Disconnect from PyBullet; the simulator is unusable afterwards."""
        client = self.__dict__.get("client")
        if client is not None:
            with contextlib.suppress(Exception):  # at interpreter exit pybullet may be gone already
                client.close()
            self.client = None

    def __del__(self) -> None:
        self.close()

    @property
    def objects(self) -> tuple[str, ...]:
        return tuple(self.scene.objects)

    @property
    def sim_time(self) -> float:
        return self.steps * self.dt

    # ------------------------------------------------------------------ state
    def get_state(self) -> dict[str, Any]:
        """Every object's pose and velocity, the joints, the step count and the logs, as plain data."""
        if self._canonical is not None:
            return copy.deepcopy(self._canonical)
        poses, velocities = {}, {}
        for name, body in self.scene.objects.items():
            position, orientation = self.client.getBasePositionAndOrientation(body)
            linear, angular = self.client.getBaseVelocity(body)
            poses[name] = [float(v) for v in (*position, *orientation)]
            velocities[name] = [float(v) for v in (*linear, *angular)]
        return {
            "format": STATE_FORMAT,
            "objects": list(self.scene.objects),
            "poses": poses,
            "velocities": velocities,
            "joints": [list(state) for state in self.arm.joint_states()],
            "steps": self.steps,
            "messages": list(self.messages),
            "events": list(self.events),
        }

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Rebuild the world from a ``get_state()`` snapshot (of this or any other simulator)."""
        if not isinstance(state, Mapping) or state.get("format") != STATE_FORMAT:
            raise ValueError(f"not a Tabletop state snapshot (expected format {STATE_FORMAT!r})")
        names = validate_objects(list(state["objects"]))
        joints = [(float(q), float(qd)) for q, qd in state["joints"]]
        if len(joints) != len(robot.MOVABLE_JOINTS):
            raise ValueError(f"a snapshot has {len(robot.MOVABLE_JOINTS)} joint states, got {len(joints)}")
        poses = {name: tuple(float(v) for v in state["poses"][name]) for name in names}
        self.scene = scene.build(self.client, names, poses)
        for name, body in self.scene.objects.items():
            velocity = [float(v) for v in state["velocities"][name]]
            self.client.resetBaseVelocity(body, velocity[:3], velocity[3:])
        self.arm = Arm(self.client, self.scene.robot, self.dt)
        self.arm.reset(joints)
        self.steps = int(state["steps"])
        self.messages = [str(m) for m in state.get("messages", [])]
        self.events = [str(e) for e in state.get("events", [])]
        self._canonical = copy.deepcopy(dict(state))

    def _canonicalize(self) -> None:
        if self._canonical is None:
            self.set_state(self.get_state())

    # ------------------------------------------------------------------ queries
    def _body(self, name: str) -> int:
        if not isinstance(name, str):
            raise ArgumentTypeError(f"an object name must be a string, got {type(name).__name__}")
        if name not in self.scene.objects:
            raise KeyError(f"no object named {name!r}; objects: {', '.join(self.scene.objects) or 'none'}")
        return self.scene.objects[name]

    def get_obj_pos(self, name: str) -> np.ndarray:
        """xyz of the object's origin: a block's centre, a bowl's centre on the table."""
        return np.array(self.client.getBasePositionAndOrientation(self._body(name))[0], dtype=float)

    def get_obj_orientation(self, name: str) -> tuple[float, float, float, float]:
        return tuple(self.client.getBasePositionAndOrientation(self._body(name))[1])

    def positions(self) -> dict[str, tuple[float, float, float]]:
        return {name: tuple(float(v) for v in self.get_obj_pos(name)) for name in self.scene.objects}

    def get_aabb(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Axis-aligned bounding box as (min xyz, max xyz)."""
        low, high = self.client.getAABB(self._body(name))
        return np.array(low, dtype=float), np.array(high, dtype=float)

    def get_color(self, name: str) -> tuple[float, float, float, float]:
        self._body(name)
        return COLORS[color_of(name)]

    def is_visible(self, name: str) -> bool:
        """The object exists, is on the table and projects inside the front camera's image."""
        if not isinstance(name, str) or name not in self.scene.objects:
            return False
        position = tuple(self.get_obj_pos(name))
        return camera.on_table(position) and camera.in_view(self.client, "front", position)

    def render(self, camera_name: str = "front", width: int = 240, height: int = 240) -> np.ndarray:
        return camera.render(self.client, camera_name, width, height)

    def project(self, point: Sequence[float], camera_name: str = "front", width: int = 240, height: int = 240):
        return camera.project(self.client, camera_name, tuple(point), width, height)

    def tcp_position(self) -> np.ndarray:
        return self.arm.tcp_position()

    def object_at(self, xy: Sequence[float], exclude: Iterable[str] = ()) -> str | None:
        """The topmost object whose footprint contains ``xy``."""
        skip = set(exclude)
        best, best_top = None, -math.inf
        for name in self.scene.objects:
            if name in skip:
                continue
            low, high = self.get_aabb(name)
            if kind_of(name) == "bowl":
                inside = math.dist(xy, self.get_obj_pos(name)[:2]) <= BOWL_RADIUS
            else:
                inside = low[0] <= xy[0] <= high[0] and low[1] <= xy[1] <= high[1]
            if inside and high[2] > best_top:
                best, best_top = name, high[2]
        return best

    def _support_top(self, xy: np.ndarray, exclude: str | None) -> float:
        """Height of the highest surface under ``xy``: table, bowl floor or rim, or a block's top."""
        top = 0.0
        for name in self.scene.objects:
            if name == exclude:
                continue
            low, high = self.get_aabb(name)
            if kind_of(name) == "bowl":
                gap = math.dist(xy, self.get_obj_pos(name)[:2])
                if gap <= BOWL_RADIUS - BOWL_WALL - BLOCK_REACH:
                    top = max(top, BOWL_FLOOR)
                elif gap <= BOWL_RADIUS + BLOCK_REACH:
                    top = max(top, BOWL_HEIGHT)
            elif all(low[i] - BLOCK_REACH <= xy[i] <= high[i] + BLOCK_REACH for i in (0, 1)):
                top = max(top, float(high[2]))
        return top

    def _clearance(self, xy: np.ndarray, yaw: float, ignore: set[str]) -> float:
        """Room between the open fingers at ``xy``/``yaw`` and the nearest other object."""
        axis = finger_axis(yaw)
        fingers = (xy + axis * robot.FINGER_OUTER_REACH, xy - axis * robot.FINGER_OUTER_REACH)
        room = math.inf
        for name in self.scene.objects:
            if name in ignore:
                continue
            centre = self.get_obj_pos(name)[:2]
            size = BOWL_RADIUS if kind_of(name) == "bowl" else BLOCK_REACH
            for finger in fingers:
                room = min(room, math.dist(finger, centre) - size)
        return room

    def _choose_yaw(self, xy: np.ndarray, base: float, ignore: set[str]) -> float:
        """Of the two finger directions that fit a cube at ``base`` yaw, the one with room around it."""
        first = base
        second = base + math.pi / 2 if base < 0 else base - math.pi / 2
        first_room, second_room = self._clearance(xy, first, ignore), self._clearance(xy, second, ignore)
        if first_room >= YAW_CLEARANCE or first_room >= second_room:
            return first
        return second

    # ------------------------------------------------------------------ stepping and watching
    def _step(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise OutOfTime("the motion ran past its deadline")
        self.client.stepSimulation()
        self.steps += 1
        self._canonical = None
        if self._watch is not None:
            self._check_contacts(self._watch)

    def _run(self, steps: int) -> None:
        for _ in range(steps):
            self._step()

    def _touching(self, body: int, **selector: int) -> list[tuple[int, int, int]]:
        """(link on ``body``, other body, other link) for every contact closer than CONTACT_DISTANCE."""
        points = self.client.getContactPoints(bodyA=body, **selector)
        return [(p[3], p[2], p[4]) for p in points if p[8] <= CONTACT_DISTANCE]

    def _check_contacts(self, watch: _Watch) -> None:
        for link, other, _ in self._touching(self.scene.robot):
            other_name = self.scene.name_of(other)
            if other_name in watch.allowed or other_name == watch.held:
                continue
            part = robot.LINK_NAMES[link] if 0 <= link < len(robot.LINK_NAMES) else "base"
            watch.report(f"the {part} touched the {other_name} while {watch.phase}")
        if watch.watch_held and watch.held is not None:
            for _, other, _ in self._touching(self.scene.objects[watch.held]):
                other_name = self.scene.name_of(other)
                if other != self.scene.robot and other_name not in watch.allowed:
                    watch.report(f"the carried {watch.held} hit the {other_name} while {watch.phase}")

    # ------------------------------------------------------------------ motions
    def _move(
        self,
        goal: Sequence[float],
        yaw: float,
        speed: float,
        settle: bool = False,
        stop: Callable[[], bool] | None = None,
    ) -> bool:
        """Move the tool in a straight line with a minimum-jerk profile; True if ``stop`` ended it early."""
        goal = np.asarray(goal, dtype=float)
        start, start_yaw = self._tool_goal, self._tool_yaw
        duration = max(np.linalg.norm(goal - start) / speed, abs(yaw - start_yaw) / YAW_SPEED, 0.05)
        count = max(1, math.ceil(duration / self.dt))
        for index in range(1, count + 1):
            s = _minimum_jerk(index / count)
            self._servo(start + s * (goal - start), start_yaw + s * (yaw - start_yaw))
            if stop is not None and stop():
                return True
        if settle:
            for _ in range(MAX_SETTLE_STEPS):
                if np.linalg.norm(self.arm.tcp_position() - goal) < SETTLE_TOLERANCE:
                    break
                self._servo(goal, yaw)
                if stop is not None and stop():
                    return True
        return False

    def _servo(self, position: np.ndarray, yaw: float) -> None:
        self._tool_goal, self._tool_yaw = np.array(position, dtype=float), float(yaw)
        self.arm.drive(self.arm.solve(self._tool_goal, self._tool_yaw))
        self._step()

    def _hold_for(self, steps: int) -> None:
        self.arm.drive(self.arm.command, np.zeros(len(robot.ARM_JOINTS)))
        self._run(steps)

    def _close_fingers(self) -> str | None:
        """Close until both pads reach the same block (then hold it) or the fingers stop; the held block or None."""
        self.arm.set_fingers(0.0)
        self.arm.drive(self.arm.command, np.zeros(len(robot.ARM_JOINTS)))
        blocks = [name for name in self.scene.objects if kind_of(name) == "block"]
        last = self.arm.finger_positions()
        for _ in range(int(0.4 / self.dt)):
            self._step()
            for name in blocks:
                if all(self._near(robot_link, name) for robot_link in robot.FINGERS):
                    self._attach(name)
                    return name
            now = self.arm.finger_positions()
            if max(abs(now[0] - last[0]), abs(now[1] - last[1])) < 1e-6 and max(now) < robot.FINGER_OPEN - 0.005:
                break
            last = now
        return None

    def _near(self, link: int, name: str) -> bool:
        # Closest points rather than contacts: the pads are caught as they reach the faces, before
        # the closing force can squeeze or shove the block.
        points = self.client.getClosestPoints(self.scene.robot, self.scene.objects[name], GRASP_GAP, linkIndexA=link)
        return any(point[8] <= GRASP_GAP for point in points)

    def _attach(self, name: str) -> None:
        body = self.scene.objects[name]
        tool_position, tool_orientation = self.client.getLinkState(self.scene.robot, robot.TCP_LINK)[4:6]
        object_position, object_orientation = self.client.getBasePositionAndOrientation(body)
        inverse_position, inverse_orientation = self.client.invertTransform(tool_position, tool_orientation)
        relative = self.client.multiplyTransforms(
            inverse_position, inverse_orientation, object_position, object_orientation
        )
        fingers = self.arm.finger_positions()
        self.arm.set_fingers(min(fingers))
        for link in (robot.GRIPPER_BASE_LINK, *robot.FINGERS):
            self.client.setCollisionFilterPair(self.scene.robot, body, link, -1, 0)
        self._grasp = self.client.createConstraint(
            self.scene.robot,
            robot.TCP_LINK,
            body,
            -1,
            self.client.JOINT_FIXED,
            [0, 0, 0],
            parentFramePosition=relative[0],
            childFramePosition=[0, 0, 0],
            parentFrameOrientation=relative[1],
        )
        self.client.changeConstraint(self._grasp, maxForce=100.0)

    def _release(self, name: str) -> None:
        self.client.removeConstraint(self._grasp)
        self._grasp = None
        self.arm.set_fingers(robot.FINGER_OPEN)
        self._hold_for(12)  # fingers clear the block before it may collide with them again
        body = self.scene.objects[name]
        for link in (robot.GRIPPER_BASE_LINK, *robot.FINGERS):
            self.client.setCollisionFilterPair(self.scene.robot, body, link, -1, 1)
        for _ in range(int(0.25 / self.dt)):
            if min(self.arm.finger_positions()) > robot.FINGER_OPEN - 0.002:
                break
            self._step()

    # ------------------------------------------------------------------ the primitive
    def pick_place(self, pick_xy: Sequence[float], place_xy: Sequence[float]) -> PickPlaceResult:
        """Pick whatever is topmost at ``pick_xy`` and put it down at ``place_xy``, then go home.

        Hover 20 cm above the pick point, descend so the pads straddle the block's centre, close,
        lift back to 20 cm, carry at that height, lower until the block touches something (the
        table, a block, a bowl's floor) and open there, lift, return home. Bowls are fixed and
        cannot be picked; if the fingers close on nothing the arm goes home without placing.
        Unexpected contacts (the arm or fingers touching the table or another object, the carried
        block hitting something on the way, objects shoved more than 1 cm) are returned in
        ``collisions`` and appended to ``events``.
        """
        pick = as_point(pick_xy, "pick point")
        place = as_point(place_xy, "place point")
        for point, what in ((pick, "pick"), (place, "place")):
            if not in_workspace(point, margin=1e-9):
                raise ValueError(
                    f"{what} point {[round(float(v), 4) for v in point]} is outside the workspace "
                    "x [-0.3, 0.3], y [-0.8, -0.2]"
                )
        self._canonicalize()
        start_steps = self.steps
        before = self.positions()
        self._tool_goal, self._tool_yaw = self.arm.tcp_position(), 0.0
        self._grasp = None

        target = self.object_at(pick)
        watch = _Watch(allowed={target} if target else set())
        self._watch = watch
        try:
            if target is not None and kind_of(target) == "block":
                base_yaw = face_yaw(self.client, self.get_obj_orientation(target))
                grasp_z = max(float(self.get_obj_pos(target)[2]), BLOCK_HALF - 0.002)
            else:
                base_yaw, grasp_z = 0.0, BLOCK_HALF + (BOWL_FLOOR if target else 0.0)
            pick_yaw = self._choose_yaw(pick, base_yaw, {target} if target else set())

            watch.phase = "approaching"
            self._move([pick[0], pick[1], HOVER_Z], pick_yaw, TRANSIT_SPEED, settle=True)
            watch.phase = "descending to grasp"
            self._move([pick[0], pick[1], grasp_z], pick_yaw, VERTICAL_SPEED, settle=True)
            watch.phase = "grasping"
            held = self._close_fingers()
            watch.held = held
            watch.phase = "lifting"
            self._move([pick[0], pick[1], HOVER_Z], pick_yaw, VERTICAL_SPEED)
            watch.allowed = set()
            if held is not None:
                self._carry_and_place(held, place, watch)
            else:
                self.arm.set_fingers(robot.FINGER_OPEN)
            watch.phase = "returning home"
            watch.held = None
            watch.allowed = set()
            self._move(HOME_TCP, 0.0, TRANSIT_SPEED)
            self.arm.drive(np.array(robot.HOME_JOINTS), np.zeros(len(robot.ARM_JOINTS)))
            self._run(SETTLE_STEPS)
        finally:
            self._watch = None
        after = self.positions()
        for name in self.scene.objects:
            if name == held:
                continue
            shift = math.dist(before[name], after[name])
            if shift > MOVED_TOLERANCE:
                watch.report(f"the {name} was pushed {shift * 100:.1f} cm")
        notes = []
        if held is None:
            if target is None:
                there = "there is no block there"
            elif kind_of(target) == "bowl":
                there = f"the {target} is fixed to the table"
            else:
                there = f"the fingers did not close on the {target}"
            notes.append(f"nothing was picked up at {[round(float(v), 3) for v in pick]}: {there}")
        result = PickPlaceResult(
            pick_xy=(float(pick[0]), float(pick[1])),
            place_xy=(float(place[0]), float(place[1])),
            picked=held,
            collisions=tuple(watch.seen),
            notes=tuple(notes),
            sim_seconds=(self.steps - start_steps) * self.dt,
        )
        self.events.extend(result.notes + result.collisions)
        return result

    def _carry_and_place(self, held: str, place: np.ndarray, watch: _Watch) -> None:
        support = self.object_at(place, exclude=(held,))
        if support is not None and kind_of(support) == "block":
            base_yaw = face_yaw(self.client, self.get_obj_orientation(support))
        else:
            base_yaw = 0.0
        place_yaw = self._choose_yaw(place, base_yaw, {held, support} if support else {held})
        watch.phase, watch.watch_held = "carrying", True
        self._move([place[0], place[1], HOVER_Z], place_yaw, TRANSIT_SPEED, settle=True)
        watch.watch_held = False
        watch.phase = "lowering"
        if support is not None:
            watch.allowed = {support}
        body = self.scene.objects[held]
        hang = float(self.get_obj_pos(held)[2] - self.arm.tcp_position()[2])
        contact_z = self._support_top(place, held) + BLOCK_HALF - hang
        lowest = BLOCK_HALF - hang - 0.002

        def touching() -> bool:
            return any(other != self.scene.robot for _, other, _ in self._touching(body))

        fast_goal = max(contact_z + 0.015, lowest)
        if not self._move([place[0], place[1], fast_goal], place_yaw, VERTICAL_SPEED, stop=touching):
            self._move([place[0], place[1], lowest], place_yaw, CREEP_SPEED, stop=touching)
        self._servo(self._tool_goal, place_yaw)
        watch.phase = "releasing"
        self._release(held)
        watch.held = None
        watch.phase = "retreating"
        self._move([place[0], place[1], HOVER_Z], place_yaw, VERTICAL_SPEED)
