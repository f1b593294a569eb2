"""Text that is not Unicode (a lone surrogate) or holds NULs, in any string of any request: a 4xx or an answer,
never a 5xx, a dropped WebSocket, or a session whose later answers cannot be encoded."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from toolbench.env_server.protocol import json_bytes, json_text

ws_client = pytest.importorskip("websockets.sync.client")

HOSTILE_TEXT = ("\ud800", "x\udfffy", "\udc00\ud800", "\x00", "a\x00b")
JSON = {"Content-Type": "application/json"}


def variants(value: Any) -> Iterator[Any]:
    """``value`` with each of its strings (keys too), one at a time, replaced by each hostile text."""
    if isinstance(value, str):
        yield from HOSTILE_TEXT
    elif isinstance(value, dict):
        for key, item in value.items():
            for bad in HOSTILE_TEXT:
                yield {**{k: v for k, v in value.items() if k != key}, bad: item}
            for changed in variants(item):
                yield {**value, key: changed}
    elif isinstance(value, list):
        for index, item in enumerate(value):
            for changed in variants(item):
                yield [*value[:index], changed, *value[index + 1 :]]


def requests_to_fuzz(task_id: str, snapshot: str) -> list[tuple[str, str, Any]]:
    return [
        ("POST", "/reset", {"seed": 0, "task_id": task_id, "episode_id": "e", "options": {"task_id": task_id}}),
        ("POST", "/step", {"action": "API.set_location('Raleigh')", "timeout_s": "1", "request_id": "r"}),
        ("POST", "/step", {"action": {"text": "API.set_location('Raleigh')", "metadata": {"k": ["v", {"w": "x"}]}}}),
        ("POST", "/restore", {"snapshot": snapshot}),
    ]


def test_no_string_of_any_http_request_makes_a_5xx_or_breaks_the_session(server):
    started = requests.post(server.url + "/reset", json={"seed": 0}, timeout=10)
    session = {"X-Session-Id": started.headers["X-Session-Id"], **JSON}
    task_id = started.json()["observation"]["info"]["task_id"]
    snapshot = requests.get(server.url + "/state", headers=session, timeout=10).json()["snapshot"]
    sent = 0
    for method, path, template in requests_to_fuzz(task_id, snapshot):
        for body in variants(template):
            data = json.dumps(body).encode()  # lone surrogates travel as \ud800 escapes, as JSON allows
            reply = requests.request(method, server.url + path, data=data, headers=session, timeout=10)
            sent += 1
            assert reply.status_code < 500, (path, body, reply.text)
            if reply.status_code >= 400:
                assert set(reply.json()) >= {"detail", "code"}, reply.text
            state = requests.get(server.url + "/state", headers=session, timeout=10)
            assert state.status_code == 200, (path, body, state.text)
    assert sent > 100
    episode = requests.post(server.url + "/reset", json={"episode_id": "\ud800"}, headers=session, timeout=10)
    assert (episode.status_code, episode.json()["code"]) == (422, "INVALID_TEXT")


def test_no_string_of_any_websocket_message_drops_the_connection(server):
    messages = [
        {"type": "reset", "data": {"seed": 0, "episode_id": "e", "options": {"task_id": None}}},
        {"type": "step", "data": {"text": "API.set_location('Raleigh')", "metadata": {"k": "v"}}},
        {"type": "state", "data": {}},
        {"type": "schema"},
    ]
    with ws_client.connect(server.url.replace("http://", "ws://") + "/ws") as ws:
        ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
        assert json.loads(ws.recv(timeout=10))["type"] == "observation"
        for template in messages:
            for message in variants(template):
                ws.send(json.dumps(message))
                answer = json.loads(ws.recv(timeout=10))  # an answer, in a frame: the connection lives
                if answer["type"] == "error":
                    assert answer["data"]["code"] != "EXECUTION_ERROR", (message, answer)
                ws.send(json.dumps({"type": "state", "data": {}}))
                assert json.loads(ws.recv(timeout=10))["type"] == "state", message


def test_an_answer_holding_a_lone_surrogate_still_encodes():
    """An env may produce any str (agent code can print chr(0xD800)): the answer falls back to JSON escapes."""
    payload = {"observation": {"text": "ok \ud800 é"}}
    assert json.loads(json_bytes(payload)) == payload
    assert json.loads(json_text(payload).encode("utf-8")) == payload
    assert json_bytes({"text": "é"}) == '{"text":"é"}'.encode()  # readable when it can be
