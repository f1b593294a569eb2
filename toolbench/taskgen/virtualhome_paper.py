"""ToolBench's VirtualHome vocabulary, rebuilt from the language-planner's examples.

ToolBench's API docs (and its evaluator's ``valid_object_lists.json``) list, for each function,
exactly the objects that function takes anywhere in the language-planner's example programs,
spaces written as underscores. ``vocabulary(path)`` derives the same lists from a copy of
``available_examples.json``; ``python -m toolbench.taskgen.virtualhome_paper PATH`` writes them to
``fixtures/virtualhome/paper_vocabulary.json`` in the evaluator's shape
(``{"Agent.X": {} | {"object": [...]} | {"object1": [...], "object2": [...]}}``), which the
``paper`` executable check reads.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from toolbench.mock_services.virtualhome.homes import PLACING_FILE
from toolbench.mock_services.virtualhome.objects import ACTIONS, PROPERTIES
from toolbench.mock_services.virtualhome.original import read_original_examples
from toolbench.mock_services.virtualhome.program import PAPER_VOCABULARY_FILE, clean_lines


def vocabulary(path: str | Path) -> dict[str, dict[str, list[str]]]:
    """For each of the 40 functions, the objects each of its arguments takes in the examples."""
    found: dict[str, list[set[str]]] = {
        f"Agent.{action.name}": [set() for _ in range(action.arity)] for action in ACTIONS
    }
    for task in read_original_examples(path, "lp"):
        for program in task.references:
            for line in clean_lines(program, check="paper"):
                function, _, rest = line.partition("(")
                args = [arg.strip() for arg in rest.partition(")")[0].split(",") if arg.strip()]
                if function not in found or len(args) != len(found[function]):
                    raise ValueError(f"{path}: a step outside the API: {line!r}")
                for objects, arg in zip(found[function], args):
                    objects.add(arg)
    keys = {0: (), 1: ("object",), 2: ("object1", "object2")}
    return {
        function: {key: sorted(objects) for key, objects in zip(keys[len(lists)], lists)}
        for function, lists in found.items()
    }


def placing(path: str | Path) -> dict[str, list[list[str]]]:
    """From VirtualHome's ``object_script_placing.json`` (``{class: [{"destination", "relation",
    "room"}, ...]}``): where an object of each of our classes may be put, as ``[relation,
    destination]`` pairs (``"in"`` or ``"on"``), destinations among our classes, in its order."""
    with open(path, encoding="utf-8") as handle:
        table = json.load(handle)
    found: dict[str, list[list[str]]] = {}
    for name, entries in sorted(table.items()):
        if name not in PROPERTIES or "room" in PROPERTIES[name]:
            continue
        pairs = []
        for entry in entries:
            relation, destination = str(entry.get("relation", "")).lower(), entry.get("destination")
            if relation in ("in", "on") and destination in PROPERTIES and [relation, destination] not in pairs:
                pairs.append([relation, destination])
        if pairs:
            found[name] = pairs
    return found


def main(argv: list[str]) -> int:
    if len(argv) not in (1, 2):
        print(
            "usage: python -m toolbench.taskgen.virtualhome_paper PATH/TO/available_examples.json "
            "[PATH/TO/virtualhome/resources/object_script_placing.json]"
        )
        return 2
    PAPER_VOCABULARY_FILE.write_text(json.dumps(vocabulary(argv[0]), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {PAPER_VOCABULARY_FILE}")
    if len(argv) == 2:
        PLACING_FILE.write_text(json.dumps(placing(argv[1]), indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {PLACING_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
