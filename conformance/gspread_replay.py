"""Replay gspread's recorded Google traffic against the Sheets emulator and compare the answers.

For every cassette in the suite's ``tests/cassettes``, a fresh emulator (one per cassette) gets
the recorded requests in their recorded order, in-process, and each answer is compared with the
response Google gave. Three counts per interaction: status equal, structure equal, values equal.

Rules:

1. **The world.** Each cassette starts from ``conformance.gspread_world.new_store()`` (an empty
   account plus the one private spreadsheet the suite names). The spreadsheets the cassette uses
   without creating them (``conformance.cassettes.preexisting_files``: the account's leftovers,
   which ``openall`` lists and opens) are added just before the first request that needs them,
   under Google's ids, with the titles, sheet properties and times the recording shows.
2. **Requests.** Method, URL, body and Content-Type as recorded (no Authorization: the emulator
   needs none). Before sending, every Google id the replay has learnt is replaced by ours: long
   string ids (files, spreadsheets) anywhere in the URL or in body strings; any id under an id
   key of the JSON body (``sheetId``, ``protectedRangeId``...); sheet ids in ``/sheets/{id}:copyTo``.
3. **Ids.** Values under the id keys (``conformance.json_compare.ID_KEYS``: ``id``,
   ``spreadsheetId``, ``sheetId``, ``namedRangeId``, ``protectedRangeId``, ``permissionId``...)
   are not compared: the first time a Google id meets one of ours at the same place, the pair is
   learnt (rule 2 then uses it); a later pair that contradicts it is a value difference ("id").
4. **Status.** The HTTP status codes must be equal.
5. **Structure.** The set of key paths of both JSON bodies, list items merged (``a.b[].c``),
   must be equal; a path only Google has is "missing", one only we have is "extra" (the report
   names the topmost such path: a missing object is one difference, not one per field). Bodies
   that are not JSON (an export's CSV, a 204's empty body) are equal in structure when neither is
   JSON. Structure equal implies status equal.
6. **Values.** Leaves at paths both sides have, lists compared item by item (a length
   difference counts), numbers by value (1 == 1.0). Not compared: values under volatile keys
   (``conformance.json_compare.VOLATILE_KEYS``: times, etags, versions, the account's names and
   addresses), links (keys ending in Link, Links, Url, Uri), any pair of RFC 3339 timestamps and
   any pair of e-mail addresses (Google's account is a service account, ours is local). In other
   strings Google's ids are first replaced by ours. Non-JSON bodies must be equal text. Values
   equal implies structure equal.

Nothing is mapped or ignored beyond these rules: a field the emulator leaves out, adds, or
answers differently shows up.

Acceptance: status equal on all interactions, structure equal on at least 98% of them.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from conformance import gspread_missing, gspread_suite
from conformance.cassettes import ExistingFile, Interaction, load_cassette, preexisting_files
from conformance.gspread_world import add_existing_spreadsheet, new_store
from conformance.json_compare import Difference, IdMap, structure_differences, value_differences
from toolbench.core.transport import HttpRequest, HttpResponse
from toolbench.mock_services.sheets import SheetsStore, create_app, make_router

#: The acceptance: the share of interactions whose JSON structure must match.
STRUCTURE_TARGET = 0.98
#: Request headers not passed on (credentials, transport details the emulator does not use).
_DROPPED_HEADERS = {"authorization", "content-length", "accept-encoding", "connection"}


@dataclass
class Outcome:
    """One replayed interaction."""

    cassette: str
    index: int
    endpoint: str
    google_status: int
    our_status: int
    structure: list[Difference]
    values: list[Difference]

    @property
    def status_equal(self) -> bool:
        return self.google_status == self.our_status

    @property
    def structure_equal(self) -> bool:
        return self.status_equal and not self.structure

    @property
    def values_equal(self) -> bool:
        return self.structure_equal and not self.values


def endpoint_of(method: str, uri: str) -> str:
    """``METHOD /path`` with ids, ranges and sheet numbers replaced by placeholders, for grouping."""
    path = urlsplit(uri).path
    path = re.sub(r"/[A-Za-z0-9_-]{25,}", "/{id}", path)
    path = re.sub(r"/values/[^/:]+", "/values/{range}", path)
    path = re.sub(r"/sheets/\d+", "/sheets/{sheetId}", path)
    return f"{method} {path}"


def _request_for(item: Interaction, ids: IdMap) -> HttpRequest:
    url = ids.text(item.uri)
    url = re.sub(r"/sheets/(\d+):copyTo", lambda m: f"/sheets/{ids.ids.get(int(m[1]), m[1])}:copyTo", url)
    body = item.body or ""
    try:
        body = json.dumps(ids.value(None, json.loads(body))) if body.strip() else ""
    except ValueError:  # an upload's CSV
        body = ids.text(body)
    headers = tuple((k, v) for k, v in item.headers.items() if k.lower() not in _DROPPED_HEADERS)
    return HttpRequest(item.method, url, headers, body.encode("utf-8"))


def _parse(body: bytes | str) -> tuple[bool, Any]:
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    if not text.strip():
        return False, ""
    try:
        return True, json.loads(text)
    except ValueError:
        return False, text


def compare(item: Interaction, answer: HttpResponse, ids: IdMap) -> tuple[list[Difference], list[Difference]]:
    """(structure differences, value differences) between Google's response and ours."""
    google_json, google = _parse(item.response_body)
    our_json, ours = _parse(answer.body)
    if google_json and our_json:
        return structure_differences(google, ours), list(value_differences(google, ours, ids))
    if google_json != our_json:
        which = "JSON at Google, not here" if google_json else "JSON here, not at Google"
        return [Difference("body", "(body)", which)], []
    if ids.text(google) != ours:
        return [], [Difference("body", "(body)", f"{google[:60]!r} at Google, {ours[:60]!r} here")]
    return [], []


