"""AppBench's own scorer, reproduced exactly, bugs included (``scorer="paper"``), so numbers compare
with the published ones. Our code; the behaviour is that of AppBench's ``get_appbench_analysis``
and its parsers, including what is wrong with them:

- ``match_evaluate`` counts at most one hit per sample (it sets both lists to ``None`` on the first
  hit), so App and API F1 are capped: the gold plans score 100 / 45.15 / 36.61 / 27.47 App F1
  against themselves on SS / SM / MS / MM;
- calls are kept in dicts keyed by API name, so a repeated API keeps only its last call;
- an API name with ``_`` keeps only its second part (``book_stylist_appointment`` -> ``stylist``);
- an argument value matches when either value contains the other (an empty value always does),
  or when it matches what the user said or a value predicted earlier for the same argument;
- a line without ``App:`` gives no app (the fallback that should read it takes one character).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: Place names AppBench's scorer maps before comparing (its own abbreviations and their cities).
PLACE_NAMES = {
    "la": "los angeles",
    "lax": "los angeles",
    "ciudad de mexico": "mexico city'",  # the trailing quote is the original's
    "nyc": "new york",
    "sd": "san diego",
    "sfo": "san francisco",
    "chi-town": "chicago",
}
_APP_LINE = re.compile(r"(\w+):\s*\n*(\[.*\])")
# AppBench's pattern, started only at the beginning of a word: its leftmost match never starts
# inside one, and without the lookbehind a long word costs quadratic time.
_CALL = re.compile(r"(?<!\w)(\w[\w\d_]*)\s*=\s*(\w[\w\d_]*)\(([^)]*)\)")


def plan_lines(text: str) -> tuple[list[str], list[str]]:
    """The apps and call texts of a predicted plan, as AppBench's ``discompose_app_api`` reads them."""
    apps, calls = [], []
    for line in text.split("\n"):
        match = _APP_LINE.match(line)
        app = call = None
        if match:
            app, call = match.group(1), match.group(2).replace("[", "").replace("]", "").strip()
        elif ":" in line:
            if "[" not in line or "]" not in line:
                continue
            app, rest = (part.strip() for part in line.split(":", 1))
            call = rest.replace("[", "").replace("]", "").strip()
        if app:
            apps.append(app)
        if call is not None:
            calls.append(call)
    return apps, calls


def call_parts(call: str) -> tuple[str, dict[str, str]] | None:
    """The API name and ``{#argument: value}`` of one call text, as ``extract_name_params`` reads
    them, or None when it finds no ``returns = api(...)``."""
    match = _CALL.search(call)
    if match is None:
        return None
    name = match.group(2).lower()
    if "_" in name:
        name = name.split("_")[1]
    args: dict[str, str] = {}
    key: str | None = None
    for piece in match.group(3).split(", "):
        if "=" in piece:
            parts = piece.split("=")
            if len(parts) != 2:
                continue  # two "=" in one piece: the original's unpacking fails and skips it
            key, value = parts
            args[_key(key)] = value.strip()
        elif key is not None:
            args[_key(key)] = ""  # a piece without "=": the previous argument is emptied
    return name, args


def _key(key: str) -> str:
    key = key.strip().lower()
    return key if key.startswith("#") else "#" + key


def match_evaluate(preds: list[str], labels: list[str]) -> tuple[int, int]:
    """(exact match, hits) with AppBench's loop: at most one hit."""
    if not preds:
        return 0, 0
    preds, labels = [p.lower() for p in preds], [label.lower() for label in labels]
    exact = int(sorted(preds) == sorted(labels))
    hits = 0
    while preds and labels:
        for pred in preds:  # removing from the list it walks skips the next element, as the original does
            if pred in labels:
                preds, labels = [], []  # list.remove returns None: both lists end
                hits += 1
                break
            preds.remove(pred)
    return exact, hits


def _same(a: str, b: str) -> bool:
    a, b = a.lower().strip("'"), b.lower().strip("'")
    return a == b or a in b or b in a


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 1.0


def _f1(precision: float, recall: float) -> float:
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


