"""The ``toolbench`` command: ``list``, ``eval`` and ``serve``."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolbench import __version__
from toolbench.catalog import TASKS, find_task
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


def cmd_list(args: argparse.Namespace) -> int:
    from toolbench.eval.tables import text_table

    rows = []
    for spec in TASKS:
        splits = ", ".join(f"{split} ({spec.count(split)})" for split in spec.splits)
        rows.append((spec.env_id, ", ".join(spec.modes), splits))
    print("\n".join(text_table(("id", "modes", "splits"), rows)))
    return 0


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


def cmd_eval(args: argparse.Namespace) -> int:
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
    if args.scorer is not None and tasks != ["AppBench"]:
        return fail("--scorer applies to --task AppBench only")
    env_options: dict[str, Any] = {"scorer": args.scorer} if args.scorer else {}
    if args.cache is not None:
        if tasks != ["RapidAPI"]:
            return fail("--cache applies to --task RapidAPI only")
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


def _error_verdict(episodes: list[Any], max_error_rate: float | None) -> int:
    """Say how many episodes ended in an error; 1 when all did, or more than ``max_error_rate`` of them."""
    failed = [e for e in episodes if e.errored]
    if not failed:
        return 0
    kinds: dict[str, int] = {}
    for e in failed:
        kinds[e.error_kind or "unknown"] = kinds.get(e.error_kind or "unknown", 0) + 1
    rate = len(failed) / len(episodes)
    print(
        f"toolbench eval: {len(failed)} of {len(episodes)} episodes ({rate:.1%}) ended in an error "
        f"({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}; first: {failed[0].error[:300]}): "
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


def cmd_record(args: argparse.Namespace) -> int:
    """Play one episode and save what the camera saw (tasks with ``render_mode="rgb_array"``)."""
    import gymnasium as gym

    from toolbench.agents import make_agent
    from toolbench.catalog import find_task
    from toolbench.eval.frames import save_frames

    try:
        out = Path(args.out)
        if out.suffix.lower() not in (".gif", ".png"):
            raise ValueError(f"--out {args.out!r}: write a .gif (animation) or a .png (strip of frames)")
        if not out.parent.is_dir():
            raise ValueError(f"--out {args.out!r}: the folder {str(out.parent)!r} does not exist")
        spec = find_task(args.task)
        env_class = spec.env_class()
        if "rgb_array" not in env_class.metadata["render_modes"]:
            raise ValueError(f"{spec.name} has nothing to see (no rgb_array render mode)")
        env = gym.make(spec.env_id, split=args.split, mode=args.mode, render_mode="rgb_array").unwrapped
        agent = make_agent(args.agent, seed=args.seed)
        keeps_frames = hasattr(env, "record_frames")  # envs that keep a frame after every move
        if keeps_frames:
            env.record_frames = True
        options = {"task_id": args.task_id} if args.task_id else None
        observation, info = env.reset(seed=args.seed, options=options)
    except (KeyError, ValueError) as exc:
        print(f"toolbench record: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 2
    frames = [] if keeps_frames else [env.render()]
    agent.begin(env, env.task, observation, info)
    while True:
        observation, reward, terminated, truncated, info = env.step(agent.act(observation, info))
        if not keeps_frames:
            frames.append(env.render())
        if terminated or truncated:
            break
    frames = env.frames if keeps_frames else frames
    path = save_frames(frames, args.out)
    print(f"saved {len(frames)} frames of {env.task.id} to {path} (reward {reward:.2f})")
    return 0


def _gate_command() -> Any:
    from toolbench.eval import gate

    return gate


def _rescore_command() -> Any:
    from toolbench.eval import rescore

    return rescore


def cmd_view(args: argparse.Namespace) -> int:
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


def cmd_data_align(args: argparse.Namespace) -> int:
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
    from toolbench.mock_services.rapidapi.export import export

    try:
        counts = export(args.out)
    except OSError as exc:
        print(f"toolbench data rapidapi-export: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {counts.pop('tools')} tools and the query files ({counts}) to {args.out}")
    return 0


def cmd_data_virtualhome_originals(args: argparse.Namespace) -> int:
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


#: What a malformed answer, id or run file can raise while it is read (reported, exit code 2).
BAD_INPUT = (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError)


def _why(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "the file nests too deeply"
    if isinstance(exc, (TypeError, AttributeError, IndexError)):
        return f"a record is not in the expected shape ({type(exc).__name__}: {str(exc)[:200]})"
    return str(exc)[:500]


def cmd_tooleval_convert(args: argparse.Namespace) -> int:
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


def cmd_retrieve(args: argparse.Namespace) -> int:
    from toolbench.eval.tables import text_table

    if args.queries or args.corpus:
        results = _retrieve_original(args)
        if results is None:
            return 2
        where = f"corpus: {args.corpus}"
    else:
        import gymnasium as gym

        from toolbench.retrieval.evaluation import evaluate
        from toolbench.retrieval.factory import retriever

        try:
            tasks = gym.make("toolbench/RapidAPI-v0", split=args.split).unwrapped.tasks
        except ValueError as exc:
            print(f"toolbench retrieve: {exc}", file=sys.stderr)
            return 2
        results = evaluate(retriever(args.retriever), tasks)
        where = f"split: {args.split}"
    rows = [(group, f"{100 * m['ndcg@1']:.1f}", f"{100 * m['ndcg@5']:.1f}") for group, m in sorted(results.items())]
    print(f"retriever: {args.retriever}   {where}")
    print("\n".join(text_table(("test set", "NDCG@1", "NDCG@5"), rows)))
    return 0


def _retrieve_original(args: argparse.Namespace) -> dict[str, dict[str, float]] | None:
    """NDCG per group on ToolBench's retriever data: a ``corpus.tsv`` and query files."""
    from toolbench.retrieval.data import read_corpus, read_queries
    from toolbench.retrieval.evaluation import evaluate_queries
    from toolbench.retrieval.factory import make_retriever

    if not (args.queries and args.corpus):
        print("toolbench retrieve: --queries and --corpus go together", file=sys.stderr)
        return None
    try:
        corpus = read_corpus(args.corpus)
        queries = [q for path in args.queries for q in read_queries(path, corpus, args.qrels)]
        training = [(query, corpus[docid]) for path in args.train_queries or []
                    for _, query, docids in read_queries(path, corpus) for docid in docids]  # fmt: skip
    except (OSError, ValueError, KeyError) as exc:
        print(f"toolbench retrieve: {exc}", file=sys.stderr)
        return None
    if not queries:
        print("toolbench retrieve: no query has a relevant API in the corpus", file=sys.stderr)
        return None
    return evaluate_queries(make_retriever(args.retriever, list(corpus), list(corpus.values()), training), queries)