def replay_cassette(path: Path) -> list[Outcome]:
    """Replay one cassette against a fresh emulator."""
    interactions = load_cassette(path)
    store = new_store()
    ids = IdMap()
    existing = preexisting_files(interactions)
    router = make_router(create_app(store))
    outcomes = []
    for index, item in enumerate(interactions):
        while existing and existing[0].first_use <= index:
            _add_existing(store, ids, existing.pop(0))
        answer = router.send(_request_for(item, ids))
        structure, values = compare(item, answer, ids)
        outcomes.append(
            Outcome(path.stem, index, endpoint_of(item.method, item.uri), item.status, answer.status, structure, values)
        )
    return outcomes


def _add_existing(store: SheetsStore, ids: IdMap, found: ExistingFile) -> None:
    with store.lock:
        add_existing_spreadsheet(
            store,
            found.file_id,
            found.name,
            found.sheets,
            found.locale,
            found.time_zone,
            found.created,
            found.modified,
        )
    ids.seed(found.file_id)
    for properties in found.sheets:
        ids.seed(properties.get("sheetId", 0))


@dataclass
class ReplayReport:
    outcomes: list[Outcome] = field(default_factory=list)
    skipped_reason: str | None = None

    @property
    def total(self) -> int:
        return len(self.outcomes)

    def count(self, what: str) -> int:
        return sum(getattr(o, what) for o in self.outcomes)

    def ok(self) -> bool:
        """The acceptance: every status equal, structure equal on at least 98%."""
        return (
            self.skipped_reason is None
            and self.total > 0
            and self.count("status_equal") == self.total
            and self.count("structure_equal") >= STRUCTURE_TARGET * self.total
        )

    def by_group(self) -> dict[str, list[Outcome]]:
        groups: dict[str, list[Outcome]] = defaultdict(list)
        for outcome in self.outcomes:
            groups[outcome.cassette.split(".")[0]].append(outcome)
        return dict(sorted(groups.items()))

    def mismatch_kinds(self, level: str) -> Counter[tuple[str, str, str]]:
        """(kind, path, endpoint) -> how many interactions show it, for ``level`` status, structure or values."""
        kinds: Counter[tuple[str, str, str]] = Counter()
        for o in self.outcomes:
            if level == "status":
                if not o.status_equal:
                    kinds[("status", f"{o.google_status} at Google, {o.our_status} here", o.endpoint)] += 1
                continue
            found = o.values if level == "values" else o.structure
            for key in {(d.kind, d.path, o.endpoint) for d in found}:
                kinds[key] += 1
        return kinds

    def render(self, limit: int = 40) -> str:
        if self.skipped_reason:
            return f"gspread replay: skipped ({self.skipped_reason})"
        lines = ["gspread's cassettes, replayed against a fresh emulator each"]
        lines.append(f"  {'group':<32} {'cassettes':>9} {'requests':>8} {'status':>7} {'structure':>9} {'values':>7}")
        for name, outcomes in self.by_group().items():
            cassettes = len({o.cassette for o in outcomes})
            status = sum(o.status_equal for o in outcomes)
            structure = sum(o.structure_equal for o in outcomes)
            values = sum(o.values_equal for o in outcomes)
            lines.append(f"  {name:<32} {cassettes:>9} {len(outcomes):>8} {status:>7} {structure:>9} {values:>7}")
        total = max(self.total, 1)
        lines.append(
            f"  {'total':<32} {len({o.cassette for o in self.outcomes}):>9} {self.total:>8} "
            f"{self.count('status_equal'):>7} {self.count('structure_equal'):>9} {self.count('values_equal'):>7}"
        )
        lines.append(
            f"  status equal {self.count('status_equal') / total:.1%}, structure equal "
            f"{self.count('structure_equal') / total:.1%} (target {STRUCTURE_TARGET:.0%}), "
            f"values equal {self.count('values_equal') / total:.1%}"
        )
        for level in ("status", "structure", "values"):
            kinds = self.mismatch_kinds(level)
            if not kinds:
                continue
            lines.append(f"  {level} mismatches, by kind (number of interactions):")
            for (kind, path, endpoint), n in kinds.most_common(limit):
                lines.append(f"    {n:>4}  {kind:<8} {path}  [{endpoint}]")
            if len(kinds) > limit:
                lines.append(f"    ... and {len(kinds) - limit} more kinds")
        rest = [o for o in self.outcomes if not o.structure_equal]
        if rest and len(rest) <= limit:
            lines.append("  interactions whose status or structure differ:")
            for o in rest:
                what = "; ".join(f"{d.kind} {d.path}" for d in o.structure[:3])
                if not o.status_equal:
                    what = f"status {o.google_status} at Google, {o.our_status} here" + (f"; {what}" if what else "")
                lines.append(f"    {o.cassette} #{o.index} {o.endpoint}: {what}")
        return "\n".join(lines)


def run_replay(pattern: str = "*.json") -> ReplayReport:
    """Replay every cassette (or those matching ``pattern``); skipped when the suite is absent."""
    missing = gspread_missing(live=False)
    if missing:
        return ReplayReport(skipped_reason=missing)
    report = ReplayReport()
    for path in sorted((gspread_suite() / "tests" / "cassettes").glob(pattern)):
        report.outcomes.extend(replay_cassette(path))
    return report
