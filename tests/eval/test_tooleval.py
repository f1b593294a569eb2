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
    JUDGE_ATTEMPTS,
    PASS,
    SOLVABLE,
    SOLVED,
    UNJUDGED,
    UNSOLVABLE,
    UNSOLVED,
    UNSURE,
    Answer,
    ChatJudge,
    JudgeError,
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


def finish_in_last_tool_step(record: dict) -> bool:
    """ToolEval's rule, written out here over the raw record: walk the first ``next`` of each node
    while the node has a ``next`` key; the last tool node with a message is the final step; it
    passes the first check when its text (``str`` of the message) holds ``'name': 'Finish'``."""
    node, final = record["answer"]["answer_details"][0], ""
    while "next" in node:
        if node["message"] and node["role"] == "tool":
            final = f"Final step: {node['message']}"
        if not node["next"]:
            break
        node = node["next"][0]
    return "'name': 'Finish'" in final


def test_toolbench_answers_cut_to_100_characters_are_read_as_tooleval_reads_them(refdata):
    raw = json.loads((refdata / TB).read_text())
    answers = load_answers(refdata / TB)
    assert {qid: a.finished() for qid, a in answers.items()} == {
        qid: finish_in_last_tool_step(record) for qid, record in raw.items()
    }
    assert len(answers) == 100 and sum(a.finished() for a in answers.values()) == 67
    # Their tool messages are the Python text of a dict cut at 100 characters: kept as text, with
    # the function's name read from the part that is there.
    steps = [step for a in answers.values() for step in a.tool_steps()]
    cut = [step for step in steps if "text" in step]
    assert len(cut) > 0.9 * len(steps) and all(len(step["text"]) <= 100 for step in cut)
    assert sum(step["name"] == "Finish" for step in steps) >= 67 and all(step["name"] for step in steps)


def test_their_converted_answers_load_and_are_scored_with_a_judge(refdata, tmp_path):
    answers = load_answers(refdata / TB)
    assert len(answers) == 100
    sample = next(iter(answers.values()))
    assert sample.tool_steps() and isinstance(sample.tool_steps()[0], dict)
    finished = [a for a in answers.values() if a.finished() and not a.gave_up()]
    assert len(finished) == 64  # 67 call Finish last, 3 of them to give up
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
    # ToolEval's keys, and ours: where each call's response came from (the hub's service, here).
    assert set(record) == set(reference) and set(record["answer"]) == {*reference["answer"], "call_sources"}
    assert record["answer"]["call_sources"]["placeholder"] == 0 and record["answer"]["call_sources"]["simulated"] > 0
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
    # The first 30 test tasks are G1_instruction's: no other set has a win rate, nor has the average.
    header, cells = lines[0].split("  "), lines[3].split()
    column = {name.strip(): n for n, name in enumerate(h for h in header if h.strip())}
    assert cells[column["G1_instruction both"]] == "30/150" and cells[column["G1_tool both"]] == "0/150"
    assert float(cells[column["G1_instruction win"]]) < 50 and cells[column["G1_tool win"]] == "-"
    assert cells[column["avg win"]] == "-"
    assert any(
        line.startswith("(random: no win rate in G1_category, G1_tool, G2_instruction, G2_category, G3_")
        for line in lines
    )


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


# ---------------------------------------------------------------------- judges whose replies cannot be read
def unreadable(kind: str, function: str) -> dict:
    """An assistant message that holds no decision for ``function``, in one of the ways a judge fails."""
    if kind == "text":
        return {"role": "assistant", "content": "Solved, I would say."}
    if kind == "another function":
        return tool_call_message("grade", {"reason": "r", "status": SOLVED})
    if kind == "arguments not JSON":
        call = {"id": "c1", "type": "function", "function": {"name": function, "arguments": "{status: Solved"}}
        return {"role": "assistant", "content": None, "tool_calls": [call]}
    if kind == "no decision":
        return tool_call_message(function, {"reason": "r"})
    return tool_call_message(function, {"reason": "r", "status": "Probably"})  # a decision not offered


