"""``toolbench serve``: a mock service, or an env over HTTP (``serve env``).

The parser in ``toolbench.cli`` calls the ``cmd_*`` function; heavy modules load inside it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def cmd_serve(args: argparse.Namespace) -> int:
    """``toolbench serve``: a mock service, or with ``env`` an env over HTTP."""
    env_only = {"--task": args.task, "--env-kwargs": args.env_kwargs, "--max-sessions": args.max_sessions,
                "--idle-timeout": args.idle_timeout, "--fresh-idle-timeout": args.fresh_idle_timeout,
                "--snapshot-key": args.snapshot_key,
                "--snapshot-key-file": args.snapshot_key_file, "--token": args.token, "--token-file": args.token_file,
                "--allow-host": args.allow_host, "--allow-origin": args.allow_origin,
                "--max-state-bytes": args.max_state_bytes, "--header-timeout": args.header_timeout,
                "--body-timeout": args.body_timeout}  # fmt: skip
    if args.service == "env":
        if args.task is None:
            print("toolbench serve env: --task is required (say, --task HomeSearch)", file=sys.stderr)
            return 2
        service_only = {"--api-key": args.api_key, "--cache": args.cache}
        given = [flag for flag, value in service_only.items() if value is not None]
        if given:
            print(f"toolbench serve env: {', '.join(given)} apply to the mock services only", file=sys.stderr)
            return 2
        if args.env_kwargs is None:
            args.env_kwargs = "{}"
        from toolbench.env_server.launch import serve_env  # uvicorn and the app load only for this

        return serve_env(args)
    given = [flag for flag, value in env_only.items() if value is not None]
    if given:
        print(f"toolbench serve: {', '.join(given)} apply to 'toolbench serve env' only", file=sys.stderr)
        return 2
    return _serve_service(args)


def _serve_service(args: argparse.Namespace) -> int:
    from toolbench.core.server import make_production_server
    from toolbench.mock_services import create_service_app, service_api_key

    if args.cache is not None:
        if args.service != "rapidapi":
            print("toolbench serve: --cache applies to the rapidapi service only", file=sys.stderr)
            return 2
        if not Path(args.cache).is_dir():
            print(f"toolbench serve: --cache {args.cache!r}: no such folder", file=sys.stderr)
            return 2
        from toolbench.mock_services.rapidapi import virtual

        app = virtual.create_app(cache_dir=args.cache)
    else:
        app = create_service_app(args.service, args.api_key)
    server = make_production_server(
        app,
        args.host,
        args.port,
        threads=args.threads,
        connection_limit=args.connection_limit,
        max_body=args.max_body,
        timeout=args.timeout,
        log_requests=True,
    )
    url = server.url  # the real port, also when --port 0 asked for a free one
    if args.service == "webshop":  # a website: the address of a shopping session for one goal
        print(f"serving webshop; open {url}/fixed_{args.goal} (goal {args.goal}; /fixed_<n> for goal n); Ctrl-C stops")
    elif args.service == "rapidapi":  # StableToolBench's env posts here; its toolbench_key only names a session
        print(f"serving rapidapi (StableToolBench's virtual protocol): POST {url}/virtual; Ctrl-C stops")
    else:
        print(f"serving {args.service} on {url} (API key: {service_api_key(args.service, args.api_key)}); Ctrl-C stops")
    sys.stdout.flush()
    try:
        server.serve_forever()  # waitress returns here on Ctrl-C
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0
