"""Cameras rendered with PyBullet's TinyRenderer: software rasterising, no GPU, same pixels everywhere.

Two views: ``front``, the camera Code as Policies records its videos with (1.25 m in front of the
robot, 40 cm up, looking back at it, 41.25 degrees below the horizon, 90 degree field of view), and
``top``, a view straight down on the table from high above with the top edge (y = -0.2) at the
top of the image and left (x = -0.3) on the left.

Lighting comes from straight above with no specular term, so a face looking up is drawn in
exactly its colour: what a test of "is the red block where the image is red" needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolbench.mock_services.tabletop.world import BOUNDS, TABLE_CENTER, TABLE_HALF_SIZE

LIGHT = {
    "lightDirection": [0.0, 0.0, 1.0],
    "lightColor": [1.0, 1.0, 1.0],
    "lightAmbientCoeff": 0.6,
    "lightDiffuseCoeff": 0.4,
    "lightSpecularCoeff": 0.0,
}
NEAR, FAR = 0.01, 10.0


@dataclass(frozen=True)
class Camera:
    eye: tuple[float, float, float]
    target: tuple[float, float, float]
    up: tuple[float, float, float]
    fov_deg: float  # vertical field of view

    def view_matrix(self, client: Any) -> list[float]:
        return list(client.computeViewMatrix(self.eye, self.target, self.up))

    def projection_matrix(self, client: Any, width: int, height: int) -> list[float]:
        return list(client.computeProjectionMatrixFOV(self.fov_deg, width / height, NEAR, FAR))


_PITCH = math.radians(41.25)
FRONT = Camera(
    eye=(0.0, -0.85, 0.4),
    target=(0.0, -0.85 + math.cos(_PITCH), 0.4 - math.sin(_PITCH)),
    up=(0.0, math.sin(_PITCH), math.cos(_PITCH)),
    fov_deg=90.0,
)
# TinyRenderer draws nothing with an orthographic matrix, so the top view is a narrow
# perspective from 3 m up: the table fills the height with a 2 cm margin and a 4 cm block's top
# looks 1.3 % bigger than its bottom.
_TOP_HEIGHT = 3.0
TOP = Camera(
    eye=(TABLE_CENTER[0], TABLE_CENTER[1], _TOP_HEIGHT),
    target=(TABLE_CENTER[0], TABLE_CENTER[1], 0.0),
    up=(0.0, 1.0, 0.0),
    fov_deg=math.degrees(2 * math.atan((TABLE_HALF_SIZE + 0.02) / _TOP_HEIGHT)),
)
CAMERAS = {"front": FRONT, "top": TOP}
DEFAULT_SIZE = (240, 240)  # height, width
MAX_PIXELS = 2048 * 2048


def camera_named(name: str) -> Camera:
    if name not in CAMERAS:
        raise ValueError(f"unknown camera {name!r}; cameras: {', '.join(CAMERAS)}")
    return CAMERAS[name]


def _check_size(width: int, height: int) -> None:
    for value, what in ((width, "width"), (height, "height")):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"image {what} must be a positive whole number, got {value!r}")
    if width * height > MAX_PIXELS:
        raise ValueError(f"images are limited to {MAX_PIXELS} pixels, got {width}x{height}")


def render(
    client: Any, camera: str = "front", width: int = DEFAULT_SIZE[1], height: int = DEFAULT_SIZE[0]
) -> np.ndarray:
    """An (height, width, 3) uint8 RGB image from ``camera``."""
    _check_size(width, height)
    spec = camera_named(camera)
    _, _, rgba, _, _ = client.getCameraImage(
        width,
        height,
        viewMatrix=spec.view_matrix(client),
        projectionMatrix=spec.projection_matrix(client, width, height),
        shadow=0,
        renderer=client.ER_TINY_RENDERER,
        flags=client.ER_NO_SEGMENTATION_MASK,
        **LIGHT,
    )
    return np.asarray(rgba, dtype=np.uint8).reshape(height, width, 4)[:, :, :3].copy()


def project(
    client: Any, camera: str, point: tuple[float, float, float], width: int, height: int
) -> tuple[float, float] | None:
    """Pixel (column, row) where world ``point`` appears, or None if it is behind the camera."""
    spec = camera_named(camera)
    view = np.asarray(spec.view_matrix(client)).reshape(4, 4).T
    projection = np.asarray(spec.projection_matrix(client, width, height)).reshape(4, 4).T
    clip = projection @ view @ np.array([*point, 1.0])
    if clip[3] <= 0:
        return None
    ndc = clip[:3] / clip[3]
    return (ndc[0] + 1) / 2 * width, (1 - ndc[1]) / 2 * height


def in_view(client: Any, camera: str, point: tuple[float, float, float], width: int = 240, height: int = 240) -> bool:
    pixel = project(client, camera, point, width, height)
    return pixel is not None and 0 <= pixel[0] < width and 0 <= pixel[1] < height


def on_table(point: tuple[float, float, float], margin: float = 0.01) -> bool:
    (x0, x1), (y0, y1), _ = BOUNDS
    return x0 - margin <= point[0] <= x1 + margin and y0 - margin <= point[1] <= y1 + margin and point[2] > -margin
