"""The language-planner's 5,088 examples (../shared/refdata): how many parse into executable
programs in our vocabulary, and how many run in our home with no failed precondition."""

import gymnasium as gym

from toolbench.mock_services.virtualhome import World, build_home, parse_program
from toolbench.mock_services.virtualhome.original import ORIGINAL_HOME, infer_start


def test_the_language_planner_programs_parse_and_mostly_run(refdata):
    path = refdata / "language-planner" / "src" / "available_examples.json"
    env = gym.make("toolbench/VirtualHome-v0", task_file=str(path)).unwrapped
    programs = [reference for task in env.tasks for reference in task.references]
    assert len(env.tasks) == 204 and len(programs) == 1121  # distinct (activity, program) pairs
    executable = ran = 0
    for program in programs:
        calls = parse_program(program)
        executable += all(call.executable for call in calls)
        world = World(build_home(ORIGINAL_HOME), infer_start(program))  # each program's own start
        ran += all(call.executable and world.do(call.action, call.args).ok for call in calls)
    print(f"language-planner programs: {executable / len(programs):.1%} executable, {ran / len(programs):.1%} run")
    assert executable / len(programs) > 0.93
    assert ran / len(programs) > 0.65


def test_an_original_task_plays_through_the_env(refdata):
    path = refdata / "language-planner" / "src" / "available_examples.json"
    env = gym.make("toolbench/VirtualHome-v0", task_file=str(path))
    played = 0
    for task in env.unwrapped.tasks:
        env.reset(options={"task_id": task.id})
        _, reward, _, _, info = env.step(task.references[0])
        assert reward == 1.0 and info["lcs"] == 1.0
        if info["simulated"] and task.get("goals"):  # goals are what every runnable reference achieves
            assert info["goal_rate"] == 1.0 and info["success"], task.id
            played += 1
    assert played > 50


def test_eval_plays_the_original_examples_file(refdata, tmp_path, capsys):
    from toolbench.cli import main

    path = refdata / "language-planner" / "src" / "available_examples.json"
    assert main(["eval", "--agent", "oracle", "--task", "VirtualHome", "--task-file", str(path)]) == 0
    table = capsys.readouterr().out
    assert "VirtualHome  program  204" in table
