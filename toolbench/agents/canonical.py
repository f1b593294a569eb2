"""Canonical JSON and its digest: the form a reply cache keys requests on.

The chat client counts identical requests within an episode by this digest, and the reply cache
(``toolbench.agents.reply_cache``) keys its files on it; both import it from here, so neither
imports the other for it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["canonical_digest", "canonical_json"]


def canonical_json(value: Any) -> str:
    """``value`` as canonical JSON: sorted keys, no spaces, non-ASCII characters kept."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def canonical_digest(value: Any) -> str:
    """The SHA-256 (hex) of ``value``'s canonical JSON in UTF-8."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()
