"""Snapshots are data, not code: even signed with the server's own key, a snapshot runs nothing, stays within
its bounds, and one the env refuses leaves the session as it was."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import pickle
import zlib

import pytest
import requests

from tests.env_server.conftest import serve
from tests.env_server.test_http import TASK_IDS, post
from toolbench import __version__
from toolbench.env_server import EnvServerConfig
from toolbench.env_server.snapshots import VERSION, SnapshotError, SnapshotSigner
from toolbench.env_server.statecodec import encode_state

KEY = b"k" * 32
FINGERPRINT = EnvServerConfig("toolbench/HomeSearch-v0", {"mode": "interactive"}).fingerprint


class WritesAFile:
    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def sign(body: bytes, key: bytes = KEY, version: bytes = VERSION) -> str:
    mac = hmac.new(key, version + b"|" + FINGERPRINT.encode() + b"|" + body, hashlib.sha256).digest()
    return (version + b"." + base64.urlsafe_b64encode(mac + body)).decode()


@pytest.fixture(scope="module")
def keyed():
    running = serve(snapshot_key=KEY)
    yield running
    running.stop()


def new_session(url: str) -> str:
    return post(url, "/reset", {"task_id": TASK_IDS[0]}).headers["X-Session-Id"]


def state(url: str, session: str) -> requests.Response:
    return requests.get(url + "/state", headers={"X-Session-Id": session}, timeout=30)


def test_a_pickle_signed_with_the_servers_key_is_refused_and_runs_nothing(keyed, tmp_path):
    """A client that learned the key can sign anything: a signed pickle must still run nothing."""
    marker = tmp_path / "pwned"
    session = new_session(keyed.url)
    for snapshot in (
        sign(zlib.compress(pickle.dumps(WritesAFile(str(marker)))), version=b"tb1"),  # the old format
        sign(zlib.compress(pickle.dumps({"env": WritesAFile(str(marker)), "episode_id": None, "step_count": 0}))),
    ):
        reply = post(keyed.url, "/restore", {"snapshot": snapshot}, session)
        assert (reply.status_code, reply.json()["code"]) == (422, "INVALID_SNAPSHOT"), reply.text
    assert not marker.exists()
    assert post(keyed.url, "/step", {"action": "API.set_location('Raleigh')"}, session).status_code == 200


def test_a_signed_decompression_bomb_is_refused_without_inflating_it(keyed):
    session = new_session(keyed.url)
    deflate = zlib.compressobj(9)
    chunk = b"0," * (1024 * 1024)
    bomb = deflate.compress(b"[") + b"".join(deflate.compress(chunk) for _ in range(64)) + deflate.flush(zlib.Z_FINISH)
    assert len(bomb) < 200_000  # 128 MiB of text
    reply = post(keyed.url, "/restore", {"snapshot": sign(bomb)}, session)
    assert (reply.status_code, reply.json()["code"]) == (422, "INVALID_SNAPSHOT")
    assert "over the limit" in reply.json()["detail"]


def test_a_signed_snapshot_the_env_cannot_take_leaves_the_session_as_it_was(keyed):
    session = new_session(keyed.url)
    post(keyed.url, "/step", {"action": "API.set_location('Raleigh')"}, session)
    before = state(keyed.url, session).json()
    odd = {"env": {"task_id": TASK_IDS[1], "steps": "many"}, "episode_id": "e", "step_count": 3}
    reply = post(keyed.url, "/restore", {"snapshot": sign(zlib.compress(encode_state(odd)))}, session)
    assert (reply.status_code, reply.json()["code"]) == (422, "RESTORE_FAILED"), reply.text
    after = state(keyed.url, session).json()
    assert {k: after[k] for k in ("task_id", "step_count", "done")} == {
        k: before[k] for k in ("task_id", "step_count", "done")
    }
    step = post(keyed.url, "/step", {"action": "API.set_buy_or_rent('rent')"}, session)
    assert step.status_code == 200 and step.json()["observation"]["info"]["executable"] is True


def test_a_state_over_its_budget_is_a_413_and_the_session_goes_on():
    from websockets.sync.client import connect

    small = serve(max_state_bytes=200)
    try:
        session = new_session(small.url)
        reply = state(small.url, session)
        assert (reply.status_code, reply.json()["code"]) == (413, "STATE_TOO_LARGE"), reply.text
        assert post(small.url, "/step", {"action": "API.set_location('Raleigh')"}, session).status_code == 200
        with connect(small.url.replace("http://", "ws://") + "/ws") as ws:
            ws.send(json.dumps({"type": "reset", "data": {}}))
            ws.recv(timeout=10)
            ws.send(json.dumps({"type": "state"}))
            assert json.loads(ws.recv(timeout=10)) == {"type": "error", "data": {"code": "STATE_TOO_LARGE",
                "message": "the state's text is over the limit of 200 bytes: the episode's state is too large to "
                "snapshot (--max-state-bytes)"}}  # fmt: skip
    finally:
        small.stop()


def test_the_signer_reads_back_only_its_own_form():
    signer = SnapshotSigner("fp", KEY)
    snapshot = {"env": {"t": (1, 2), "s": frozenset({3})}, "episode_id": None, "step_count": 2}
    assert signer.load(signer.dump(snapshot)) == snapshot
    assert signer.dump(snapshot) == signer.dump(snapshot)
    with pytest.raises(SnapshotError, match="signature"):
        SnapshotSigner("other fp", KEY).load(signer.dump(snapshot))
    with pytest.raises(SnapshotError, match="form"):
        signer.load(signer.dump({"env": 1, "episode_id": 5, "step_count": 0}))


def test_replicas_with_the_same_key_file_restore_each_others_snapshots(tmp_path):
    """How replicas share snapshots: the same --snapshot-key-file (or TOOLBENCH_SNAPSHOT_KEY) on each."""
    from toolbench.env_server.credentials import snapshot_key

    path = tmp_path / "snapshot.key"
    key = snapshot_key(path).value
    assert snapshot_key(path).value == key and len(key) == 32 and (os.stat(path).st_mode & 0o777) == 0o600
    first, second = serve(snapshot_key=key), serve(snapshot_key=snapshot_key(path).value)
    try:
        session = new_session(first.url)
        post(first.url, "/step", {"action": "API.set_location('Raleigh')"}, session)
        snapshot = state(first.url, session).json()["snapshot"]
        other = new_session(second.url)
        reply = post(second.url, "/restore", {"snapshot": snapshot}, other)
        assert reply.status_code == 200 and reply.json()["step_count"] == 1
    finally:
        first.stop()
        second.stop()


def test_a_snapshot_has_one_spelling_only():
    """Base64 with the other alphabet's characters, line breaks, missing padding or stray low bits decodes to
    the same bytes in lax decoders: each is refused, so a snapshot's text is canonical."""
    signer = SnapshotSigner("fp", KEY)
    text = signer.dump({"env": {"x": "y" * 300}, "episode_id": None, "step_count": 0})
    payload = text[4:]
    assert "-" in payload or "_" in payload  # the URL-safe alphabet is in use, so the swaps below change it
    last = payload.rstrip("=")[-1]
    low_bit = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".index(last) ^ 1
    respelled = [
        "tb2." + payload.replace("-", "+").replace("_", "/"),
        "tb2." + payload[:40] + "\n" + payload[40:],
        "tb2." + payload + "\n",
        "tb2." + payload.rstrip("="),
        "tb2."
        + payload.rstrip("=")[:-1]
        + "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[low_bit]
        + payload[len(payload.rstrip("=")) :],
        "tb2." + payload + "====",
        " " + text,
    ]
    assert signer.load(text)["env"] == {"x": "y" * 300}
    for spelling in respelled:
        if spelling == text:
            continue
        with pytest.raises(SnapshotError):
            signer.load(spelling)


def test_the_fingerprint_names_the_toolbench_version_so_another_versions_snapshot_is_refused():
    config = EnvServerConfig("toolbench/HomeSearch-v0", {"mode": "interactive"})
    assert __version__ in config.fingerprint
    snapshot = {"env": {}, "episode_id": None, "step_count": 0}
    other_version = config.fingerprint.replace(__version__, __version__ + ".post1")
    with pytest.raises(SnapshotError, match="signature"):
        SnapshotSigner(config.fingerprint, KEY).load(SnapshotSigner(other_version, KEY).dump(snapshot))
