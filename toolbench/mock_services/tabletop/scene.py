"""Building the PyBullet scene: floor, table, robot, blocks and bowls, always in the same order.

A build is a pure function of its arguments: after ``resetSimulation`` the same calls in the same
order give the same body ids, the same broadphase pairs and the same solver order, which is what
makes a restored snapshot continue exactly like the original (see ``TabletopSim``).
"""

from __future__ import annotations

import functools
import inspect
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolbench.mock_services.tabletop import robot
from toolbench.mock_services.tabletop.quiet import import_pybullet
from toolbench.mock_services.tabletop.world import (
    BLOCK_HALF,
    BLOCK_MASS,
    BOWL_FLOOR,
    BOWL_HEIGHT,
    BOWL_RADIUS,
    BOWL_SEGMENTS,
    BOWL_WALL,
    COLORS,
    TABLE_CENTER,
    TABLE_HALF_SIZE,
    color_of,
    kind_of,
)

pybullet = import_pybullet()

DT = 1.0 / 240.0
SOLVER_ITERATIONS = 30
GRAVITY = -9.81
TABLE_THICKNESS = 0.02
TABLE_RGBA = (0.2, 0.2, 0.2, 1.0)
FLOOR_RGBA = (0.85, 0.85, 0.83, 1.0)
BLOCK_FRICTION = 0.6

Pose = tuple[float, float, float, float, float, float, float]  # x, y, z, qx, qy, qz, qw


class Client:
    """One PyBullet DIRECT physics server; its functions are called without passing the client id.

    Not pybullet_utils' BulletClient: that connects with an options string, which makes PyBullet
    print "argv[0]=" on stdout, and stdout belongs to the caller (a CLI's JSON output, say).
    """

    def __init__(self) -> None:
        self.id = pybullet.connect(pybullet.DIRECT)
        self._pid = os.getpid()

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(pybullet, name)
        if inspect.isbuiltin(attribute):
            attribute = functools.partial(attribute, physicsClientId=self.id)
        self.__dict__[name] = attribute  # later lookups skip __getattr__
        return attribute

    def close(self) -> None:
        # A forked child shares nothing with the parent's server, but only its creator disconnects it.
        if self.id >= 0 and self._pid == os.getpid():
            pybullet.disconnect(physicsClientId=self.id)
        self.id = -1


@dataclass(frozen=True)
class Scene:
    floor: int
    table: int
    robot: int
    objects: dict[str, int]  # name -> body id, in build order

    def name_of(self, body: int) -> str:
        if body == self.robot:
            return "robot"
        if body in (self.table, self.floor):
            return "table"
        for name, object_id in self.objects.items():
            if object_id == body:
                return name
        return f"body {body}"


def configure(client: Any) -> None:
    client.resetSimulation()
    client.setPhysicsEngineParameter(
        fixedTimeStep=DT,
        numSubSteps=0,
        numSolverIterations=SOLVER_ITERATIONS,
        deterministicOverlappingPairs=1,
        enableFileCaching=1,
    )
    client.setGravity(0, 0, GRAVITY)


def _static_box(client: Any, half_extents: Sequence[float], position: Sequence[float], rgba: Sequence[float]) -> int:
    shape = client.createCollisionShape(client.GEOM_BOX, halfExtents=list(half_extents))
    visual = client.createVisualShape(client.GEOM_BOX, halfExtents=list(half_extents), rgbaColor=list(rgba))
    return client.createMultiBody(0, shape, visual, basePosition=list(position))


def _block(client: Any, name: str, pose: Pose) -> int:
    half = [BLOCK_HALF] * 3
    shape = client.createCollisionShape(client.GEOM_BOX, halfExtents=half)
    visual = client.createVisualShape(client.GEOM_BOX, halfExtents=half, rgbaColor=list(COLORS[color_of(name)]))
    body = client.createMultiBody(
        BLOCK_MASS, shape, visual, basePosition=list(pose[:3]), baseOrientation=list(pose[3:])
    )
    client.changeDynamics(body, -1, lateralFriction=BLOCK_FRICTION, restitution=0.0)
    return body


def _bowl_parts() -> tuple[
    list[int], list[list[float]], list[float], list[float], list[list[float]], list[list[float]]
]:
    """A floor disc and a ring of wall boxes, as the arrays PyBullet's compound shapes take."""
    wall_half_height = (BOWL_HEIGHT - BOWL_FLOOR) / 2
    ring = BOWL_RADIUS - BOWL_WALL / 2
    # Segments slightly longer than the arc they cover, so the ring has no gaps a corner could enter.
    half_length = ring * math.tan(math.pi / BOWL_SEGMENTS) + BOWL_WALL / 2
    types, halves, radii, lengths, positions, orientations = [], [], [], [], [], []
    types.append(pybullet.GEOM_CYLINDER)
    halves.append([0, 0, 0])
    radii.append(BOWL_RADIUS)
    lengths.append(BOWL_FLOOR)
    positions.append([0, 0, BOWL_FLOOR / 2])
    orientations.append([0, 0, 0, 1])
    for index in range(BOWL_SEGMENTS):
        angle = 2 * math.pi * index / BOWL_SEGMENTS
        types.append(pybullet.GEOM_BOX)
        halves.append([BOWL_WALL / 2, half_length, wall_half_height])
        radii.append(0.0)
        lengths.append(0.0)
        positions.append([ring * math.cos(angle), ring * math.sin(angle), BOWL_FLOOR + wall_half_height])
        orientations.append([0, 0, math.sin(angle / 2), math.cos(angle / 2)])
    return types, halves, radii, lengths, positions, orientations


def _bowl(client: Any, name: str, pose: Pose) -> int:
    types, halves, radii, lengths, positions, orientations = _bowl_parts()
    shape = client.createCollisionShapeArray(
        shapeTypes=types,
        halfExtents=halves,
        radii=radii,
        lengths=lengths,
        collisionFramePositions=positions,
        collisionFrameOrientations=orientations,
    )
    visual = client.createVisualShapeArray(
        shapeTypes=types,
        halfExtents=halves,
        radii=radii,
        lengths=lengths,
        visualFramePositions=positions,
        visualFrameOrientations=orientations,
    )
    # Bowls are fixed to the table, as in Code as Policies: blocks go in and out, bowls stay.
    body = client.createMultiBody(0, shape, visual, basePosition=list(pose[:3]), baseOrientation=list(pose[3:]))
    client.changeVisualShape(body, -1, rgbaColor=list(COLORS[color_of(name)]))
    return body


def build(client: Any, objects: Sequence[str], poses: Mapping[str, Pose]) -> Scene:
    """Reset ``client`` and build the world with ``objects`` at ``poses``; the robot is at home, at rest."""
    configure(client)
    floor = _static_box(client, (1.5, 1.5, 0.01), (0.0, -0.3, -TABLE_THICKNESS - 0.01), FLOOR_RGBA)
    table = _static_box(
        client,
        (TABLE_HALF_SIZE, TABLE_HALF_SIZE, TABLE_THICKNESS / 2),
        (TABLE_CENTER[0], TABLE_CENTER[1], -TABLE_THICKNESS / 2),
        TABLE_RGBA,
    )
    client.changeDynamics(table, -1, lateralFriction=BLOCK_FRICTION)
    body = client.loadURDF(robot.urdf_path(), [0, 0, 0], useFixedBase=True)
    ids = {}
    for name in objects:
        ids[name] = (_block if kind_of(name) == "block" else _bowl)(client, name, poses[name])
    return Scene(floor=floor, table=table, robot=body, objects=ids)
