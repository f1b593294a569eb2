"""``toolbench serve env`` over plain HTTP: episodes equal to local ones, sessions, snapshots, bad input."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import gymnasium as gym
import pytest
import requests

import toolbench
from tests.env_server.conftest import HOME_SEARCH, INTERACTIVE, SLOW_ID, serve
from toolbench.core.jsonsafe import to_json_safe

TASK_IDS = [task.id for task in toolbench.load_tasks("HomeSearch")[:3]]
JSON = {"Content-Type": "application/json"}


def post(url: str, path: str, body: Any = None, session: str | None = None, **kwargs: Any) -> requests.Response:
    headers = {"X-Session-Id": session} if session else {}
    return requests.post(url + path, json=body, headers=headers, timeout=30, **kwargs)


def local_episode(task_id: str) -> list[Any]:
    """Every (observation, reward, terminated, truncated, info) of the oracle's episode, in JSON form."""
    env = gym.make(HOME_SEARCH, **INTERACTIVE)
    observation, info = env.reset(seed=0, options={"task_id": task_id})
    steps: list[Any] = [[observation, to_json_safe(info)]]
    for action in env.unwrapped.oracle_actions(env.unwrapped.task):
        observation, reward, terminated, truncated, info = env.step(action)
        steps.append([observation, reward, terminated, truncated, to_json_safe(info)])
    env.close()
    return steps


def served_step(result: dict[str, Any]) -> list[Any]:
    obs = result["observation"]
    return [obs["text"], result["reward"], obs["terminated"], obs["truncated"], obs["info"]]


def test_a_served_episode_equals_the_local_one_and_sessions_do_not_mix(server):
    """Two sessions stepped in turn, each on its own task, give exactly the local episodes."""
    expected = {task_id: local_episode(task_id) for task_id in TASK_IDS[:2]}
    env = gym.make(HOME_SEARCH, **INTERACTIVE)
    plans, sessions, got = {}, {}, {}
    for task_id in expected:
        reply = post(server.url, "/reset", {"seed": 0, "task_id": task_id})
        assert reply.status_code == 200
        assert reply.headers["X-Session-Id"] == reply.json()["session_id"]
        sessions[task_id] = reply.headers["X-Session-Id"]
        body = reply.json()
        assert body["reward"] is None and body["done"] is False
        got[task_id] = [[body["observation"]["text"], body["observation"]["info"]]]
        plans[task_id] = env.unwrapped.oracle_actions(env.unwrapped._tasks_by_id[task_id])
    assert len(set(sessions.values())) == 2
    for index in range(max(len(plan) for plan in plans.values())):
        for task_id, plan in plans.items():
            if index < len(plan):
                reply = post(server.url, "/step", {"action": plan[index]}, sessions[task_id])
                assert reply.status_code == 200, reply.text
                got[task_id].append(served_step(reply.json()))
    assert got == expected
    assert got[TASK_IDS[0]][-1][1] == 1.0  # the oracle's episode is scored at its end


def test_one_session_plays_episode_after_episode_as_fresh_ones(server):
    """Nothing of an episode leaks into the next on the same session: each equals its local episode."""
    env = gym.make(HOME_SEARCH, **INTERACTIVE).unwrapped
    session = None
    for task_id in (TASK_IDS[2], TASK_IDS[0], TASK_IDS[2]):
        reply = post(server.url, "/reset", {"seed": 0, "task_id": task_id}, session)
        session = reply.headers["X-Session-Id"]
        got = [[reply.json()["observation"]["text"], reply.json()["observation"]["info"]]]
        for action in env.oracle_actions(env._tasks_by_id[task_id]):
            got.append(served_step(post(server.url, "/step", {"action": action}, session).json()))
        assert got == local_episode(task_id)


def test_cookies_carry_the_session_for_cookie_keeping_clients(server):
    client = requests.Session()  # what openenv-core's older HTTP client and `curl -b/-c` do
    first = client.post(server.url + "/reset", json={"task_id": TASK_IDS[0]}, timeout=30)
    step = client.post(server.url + "/step", json={"action": {"text": "API.set_location('Raleigh')"}}, timeout=30)
    assert step.status_code == 200, step.text
    state = client.get(server.url + "/state", timeout=30).json()
    assert state["step_count"] == 1 and state["task_id"] == TASK_IDS[0]
    assert client.delete(server.url + "/session", timeout=30).json() == {"closed": first.headers["X-Session-Id"]}
    assert client.get(server.url + "/state", timeout=30).status_code == 400  # the cookie was cleared


