"""ToolBench's API-selection complexity score (appendix D) and ``toolbench complexity``."""

import json
import math
from collections import Counter
from fractions import Fraction

from scipy.stats import spearmanr

from toolbench.cli import main
from toolbench.eval.api_calls import CurlShapes, NamedFunctions
from toolbench.eval.complexity import (
    PAPER_TABLE9,
    TaskComplexity,
    complexity_score,
    derivation_probability,
    distance,
    reversed_f1_distance,
    run_correlation,
    single_steps,
    spearman,
)
from toolbench.eval.harness import EpisodeResult


def test_the_worked_example_of_d11():
    # |D| = 10, e = {a1, a2, a3, a4}, t = {a1, a2, a4, a5, a6}: drop a3 (1/2)^4, add a5 and a6 (1/10)^2.
    example, test = Counter(["a1", "a2", "a3", "a4"]), Counter(["a1", "a2", "a6", "a4", "a5"])
    assert derivation_probability(test, example, 10) == Fraction(1, 16) * Fraction(1, 100)
    assert math.isclose(distance(test, example, 10), math.log2(1600))
    assert math.isclose(distance(test, example, 10, base=10), math.log10(1600))
    # F1 = 2 * 3 shared / (5 + 4) calls.
    assert math.isclose(reversed_f1_distance(test, example), (1 - 6 / 9) * 100)


def test_repeated_calls_count_as_distinct():
    twice, once = Counter({"find": 2}), Counter({"find": 1})
    assert derivation_probability(twice, once, 4) == Fraction(1, 2) * Fraction(1, 4)
    assert derivation_probability(twice, twice, 4) == Fraction(1, 4)


def test_score_is_the_mean_over_tests_of_the_closest_example():
    tests = [Counter("ab"), Counter("c")]
    examples = [Counter("a"), Counter("ab"), Counter("abc")]
    # Test ab: from ab costs 2 bits, from a 1 + log2 8 = 4, from abc 3. Test c: from abc 3, from a 1 + 3 = 4.
    assert math.isclose(complexity_score(tests, examples, 8), (2 + 3) / 2)


def test_spearman_agrees_with_scipy():
    xs, ys = [1.1, 1.0, 6.4, 10.1, 12.3], [0.07, 0.04, 0.03, 0.33, 0.77]
    assert math.isclose(spearman(xs, ys), spearmanr(xs, ys).statistic)
    assert math.isclose(spearman([1, 2, 2, 3], [4, 1, 1, 9]), spearmanr([1, 2, 2, 3], [4, 1, 1, 9]).statistic)


def test_tabletop_examples_split_into_single_steps():
    program = "# stack the blocks\nnames = get_obj_names()\nstack_objects_in_order(names)\n# say done\nsay('done')\n"
    assert single_steps(program) == ["# stack the blocks\nnames = get_obj_names()\nstack_objects_in_order(names)",
                                     "# say done\nsay('done')"]  # fmt: skip


DOCS = """# List things
curl -X GET 'https://api.example.com/v1/things?kind={kind}'

Parameters:
kind: (required) the kind.
limit, page: (optional) page size and number.

# Delete the thing {thing_id}
curl -X DELETE 'https://api.example.com/v1/things/{thing_id}'
"""


def test_every_url_with_parameters_shape_is_one_option():
    space = CurlShapes(DOCS)
    assert space.size == 4 + 1  # kind with any subset of {limit, page}, and the delete
    listed = space.calls("curl -X GET 'https://api.example.com/v1/things?kind=a&limit=3&appid=k'")
    other = space.calls("curl 'https://api.example.com/v1/things?kind=b&page=2'")
    deleted = space.calls("curl -X DELETE 'https://api.example.com/v1/things/77'")
    assert set(listed) | set(other) | set(deleted) <= set(space.options) and len({*listed, *other, *deleted}) == 3
    assert not set(space.calls("curl 'https://api.example.com/v1/things?kind=a&colour=red'")) & set(space.options)


def test_named_functions_count_each_call():
    space = NamedFunctions("# Go\nAgent.WalkTo(place)\n\n# Take\nAgent.Grab(thing)\n\n# Search\nsearch[query]\n")
    assert space.size == 3
    assert space.calls("Agent.WalkTo(a)\nAgent.WalkTo(b)\nprint(x)  # Agent.Grab(y)") == Counter({"WalkTo": 2})
    assert space.calls("search[red shoes]\nclick[buy now]") == Counter({"search": 1})


