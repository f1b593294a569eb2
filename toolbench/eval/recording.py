"""``toolbench record``: play one episode and save what the camera saw.

A ``.gif`` shows the arm's motion: Tabletop keeps a frame every few simulation steps while a move
runs (``--every``), played back at the simulation's own speed. The GIF stays within a bound: at most
``--max-frames`` frames (dropped evenly, the first and the last always kept, each kept frame shown
longer so the pace stays real) and ``--max-bytes`` (the frames scaled down, then thinned further,
until the file fits). A ``.png`` is a strip of the frame after each move, side by side.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: Simulation steps between two frames of a move: 1/15 s of simulated time at PyBullet's 240 Hz.
DEFAULT_EVERY = 16
DEFAULT_MAX_FRAMES = 300
DEFAULT_MAX_BYTES = 5_000_000
#: The narrowest a GIF is scaled down to before frames are dropped instead.
MIN_WIDTH = 120
#: How long the first and the last frame stay on screen (seconds): the scene before and after.
FIRST_SECONDS, LAST_SECONDS = 0.5, 1.5
#: Without motion (an env that keeps no motion frames): one frame per move, this long each.
STILL_SECONDS = 0.6
#: Rendering every few steps slows a move down several times; the step's time budget while recording
#: is this many seconds, so a recorded episode is not cut short where a played one would not be.
RECORD_TIME_LIMIT = 120.0

HELP = "play one episode and save its camera frames (an animated GIF of the motion, or a PNG strip)"


@dataclass(frozen=True)
class SavedGif:
    """What ``save_bounded_gif`` wrote: how many frames, its size in pixels and in bytes."""

    path: Path
    frames: int
    width: int
    height: int
    size: int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``toolbench record``'s options."""
    parser.add_argument("--task", default="Tabletop")
    parser.add_argument("--task-id", default=None)
    parser.add_argument("--agent", default="oracle")
    parser.add_argument("--split", default="test")
    parser.add_argument("--mode", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out", default="episode.gif", help="a .gif (the motion, animated) or a .png (the frame after each move)"
    )
    parser.add_argument(
        "--every",
        type=int,
        default=DEFAULT_EVERY,
        metavar="STEPS",
        help=f"GIF: a frame every STEPS simulation steps while the arm moves (default {DEFAULT_EVERY}, "
        "1/15 s of simulated time); 0: only the frame after each move",
    )
    parser.add_argument(
        "--max-frames",
        type=_at_least(2),
        default=DEFAULT_MAX_FRAMES,
        help=f"GIF: at most this many frames, dropped evenly (default {DEFAULT_MAX_FRAMES})",
    )
    parser.add_argument(
        "--max-bytes",
        type=_at_least(10_000),
        default=DEFAULT_MAX_BYTES,
        help=f"GIF: at most this many bytes (default {DEFAULT_MAX_BYTES:,}, 5 MB): frames are scaled down "
        f"(to {MIN_WIDTH} px wide at least), then dropped evenly, until the file fits",
    )


