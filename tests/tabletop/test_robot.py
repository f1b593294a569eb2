"""The UR5e model: its URDF has the published DH kinematics, its home pose and gripper stroke."""

import math

import numpy as np
import pybullet
import pytest

from toolbench.mock_services.tabletop import robot
from toolbench.mock_services.tabletop.scene import Client
from toolbench.mock_services.tabletop.world import PLACES

# UR5e: d1, a2, a3, d4, d5, d6 and the twists, as Universal Robots publishes them.
DH_D = (0.1625, 0.0, 0.0, 0.1333, 0.0997, 0.0996)
DH_A = (0.0, -0.425, -0.3922, 0.0, 0.0, 0.0)
DH_ALPHA = (math.pi / 2, 0.0, 0.0, math.pi / 2, -math.pi / 2, 0.0)


def dh_flange(joints):
    transform = np.eye(4)
    for theta, d, a, alpha in zip(joints, DH_D, DH_A, DH_ALPHA):
        ct, st, ca, sa = math.cos(theta), math.sin(theta), math.cos(alpha), math.sin(alpha)
        transform = transform @ np.array(
            [[ct, -st * ca, st * sa, a * ct], [st, ct * ca, -ct * sa, a * st], [0, sa, ca, d], [0, 0, 0, 1]]
        )
    return transform


@pytest.fixture(scope="module")
def arm():
    client = Client()
    body = client.loadURDF(robot.urdf_path(), useFixedBase=True)
    yield client, body
    client.close()


def set_joints(client, body, joints):
    for joint, value in zip(robot.ARM_JOINTS, joints):
        client.resetJointState(body, joint, value)


def test_joint_layout(arm):
    client, body = arm
    names = [client.getJointInfo(body, j)[1].decode() for j in range(client.getNumJoints(body))]
    assert names[: len(robot.ARM_JOINTS)] == [
        "shoulder_pan_joint",
        "shoulder_lift_joint",
        "elbow_joint",
        "wrist_1_joint",
        "wrist_2_joint",
        "wrist_3_joint",
    ]
    assert names[robot.TCP_LINK] == "tcp_joint"
    for finger in robot.FINGERS:
        info = client.getJointInfo(body, finger)
        assert info[2] == pybullet.JOINT_PRISMATIC and (info[8], info[9]) == (0.0, robot.FINGER_OPEN)
    assert pytest.approx(0.085) == 2 * robot.FINGER_OPEN  # the 2F-85's stroke


def test_flange_follows_the_published_dh_parameters(arm):
    client, body = arm
    rng = np.random.default_rng(5)
    for joints in [robot.HOME_JOINTS, *rng.uniform(-math.pi, math.pi, size=(20, 6))]:
        set_joints(client, body, joints)
        state = client.getLinkState(body, robot.GRIPPER_BASE_LINK, computeForwardKinematics=True)
        expected = dh_flange(joints)
        assert np.allclose(state[4], expected[:3, 3], atol=1e-6)
        rotation = np.asarray(client.getMatrixFromQuaternion(state[5])).reshape(3, 3)
        assert np.allclose(rotation, expected[:3, :3], atol=1e-6)


def test_home_pose_points_the_gripper_down_over_the_table(arm):
    client, body = arm
    set_joints(client, body, robot.HOME_JOINTS)
    state = client.getLinkState(body, robot.TCP_LINK, computeForwardKinematics=True)
    assert np.allclose(state[4], (0.1333, -0.4919, 0.4879 - robot.TCP_LENGTH), atol=1e-4)
    rotation = np.asarray(client.getMatrixFromQuaternion(state[5])).reshape(3, 3)
    assert np.allclose(rotation[:, 2], (0, 0, -1), atol=1e-9)


@pytest.mark.parametrize("place", list(PLACES))
@pytest.mark.parametrize("height", [0.02, 0.2])
def test_every_named_place_is_reachable_pointing_down(arm, place, height):
    client, body = arm
    set_joints(client, body, robot.HOME_JOINTS)
    controller = robot.Arm(client, body, 1 / 240)
    target = np.array([*PLACES[place], height])
    for _ in range(3):
        joints = controller.solve(target, 0.0)
        controller.command = joints
    set_joints(client, body, joints)
    state = client.getLinkState(body, robot.TCP_LINK, computeForwardKinematics=True)
    assert np.linalg.norm(np.array(state[4]) - target) < 1e-4


def test_face_yaw_of_cube_orientations(arm):
    client, _ = arm
    for yaw in (0.0, 0.3, -0.7, 1.2, math.pi):
        expected = (yaw + math.pi / 4) % (math.pi / 2) - math.pi / 4
        upright = client.getQuaternionFromEuler((0, 0, yaw))
        on_its_side = client.getQuaternionFromEuler((math.pi / 2, 0, yaw))
        assert robot.face_yaw(client, upright) == pytest.approx(expected, abs=1e-9)
        assert robot.face_yaw(client, on_its_side) == pytest.approx(expected, abs=1e-9)