def test_state_and_restore_branch_an_episode_within_and_across_sessions(server):
    plan = local_episode(TASK_IDS[0])
    actions = gym.make(HOME_SEARCH, **INTERACTIVE).unwrapped
    actions = actions.oracle_actions(actions._tasks_by_id[TASK_IDS[0]])
    session = post(server.url, "/reset", {"seed": 0, "task_id": TASK_IDS[0], "episode_id": "e1"}).headers[
        "X-Session-Id"
    ]
    post(server.url, "/step", {"action": actions[0]}, session)
    state = requests.get(server.url + "/state", headers={"X-Session-Id": session}, timeout=30).json()
    assert {k: state[k] for k in ("episode_id", "step_count", "task_id", "done")} == {
        "episode_id": "e1", "step_count": 1, "task_id": TASK_IDS[0], "done": False}  # fmt: skip
    rest = [served_step(post(server.url, "/step", {"action": a}, session).json()) for a in actions[1:]]
    assert rest == plan[2:]
    restored = post(server.url, "/restore", {"snapshot": state["snapshot"]}, session)
    assert restored.json()["step_count"] == 1 and restored.json()["done"] is False
    again = [served_step(post(server.url, "/step", {"action": a}, session).json()) for a in actions[1:]]
    assert again == plan[2:]
    other = post(server.url, "/reset", {"task_id": TASK_IDS[1]}).headers["X-Session-Id"]
    assert post(server.url, "/restore", {"snapshot": state["snapshot"]}, other).status_code == 200
    assert served_step(post(server.url, "/step", {"action": actions[1]}, other).json()) == plan[2]


def test_snapshots_not_signed_by_this_server_for_this_env_are_refused(server):
    session = post(server.url, "/reset", {"task_id": TASK_IDS[0]}).headers["X-Session-Id"]
    snapshot = requests.get(server.url + "/state", headers={"X-Session-Id": session}, timeout=30).json()["snapshot"]
    tampered = snapshot[:-8] + ("A" if snapshot[-8] != "A" else "B") + snapshot[-7:]
    for bad in (tampered, "tb1.", "tb1.!!!", "xyz", 42, None):
        reply = post(server.url, "/restore", {"snapshot": bad}, session)
        assert reply.status_code == 422, (bad, reply.text)
    other = serve(env_kwargs={"mode": "program"})  # another configuration: another fingerprint and key
    try:
        foreign = post(other.url, "/reset", {"task_id": TASK_IDS[0]}).headers["X-Session-Id"]
        reply = post(other.url, "/restore", {"snapshot": snapshot}, foreign)
        assert reply.status_code == 422 and "signature" in reply.json()["detail"]
    finally:
        other.stop()


def test_bad_requests_are_clear_4xx_and_disturb_nothing(server):
    session = post(server.url, "/reset", {"task_id": TASK_IDS[0]}).headers["X-Session-Id"]
    cases = [
        (
            lambda: requests.post(server.url + "/step", data=b"{bad", headers={"X-Session-Id": session, **JSON}),
            400,
            "INVALID_JSON",
        ),
        (
            lambda: requests.post(server.url + "/step", data=b"\xff\xfe", headers={"X-Session-Id": session, **JSON}),
            400,
            "INVALID_JSON",
        ),
        (
            lambda: requests.post(server.url + "/step", data=b"1" * 5000, headers={"X-Session-Id": session, **JSON}),
            400,
            "INVALID_JSON",
        ),
        (lambda: requests.post(server.url + "/reset", data=b"[" * 100_000, headers=JSON), 400, "INVALID_JSON"),
        (lambda: post(server.url, "/step", {"action": "x"}, "no-such-session"), 404, "UNKNOWN_SESSION"),
        (lambda: post(server.url, "/step", {"action": "x"}), 400, "NO_SESSION"),
        (lambda: post(server.url, "/step", {"act": "x"}, session), 422, "VALIDATION_ERROR"),
        (lambda: post(server.url, "/step", {"action": 3}, session), 422, "VALIDATION_ERROR"),
        (lambda: post(server.url, "/step", {"action": {"code": "x"}}, session), 422, "VALIDATION_ERROR"),
        (lambda: post(server.url, "/step", [1, 2], session), 422, "VALIDATION_ERROR"),
        (lambda: post(server.url, "/reset", {"seed": -1}), 422, "VALIDATION_ERROR"),
        (lambda: post(server.url, "/reset", {"seed": 1.5}), 422, "VALIDATION_ERROR"),
        (lambda: post(server.url, "/reset", {"task_id": "nope"}), 422, "VALIDATION_ERROR"),
        (lambda: post(server.url, "/reset", {"sed": 1}), 422, "VALIDATION_ERROR"),
        (lambda: post(server.url, "/reset", {"options": {"x": 1}}), 422, "VALIDATION_ERROR"),
        (lambda: requests.get(server.url + "/nope"), 404, "NOT_FOUND"),
        (lambda: requests.get(server.url + "/step"), 405, "METHOD_NOT_ALLOWED"),
    ]
    for send, status, code in cases:
        reply = send()
        assert (reply.status_code, reply.json()["code"]) == (status, code), reply.text
        assert reply.json()["detail"]
    fresh = post(server.url, "/reset", {})
    assert post(server.url, "/step", {"action": "x"}, fresh.headers["X-Session-Id"]).status_code == 200
    step = post(server.url, "/step", {"action": "API.set_location('Raleigh')"}, session)
    assert step.status_code == 200 and step.json()["observation"]["info"]["executable"] is True


