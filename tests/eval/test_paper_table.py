"""``toolbench paper-table``: Table 11's data file, and runs shown beside it."""

import json

import pytest

import toolbench
from toolbench.cli import main
from toolbench.eval.harness import summarize
from toolbench.eval.paper_table import PAPER_MARK, load_table11
from toolbench.prompting import PROMPT_SETTINGS


@pytest.fixture(scope="module")
def table():
    return load_table11()


def test_table11_has_every_setting_and_model_row_complete(table):
    assert set(PROMPT_SETTINGS) <= set(table.settings)
    assert "Table 11" in table.source
    for block in table.settings.values():
        assert block.rows, block.setting
        for model, cells in block.rows.items():
            assert len(cells) == len(table.columns)
            blank = [table.columns[i].column for i, cell in enumerate(cells) if cell is None]
            # Without demonstrations the paper has no WebShop Short or Tabletop number; with them, every number.
            assert blank == ([] if "fewshot" in block.setting else ["WebShop Short", "Tabletop"]), (
                block.setting,
                model,
            )
            assert all(0.0 <= mean <= 100.0 and std >= 0.0 for mean, std in filter(None, cells))


def test_table11_columns_name_tasks_and_metrics_the_harness_reports(table):
    report_columns = {"success_rate", "score", "executable_rate"}  # every task's report has these
    for column in table.columns:
        spec = toolbench.find_task(column.task)
        assert column.mode in spec.modes
        if column.metric in report_columns:
            continue
        env_class = spec.env_class()
        task = env_class.load_split("test")[0]
        env = env_class(mode=column.mode)
        try:
            env.reset(options={"task_id": task.id})
            _, _, _, _, info = env.step(env.oracle_actions(task)[0])
        finally:
            env.close()
        assert isinstance(info.get(column.metric), float), column  # a metric of the task's episodes


def test_an_unprompted_run_shows_the_default_setting_and_marks_partial_work(tmp_path, capsys):
    out = tmp_path / "vh"
    assert (
        main(["eval", "--agent", "oracle", "--task", "VirtualHome", "--limit", "2", "--out", str(out), "--quiet"]) == 0
    )
    capsys.readouterr()
    assert main(["paper-table", str(out)]) == 0
    text = capsys.readouterr().out
    assert "setting: fewshot (Table 11: '3-shot')" in text and "not a prompted model" in text
    rows = [line for line in text.splitlines() if line.startswith("VirtualHome")]
    assert len(rows) == 2  # executability, then LCS
    assert "executable_rate 100.0 n=2 [1]" in rows[0] and "23.0(0.0)" in rows[0]
    assert "lcs 100.0 n=2 [1]" in rows[1] and "23.5(0.0)" in rows[1]  # the same note, once
    assert "[1] partial: 2 of the 100 test tasks" in text
    assert PAPER_MARK in text


def test_a_prompted_run_is_shown_beside_its_setting_and_failures_are_said(model, tmp_path, capsys):
    out = tmp_path / "cat"
    command = ["eval", "--agent", "openai:tiny", "--task", "CatAPI", "--limit", "2", "--prompt", "system"]
    assert main([*command, "--out", str(out), "--quiet", "--max-retries", "0"]) == 0
    capsys.readouterr()
    assert main(["paper-table", str(out), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["setting"] == "system" and shown["paper_label"] == "Sys. Prompt"
    assert "live services" in shown["measured_on"]
    (line,) = shown["lines"]
    assert line["task"] == "CatAPI" and line["run"]["value"] == 1.0 and line["run"]["n"] == 2
    assert line["paper"]["gpt4"] == {"mean": 94.2, "std": 0.8}
    assert main(["paper-table", str(out), "--setting", "fewshot", "--model", "starcoder"]) == 0
    text = capsys.readouterr().out
    assert "the run used the 'system' prompt setting" in text and "paper: starcoder" in text
    assert "paper: gpt4" not in text and "84.0(0.0)" in text

    model.behaviour = "fail"
    failed = tmp_path / "failed"
    main([*command, "--out", str(failed), "--quiet", "--max-retries", "0"])
    capsys.readouterr()
    assert main(["paper-table", str(failed)]) == 0
    text = capsys.readouterr().out
    assert "success_rate 0.0 n=2 [1]" in text
    assert "2 of 2 episodes ended with the agent failing" in text


def test_paper_rows_alone_and_refusals(capsys):
    assert main(["paper-table", "--setting", "system+fewshot", "--model", "GPT4"]) == 0
    text = capsys.readouterr().out
    assert "run (ours" not in text and "99.2(0.0)" in text and "83.8(0.0)" in text
    assert main(["paper-table"]) == 2
    assert main(["paper-table", "--setting", "alignment", "--model", "gpt4"]) == 2  # no GPT-4 was fine-tuned
    assert main(["paper-table", "--setting", "two-shot"]) == 2
    assert "no setting 'two-shot'" in capsys.readouterr().err


def test_a_metric_missing_from_some_episodes_is_said(tmp_path, capsys):
    """A report whose metric rests on fewer episodes than it played says so."""
    from toolbench.eval.harness import EpisodeResult

    def episode(i, metrics):
        return EpisodeResult("VirtualHome", f"vh-{i}", None, False, 0.5, True, None, metrics, 1, mode="program")

    played = [episode(0, {"lcs": 0.5}), episode(1, {})]
    folder = tmp_path / "run"
    folder.mkdir()
    lines = [json.dumps(e.to_json()) for e in played]
    (folder / "trajectories.jsonl").write_text("\n".join(lines) + "\n")
    report = {"agent": "x", "split": "test", "tasks": {"VirtualHome": summarize(played, "program")}}
    (folder / "summary.json").write_text(json.dumps(report))
    assert main(["paper-table", str(folder)]) == 0
    text = capsys.readouterr().out
    assert "lcs is over the 1 of 2 episodes that have it" in text