@dataclass
class PaperTally:
    """Counts over a test set, added one sample at a time; ``scores()`` gives AppBench's table."""

    samples: int = 0
    counts: dict[str, int] = field(default_factory=dict)

    def _add(self, name: str, amount: int) -> None:
        self.counts[name] = self.counts.get(name, 0) + amount

    def add(self, prediction: str, gold: Mapping[str, Any]) -> bool:
        """Score one predicted plan (text) against an AppBench ``output`` record; True if complete."""
        return self.add_parsed(*plan_lines(prediction), gold)

    def add_parsed(self, pred_apps: list[str], pred_calls: list[str], gold: Mapping[str, Any]) -> bool:
        """Score predicted apps and call texts (AppBench's ``decided_app``/``decided_api``)."""
        self.samples += 1
        pred_apps = [app for app in pred_apps if app]
        self._add("pred_apps", len(pred_apps))
        self._add("gold_apps", len(gold["used_app"]))
        app_em, app_hits = match_evaluate(pred_apps, list(gold["used_app"]))
        self._add("app_hits", app_hits)
        self._add("app_em", app_em)
        parsed = [call_parts(call) for call in pred_calls]
        gold_parsed = [call_parts(call) for call in gold["api_results"]]
        pred_names = [p[0] if p is not None else "" for p in parsed]
        gold_names = [g[0] for g in gold_parsed if g is not None]
        self._add("pred_apis", len(pred_names))
        self._add("gold_apis", len(gold_names))
        api_em, api_hits = match_evaluate(pred_names, gold_names)
        self._add("api_hits", api_hits)
        self._add("api_em", api_em)
        predicted = {p[0]: p[1] for p in (call_parts(c.replace("\\", "")) for c in pred_calls) if p is not None}
        expected = {g[0]: g[1] for g in gold_parsed if g is not None}
        self._add("pred_args", sum(len(args) for args in predicted.values()))
        self._add("gold_args", sum(len(args) for args in expected.values()))
        self._add("pred_dep_args", sum("'" not in v for args in predicted.values() for v in args.values()))
        said = {"#" + k: str(v) for k, v in gold.get("user_aware_arguments", {}).items()}
        earlier: list[tuple[str, str]] = []
        calls_right = 0
        for name, gold_args in expected.items():
            if name not in predicted:
                continue
            hits = dep_hits = deps = 0
            for key, gold_value in gold_args.items():
                dependent = "'" not in gold_value
                deps += dependent
                if key not in predicted[name]:
                    self._add("key_missing", 1)  # the appendix's key errors, and value errors below
                    self._add("dep_key_missing", dependent)
                    continue
                value = predicted[name][key].lower()
                if value.strip("'") in PLACE_NAMES:
                    value = "'" + PLACE_NAMES[value.strip("'")] + "'"
                before = next((v for k, v in earlier if k == key), None)
                if _same(gold_value.lower(), value):
                    earlier.append((key, value))
                elif key in said and _same(said[key].lower(), value):
                    earlier.append((key, value))
                    self._add("pred_dep_args", dependent)
                elif before is not None and _same(before, value):
                    self._add("pred_dep_args", dependent)
                else:
                    self._add("value_missing", 1)
                    self._add("dep_value_missing", dependent)
                    continue
                hits += 1
                dep_hits += dependent
            self._add("arg_hits", hits)
            self._add("dep_arg_hits", dep_hits)
            self._add("gold_dep_args", deps)
            calls_right += hits == len(gold_args)
            self._add("calls_right", hits == len(gold_args))
        complete = bool(app_em and api_em and calls_right == len(expected))
        self._add("complete", complete)
        return complete

    def scores(self) -> dict[str, float]:
        """AppBench's reported metrics over the samples added (F1 in [0, 1])."""
        c = self.counts.get

        def ratio(num: str, den: str, empty: float = 0.0) -> float:
            return c(num, 0) / c(den, 0) if c(den, 0) else empty

        pred_non_dep = c("pred_args", 0) - c("pred_dep_args", 0)
        gold_non_dep = c("gold_args", 0) - c("gold_dep_args", 0)
        non_dep_hits = c("arg_hits", 0) - c("dep_arg_hits", 0)
        per_sample = float(self.samples or 1)
        return {
            # The appendix's exact matches (commented out in AppBench's code, computed as it would).
            "app_exact_match": c("app_em", 0) / per_sample,
            "api_exact_match": c("api_em", 0) / per_sample,
            "argu_exact_match": ratio("calls_right", "pred_apis"),
            "dep_key_missing": ratio("dep_key_missing", "pred_dep_args", 1.0),
            "dep_value_missing": ratio("dep_value_missing", "pred_dep_args", 1.0),
            "non_dep_key_missing": _share(c("key_missing", 0) - c("dep_key_missing", 0), pred_non_dep),
            "non_dep_value_missing": _share(c("value_missing", 0) - c("dep_value_missing", 0), pred_non_dep),
            "app_hit_f1": _f1(ratio("app_hits", "pred_apps"), ratio("app_hits", "gold_apps")),
            "api_hit_f1": _f1(ratio("api_hits", "pred_apis"), ratio("api_hits", "gold_apis")),
            "argu_hit_f1": _f1(ratio("arg_hits", "pred_args"), ratio("arg_hits", "gold_args"))
            if c("pred_args", 0)
            else 0.0,
            "complete_match": c("complete", 0) / self.samples if self.samples else 0.0,
            "depend_argu_hit_f1": _f1(
                ratio("dep_arg_hits", "pred_dep_args", 1.0), ratio("dep_arg_hits", "gold_dep_args", 1.0)
            ),
            # The original tests the dependent counts here, not the ones it divides by (kept; 0 for its crash).
            "non_depend_argu_hit_f1": _f1(
                (non_dep_hits / pred_non_dep if pred_non_dep else 0.0) if c("pred_dep_args", 0) else 1.0,
                (non_dep_hits / gold_non_dep if gold_non_dep else 0.0) if c("gold_dep_args", 0) else 1.0,
            ),
        }
