"""The hub behind StableToolBench's virtual server protocol, asked as StableToolBench's env
asks it: a POST of ``{category, tool_name, api_name, tool_input, strip, toolbench_key}`` where the tool
name is the tool JSON's file name, the API name ToolBench's standardized one and ``tool_input`` the
model's raw argument text, with the key also in a ``toolbench_key`` header."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from toolbench.mock_services.rapidapi.catalog import example_arguments, hub
from toolbench.mock_services.rapidapi.functions import change_name, standardize
from toolbench.mock_services.rapidapi.hub import call
from toolbench.mock_services.rapidapi.virtual import MAX_BODY, MAX_SESSIONS, Sessions, create_app

from ..eval.test_cli import serving

NO_SUCH_API = {"error": "", "response": {"message": "API doesn't exists"}}


@pytest.fixture
def client() -> FlaskClient:
    return create_app().test_client()


def payload(category: str, tool_name: str, api_name: str, tool_input: Any, key: str = "key-a") -> dict[str, Any]:
    """The body StableToolBench's ``rapidapi_wrapper._step`` posts (its ``strip`` default: truncate)."""
    return {
        "category": category,
        "tool_name": tool_name,
        "api_name": api_name,
        "tool_input": tool_input,
        "strip": "truncate",
        "toolbench_key": key,
    }


def post(client: FlaskClient, body: dict[str, Any]) -> dict[str, Any]:
    """``requests.post(url, json=body, headers=...)``: JSON in the body's key order (Flask's ``json=`` sorts)."""
    headers = {"toolbench_key": body["toolbench_key"], "Content-Type": "application/json"}
    response = client.post("/virtual", data=json.dumps(body), headers=headers)
    assert response.status_code == 200 and response.is_json, response.data[:300]
    return response.get_json()


def ask(client: FlaskClient, tool_name: str, api_name: str, arguments: dict[str, Any], key: str = "key-a") -> Any:
    """A call of a hub API named as the env names it, with the arguments as the model's JSON text."""
    tool = hub().tool(tool_name)
    assert tool is not None and tool.api(api_name) is not None
    body = payload(tool.category, tool.standard_name, change_name(standardize(api_name)), json.dumps(arguments), key)
    return post(client, body)


def test_a_hub_api_answers_with_the_hubs_data(client):
    tool = hub().tool("WeatherNow")
    assert tool is not None and tool.category == "Weather"
    for api in tool.apis:
        arguments = example_arguments(api)
        expected_status, expected_body = call(tool, api, arguments, {})
        answer = ask(client, "WeatherNow", api.name, arguments)
        if expected_status == 200:
            assert answer == {"error": "", "response": expected_body}
        else:
            assert answer == {"error": "Message error...", "response": expected_body}
    current = ask(client, "WeatherNow", "Current Weather", {"city": "London"})
    assert current["error"] == "" and current["response"]["location"]["name"] == "London"


def test_function_names_and_tool_names_for_a_category(client):
    tool = hub().tool("WeatherNow")
    api = tool.api("Current Weather")
    expected = ask(client, "WeatherNow", "Current Weather", {"city": "Paris"})
    forms = [
        ("weathernow", tool.function(api)),  # current_weather_for_weathernow
        ("weathernow_for_Weather", "current_weather"),
        ("weathernow_for_Weather", tool.function(api)),
        ("WeatherNow", "Current Weather"),
    ]
    for tool_name, api_name in forms:
        body = payload("Weather", tool_name, api_name, '{"city": "Paris"}')
        assert post(client, body) == expected, (tool_name, api_name)
    # An object tool_input is taken as it is, as the server's Info model allows.
    assert post(client, payload("Weather", "weathernow", "current_weather", {"city": "Paris"})) == expected
    # The hub's tool in another category is not the hub's tool.
    assert post(client, payload("Sports", "weathernow", "current_weather", '{"city": "Paris"}')) == NO_SUCH_API


