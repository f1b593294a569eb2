"""The hub's calls are safe to hand out and bounded: no route collisions, no shared objects, no
crash on values only Python can make, bounded sessions and work."""

from __future__ import annotations

import time

from toolbench.mock_services.rapidapi.catalog import hub
from toolbench.mock_services.rapidapi.hub import call
from toolbench.mock_services.rapidapi.services.shared import MAX_RECORDS
from toolbench.mock_services.rapidapi.world import build_world


def find(key: str):
    tool = next(t for t in hub().tools if any(a.key == key for a in t.apis))
    return tool, next(a for a in tool.apis if a.key == key)


def test_no_function_name_of_a_tool_ends_another_of_its_names():
    for tool in hub().tools:
        names = [tool.function(api) for api in tool.apis]
        assert not [(a, b) for a in names for b in names if a != b and b.endswith(a)], tool.name


def test_changing_a_response_changes_neither_the_world_nor_the_session():
    tool, get = find("movies.get")
    movie = build_world().rows("movies")[0]
    _, body = call(tool, get, {"movie_id": movie["id"]}, {})
    body["cast_ids"].clear()
    assert call(tool, get, {"movie_id": movie["id"]}, {})[1]["cast_ids"]
    tool, upload = find("storage.upload")
    fetch = next(a for a in tool.apis if a.key == "storage.get")
    state: dict = {}
    made = call(tool, upload, {"name": "a", "content": "hi"}, state)[1]
    call(tool, fetch, {"file_id": made["id"]}, state)[1]["content"] = "changed"
    assert call(tool, fetch, {"file_id": made["id"]}, state)[1]["content"] == "hi"


def test_values_only_python_makes_are_refused_not_raised():
    tool, digest = find("codes.hash")
    assert call(tool, digest, {"text": "\ud800"}, {})[0] == 400
    assert call(tool, digest, {"text": 10**5000}, {})[0] == 400
    assert call(tool, digest, ["text"], {})[0] == 400  # type: ignore[arg-type]


def test_sessions_and_work_are_bounded():
    tool, send = find("messaging.send_sms")
    state: dict = {}
    for n in range(MAX_RECORDS):
        assert call(tool, send, {"to": f"+4420{n:07d}", "message": "hi"}, state)[0] == 200
    assert call(tool, send, {"to": "+442000000001", "message": "hi"}, state)[0] == 507
    tool, prime = find("utils.prime")
    started = time.perf_counter()
    assert call(tool, prime, {"number": 9_999_999_967}, {})[1]["is_prime"] is True
    assert time.perf_counter() - started < 0.05
    assert call(tool, prime, {"number": 10**11}, {})[0] == 400
