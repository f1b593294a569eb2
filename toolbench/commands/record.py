"""``toolbench record``: play one episode and save what the camera saw.

The parser in ``toolbench.cli`` calls the ``cmd_*`` function; heavy modules load inside it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def cmd_record(args: argparse.Namespace) -> int:
    """Play one episode and save what the camera saw (tasks with ``render_mode="rgb_array"``)."""
    import gymnasium as gym

    from toolbench.agents import make_agent
    from toolbench.catalog import find_task
    from toolbench.eval.frames import save_frames

    try:
        out = Path(args.out)
        if out.suffix.lower() not in (".gif", ".png"):
            raise ValueError(f"--out {args.out!r}: write a .gif (animation) or a .png (strip of frames)")
        if not out.parent.is_dir():
            raise ValueError(f"--out {args.out!r}: the folder {str(out.parent)!r} does not exist")
        spec = find_task(args.task)
        env_class = spec.env_class()
        if "rgb_array" not in env_class.metadata["render_modes"]:
            raise ValueError(f"{spec.name} has nothing to see (no rgb_array render mode)")
        env = gym.make(spec.env_id, split=args.split, mode=args.mode, render_mode="rgb_array").unwrapped
        agent = make_agent(args.agent, seed=args.seed)
        keeps_frames = hasattr(env, "record_frames")  # envs that keep a frame after every move
        if keeps_frames:
            env.record_frames = True
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
    frames = env.frames if keeps_frames else frames
    path = save_frames(frames, args.out)
    print(f"saved {len(frames)} frames of {env.task.id} to {path} (reward {reward:.2f})")
    return 0
