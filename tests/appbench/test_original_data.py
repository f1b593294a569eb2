"""AppBench's released test records (../shared/refdata/appbench): the gold plans parse, and the paper
scorer reproduces the ceilings its one-hit matching puts on App F1."""

from __future__ import annotations

import json
import re

import pytest

from toolbench.mock_services.apps.paper import PaperTally, call_parts, match_evaluate, plan_lines
from toolbench.mock_services.apps.plan import PlanError, parse_plan, resolve

CEILINGS = {"ss": 100.0, "sm": 45.15, "ms": 36.61, "mm": 27.47}


def records(refdata, kind):
    return json.loads((refdata / "appbench" / "data" / "test" / f"test_{kind}.json").read_text())


@pytest.mark.parametrize("kind", list(CEILINGS))
def test_the_paper_scorer_gives_the_gold_plans_the_documented_app_f1(refdata, kind):
    tally = PaperTally()
    for record in records(refdata, kind):
        output = record["output"]
        assert tally.add_parsed(list(output["used_app"]), list(output["api_results"]), output)
    scores = tally.scores()
    assert round(scores["app_hit_f1"] * 100, 2) == CEILINGS[kind]
    assert scores["complete_match"] == 1.0 and scores["argu_hit_f1"] == 1.0


def test_every_gold_plan_parses(refdata):
    parsed = unresolved = 0
    for kind in CEILINGS:
        for record in records(refdata, kind):
            output = record["output"]
            text = "\n".join(
                f"{app}: [{call}]" for app, call in zip(output["used_app"], output["api_results"], strict=False)
            )
            calls = parse_plan(text)
            parsed += 1
            named = [re.search(r"= *(\w+)\(", call).group(1).lower() for call in output["api_results"]]
            assert [c.api for c in calls] == named[: len(calls)]
            try:
                resolve(calls)
            except PlanError:
                unresolved += 1  # gold plans that name a value no earlier call returns (the user said it)
    assert parsed == 801 and unresolved <= 4


def test_the_paper_parsers_quirks():
    assert match_evaluate(["Trains", "Trains"], ["Trains", "Trains"]) == (1, 1)  # one hit at most
    assert match_evaluate([], ["Trains"]) == (0, 0)
    assert call_parts("x = book_stylist_appointment(#stylist_name='A')")[0] == "stylist"
    assert call_parts("x = f(#a='1', #b)")[1] == {"#a": ""}  # a piece without "=" empties the one before
    assert plan_lines("no app here = getweather(#city='x')") == ([], [])
    assert plan_lines("Weather: [t = getweather(#city='x')]") == (["Weather"], ["t = getweather(#city='x')"])


def test_every_record_gives_a_gold_plan_that_scores_itself(refdata):
    from toolbench.mock_services.apps.plan import Ref
    from toolbench.mock_services.apps.records import gold_calls
    from toolbench.mock_services.apps.scoring import score_plan

    total = succeeded = unresolved = 0
    for kind in CEILINGS:
        for record in records(refdata, kind):
            calls = gold_calls(record["output"])  # apps paired by ownership where the record lists fewer
            total += 1
            succeeded += score_plan(calls, calls, record["output"]["user_aware_arguments"]).succ
            unresolved += any(isinstance(v, Ref) and v.source is None for c in calls for v in c.args.values())
    assert total == 801 and unresolved == 1 and succeeded == 801


@pytest.fixture(scope="module")
def original_shapes():
    from tests.conftest import REFDATA
    from toolbench.mock_services.apps.stats import originals

    if not REFDATA.is_dir():
        pytest.skip(f"reference data not found at {REFDATA}")
    return originals(REFDATA / "appbench" / "data" / "test")


def test_the_original_gold_plans_run_on_the_world_grown_for_their_file(original_shapes):
    executed = {kind: s.executed / s.tasks for kind, s in original_shapes.items()}
    assert all(share >= 0.9 for share in executed.values()), executed
    assert sum(s.executed for s in original_shapes.values()) >= 780  # of 801; the rest no world can run


def test_our_task_sets_have_the_originals_shape(original_shapes):
    from toolbench.mock_services.apps.stats import by_kind, near, our_records

    ours = by_kind(our_records("test"))
    for kind, theirs in original_shapes.items():
        assert near(ours[kind].words, theirs.words), (kind, ours[kind].words, theirs.words)
        assert near(ours[kind].dependent, theirs.dependent), (kind, ours[kind].dependent, theirs.dependent)
        assert ours[kind].executed == ours[kind].tasks