def test_state_is_kept_per_toolbench_key(client):
    tool = next(t for t in hub().tools if t.category == "Storage" and t.api("Upload File") is not None)
    uploaded = ask(client, tool.name, "Upload File", {"name": "notes.txt", "content": "meeting at noon"}, "key-a")
    assert uploaded["error"] == "" and uploaded["response"]["name"] == "notes.txt"
    listed = ask(client, tool.name, "List Files", {}, "key-a")["response"]
    assert listed["count"] == 1 and listed["files"][0]["id"] == uploaded["response"]["id"]
    assert ask(client, tool.name, "List Files", {}, "key-b")["response"] == {"count": 0, "files": []}
    fetched = ask(client, tool.name, "Download File", {"file_id": uploaded["response"]["id"]}, "key-a")
    assert fetched["response"]["content"] == "meeting at noon"


def test_sessions_keep_the_latest_keys():
    sessions = Sessions(limit=2)
    sessions.state("a")["x"] = 1
    sessions.state("b")
    sessions.state("a")  # a is used again: b is now the oldest
    sessions.state("c")
    assert sessions.state("a") == {"x": 1} and sessions.state("b") == {}
    assert MAX_SESSIONS == 256


def test_an_unknown_id_gets_the_apis_404(client):
    tool = next(t for t in hub().tools if t.category == "Storage" and t.api("Download File") is not None)
    answer = ask(client, tool.name, "Download File", {"file_id": "file_9999"})
    assert answer["error"] == "Message error..." and "file_9999" in json.dumps(answer["response"])


def test_a_missing_required_argument_gets_the_apis_400(client):
    answer = ask(client, "WeatherNow", "Current Weather", {})
    assert answer == {"error": "Message error...", "response": {"message": "Missing required parameter 'city'"}}


@pytest.mark.parametrize("tool_input", ['{"city": "London"', "[1, 2]", "5", '"London"', "city=London", "null"])
def test_tool_input_that_is_not_a_json_object_is_a_parse_error(client, tool_input):
    answer = post(client, payload("Weather", "weathernow", "current_weather", tool_input))
    assert answer == {"error": "Tool input parse error...\n", "response": ""}


def test_empty_tool_input_is_no_arguments(client):
    tool = next(t for t in hub().tools if t.category == "Storage" and t.api("List Files") is not None)
    answer = post(client, payload("Storage", tool.standard_name, "list_files", ""))
    assert answer == {"error": "", "response": {"count": 0, "files": []}}


def test_chat_with_user(client):
    for api_name in ("chat_with_user", "chat_with_user_for_weathernow"):
        answer = post(client, payload("Weather", "weathernow", api_name, "not even JSON"))
        assert answer == {"error": "", "response": "Chat with user."}


def test_an_unknown_api_or_tool(client):
    assert post(client, payload("Weather", "weathernow", "tomorrows_lottery_numbers", "{}")) == NO_SUCH_API
    assert post(client, payload("Data", "no_such_tool", "get_stuff", '{"q": "x"}')) == NO_SUCH_API


def test_a_cached_response_is_returned_as_stored(tmp_path: Path):
    # StableToolBench's layout: {cache}/{category}/{tool}_for_{category}/{api}.json keyed by str(tool_input).
    stored = {"error": "", "response": {"zeta": 1, "alpha": ["recorded", "answer"]}}
    folder = tmp_path / "Data" / "real_tool_for_Data"
    folder.mkdir(parents=True)
    (folder / "get_stuff.json").write_text(json.dumps({str({"q": "x", "n": 2}): stored}))
    client = create_app(cache_dir=tmp_path).test_client()
    body = payload("Data", "real_tool", "get_stuff", '{"q": "x", "n": 2}')
    response = client.post("/virtual", json=body, headers={"toolbench_key": "key-a"})
    assert response.get_json() == stored
    assert response.get_data(as_text=True) == '{"error":"","response":{"zeta":1,"alpha":["recorded","answer"]}}'
    assert response.headers["X-Response-Source"] == "cache"
    missed = client.post("/virtual", json=payload("Data", "real_tool", "get_stuff", '{"q": "y"}'))
    assert missed.get_json() == NO_SUCH_API and missed.headers["X-Response-Source"] == "placeholder"
    hub = client.post("/virtual", json=payload("Weather", "weathernow", "current_weather", '{"city": "Oslo"}'))
    assert hub.headers["X-Response-Source"] == "simulated"
    unparsed = client.post("/virtual", json=payload("Data", "real_tool", "get_stuff", "not JSON"))
    assert "X-Response-Source" not in unparsed.headers  # no API was asked
    assert post(client, payload("Data", "real_tool_for_Data", "get_stuff_for_real_tool", {"q": "x", "n": 2})) == stored
    assert post(client, payload("Data", "real_tool", "get_stuff", '{"n": 2, "q": "x"}')) == NO_SUCH_API  # key order
    # The hub answers its own APIs before the cache is read.
    assert ask(client, "WeatherNow", "Current Weather", {"city": "London"})["error"] == ""


