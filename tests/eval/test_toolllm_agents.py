"""ToolLLM's ReACT@N and DFSDT against a scripted chat endpoint: DFSDT abandons a branch that gives
up, restores the world, and finds the answer on the next branch; ReACT@N stops at the first pass;
the query budget stops the search; a malformed reply is an error step, not a crash."""

from __future__ import annotations

import json

from flask import Flask

from tests.eval.fake_llm import scripted_endpoint, tool_call_message
from toolbench.agents import make_agent
from toolbench.agents.client import ChatClient
from toolbench.agents.toolllm import ToolLLMAgent
from toolbench.core.tasks import Task
from toolbench.core.transport import ServedApp
from toolbench.envs.rapidapi import RapidAPIEnv
from toolbench.mock_services.rapidapi.catalog import api_record, hub


def storage():
    tool = next(t for t in hub().tools if t.category == "Storage" and t.apis[0].key == "storage.upload")
    upload = next(a for a in tool.apis if a.key == "storage.upload")
    listing = next(a for a in tool.apis if a.key == "storage.list")
    return tool, tool.function(upload), tool.function(listing), [api_record(tool, upload), api_record(tool, listing)]


def files_task() -> Task:
    tool, _, listing, api_list = storage()
    step = {"function": listing, "tool_name": tool.name, "api_name": "", "arguments": {}, "depends_on": [],
            "holds_facts": True}  # fmt: skip
    record = {"api_list": api_list, "solution": [step], "answer_facts": ["0"], "solvable": True}
    return Task("files", "How many files do I have stored?", (), "G1_instruction", record)


def model_app(decide) -> Flask:
    """An OpenAI-compatible endpoint whose reply is ``decide(messages, count)``: a (name, arguments)
    call, or text."""
    app = None

    def reply(body):
        decided = decide(body["messages"], app.config["calls"])
        if isinstance(decided, str):
            return {"role": "assistant", "content": decided}
        return tool_call_message(*decided, call_id=f"c{app.config['calls']}", content="thinking")

    app = scripted_endpoint(reply)
    return app


def answer(text: str):
    return "Finish", {"return_type": "give_answer", "final_answer": text}


GIVE_UP = ("Finish", {"return_type": "give_up_and_restart"})


def explorer(messages, count):
    """First branch: upload a file, then give up. Next branch (asked for something new): list the
    files and report how many there are."""
    _, upload, listing, _ = storage()
    last = messages[-1]
    if last["role"] == "tool":
        response = json.loads(last["content"].removesuffix("..."))["response"]
        return GIVE_UP if "sha256" in json.dumps(response) else answer(f"You have {response['count']} files.")
    if "not your first try" in last["content"]:
        return listing, {}
    return upload, {"name": "junk.txt", "content": "x"}


def play(agent: ToolLLMAgent, env: RapidAPIEnv, task: Task):
    observation, info = env.reset(options={"task_id": task.id})
    agent.begin(env, task, observation, info)
    while True:
        observation, reward, terminated, truncated, info = env.step(agent.act(observation, info))
        if terminated or truncated:
            return reward, info


def test_dfsdt_abandons_a_branch_that_gives_up_restores_the_world_and_finds_the_answer():
    task = files_task()
    with ServedApp(model_app(explorer)) as served:
        for restore, expected in ((True, 1.0), (False, 0.0)):
            client = ChatClient("scripted", base_url=f"{served.url}/v1")
            agent = ToolLLMAgent("scripted", "dfsdt", client=client, restore=restore)
            reward, info = play(agent, RapidAPIEnv(tasks=[task]), task)
            tree = agent.episode_log()["tree"]
            assert tree["children"][0]["children"][0]["pruned"]  # the upload branch gave up
            # With the world restored, the second branch sees no files; without, it sees the junk one.
            assert reward == expected, (restore, info["final_answer"])


def test_react_at_n_stops_at_the_first_chain_that_answers():
    task = files_task()
    _, _, listing, _ = storage()

    def tries(messages, count):
        if messages[-1]["role"] != "tool":
            return listing, {}
        return GIVE_UP if count <= 2 else answer("You have 0 files.")

    app = model_app(tries)
    with ServedApp(app) as served:
        agent = ToolLLMAgent("scripted", "react", tries=5, client=ChatClient("scripted", base_url=f"{served.url}/v1"))
        reward, _ = play(agent, RapidAPIEnv(tasks=[task]), task)
        assert reward == 1.0 and app.config["calls"] == 4  # a chain that gave up, one that answered; three unused

    def wrong(messages, count):  # an answer ends the search, right or wrong: ReACT does not peek at the grade
        return (listing, {}) if messages[-1]["role"] != "tool" else answer("You have 7 files.")

    app = model_app(wrong)
    with ServedApp(app) as served:
        agent = ToolLLMAgent("scripted", "react", tries=5, client=ChatClient("scripted", base_url=f"{served.url}/v1"))
        reward, _ = play(agent, RapidAPIEnv(tasks=[task]), task)
        assert reward == 0.0 and app.config["calls"] == 2


