"""Does the suite fail for reasons that are not performance? Run it again and again and count.

Runs the smoke tier --smoke times and a self-test file --test-runs times, each session in a
fresh pytest process, one after the other (the two kinds alternating), then prints per case
how often it failed for an infrastructure reason (crash, timeout, error, out_of_memory: a gate
that cries wolf) or for any other reason, and how many suite processes (workers, cluster
tasks, zygotes) were left running after the sessions. A self-test's every failure counts: they
have no performance noise.

Each smoke session keeps its history in a folder of its own (the user's history is not
touched); the gate still judges against baselines/, so a noisy slowdown shows as `regression`,
which is counted apart. Exits 1 if any infrastructure failure or left process was seen.

    python benchmarks/soak.py --smoke 20                                # the smoke tier
    python benchmarks/soak.py --smoke 0 --tests tests/real/test_multiprocess.py --test-runs 20
    python benchmarks/soak.py --smoke 20 --tests tests/real/test_multiprocess.py --test-runs 20
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from pathlib import Path

from lab import ROOT, sessions

from tfperf.processes import leftovers

KEPT = ROOT / ".perf-results" / "soak"
INFRASTRUCTURE = ("crash", "timeout", "error", "out_of_memory")
_CAUSE = re.compile(r"CaseFailure: (\w+):")


def outcomes(junit: Path) -> Iterator[tuple[str, str]]:
    """(test id, outcome) per test of a JUnit XML report: passed, skipped, or the failure's
    cause (a CaseFailure's, else `failed`); a session that wrote no report is one `error`."""
    if not junit.exists():
        yield "(the session itself)", "error"
        return
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is not None:
            found = _CAUSE.search(problem.get("message", ""))
            yield name, found.group(1) if found else "failed"
        elif case.find("skipped") is not None:
            yield name, "skipped"
        else:
            yield name, "passed"


# Every process a soak session starts inherits it, whatever it was forked or spawned from.
MARKER = ("TFPERF_SOAK", str(os.getpid()))


def session(args: Sequence[str], junit: Path, timeout_s: float) -> tuple[int, float]:
    """One fresh pytest process; its exit code (sessions.TIMED_OUT if it ran out of time) and
    wall time."""
    done = sessions.run([*args, f"--junitxml={junit}"], env=dict([MARKER]), timeout=timeout_s)
    return done.code, done.seconds


class Tally:
    def __init__(self) -> None:
        self.by_case: dict[str, collections.Counter[str]] = collections.defaultdict(
            collections.Counter)
        self.left: list[int] = []
        self.sessions: list[tuple[str, int, float]] = []

    def add(self, label: str, junit: Path, code: int, seconds: float) -> None:
        infra_here = 0
        for name, outcome in outcomes(junit):
            self.by_case[name][outcome] += 1
            infra_here += outcome in INFRASTRUCTURE
        if infra_here:
            # The next session writes over the logs: keep the evidence.
            kept = KEPT / label.replace("/", "-").replace(" ", "-")
            shutil.copytree(ROOT / ".perf-results" / "logs", kept, dirs_exist_ok=True)
            print(f"{label}: the logs of its failures are kept in {kept}", flush=True)
        # Give a session's last processes a moment to be reaped before looking.
        time.sleep(2)
        left = leftovers.running(*MARKER)
        self.left.extend(left)
        self.sessions.append((label, code, seconds))
        infra = sum(n for c in self.by_case.values() for o, n in c.items() if o in INFRASTRUCTURE)
        print(f"{label}: exit {code}, {seconds / 60:.1f} min, infrastructure failures so far "
              f"{infra}, processes left {len(left)}", flush=True)

    def infrastructure(self) -> int:
        return sum(n for c in self.by_case.values() for o, n in c.items() if o in INFRASTRUCTURE)

    def report(self) -> str:
        lines = ["| case | runs | passed | infrastructure failures | other failures |",
                 "| --- | --- | --- | --- | --- |"]
        for name, counts in sorted(self.by_case.items()):
            infra = {o: n for o, n in counts.items() if o in INFRASTRUCTURE}
            other = {o: n for o, n in counts.items()
                     if o not in (*INFRASTRUCTURE, "passed", "skipped")}
            runs = sum(counts.values()) - counts["skipped"]
            if not runs:
                continue  # skipped on this machine (a GPU case)
            lines.append(f"| {name} | {runs} | {counts['passed']} | {_said(infra)} | "
                         f"{_said(other)} |")
        minutes = [s / 60 for _, _, s in self.sessions]
        lines.append("")
        lines.append(f"{len(self.sessions)} sessions, {sum(minutes):.0f} min; infrastructure "
                     f"failures {self.infrastructure()}; suite processes left running "
                     f"{len(self.left)}")
        return "\n".join(lines)


def _said(counts: dict[str, int]) -> str:
    return ", ".join(f"{o} {n}" for o, n in sorted(counts.items())) or "0"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", type=int, default=20, help="smoke sessions (default: 20)")
    parser.add_argument("--tests", type=Path, help="a self-test file to run again and again")
    parser.add_argument("--test-runs", type=int, default=20,
                        help="runs of --tests (default: 20)")
    parser.add_argument("--timeout", type=float, default=1800,
                        help="seconds one session may take before it counts as an error")
    parser.add_argument("pytest_args", nargs="*", help="more arguments for every smoke session")
    args = parser.parse_args(argv)
    if args.smoke < 0 or args.test_runs < 0:
        parser.error("--smoke and --test-runs take a count of 0 or more")
    if args.tests is not None and not (ROOT / args.tests).is_file():
        parser.error(f"--tests {args.tests}: no such file under {ROOT}")
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="tfperf-soak-") as work:
        folder = Path(work)
        # Interleaved, so that a soak stopped early has counts of both.
        tests = args.test_runs if args.tests else 0
        for i in range(max(args.smoke, tests)):
            if i < args.smoke:
                junit = folder / f"smoke-{i}.xml"
                code, seconds = session(["perf/", "--perf-tier=smoke",
                                         f"--perf-history={folder / f'history-{i}'}",
                                         *args.pytest_args], junit, args.timeout)
                tally.add(f"smoke {i + 1}/{args.smoke}", junit, code, seconds)
            if i < tests:
                junit = folder / f"tests-{i}.xml"
                code, seconds = session([str(args.tests), "-p", "no:randomly"], junit,
                                        args.timeout)
                tally.add(f"{args.tests} {i + 1}/{tests}", junit, code, seconds)
    print()
    print(tally.report())
    # A self-test's failure is an infrastructure failure of the suite: it has no noise.
    failed_tests = sum(n for name, c in tally.by_case.items() if name.startswith("tests.")
                       for o, n in c.items() if o not in ("passed", "skipped"))
    return 1 if tally.infrastructure() or tally.left or failed_tests else 0


if __name__ == "__main__":
    sys.exit(main())
