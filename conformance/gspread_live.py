"""gspread's own tests, run live against the Sheets emulator.

The suite runs as written, in a pytest subprocess started in its folder, with one plugin of ours
(``conformance.gspread_plugin``) that points the suite's ``client`` fixture at a served emulator
and keeps VCR out of the way. The results come back as JUnit XML and are counted per test file.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from conformance import gspread_missing, gspread_suite, project_root

#: The acceptance: every test in the suite passes.
EXPECTED_TESTS = 149
#: A hung run must end: the whole suite takes a few seconds against the emulator.
TIMEOUT_SECONDS = 300


@dataclass
class TestResult:
    """One test's outcome: ``passed``, ``failed``, ``error`` or ``skipped``, and why when not passed."""

    file: str
    name: str
    outcome: str
    message: str = ""


@dataclass
class LiveReport:
    results: list[TestResult] = field(default_factory=list)
    seconds: float = 0.0
    skipped_reason: str | None = None
    output: str = ""  # pytest's own output, for when the XML is missing

    @property
    def passed(self) -> int:
        return sum(r.outcome == "passed" for r in self.results)

    @property
    def failures(self) -> list[TestResult]:
        return [r for r in self.results if r.outcome in ("failed", "error")]

    def ok(self) -> bool:
        """The acceptance: all the suite's tests ran and passed."""
        return self.skipped_reason is None and len(self.results) == EXPECTED_TESTS and not self.failures

    def by_file(self) -> dict[str, dict[str, int]]:
        counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for result in self.results:
            counts[result.file][result.outcome] += 1
        return {name: dict(counts[name]) for name in sorted(counts)}

    def render(self) -> str:
        if self.skipped_reason:
            return f"gspread live: skipped ({self.skipped_reason})"
        lines = [f"gspread's own tests, live against the emulator ({self.seconds:.1f} s)"]
        for name, counts in self.by_file().items():
            total = sum(counts.values())
            extra = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()) if k != "passed")
            lines.append(
                f"  {name:<24} {counts.get('passed', 0):>3}/{total:<3} passed" + (f"  ({extra})" if extra else "")
            )
        lines.append(
            f"  {'total':<24} {self.passed:>3}/{len(self.results):<3} passed (expected {EXPECTED_TESTS} tests)"
        )
        if self.failures:
            lines.append("  failures:")
            for failure in self.failures:
                first = failure.message.strip().splitlines()[0] if failure.message.strip() else ""
                lines.append(f"    {failure.file}::{failure.name} [{failure.outcome}] {first[:200]}")
        if not self.results:
            lines.append("  no results; pytest said:")
            lines.extend("    " + line for line in self.output.splitlines()[-30:])
        return "\n".join(lines)


def _parse_junit(path: Path) -> list[TestResult]:
    results = []
    for case in ET.parse(path).getroot().iter("testcase"):
        module = (case.get("classname") or "").split(".")
        file = next((part + ".py" for part in module if part.endswith("_test")), ".".join(module))
        outcome, message = "passed", ""
        for kind in ("failure", "error", "skipped"):
            found = case.find(kind)
            if found is not None:
                outcome = {"failure": "failed"}.get(kind, kind)
                message = found.get("message") or (found.text or "")
                break
        results.append(TestResult(file, case.get("name") or "", outcome, message))
    return results


def run_live(extra_args: list[str] | None = None) -> LiveReport:
    """Run the suite against the emulator and collect its results (skipped when the suite is absent)."""
    missing = gspread_missing(live=True)
    if missing:
        return LiveReport(skipped_reason=missing)
    suite = gspread_suite()
    with tempfile.TemporaryDirectory(prefix="gspread-live-") as tmp:
        junit = Path(tmp) / "results.xml"
        settings = Path(tmp) / "pytest.ini"  # an empty configuration: none from folders above the suite
        settings.write_text("[pytest]\n", encoding="utf-8")
        command = [
            sys.executable,
            "-m",
            "pytest",
            "tests",
            "-p",
            "conformance.gspread_plugin",
            "-p",
            "no:vcr",  # no cassette: every request goes to the emulator
            "-p",
            "no:cacheprovider",  # the suite's folder may be read-only
            "-p",
            "no:xdist",
            "-p",
            "no:randomly",
            f"--rootdir={suite}",
            f"--config-file={settings}",
            f"--junitxml={junit}",
            "-o",
            "junit_family=xunit1",
            "-q",
            *(extra_args or []),
        ]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(project_root()), env.get("PYTHONPATH")]))
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        for name in ("GS_CREDS_FILENAME", "GS_RECORD_MODE"):  # the suite would try to reach Google with these
            env.pop(name, None)
        started = time.monotonic()
        done = subprocess.run(
            command, cwd=suite, env=env, capture_output=True, text=True, timeout=TIMEOUT_SECONDS, check=False
        )
        seconds = time.monotonic() - started
        results = _parse_junit(junit) if junit.is_file() else []
    return LiveReport(results=results, seconds=seconds, output=done.stdout + done.stderr)
