"""The commands that report on tasks and run folders: ``view``, ``compare``, ``paper-table``,
``audit`` and ``complexity``.

The parser in ``toolbench.cli`` calls the ``cmd_*`` function; heavy modules load inside it.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from toolbench.catalog import find_task


def cmd_view(args: argparse.Namespace) -> int:
    """``toolbench view``: a run folder's episodes as one HTML page."""
    from toolbench.eval.runs import RunFolderError
    from toolbench.eval.view import write_view

    try:
        path = write_view(args.run_dir, args.out)
    except (RunFolderError, OSError) as exc:
        print(f"toolbench view: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """``toolbench compare``: runs side by side, a table and a bar chart of one metric."""
    from toolbench.eval.compare import check_metric, format_comparison, load_reports, plot_comparison
    from toolbench.eval.runs import RunFolderError

    try:
        runs = load_reports(args.run_dirs)
        check_metric(runs, args.metric)
        table = format_comparison(runs, args.metric, allow_unequal=args.allow_unequal)
        plot = plot_comparison(runs, args.plot, args.metric)
    except (RunFolderError, OSError, ValueError) as exc:
        print(f"toolbench compare: {exc}", file=sys.stderr)
        return 2
    print(table)
    print(f"\nwrote {plot}", file=sys.stderr)
    return 0


def cmd_paper_table(args: argparse.Namespace) -> int:
    """``toolbench paper-table``: a run beside the paper's Table 11."""
    from toolbench.eval.paper_table import compare_with_paper, format_paper_comparison, load_table11
    from toolbench.eval.runs import RunFolderError

    if args.run_dir is None and args.setting is None:
        print("toolbench paper-table: give a run folder, or --setting for the paper's rows alone", file=sys.stderr)
        return 2
    try:
        table = load_table11()
        comparison = compare_with_paper(table, args.run_dir, setting=args.setting, model=args.model)
    except (RunFolderError, OSError, ValueError) as exc:
        print(f"toolbench paper-table: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(comparison.to_json(table)) if args.json else format_paper_comparison(comparison, table))
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    """``toolbench audit``: cheap policies on every env and mode, held to their ceilings."""
    from toolbench.eval.audit import audit_json, format_audit, run_audit, write_report
    from toolbench.eval.runs import RunFolderError

    def show(row: Any) -> None:
        if not args.quiet:
            verdict = "OVER " + ", ".join(row.over) if row.over else "ok"
            scored = ", ".join(f"{m} {row.metrics[m]:.3f}" for m in ("success_rate", "score") if m in row.metrics)
            print(
                f"{row.task} {row.mode} {row.split} {row.policy}: {row.n} episodes, {scored}: {verdict}",
                file=sys.stderr,
            )

    try:
        tasks = [] if args.task == "all" else [find_task(args.task).name]
        modes = [args.mode] if args.mode else None
        policies = args.policy or None
        splits = args.split or ("test", "unseen")
        rows = run_audit(tasks, modes, policies, args.limit, args.workers, args.out, progress=show, splits=splits)
    except (KeyError, ValueError, RunFolderError) as exc:
        print(f"toolbench audit: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    if args.out:
        write_report(rows, args.out)
    print(json.dumps(audit_json(rows)) if args.json else format_audit(rows))
    return 1 if any(row.over for row in rows) else 0


def cmd_complexity(args: argparse.Namespace) -> int:
    """``toolbench complexity``: ToolBench's API-selection complexity per task, and its correlation with runs."""
    from toolbench.core.tasks import TaskFileError
    from toolbench.eval import complexity as cx
    from toolbench.eval.runs import RunFolderError

    try:
        if args.task_file:
            if not args.task or len(args.task) != 1:
                raise ValueError("--task-file needs exactly one --task: the task the file's records are for")
            rows = [cx.file_complexity(args.task[0], args.task_file, args.examples, args.api_size)]
        else:
            if args.examples or args.api_size:
                raise ValueError("--examples and --api-size go with --task-file")
            names = [find_task(name).name for name in args.task] if args.task else list(cx.TOOLBENCH_TASKS)
            rows = cx.all_complexities(names, with_alignment=not args.no_align)
        correlations = [cx.run_correlation(rows, run) for run in args.runs or ()]
    except (KeyError, ValueError, OSError, TaskFileError, RunFolderError) as exc:
        print(f"toolbench complexity: {exc if isinstance(exc, OSError) else exc.args[0]}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(cx.complexities_json(rows, correlations)))
        return 0
    print(cx.format_complexities(rows))
    print(f"log base {cx.LOG_BASE}: distances in bits (toolbench/eval/complexity.py says why)")
    for found in correlations:
        print(cx.format_correlation(found))
    return 0
