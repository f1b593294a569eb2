"""The original ToolBench / StableToolBench data served offline: query files, the
response cache and the deterministic simulator, checked on the released queries where
../shared/refdata is present and on small files built here otherwise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolbench.mock_services.rapidapi import original
from toolbench.mock_services.rapidapi.functions import change_name, standardize
from toolbench.mock_services.rapidapi.original import (
    MAX_DEPTH,
    MAX_ITEMS,
    MAX_LIST,
    OriginalBackend,
    ResponseCache,
    read_query_file,
    simulate_response,
    standard_category,
)

ROOT = Path(__file__).resolve().parents[2]
TOOLLLM = ROOT.parent / "shared" / "refdata" / "toolllm"
STB = TOOLLLM / "StableToolBench" / "solvable_queries"
TB = TOOLLLM / "ToolBench" / "data_example" / "instruction"
SETS = {
    "G1_instruction": 163,
    "G1_category": 153,
    "G1_tool": 158,
    "G2_instruction": 106,
    "G2_category": 124,
    "G3_instruction": 61,
}
needs_refdata = pytest.mark.skipif(not TOOLLLM.is_dir(), reason=f"reference data not found at {TOOLLLM}")

API = {
    "category_name": "Video, Images",
    "tool_name": "My Video Tool",
    "api_name": "Search Videos",
    "template_response": {
        "status": "str",
        "count": "int",
        "score": "float",
        "ok": "bool",
        "next": "NoneType",
        "related": "empty list",
        "videos": [{"title": "str", "id": "int", "tags": ["list of str with length 8"], "_list_length": 3}],
        "meta": {"query": "str", "page": "int"},
    },
}


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def all_queries() -> list[dict]:
    return [query for name in SETS for query in read_query_file(STB / "test_instruction" / f"{name}.json")]


# --- query files ---------------------------------------------------------------------------------


@needs_refdata
@pytest.mark.parametrize(("name", "count"), SETS.items())
def test_reads_the_stabletoolbench_test_sets(name, count):
    queries = read_query_file(STB / "test_instruction" / f"{name}.json")
    assert len(queries) == count
    assert all(isinstance(q["query"], str) and isinstance(q["query_id"], int) for q in queries)
    assert all(set(q) == {"api_list", "query", "relevant APIs", "query_id"} for q in queries)
    assert (
        len(read_query_file(STB / "test_instruction" / f"{name}.json", STB / "test_query_ids" / f"{name}.json"))
        == count
    )


@needs_refdata
def test_the_stabletoolbench_test_sets_hold_765_queries():
    assert len(all_queries()) == sum(SETS.values()) == 765


@needs_refdata
def test_reads_the_toolbench_examples():
    assert [len(read_query_file(TB / f"G{n}_query.json")) for n in (1, 2, 3)] == [5, 3, 2]
    (demo,) = read_query_file(TB / "inference_query_demo.json")
    assert demo["query_id"] == 82217 and set(demo["api_list"][0]) == {"category_name", "tool_name", "api_name"}
    (open_domain,) = read_query_file(TB / "inference_query_demo_open_domain.json")
    assert "api_list" not in open_domain


@needs_refdata
def test_an_ids_file_keeps_only_its_queries():
    example_ids = STB.parent / "solvable_queries_example" / "test_query_ids" / "G1_instruction.json"
    queries = read_query_file(STB / "test_instruction" / "G1_instruction.json", example_ids)
    assert sorted(q["query_id"] for q in queries) == [588, 608, 1073]


def test_records_are_normalized_and_filtered(tmp_path):
    records = [
        {"api_list": [], "query": ["first", "second"], "relevant APIs": [], "query_id": 7},
        {"api_list": [{"category_name": "C", "tool_name": "T", "api_name": "A"}], "query": "q", "query_id": "8"},
    ]
    path = write(tmp_path / "q.json", records)
    queries = read_query_file(path)
    assert [q["query"] for q in queries] == ["first", "q"] and [q["query_id"] for q in queries] == [7, 8]
    assert set(queries[0]) == {"api_list", "query", "relevant APIs", "query_id"}
    assert [q["query_id"] for q in read_query_file(path, write(tmp_path / "ids.json", {"8": 0, "99": 0}))] == [8]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not a JSON file"),
        ({"query": "q"}, "JSON list"),
        (["q"], "expected an object"),
        ([{"query_id": 1}], "'query'"),
        ([{"query": [], "query_id": 1}], "'query'"),
        ([{"query": "q", "query_id": "one"}], "'query_id'"),
        ([{"query": "q", "query_id": True}], "'query_id'"),
        ([{"query": "q", "query_id": 1, "api_list": [{"tool_name": "T"}]}], "'api_list'"),
        ([{"query": "q", "query_id": 1, "api_list": {}}], "'api_list'"),
        ([{"query": "q", "query_id": 1, "relevant APIs": [["T"]]}], "'relevant APIs'"),
    ],
)
def test_malformed_query_files_raise(tmp_path, content, message):
    with pytest.raises(ValueError, match=message):
        read_query_file(write(tmp_path / "bad.json", content))


def test_a_malformed_ids_file_raises(tmp_path):
    path = write(tmp_path / "q.json", [{"query": "q", "query_id": 1}])
    with pytest.raises(ValueError, match="ids.json"):
        read_query_file(path, write(tmp_path / "ids.json", [1]))


# --- the response cache ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "standard"),
    [("Video, Images", "Video_Images"), ("Data/Science", "Data_Science"), ("Business Software", "Business_Software")],
)
def test_standard_category(raw, standard):
    assert standard_category(raw) == standard


def make_cache(root: Path) -> Path:
    folder = root / "Video_Images" / "my_video_tool_for_Video_Images"
    write(folder / "search_videos.json", {str({"q": "cats", "page": 1}): {"error": "", "response": {"n": 3}}})
    write(folder / "is_from.json", {str({}): {"error": "", "response": "from"}})
    write(folder / "broken.json", "{broken")
    return root


def test_the_cache_is_keyed_by_the_repr_of_the_input(tmp_path):
    cache = ResponseCache(make_cache(tmp_path))
    hit = cache.lookup("Video, Images", "My Video Tool", "Search Videos", {"q": "cats", "page": 1})
    assert hit == {"error": "", "response": {"n": 3}}
    assert cache.lookup("Video_Images", "my_video_tool_for_Video_Images", "search_videos", {"q": "cats", "page": 1})
    assert cache.lookup("Video, Images", "My Video Tool", "Search Videos", {"page": 1, "q": "cats"}) is None  # order
    assert cache.lookup("Video, Images", "My Video Tool", "Search Videos", {"q": "dogs", "page": 1}) is None
    assert cache.lookup("Video, Images", "My Video Tool", "from", {}) == {"error": "", "response": "from"}


def test_missing_broken_and_unsafe_cache_files_are_misses(tmp_path, monkeypatch):
    cache = ResponseCache(make_cache(tmp_path))
    assert cache.lookup("Video, Images", "My Video Tool", "Broken", {}) is None
    assert cache.lookup("Video, Images", "Other Tool", "Search Videos", {}) is None
    assert cache.lookup("Nowhere", "My Video Tool", "Search Videos", {}) is None
    assert cache.lookup("..", "My Video Tool", "Search Videos", {}) is None
    assert ResponseCache(tmp_path / "absent").lookup("Video, Images", "My Video Tool", "Search Videos", {}) is None
    monkeypatch.setattr(original, "MAX_CACHE_FILE", 10)
    assert ResponseCache(tmp_path).lookup("Video, Images", "My Video Tool", "from", {}) is None  # too large


def test_cache_files_are_read_once(tmp_path):
    cache = ResponseCache(make_cache(tmp_path))
    call = ("Video, Images", "My Video Tool", "Search Videos", {"q": "cats", "page": 1})
    assert cache.lookup(*call) is not None
    cache.path(*call[:3]).unlink()
    assert cache.lookup(*call) is not None


# --- the backend ----------------------------------------------------------------------------------


def test_the_backend_prefers_the_cache_then_says_it_made_up_a_placeholder(tmp_path):
    backend = OriginalBackend([API], cache_dir=make_cache(tmp_path))
    body, source = backend.call("Video, Images", "My Video Tool", "Search Videos", {"q": "cats", "page": 1})
    assert (body, source) == ({"error": "", "response": {"n": 3}}, "cache")
    body, source = backend.call("Video, Images", "my_video_tool", "search_videos", {"q": "dogs"})
    assert source == "placeholder" and body == {"error": "", "response": simulate_response(API, {"q": "dogs"})}
    without_cache = OriginalBackend([API]).call("Video, Images", "My Video Tool", "Search Videos", {"q": "cats"})
    assert without_cache[1] == "placeholder"


def test_an_api_outside_the_list_does_not_exist():
    body, source = OriginalBackend([API]).call("Video, Images", "My Video Tool", "Delete Videos", {})
    assert (body, source) == ({"error": "", "response": {"message": "API doesn't exists"}}, "placeholder")


# --- the simulator --------------------------------------------------------------------------------


def test_simulation_is_deterministic_and_depends_on_the_arguments():
    first = simulate_response(API, {"q": "cats", "page": 2})
    assert first == simulate_response(dict(API), {"page": 2, "q": "cats"})
    assert first != simulate_response(API, {"q": "dogs", "page": 2})
    assert first != simulate_response({**API, "api_name": "Other"}, {"q": "cats", "page": 2})


def test_simulation_follows_the_template():
    value = simulate_response(API, {"q": "cats", "page": 2})
    assert list(value) == ["status", "count", "score", "ok", "next", "related", "videos", "meta"]
    assert isinstance(value["status"], str) and "status" in value["status"]
    assert type(value["count"]) is int and type(value["score"]) is float and type(value["ok"]) is bool
    assert value["next"] is None and value["related"] == []
    assert len(value["videos"]) == 3 and all(list(video) == ["title", "id", "tags"] for video in value["videos"])
    assert all(
        len(video["tags"]) == MAX_LIST and all(isinstance(t, str) for t in video["tags"]) for video in value["videos"]
    )
    assert value["meta"] == {"query": "cats", "page": 2}  # fields named like an argument echo it
    assert value["videos"][0]["title"] == "cats"  # a title-like field echoes the text argument


def test_simulation_without_a_template_is_a_generic_object():
    for template in (None, '{"cut": "str", "off', 3):
        value = simulate_response({**API, "template_response": template}, {"q": "cats"})
        assert set(value) == {"message", "query", "result"}
        assert value["query"] == {"q": "cats"} and "Search Videos" in value["message"]
    assert "template_response" not in {"api_name": "A"} and simulate_response({"api_name": "A"}, {})["query"] == {}


def nodes_and_depth(value: object) -> tuple[int, int]:
    """Node count (beyond the root) and depth of non-empty containers, without recursion."""
    count, deepest, stack = 0, 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)) and item:
            deepest = max(deepest, depth + 1)
            children = item.values() if isinstance(item, dict) else item
            count += len(children)
            stack.extend((child, depth + 1) for child in children)
    return count, deepest


def test_pathological_templates_are_bounded():
    deep_dict: object = "str"
    deep_list: object = "int"
    for _ in range(10_000):
        deep_dict, deep_list = {"a": deep_dict}, [deep_list]
    cyclic: dict = {}
    cyclic["self"] = [cyclic, cyclic]
    templates = [
        deep_dict,
        deep_list,
        cyclic,
        {f"k{i}": "str" for i in range(100_000)},
        [{"a": {"b": "str", "_list_length": 10**9}, "_list_length": 10**12}],
        ["list of str with length 99999999999999999999999"],
    ]
    for template in templates:
        value = simulate_response({"api_name": "x", "template_response": template}, {"q": "x"})
        count, depth = nodes_and_depth(value)
        assert count <= MAX_ITEMS and depth <= MAX_DEPTH
        json.dumps(value)
    assert len(simulate_response({"template_response": templates[-1]}, {})) == MAX_LIST


def expected_items(template: list) -> list:
    """The item templates ToolBench's length markers stand for, before our cap."""
    if len(template) == 1 and isinstance(template[0], dict) and "_list_length" in template[0]:
        return [template[0]] * template[0]["_list_length"]
    if len(template) == 1 and isinstance(template[0], str) and template[0].startswith("list of "):
        _, _, kind, _, _, length = template[0].split()
        return [kind] * int(length)
    return template


