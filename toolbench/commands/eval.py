"""``toolbench eval``: check the flags, open the run folder, play the run with the harness, write
its summary (and a ToolLLM run's answer files for ToolEval), and say how many episodes ended in an error.

The parser in ``toolbench.cli`` calls the ``cmd_*`` function; heavy modules load inside it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from toolbench.catalog import TASKS, find_task
from toolbench.eval.episodes import error_kinds


def cmd_eval(args: argparse.Namespace) -> int:
    """``toolbench eval``: score an agent on a task (or all tasks), optionally into a run folder."""
    from toolbench.agents.base import EpisodeLimits
    from toolbench.agents.client import DEFAULT_BASE_URL
    from toolbench.eval.harness import RunInterrupted, evaluate, format_table, plan_run, skipped_text, tasks_for_all
    from toolbench.eval.runs import RunFolder, command_line, task_set_digest

    def fail(message: str) -> int:
        print(f"toolbench eval: {message}", file=sys.stderr)
        return 2

    if args.resume and args.overwrite:
        return fail("--resume and --overwrite exclude each other")
    if (args.resume or args.overwrite) and not args.out:
        return fail("--resume and --overwrite need --out")
    if args.ray_address is not None and args.backend != "ray":
        return fail("--ray-address needs --backend ray")
    skipped: dict[str, str] = {}
    if args.task == "all":
        if args.task_file:
            return fail("--task-file needs one --task (the task its records belong to)")
        tasks, skipped = tasks_for_all(args.split, args.mode)
        if not tasks:
            return fail(f"no task has split {args.split!r} and mode {args.mode!r}")
        if skipped:
            print(f"toolbench eval: --task all skips {skipped_text(skipped)}", file=sys.stderr)
    else:
        tasks = [args.task]
    if args.task_file and not Path(args.task_file).is_file():
        return fail(f"--task-file {args.task_file!r}: no such file")
    for flag, option, given in (("--scorer", "scorer", args.scorer), ("--cache", "cache_dir", args.cache)):
        takers = [spec.name for spec in TASKS if option in spec.env_class().run_options] if given is not None else []
        if given is not None and (len(tasks) != 1 or find_task(tasks[0]).name not in takers):
            return fail(f"{flag} applies to --task {' or '.join(takers)} only")
    env_options: dict[str, Any] = {"scorer": args.scorer} if args.scorer else {}
    if args.cache is not None:
        if not Path(args.cache).is_dir():
            return fail(f"--cache {args.cache!r}: no such folder (StableToolBench's tool_response_cache)")
        env_options["cache_dir"] = str(Path(args.cache).resolve())
    if args.only and not args.resume:
        return fail("--only reruns some episodes of a run: it needs --resume and --out")
    llm_cache = None
    if args.llm_cache is not None:
        if not args.agent.startswith(("openai:", "react", "dfsdt")):
            return fail(f"--llm-cache caches model replies: {args.agent!r} calls no model")
        llm_cache = (str(Path(args.llm_cache).resolve()), args.llm_cache_mode)
    elif args.llm_cache_mode != "record":
        return fail("--llm-cache-mode needs --llm-cache DIR")
    limits = EpisodeLimits(args.max_turns, args.max_tokens_per_episode, args.episode_timeout, args.max_cost)
    task_ids = _task_ids(args.task_ids) if args.task_ids else None
    folder = None
    try:
        settings = _model_settings(args)
        tasks = [find_task(name).name for name in tasks]
        plan = plan_run(
            args.agent, tasks, args.split, args.mode, args.limit, args.task_file, settings, args.seed, task_ids
        )
        if args.out:
            run_settings = {
                "agent": args.agent,
                "tasks": tasks,
                "task_sets": {planned.spec.name: task_set_digest(list(planned.tasks)) for planned in plan},
                "split": args.split,
                "mode": args.mode,
                "limit": args.limit,
                "seed": args.seed,
                "task_file": str(Path(args.task_file).resolve()) if args.task_file else None,
                "model": _result_settings(settings),
                **({"scorer": args.scorer} if args.scorer else {}),
                **({"cache_dir": env_options["cache_dir"]} if args.cache else {}),
                **({"trials": args.trials} if args.trials > 1 else {}),
                **({"limits": limits.to_json()} if limits != EpisodeLimits() else {}),
                **({"task_ids": sorted(task_ids)} if task_ids else {}),
                # A scorer's version is part of what a score means: a run is not resumed across a change.
                "scorer_versions": {planned.spec.name: planned.spec.env_class().scorer_version for planned in plan},
            }
            about = {"endpoint": os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL} if settings else {}
            if llm_cache:  # not a setting: a replayed run gives the recorded run's episodes
                about["llm_cache"] = {"dir": args.llm_cache, "mode": llm_cache[1]}
            # Not a setting: the backends give the same episodes, so a run may be resumed on either.
            about["backend"] = _backend_record(args)
            folder = RunFolder.open(
                args.out,
                run_settings,
                command_line(),
                resume=args.resume,
                overwrite=args.overwrite,
                about=about,
                only=args.only,
            )
        report, episodes = evaluate(
            args.agent,
            tasks,
            split=args.split,
            mode=args.mode,
            limit=args.limit,
            workers=args.workers,
            seed=args.seed,
            progress=not args.quiet,
            settings=settings,
            task_file=args.task_file,
            finished=folder.finished if folder else (),
            on_episode=folder.append if folder else None,
            frames_dir=folder.frames_dir if folder and not args.no_frames else None,
            diagnostics=folder is not None,  # the run's records show Sheets' expected cells
            plan=plan,
            env_options=env_options,
            skipped=skipped,
            backend=args.backend,
            ray_address=args.ray_address,
            trials=args.trials,
            limits=limits,
            llm_cache=llm_cache,
            retry_errors=args.retry_errors,
            only=folder.rerun if folder else None,
        )
    except RunInterrupted as stop:
        if folder:
            folder.write_summary(stop.report)
        print(json.dumps(stop.report) if args.json else format_table(stop.report))
        failed = sum(e.errored for e in stop.episodes)
        saved = f"{len(stop.episodes) - failed} finished episodes" + (
            f" and {failed} that ended in an error (played again on resume)" if failed else ""
        )
        where = f"; {saved} are saved in {args.out}: add --resume to the same command to go on" if folder else ""
        print(f"toolbench eval: the run stopped: {stop}{where}", file=sys.stderr)
        return 130 if str(stop).startswith("interrupted") else 1
    except (KeyError, ValueError, ImportError) as exc:  # RunFolderError is a ValueError; Ray not installed
        return fail(exc.args[0] if exc.args else str(exc))
    if folder:
        folder.write_summary(report)
        if args.agent.startswith(("react", "dfsdt")) and "RapidAPI" in tasks:
            _write_toolllm_answers(Path(args.out))
    print(json.dumps(report) if args.json else format_table(report))
    _say_placeholders(episodes)
    return _error_verdict(episodes, args.max_error_rate)


def _model_settings(args: argparse.Namespace) -> Any:
    """The ``openai:MODEL`` settings from the flags; ``None`` for the scripted agents."""
    from toolbench.agents.llm import ModelSettings

    given = [flag for flag, value in _model_flags(args).items() if value is not None]
    if not args.agent.startswith(("openai:", "react", "dfsdt")):
        if given:
            flags = ", ".join(given)
            raise ValueError(f"{flags} apply to openai:MODEL agents (and react:, dfsdt:), not {args.agent!r}")
        return None
    defaults = ModelSettings()
    return ModelSettings(
        prompt=args.prompt or defaults.prompt,
        max_tokens=args.max_tokens,
        temperature=args.temperature if args.temperature is not None else defaults.temperature,
        stop=tuple(args.stop) if args.stop is not None else None,
        top_k_api=args.top_k_api,
        top_k_example=args.top_k_example,
        native_tools=not args.no_tools,
        timeout=args.timeout if args.timeout is not None else defaults.timeout,
        max_retries=args.max_retries if args.max_retries is not None else defaults.max_retries,
        breaker=args.breaker if args.breaker is not None else defaults.breaker,
        restore=args.restore != "off",
    )


def _model_flags(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "--prompt": args.prompt,
        "--max-tokens": args.max_tokens,
        "--temperature": args.temperature,
        "--stop": args.stop,
        "--top-k-api": args.top_k_api,
        "--top-k-example": args.top_k_example,
        "--no-tools": args.no_tools or None,
        "--timeout": args.timeout,
        "--max-retries": args.max_retries,
        "--breaker": args.breaker,
        "--restore": args.restore,
    }


def _error_verdict(episodes: list[Any], max_error_rate: float | None) -> int:
    """Say how many episodes ended in an error; 1 when all did, or more than ``max_error_rate`` of them."""
    failed = [e for e in episodes if e.errored]
    if not failed:
        return 0
    kinds = error_kinds(failed)
    rate = len(failed) / len(episodes)
    print(
        f"toolbench eval: {len(failed)} of {len(episodes)} episodes ({rate:.1%}) ended in an error "
        f"({', '.join(f'{k} {n}' for k, n in kinds.items())}; first: {failed[0].error[:300]}): "
        "no verdict on them, and the rates count them as not passed; --resume --only errors plays them again",
        file=sys.stderr,
    )
    if max_error_rate is not None and rate > max_error_rate:
        print(f"toolbench eval: the error rate {rate:.1%} is over --max-error-rate {max_error_rate:g}", file=sys.stderr)
        return 1
    return 1 if len(failed) == len(episodes) else 0


def _task_ids(text: str) -> list[str]:
    """``--task-ids``: ids separated by commas, or ``@FILE`` with one id per line."""
    if text.startswith("@"):
        lines = Path(text[1:]).read_text(encoding="utf-8").splitlines()
        return [line.strip() for line in lines if line.strip()]
    return [part.strip() for part in text.split(",") if part.strip()]


def _backend_record(args: argparse.Namespace) -> dict[str, Any]:
    """Where a run's episodes were played, for its ``run.json``."""
    if args.backend != "ray":
        return {"name": args.backend, "workers": args.workers or 1}
    from importlib import metadata

    try:
        version = metadata.version("ray")
    except metadata.PackageNotFoundError:
        version = None
    return {"name": "ray", "workers": args.workers, "ray_address": args.ray_address, "ray": version}