def answers_file(path: Path, ids) -> Path:
    """Converted answers, each finished with a final answer, whose query text is its id."""
    records = {
        qid: {"query": qid, "available_tools": [], "answer": {"method": "m", "total_steps": 3,
              "final_answer": a.final_answer, "answer_details": a.details}}
        for qid, a in ((qid, answer(qid)) for qid in ids)
    }  # fmt: skip
    path.write_text(json.dumps(records))
    return path


def judge_command(served, path, cache, *extra):
    return ["tooleval", "pass", "--answers", str(path), "--judge-model", "judge", "--judge-url", f"{served.url}/v1",
            "--cache", str(cache), "--votes", "2", *extra]  # fmt: skip


@pytest.mark.parametrize(
    "kind", ["text", "another function", "arguments not JSON", "no decision", "a decision not offered"]
)
def test_an_unreadable_judge_is_asked_again_then_its_queries_are_unjudged(tmp_path, capsys, kind):
    app = scripted_endpoint(lambda body: unreadable(kind, body["tools"][0]["function"]["name"]))
    path, cache, out = answers_file(tmp_path / "a.json", ["q1", "q2", "q3"]), tmp_path / "cache", tmp_path / "out.json"
    with ServedApp(app) as served:
        assert main(judge_command(served, path, cache, "--out", str(out))) == 1
        captured = capsys.readouterr()
        assert captured.out.strip() == "pass rate (toolbench): none, judged 0 of 3 queries (3 answered)"
        assert "3 of 3 queries are unjudged" in captured.err and "--allow-unjudged accepts this" in captured.err
        # Each query's first question is asked JUDGE_ATTEMPTS times; its other vote is not asked at all.
        asked = [json.dumps(body["messages"]) for body in app.config["requests"]]
        assert len(asked) == 3 * JUDGE_ATTEMPTS and all(asked.count(m) == JUDGE_ATTEMPTS for m in asked)
        assert cache.is_dir() and not list(cache.iterdir())  # made before the first call; nothing unreadable kept
        report = json.loads(out.read_text())
        assert (report["rate"], report["judged"], report["unjudged"], report["total"]) == (None, 0, 3, 3)
        assert all(q["passed"] is None for q in report["queries"].values())
        assert main(judge_command(served, path, cache, "--allow-unjudged")) == 0
        captured = capsys.readouterr()
        assert "judged 0 of 3 queries" in captured.out and "3 of 3 queries are unjudged" in captured.err
        assert "--allow-unjudged accepts" not in captured.err


def test_a_judge_read_at_the_second_try_is_cached_and_counted(tmp_path, capsys):
    def every_other(body):  # each question's first reply is unreadable, its second is read
        function = body["tools"][0]["function"]["name"]
        return unreadable("text", function) if app.config["calls"] % 2 else judge_reply(function, by_length)

    app = scripted_endpoint(every_other)
    path, cache = answers_file(tmp_path / "a.json", ["q1", "q2"]), tmp_path / "cache"
    with ServedApp(app) as served:
        assert main(judge_command(served, path, cache)) == 0
        first = capsys.readouterr()
        assert first.out.strip() == "pass rate (toolbench): 100.0, judged 2 of 2 queries (2 answered)"
        assert first.err == ""
        entries = [json.loads(entry.read_text()) for entry in cache.glob("*.json")]
        assert entries == [{"function": "answer_status", "value": SOLVED}] * 4  # two queries, two votes
        assert app.config["calls"] == 2 * 4
        assert main(judge_command(served, path, cache)) == 0
        assert capsys.readouterr().out == first.out and app.config["calls"] == 2 * 4  # the cache answered


def test_the_rate_is_over_the_judged_queries_and_says_how_many(tmp_path, capsys):
    def some_unreadable(body):
        function = body["tools"][0]["function"]["name"]
        if json.loads(body["messages"][-1]["content"])["query"] == "q2":
            return unreadable("text", function)
        return tool_call_message(function, {"reason": "r", "status": UNSOLVED if function == "answer_status" else
                                            SOLVABLE})  # fmt: skip

    app = scripted_endpoint(some_unreadable)
    path = answers_file(tmp_path / "a.json", ["q1", "q2", "q3", "q4"])
    with ServedApp(app) as served:
        assert main(judge_command(served, path, tmp_path / "cache")) == 1
    captured = capsys.readouterr()
    # Three failed queries and one unjudged: 0.0 over three, not a coin flip's share of four.
    assert captured.out.strip() == "pass rate (toolbench): 0.0, judged 3 of 4 queries (4 answered)"
    assert "1 of 4 queries are unjudged" in captured.err