LEAF_TYPES = {"int": int, "float": float, "bool": bool, "NoneType": type(None), "empty list": list, "list": list}


def check_shape(template: object, value: object, full: bool) -> None:
    """``value`` has the template's shape; without ``full`` the caps may have cut containers short."""
    if isinstance(template, dict):
        keys = [key for key in template if key != "_list_length"]
        assert isinstance(value, dict) and list(value) == keys[: len(value)]
        assert not full or len(value) == len(keys)
        for key, item in value.items():
            check_shape(template[key], item, full)
    elif isinstance(template, list):
        items = expected_items(template)
        assert isinstance(value, list) and len(value) <= min(len(items), MAX_LIST)
        assert not full or len(value) == min(len(items), MAX_LIST)
        for item_template, item in zip(items, value):
            check_shape(item_template, item, full)
    else:
        assert type(value) is LEAF_TYPES.get(template, str)


def within_caps(template: object) -> bool:
    """Whether a template fits MAX_DEPTH and MAX_ITEMS once its lists are capped."""

    def size(item: object, depth: int) -> tuple[int, int]:
        if isinstance(item, dict):
            parts = [size(v, depth + 1) for k, v in item.items() if k != "_list_length"]
        elif isinstance(item, list):
            parts = [size(v, depth + 1) for v in expected_items(item)[:MAX_LIST]]
        else:
            return 1, depth
        return 1 + sum(n for n, _ in parts), max([depth + 1] + [d for _, d in parts])

    nodes, depth = size(template, 0)
    return nodes - 1 <= MAX_ITEMS and depth <= MAX_DEPTH


