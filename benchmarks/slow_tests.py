"""Keep ``tests/slow_tests.txt`` true, and time ``make test-fast``.

``python benchmarks/slow_tests.py [PATH ...]`` runs the tests one folder (or PATH) at a time with
pytest's ``--durations=0`` and prints the tests over ``--over`` seconds (setup, call and teardown
together) that the list lacks, and the listed ones now under ``--under``: a test's time depends on
what ran before it in its process (a module's fixtures are set up for its first test), so a change
to the list can move time onto another test. ``--fast-lane`` instead times the fast lane as
``make test-fast`` runs it and prints the load average beside the time (other jobs on the machine
slow every test; compare numbers taken at a similar load).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.conftest import slow_test_ids  # noqa: E402

DURATION = re.compile(r"^\s*([\d.]+)s (?:setup|call|teardown)\s+(.+?)\s*$")
FAST_LANE = ["-n", "2", "--dist", "loadgroup", "-m", "not slow and not docker"]


def test_paths() -> list[str]:
    """The suite's folders and top-level test files, each run on its own."""
    tests = ROOT / "tests"
    folders = [p for p in sorted(tests.iterdir()) if p.is_dir() and any(p.glob("test_*.py"))]
    files = sorted(tests.glob("test_*.py"))
    return [str(p.relative_to(ROOT)) for p in [*folders, *files]]


def durations(path: str) -> dict[str, float]:
    """Each test's seconds (setup, call and teardown) when ``path`` runs alone, slow tests included."""
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--durations=0", path]
    out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT).stdout
    seconds: dict[str, float] = defaultdict(float)
    for line in out.splitlines():
        match = DURATION.match(line)
        if match:
            seconds[match.group(2)] += float(match.group(1))
    return dict(seconds)


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def fast_lane() -> int:
    before = load()
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *FAST_LANE], cwd=ROOT)
    print(f"fast lane: {time.monotonic() - started:.0f} s on {os.cpu_count()} cores; load average {before} before, "
          f"{load()} after (1, 5 and 15 minutes)")  # fmt: skip
    return result.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="*", help="test folders or files (default: every folder, one at a time)")
    parser.add_argument("--over", type=float, default=3.0, help="a test over this many seconds is slow (default 3)")
    parser.add_argument("--under", type=float, default=1.5, help="a listed test under this may leave the list")
    parser.add_argument("--fast-lane", action="store_true", help="time make test-fast's tests instead")
    args = parser.parse_args(argv)
    if args.fast_lane:
        return fast_lane()
    listed = slow_test_ids()
    missing: dict[str, float] = {}
    quick: dict[str, float] = {}
    for path in args.paths or test_paths():
        print(f"{path} (load average {load()})", file=sys.stderr)
        for test, seconds in durations(path).items():
            by_id = test in listed or test.split("[", 1)[0] in listed
            if seconds > args.over and not by_id and test.split("::", 1)[0] not in listed:
                missing[test] = seconds
            elif by_id and seconds < args.under:  # a listed file's tests are judged together: not here
                quick[test] = seconds
    for title, found in (("slow, not listed", missing), ("listed, now quick", quick)):
        print(f"{title}: {len(found)}")
        for test, seconds in sorted(found.items(), key=lambda item: -item[1]):
            print(f"  {seconds:6.2f}  {test}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