def judge_reply(function, decide):
    field = "index" if function == "better" else "status"
    return tool_call_message(function, {"reason": "scripted", field: decide(function, {"final_answer": "x" * 500})})


class Unreadable(Scripted):
    """A judge whose replies for the queries in ``bad`` (or for ``bad_function``) cannot be read."""

    def __init__(self, statuses, bad=(), bad_function=None, **kwargs):
        super().__init__(statuses, **kwargs)
        self.bad, self.bad_function = set(bad), bad_function

    def answer_status(self, query, final_answer, vote=0):
        if query in self.bad:
            raise JudgeError("unreadable")
        return super().answer_status(query, final_answer, vote)

    def task_solvable(self, query, tools, vote=0):
        if self.bad_function == "task_solvable":
            raise JudgeError("unreadable")
        return super().task_solvable(query, tools, vote)

    def better(self, query, first, second, vote=0):
        if self.bad_function == "better":
            raise JudgeError("unreadable")
        return super().better(query, first, second, vote)


@pytest.mark.parametrize("count", ["toolbench", "sopr"])
def test_unjudged_votes_are_neither_a_coin_flip_nor_unsure(count):
    answers = {q: answer(q) for q in ("a", "b", "c")}
    statuses = {"a": [SOLVED] * 4, "b": [UNSOLVED] * 4, "c": [UNSURE] * 4}
    report = pass_rate(answers, ["a", "b", "c", "missing"], Unreadable(statuses, bad={"c"}), votes=4, count=count)
    assert report.unjudged == 1 and report.judged == 3 and report.queries["c"]["votes"] == [UNJUDGED]
    assert report.passed() == {"a": True, "b": False, "c": None, "missing": False}
    assert report.rate == pytest.approx(1 / 3)  # a of a, b and missing
    nothing = pass_rate(answers, ["c"], Unreadable(statuses, bad={"c"}), votes=4, count=count)
    assert nothing.rate is None and nothing.to_json()["unjudged"] == 1


def test_an_unreadable_solvability_reply_leaves_the_query_unjudged():
    answers = {q: answer(q) for q in ("a", "b")}
    judge = Unreadable({"a": [SOLVED] * 2, "b": [UNSOLVED] * 2}, bad_function="task_solvable")
    report = pass_rate(answers, ["a", "b"], judge, votes=2)
    assert report.passed() == {"a": True, "b": None}  # Solved needs no solvability; Unsolved does
    assert report.queries["b"]["labels"] == [UNJUDGED]


def test_win_rate_leaves_out_unanswered_and_unjudged_queries():
    mine = {"a": answer("a", "GOOD"), "b": answer("b", "meh"), "c": answer("c")}
    theirs = {"a": answer("a", "meh"), "b": answer("b", "GOOD"), "d": answer("d")}
    ids = ["a", "b", "c", "d", "e"]
    passed = {"a": True, "b": True, "c": True, "d": True}
    report = win_rate(mine, theirs, ids, passed, {**passed, "b": None}, judge=Scripted({}), votes=2)
    assert report.queries == {"a": "win", "b": "unjudged", "c": "win", "d": "loss", "e": "unanswered"}
    assert report.answered_by_both == {"a", "b"} and report.judged == 3 and report.rate == pytest.approx(2 / 3)
    unreadable_judge = win_rate(mine, theirs, ["a"], passed, passed, judge=Unreadable({}, bad_function="better"))
    assert unreadable_judge.queries == {"a": "unjudged"} and unreadable_judge.rate is None
    nobody = win_rate({}, {}, ["a", "b"], {}, {})
    assert nobody.rate is None and nobody.ties == 0  # never "win 50.0" over queries nobody answered
    one_sided = win_rate(mine, {}, ["a", "b"], passed, {})
    assert one_sided.wins == 2 and one_sided.rate is None  # a rate against no answers at all is no rate
    assert report.subset(["a", "e"]).counts() == {"rate": 1.0, "total": 2, "answered_by_both": 1, "judged": 1,
                                                  "wins": 1, "losses": 0, "ties": 0, "unjudged": 0, "unanswered": 1}  # fmt: skip


