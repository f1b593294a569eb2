"""``toolbench doctor``: the sandbox's kernel layers on this machine, or a running env server's
exposure (``--url``).

The parser in ``toolbench.cli`` calls the ``cmd_*`` function; heavy modules load inside it.
"""

from __future__ import annotations

import argparse
import json
import sys


def _doctor_server(args: argparse.Namespace) -> int:
    """``toolbench doctor --url URL``: a running env server's exposure, reported and probed."""
    from toolbench.env_server.launch import exposure_lines
    from toolbench.env_server.probe import ProbeError, probe_server
    from toolbench.remote import client_token

    try:
        # As RemoteEnv: a --token-file token goes to the URL given, TOOLBENCH_TOKEN to a loopback one only
        token, _ = client_token(args.url, token_file=args.token_file)
        report = probe_server(args.url, token)
    except (OSError, ValueError, ProbeError) as exc:
        print(f"toolbench doctor: {args.url}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report))
        return 0 if report["ok"] else 1
    print(f"The env server at {report['url']}:")
    if report["exposure"]:
        print("\n".join(exposure_lines(report["exposure"])))
    else:
        print("  /health gave no exposure report (not a toolbench env server, or an older one)")
    print("Probes (what a web page or another local user could send):")
    width = max(len(probe["name"]) for probe in report["probes"])
    for probe in report["probes"]:
        mark = "ok  " if probe["ok"] else "FAIL"
        print(f"  {mark} {probe['name'].ljust(width)}  {probe['got']} (expected {probe['expected']})")
    for warning in report["warnings"]:  # allowed on loopback, so not a failure, but said plainly
        print(f"WARN {warning}")
    return 0 if report["ok"] else 1


def cmd_doctor(args: argparse.Namespace) -> int:
    """Which of the sandbox's kernel layers this machine has, and which a run actually gets; with
    ``--url``, a running env server's exposure instead."""
    if args.url is not None:
        return _doctor_server(args)
    from toolbench.core import kernel, sandbox
    from toolbench.env_server.launch import default_exposure, exposure_lines

    report = kernel.detect()
    probe = sandbox.run_in_worker(
        "x = 1",
        "toolbench.core.sandbox:no_names",
        "toolbench.core.sandbox:layers_applied",
        serve=lambda kind, payload: None,
        limits=sandbox.Limits(seconds=60),
    )
    applied = probe.payload if probe.ok and isinstance(probe.payload, list) else []
    serving = default_exposure()
    if args.json:
        print(json.dumps({"layers": report, "applied_in_a_run": applied, "serve_env_defaults": serving}))
        return 0
    width = max(len(name) for name in report)
    print("Kernel layers for agent code (Google Sheets, Tabletop):")
    for name, state in report.items():
        print(f"  {name.ljust(width)}  {state}")
    print(f"A run here gets: {', '.join(applied) if applied else 'none (' + str(probe.error) + ')'}")
    print("toolbench serve env, by default:")
    print("\n".join(exposure_lines(serving)))
    print(f"  token policy: {serving['token_policy']}")
    print(f"  Host names when bound elsewhere: {serving['default_hosts_for_other_addresses']}")
    print("  (toolbench doctor --url URL reports and probes a running server)")
    return 0
