"""AppBench's task records (``test_ss/sm/ms/mm.json``: ``{"input", "output"}``) as plans we can run and score.

The gold plan of a record is ``used_app`` paired with ``api_results``, one call per line. Two kinds
of record need care:

- a few list more calls than apps (``test_mm[10]`` has 7 calls and 5 apps): each call's app is then
  the app that owns its API (for ``findmovies``, owned by two apps, the one the record uses);
- a few refer to a value no earlier call returns because the user stated it
  (``#date=date``): such a reference stands for what the user said (``user_aware_arguments``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolbench.mock_services.apps.plan import Call, parse_plan, resolve
from toolbench.mock_services.apps.registry import owners


def gold_plan_text(output: Mapping[str, Any]) -> str:
    """The record's gold plan in AppBench's line format."""
    apps, calls = list(output.get("used_app") or []), list(output.get("api_results") or [])
    if len(apps) != len(calls):
        named = []
        for call in calls:
            parsed = parse_plan(f"X: [{call}]")[0]
            candidates = owners(parsed.api) or ["?"]
            named.append(next((app for app in candidates if app in apps), candidates[0]))
        apps = named
    return "\n".join(f"{app}: [{call}]" for app, call in zip(apps, calls, strict=True))


def gold_calls(output: Mapping[str, Any]) -> list[Call]:
    """The record's gold plan, parsed and resolved."""
    said = output.get("user_aware_arguments") or {}
    return resolve(parse_plan(gold_plan_text(output)), said, strict=False)