def test_the_query_budget_stops_the_search_and_malformed_replies_are_error_steps():
    task = files_task()
    _, _, listing, _ = storage()

    def stubborn(messages, count):
        return "I will not call anything." if count % 2 else (listing, {})

    app = model_app(stubborn)
    with ServedApp(app) as served:
        agent = ToolLLMAgent("scripted", "dfsdt", client=ChatClient("scripted", base_url=f"{served.url}/v1"), budget=5)
        reward, info = play(agent, RapidAPIEnv(tasks=[task]), task)
        log = agent.episode_log()
        assert reward == 0.0 and log["query_count"] == 5 and app.config["calls"] == 5  # the tree had room for 8
        assert log["errors"] and "no function call" in log["errors"][0]
    one = ToolLLMAgent("scripted", "dfsdt", client=ChatClient("scripted", base_url="http://127.0.0.1:9/v1"), budget=0)
    assert one.solve(RapidAPIEnv(tasks=[task]))[1]["query_count"] == 0  # no budget, no call


def test_dfsdt_solves_an_env_from_python():
    from toolbench.agents import DFSDT

    task = files_task()
    with ServedApp(model_app(explorer)) as served:
        actions, log = DFSDT("scripted", client=ChatClient("scripted", base_url=f"{served.url}/v1")).solve(
            RapidAPIEnv(tasks=[task])
        )
    assert json.loads(actions[-1])[-1]["name"] == "Finish" and log["answer_file"]["win"] is True


def test_text_replies_in_react_format_are_calls_and_agents_are_named_on_the_command_line():
    task = files_task()
    _, _, listing, _ = storage()

    def text_only(messages, count):
        if messages[-1]["role"] != "tool":
            return f"Thought: list them.\nAction: {listing}\nAction Input: {{}}"
        return 'Thought: done.\nAction: Finish\nAction Input: {"return_type": "give_answer", "final_answer": "0 files"}'

    with ServedApp(model_app(text_only)) as served:
        agent = ToolLLMAgent("scripted", "react", client=ChatClient("scripted", base_url=f"{served.url}/v1"))
        reward, _ = play(agent, RapidAPIEnv(tasks=[task]), task)
        assert reward == 1.0
    assert make_agent("react@3:m").name == "react@3:m" and make_agent("dfsdt:m").name == "dfsdt:m"


def test_toolbench_eval_runs_dfsdt_and_keeps_the_tree(tmp_path, monkeypatch):
    from toolbench.cli import main

    record = {"id": "files", "category": "G1_instruction", "query": files_task().prompt, **dict(files_task().extra)}
    task_file = tmp_path / "files.jsonl"
    task_file.write_text(json.dumps(record) + "\n")
    with ServedApp(model_app(explorer)) as served:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{served.url}/v1")
        out = tmp_path / "run"
        assert main(["eval", "--agent", "dfsdt:scripted", "--task", "RapidAPI", "--task-file", str(task_file),
                     "--out", str(out)]) == 0  # fmt: skip
        original = tmp_path / "original"
        assert main(["eval", "--agent", "dfsdt:scripted", "--task", "RapidAPI", "--task-file", str(task_file),
                     "--restore", "off", "--out", str(original)]) == 0  # fmt: skip
    assert json.loads((original / "trajectories.jsonl").read_text())["success"] is False  # the junk file stayed
    episode = json.loads((out / "trajectories.jsonl").read_text().splitlines()[0])
    assert episode["success"] is True
    assert episode["agent_log"]["tree"]["children"][0]["children"][0]["pruned"]
    answers = out / "answers"  # --out writes ToolBench's answer files and ToolEval's converted answers
    assert json.loads((out / "converted.json").read_text())["files"]["answer"]["method"] == "dfsdt:scripted"
    raw = json.loads(next(answers.glob("*_dfsdt.json")).read_text())
    assert set(raw) == {"win", "tree", "forward_args", "compare_candidates", "answer_generation"} and raw["win"]
    nodes, level = [], raw["tree"]["tree"]["children"]
    while level:
        nodes.append(level[0]["node_type"])
        level = level[0]["children"]
    assert nodes[:3] == ["Thought", "Action", "Action Input"]
    assert json.loads(raw["answer_generation"]["final_answer"])["return_type"] == "give_answer"
