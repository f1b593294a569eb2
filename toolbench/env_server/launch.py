"""``toolbench serve env``'s run: arguments to a configuration, the start banner with the server's exposure."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import Any

from toolbench.catalog import find_task
from toolbench.env_server.access import AccessPolicy, default_hosts
from toolbench.env_server.credentials import SNAPSHOT_KEY_ENV, TOKEN_ENV, server_token, snapshot_key

#: argv options that once carried secrets (or would prefix-match the file options that replace them):
#: each is refused, naming its replacement, without echoing the value.
SECRET_ON_ARGV = {
    "snapshot_key": "--snapshot-key is not accepted: a command line is readable by every local user; give the key "
    f"in a file (--snapshot-key-file PATH) or the {SNAPSHOT_KEY_ENV} environment variable",
    "token": f"--token is not taken on the command line, which every local user can read; give it in a file "
    f"(--token-file PATH) or the {TOKEN_ENV} environment variable",
}


def exposure_lines(exposure: dict[str, Any]) -> list[str]:
    """The exposure as the banner and ``toolbench doctor`` print it."""
    where = "loopback only" if exposure["loopback_only"] else "REACHABLE FROM OTHER MACHINES"
    hosts = exposure["allowed_hosts"]
    origins = exposure["allowed_origins"]
    return [
        f"  bound to {exposure['bound']} ({where})",
        f"  token: {'required, from ' + str(exposure['token_source']) if exposure['token_required'] else 'none'}",
        f"  Host header: {'any' if hosts == 'any' else ', '.join(hosts)} (any port)",
        f"  Origin header: {', '.join(origins) if origins else 'none allowed: requests from web pages are refused'}",
        f"  request bodies: {exposure['request_bodies']}",
        *([f"  snapshot key: {exposure['snapshot_key']}"] if "snapshot_key" in exposure else []),
    ]


def default_exposure() -> dict[str, Any]:
    """What ``toolbench serve env`` lets in with no flags (and no token in the environment)."""
    policy = AccessPolicy()
    return {
        **policy.exposure(),
        "snapshot_key": "random per process",
        "token_policy": f"optional on loopback (--token-file PATH or {TOKEN_ENV}); required to bind any other address",
        "default_hosts_for_other_addresses": "the bound address itself (none for 0.0.0.0 or ::) and "
        + ", ".join(default_hosts("0.0.0.0"))
        + ", plus --allow-host",
    }


def serve_env(args: argparse.Namespace) -> int:
    """``toolbench serve env --task T``: the env behind OpenEnv's protocol on uvicorn."""
    import gymnasium as gym

    from toolbench.env_server import EnvServerConfig, RunningEnvServer, bound_config, create_env_app

    def fail(message: object) -> int:
        print(f"toolbench serve env: {message}", file=sys.stderr)
        return 2

    for dest, message in SECRET_ON_ARGV.items():
        if getattr(args, dest, None) is not None:
            return fail(message)
    explicit = getattr(args, "explicit", set())
    if "threads" in explicit:
        print("toolbench serve env: --threads no longer applies here and is ignored: each session runs its env "
              "calls on a thread of its own (--max-sessions bounds them)", file=sys.stderr)  # fmt: skip
    try:
        spec = find_task(args.task)
        env_kwargs = json.loads(args.env_kwargs)
        if not isinstance(env_kwargs, dict):
            raise ValueError("--env-kwargs must be a JSON object of gym.make arguments")
        key = snapshot_key(args.snapshot_key_file)
        token = server_token(args.token_file)
        access = AccessPolicy(
            bound=args.host,
            extra_hosts=tuple(args.allow_host or ()),
            allowed_origins=tuple(args.allow_origin or ()),
            token=token.value if token else None,
            token_source=token.source if token else None,
        )
        bounds = {"max_sessions": args.max_sessions, "idle_timeout": args.idle_timeout,
                  "fresh_idle_timeout": args.fresh_idle_timeout,
                  "max_state_bytes": args.max_state_bytes, "header_timeout": args.header_timeout,
                  "body_timeout": args.body_timeout}  # fmt: skip
        config = EnvServerConfig(
            env_id=spec.env_id,
            env_kwargs=env_kwargs,
            max_body=args.max_body,
            snapshot_key=key.value,
            snapshot_key_source=key.source,
            access=access,
            connection_idle=float(args.timeout),
            max_connections=args.connection_limit if "connection_limit" in explicit else None,
            **{name: value for name, value in bounds.items() if value is not None},
        )
        config = bound_config(config, args.host)
        probe = gym.make(spec.env_id, **env_kwargs)  # a bad argument fails here, before serving
    except (KeyError, ValueError, TypeError) as exc:  # JSONDecodeError, CredentialError, ExposureRefused too
        return fail(exc.args[0] if isinstance(exc, KeyError) and exc.args else exc)
    server = RunningEnvServer(config, args.host, args.port, log=not args.no_access_log,
                              app=create_env_app(config, probe))  # fmt: skip
    print(
        f"serving {spec.env_id} (OpenEnv protocol: POST /reset, POST /step, GET /state, WebSocket /ws) "
        f"on {server.url}; Ctrl-C stops"
    )
    print("exposure:")
    for line in exposure_lines(server.exposure()):
        print(line)
    print(f"  connections: at most {server.max_connections}; sessions: at most {config.max_sessions}")
    sys.stdout.flush()
    # uvicorn shuts down on Ctrl-C or SIGTERM (every session's env closed), then raises the signal again
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0
