"""``toolbench tooleval``: ToolEval's answers of a run (``convert``), its pass and win rates
(``pass``, ``win``) and the table of several runs (``table``).

The parser in ``toolbench.cli`` calls the ``cmd_*`` function; heavy modules load inside it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

#: What a malformed answer, id or run file can raise while it is read (reported, exit code 2).
BAD_INPUT = (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError)


def _why(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "the file nests too deeply"
    if isinstance(exc, (TypeError, AttributeError, IndexError)):
        return f"a record is not in the expected shape ({type(exc).__name__}: {str(exc)[:200]})"
    return str(exc)[:500]


def cmd_tooleval_convert(args: argparse.Namespace) -> int:
    """``toolbench tooleval convert``: a run's answers in ToolEval's converted format (and raw answer files)."""
    from toolbench.eval.tooleval import convert_run

    try:
        converted = convert_run(Path(args.run_dir) / "trajectories.jsonl")
        Path(args.out).write_text(json.dumps(converted, ensure_ascii=False, indent=1), encoding="utf-8")
    except BAD_INPUT as exc:
        print(f"toolbench tooleval convert: {_why(exc)}", file=sys.stderr)
        return 2
    print(f"wrote {len(converted)} converted answers to {args.out}")
    if args.answers_dir:
        from toolbench.eval.tooleval import write_answer_files

        count = write_answer_files(Path(args.run_dir) / "trajectories.jsonl", args.answers_dir)
        print(f"wrote {count} answer files to {args.answers_dir}")
    return 0


def _rule_tasks(args: argparse.Namespace) -> list[Any] | None:
    """With ``--rule SPLIT``: our RapidAPI split's tasks (those of ``--ids``, if given)."""
    if not args.rule:
        return None
    import gymnasium as gym

    from toolbench.eval import tooleval

    tasks = gym.make("toolbench/RapidAPI-v0", split=args.rule).unwrapped.tasks
    if args.ids:
        wanted = set(tooleval.load_ids(args.ids))
        tasks = [t for t in tasks if str(t.get("query_id", t.id)) in wanted]
    return tasks


def _judge(args: argparse.Namespace, tasks: list[Any] | None) -> Any:
    """The judge of ``--judge-model`` (its cache folder made now), or ``None`` under ``--rule``."""
    if tasks is not None:
        return None
    if not args.judge_model:
        raise ValueError("give --rule SPLIT (our tasks) or --judge-model MODEL (a judge for any answers)")
    from toolbench.agents.client import ChatClient
    from toolbench.eval.tooleval import ChatJudge

    return ChatJudge(ChatClient(args.judge_model, base_url=args.judge_url), cache_dir=args.cache)


def _tooleval_pass(args: argparse.Namespace, answers_file: str, tasks: list[Any] | None, judge: Any) -> Any:
    """The pass report of one answer file, by our rule (``tasks``) or by ``judge``."""
    from toolbench.eval import tooleval

    answers = tooleval.load_answers(answers_file)
    if tasks is not None:
        return tooleval.rule_pass_rate(answers, tasks)
    ids = tooleval.load_ids(args.ids) if args.ids else sorted(answers)
    return tooleval.pass_rate(
        answers, ids, judge, votes=args.votes, count=args.count, solvability=not args.no_solvability,
        placeholders=args.include_placeholders,
    )  # fmt: skip


def _coverage_note(report: Any, args: argparse.Namespace) -> str:
    """What of the rate rests on answered calls, for answers that record their calls' sources."""
    if not report.call_records:
        return ""
    if args.include_placeholders:
        return "; placeholder responses counted (--include-placeholders)"
    return (
        f"; over the {len(report.queries)} queries whose calls were all answered (cache or hub), "
        f"{len(report.excluded)} left out: a call got a placeholder response"
    )


def _unjudged_verdict(command: str, unjudged: int, total: int, judge: Any, args: argparse.Namespace) -> int:
    """Exit code 1, said on stderr, when queries are unjudged and ``--allow-unjudged`` was not given."""
    if not unjudged:
        return 0
    from toolbench.eval.tooleval import JUDGE_ATTEMPTS

    unreadable = getattr(judge, "unreadable", 0)
    print(
        f"toolbench tooleval {command}: {unjudged} of {total} queries are unjudged: the judge gave no readable "
        f"answer (each question asked up to {JUDGE_ATTEMPTS} times; {unreadable} unreadable replies), so the "
        f"rate covers the judged queries only" + ("" if args.allow_unjudged else "; --allow-unjudged accepts this"),
        file=sys.stderr,
    )
    return 0 if args.allow_unjudged else 1


