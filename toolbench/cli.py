"""The ``toolbench`` command: ``list``, ``eval`` and ``serve``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from toolbench.catalog import TASKS
from toolbench.mock_services import SERVICES, create_service_app, service_api_key


def _int_in(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer within [low, high]."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < low or (high is not None and value > high):
            bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"must be {bounds}, got {value}")
        return value

    return parse


def _non_empty(text: str) -> str:
    if not text:
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def cmd_list(args: argparse.Namespace) -> int:
    rows = [("id", "modes", "splits")]
    for spec in TASKS:
        env_class = spec.env_class()
        splits = ", ".join(f"{split} ({len(env_class.load_split(split))})" for split in env_class.splits)
        rows.append((spec.env_id, ", ".join(env_class.modes), splits))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from toolbench.eval.harness import AGENT_ERROR_PREFIX, evaluate, format_table, supports, write_outputs

    if args.task == "all":
        tasks = [spec.name for spec in TASKS if supports(spec, args.split, args.mode)]
        if not tasks:
            print(f"toolbench eval: no task has split {args.split!r} and mode {args.mode!r}", file=sys.stderr)
            return 2
    else:
        tasks = [args.task]
    try:
        report, episodes = evaluate(
            args.agent,
            tasks,
            split=args.split,
            mode=args.mode,
            limit=args.limit,
            workers=args.workers,
            seed=args.seed,
            progress=not args.json and sys.stderr.isatty(),
        )
    except (KeyError, ValueError) as exc:
        print(f"toolbench eval: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    if args.out:
        write_outputs(args.out, report, episodes)
    print(json.dumps(report) if args.json else format_table(report))
    failed = [e for e in episodes if (e.error or "").startswith(AGENT_ERROR_PREFIX)]
    if failed:
        print(
            f"toolbench eval: {len(failed)} of {len(episodes)} episodes ended with the agent failing "
            f"(first: {failed[0].error[:300]}); they are scored 0",
            file=sys.stderr,
        )
    return 1 if episodes and len(failed) == len(episodes) else 0


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


def cmd_serve(args: argparse.Namespace) -> int:
    from toolbench.core.transport import make_loopback_server

    app = create_service_app(args.service, args.api_key)
    server = make_loopback_server(app, args.host, args.port, log_requests=True)
    print(
        f"serving {args.service} on http://{args.host}:{server.server_port} "
        f"(API key: {service_api_key(args.service, args.api_key)}); Ctrl-C stops",
        flush=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolbench", description="Offline Gymnasium environments for tool-using agents."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("list", help="every env id with its modes, splits and task counts").set_defaults(run=cmd_list)

    evaluation = commands.add_parser("eval", help="score an agent on a task (or all tasks)")
    evaluation.add_argument("--agent", required=True, help="oracle, random or openai:MODEL")
    evaluation.add_argument("--task", default="all", help="a task name (e.g. OpenWeather) or 'all'")
    evaluation.add_argument("--split", default="test")
    evaluation.add_argument("--mode", default=None, help="program or interactive (default: each task's first mode)")
    evaluation.add_argument("--limit", type=_int_in(1), default=None, help="at most N tasks per env")
    evaluation.add_argument("--workers", type=_int_in(1), default=1, help="worker processes")
    evaluation.add_argument("--seed", type=int, default=0, help="seed of the random agent")
    evaluation.add_argument("--out", default=None, help="directory for trajectories.jsonl and the summary")
    evaluation.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    evaluation.set_defaults(run=cmd_eval)

    record = commands.add_parser("record", help="play one episode and save its camera frames (GIF or PNG strip)")
    record.add_argument("--task", default="Tabletop")
    record.add_argument("--task-id", default=None)
    record.add_argument("--agent", default="oracle")
    record.add_argument("--split", default="test")
    record.add_argument("--mode", default=None)
    record.add_argument("--seed", type=int, default=0)
    record.add_argument("--out", default="episode.gif", help="a .gif (animation) or .png (strip) path")
    record.set_defaults(run=cmd_record)

    serve = commands.add_parser("serve", help="serve a mock service over HTTP on this machine")
    serve.add_argument("service", choices=sorted(SERVICES))
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=_int_in(0, 65535), default=8000, help="0 picks a free port")
    serve.add_argument(
        "--api-key", type=_non_empty, default=None, help="the key the service accepts (default: its demo key)"
    )
    serve.set_defaults(run=cmd_serve)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    raise SystemExit(main())
