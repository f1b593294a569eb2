"""toolbench view (a static HTML page, checked in a real headless Chromium) and toolbench compare."""

import json
import re
import shutil
import subprocess

import pytest

import toolbench
from toolbench.cli import main

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two runs over every task: the oracle (interactive where a task has it) and the random agent."""
    root = tmp_path_factory.mktemp("runs")
    for name, agent in (("oracle", "oracle"), ("random", "random")):
        assert (
            main(["eval", "--agent", agent, "--task", "all", "--limit", "3", "--out", str(root / name), "--quiet"]) == 0
        )
    assert (
        main(
            [
                "eval",
                "--agent",
                "oracle",
                "--task",
                "all",
                "--mode",
                "interactive",
                "--limit",
                "2",
                "--out",
                str(root / "interactive"),
                "--quiet",
            ]
        )
        == 0
    )
    return root


@pytest.fixture
def chromium():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("Chromium is not installed (Debian package chromium)")
    return path


def dom_after_scripts(chromium, page, tmp_path):
    result = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_view_renders_every_episode_in_chromium(runs, chromium, tmp_path, capsys):
    assert main(["view", str(runs / "random")]) == 0
    page = runs / "random" / "report.html"
    assert str(page) in capsys.readouterr().out
    dom = dom_after_scripts(chromium, page, tmp_path)
    episodes = re.findall(r'<details class="episode (success|failure)"[^>]*data-task="(\w+)"', dom)
    assert len(episodes) == 3 * len(toolbench.TASKS)
    assert {task for _, task in episodes} == {spec.name for spec in toolbench.TASKS}
    assert (
        f'<span id="shown">{3 * len(toolbench.TASKS)}</span>' in dom
    )  # the filter script ran and counted the shown episodes
    assert "Prompt" in dom and "Observation 1" in dom


def test_view_shows_mismatches_and_frames(runs, tmp_path):
    out = tmp_path / "page.html"
    assert main(["view", str(runs / "interactive"), "--out", str(out)]) == 0
    html = out.read_text()
    interactive = [spec for spec in toolbench.TASKS if "interactive" in spec.modes]
    assert html.count('<details class="episode') == 2 * len(interactive)
    assert html.count("data:image/png;base64,") == 2  # Tabletop's frames, inside the one file
    assert "Mismatches" not in html  # the oracle has none
    assert main(["view", str(runs / "random"), "--out", str(tmp_path / "random.html")]) == 0
    random_page = (tmp_path / "random.html").read_text()
    assert "Mismatches" in random_page and "expected" in random_page  # Sheets' cell mismatches
    assert "Tabletop" in html and "Reason" in html


def test_view_escapes_what_the_agent_wrote(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["eval", "--agent", "random", "--task", "CatAPI", "--limit", "2", "--out", str(run), "--quiet"]) == 0
    lines = (run / "trajectories.jsonl").read_text().splitlines()
    episode = json.loads(lines[0])
    hostile = '</script><script>alert(1)</script><img src=x onerror="alert(2)">'
    episode["actions"] = [hostile]
    episode["task_id"] = hostile
    broken = {**json.loads(lines[1]), "metrics": {"f1": hostile}}  # not an episode line: skipped
    (run / "trajectories.jsonl").write_text(json.dumps(episode) + "\n" + json.dumps(broken) + "\n")
    (run / "summary.json").write_text(json.dumps({"agent": hostile, "tasks": {"CatAPI": {"n": hostile}}}))
    (run / "run.json").write_text("{not json")
    assert main(["view", str(run)]) == 0
    page = (run / "report.html").read_text()
    assert "<script>alert" not in page and "<img src=x" not in page
    assert page.count("<script>") == 1  # the page's own filter script
    assert "&lt;/script&gt;" in page and page.count('<details class="episode') == 1


def test_view_of_a_folder_that_is_not_a_run(tmp_path, capsys):
    assert main(["view", str(tmp_path)]) == 2
    assert "not a toolbench run" in capsys.readouterr().err


def cells_of(line):
    return re.split(r"\s{2,}", line.strip())


def test_compare_prints_the_table_and_writes_a_png(runs, tmp_path, capsys):
    plot = tmp_path / "compare.png"
    assert main(["compare", str(runs / "oracle"), str(runs / "random"), "--plot", str(plot)]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = cells_of(lines[1])
    assert header[0] == "run" and header[1:-1] == [spec.name for spec in toolbench.TASKS] and header[-1] == "average"
    oracle, chance = cells_of(lines[3]), cells_of(lines[4])
    # Three episodes a task, every one a success: Wilson's interval says how little three can show.
    assert oracle[0] == "oracle (oracle)" and all(cell == "1.000 [0.439, 1.000] n=3" for cell in oracle[1:-1])
    assert chance[0] == "random (random)" and float(chance[-1]) < 0.2
    for cell in chance[1:-1]:
        value, low, high = (float(x) for x in re.fullmatch(r"(\S+) \[(\S+), (\S+)\] n=3", cell).groups())
        assert low <= value <= high and high - low > 0.3
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and plot.stat().st_size > 5000


def test_compare_refuses_an_unknown_metric_and_averages_shared_tasks(runs, tmp_path, capsys):
    plot = str(tmp_path / "p.png")
    assert main(["compare", str(runs / "oracle"), "--metric", "bogus", "--plot", plot]) == 2
    assert "no run has the metric 'bogus'" in capsys.readouterr().err
    assert main(["compare", str(runs / "oracle"), "--metric", "mode", "--plot", plot]) == 2
    assert main(["compare", str(runs / "random"), str(runs / "interactive"), "--plot", plot, "--allow-unequal"]) == 0
    out = capsys.readouterr().out
    assert "average over the tasks every run has: HomeSearch, TripBooking, GoogleSheets, Tabletop" in out


def test_compare_another_metric(runs, tmp_path, capsys):
    assert main(["compare", str(runs / "random"), "--metric", "score", "--plot", str(tmp_path / "p.png")]) == 0
    out = capsys.readouterr().out
    summary = json.loads((runs / "random" / "summary.json").read_text())
    assert f"{summary['tasks']['HomeSearch']['score']:.3f} [" in out and out.startswith("metric: score")


def test_compare_shows_episode_counts_and_will_not_average_unequal_runs(tmp_path, capsys):
    for name, limit in (("small", "5"), ("large", "40")):
        assert main(["eval", "--agent", "random", "--task", "CatAPI", "--limit", limit, "--seed", "1", "--quiet",
                     "--out", str(tmp_path / name)]) == 0  # fmt: skip
        assert main(["eval", "--agent", "random", "--task", "HomeSearch", "--limit", limit, "--seed", "1", "--quiet",
                     "--out", str(tmp_path / f"hs-{name}")]) == 0  # fmt: skip
    capsys.readouterr()
    command = ["compare", str(tmp_path / "small"), str(tmp_path / "large"), "--plot", str(tmp_path / "a.png")]
    assert main(command) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert cells_of(lines[1]) == ["run", "CatAPI"]  # no average column
    assert cells_of(lines[3])[1].endswith("n=5") and cells_of(lines[4])[1].endswith("n=40")
    assert "no average: the runs played different numbers of episodes of CatAPI 5 vs 40" in out
    assert "--allow-unequal" in out
    assert main([*command, "--allow-unequal"]) == 0
    out = capsys.readouterr().out
    assert cells_of(out.splitlines()[1])[-1] == "average" and "mixes runs of different numbers of episodes" in out
    # A mean (HomeSearch's F1 of a random agent) gets the bootstrap's interval, the same in every run.
    scores = ["compare", str(tmp_path / "hs-small"), str(tmp_path / "hs-large"), "--metric", "f1", "--allow-unequal"]
    assert main([*scores, "--plot", str(tmp_path / "b.png")]) == 0
    first = capsys.readouterr().out
    assert main([*scores, "--plot", str(tmp_path / "c.png")]) == 0
    assert capsys.readouterr().out == first and (tmp_path / "b.png").read_bytes() == (tmp_path / "c.png").read_bytes()
    small, large = (
        re.fullmatch(r"(\S+) \[(\S+), (\S+)\] n=(\d+)", cells_of(line)[1]) for line in first.splitlines()[3:5]
    )
    (v1, l1, h1, n1), (v2, l2, h2, n2) = ([float(x) for x in m.groups()] for m in (small, large))
    assert (n1, n2) == (5, 40) and l1 <= v1 <= h1 and l2 <= v2 <= h2 and h2 - l2 < h1 - l1