def test_complexity_command_prints_ours_beside_the_paper(capsys):
    assert main(["complexity", "--no-align"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: line.split() for line in lines[2:10]}
    assert set(rows) == set(PAPER_TABLE9)
    assert all(rows[task][-1] == f"{PAPER_TABLE9[task]:.1f}" for task in rows)
    assert rows["WebShop"][4] == "0.0" and float(rows["HomeSearch"][4]) > 0  # 0 by definition; HomeSearch is not
    assert main(["complexity", "--task", "OpenWeather", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    weather = found["tasks"]["OpenWeather"]
    assert found["log_base"] == 2 and weather["paper"] == 1.1 and weather["aligned_examples"] == 1800 * 3
    # The alignment data covers every call the tests make better than 18 demonstrations do.
    assert weather["aligned"] < weather["score"]


def test_task_file_in_the_original_shape(tmp_path, capsys):
    url = "https://api.openweathermap.org/data/2.5"
    tests = [
        {"prompt": "Weather in Oslo?", "completion": [f"curl -X GET '{url}/weather?q=Oslo&appid={{API_KEY}}'"]},
        {"prompt": "Pollution at 1,2?", "completion": [f"curl -X GET '{url}/air_pollution?lat=1&lon=2&appid=k'"]},
    ]
    task_file = tmp_path / "test.jsonl"
    task_file.write_text("".join(json.dumps(r) + "\n" for r in tests))
    examples = tmp_path / "examples"
    examples.mkdir()
    (examples / "0_0.txt").write_text(
        f"Task: Weather in Paris?\nAction:\ncurl -X GET '{url}/weather?q=Paris&appid=k'\n"
    )
    argv = ["complexity", "--task", "OpenWeather", "--task-file", str(task_file), "--examples", str(examples)]
    assert main([*argv, "--api-size", "37", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["tasks"]["OpenWeather"]
    # Oslo is derived from the Paris call (1 bit); the pollution call is not: 1 + log2 37 bits.
    assert row["tests"] == 2 and row["api_options"] == 37
    assert math.isclose(row["score"], (1 + 1 + math.log2(37)) / 2)
    assert main(["complexity", "--task-file", str(task_file)]) == 2
    assert "exactly one --task" in capsys.readouterr().err


def test_tabletop_file_without_answers_is_scored_on_the_example_steps(tmp_path, capsys):
    # The original Tabletop test.jsonl has setups, not programs (D.2.1), so the examples' steps are the tests.
    task_file = tmp_path / "test.jsonl"
    task_file.write_text(json.dumps({"tester_id": "SI_0", "configs": {}}) + "\n")
    examples = tmp_path / "examples.jsonl"
    programs = ["# a\nput_first_on_second('a', 'b')\n# b\nsay('hi')\nsay('there')", "# c\nget_obj_names()"]
    examples.write_text("".join(json.dumps({"prompt": "x", "completion": [p]}) + "\n" for p in programs))
    argv = ["complexity", "--task", "Tabletop", "--task-file", str(task_file), "--examples", str(examples), "--json"]
    assert main(argv) == 0
    row = json.loads(capsys.readouterr().out)["tasks"]["Tabletop"]
    # Each step is its own closest example: |e| calls, one bit each.
    assert row["tests"] == row["examples"] == 3 and math.isclose(row["score"], (1 + 2 + 1) / 3)


def test_correlation_with_a_runs_error_rates(tmp_path):
    success = {"OpenWeather": [1, 1, 1, 1], "CatAPI": [1, 1, 1, 0], "HomeSearch": [1, 1, 0, 0], "VirtualHome": [0] * 4}
    lines = [
        EpisodeResult(task, f"{task}-{i}", None, bool(ok), float(ok), True, None, {}, 1).to_json()
        for task, oks in success.items()
        for i, ok in enumerate(oks)
    ]
    (tmp_path / "trajectories.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    scores = {"OpenWeather": 1.0, "CatAPI": 2.0, "HomeSearch": 3.0, "VirtualHome": 4.0}
    rows = [TaskComplexity(t, 10, 4, 2, s, 10 - s, None, None, None) for t, s in scores.items()]
    found = run_correlation(rows, tmp_path)
    assert found.tasks == ("OpenWeather", "CatAPI", "HomeSearch", "VirtualHome")
    assert math.isclose(found.complexity, 1.0) and math.isclose(found.reversed_f1, -1.0)
