"""Original queries replayed from a StableToolBench response cache: each call says where its
response came from, a run records the counts, and ToolEval rates only queries whose calls were all
answered. The cache folder is built here in StableToolBench's layout, with our own content."""

from __future__ import annotations

import json
import re
from pathlib import Path

import gymnasium as gym

import toolbench  # noqa: F401  (registers the env ids)
from tests.eval.fake_llm import scripted_endpoint, tool_call_message
from toolbench.cli import main
from toolbench.core.transport import ServedApp

API = {
    "category_name": "Video, Images",
    "tool_name": "My Video Tool",
    "api_name": "Search Videos",
    "api_description": "Videos about a topic.",
    "required_parameters": [{"name": "q", "type": "STRING", "description": "topic", "default": ""}],
    "optional_parameters": [],
    "method": "GET",
    "template_response": {"videos": [{"title": "str", "link": "str", "_list_length": 2}]},
}
FUNCTION = "search_videos_for_my_video_tool"
RECORDED = {"error": "", "response": {"videos": [{"title": "Cats at play", "link": "https://v.example/1"}]}}


def call(topic: str) -> str:
    return json.dumps({"name": FUNCTION, "arguments": {"q": topic}})


def finish(text: str) -> str:
    return json.dumps({"name": "Finish", "arguments": {"return_type": "give_answer", "final_answer": text}})


def make_cache(root: Path) -> Path:
    """StableToolBench's layout: {category}/{tool}_for_{category}/{api}.json, keyed by str(tool_input)."""
    folder = root / "Video_Images" / "my_video_tool_for_Video_Images"
    folder.mkdir(parents=True)
    (folder / "search_videos.json").write_text(json.dumps({str({"q": "cats"}): RECORDED}))
    return root