def cmd_tooleval_table(args: argparse.Namespace) -> int:
    """``toolbench tooleval table``: the paper's Table 4 of runs: pass and win rates per test set."""
    from toolbench.eval.tables import text_table
    from toolbench.eval.tooleval import table_rows

    runs = {}
    for entry in args.runs:
        name, _, folder = entry.partition("=")
        runs[name] = Path(folder or name)
    if args.reference not in runs:
        print(f"toolbench tooleval table: --reference {args.reference!r} is not one of the runs", file=sys.stderr)
        return 2
    try:
        header, rows, notes = table_rows(runs, args.reference)
    except BAD_INPUT as exc:
        print(f"toolbench tooleval table: {_why(exc)}", file=sys.stderr)
        return 2
    print("\n".join(text_table(tuple(header), rows)))
    print("(both: queries of the set that the run and the reference both answered; no win rate where none)")
    for note in notes:
        print(f"({note})")
    return 0


def cmd_tooleval_pass(args: argparse.Namespace) -> int:
    """``toolbench tooleval pass``: the pass rate of an answer file, by our rule or a judge."""
    from toolbench.agents.client import RunStopped
    from toolbench.eval.tooleval import percent

    try:
        tasks = _rule_tasks(args)
        judge = _judge(args, tasks)
        report = _tooleval_pass(args, args.answers, tasks, judge)
    except BAD_INPUT as exc:
        print(f"toolbench tooleval pass: {_why(exc)}", file=sys.stderr)
        return 2
    except RunStopped as exc:
        print(f"toolbench tooleval pass: the judge's endpoint failed: {exc}", file=sys.stderr)
        return 1
    spread = f" (spread {100 * report.spread:.1f})" if report.count == "sopr" and report.rate is not None else ""
    print(
        f"pass rate ({report.count}): {percent(report.rate, 'none')}{spread}, judged {report.judged} of "
        f"{len(report.queries)} queries ({report.answered} answered){_coverage_note(report, args)}"
    )
    if args.out:
        Path(args.out).write_text(json.dumps(report.to_json(), indent=1), encoding="utf-8")
    return _unjudged_verdict("pass", report.unjudged, len(report.queries), judge, args)


def _win_groups(ids: list[str], tasks: list[Any] | None, args: argparse.Namespace) -> dict[str, list[str]]:
    """The query ids per test set: our tasks' sets under ``--rule``, else the one set of the ids."""
    if tasks is None:
        return {Path(args.ids).stem if args.ids else "answers": ids}
    groups: dict[str, list[str]] = {}
    for task in tasks:
        groups.setdefault(task.category or args.rule, []).append(str(task.get("query_id", task.id)))
    return groups


def _win_cell(report: Any) -> str:
    from toolbench.eval.tooleval import percent

    if report.rate is not None:
        return percent(report.rate)
    return "none: no query answered by both" if not report.answered_by_both else "none: no query judged"


def cmd_tooleval_win(args: argparse.Namespace) -> int:
    """``toolbench tooleval win``: the win rate of an answer file against a reference one, per test set."""
    from toolbench.agents.client import RunStopped
    from toolbench.eval import tooleval
    from toolbench.eval.tables import text_table
    from toolbench.eval.tooleval import percent

    try:
        tasks = _rule_tasks(args)
        judge = _judge(args, tasks)
        mine = _tooleval_pass(args, args.answers, tasks, judge)
        theirs = _tooleval_pass(args, args.reference, tasks, judge)
        left_out = set(mine.excluded) | set(theirs.excluded)  # a verdict on placeholder responses compares nothing
        ids = sorted((set(mine.queries) | set(theirs.queries)) - left_out)
        report = tooleval.win_rate(
            tooleval.load_answers(args.answers), tooleval.load_answers(args.reference), ids, mine.passed(),
            theirs.passed(), judge=judge, votes=args.votes,
        )  # fmt: skip
    except BAD_INPUT as exc:
        print(f"toolbench tooleval win: {_why(exc)}", file=sys.stderr)
        return 2
    except RunStopped as exc:
        print(f"toolbench tooleval win: the judge's endpoint failed: {exc}", file=sys.stderr)
        return 1
    groups = {name: report.subset(group) for name, group in _win_groups(ids, tasks, args).items()}
    header = ("test set", "queries", "both answered", "wins", "losses", "ties", "unjudged", "win rate")
    rows = [
        (name, str(len(g.queries)), str(len(g.answered_by_both)), str(g.wins), str(g.losses), str(g.ties),
         str(g.unjudged), _win_cell(g))
        for name, g in groups.items()
    ]  # fmt: skip
    print(
        f"win rate: {percent(report.rate, 'none')} (ties split half and half; wins {report.wins}, "
        f"losses {report.losses}, ties {report.ties}, judged {report.judged}; both runs answered "
        f"{len(report.answered_by_both)} of {len(report.queries)} queries, and those neither answered are left out)"
        + (f"; {len(left_out)} more left out: a call of one run got a placeholder response" if left_out else "")
    )
    print("\n".join(text_table(header, rows)))
    if args.out:
        counts = {**report.counts(), "groups": {name: g.counts() for name, g in groups.items()}}
        Path(args.out).write_text(json.dumps({**counts, "queries": report.queries}, indent=1), encoding="utf-8")
    if report.rate is None:
        print("toolbench tooleval win: no query was answered by both runs, so there is no win rate", file=sys.stderr)
        return 1
    return _unjudged_verdict("win", report.unjudged, len(report.queries), judge, args)