@needs_refdata
def test_simulation_fits_every_api_of_the_765_queries():
    shaped = generic = full = 0
    for query in all_queries():
        for api in query["api_list"]:
            parameters = api.get("required_parameters", []) + api.get("optional_parameters", [])
            arguments = {change_name(standardize(p["name"])): p.get("default") or "x" for p in parameters}
            value = simulate_response(api, arguments)
            json.dumps(value, allow_nan=False)
            assert value == simulate_response(api, arguments)
            template = api.get("template_response")
            if isinstance(template, (dict, list)):
                fits = within_caps(template)
                check_shape(template, value, fits)
                shaped, full = shaped + 1, full + fits
            else:
                assert set(value) == {"message", "query", "result"}
                generic += 1
    assert shaped > 2000 and generic > 1000 and full > 0.95 * shaped


SUBPROCESS = """
import json, sys
from toolbench.mock_services.rapidapi.original import simulate_response
calls = json.load(sys.stdin)
sys.stdout.write(json.dumps([simulate_response(api, args) for api, args in calls]))
"""


@pytest.mark.slow
def test_simulation_is_identical_in_another_process():
    calls = [
        (API, {"q": "cats", "page": 2}),
        ({**API, "template_response": None}, {"q": "ünïcödé", "n": 1.5, "flag": True}),
        ({"api_name": "Only a name"}, {}),
    ]
    expected = json.dumps([simulate_response(api, args) for api, args in calls])
    for hash_seed in ("1", "4242"):
        result = subprocess.run(
            [sys.executable, "-c", SUBPROCESS],
            input=json.dumps(calls),
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            timeout=120,
            check=True,
        )
        assert result.stdout.encode() == expected.encode()