def test_win_per_test_set_says_what_both_runs_answered(tmp_path, capsys):
    runs = {"mine": ("random", "G1_instruction", "6"), "ref": ("oracle", "G1_instruction", "6"),
            "elsewhere": ("oracle", "G3_instruction", "3")}  # fmt: skip
    for name, (agent, split, limit) in runs.items():
        assert main(["eval", "--agent", agent, "--task", "RapidAPI", "--split", split, "--limit", limit, "--quiet",
                     "--out", str(tmp_path / name)]) == 0  # fmt: skip
        assert (
            main(["tooleval", "convert", "--run", str(tmp_path / name), "--out", str(tmp_path / f"{name}.json")]) == 0
        )
    capsys.readouterr()
    out = tmp_path / "win.json"
    assert main(["tooleval", "win", "--answers", str(tmp_path / "mine.json"), "--reference", str(tmp_path / "ref.json"),
                 "--rule", "test", "--out", str(out)]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    rows = {line.split()[0]: line for line in printed.splitlines()[1:]}
    assert "both runs answered 6 of 790 queries" in printed.splitlines()[0]
    assert rows["G1_instruction"].split()[1:3] == ["150", "6"]
    assert rows["G1_instruction"].split()[3:8] == ["0", "6", "0", "0", "0.0"]  # random loses to the oracle
    for name in ("G1_category", "G1_tool", "G2_instruction", "G2_category", "G3_instruction"):
        assert rows[name].split()[2] == "0" and rows[name].endswith("none: no query answered by both")
    report = json.loads(out.read_text())
    assert report["groups"]["G1_tool"]["rate"] is None and report["groups"]["G1_instruction"]["answered_by_both"] == 6
    assert report["unanswered"] == 790 - 6 and report["judged"] == 6
    # Runs of different test sets have nothing to compare: no rate anywhere, and the command fails.
    assert main(["tooleval", "win", "--answers", str(tmp_path / "mine.json"), "--reference",
                 str(tmp_path / "elsewhere.json"), "--rule", "test"]) == 1  # fmt: skip
    captured = capsys.readouterr()
    assert captured.out.startswith("win rate: none") and "no query was answered by both runs" in captured.err


def test_a_failed_judge_call_is_unjudged_and_a_dead_endpoint_stops(tmp_path):
    from toolbench.agents.client import AgentError, RunStopped

    class Failing:
        model, calls = "m", 0

        def complete(self, messages, tools, **settings):
            self.calls += 1
            raise (RunStopped if self.calls > 2 else AgentError)("the endpoint failed")

    client = Failing()
    judge = ChatJudge(client, cache_dir=tmp_path / "cache")
    report = pass_rate({q: answer(q) for q in ("a", "b")}, ["a", "b"], judge, votes=2)
    assert report.unjudged == 2 and client.calls == 2  # the SDK retried already: one call per question
    with pytest.raises(RunStopped):
        pass_rate({"c": answer("c")}, ["c"], judge, votes=2)


def test_the_rule_over_recorded_answers_agrees_with_the_env_on_a_dump(tmp_path):
    """A dump of what the calls returned fails by the env's verdict; judged again from the
    converted answer file, it fails the same way (the rule reads what the answered calls returned)."""
    from toolbench.eval.runs import read_run

    run = tmp_path / "dump"
    assert main(["eval", "--agent", "cheap:dump_answer", "--task", "RapidAPI", "--split", "G1_instruction",
                 "--limit", "30", "--out", str(run), "--quiet"]) == 0  # fmt: skip
    assert main(["tooleval", "convert", "--run", str(run), "--out", str(tmp_path / "dump.json")]) == 0
    _, _, episodes = read_run(run)
    env = gym.make("toolbench/RapidAPI-v0", split="G1_instruction").unwrapped
    report = rule_pass_rate(load_answers(tmp_path / "dump.json"), env.tasks[:30])
    passed_env = {e.task_id: e.success for e in episodes}
    passed_rule = {t.id: report.queries[str(t.get("query_id", t.id))]["passed"] for t in env.tasks[:30]}
    assert passed_rule == passed_env and sum(passed_env.values()) <= 3
