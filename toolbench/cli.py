"""The ``toolbench`` command line: it parses the arguments and calls one function per command, each
in its module of ``toolbench.commands``."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from toolbench import __version__
from toolbench.commands.data import (
    cmd_data_align,
    cmd_data_rapidapi_export,
    cmd_data_retrieval,
    cmd_data_split,
    cmd_data_stats,
    cmd_data_virtualhome_originals,
)
from toolbench.commands.doctor import cmd_doctor
from toolbench.commands.eval import cmd_eval
from toolbench.commands.listing import cmd_list
from toolbench.commands.record import cmd_record
from toolbench.commands.reports import cmd_audit, cmd_compare, cmd_complexity, cmd_paper_table, cmd_view
from toolbench.commands.retrieve import cmd_retrieve
from toolbench.commands.serve import cmd_serve
from toolbench.commands.tooleval import cmd_tooleval_convert, cmd_tooleval_pass, cmd_tooleval_table, cmd_tooleval_win
from toolbench.mock_services import SERVICES
from toolbench.prompting import PROMPT_SETTINGS


def _int_in(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: an integer within [low, high]."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if value < low or (high is not None and value > high):
            bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"must be {bounds}, got {value}")
        return value

    return parse


def _float_in(low: float, high: float) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be from {low:g} to {high:g}, got {text}")
        return value

    return parse


class _NoteGiven(argparse.Action):
    """Stores the value and notes in ``namespace.explicit`` that the option was given: its default is
    a mock service's, and ``serve env`` derives its own when it was not."""

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any, option_string: Any = None) -> None:
        setattr(namespace, self.dest, values)
        namespace.explicit = {*getattr(namespace, "explicit", set()), self.dest}


def _non_empty(text: str) -> str:
    if not text:
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def _recording() -> Any:
    from toolbench.eval import recording

    return recording


def _gate_command() -> Any:
    from toolbench.eval import gate

    return gate