def _say_placeholders(episodes: list[Any]) -> None:
    """On stderr, how many RapidAPI episodes got a placeholder for some call (no cache entry, no hub API)."""
    from toolbench.mock_services.rapidapi.original import tally_sources

    tally = tally_sources(e.info for e in episodes)
    if tally.with_placeholder:
        print(
            f"toolbench eval: {tally.with_placeholder} of {tally.episodes} RapidAPI episodes got a placeholder "
            f"response ({tally.placeholders} of {tally.calls} calls: no cache entry and no hub API), so a judge's "
            "verdict on them rests on made-up "
            "values; tooleval pass leaves them out (--cache DIR replays StableToolBench's response cache)",
            file=sys.stderr,
        )


def _write_toolllm_answers(out: Path) -> None:
    """A ToolLLM run's answer files, as ToolBench's scripts write them: the raw answers (the search
    trees) in ``answers/`` and ToolEval's converted answers in ``converted.json``."""
    from toolbench.eval.tooleval import convert_run, write_answer_files

    trajectories = out / "trajectories.jsonl"
    written = write_answer_files(trajectories, out / "answers")
    converted = out / "converted.json"
    converted.write_text(json.dumps(convert_run(trajectories), ensure_ascii=False), encoding="utf-8")
    print(f"wrote {written} answer files to {out / 'answers'} and ToolEval's answers to {converted}", file=sys.stderr)


def _result_settings(settings: Any) -> dict[str, Any] | None:
    """The model settings that change results (a resumed run must keep them)."""
    if settings is None:
        return None
    data = settings.to_json()
    for key in ("timeout", "max_retries", "breaker"):
        data.pop(key)
    return data
