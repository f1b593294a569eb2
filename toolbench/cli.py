"""The ``toolbench`` command: ``list``, ``eval`` and ``serve``."""

from __future__ import annotations

import argparse
import json
import sys

from toolbench.catalog import TASKS
from toolbench.mock_services import SERVICES, create_service_app, service_api_key


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
    from toolbench.eval.harness import evaluate, format_table, supports, write_outputs

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
    evaluation.add_argument("--limit", type=int, default=None, help="at most N tasks per env")
    evaluation.add_argument("--workers", type=int, default=1, help="worker processes")
    evaluation.add_argument("--seed", type=int, default=0, help="seed of the random agent")
    evaluation.add_argument("--out", default=None, help="directory for trajectories.jsonl and the summary")
    evaluation.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    evaluation.set_defaults(run=cmd_eval)

    serve = commands.add_parser("serve", help="serve a mock service over HTTP on this machine")
    serve.add_argument("service", choices=sorted(SERVICES))
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--api-key", default=None, help="the key the service accepts (default: its demo key)")
    serve.set_defaults(run=cmd_serve)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    raise SystemExit(main())