def test_the_grown_world_is_ours_plus_what_the_users_name(refdata):
    from toolbench.mock_services.apps.extend import grown_world, world_for
    from toolbench.mock_services.apps.generator import build_world
    from toolbench.mock_services.apps.stats import our_records

    ours = build_world()
    grown = grown_world([r["output"] for r in records(refdata, "sm")])
    for table in ("cities", "restaurants", "events", "showings", "stylists", "contacts", "routes", "flights"):
        before, after = getattr(ours, table), getattr(grown, table)
        assert len(after) > len(before), table
        assert all(row in after for row in before), table  # nothing of ours is lost or changed
    assert grown.city("Fresno") is not None and ours.city("Fresno") is None
    # Our own tasks name nothing our world lacks: grown for them, it is our world.
    mine = [record["output"] for record in our_records("demo")]
    assert repr(world_for(mine)) == repr(ours)


def test_the_grown_world_reads_only_what_the_plans_state(refdata):
    """Values a record's calls return (``used_api``, ``middle_arguments``) and what the user is said to
    know are not read: the world grows from the plans' literal arguments alone."""
    from toolbench.mock_services.apps.extend import world_for

    outputs = [r["output"] for r in records(refdata, "ms")[:60]]
    stripped = [
        {"used_app": o["used_app"], "api_results": o["api_results"], "user_aware_arguments": {}} for o in outputs
    ]
    assert repr(world_for(outputs)) == repr(world_for(stripped))


def test_data_stats_prints_ours_beside_the_originals(refdata, capsys):
    from toolbench.cli import main

    assert main(["data", "stats", "AppBench", "--original", str(refdata / "appbench" / "data" / "test")]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line[:2] in ("SS", "SM", "MS", "MM")]
    assert len(rows) == 4 and all(" | " in row and " !" not in row for row in rows)
    assert "200/200 | 200/200" in rows[0]
    assert main(["data", "stats", "AppBench", "--original", str(refdata / "nowhere")]) == 2
    assert main(["data", "stats", "Sheets"]) == 2


def test_a_plan_the_world_cannot_mend_is_left_as_it_is():
    from toolbench.mock_services.apps.extend import world_for
    from toolbench.mock_services.apps.generator import build_world

    def output(*calls: str) -> dict:
        return {"used_app": ["Media", "Buses", "Rents"][: len(calls)], "api_results": list(calls)}

    outputs = [
        output("title, genre, subtitle_language, starring = findmovies(#genre='Western')"),  # grows a film
        output("x = findmovies(#genre='Drama', #location='Nowhere Town')"),  # an argument Media does not take
        output("title = nosuchapi(#a='1')"),
        output("no call here"),
    ]
    grown = world_for(outputs)
    assert len(grown.films) == len(build_world().films) + 1 and grown.city("Nowhere Town") is None


def test_our_world_has_the_values_sgd_lists_for_the_apis_categorical_slots(refdata):
    from toolbench.mock_services.apps.generator import build_world

    summary = build_world().summary()
    ours = {
        "car_type": summary["car_types"], "ride_type": summary["ride_types"], "event_type": summary["event_types"],
        "category": summary["attraction_categories"] + summary["bus_categories"], "show_type": summary["show_types"],
        "type": summary["therapist_types"], "seating_class": summary["seating_classes"], "class": summary["train_classes"],
        "device": summary["devices"], "subtitle_language": summary["subtitle_languages"],
        "payment_method": summary["payment_methods"], "airlines": summary["airlines"],
        "price_range": ["cheap", "moderate", "pricey", "ultra high-end"], "intent": ["rent", "buy"],
    }  # fmt: skip
    slots = {}
    for split in ("train", "dev", "test"):
        for service in json.loads((refdata / "sgd_schema" / split / "schema.json").read_text()):
            slots[service["service_name"]] = {slot["name"]: slot for slot in service["slots"]}
    mapping = json.loads((refdata / "appbench" / "derived" / "appbench_to_sgd_mapping.json").read_text())["mapping"]
    missing = set()
    for api in mapping:
        service = slots[api["sgd_exact_slot_match"][0]["sgd_service"]]
        for name in [*api["required"], *api["optional"]]:
            slot = service.get(name)
            if slot and slot["is_categorical"] and name in ours:
                missing |= {(name, value) for value in slot["possible_values"] if value not in ours[name]}
    assert missing and {name for name, _ in missing} == {"airlines"}  # SGD's are real airlines; ours are made up
