"""The served hub as RapidAPI's gateway: a tool's endpoints at the url of its tool JSON, with the
X-RapidAPI-Host and X-RapidAPI-Key headers, answered with the API's own status and body."""

from __future__ import annotations

import pytest

from toolbench.mock_services.rapidapi.catalog import hub, tool_json
from toolbench.mock_services.rapidapi.virtual import create_app


@pytest.fixture()
def client():
    return create_app().test_client()


def headers(tool, key="k1"):
    return {"X-RapidAPI-Host": tool.host, "X-RapidAPI-Key": key}


def test_a_path_parameter_and_query_parameters_reach_the_api(client):
    tool = next(t for t in hub().tools if any(a.key == "movies.get" for a in t.apis))
    get = next(a for a in tool.apis if a.key == "movies.get")
    search = next(a for a in tool.apis if a.key == "movies.search")
    found = client.get(search.path, query_string={"query": "Compass"}, headers=headers(tool)).get_json()
    movie = found["results"][0]
    answer = client.get(get.path.replace("{movie_id}", movie["id"]), headers=headers(tool))
    assert answer.status_code == 200 and answer.get_json()["title"] == movie["title"]
    url = next(e["url"] for e in tool_json(tool)["api_list"] if e["name"] == get.name)
    assert url == f"https://{tool.host}{get.path}"


def test_errors_are_the_apis_own(client):
    tool = hub().tool("WeatherNow")
    forecast = next(a for a in tool.apis if a.key == "weather.forecast")
    assert client.get("/nowhere", headers=headers(tool)).get_json() == {"message": "Endpoint '/nowhere' does not exist"}
    missing = client.get(forecast.path, headers=headers(tool))
    assert missing.status_code == 400 and missing.get_json() == {"message": "Missing required parameter 'city'"}
    wrong = client.get(forecast.path, query_string={"city": "Paris", "days": "many"}, headers=headers(tool))
    assert wrong.status_code == 400 and "expected a number" in wrong.get_json()["message"]
    unknown = client.get(forecast.path, query_string={"city": "Atlantis"}, headers=headers(tool))
    assert unknown.status_code == 404 and unknown.get_json() == {"message": "City 'Atlantis' not found"}
    assert client.get(forecast.path, headers={"X-RapidAPI-Host": "nope.p.rapidapi.com"}).status_code == 404


def test_posts_change_one_keys_session(client):
    tool = next(t for t in hub().tools if t.category == "Storage" and t.apis[0].key == "storage.upload")
    upload = next(a for a in tool.apis if a.key == "storage.upload")
    listing = next(a for a in tool.apis if a.key == "storage.list")
    made = client.post(upload.path, json={"name": "a.txt", "content": "hi"}, headers=headers(tool))
    assert made.status_code == 200 and made.get_json()["size"] == 2
    assert client.get(listing.path, headers=headers(tool)).get_json()["count"] == 1
    assert client.get(listing.path, headers=headers(tool, "k2")).get_json()["count"] == 0


def test_toolbench_services_path_speaks_the_virtual_protocol(client):
    payload = {"category": "Weather", "tool_name": "WeatherNow", "api_name": "Current Weather",
               "tool_input": '{"city": "Paris"}', "strip": "truncate", "toolbench_key": "k"}  # fmt: skip
    answers = [client.post(path, json=payload).get_json() for path in ("/rapidapi", "/virtual")]
    assert answers[0] == answers[1] and answers[0]["response"]["location"]["name"] == "Paris"


def test_a_session_can_be_reset_and_deep_bodies_are_refused(client):
    tool = next(t for t in hub().tools if t.category == "Storage" and t.apis[0].key == "storage.upload")
    upload = next(a for a in tool.apis if a.key == "storage.upload")
    listing = next(a for a in tool.apis if a.key == "storage.list")
    client.post(upload.path, json={"name": "a.txt", "content": "hi"}, headers=headers(tool))
    assert client.post("/reset", headers={"toolbench_key": "k1"}).status_code == 200
    assert client.get(listing.path, headers=headers(tool)).get_json()["count"] == 0  # one key, one session
    deep = "[" * 100_000 + "]" * 100_000
    answer = client.post(upload.path, data=deep, content_type="application/json", headers=headers(tool))
    assert answer.status_code in (400, 413) and "message" in answer.get_json()
