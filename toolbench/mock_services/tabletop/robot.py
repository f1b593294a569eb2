"""The UR5e and its gripper as PyBullet sees them: joint layout, home pose, IK and motor commands.

The arm is position-controlled: every control step the caller asks for a tool pose, ``Arm``
solves inverse kinematics (PyBullet's damped least squares, seeded with the previous command so
consecutive solutions stay on one branch and never depend on how far the real joints lag) and
sends joint targets with matching feed-forward velocities. The tool always points straight
down; only its yaw (rotation about the vertical) changes.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

HOME_JOINTS = (math.pi / 2, -math.pi / 2, math.pi / 2, -math.pi / 2, 3 * math.pi / 2, 0.0)
ARM_JOINTS = (0, 1, 2, 3, 4, 5)
GRIPPER_BASE_LINK = 6
LEFT_FINGER, RIGHT_FINGER = 7, 8
FINGERS = (LEFT_FINGER, RIGHT_FINGER)
TCP_LINK = 9
MOVABLE_JOINTS = ARM_JOINTS + FINGERS  # the order IK reports and state snapshots use
LINK_NAMES = (
    "shoulder",
    "upper arm",
    "forearm",
    "wrist 1",
    "wrist 2",
    "wrist 3",
    "gripper",
    "left finger",
    "right finger",
    "tool",
)

FINGER_OPEN = 0.0425  # per finger: 85 mm between the pads
FINGER_OUTER_REACH = FINGER_OPEN + 0.01  # pad thickness: how far an open finger reaches
FINGER_FORCE = 40.0
FINGER_SPEED = 0.25
ARM_FORCES = (150.0, 150.0, 150.0, 28.0, 28.0, 28.0)
POSITION_GAIN = 0.3
VELOCITY_GAIN = 1.0
TCP_LENGTH = 0.15  # flange to the pads' centre
IK_DAMPING = 1e-3


def urdf_path() -> str:
    # A real file path, not an importlib resource: PyBullet's C++ loader opens it by name.
    return str(Path(__file__).resolve().parent / "assets" / "ur5e_gripper.urdf")


def down_orientation(client: Any, yaw: float) -> tuple[float, float, float, float]:
    """Tool pointing down, turned ``yaw`` about the vertical; at yaw 0 the fingers close along y."""
    return client.getQuaternionFromEuler((math.pi, 0.0, math.pi + yaw))


def finger_axis(yaw: float) -> np.ndarray:
    """World xy direction along which the fingers open at tool yaw ``yaw``."""
    return np.array([-math.sin(yaw), math.cos(yaw)])


def face_yaw(client: Any, orientation: tuple[float, float, float, float]) -> float:
    """The yaw of a cube's most horizontal face normal, in [-pi/4, pi/4): gripping angles repeat every 90 degrees.

    A cube that has tipped over still has four faces whose normals are (nearly) horizontal, so this
    works whatever face it rests on.
    """
    matrix = np.asarray(client.getMatrixFromQuaternion(orientation)).reshape(3, 3)
    axis = min(range(3), key=lambda i: (abs(matrix[2, i]), i))
    yaw = math.atan2(matrix[1, axis], matrix[0, axis])
    return (yaw + math.pi / 4) % (math.pi / 2) - math.pi / 4


class Arm:
    """Commands for one robot body in one PyBullet client."""

    def __init__(self, client: Any, body: int, dt: float):
        self.client = client
        self.body = body
        self.dt = dt
        self.command = np.array(HOME_JOINTS)
        self.finger_target = FINGER_OPEN

    def reset(self, joints: list[tuple[float, float]]) -> None:
        """Put every movable joint at (position, velocity) and hold it there."""
        for joint, (position, velocity) in zip(MOVABLE_JOINTS, joints):
            self.client.resetJointState(self.body, joint, position, velocity)
        self.command = np.array([position for position, _ in joints[: len(ARM_JOINTS)]])
        self.finger_target = float(joints[len(ARM_JOINTS)][0])
        self.hold()

    def joint_states(self) -> list[tuple[float, float]]:
        states = self.client.getJointStates(self.body, MOVABLE_JOINTS)
        return [(float(s[0]), float(s[1])) for s in states]

    def tcp_position(self) -> np.ndarray:
        return np.array(self.client.getLinkState(self.body, TCP_LINK, computeForwardKinematics=True)[4])

    def solve(self, position: np.ndarray, yaw: float) -> np.ndarray:
        seed = list(self.command) + [self.finger_target] * len(FINGERS)
        solution = self.client.calculateInverseKinematics(
            self.body,
            TCP_LINK,
            list(position),
            down_orientation(self.client, yaw),
            currentPositions=seed,
            maxNumIterations=50,
            residualThreshold=1e-6,
            # Light damping: the default (0.1) needs several calls to converge; targets here move
            # a fraction of a millimetre per step, far from singular poses, so one call suffices.
            jointDamping=[IK_DAMPING] * len(MOVABLE_JOINTS),
        )
        return np.array(solution[: len(ARM_JOINTS)])

    def drive(self, joints: np.ndarray, velocities: np.ndarray | None = None) -> None:
        """Send joint targets; the feed-forward velocity defaults to the one that reaches them in one step."""
        if velocities is None:
            velocities = (joints - self.command) / self.dt
        self.command = np.array(joints)
        self.client.setJointMotorControlArray(
            self.body,
            ARM_JOINTS,
            self.client.POSITION_CONTROL,
            targetPositions=list(joints),
            targetVelocities=list(velocities),
            forces=list(ARM_FORCES),
            positionGains=[POSITION_GAIN] * len(ARM_JOINTS),
            velocityGains=[VELOCITY_GAIN] * len(ARM_JOINTS),
        )

    def hold(self) -> None:
        self.drive(self.command, np.zeros(len(ARM_JOINTS)))
        self.set_fingers(self.finger_target)

    def set_fingers(self, target: float) -> None:
        self.finger_target = float(target)
        for joint in FINGERS:
            self.client.setJointMotorControl2(
                self.body,
                joint,
                self.client.POSITION_CONTROL,
                targetPosition=self.finger_target,
                force=FINGER_FORCE,
                maxVelocity=FINGER_SPEED,
            )

    def finger_positions(self) -> tuple[float, float]:
        states = self.client.getJointStates(self.body, FINGERS)
        return float(states[0][0]), float(states[1][0])
