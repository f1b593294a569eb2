"""``python -m toolbench.taskgen [SLUG ...]``: regenerate fixtures (all when no slug is given)."""

from __future__ import annotations

import sys

from toolbench.taskgen import GENERATORS, catapi, openweather, write_fixtures  # noqa: F401  (registers the generators)


def main(argv: list[str]) -> int:
    slugs = argv or sorted(GENERATORS)
    for slug in slugs:
        if slug not in GENERATORS:
            print(f"unknown task set {slug!r}; known: {', '.join(sorted(GENERATORS))}", file=sys.stderr)
            return 2
        for path in write_fixtures(slug, GENERATORS[slug]()):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
