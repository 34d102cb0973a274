"""How long the self-tests take on this host, one commit against another (issue 51's targets: at
most 8 minutes of pytest on an AVX-512 host, 12 on the AVX2-only one).

`run REV [REV ...]` times the README's `CI=true ./run test -q` in a fresh clone of this
repository at each revision, as a new CI machine runs it (the clone's own .venv; the FLOPs
cache, which a first session fills, cleared before each), the revisions in turn for --rounds
rounds (A, B, A, B: a host's speed drifts between runs, so commits are compared within one
run). One line a clone is appended to benchmarks/data/selftest_time/<machine key>.jsonl.gz:
pytest's own seconds, the whole command's, its exit status and what passed. Nothing else should
run on the machine meanwhile.

    python benchmarks/selftest_time.py run 37366cd HEAD --rounds 2

`report` gives each revision's median per machine key (keys are never pooled) and its ratio to
the first revision named; with --elsewhere REV=SECONDS, what each would take on a host where
REV's self-tests took that long, the ratio carried over (an estimate, not that host):

    python benchmarks/selftest_time.py report benchmarks/data/selftest_time/*.jsonl.gz \\
        --elsewhere 37366cd=771.1
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lab import ROOT, records

from tfperf.cases import catalog_cache
from tfperf.ground.machine import detect

DATA = records.DATA / "selftest_time"
# pytest's last line, e.g. "533 passed, 1 skipped in 282.31s (0:04:42)".
SUMMARY = re.compile(r"^(?P<outcome>\d+ \w+.*) in (?P<seconds>[\d.]+)s\b", re.MULTILINE)


def commit(rev: str) -> str:
    """REV's full hash in this repository, or ValueError with one line."""
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet",
                           f"{rev}^{{commit}}"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ValueError(f"{rev!r} is not a commit of this repository ({ROOT})")
    return done.stdout.strip()


def pytest_seconds(output: str) -> tuple[float, str] | None:
    """pytest's own seconds and outcome from its summary line (the last, if several)."""
    found = list(SUMMARY.finditer(output))
    if not found:
        return None
    return float(found[-1]["seconds"]), found[-1]["outcome"]


def _one(rev: str, sha: str, round_number: int) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="selftest-time-"))
    try:
        subprocess.run(["git", "clone", "-q", str(ROOT), str(folder)], check=True)
        subprocess.run(["git", "-C", str(folder), "checkout", "-q", sha], check=True)
        shutil.rmtree(catalog_cache.folder().parent / "flops", ignore_errors=True)
        # ./run puts the clone's own .venv first; this process's must not be the one named.
        env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        start = time.monotonic()
        done = subprocess.run(["./run", "test", "-q"], cwd=folder, env={**env, "CI": "true"},
                              capture_output=True, text=True, check=False)
        whole = time.monotonic() - start
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    read = pytest_seconds(done.stdout)
    return {"rev": rev, "commit": sha[:10], "round": round_number, "exit": done.returncode,
            "pytest_s": read[0] if read else None, "outcome": read[1] if read else None,
            "whole_s": round(whole, 1), "tail": (done.stdout + done.stderr)[-400:] if done.returncode else "",
            # A failed run names what failed: the output's end is a worker's log, not its tests.
            "failed": [line for line in done.stdout.splitlines()
                       if line.startswith(("FAILED ", "ERROR "))],
            "started": started, "ended": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def run(args: argparse.Namespace) -> int:
    key = detect().key()
    out: Path = args.out or DATA / f"{key}.jsonl.gz"
    for round_number in range(1, args.rounds + 1):
        for rev, sha in args.revs:
            row = {**_one(rev, sha, round_number), "machine_key": key}
            records.append(out, row)
            said = f"{row['pytest_s']:.1f} s of pytest" if row["pytest_s"] else "no pytest summary"
            print(f"round {round_number}, {rev} ({sha[:10]}): {said}, {row['whole_s']:.0f} s in "
                  f"all, exit {row['exit']}: {row['outcome']} -> {out}", flush=True)
    return 0


def passed(rows: list[dict[str, Any]]) -> dict[tuple[str, str], list[float]]:
    """Each (machine key, commit)'s pytest seconds, in the order run, over the runs that passed."""
    kept: dict[tuple[str, str], list[float]] = defaultdict(list)
    for row in rows:
        if row["exit"] == 0 and row["pytest_s"] is not None:
            kept[(row["machine_key"], row["commit"])].append(row["pytest_s"])
    return dict(kept)


def report(args: argparse.Namespace) -> int:
    rows = list(records.rows(args.files))
    found = passed(rows)
    medians = {group: statistics.median(seconds) for group, seconds in found.items()}
    order = list(dict.fromkeys(row["commit"] for row in rows))
    for key in sorted({k for k, _ in found}):
        ours = [c for c in order if (key, c) in found]
        first = medians[(key, ours[0])]
        print(f"{key}")
        print("commit | runs | pytest s (each, in order) | median | ratio to "
              f"{ours[0]}" + "".join(f" | if {c} took {s:g} s" for c, s in args.elsewhere))
        for c in ours:
            seconds, median = found[(key, c)], medians[(key, c)]
            carried = "".join(
                f" | {s * median / medians[(key, ref)]:.0f} s" if (key, ref) in medians else " | -"
                for ref, s in args.elsewhere)
            print(f"{c} | {len(seconds)} | {', '.join(f'{x:.1f}' for x in seconds)} | "
                  f"{median:.1f} | {median / first:.3f}{carried}")
    for row in rows:
        if row["exit"] != 0:
            print(f"failed: {row['machine_key']} {row['commit']} round {row['round']} "
                  f"(exit {row['exit']}): {row['outcome'] or row['tail'][-200:]}")
    return 0


def _elsewhere(text: str) -> tuple[str, float]:
    rev, equals, seconds = text.partition("=")
    try:
        value = float(seconds)
    except ValueError:
        value = math.nan
    if not rev or not equals or not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r}: expected REV=SECONDS, e.g. 37366cd=771.1")
    return rev, value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    timing = commands.add_parser("run", help="time fresh clones of the revisions, in turn")
    timing.add_argument("revs", nargs="+", metavar="REV")
    timing.add_argument("--rounds", type=int, default=2, help="each revision this many times")
    timing.add_argument("--out", type=Path, help="the JSON-lines file to append to")
    judge = commands.add_parser("report", help="medians and ratios per machine key")
    judge.add_argument("files", nargs="+", type=Path)
    judge.add_argument("--elsewhere", action="append", type=_elsewhere, default=[],
                       metavar="REV=SECONDS", help="REV's pytest seconds on another host")
    args = parser.parse_args(argv)
    try:
        if args.command == "run":
            if args.rounds < 1:
                parser.error(f"--rounds: {args.rounds} is not a whole number from 1")
            args.revs = [(rev, commit(rev)) for rev in args.revs]
        else:
            # As the kept rows name commits: their first 10 hex digits.
            args.elsewhere = [(commit(rev)[:10], seconds) for rev, seconds in args.elsewhere]
    except ValueError as error:
        parser.error(str(error))
    return {"run": run, "report": report}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