def _at_least(low: int) -> Any:
    def parse(text: str) -> int:
        value = int(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, not {value}")
        return value

    parse.__name__ = "int"  # argparse names the type in its error messages
    return parse


def run(args: argparse.Namespace) -> int:
    """Play one episode and save what the camera saw (tasks with ``render_mode="rgb_array"``)."""
    import gymnasium as gym

    from toolbench.agents import make_agent
    from toolbench.catalog import find_task
    from toolbench.eval.frames import save_frames

    try:
        out = Path(args.out)
        gif = out.suffix.lower() == ".gif"
        if not gif and out.suffix.lower() != ".png":
            raise ValueError(f"--out {args.out!r}: write a .gif (animation) or a .png (strip of frames)")
        if not out.parent.is_dir():
            raise ValueError(f"--out {args.out!r}: the folder {str(out.parent)!r} does not exist")
        if args.every < 0:
            raise ValueError(f"--every {args.every}: a number of simulation steps, 0 or more")
        spec = find_task(args.task)
        env_class = spec.env_class()
        if "rgb_array" not in env_class.metadata["render_modes"]:
            raise ValueError(f"{spec.name} has nothing to see (no rgb_array render mode)")
        env = gym.make(spec.env_id, split=args.split, mode=args.mode, render_mode="rgb_array").unwrapped
        agent = make_agent(args.agent, seed=args.seed)
        keeps_frames = hasattr(env, "record_frames")  # envs that keep a frame after every move
        motion = gif and keeps_frames and hasattr(env, "motion_frame_steps") and args.every > 0
        if keeps_frames:
            env.record_frames = True
        if motion:
            env.motion_frame_steps = args.every
            env.limits = dataclasses.replace(env.limits, seconds=max(env.limits.seconds, RECORD_TIME_LIMIT))
        options = {"task_id": args.task_id} if args.task_id else None
        observation, info = env.reset(seed=args.seed, options=options)
    except (KeyError, ValueError) as exc:
        print(f"toolbench record: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    frames = [] if keeps_frames else [env.render()]
    agent.begin(env, env.task, observation, info)
    while True:
        observation, reward, terminated, truncated, info = env.step(agent.act(observation, info))
        if not keeps_frames:
            frames.append(env.render())
        if terminated or truncated:
            break
    frames = list(env.frames) if keeps_frames else frames
    if not gif:
        path = save_frames(frames, out)
        print(f"saved {len(frames)} frames of {env.task.id} to {path} (reward {reward:.2f})")
        return 0
    seconds = args.every * env.simulation_step_seconds if motion else STILL_SECONDS
    try:
        saved = save_bounded_gif(frames, out, seconds, args.max_frames, args.max_bytes)
    except ValueError as exc:
        print(f"toolbench record: {exc}", file=sys.stderr)
        return 2
    print(
        f"saved {saved.frames} of {len(frames)} frames of {env.task.id} to {saved.path} "
        f"({saved.width}x{saved.height}, {saved.size:,} bytes; reward {reward:.2f})"
    )
    return 0


def thin(frames: Sequence[Any], count: int) -> list[Any]:
    """``count`` of ``frames`` spread evenly over them, the first and the last among them."""
    if len(frames) <= count:
        return list(frames)
    if count < 2:
        raise ValueError("keeping fewer than 2 frames would lose the first or the last")
    picks = np.linspace(0, len(frames) - 1, count).round().astype(int)
    return [frames[i] for i in picks]


def save_bounded_gif(
    frames: Sequence[np.ndarray], path: str | Path, frame_seconds: float, max_frames: int, max_bytes: int
) -> SavedGif:
    """``frames`` as a looping GIF of at most ``max_frames`` frames and ``max_bytes`` bytes, each shown
    ``frame_seconds`` (longer where frames were dropped, so the animation keeps its pace)."""
    from PIL import Image

    if not frames:
        raise ValueError("no frames to save")
    images = [Image.fromarray(np.asarray(frame, dtype=np.uint8)) for frame in frames]
    width, height = images[0].size
    kept = thin(images, max_frames)
    scale = 1.0
    while True:
        size = (max(1, round(width * scale)), max(1, round(height * scale)))
        shown = [image.resize(size, Image.Resampling.LANCZOS) if scale < 1 else image for image in kept]
        data = _gif_bytes(shown, frame_seconds * (len(images) - 1) / max(len(kept) - 1, 1))
        if len(data) <= max_bytes:
            break
        shrink = math.sqrt(max_bytes / len(data)) * 0.95  # bytes grow about with the pixels
        if width * scale * shrink >= MIN_WIDTH:
            scale *= shrink
        elif len(kept) > 2:
            kept = thin(kept, max(2, min(len(kept) - 1, int(len(kept) * shrink * shrink))))
        elif scale * width > MIN_WIDTH:
            scale = MIN_WIDTH / width
        else:
            raise ValueError(
                f"two frames {size[0]}x{size[1]} take {len(data):,} bytes, more than the {max_bytes:,} allowed"
            )
    path = Path(path)
    path.write_bytes(data)
    return SavedGif(path, len(shown), size[0], size[1], len(data))


def _gif_bytes(images: Sequence[Any], seconds: float) -> bytes:
    """A looping GIF: the first frame shown ``FIRST_SECONDS``, the last ``LAST_SECONDS``, the others
    ``seconds`` each (GIF counts in hundredths of a second)."""
    middle = max(20, round(seconds * 100) * 10)  # browsers play frames under 20 ms at 100 ms
    durations = [middle] * len(images)
    durations[0], durations[-1] = max(middle, int(FIRST_SECONDS * 1000)), max(middle, int(LAST_SECONDS * 1000))
    buffer = io.BytesIO()
    images[0].save(buffer, format="GIF", save_all=True, append_images=list(images[1:]), duration=durations, loop=0)
    return buffer.getvalue()