@pytest.mark.parametrize(
    "data, why",
    [
        (b"not json", "not JSON"),
        (b"\xff\xfe", "not JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (b'"text"', "must be a JSON object"),
        (json.dumps({"category": "Weather"}).encode(), "missing field(s): tool_name"),
        (json.dumps({**payload("Weather", "weathernow", "current_weather", "{}"), "api_name": 7}).encode(), "api_name"),
        (json.dumps({**payload("Weather", "weathernow", "current_weather", "{}"), "strip": None}).encode(), "strip"),
        (json.dumps(payload("Weather", "weathernow", "current_weather", ["city"])).encode(), "tool_input"),
        (json.dumps(payload("Weather", "weathernow", "current_weather", 3)).encode(), "tool_input"),
        (b"[" * 10_000 + b"]" * 10_000, "not JSON"),
    ],
)
def test_a_malformed_body_is_a_422(client, data, why):
    response = client.post("/virtual", data=data, content_type="application/json")
    assert response.status_code == 422
    body = response.get_json()
    assert body["response"] == "" and why in body["error"], body


def test_a_body_over_a_megabyte_is_refused(client):
    big = payload("Weather", "weathernow", "current_weather", json.dumps({"city": "x" * (2 * MAX_BODY)}))
    response = client.post("/virtual", json=big)
    assert response.status_code == 413
    assert response.get_json()["error"].startswith("413") and response.get_json()["response"] == ""


def test_other_routes_answer_in_the_protocols_shape(client):
    for response in (client.get("/virtual"), client.post("/nowhere", json={})):
        assert response.status_code in (404, 405) and response.get_json()["response"] == ""


def test_deep_nesting_does_not_crash(client):
    deep = "[" * 10_000 + "]" * 10_000
    for tool_input in (deep, '{"city": ' + deep + "}"):
        answer = post(client, payload("Weather", "weathernow", "current_weather", tool_input))
        assert answer == {"error": "Tool input parse error...\n", "response": ""}
    # An object nested as deep as the body parser allows: the hub refuses the value, nothing crashes.
    nested: Any = "London"
    for _ in range(800):
        nested = {"a": nested}
    answer = post(client, payload("Weather", "weathernow", "current_weather", {"city": nested}))
    assert answer["error"] == "Message error..."
    response = client.post("/virtual", json=payload("Data", "real_tool", "get_stuff", {"q": nested}))
    assert response.status_code in (200, 422) and response.is_json


def test_toolbench_serve_rapidapi_answers_over_http():
    # ``serving`` picks a port; the later ``--port 0`` wins, so the banner must name the real address.
    with serving("rapidapi", "--port", "0") as (_, banner):
        match = re.search(r"POST (http://127\.0\.0\.1:\d+/virtual)", banner)
        assert match is not None and "virtual protocol" in banner, banner
        body = payload("Weather", "weathernow", "current_weather", '{"city": "London"}', "cli-key")
        request = urllib.request.Request(
            match[1],
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "toolbench_key": "cli-key"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            answer = json.loads(response.read())
        assert response.status == 200
        assert answer["error"] == "" and answer["response"]["location"]["name"] == "London"
