"""A cache of model replies: record a run once, then replay it without the endpoint.

``ReplyCache(directory, mode)`` is given to a ``ChatClient`` (``make_agent(..., cache=...)``):

- ``record``: a stored reply is used; a missing one is requested from the endpoint and stored.
- ``replay``: nothing is sent. A missing reply raises ``CacheMiss`` (kind ``cache_miss``): that
  episode ends as an error and the run goes on; the breaker does not count it.
- ``refresh``: every request is sent, and its reply stored over the old one.

The key is the SHA-256 of the canonical JSON (sorted keys, no spaces, UTF-8) of everything that
decides the reply: the format version, the endpoint (lower-case scheme and host, no trailing
slash), the model, the whole request body (messages, tools, the length limit, temperature, stop
and whatever else is sent), the trial, and the occurrence: how many identical requests were
answered before in the same episode, so an agent that asks the very same thing twice gets its two
recorded replies in order. Never the API key. Another model or another endpoint is another key: one
model's replies are never served as another's. The length limit is keyed as ``max_tokens`` even
when the endpoint wanted ``max_completion_tokens`` (``ChatClient.request``); the file says which
name was sent (``sent_length_parameter``).

One readable JSON file per request, ``DIR/v1/<model>/<key[:2]>/<key>.json``, written atomically::

    {"format": 1, "key": ..., "endpoint": ..., "model": ..., "trial": 0, "occurrence": 0,
     "request": {...}, "response": <the completion as the endpoint sent it>, "latency_s": 1.234}

A replayed reply is the recorded ``Completion``: content, tool calls, usage, finish reason, raw
body and the recorded latency, so a replayed run's trajectories equal the recorded run's (a run
folder keeps wall times apart, in ``timings.jsonl``). An episode's ``timeout_s`` counts wall time,
which a replay hardly spends: a replayed episode may go on where the recorded one ran out of time,
and then misses.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from toolbench.agents.canonical import canonical_digest, canonical_json
from toolbench.agents.client import AgentError, Completion, completion_of

FORMAT = 1
MODES = ("record", "replay", "refresh")

__all__ = ["FORMAT", "MODES", "CacheMiss", "ReplyCache", "canonical_digest", "canonical_json", "normalise_endpoint"]


class CacheMiss(AgentError):
    """A replaying cache has no usable reply for a request: the episode ends as an error of kind
    ``cache_miss`` (the run goes on; nothing was sent)."""

    kind = "cache_miss"


def normalise_endpoint(url: str) -> str:
    """An endpoint's base URL as keyed: scheme and host in lower case, no trailing slash."""
    parts = urlsplit(url.strip())
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/"), parts.query, ""))


def safe_name(model: str) -> str:
    """``model`` as one folder name (``org/model:tag`` -> ``org_model_tag``)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip(".")[:100]
    return name or "_"


def _last_message(request: dict[str, Any]) -> str:
    messages = request.get("messages") or [{}]
    last = messages[-1]
    content = last.get("content") if isinstance(last, dict) else last
    return content if isinstance(content, str) and content else canonical_json(last)


@dataclass(frozen=True)
class ReplyCache:
    """Model replies kept in ``directory``; ``mode`` is record, replay or refresh (module docstring).
    Frozen and picklable, so a run's worker processes can each be given one."""

    directory: Path
    mode: str = "record"

    def __init__(self, directory: str | Path, mode: str = "record") -> None:
        if mode not in MODES:
            raise ValueError(f"reply cache mode must be one of {', '.join(MODES)}, not {mode!r}")
        object.__setattr__(self, "directory", Path(directory))
        object.__setattr__(self, "mode", mode)
        if mode == "replay" and not self.directory.is_dir():
            raise ValueError(f"reply cache {self.directory}: no such folder, so there is nothing to replay")

    def key(self, endpoint: str, model: str, request: dict[str, Any], trial: int, occurrence: int) -> str:
        """The request's key (hex SHA-256); see the module docstring for what goes in."""
        return canonical_digest(
            {
                "format": FORMAT,
                "endpoint": normalise_endpoint(endpoint),
                "model": model,
                "request": request,
                "trial": trial,
                "occurrence": occurrence,
            }
        )

    def path(self, model: str, key: str) -> Path:
        """Where the reply of ``key`` is kept."""
        return self.directory / f"v{FORMAT}" / safe_name(model) / key[:2] / f"{key}.json"

    def get(self, endpoint: str, model: str, request: dict[str, Any], trial: int, occurrence: int) -> Completion | None:
        """The stored reply, or ``None`` to request it: always under refresh, and under record when
        there is none or its file is unusable (the new reply overwrites it). Replay raises
        ``CacheMiss`` instead of returning ``None``."""
        if self.mode == "refresh":
            return None
        key = self.key(endpoint, model, request, trial, occurrence)
        path = self.path(model, key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            if self.mode == "replay":
                raise CacheMiss(
                    f"replay: no recorded reply for model {model!r} at {normalise_endpoint(endpoint)} "
                    f"(trial {trial}, occurrence {occurrence}, key {key}) in {self.directory}; "
                    f"the last message: {_last_message(request)[:200]!r}"
                ) from None
            return None
        except (OSError, UnicodeDecodeError) as exc:
            return self._unusable(path, f"{type(exc).__name__}: {exc}")
        try:
            entry = json.loads(text)
            if not isinstance(entry, dict) or entry.get("format") != FORMAT:
                found = entry.get("format") if isinstance(entry, dict) else type(entry).__name__
                return self._unusable(path, f"format {found!r}, not {FORMAT}")
            if entry.get("key") != key:
                return self._unusable(path, f"it holds key {str(entry.get('key'))[:64]!r}")
            latency = entry["latency_s"]
            if not isinstance(entry["response"], dict) or not isinstance(latency, (int, float)):
                return self._unusable(path, "no completion body or latency")
            return completion_of(entry["response"], latency)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            return self._unusable(path, f"{type(exc).__name__}: {str(exc)[:200]}")

    def _unusable(self, path: Path, reason: str) -> None:
        if self.mode == "replay":
            raise CacheMiss(f"replay: the reply cache file {path} is unusable ({reason})")
        return None

    def put(
        self,
        endpoint: str,
        model: str,
        request: dict[str, Any],
        trial: int,
        occurrence: int,
        completion: Completion,
        sent_length_parameter: str | None = None,
    ) -> Path:
        """Stores ``completion`` as the reply to the request (atomically: a reader sees the old file
        or the new one, and parallel workers may write the same entry); returns its path."""
        if self.mode == "replay":
            raise RuntimeError("a replaying reply cache stores nothing")
        key = self.key(endpoint, model, request, trial, occurrence)
        entry: dict[str, Any] = {
            "format": FORMAT,
            "key": key,
            "endpoint": normalise_endpoint(endpoint),
            "model": model,
            "trial": trial,
            "occurrence": occurrence,
            "request": request,
            "response": completion.raw,
            "latency_s": completion.latency_s,
        }
        if sent_length_parameter not in (None, "max_tokens"):
            entry["sent_length_parameter"] = sent_length_parameter
        path = self.path(model, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{key[:16]}.", suffix=".tmp")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump(entry, file, ensure_ascii=False, indent=1)
                file.write("\n")
            os.chmod(temporary, 0o644)  # mkstemp makes it private; a cache is meant to be read and shared
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return path