def test_a_bad_action_is_an_observation_not_an_http_error(server):
    session = post(server.url, "/reset", {"task_id": TASK_IDS[0]}).headers["X-Session-Id"]
    for action in ("", "API.nope(", "lone \ud800 surrogate", "x" * 200_000):
        reply = post(server.url, "/step", {"action": action}, session)
        assert reply.status_code == 200, reply.text
        assert reply.json()["observation"]["info"]["executable"] is False


def test_a_step_before_reset_is_a_409():
    with_server = serve()
    try:
        session = post(with_server.url, "/reset", {}).headers["X-Session-Id"]
        server_state = with_server.app.state.env_server
        server_state.pool.get(session).env.unwrapped._task = None  # a session whose episode never began
        reply = post(with_server.url, "/step", {"action": "x"}, session)
        assert (reply.status_code, reply.json()["code"]) == (409, "RESET_NEEDED")
    finally:
        with_server.stop()


def test_oversized_bodies_are_a_413_declared_or_streamed():
    small = serve(max_body=1024)
    try:
        session = post(small.url, "/reset", {}).headers["X-Session-Id"]
        reply = post(small.url, "/step", {"action": "x" * 2000}, session)
        assert (reply.status_code, reply.json()["code"]) == (413, "BODY_TOO_LARGE")
        chunks = (b'{"action": "' + b"x" * 500 + b'"}' for _ in range(1)), (b"y" * 600 for _ in range(2))
        streamed = requests.post(small.url + "/step", data=(c for part in chunks for c in part),
                                 headers={"X-Session-Id": session, **JSON}, timeout=30)  # fmt: skip
        assert streamed.status_code == 413  # chunked: no Content-Length to refuse up front
        assert post(small.url, "/step", {"action": "x"}, session).status_code == 200
    finally:
        small.stop()


def test_a_second_request_on_a_busy_session_is_a_409_and_the_first_completes():
    slow = serve(SLOW_ID)
    try:
        session = post(slow.url, "/reset", {}).headers["X-Session-Id"]
        first: list[requests.Response] = []
        thread = threading.Thread(target=lambda: first.append(post(slow.url, "/step", {"action": "slow"}, session)))
        thread.start()
        time.sleep(0.15)
        second = post(slow.url, "/step", {"action": "x"}, session)
        other = post(slow.url, "/reset", {})  # another session is not held up
        thread.join()
        assert (second.status_code, second.json()["code"]) == (409, "SESSION_BUSY")
        assert other.status_code == 200
        assert first[0].status_code == 200
        state = requests.get(slow.url + "/state", headers={"X-Session-Id": session}, timeout=30).json()
        assert state["step_count"] == 1
    finally:
        slow.stop()


def test_the_session_cap_is_a_503_with_retry_after_and_a_closed_session_frees_its_slot():
    capped = serve(max_sessions=2)
    try:
        sessions = [post(capped.url, "/reset", {}).headers["X-Session-Id"] for _ in range(2)]
        full = post(capped.url, "/reset", {})
        assert (full.status_code, full.json()["code"]) == (503, "CAPACITY_REACHED")
        assert full.headers["Retry-After"] == "1"
        assert post(capped.url, "/reset", {}, sessions[0]).status_code == 200  # its own sessions still reset
        assert requests.delete(capped.url + "/session", headers={"X-Session-Id": sessions[0]}, timeout=30).ok
        assert post(capped.url, "/reset", {}).status_code == 200
        health = requests.get(capped.url + "/health", timeout=30).json()
        assert {k: health[k] for k in ("status", "env_id", "sessions", "max_sessions")} == {
            "status": "healthy", "env_id": "toolbench/HomeSearch-v0", "sessions": 2, "max_sessions": 2}  # fmt: skip
    finally:
        capped.stop()


def test_idle_sessions_are_reaped_and_their_envs_closed():
    quick = serve(idle_timeout=0.3)
    try:
        session = post(quick.url, "/reset", {}).headers["X-Session-Id"]
        env = quick.app.state.env_server.pool.get(session).env
        closed = []
        original_close = env.close
        env.close = lambda: (closed.append(True), original_close())
        time.sleep(0.8)
        reply = post(quick.url, "/step", {"action": "x"}, session)
        assert (reply.status_code, reply.json()["code"]) == (404, "UNKNOWN_SESSION")
        assert "reaped after 0.3 s idle" in reply.json()["detail"]
        assert closed == [True]
        assert requests.get(quick.url + "/health", timeout=30).json()["sessions"] == 0
    finally:
        quick.stop()


