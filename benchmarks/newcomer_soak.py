"""Does a newcomer's gate cry wolf? Issue 52's sequence, live: on a fresh history the smoke tier
(`pytest perf/` at this machine's default tier), then five sessions of the ResNet-20 default
case alone, every session with re-runs on as a nightly has them; nothing changed between them.

`run` runs --sequences such sequences one after the other, each with a history folder of its
own (the user's history is not touched; the gate still reads baselines/ and its gate.toml), and
appends one line a session to a JSON-lines file: the sequence, the night, the exit code, and
every kept run's verdict and reason, so that a failure can be read afterwards:

    python benchmarks/newcomer_soak.py run --sequences 10

`report` counts the sequences in which any session failed (a false failure: nothing changed),
with a 95% Clopper-Pearson interval, and lists each failed run with its reason:

    python benchmarks/newcomer_soak.py report benchmarks/data/newcomer_soak/*.jsonl.gz
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lab import records, sessions
from scipy import stats

from tfperf.ground.machine import detect

DATA = records.DATA / "newcomer_soak"
CASE = ("resnet20 and cpu1 and workers1 and xla_off and NHWC and default and single and fp32 "
        "and synthetic")
NIGHTLY = ("--perf-rerun=on", "-p", "no:randomly")


# What a gated run says where it fails its case (a flag a re-run did not clear is kept as a
# regression; one kept as `flagged` ran without a re-run).
_FAILING = frozenset({"regression", "flagged"})


def _session(history: Path, *args: str) -> tuple[int, list[dict[str, Any]], float]:
    """One session on `history`: its exit code, the runs it kept (verdict and reason), seconds."""
    done = sessions.run(["perf/", *NIGHTLY, *args], history=history)
    if done.code != 0:
        print(done.tail(), file=sys.stderr)
    runs = [{"case_id": r.case_id, "verdict": r.verdict, "reason": r.reason} for r in done.runs()]
    return done.code, runs, done.seconds


def run(args: argparse.Namespace) -> int:
    machine = detect()
    out = args.out or DATA / f"{machine.key()}.jsonl.gz"
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for number in range(1, args.sequences + 1):
        folder = Path(tempfile.mkdtemp(prefix="newcomer-soak-"))
        try:
            for night in range(args.nights + 1):
                code, runs, seconds = _session(folder / "history",
                                               *(() if night == 0 else ("-k", CASE)))
                row = {"sequence": f"{stamp}-{number}", "night": night,
                       "session": "smoke tier" if night == 0 else "one case",
                       "exit_code": code, "runs": runs, "seconds": round(seconds, 1),
                       "machine_key": machine.key()}
                records.append(out, row)
                failed = [r for r in runs if r["verdict"] in _FAILING]
                print(f"sequence {number} of {args.sequences}, night {night}: exit {code}, "
                      f"{len(runs)} runs, {len(failed)} failed, {seconds:.0f} s", flush=True)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return 0


def report(args: argparse.Namespace) -> int:
    sequences: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in records.rows(args.files):
        sequences[(row["machine_key"], row["sequence"])].append(row)
    by_machine: dict[str, list[list[dict[str, Any]]]] = defaultdict(list)
    for (key, _), nights in sorted(sequences.items()):
        by_machine[key].append(sorted(nights, key=lambda r: r["night"]))
    for key, kept in by_machine.items():
        whole = [nights for nights in kept if len(nights) == args.nights + 1]
        failed = [nights for nights in whole
                  if any(r["exit_code"] != 0 or any(run["verdict"] in _FAILING
                                                   for run in r["runs"]) for r in nights)]
        low, high = stats.binomtest(len(failed), len(whole)).proportion_ci(method="exact") \
            if whole else (0.0, 1.0)
        print(f"{key}: {len(whole)} whole sequences ({len(kept) - len(whole)} cut short), "
              f"{len(failed)} with a false failure: {len(failed) / max(len(whole), 1):.1%} "
              f"[{low:.1%}, {high:.1%}] (95% Clopper-Pearson)")
        for nights in failed:
            for r in nights:
                for one in r["runs"]:
                    if one["verdict"] in _FAILING:
                        print(f"    {r['sequence']} night {r['night']}: {one['case_id']}: "
                              f"{one['reason']}")
                if r["exit_code"] != 0 and not any(one["verdict"] in _FAILING for one in r["runs"]):
                    print(f"    {r['sequence']} night {r['night']}: exit {r['exit_code']} "
                          "(a case failed before the gate)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    measure = commands.add_parser("run", help="run sequences and append each session")
    measure.add_argument("--sequences", type=int, default=10)
    measure.add_argument("--nights", type=int, default=5, help="one-case sessions after the "
                                                             "smoke tier")
    measure.add_argument("--out", type=Path, help="the JSON-lines file to append to")
    judge = commands.add_parser("report", help="sequences with a false failure, with intervals")
    judge.add_argument("files", nargs="+", type=Path)
    judge.add_argument("--nights", type=int, default=5)
    args = parser.parse_args(argv)
    if args.command == "run" and (args.sequences < 1 or args.nights < 1):
        parser.error("--sequences and --nights are whole numbers from 1")
    return {"run": run, "report": report}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
