"""``toolbench record``'s GIF: the arm's motion, within its bound of frames and bytes."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
from PIL import Image

from toolbench.eval import recording


def record(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    recording.add_arguments(parser)
    return recording.run(parser.parse_args(list(argv)))


def gif_frames(path) -> list[np.ndarray]:
    with Image.open(path) as image:
        frames = []
        for index in range(image.n_frames):
            image.seek(index)
            frames.append(np.asarray(image.convert("RGB")))
    return frames


def test_a_recorded_episode_shows_the_arm_moving_within_its_bound(tmp_path, capsys):
    path = tmp_path / "episode.gif"
    bound = ["--max-frames", "24", "--max-bytes", "60000"]
    assert record("--task-id", "tabletop-test-0014", "--out", str(path), "--every", "60", *bound) == 0
    out = capsys.readouterr().out
    assert "reward 1.00" in out
    recorded = int(out.split(" of ")[1].split()[0])
    frames = gif_frames(path)
    # Its two moves take about two thousand simulation steps: more frames were filmed than the bound keeps.
    assert recorded > 24 and 2 < len(frames) <= 24
    assert path.stat().st_size <= 60_000
    assert all(not np.array_equal(a, b) for a, b in zip(frames, frames[1:], strict=False))
    # The motion, not only the scene before and after: the middle frames differ from both ends.
    ends = (frames[0], frames[-1])
    assert any(not any(np.array_equal(frame, end) for end in ends) for frame in frames[1:-1])


def test_without_motion_a_gif_has_the_frame_after_each_move(tmp_path, capsys):
    path = tmp_path / "still.gif"
    assert record("--task-id", "tabletop-test-0014", "--out", str(path), "--every", "0") == 0
    frames = len(gif_frames(path))
    assert frames == 3  # the scene before its two moves and after each
    assert "saved 3 of 3 frames" in capsys.readouterr().out


def test_thin_keeps_the_ends_and_spreads_the_rest():
    assert recording.thin(list(range(10)), 4) == [0, 3, 6, 9]
    assert recording.thin(list(range(3)), 5) == [0, 1, 2]
    with pytest.raises(ValueError):
        recording.thin(list(range(5)), 1)


def test_the_byte_bound_scales_down_then_drops_frames(tmp_path):
    rng = np.random.default_rng(0)
    noise = [rng.integers(0, 256, (150, 200, 3), dtype=np.uint8) for _ in range(6)]  # noise barely compresses
    whole = recording.save_bounded_gif(noise, tmp_path / "whole.gif", 0.1, 6, 10_000_000)
    assert (whole.frames, whole.width, whole.height) == (6, 200, 150)
    smaller = recording.save_bounded_gif(noise, tmp_path / "smaller.gif", 0.1, 6, whole.size // 2)
    assert smaller.size <= whole.size // 2 and smaller.frames == 6 and recording.MIN_WIDTH <= smaller.width < 200
    assert smaller.path.stat().st_size == smaller.size
    tiny = recording.save_bounded_gif(noise, tmp_path / "tiny.gif", 0.1, 6, whole.size // 5)
    assert tiny.size <= whole.size // 5 and tiny.width >= recording.MIN_WIDTH and 2 <= tiny.frames < 6
    with pytest.raises(ValueError, match="allowed"):
        recording.save_bounded_gif(noise, tmp_path / "none.gif", 0.1, 6, 1_000)


def test_the_help_states_the_bound(capsys):
    parser = argparse.ArgumentParser()
    recording.add_arguments(parser)
    text = " ".join(parser.format_help().split())
    assert "--max-frames" in text and "5 MB" in text and "--every" in text
    with pytest.raises(SystemExit):
        parser.parse_args(["--max-frames", "1"])
    assert "at least 2" in capsys.readouterr().err
