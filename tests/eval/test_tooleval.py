"""ToolEval: reading converted answers (theirs and ours), the judge's steps and cache, vote counting
(Unsure, ties, SoPR), the win rate, and the deterministic rule for our RapidAPI tasks."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest
from flask import Flask

import toolbench  # noqa: F401
from tests.eval.fake_llm import scripted_endpoint, tool_call_message
from toolbench.agents.client import ChatClient
from toolbench.cli import main
from toolbench.core.transport import ServedApp
from toolbench.eval.tooleval import (
    PASS,
    SOLVABLE,
    SOLVED,
    UNSOLVABLE,
    UNSOLVED,
    UNSURE,
    Answer,
    ChatJudge,
    combined,
    load_answers,
    pass_rate,
    rule_pass_rate,
    win_rate,
)

STB = "toolllm/StableToolBench/data_example/model_predictions_converted/virtual_chatgpt_cot/G1_instruction.json"
STB_RESULTS = (
    "toolllm/StableToolBench/data_example/pass_rate_results/virtual_chatgpt_cot/G1_instruction_virtual_chatgpt_cot.json"
)
TB = "toolllm/ToolBench/toolbench/tooleval/results/default_evalset/gpt-3.5-turbo_CoT/G1_instruction.json"


def judge_app(decide) -> Flask:
    """A scripted judge: answers each forced function call with ``decide(function, payload)``."""

    def reply(body):
        function = body["tools"][0]["function"]["name"]
        payload = json.loads(body["messages"][-1]["content"])
        field = "index" if function == "better" else "status"
        return tool_call_message(function, {"reason": "scripted", field: decide(function, payload)})

    return scripted_endpoint(reply)


def by_length(function, payload):
    """Solved when the final answer is long, Unsure when short (then the whole run decides: Solved)."""
    if function == "answer_status":
        return SOLVED if len(payload["final_answer"]) > 400 else UNSURE
    if function == "parse_answer_status":
        return SOLVED
    if function == "task_solvable":
        return SOLVABLE
    return 0


def test_their_converted_answers_load_and_are_scored_with_a_judge(refdata, tmp_path):
    answers = load_answers(refdata / TB)
    assert len(answers) == 100
    sample = next(iter(answers.values()))
    assert sample.tool_steps() and isinstance(sample.tool_steps()[0], dict)
    finished = [a for a in answers.values() if a.finished() and not a.gave_up()]
    app = judge_app(by_length)
    with ServedApp(app) as served:
        judge = ChatJudge(ChatClient("judge", base_url=f"{served.url}/v1"), cache_dir=tmp_path)
        report = pass_rate(answers, answers, judge, votes=2)
        assert report.rate == len(finished) / 100  # every finished answer is Solved, at once or after parsing
        calls = app.config["calls"]
        again = pass_rate(
            answers, answers, ChatJudge(ChatClient("judge", base_url=f"{served.url}/v1"), tmp_path), votes=2
        )
        assert app.config["calls"] == calls and again.queries == report.queries  # the cache answers a re-run
    # StableToolBench's example run: 588 never called Finish, so it is Unsolved without asking the
    # judge, as in its pass-rate results; a judge that solves the others gives SoPR 2/3.
    stb = load_answers(refdata / STB)
    results = json.loads((refdata / STB_RESULTS).read_text())
    solved = pass_rate(
        stb, sorted(stb), Scripted({stb[q].query: [SOLVED] * 3 for q in ("1073", "608")}), votes=3, count="sopr"
    )
    assert {q: entry["votes"] for q, entry in solved.queries.items()} == {
        q: [v.removeprefix("AnswerStatus.") for _, v in sorted(r["is_solved"].items())] for q, r in results.items()
    }
    assert solved.rate == pytest.approx(2 / 3)


class Scripted:
    """A judge whose verdicts are given per query and vote."""

    name = "scripted"

    def __init__(self, statuses, solvable=SOLVABLE, better=None):
        self.statuses, self.solvable, self.prefer = statuses, solvable, better

    def answer_status(self, query, final_answer, vote=0):
        return self.statuses[query][vote]

    def parse_answer_status(self, query, answer, vote=0):
        return UNSURE

    def task_solvable(self, query, tools, vote=0):
        return self.solvable

    def better(self, query, first, second, vote=0):
        return 0 if "GOOD" in first["final_answer"] else 1


def answer(qid: str, final: str = '{"return_type": "give_answer", "final_answer": "x"}') -> Answer:
    finish = {"role": "tool", "message": str({"name": "Finish", "arguments": final, "response": ""}), "next": []}
    details = [{"role": "system", "message": "", "next": [{"role": "user", "message": qid, "next": [finish]}]}]
    return Answer(qid, qid, [], "m", 3, final, details)


def test_votes_are_counted_as_toolbench_and_as_stabletoolbench_count_them():
    answers = {q: answer(q) for q in ("tie", "mostly", "unsure")}
    statuses = {
        "tie": [SOLVED, UNSOLVED, UNSOLVED, SOLVED],  # two passes, two fails: ties pass
        "mostly": [UNSOLVED, UNSOLVED, UNSOLVED, SOLVED],
        "unsure": [UNSURE] * 4,  # each unsure vote is a seeded coin flip
    }
    ids = [*answers, "missing"]  # a query without an answer fails: the denominator is the whole set
    report = pass_rate(answers, ids, Scripted(statuses), votes=4)
    assert report.queries["tie"]["passed"] and not report.queries["mostly"]["passed"]
    assert not report.queries["missing"]["passed"]
    assert (
        report.queries["unsure"]["labels"]
        == pass_rate(answers, ids, Scripted(statuses), votes=4).queries["unsure"]["labels"]
    )
    assert report.rate == sum(q["passed"] for q in report.queries.values()) / 4
    sopr = pass_rate(answers, ids, Scripted(statuses), votes=4, count="sopr")
    assert sopr.queries["unsure"]["score"] == 0.5 and sopr.queries["mostly"]["score"] == 0.25
    assert sopr.rate == pytest.approx((0.5 + 0.25 + 0.5 + 0) / 4) and sopr.spread > 0
    unsolvable = pass_rate(answers, ["mostly"], Scripted(statuses, solvable=UNSOLVABLE), votes=4)
    assert unsolvable.queries["mostly"]["passed"]  # Unsolved on an unsolvable task passes, as in ToolBench
    assert combined(UNSURE, UNSOLVABLE) == PASS and combined(UNSOLVED, UNSURE) == UNSURE


def test_a_run_that_gave_up_or_never_finished_is_unsolved_without_asking():
    gave_up = answer("g", '{"return_type": "give_up_and_restart"}')
    unfinished = Answer("u", "u", [], "m", 2, "", [{"role": "system", "message": "", "next": []}])
    report = pass_rate({"g": gave_up, "u": unfinished}, ["g", "u"], Scripted({}), votes=2)
    assert report.rate == 0.0 and report.queries["g"]["votes"] == [UNSOLVED, UNSOLVED]


def test_win_rate_passed_beats_failed_then_the_judge_or_the_tie_breakers():
    mine = {"a": answer("a", "GOOD"), "b": answer("b", "meh"), "c": answer("c")}
    theirs = {"a": answer("a", "meh"), "b": answer("b", "GOOD"), "c": answer("c")}
    passed_mine, passed_theirs = {"a": True, "b": True, "c": False}, {"a": True, "b": True, "c": True}
    report = win_rate(mine, theirs, ["a", "b", "c"], passed_mine, passed_theirs, judge=Scripted({}), votes=4)
    assert report.queries == {"a": "win", "b": "loss", "c": "loss"}  # the judge sees both orders
    tied = win_rate(mine, mine, ["a", "b", "c"], passed_mine, passed_mine)
    assert tied.ties == 3 and tied.rate == 0.5


def test_our_runs_convert_to_toolevals_format_and_score_by_our_rule(tmp_path, refdata):
    for agent in ("oracle", "random"):
        assert main(["eval", "--agent", agent, "--task", "RapidAPI", "--split", "G3_instruction", "--limit", "20",
                     "--out", str(tmp_path / agent)]) == 0  # fmt: skip
        assert (
            main(["tooleval", "convert", "--run", str(tmp_path / agent), "--out", str(tmp_path / f"{agent}.json")]) == 0
        )
    ours = json.loads((tmp_path / "oracle.json").read_text())
    theirs = json.loads((refdata / STB).read_text())
    record, reference = next(iter(ours.values())), next(iter(theirs.values()))
    assert set(record) == set(reference) and set(record["answer"]) == set(reference["answer"])
    roles = []
    level = record["answer"]["answer_details"]
    while level:
        roles.append(level[0]["role"])
        level = level[0]["next"]
    assert roles[:2] == ["system", "user"] and set(roles[2:]) == {"tool"}
    env = gym.make("toolbench/RapidAPI-v0", split="G3_instruction").unwrapped
    oracle = rule_pass_rate(load_answers(tmp_path / "oracle.json"), env.tasks[:20])
    random = rule_pass_rate(load_answers(tmp_path / "random.json"), env.tasks[:20])
    assert oracle.rate == 1.0 and random.rate < 0.2
    out = tmp_path / "win.json"
    assert main(["tooleval", "win", "--answers", str(tmp_path / "random.json"), "--reference", str(tmp_path / "oracle.json"),
                 "--rule", "G3_instruction", "--out", str(out)]) == 0  # fmt: skip
    assert json.loads(out.read_text())["losses"] >= 16


def test_the_cli_needs_a_rule_or_a_judge(tmp_path, capsys):
    path = Path(tmp_path / "a.json")
    path.write_text(json.dumps({"1": {"query": "q", "available_tools": [], "answer": {"final_answer": ""}}}))
    assert main(["tooleval", "pass", "--answers", str(path)]) == 2
    assert "--rule" in capsys.readouterr().err


def test_the_table_of_pass_and_win_rates_per_test_set(tmp_path, capsys):
    for agent in ("oracle", "random"):
        assert (
            main(["eval", "--agent", agent, "--task", "RapidAPI", "--limit", "30", "--out", str(tmp_path / agent)]) == 0
        )
    capsys.readouterr()
    assert main(["tooleval", "table", "--run", f"oracle={tmp_path / 'oracle'}", "--run", f"random={tmp_path / 'random'}",
                 "--reference", "oracle"]) == 0  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    assert "G3_instruction win" in lines[0] and lines[2].startswith("oracle") and lines[3].startswith("random")
    oracle, random = (float(line.split()[-2]) for line in lines[2:4])
    assert oracle > random  # the average pass rates (queries without an answer count as failed)


def test_no_finish_fails_whatever_the_judge_thinks_of_the_task():
    unfinished = Answer("u", "u", [], "m", 2, "", [{"role": "system", "message": "", "next": []}])
    report = pass_rate({"u": unfinished}, ["u"], Scripted({}, solvable=UNSOLVABLE), votes=4)
    assert report.queries["u"]["labels"] == ["fail"] * 4 and report.rate == 0.0


@pytest.mark.parametrize(
    "content",
    [
        '{"1": []}',
        '{"1": {"answer": {"total_steps": [1]}}}',
        '{"1": {"answer": {"answer_details": "x"}}}',
        '{"1": {"answer": {"answer_details": [{"role": "tool", "message": "{[1]: 2}", "next": 5}]}}}',
        "[" * 100_000 + "]" * 100_000,
        '"just text"',
    ],
)
def test_malformed_answer_files_are_reported_not_raised(tmp_path, capsys, content):
    path = tmp_path / "a.json"
    path.write_text(content)
    code = main(["tooleval", "pass", "--answers", str(path), "--rule", "G1_instruction"])
    assert code in (0, 2)  # read (what can be read of a broken chain) or refused with a message
    if code == 2:
        assert "toolbench tooleval pass:" in capsys.readouterr().err
    ids = tmp_path / "ids.json"
    ids.write_text('"not ids"')
    assert main(["tooleval", "pass", "--answers", str(path), "--ids", str(ids), "--judge-model", "m"]) == 2


def test_a_null_answer_is_empty():
    from toolbench.eval.tooleval import load_answers_from

    answer = load_answers_from({"1": {"answer": {"final_answer": None}}})["1"]
    assert answer.final_answer == "" and answer.gave_up()
