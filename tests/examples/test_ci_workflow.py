"""The CI example (``examples/ci/agent-eval.yml``) runs as written: its toolbench steps replay the
committed model-reply cache offline and pass the gate against the committed baseline; a cache whose
replies got worse fails the gate."""

import json
import shlex
import shutil
from pathlib import Path

import pytest

from toolbench.cli import main

yaml = pytest.importorskip("yaml", reason="PyYAML reads the workflow file (it comes with the trainer extras)")

CI = Path(__file__).resolve().parents[2] / "examples" / "ci"


def workflow_steps() -> tuple[dict[str, str], list[list[str]]]:
    """The workflow's environment and its toolbench commands, in order."""
    workflow = yaml.safe_load((CI / "agent-eval.yml").read_text())
    (job,) = workflow["jobs"].values()
    commands = [shlex.split(step["run"]) for step in job["steps"] if step.get("run", "").startswith("toolbench ")]
    return job["env"], commands


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A working directory laid out as the repository (the example's folder copied in), with the
    workflow's environment set."""
    shutil.copytree(CI, tmp_path / "examples" / "ci")
    monkeypatch.chdir(tmp_path)
    environment, commands = workflow_steps()
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OPENAI_API_KEY", "none")
    return tmp_path, commands


def test_the_workflow_replays_offline_and_passes_its_gate(checkout, capsys):
    folder, commands = checkout
    assert [c[1] for c in commands] == ["eval", "gate"]
    for command in commands:
        assert main(command[1:]) == 0, capsys.readouterr().err
    run = folder / "agent-run"
    baseline = CI / "baseline"
    assert (run / "trajectories.jsonl").read_bytes() == (baseline / "trajectories.jsonl").read_bytes()
    assert "verdict: no regression established (exit 0)" in capsys.readouterr().out


def test_worse_replies_in_the_cache_fail_the_gate(checkout, capsys):
    folder, commands = checkout
    worse = 0
    for path in (folder / "examples" / "ci" / "llm-cache").rglob("*.json"):
        record = json.loads(path.read_text())
        message = record["response"]["choices"][0]["message"]
        program = message["content"].splitlines()
        if len(program) > 1 and program[0].startswith("API.set_location"):
            message["content"] = "\n".join(program[1:])  # the location left out: a wrong search
            path.write_text(json.dumps(record, indent=1, ensure_ascii=False))
            worse += 1
    assert worse >= 10
    eval_command, gate_command = commands
    assert main(eval_command[1:]) == 0
    assert main(gate_command[1:]) == 1
    assert "regression" in capsys.readouterr().out
