"""``python -m toolbench.taskgen [SLUG ...]``: regenerate fixtures (all when no slug is given)."""

from __future__ import annotations

import sys

from toolbench.taskgen import DERIVED, load_generators, write_fixtures


def main(argv: list[str]) -> int:
    generators = load_generators()
    for slug in argv or sorted(generators):
        if slug not in generators:
            print(f"unknown task set {slug!r}; known: {', '.join(sorted(generators))}", file=sys.stderr)
            return 2
        for path in write_fixtures(slug, generators[slug]()):
            print(f"wrote {path}")
        if slug in DERIVED:
            print(f"wrote {DERIVED[slug]()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
