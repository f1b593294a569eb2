"""An episode of a run as the harness records it (one line of ``trajectories.jsonl``), and its key.

Below the harness and everything that reads runs (summaries, trials, the gate, re-scoring)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

AGENT_ERROR_PREFIX = "agent error: "  # an episode's error when the agent, not the env, failed


@dataclass
class EpisodeResult:
    task: str
    task_id: str
    category: str | None
    success: bool
    score: float
    executable: bool
    error: str | None
    metrics: dict[str, float | None]
    steps: int
    actions: list[str] = field(default_factory=list)
    observations: list[str] = field(default_factory=list)
    mode: str = ""
    split: str = ""
    prompt: str = ""
    references: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)  # the final info's other task fields (mismatches, reason)
    agent_log: dict[str, Any] = field(default_factory=dict)  # messages, model calls, usage, settings
    frames: str | None = None  # a PNG strip of the episode's camera frames, relative to the run folder
    template: str | None = None  # the task's template id (its record's ``template``)
    seen_template: bool | None = None  # whether a demo or train task shares that template
    trial: int = 0  # which of the task's trials (``--trials K``: 0 to K-1)
    # "success", "failure" (the agent's doing, a limit included) or "error" (the endpoint, a cache
    # miss, the infrastructure: not the agent's answer, so played again by --retry-errors)
    status: str = ""
    error_kind: str | None = None  # an error's kind: model, timeout, cache_miss, infrastructure
    attempts: int = 1  # times the episode was played: more than one when an error was retried
    seconds: float = field(default=0.0, compare=False)  # wall time: the one field that varies between runs

    def __post_init__(self) -> None:
        if not self.status:  # a line written before episodes had a status
            self.status = "error" if self.agent_failed else ("success" if self.success else "failure")
            if self.status == "error" and self.error_kind is None:
                self.error_kind = "model"

    @property
    def agent_failed(self) -> bool:
        return (self.error or "").startswith(AGENT_ERROR_PREFIX)

    @property
    def errored(self) -> bool:
        """Whether the episode ended as an error (no verdict on the agent's work)."""
        return self.status == "error"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EpisodeResult:
        """An episode from its JSON line; raises TypeError for one that is not in the right shape."""
        if not isinstance(data, Mapping):
            raise TypeError("an episode line must be a JSON object")
        names = cls.__dataclass_fields__
        episode = cls(**{key: value for key, value in data.items() if key in names})
        checks = {
            "task": str, "task_id": str, "success": bool, "score": (int, float), "executable": bool,
            "metrics": dict, "steps": int, "actions": list, "observations": list, "info": dict, "agent_log": dict,
        }  # fmt: skip
        for name, kind in checks.items():
            if not isinstance(getattr(episode, name), kind):
                raise TypeError(f"an episode's {name} has the wrong type")
        if not all(isinstance(v, (int, float)) for v in episode.metrics.values()):
            raise TypeError("an episode's metrics must be numbers")
        return episode


EpisodeKey = tuple[str, str, int]  # (task, task id, trial): what identifies an episode of a run


def episode_key(episode: EpisodeResult) -> EpisodeKey:
    return episode.task, episode.task_id, episode.trial


def error_kinds(episodes: Iterable[EpisodeResult]) -> dict[str, int]:
    """How many of ``episodes`` ended in an error of each kind, by kind's name."""
    kinds = Counter(e.error_kind or "unknown" for e in episodes if e.errored)
    return dict(sorted(kinds.items()))
