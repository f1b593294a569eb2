"""Save an episode's camera frames for people to look at: an animated GIF or a PNG strip (Pillow)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np


def save_frames(frames: Sequence[np.ndarray], path: str | Path, seconds_per_frame: float = 0.6) -> Path:
    """``.gif``: an animation that loops; any other suffix (``.png``): the frames side by side."""
    from PIL import Image

    if not frames:
        raise ValueError("no frames to save")
    path = Path(path)
    images = [Image.fromarray(np.asarray(frame, dtype=np.uint8)) for frame in frames]
    if path.suffix.lower() == ".gif":
        images[0].save(path, save_all=True, append_images=images[1:], duration=int(seconds_per_frame * 1000), loop=0)
    else:
        strip = Image.fromarray(np.concatenate([np.asarray(frame, dtype=np.uint8) for frame in frames], axis=1))
        strip.save(path)
    return path
