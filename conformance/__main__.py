"""``python -m conformance``: gspread's tests live against the emulator, then the cassette replay.

Prints both reports. The exit code is 0 when the acceptance holds for every part that ran (all of
gspread's tests pass; every status code equal and at least 98% of JSON structures equal), or when
the suite is absent (each part then says why it was skipped); 1 otherwise.
"""

from __future__ import annotations

import argparse

from conformance.gspread_live import run_live
from conformance.gspread_replay import run_replay


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance", description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("live", "replay"), help="run one part only")
    parser.add_argument("--cassettes", default="*.json", help="replay only the cassettes matching this glob")
    parser.add_argument("--limit", type=int, default=40, help="mismatch kinds to list per level (default 40)")
    args = parser.parse_args(argv)
    ok = True
    if args.only in (None, "live"):
        live = run_live()
        print(live.render())
        ok = ok and (live.ok() or live.skipped_reason is not None)
    if args.only in (None, "replay"):
        if args.only is None:
            print()
        replay = run_replay(args.cassettes)
        print(replay.render(limit=args.limit))
        ok = ok and (replay.ok() or replay.skipped_reason is not None)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
