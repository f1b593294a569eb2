"""``toolbench data``: alignment samples, grown splits, AppBench's statistics, the RapidAPI hub's
export, VirtualHome's original programs and ToolBench's retriever data.

The parser in ``toolbench.cli`` calls the ``cmd_*`` function; heavy modules load inside it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from toolbench.catalog import find_task


def cmd_data_align(args: argparse.Namespace) -> int:
    """``toolbench data align``: a task's alignment training samples, and the test split's complexity given them."""
    from toolbench.eval.complexity import PAPER_TABLE9, alignment_score
    from toolbench.taskgen.align import write_alignment_data

    try:
        spec = find_task(args.task)
        written = write_alignment_data(spec.name, args.out, args.samples, args.shots, args.seed)
    except (KeyError, ValueError, OSError) as exc:
        print(f"toolbench data align: {exc if isinstance(exc, OSError) else exc.args[0]}", file=sys.stderr)
        return 2
    print(f"wrote {len(written)} alignment samples of {args.shots} goals each to {args.out}")
    if spec.name in PAPER_TABLE9:  # appendix D's score is defined for ToolBench's eight tasks
        # D.1.3: the same tests and API, with these samples' goals as the examples.
        score = alignment_score(spec, [action for sample in written for action in sample["actions"]])
        print(f"complexity of the test split given these samples: {score:.1f} (Table 9: {PAPER_TABLE9[spec.name]:.1f})")
    return 0


def cmd_data_split(args: argparse.Namespace) -> int:
    """``toolbench data split``: a task split of our own, from the task's generator and a seed."""
    from toolbench.taskgen import jsonl, load_split_makers

    try:
        spec = find_task(args.task)
        records = load_split_makers()[spec.fixture_slug](args.split, args.size, args.seed)
        prompts = [r.get("prompt", r.get("query")) for r in records]
        if len(set(prompts)) < len(prompts):  # a generator whose value space ran out repeats itself
            raise ValueError(
                f"{spec.name}'s generator gives {len(set(prompts))} distinct {args.split} tasks of the "
                f"{args.size} asked for with seed {args.seed}: ask for fewer, or several seeds"
            )
        Path(args.out).write_text(jsonl(records), encoding="utf-8")
    except (KeyError, ValueError, OSError) as exc:
        print(f"toolbench data split: {exc if isinstance(exc, OSError) else exc.args[0]}", file=sys.stderr)
        return 2
    levels = sorted({r["difficulty"] for r in records if isinstance(r.get("difficulty"), int)})
    spread = f", difficulty {levels[0]}-{levels[-1]}" if levels else ""
    print(f"wrote {len(records)} {spec.name} {args.split} tasks (seed {args.seed}{spread}) to {args.out}; "
          f"play them with --task-file {args.out}")  # fmt: skip
    return 0


def cmd_data_stats(args: argparse.Namespace) -> int:
    """``toolbench data stats``: AppBench's task shapes, ours beside the original records."""
    import dataclasses

    from toolbench.mock_services.apps.stats import by_kind, originals, our_records, table

    if args.task.lower() != "appbench":
        print(
            f"toolbench data stats: no statistics for {args.task!r}; the task sets with them: AppBench", file=sys.stderr
        )
        return 2
    ours = by_kind(our_records(args.split))
    try:
        theirs = originals(args.original) if args.original else None
    except (OSError, ValueError) as exc:
        print(f"toolbench data stats: {str(exc)[:500]}", file=sys.stderr)
        return 2
    if args.json:
        shapes = {"ours": ours, **({"original": theirs} if theirs else {})}
        print(json.dumps({name: {k: dataclasses.asdict(v) for k, v in s.items()} for name, s in shapes.items()}))
    else:
        print(table(ours, theirs, f"{args.split} split", str(args.original)))
        if theirs is None:
            print("(AppBench's own records side by side: --original DIR, the folder of its test_ss/sm/ms/mm.json)")
    return 0


def cmd_data_rapidapi_export(args: argparse.Namespace) -> int:
    """``toolbench data rapidapi-export``: the RapidAPI hub's tools and query files, as ToolBench lays them out."""
    from toolbench.mock_services.rapidapi.export import export

    try:
        counts = export(args.out)
    except OSError as exc:
        print(f"toolbench data rapidapi-export: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {counts.pop('tools')} tools and the query files ({counts}) to {args.out}")
    return 0


def cmd_data_virtualhome_originals(args: argparse.Namespace) -> int:
    """``toolbench data virtualhome-originals``: VirtualHome's original programs replayed in our world."""
    from toolbench.core.tasks import TaskFileError
    from toolbench.envs.virtualhome import VirtualHomeEnv
    from toolbench.mock_services.virtualhome.original import replay

    try:
        tasks = VirtualHomeEnv.tasks_from_file(args.path)
    except (OSError, TaskFileError, ValueError) as exc:
        print(f"toolbench data virtualhome-originals: {exc}", file=sys.stderr)
        return 2
    print(f"VirtualHome original programs in {args.path}")
    print(replay(tasks, args.check).report(args.check))
    return 0


def cmd_data_retrieval(args: argparse.Namespace) -> int:
    """``toolbench data retrieval``: ToolBench's retriever data per group, from its query files."""
    from toolbench.retrieval.data import build, read_test_ids

    files = sorted(Path(args.queries_dir).glob("*.json"))
    test_ids = read_test_ids(sorted(Path(args.test_ids_dir).glob("*.json"))) if args.test_ids_dir else None
    try:
        folders = build(files, args.out, test_ids)
    except (OSError, ValueError, KeyError) as exc:
        print(f"toolbench data retrieval: {exc}", file=sys.stderr)
        return 2
    if not folders:
        print(f"toolbench data retrieval: no query file with relevant APIs in {args.queries_dir}", file=sys.stderr)
        return 2
    for group, folder in folders.items():
        tests, trains, documents = (
            len((folder / name).read_text(encoding="utf-8").splitlines())
            for name in ("test.query.txt", "train.query.txt", "corpus.tsv")
        )
        documents -= 1  # the header
        print(f"{group}: {folder} ({documents} APIs, {tests} test queries, {trains} training queries)")
    return 0