def query_records(path: Path) -> Path:
    """Two original queries, each with its calls: one the cache holds, one it does not."""
    records = [
        {"query": "Find videos of cats.", "query_id": 1, "api_list": [API], "original": True,
         "completion": [call("cats"), finish("Cats at play: https://v.example/1")]},
        {"query": "Find videos of dogs.", "query_id": 2, "api_list": [API], "original": True,
         "completion": [call("cats"), call("dogs"), finish("Some dog videos.")]},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_each_call_says_whether_the_cache_answered_it(tmp_path):
    env = gym.make("toolbench/RapidAPI-v0", task_file=query_records(tmp_path / "q.jsonl"),
                   cache_dir=make_cache(tmp_path / "cache")).unwrapped  # fmt: skip
    env.reset(options={"task_id": env.tasks[1].id})
    observation, *_ = env.step(call("cats"))
    assert json.loads(observation) == RECORDED  # the recorded response, as stored
    observation, *_ = env.step(call("dogs"))
    assert json.loads(observation)["response"]["videos"][0]["link"].startswith("link-")  # a made-up value
    env.step(json.dumps({"name": "no_such_function", "arguments": {}}))  # reaches no API: not counted
    *_, info = env.step(finish("Some dog videos."))
    assert info["call_sources"] == {"cache": 1, "simulated": 0, "placeholder": 1} and info["passed"] is None
    without = gym.make("toolbench/RapidAPI-v0", task_file=tmp_path / "q.jsonl").unwrapped
    without.reset(options={"task_id": without.tasks[0].id})
    without.step(call("cats"))
    assert without.step(finish("x"))[-1]["call_sources"] == {"cache": 0, "simulated": 0, "placeholder": 1}
    hub = gym.make("toolbench/RapidAPI-v0", split="G1_instruction").unwrapped
    hub.reset(options={"task_id": hub.tasks[0].id})
    *_, info = [hub.step(action) for action in hub.oracle_actions(hub.tasks[0])][-1]
    assert info["call_sources"]["simulated"] >= 1 and info["call_sources"]["placeholder"] == 0


def judge(body: dict) -> dict:
    """A judge that calls every finished answer Solved (so it is asked nothing else)."""
    return tool_call_message(body["tools"][0]["function"]["name"], {"reason": "scripted", "status": "Solved"})


def test_tooleval_rates_only_queries_whose_calls_were_all_answered(tmp_path, capsys):
    queries, cache, run = query_records(tmp_path / "q.jsonl"), make_cache(tmp_path / "cache"), tmp_path / "run"
    assert main(["eval", "--agent", "oracle", "--task", "RapidAPI", "--task-file", str(queries), "--cache", str(cache),
                 "--out", str(run), "--quiet"]) == 0  # fmt: skip
    captured = capsys.readouterr()
    assert "1 of 2 RapidAPI episodes got a placeholder response (1 of 3 calls" in captured.err
    assert json.loads((run / "run.json").read_text())["settings"]["cache_dir"] == str(cache.resolve())
    row = json.loads((run / "summary.json").read_text())["tasks"]["RapidAPI"]
    assert row["calls_answered"] == 2 / 3 and row["episodes_all_answered"] == 0.5
    records = [json.loads(line) for line in (run / "trajectories.jsonl").read_text().splitlines()]
    assert [r["info"]["call_sources"]["placeholder"] for r in records] == [0, 1]
    converted = tmp_path / "converted.json"
    assert main(["tooleval", "convert", "--run", str(run), "--out", str(converted)]) == 0
    assert json.loads(converted.read_text())["2"]["answer"]["call_sources"] == {"cache": 1, "simulated": 0,
                                                                                 "placeholder": 1}  # fmt: skip
    with ServedApp(scripted_endpoint(judge)) as served:
        command = ["tooleval", "pass", "--answers", str(converted), "--judge-model", "judge", "--judge-url",
                   f"{served.url}/v1", "--cache", str(tmp_path / "judged"), "--votes", "1", "--out",
                   str(tmp_path / "pass.json")]  # fmt: skip
        capsys.readouterr()
        assert main(command) == 0
        assert capsys.readouterr().out.strip() == (
            "pass rate (toolbench): 100.0, judged 1 of 1 queries (1 answered); over the 1 queries whose calls "
            "were all answered (cache or hub), 1 left out: a call got a placeholder response"
        )
        report = json.loads((tmp_path / "pass.json").read_text())
        assert (report["total"], report["excluded"], report["excluded_queries"]) == (1, 1, ["2"])
        assert main([*command, "--include-placeholders"]) == 0
        assert "judged 2 of 2 queries (2 answered); placeholder responses counted" in capsys.readouterr().out


# ---------------------------------------------------------------------- their recorded calls, replayed
STB = "toolllm/StableToolBench"


def standard(name: str) -> str:
    """ToolBench's ``standardize``, written out again for this test."""
    name = re.sub(r"[^\u4e00-\u9fa5^a-zA-Z0-9_]", "_", name)
    name = re.sub(r"_+", "_", name).lower().strip("_")
    return f"get_{name}" if name[:1].isdigit() else name


def recorded_calls(refdata: Path) -> list[tuple[int, str, str, str]]:
    """(query id, function, arguments text, observation) of every answered call in StableToolBench's
    example answers (CoT chains and DFS trees) of G1_instruction."""
    calls = []
    for path in sorted((refdata / STB / "data_example" / "answer").glob("*/G1_instruction/*.json")):
        data = json.loads(path.read_text())
        pending = [data["tree"]["tree"]] if "tree" in data else [n for run in data["trys"] for n in run["chain"]]
        nodes = []
        while pending:
            node = pending.pop(0)
            nodes.append(node)
            pending[0:0] = node.get("children", [])
        for action, given in zip(nodes, nodes[1:]):
            if action["node_type"] == "Action" and given["node_type"] == "Action Input" and action["description"] != \
                    "Finish" and given.get("observation_code") == 0 and not given["observation"].endswith("..."):  # fmt: skip
                calls.append((int(path.name.split("_")[0]), action["description"], given["description"],
                              given["observation"]))  # fmt: skip
    return calls


def test_their_recorded_calls_replay_from_a_cache_in_their_layout(refdata, tmp_path):
    queries = {q["query_id"]: q for q in json.loads((refdata / STB / "solvable_queries" / "test_instruction" /
                                                     "G1_instruction.json").read_text())}  # fmt: skip
    calls, files, places = recorded_calls(refdata), {}, []
    for query_id, function, arguments, seen in calls:
        api, _, tool = function.partition("_for_")
        entry = next(e for e in queries[query_id]["api_list"] if standard(e["tool_name"]) == tool)
        category = entry["category_name"].replace(" ", "_").replace(",", "_").replace("/", "_").replace("__", "_")
        path = tmp_path / "cache" / category / f"{tool}_for_{category}" / f"{api}.json"
        key = str(json.loads(arguments))  # the Python text of the parsed input, as their server keys it
        files.setdefault(path, {}).setdefault(key, set()).add(seen)
        places.append((path, key))
    for path, entries in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({key: json.loads(min(seen)) for key, seen in entries.items()}))
    # A call made in two runs that saw different responses (their simulator at work) is left out.
    once = [call for call, (path, key) in zip(calls, places) if len(files[path][key]) == 1]
    assert (len(calls), len(once)) == (34, 28)
    env = gym.make("toolbench/RapidAPI-v0", cache_dir=tmp_path / "cache",
                   query_file=refdata / STB / "solvable_queries" / "test_instruction" / "G1_instruction.json").unwrapped  # fmt: skip
    for query_id, function, arguments, seen in once:
        env.reset(options={"task_id": next(t.id for t in env.tasks if t.get("query_id") == query_id)})
        observation, *_ = env.step(json.dumps({"name": function, "arguments": arguments}))
        assert observation == seen  # the same bytes their env showed the model
        assert env.step(finish("done"))[-1]["call_sources"] == {"cache": 1, "simulated": 0, "placeholder": 0}


def test_cache_is_a_rapidapi_option_and_must_be_a_folder(tmp_path, capsys):
    assert main(["eval", "--agent", "oracle", "--task", "OpenWeather", "--cache", str(tmp_path), "--limit", "1"]) == 2
    assert "--cache applies to --task RapidAPI only" in capsys.readouterr().err
    assert main(["eval", "--agent", "oracle", "--task", "RapidAPI", "--cache", str(tmp_path / "absent")]) == 2
    assert "no such folder" in capsys.readouterr().err
    assert main(["serve", "webshop", "--cache", str(tmp_path)]) == 2
    assert main(["serve", "rapidapi", "--cache", str(tmp_path / "absent")]) == 2
