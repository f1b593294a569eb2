"""Our AppBench scorer: what the paper defines, counted right.

- ``f1_app`` / ``f1_api``: per-item multiset matching (each predicted app or API name matches at most
  one gold one of the same name: ``min`` of the two counts), precision over the predicted items,
  recall over the gold ones; repeated calls all count.
- ``succ``: the predicted plan is the gold plan as an execution graph. There must be a one-to-one
  pairing of predicted and gold calls with the same app, API and argument names, where each argument
  is the same literal (case and surrounding spaces aside), or a reference to the same returned value
  of the paired call, or a literal where the gold plan refers to a value the user stated, equal to
  what the user said. Independent calls may come in any order; only the dependencies must agree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from toolbench.mock_services.apps.plan import Call, Ref


def multiset_hits(predicted: Sequence[str], gold: Sequence[str]) -> int:
    """How many predicted items match a gold one, each gold item matched at most once."""
    unmatched: dict[str, int] = {}
    for name in gold:
        key = name.lower()
        unmatched[key] = unmatched.get(key, 0) + 1
    hits = 0
    for name in predicted:
        key = name.lower()
        if unmatched.get(key, 0) > 0:
            unmatched[key] -= 1
            hits += 1
    return hits


def f1(hits: int, predicted: int, gold: int) -> float:
    precision = hits / predicted if predicted else 0.0
    recall = hits / gold if gold else 0.0
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def _literal(value: str) -> str:
    return " ".join(value.split()).lower()


def _argument_matches(
    mine: str | Ref, theirs: str | Ref, name: str, pairing: Mapping[int, int], said: Mapping[str, str]
) -> bool:
    if isinstance(theirs, Ref):
        if isinstance(mine, Ref):
            source = -1 if mine.source is None else mine.source
            return mine.name == theirs.name and pairing.get(source) == theirs.source
        stated = said.get(name) if name in said else said.get(theirs.name)
        return stated is not None and _literal(mine) == _literal(str(stated))
    # The same text is the same literal (most calls): fold only when they differ.
    return not isinstance(mine, Ref) and (mine == theirs or _literal(mine) == _literal(theirs))


def _call_matches(mine: Call, theirs: Call, pairing: Mapping[int, int], said: Mapping[str, str]) -> bool:
    if mine.api != theirs.api or mine.app != theirs.app or mine.args.keys() != theirs.args.keys():
        return False
    return all(_argument_matches(mine.args[k], theirs.args[k], k, pairing, said) for k in theirs.args)


def same_graph(predicted: Sequence[Call], gold: Sequence[Call], said: Mapping[str, str]) -> bool:
    """Whether the resolved predicted calls pair one-to-one with the resolved gold calls (see module doc)."""
    if len(predicted) != len(gold):
        return False

    def extend(index: int, pairing: dict[int, int], used: set[int]) -> bool:
        if index == len(predicted):
            return True
        for j, theirs in enumerate(gold):
            if j in used or not _call_matches(predicted[index], theirs, pairing, said):
                continue
            pairing[index] = j
            used.add(j)
            if extend(index + 1, pairing, used):
                return True
            del pairing[index]
            used.discard(j)
        return False

    return extend(0, {}, set())


@dataclass(frozen=True)
class PlanScore:
    app_hits: int
    app_predicted: int
    app_gold: int
    api_hits: int
    api_predicted: int
    api_gold: int
    succ: bool

    @property
    def f1_app(self) -> float:
        return f1(self.app_hits, self.app_predicted, self.app_gold)

    @property
    def f1_api(self) -> float:
        return f1(self.api_hits, self.api_predicted, self.api_gold)


def score_plan(predicted: Sequence[Call], gold: Sequence[Call], said: Mapping[str, str]) -> PlanScore:
    """Our scores of resolved predicted calls against resolved gold calls; ``said``: what the user stated."""
    apps, gold_apps = [c.app for c in predicted], [c.app for c in gold]
    names, gold_names = [c.api for c in predicted], [c.api for c in gold]
    return PlanScore(
        app_hits=multiset_hits(apps, gold_apps),
        app_predicted=len(apps),
        app_gold=len(gold_apps),
        api_hits=multiset_hits(names, gold_names),
        api_predicted=len(names),
        api_gold=len(gold_names),
        succ=same_graph(predicted, gold, said),
    )