def _rescore_command() -> Any:
    from toolbench.eval import rescore

    return rescore


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolbench", description="Offline Gymnasium environments for tool-using agents."
    )
    parser.add_argument("--version", action="version", version=f"toolbench-gym {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    commands.add_parser("list", help="every env id with its modes, splits and task counts").set_defaults(run=cmd_list)

    evaluation = commands.add_parser("eval", help="score an agent on a task (or all tasks)")
    evaluation.add_argument("--agent", required=True, help="oracle, random or openai:MODEL")
    evaluation.add_argument("--task", default="all", help="a task name (e.g. OpenWeather) or 'all'")
    evaluation.add_argument("--split", default="test")
    evaluation.add_argument("--mode", default=None, help="program or interactive (default: each task's first mode)")
    evaluation.add_argument("--limit", type=_int_in(1), default=None, help="at most N tasks per env")
    evaluation.add_argument(
        "--workers", type=_int_in(1), default=None, help="worker processes (1), or Ray actors (one per cluster CPU)"
    )
    evaluation.add_argument(
        "--backend", choices=("local", "ray"), default="local", help="play here, or on Ray (the ray extra)"
    )
    evaluation.add_argument(
        "--ray-address", default=None, help="the Ray cluster to join (auto, ray://host:10001); default a local Ray"
    )
    evaluation.add_argument("--seed", type=int, default=0, help="seed of the random agent")
    evaluation.add_argument("--task-file", default=None, help="play the records of this JSONL file (one --task)")
    evaluation.add_argument("--out", default=None, help="folder for run.json, trajectories.jsonl and the summary")
    evaluation.add_argument("--resume", action="store_true", help="finish the run in --out, skipping finished episodes")
    evaluation.add_argument("--overwrite", action="store_true", help="replace the run in --out")
    evaluation.add_argument("--no-frames", action="store_true", help="do not save camera frames in --out")
    evaluation.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    evaluation.add_argument("--quiet", action="store_true", help="no progress on stderr")
    evaluation.add_argument(
        "--scorer", choices=("ours", "paper"), default=None, help="AppBench: our scorer or the paper's (its table too)"
    )
    evaluation.add_argument(
        "--cache", metavar="DIR", default=None, help="RapidAPI: StableToolBench's response cache (tool_response_cache)"
    )
    evaluation.add_argument("--task-ids", default=None, help="only these tasks: ids separated by commas, or @FILE")
    evaluation.add_argument(
        "--trials", type=_int_in(1), default=1, help="play every task K times: pass@k and pass^k (1)"
    )
    errors = evaluation.add_argument_group("errors (an endpoint down, a cache miss, a crash) and limits")
    errors.add_argument("--retry-errors", type=_int_in(0), default=0, help="play an errored episode again N times")
    errors.add_argument(
        "--max-error-rate", type=_float_in(0.0, 1.0), default=None, help="exit 1 when more episodes end in an error"
    )
    errors.add_argument(
        "--only", choices=("errors", "failures"), default=None, help="with --resume: play only these again"
    )
    errors.add_argument("--max-turns", type=_int_in(1), default=None, help="model replies per episode")
    errors.add_argument("--max-tokens-per-episode", type=_int_in(1), default=None, help="model tokens per episode")
    errors.add_argument("--episode-timeout", type=_float_in(0.1, 86400.0), default=None, help="seconds per episode")
    errors.add_argument("--max-cost", type=_float_in(0.0, 1e9), default=None, help="cost per episode (usage.cost)")
    model = evaluation.add_argument_group("openai:MODEL agents (defaults per task, as in ToolBench's harness)")
    model.add_argument("--llm-cache", metavar="DIR", default=None, help="record and replay model replies in DIR")
    model.add_argument(
        "--llm-cache-mode",
        choices=("record", "replay", "refresh"),
        default="record",
        help="record: use stored replies, ask for missing ones; replay: never call the model; refresh: ask again",
    )
    model.add_argument(
        "--prompt", choices=PROMPT_SETTINGS, default=None, help="ToolBench's prompt settings (default fewshot)"
    )
    model.add_argument("--max-tokens", type=_int_in(1), default=None, help="generation length")
    model.add_argument("--temperature", type=_float_in(0.0, 2.0), default=None, help="default 0")
    model.add_argument(
        "--stop", action="append", type=_non_empty, default=None, help="a stop sequence (repeat for several)"
    )
    model.add_argument("--top-k-api", type=_int_in(0), default=None, help="API docs retrieved into the prompt")
    model.add_argument("--top-k-example", type=_int_in(0), default=None, help="demonstrations retrieved (few-shot)")
    model.add_argument("--no-tools", action="store_true", help="interactive mode without native function calling")
    model.add_argument("--timeout", type=_float_in(0.1, 3600.0), default=None, help="seconds per model call (120)")
    model.add_argument("--max-retries", type=_int_in(0, 20), default=None, help="SDK retries of a failed call (2)")
    model.add_argument("--breaker", type=_int_in(1), default=None, help="failed calls in a row that stop the run (5)")
    model.add_argument(
        "--restore", choices=("on", "off"), default=None, help="dfsdt: restore the world when backtracking (on)"
    )
    evaluation.set_defaults(run=cmd_eval)

    record = commands.add_parser("record", help=_recording().HELP)
    _recording().add_arguments(record)
    record.set_defaults(run=cmd_record)

    view = commands.add_parser("view", help="write a run's episodes as one HTML page")
    view.add_argument("run_dir", help="a folder written by toolbench eval --out")
    view.add_argument("--out", default=None, help="the HTML file (default RUN_DIR/report.html)")
    view.set_defaults(run=cmd_view)

    compare = commands.add_parser("compare", help="runs side by side: a table and a bar chart")
    compare.add_argument("run_dirs", nargs="+", help="folders written by toolbench eval --out")
    compare.add_argument("--metric", default="success_rate", help="success_rate (default), score, executable_rate, ...")
    compare.add_argument("--plot", default="compare.png", help="where to write the PNG bar chart")
    compare.add_argument(
        "--allow-unequal", action="store_true", help="average tasks whose episode counts differ between runs"
    )
    compare.set_defaults(run=cmd_compare)

    gate = commands.add_parser(
        "gate", help="is a run worse than its baseline? exit 0 no, 1 a regression, 2 they cannot be compared"
    )
    _gate_command().add_arguments(gate)
    gate.set_defaults(run=lambda args: _gate_command().main(args))

    score = commands.add_parser("score", help="re-score a stored run with today's envs and scorers (no model)")
    _rescore_command().add_arguments(score)
    score.set_defaults(run=lambda args: _rescore_command().main(args))

    paper = commands.add_parser("paper-table", help="a run beside ToolBench's Table 11 for its prompt setting")
    paper.add_argument("run_dir", nargs="?", default=None, help="a folder written by toolbench eval --out")
    paper.add_argument(
        "--setting",
        default=None,
        help="Table 11's setting: zero, system, fewshot, system+fewshot, or one with +alignment "
        "(default: the run's prompt setting)",
    )
    paper.add_argument(
        "--model", default=None, help="only this model's row: gpt4, llama-30b, starcoder, codegen-16B-mono"
    )
    paper.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    paper.set_defaults(run=cmd_paper_table)

    doctor = commands.add_parser(
        "doctor", help="which sandbox layers this machine has, and what toolbench serve env exposes"
    )
    doctor.add_argument("--json", action="store_true")
    doctor.add_argument(
        "--url", help="a running toolbench serve env: report its exposure and probe it (Host, Origin, body, token)"
    )
    doctor.add_argument("--token-file", metavar="PATH", help="with --url: the server's token (or TOOLBENCH_TOKEN)")
    doctor.set_defaults(run=cmd_doctor)

    audit = commands.add_parser("audit", help="cheap policies on every env and mode, held to their ceilings")
    audit.add_argument("--task", default="all", help="a task name or 'all'")
    audit.add_argument("--mode", choices=("program", "interactive"), default=None, help="one mode (default: both)")
    audit.add_argument("--policy", action="append", default=None, help="only this policy (repeat for several)")
    audit.add_argument(
        "--split", action="append", choices=("test", "unseen"), default=None, help="one split (default: both)"
    )
    audit.add_argument("--limit", type=_int_in(1), default=None, help="a sample of N tasks per env and split")
    audit.add_argument("--workers", type=_int_in(1), default=1, help="worker processes")
    audit.add_argument("--out", default=None, help="folder for audit.json, audit.txt and a run folder per policy")
    audit.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    audit.add_argument("--quiet", action="store_true", help="no progress on stderr")
    audit.set_defaults(run=cmd_audit)

    complexity = commands.add_parser(
        "complexity", help="ToolBench's API-selection complexity score per task (appendix D), ours beside the paper's"
    )
    complexity.add_argument("--task", action="append", default=None, help="only this task (repeat for several)")
    complexity.add_argument("--no-align", action="store_true", help="skip the alignment-data column (the slow one)")
    complexity.add_argument(
        "--task-file", default=None, help="score a test file in the original record shape (prompt, completion)"
    )
    complexity.add_argument(
        "--examples", default=None, help="with --task-file: the examples (a JSONL file or a folder of examples/*.txt)"
    )
    complexity.add_argument("--api-size", type=_int_in(1), default=None, help="with --task-file: |D| (default: ours)")
    complexity.add_argument(
        "--run", dest="runs", action="append", default=None, help="a run folder: Spearman with its error rates"
    )
    complexity.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    complexity.set_defaults(run=cmd_complexity)

    data = commands.add_parser("data", help="ToolBench's data tools").add_subparsers(dest="data_command", required=True)
    align = data.add_parser("align", help="alignment training samples (ToolBench appendix C), never test tasks")
    align.add_argument("--task", required=True, help="a task name, e.g. HomeSearch")
    align.add_argument(
        "--samples", type=_int_in(1, 1_000_000), default=None, help="training samples (default: Table 9's count)"
    )
    align.add_argument("--shots", type=_int_in(1, 50), default=3, help="goal/action pairs per sample")
    align.add_argument("--seed", type=int, default=0)
    align.add_argument("--out", required=True, help="the JSONL file to write")
    align.set_defaults(run=cmd_data_align)
    grow = data.add_parser(
        "split", help="more train or unseen tasks from the task's generator (another seed: other tasks)"
    )
    grow.add_argument("--task", required=True, help="a task name, e.g. HomeSearch")
    grow.add_argument("--split", choices=("train", "unseen"), default="train")
    grow.add_argument("--size", type=_int_in(1, 1_000_000), default=1000, help="how many tasks")
    grow.add_argument("--seed", type=int, default=1, help="the shipped files are seed 0")
    grow.add_argument("--out", required=True, help="the JSONL file to write (a --task-file for eval and gym.make)")
    grow.set_defaults(run=cmd_data_split)
    stats = data.add_parser("stats", help="a task set's shape per kind, ours beside the original's (AppBench)")
    stats.add_argument("task", help="a task name: AppBench")
    stats.add_argument("--split", choices=("test", "train", "demo"), default="test", help="our split to measure")
    stats.add_argument("--original", help="the folder of AppBench's test_ss/sm/ms/mm.json, to compare with")
    stats.add_argument("--json", action="store_true")
    stats.set_defaults(run=cmd_data_stats)
    export = data.add_parser("rapidapi-export", help="the RapidAPI hub and task sets as ToolBench's data folder")
    export.add_argument("--out", required=True, help="the folder to write (toolenv/tools, test_instruction, ...)")
    export.set_defaults(run=cmd_data_rapidapi_export)
    originals = data.add_parser(
        "virtualhome-originals",
        help="how the original VirtualHome programs run in the simulator from their tasks' starts and meet goals",
    )
    originals.add_argument("path", help="the language-planner's available_examples.json or ToolBench's test.jsonl")
    originals.add_argument("--check", choices=("paper", "ours"), default="paper", help="the executable check")
    originals.set_defaults(run=cmd_data_virtualhome_originals)
    retrieval = data.add_parser("retrieval", help="ToolBench's retriever data (corpus.tsv, queries, qrels) per group")
    retrieval.add_argument("--queries-dir", required=True, help="a folder of query files (G1_query.json, ...)")
    retrieval.add_argument("--test-ids-dir", help="test-id files; without it every query is a test query")
    retrieval.add_argument("--out", required=True, help="the folder to write (G1/, G2/, G3/)")
    retrieval.set_defaults(run=cmd_data_retrieval)

    tooleval = commands.add_parser("tooleval", help="ToolEval's pass and win rates of converted answers")
    tooleval_commands = tooleval.add_subparsers(dest="tooleval_command", required=True)
    convert = tooleval_commands.add_parser("convert", help="a RapidAPI run (--out of eval) as ToolEval's answers")
    convert.add_argument("--run", dest="run_dir", required=True, help="the run folder (holds trajectories.jsonl)")
    convert.add_argument("--out", required=True, help="the converted-answer JSON file to write")
    convert.add_argument("--answers-dir", help="also write ToolBench's raw answer files (react/dfsdt runs) here")
    convert.set_defaults(run=cmd_tooleval_convert)
    for name, about in (
        ("pass", "the pass rate of converted answers"),
        ("win", "the win rate of one run against another"),
    ):
        command = tooleval_commands.add_parser(name, help=about)
        command.add_argument("--answers", required=True, help="converted answers (ToolEval's format)")
        if name == "win":
            command.add_argument("--reference", required=True, help="the reference run's converted answers")
        command.add_argument("--ids", help="a test_query_ids file (default: every answered query)")
        command.add_argument("--rule", metavar="SPLIT", help="our RapidAPI split: judge by its deterministic rule")
        command.add_argument("--judge-model", help="a judge model on an OpenAI-compatible endpoint")
        command.add_argument("--judge-url", help="the judge's endpoint (default: OPENAI_BASE_URL)")
        command.add_argument("--votes", type=_int_in(1, 100), default=4 if name == "pass" else 2)
        command.add_argument("--count", choices=("toolbench", "sopr"), default="toolbench")
        command.add_argument("--no-solvability", action="store_true", help="do not ask whether a task is solvable")
        command.add_argument("--cache", default=".tooleval-cache", help="where the judge's answers are kept")
        command.add_argument(
            "--allow-unjudged", action="store_true", help="exit 0 when queries are unjudged (unreadable judge replies)"
        )
        command.add_argument(
            "--include-placeholders", action="store_true",
            help="also rate queries where a call got a placeholder response (no cache entry, no hub API)",
        )  # fmt: skip
        command.add_argument("--out", help="a JSON file for the per-query verdicts")
        command.set_defaults(run=cmd_tooleval_pass if name == "pass" else cmd_tooleval_win)

    table = tooleval_commands.add_parser("table", help="the paper's Table 4 (pass and win per test set) of runs")
    table.add_argument("--run", dest="runs", action="append", required=True, metavar="NAME=DIR",
                       help="a run of --split test (repeat); NAME labels its row")  # fmt: skip
    table.add_argument("--reference", required=True, help="the NAME of the run the win rates compare against")
    table.set_defaults(run=cmd_tooleval_table)

    retrieve = commands.add_parser(
        "retrieve", help="NDCG@1/@5 of an API retriever on RapidAPI's test sets or ToolBench's retriever data"
    )
    retrieve.add_argument("--retriever", choices=("bm25", "dense"), default="bm25")
    retrieve.add_argument("--split", default="test", help="a RapidAPI split (test: all six test sets)")
    retrieve.add_argument("--corpus", help="ToolBench's retriever data instead: its corpus.tsv")
    retrieve.add_argument(
        "--queries", action="append", help="with --corpus: a test.query.txt (qrels beside it) or a query file (.json)"
    )
    retrieve.add_argument("--qrels", help="the qrels of a .query.txt (default: qrels.<name>.tsv beside it)")
    retrieve.add_argument(
        "--train-queries", action="append", help="with --corpus: more training data for dense (train.query.txt, ...)"
    )
    retrieve.set_defaults(run=cmd_retrieve)

    serve = commands.add_parser(
        "serve", help="serve a mock service, or a whole env (serve env --task T, OpenEnv's protocol), over HTTP"
    )
    serve.add_argument("service", choices=[*sorted(SERVICES), "env"], help="a mock API, or env: a toolbench env")
    serve.add_argument("--task", help="env: the task whose env to serve (HomeSearch, toolbench/HomeSearch-v0, ...)")
    serve.add_argument(
        "--env-kwargs", metavar="JSON", help='env: gym.make arguments as a JSON object, say \'{"mode": "interactive"}\''
    )
    serve.add_argument("--max-sessions", type=_int_in(1), help="env: sessions (one env each) at most (default 64)")
    serve.add_argument(
        "--idle-timeout", type=_float_in(0.05, 7 * 24 * 3600),
        help="env: seconds before an unused session and its env are closed (default 600)",
    )  # fmt: skip
    serve.add_argument(
        "--fresh-idle-timeout", type=_float_in(0.05, 7 * 24 * 3600),
        help="env: at the session cap, seconds idle after which a session that never stepped nor restored is "
        "closed for a new one (default 30)",
    )  # fmt: skip
    serve.add_argument(
        "--snapshot-key-file", metavar="PATH",
        help="env: the key signing /state snapshots, in a file only you can read (created, 32 random bytes, if "
        "missing); or TOOLBENCH_SNAPSHOT_KEY; default: random per process. The same key on replicas shares snapshots",
    )  # fmt: skip
    serve.add_argument(
        "--token-file", metavar="PATH",
        help="env: clients must send 'Authorization: Bearer <the file's text>' (created, random, if missing); "
        "or TOOLBENCH_TOKEN. Required to bind anything but loopback",
    )  # fmt: skip
    # Secrets never come from argv: these exist to refuse them by name (and so that argparse does not
    # read them as abbreviations of the file options).
    serve.add_argument("--snapshot-key", help=argparse.SUPPRESS)
    serve.add_argument("--token", help=argparse.SUPPRESS)
    serve.add_argument(
        "--allow-host", action="append", metavar="NAME",
        help="env: a Host name to answer besides the bound address's (localhost, 127.0.0.1, [::1]); repeatable; "
        "'*' for any",
    )  # fmt: skip
    serve.add_argument(
        "--allow-origin", action="append", metavar="ORIGIN",
        help="env: a web origin (https://app.example:8443) whose pages may call the server; repeatable "
        "(default: none, requests carrying an Origin are refused)",
    )  # fmt: skip
    serve.add_argument(
        "--max-state-bytes", type=_int_in(1024),
        help="env: largest encoded state a /state snapshot holds (default 16 MiB); larger is a 413",
    )  # fmt: skip
    serve.add_argument(
        "--header-timeout", type=_float_in(0.1, 3600), help="env: seconds for a request head to arrive (default 10)"
    )
    serve.add_argument(
        "--body-timeout", type=_float_in(0.1, 3600), help="env: seconds for a request body to arrive (default 30)"
    )
    serve.add_argument("--no-access-log", action="store_true", help="env: no line per request on stderr")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=_int_in(0, 65535), default=8000, help="0 picks a free port")
    serve.add_argument(
        "--api-key", type=_non_empty, default=None, help="the key the service accepts (default: its demo key)"
    )
    serve.add_argument("--goal", type=_int_in(0), default=0, help="webshop: the goal whose session the URL opens")
    serve.add_argument(
        "--cache", metavar="DIR", default=None, help="rapidapi: StableToolBench's response cache (after the hub)"
    )
    # A mock service runs on waitress (pure Python, any OS), an env on uvicorn; these bound what one client costs.
    serve.add_argument(
        "--threads", type=_int_in(1, 1024), default=8, action=_NoteGiven,
        help="worker threads running a mock service's app (env: ignored, each session has its own)",
    )  # fmt: skip
    serve.add_argument(
        "--connection-limit",
        type=_int_in(1),
        default=100,
        action=_NoteGiven,
        help="open connections at most (a mock service: 100, more wait to connect; env: 2 x --max-sessions + 64, "
        "at the limit the connection idle the longest is closed, and with none idle a new one gets a 503)",
    )
    serve.add_argument(
        "--max-body",
        type=_int_in(0),
        default=10 * 1024 * 1024,  # server.MAX_BODY, written out: importing waitress here would slow every command
        help="largest request body in bytes (default 10 MiB, Sheets' own limit); larger ones get 413",
    )
    serve.add_argument("--timeout", type=_int_in(1), default=30, help="seconds before an idle connection is closed")
    serve.set_defaults(run=cmd_serve)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    raise SystemExit(main())