def test_schema_and_metadata_describe_the_env_with_its_tools_and_docs(server):
    schema = requests.get(server.url + "/schema", timeout=30).json()
    env = gym.make(HOME_SEARCH, **INTERACTIVE).unwrapped
    assert schema["tools"] == to_json_safe(env.tools()) and schema["tools"]
    assert schema["api_docs"] == env.api_docs() and schema["api_docs"]
    assert (schema["env_id"], schema["mode"], schema["split"], schema["num_tasks"]) == (
        HOME_SEARCH,
        "interactive",
        "test",
        100,
    )
    assert schema["action"]["required"] == ["text"]
    metadata = requests.get(server.url + "/metadata", timeout=30).json()
    assert metadata["name"] == HOME_SEARCH and metadata["version"] == toolbench.__version__


def test_malformed_http_is_answered_by_the_server_with_a_4xx(server):
    host, port = server.url.removeprefix("http://").split(":")
    for raw in (b"GARBAGE\r\n\r\n", b"POST /step HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n"):
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(raw)
            answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 4"), answer[:80]
    assert json.loads(requests.get(server.url + "/health", timeout=30).text)["status"] == "healthy"


def test_answers_are_not_held_by_nagle_on_keep_alive_connections(server):
    """uvicorn writes an answer's head and body apart: without TCP_NODELAY each keep-alive answer
    waits for the client's delayed ACK (40 ms). Accepted sockets inherit it from the listening one."""
    assert server.socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


def test_a_500_carries_no_exception_text_but_a_request_id_that_the_log_has(caplog):
    """A bug of ours may hold paths or state in its message: the client gets an id, the log the traceback."""
    running = serve()
    try:
        session = post(running.url, "/reset", {}).headers["X-Session-Id"]
        server = running.app.state.env_server

        def broken(session):
            raise RuntimeError("secret /srv/path in the message")

        server.render_call = broken
        with caplog.at_level("ERROR", logger="toolbench.env_server"):
            reply = requests.get(running.url + "/render", headers={"X-Session-Id": session}, timeout=10)
        assert reply.status_code == 500
        body = reply.json()
        assert body["code"] == "INTERNAL_ERROR" and "secret" not in reply.text and "RuntimeError" not in reply.text
        assert body["request_id"] and body["request_id"] in body["detail"]
        logged = "\n".join(record.getMessage() + str(record.exc_info) for record in caplog.records)
        assert body["request_id"] in logged and "secret /srv/path" in logged
    finally:
        running.stop()


def test_a_full_server_gives_a_new_client_the_slot_of_a_session_that_never_stepped_once_it_idled():
    """One client can fill the session cap with bodiless resets in a blink: a session that never stepped
    nor restored gives its slot to a new one once idle for --fresh-idle-timeout; a session in use never does."""
    running = serve(max_sessions=4, fresh_idle_timeout=0.5)
    try:
        hoarded = [requests.post(running.url + "/reset", timeout=10).headers["X-Session-Id"] for _ in range(4)]
        refused = requests.post(running.url + "/reset", timeout=10)
        assert (refused.status_code, refused.json()["code"]) == (503, "CAPACITY_REACHED")  # not idle long enough
        time.sleep(0.7)
        newcomer = requests.post(running.url + "/reset", timeout=10)
        assert newcomer.status_code == 200, newcomer.text
        gone = post(running.url, "/step", {"action": "x"}, hoarded[0])  # the one idle the longest
        assert (gone.status_code, gone.json()["code"]) == (404, "UNKNOWN_SESSION")
        for session in [*hoarded[1:], newcomer.headers["X-Session-Id"]]:  # now in use: they keep their slots
            assert post(running.url, "/step", {"action": "API.set_location('Raleigh')"}, session).status_code == 200
        time.sleep(0.7)
        assert requests.post(running.url + "/reset", timeout=10).status_code == 503
    finally:
        running.stop()


def test_a_websocket_session_that_never_stepped_gives_way_too():
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    running = serve(max_sessions=1, fresh_idle_timeout=0.3)
    try:
        with connect(running.url.replace("http://", "ws://") + "/ws") as hoarder:
            hoarder.send(json.dumps({"type": "reset", "data": {}}))
            assert json.loads(hoarder.recv(timeout=10))["type"] == "observation"
            time.sleep(0.5)
            assert requests.post(running.url + "/reset", timeout=10).status_code == 200
            with pytest.raises(ConnectionClosed):  # its connection was cut with its session
                hoarder.send(json.dumps({"type": "state"}))
                hoarder.recv(timeout=5)
    finally:
        running.stop()
