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

from toolbench.mock_services.apps.plan import Call, PlanError, Ref, parse_plan
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


def resolve_with_user_values(calls: list[Call], said: Mapping[str, Any], strict: bool = True) -> list[Call]:
    """``plan.resolve``, except that a reference no earlier call answers becomes the user's value
    for it (by argument name, then by the referenced name); if there is none, ``PlanError`` (or,
    not ``strict``, the reference is left unresolved: one released record names such a value)."""
    resolved = []
    for index, call in enumerate(calls):
        args: dict[str, str | Ref] = {}
        for name, value in call.args.items():
            if isinstance(value, Ref):
                source = next((j for j in range(index - 1, -1, -1) if value.name in calls[j].returns), None)
                if source is not None:
                    value = Ref(value.name, source)
                elif name in said or value.name in said:
                    value = str(said.get(name, said.get(value.name)))
                elif not strict:
                    pass
                else:
                    raise PlanError(
                        f"call {index + 1} ({call.api}): #{name}={value.name} names a value no earlier call returns"
                    )
            args[name] = value
        resolved.append(Call(call.app, call.api, call.returns, args, call.line))
    return resolved


def gold_calls(output: Mapping[str, Any]) -> list[Call]:
    """The record's gold plan, parsed and resolved."""
    said = output.get("user_aware_arguments") or {}
    return resolve_with_user_values(parse_plan(gold_plan_text(output)), said, strict=False)