def cmd_data_retrieval(args: argparse.Namespace) -> int:
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


def _doctor_server(args: argparse.Namespace) -> int:
    """``toolbench doctor --url URL``: a running env server's exposure, reported and probed."""
    from toolbench.env_server.launch import exposure_lines
    from toolbench.env_server.probe import ProbeError, probe_server
    from toolbench.remote import client_token

    try:
        # As RemoteEnv: a --token-file token goes to the URL given, TOOLBENCH_TOKEN to a loopback one only
        token, _ = client_token(args.url, token_file=args.token_file)
        report = probe_server(args.url, token)
    except (OSError, ValueError, ProbeError) as exc:
        print(f"toolbench doctor: {args.url}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report))
        return 0 if report["ok"] else 1
    print(f"The env server at {report['url']}:")
    if report["exposure"]:
        print("\n".join(exposure_lines(report["exposure"])))
    else:
        print("  /health gave no exposure report (not a toolbench env server, or an older one)")
    print("Probes (what a web page or another local user could send):")
    width = max(len(probe["name"]) for probe in report["probes"])
    for probe in report["probes"]:
        mark = "ok  " if probe["ok"] else "FAIL"
        print(f"  {mark} {probe['name'].ljust(width)}  {probe['got']} (expected {probe['expected']})")
    for warning in report["warnings"]:  # allowed on loopback, so not a failure, but said plainly
        print(f"WARN {warning}")
    return 0 if report["ok"] else 1


def cmd_doctor(args: argparse.Namespace) -> int:
    """Which of the sandbox's kernel layers this machine has, and which a run actually gets; with
    ``--url``, a running env server's exposure instead."""
    if args.url is not None:
        return _doctor_server(args)
    from toolbench.core import kernel, sandbox
    from toolbench.env_server.launch import default_exposure, exposure_lines

    report = kernel.detect()
    probe = sandbox.run_in_worker(
        "x = 1",
        "toolbench.core.sandbox:no_names",
        "toolbench.core.sandbox:layers_applied",
        serve=lambda kind, payload: None,
        limits=sandbox.Limits(seconds=60),
    )
    applied = probe.payload if probe.ok and isinstance(probe.payload, list) else []
    serving = default_exposure()
    if args.json:
        print(json.dumps({"layers": report, "applied_in_a_run": applied, "serve_env_defaults": serving}))
        return 0
    width = max(len(name) for name in report)
    print("Kernel layers for agent code (Google Sheets, Tabletop):")
    for name, state in report.items():
        print(f"  {name.ljust(width)}  {state}")
    print(f"A run here gets: {', '.join(applied) if applied else 'none (' + str(probe.error) + ')'}")
    print("toolbench serve env, by default:")
    print("\n".join(exposure_lines(serving)))
    print(f"  token policy: {serving['token_policy']}")
    print(f"  Host names when bound elsewhere: {serving['default_hosts_for_other_addresses']}")
    print("  (toolbench doctor --url URL reports and probes a running server)")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    env_only = {"--task": args.task, "--env-kwargs": args.env_kwargs, "--max-sessions": args.max_sessions,
                "--idle-timeout": args.idle_timeout, "--fresh-idle-timeout": args.fresh_idle_timeout,
                "--snapshot-key": args.snapshot_key,
                "--snapshot-key-file": args.snapshot_key_file, "--token": args.token, "--token-file": args.token_file,
                "--allow-host": args.allow_host, "--allow-origin": args.allow_origin,
                "--max-state-bytes": args.max_state_bytes, "--header-timeout": args.header_timeout,
                "--body-timeout": args.body_timeout}  # fmt: skip
    if args.service == "env":
        if args.task is None:
            print("toolbench serve env: --task is required (say, --task HomeSearch)", file=sys.stderr)
            return 2
        service_only = {"--api-key": args.api_key, "--cache": args.cache}
        given = [flag for flag, value in service_only.items() if value is not None]
        if given:
            print(f"toolbench serve env: {', '.join(given)} apply to the mock services only", file=sys.stderr)
            return 2
        if args.env_kwargs is None:
            args.env_kwargs = "{}"
        from toolbench.env_server.launch import serve_env  # uvicorn and the app load only for this

        return serve_env(args)
    given = [flag for flag, value in env_only.items() if value is not None]
    if given:
        print(f"toolbench serve: {', '.join(given)} apply to 'toolbench serve env' only", file=sys.stderr)
        return 2
    return _serve_service(args)


def _serve_service(args: argparse.Namespace) -> int:
    from toolbench.core.server import make_production_server
    from toolbench.mock_services import create_service_app, service_api_key

    if args.cache is not None:
        if args.service != "rapidapi":
            print("toolbench serve: --cache applies to the rapidapi service only", file=sys.stderr)
            return 2
        if not Path(args.cache).is_dir():
            print(f"toolbench serve: --cache {args.cache!r}: no such folder", file=sys.stderr)
            return 2
        from toolbench.mock_services.rapidapi import virtual

        app = virtual.create_app(cache_dir=args.cache)
    else:
        app = create_service_app(args.service, args.api_key)
    server = make_production_server(
        app,
        args.host,
        args.port,
        threads=args.threads,
        connection_limit=args.connection_limit,
        max_body=args.max_body,
        timeout=args.timeout,
        log_requests=True,
    )
    url = server.url  # the real port, also when --port 0 asked for a free one
    if args.service == "webshop":  # a website: the address of a shopping session for one goal
        print(f"serving webshop; open {url}/fixed_{args.goal} (goal {args.goal}; /fixed_<n> for goal n); Ctrl-C stops")
    elif args.service == "rapidapi":  # StableToolBench's env posts here; its toolbench_key only names a session
        print(f"serving rapidapi (StableToolBench's virtual protocol): POST {url}/virtual; Ctrl-C stops")
    else:
        print(f"serving {args.service} on {url} (API key: {service_api_key(args.service, args.api_key)}); Ctrl-C stops")
    sys.stdout.flush()
    try:
        server.serve_forever()  # waitress returns here on Ctrl-C
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


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

    record = commands.add_parser("record", help="play one episode and save its camera frames (GIF or PNG strip)")
    record.add_argument("--task", default="Tabletop")
    record.add_argument("--task-id", default=None)
    record.add_argument("--agent", default="oracle")
    record.add_argument("--split", default="test")
    record.add_argument("--mode", default=None)
    record.add_argument("--seed", type=int, default=0)
    record.add_argument("--out", default="episode.gif", help="a .gif (animation) or .png (strip) path")
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
