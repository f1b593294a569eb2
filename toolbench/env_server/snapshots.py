"""Env snapshots a client can hold: ``get_state()`` pickled, compressed and signed by the server.

``get_state()`` returns arbitrary picklable Python (a task's backend state), which JSON cannot
carry faithfully, and unpickling what a client sends would run the client's code. So the server
signs what it pickled with an HMAC-SHA256 key that never leaves it and unpickles only what carries
its own signature: a snapshot taken from this server restores exactly, into the same session or
another one of the same env (tree search branches across sessions), and anything else (edited,
truncated, from another server or another env's configuration) is refused before it is unpickled.

The key is random per server process unless the operator gives one (``--snapshot-key``), so that
several replicas behind a load balancer accept each other's snapshots.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import pickle
import secrets
import zlib
from typing import Any

VERSION = b"tb1"


class SnapshotError(ValueError):
    """A snapshot this server cannot restore (not signed by it, or for another env)."""


class SnapshotSigner:
    """Turns state into signed text and back, for one env configuration (``fingerprint``)."""

    def __init__(self, fingerprint: str, key: bytes | None = None):
        self._key = key if key is not None else secrets.token_bytes(32)
        self._fingerprint = fingerprint.encode()

    def _mac(self, body: bytes) -> bytes:
        return hmac.new(self._key, VERSION + self._fingerprint + body, hashlib.sha256).digest()

    def dump(self, state: Any) -> str:
        body = zlib.compress(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL), 1)
        return (VERSION + b"." + base64.urlsafe_b64encode(self._mac(body) + body)).decode("ascii")

    def load(self, text: Any) -> Any:
        if not isinstance(text, str):
            raise SnapshotError(f"a snapshot is a string, not {type(text).__name__}")
        version, _, payload = text.encode("ascii", "replace").partition(b".")
        if version != VERSION:
            raise SnapshotError("not a snapshot of this server (unknown format)")
        try:
            raw = base64.urlsafe_b64decode(payload)
        except (binascii.Error, ValueError):
            raise SnapshotError("the snapshot is not valid base64") from None
        mac, body = raw[:32], raw[32:]
        if len(mac) < 32 or not hmac.compare_digest(mac, self._mac(body)):
            raise SnapshotError("the snapshot was not taken from this server's env (signature mismatch)")
        return pickle.loads(zlib.decompress(body))  # signed by us: our own pickle
