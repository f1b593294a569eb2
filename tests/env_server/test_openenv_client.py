"""openenv-core's own client, unmodified, against ``toolbench serve env`` (WebSocket ``/ws``)."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

from tests.env_server.conftest import HOME_SEARCH, INTERACTIVE, serve
from tests.env_server.test_http import TASK_IDS, local_episode

openenv_core = pytest.importorskip("openenv.core", reason="openenv-core is not installed (pip install '.[openenv]')")
ws_client = pytest.importorskip("websockets.sync.client")


def test_openenv_generic_client_plays_the_local_episode(server):
    expected = local_episode(TASK_IDS[0])
    env = gym.make(HOME_SEARCH, **INTERACTIVE).unwrapped
    actions = env.oracle_actions(env._tasks_by_id[TASK_IDS[0]])
    with openenv_core.GenericEnvClient(base_url=server.url).sync() as client:
        first = client.reset(seed=0, task_id=TASK_IDS[0], episode_id="ep-1")
        assert (first.reward, first.done) == (None, False)
        got = [[first.observation["text"], first.observation["info"]]]
        for action in actions:
            result = client.step({"text": action})
            obs = result.observation
            got.append([obs["text"], result.reward, obs["terminated"], obs["truncated"], obs["info"]])
        assert got == expected
        assert result.done is True and result.reward == 1.0
        state = client.state()
        assert (state["episode_id"], state["step_count"], state["task_id"], state["done"]) == (
            "ep-1", len(actions), TASK_IDS[0], True)  # fmt: skip
    assert server.app.state.env_server.pool.__len__() == 0  # closing the connection closed the session


def test_openenv_client_sees_a_server_error_for_bad_messages_and_capacity():
    capped = serve(max_sessions=1)
    try:
        with openenv_core.GenericEnvClient(base_url=capped.url).sync() as client:
            client.reset()
            with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
                client.step({"code": "print(1)"})  # not our action's shape
            assert client.step({"text": "API.set_location('Raleigh')"}).observation["info"]["executable"]
            second = openenv_core.GenericEnvClient(base_url=capped.url).sync()
            with second, pytest.raises(RuntimeError, match="CAPACITY_REACHED"):
                second.reset()
            second_again = openenv_core.GenericEnvClient(base_url=capped.url).sync()
        with second_again:  # the first session closed with its connection: its slot is free
            assert second_again.reset().done is False
    finally:
        capped.stop()


def test_raw_websocket_messages_malformed_restore_and_idle_close():
    quick = serve(idle_timeout=0.5, max_body=8192)
    url = quick.url.replace("http://", "ws://") + "/ws"
    try:
        with ws_client.connect(url) as ws:
            for raw, code in (("not json", "INVALID_JSON"), ("[1]", "VALIDATION_ERROR"), ("9" * 5000, "INVALID_JSON"),
                              ("[" * 3000, "INVALID_JSON"), ("null", "VALIDATION_ERROR"), ('{"type": "schema"}', None),
                              ('{"type": "fly"}', "UNKNOWN_TYPE"), ('{"type": "step", "data": {"text": "x"}}', "RESET_NEEDED")):  # fmt: skip
                ws.send(raw)
                reply = json.loads(ws.recv())
                if code is None:  # schema needs no session
                    assert reply["type"] == "schema" and reply["data"]["tools"]
                    continue
                assert (reply["type"], reply["data"]["code"]) == ("error", code), reply
            ws.send(json.dumps({"type": "reset", "data": {"task_id": TASK_IDS[0]}}))
            assert json.loads(ws.recv())["type"] == "observation"
            ws.send(json.dumps({"type": "state"}))
            snapshot = json.loads(ws.recv())["data"]["snapshot"]
            ws.send(json.dumps({"type": "step", "data": {"text": "API.set_location('Raleigh')"}}))
            assert json.loads(ws.recv())["data"]["observation"]["info"]["executable"] is True
            ws.send(json.dumps({"type": "restore", "data": {"snapshot": snapshot}}))
            assert json.loads(ws.recv())["data"]["step_count"] == 0
            ws.send(json.dumps({"type": "schema"}))
            assert json.loads(ws.recv())["data"]["tools"]
            reply = json.loads(ws.recv(timeout=5))  # nothing sent for longer than the idle timeout
            assert reply["data"]["code"] == "IDLE_TIMEOUT"
        with ws_client.connect(url) as ws:  # a message over the body limit closes that connection only
            ws.send(json.dumps({"type": "step", "data": {"text": "x" * 10_000}}))
            with pytest.raises(Exception, match="1009|too big|message"):
                ws.recv(timeout=5)
        with ws_client.connect(url) as ws:
            ws.send(json.dumps({"type": "reset", "data": {}}))
            assert json.loads(ws.recv())["type"] == "observation"
    finally:
        quick.stop()


class TokenEnvClient(openenv_core.GenericEnvClient):
    """The README's way to give openenv-core's client a token: it sends no headers of its own, so its
    WebSocket is opened here, with the Authorization header, before it would open it itself."""

    def __init__(self, base_url: str, token: str, **kwargs):
        super().__init__(base_url, **kwargs)
        self._token = token

    async def connect(self):
        from websockets.asyncio.client import connect

        if self._ws is None:
            self._ws = await connect(self._ws_url, open_timeout=self._connect_timeout, max_size=self._max_message_size,
                                     additional_headers={"Authorization": f"Bearer {self._token}"})  # fmt: skip
        return self


def test_openenv_client_with_a_token_server():
    from toolbench.env_server import AccessPolicy

    token = "z" * 43
    tokened = serve(access=AccessPolicy(token=token.encode()))
    try:
        with pytest.raises(ConnectionError, match="401"):  # the unmodified client cannot send the token
            openenv_core.GenericEnvClient(base_url=tokened.url).sync().connect()
        with TokenEnvClient(tokened.url, token).sync() as client:
            assert client.reset(seed=0).done is False
            assert client.step({"text": "API.set_location('Raleigh')"}).observation["info"]["executable"]
    finally:
        tokened.stop()
