"""Env snapshots a client can hold: ``get_state()`` as data (``statecodec``), compressed and signed by the server.

A snapshot is text: ``tb2.`` and the URL-safe base64 of an HMAC-SHA256 (32 bytes) followed by the
zlib-compressed tagged JSON of ``{"env": get_state(), "episode_id": ..., "step_count": ...}``.

Nothing in it is code: the codec reads back only data (lists, dicts, tuples, sets, numbers, text), so
even a snapshot made with a leaked key restores a state and runs nothing. The signature is for
integrity: a client must not forge an episode's state (a finished task, another task's progress), so
the server restores only what it signed with its key, for this env configuration and toolbench version
(the fingerprint), and checks the signature before it decompresses or parses anything. A snapshot has one
spelling: text that decodes to the same bytes by a lax base64 reading is refused. Decompression stops past the
decoded-size limit; parsing refuses text nested deeper than the codec's limit.

The key is random per server process unless the operator gives one (``--snapshot-key-file`` or
``TOOLBENCH_SNAPSHOT_KEY``, see ``credentials``), so that replicas behind a load balancer accept each
other's snapshots.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import zlib
from typing import Any

from toolbench.env_server.statecodec import (
    DEFAULT_MAX_STATE_BYTES,
    StateCodecError,
    StateTooLarge,
    decode_state,
    encode_state,
)

VERSION = b"tb2"
MAC_BYTES = 32


class SnapshotError(ValueError):
    """A snapshot this server cannot restore (not signed by it, for another env, or not of its form)."""


_URLSAFE_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def _canonical_base64(payload: bytes) -> bytes:
    """The bytes of ``payload`` if it is exactly what ``urlsafe_b64encode`` writes for them: lax decoding
    would also take the other alphabet's ``+/``, line breaks, missing padding and stray low bits, so one
    snapshot would have many spellings."""
    unpadded = payload.rstrip(b"=")
    if len(payload) % 4 or len(payload) - len(unpadded) > 2 or unpadded.translate(None, _URLSAFE_ALPHABET):
        raise SnapshotError("the snapshot is not in its canonical form (URL-safe base64, padded, one line)")
    try:
        raw = base64.urlsafe_b64decode(payload)
    except (binascii.Error, ValueError):
        raise SnapshotError("the snapshot is not valid base64") from None
    if base64.urlsafe_b64encode(raw) != payload:
        raise SnapshotError("the snapshot is not in its canonical form (URL-safe base64, padded, one line)")
    return raw


class SnapshotSigner:
    """Turns state into signed text and back, for one env configuration (``fingerprint``)."""

    def __init__(self, fingerprint: str, key: bytes | None = None, max_state_bytes: int = DEFAULT_MAX_STATE_BYTES):
        self._key = key if key is not None else secrets.token_bytes(32)
        self._fingerprint = fingerprint.encode()
        self.max_state_bytes = max_state_bytes

    def _mac(self, body: bytes) -> bytes:
        return hmac.new(self._key, VERSION + b"|" + self._fingerprint + b"|" + body, hashlib.sha256).digest()

    def dump(self, snapshot: dict[str, Any]) -> str:
        """The signed text; ``StateTooLarge`` when the state's text is over ``max_state_bytes``."""
        body = zlib.compress(encode_state(snapshot, self.max_state_bytes), 1)  # zlib lets other threads run
        return (VERSION + b"." + base64.urlsafe_b64encode(self._mac(body) + body)).decode("ascii")

    def load(self, text: Any) -> dict[str, Any]:
        """The snapshot ``dump`` signed, checked before anything of it is decompressed or parsed."""
        if not isinstance(text, str):
            raise SnapshotError(f"a snapshot is a string, not {type(text).__name__}")
        version, _, payload = text.encode("ascii", "replace").partition(b".")
        if version != VERSION:
            old = " (tb1 snapshots held pickles and are no longer read)" if version == b"tb1" else ""
            raise SnapshotError(f"not a snapshot of this server (unknown format){old}")
        raw = _canonical_base64(payload)
        mac, body = raw[:MAC_BYTES], raw[MAC_BYTES:]
        if len(mac) < MAC_BYTES or not hmac.compare_digest(mac, self._mac(body)):
            raise SnapshotError("the snapshot was not taken from this server's env (signature mismatch)")
        inflate = zlib.decompressobj()
        try:
            text_bytes = inflate.decompress(body, self.max_state_bytes + 1)
        except zlib.error as exc:
            raise SnapshotError(f"the snapshot does not decompress: {exc}") from None
        if len(text_bytes) > self.max_state_bytes or inflate.unconsumed_tail:
            raise SnapshotError(f"the snapshot's state is over the limit of {self.max_state_bytes} bytes")
        try:
            snapshot = decode_state(text_bytes, self.max_state_bytes)
        except StateCodecError as exc:
            raise SnapshotError(f"the snapshot's state does not read back: {exc}") from None
        if (
            type(snapshot) is not dict
            or set(snapshot) != {"env", "episode_id", "step_count"}
            or not (snapshot["episode_id"] is None or type(snapshot["episode_id"]) is str)
            or type(snapshot["step_count"]) is not int
            or snapshot["step_count"] < 0
        ):
            raise SnapshotError("the snapshot is not of the form this server writes")
        return snapshot


__all__ = ["SnapshotError", "SnapshotSigner", "StateTooLarge"]
