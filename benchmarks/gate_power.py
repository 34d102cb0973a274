"""Measure the regression gate itself on this machine: false alarms and detection power.

Every session is a real `pytest perf/` session of the selected smoke-tier cases, gated as the
nightly tier gates (re-run and Mann-Whitney confirmation on), against a rolling history of the
same code, as nightly runs are:

1. history: --history sessions with gating off (default 10: the robust z-score's minimum);
2. then --sessions rounds, each of one A/A session (the unchanged code, gated; its runs then
   join the history, as a night's runs do) and one session per injected level (--levels,
   default 0.10 and 0.07: that fraction of a round's time added as extra work to the step of
   the case matching --inject-into; gated against the same history, never kept in it).
   Interleaving keeps the history as recent for the injected sessions as for the A/A ones:
   a shared machine drifts over an hour, and a stale history would hide or invent slowdowns.

A false alarm is a confirmed regression of unchanged code, counted per case and session (the
uninjected cases of the injected sessions count as A/A sessions too). An injected fraction f
lengthens the step by f and lowers throughput by f/(1+f).

    python benchmarks/gate_power.py                       # the defaults below
    python benchmarks/gate_power.py --sessions 20 --levels 0.10,0.07,0.06 \\
        -k "(resnet20 or deepconn) and cpu1 and workers1 and xla_off and NHWC and single \\
            and fp32 and synthetic" --inject-into resnet20-
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from collections import Counter
from pathlib import Path

from lab import sessions

from tfperf.storage import session_files

DEFAULT_K = ("(resnet20 or deepconn) and cpu1 and workers1 and xla_off and NHWC and default "
             "and single and fp32 and synthetic")


def session(args: argparse.Namespace, base: Path, scratch: Path, extra: list[str],
            gated: bool = True, keep: bool = False) -> tuple[list[session_files.Run], float]:
    """One pytest perf/ session; its runs. A gated session runs against a fresh copy of the
    base history; with `keep`, its session file then joins the base history. A history session
    (not gated) adds to the base history directly."""
    folder = base
    if gated:
        folder = scratch / "history-copy"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(base, folder)
    done = sessions.run(["perf/", "-k", args.k, "--perf-rerun=on" if gated else "--perf-gate=off",
                         f"--benchmark-storage=file://{scratch / 'baselines'}", *extra],
                        history=folder)
    if not done.history_files:
        raise SystemExit(f"a session kept no runs: {' '.join(done.command)}")
    new = done.history_files[0]
    if gated and keep:
        shutil.copy(new, base / "results" / new.name)
    return session_files.read_session(new), done.seconds


def _verdicts(runs: list[session_files.Run]) -> str:
    return ", ".join(f"{r.case_id.split('-')[0]} {r.verdict}" for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", default=DEFAULT_K)
    parser.add_argument("--history", type=int, default=10)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--levels", default="0.10,0.07")
    parser.add_argument("--inject-into", default="resnet20-")
    args = parser.parse_args()
    levels = [float(x) for x in args.levels.split(",") if x]
    with tempfile.TemporaryDirectory(prefix="tfperf-gate-power-") as tmp:
        scratch = Path(tmp)
        base = scratch / "history"
        (base / "results").mkdir(parents=True)
        for i in range(args.history):
            runs, seconds = session(args, base, scratch, [], gated=False)
            print(f"history {i + 1}/{args.history}: {len(runs)} cases, {seconds:.0f} s",
                  flush=True)
        aa: Counter[str] = Counter()  # sessions per case
        alarms: Counter[str] = Counter()
        flagged: Counter[str] = Counter()
        caught = dict.fromkeys(levels, 0)

        def count_aa(run: session_files.Run) -> None:
            aa[run.case_id] += 1
            alarms[run.case_id] += run.verdict == "regression"
            flagged[run.case_id] += run.verdict in ("regression", "not confirmed")

        for i in range(args.sessions):
            # Gated first, then kept: like a night's runs, it joins the history afterwards.
            runs, seconds = session(args, base, scratch, [], keep=True)
            for run in runs:
                count_aa(run)
            print(f"A/A {i + 1}/{args.sessions}: {_verdicts(runs)} ({seconds:.0f} s)",
                  flush=True)
            for level in levels:
                injected, seconds = session(
                    args, base, scratch, [f"--perf-inject-slowdown={level}@{args.inject_into}"])
                for run in injected:
                    if args.inject_into in run.case_id:
                        caught[level] += run.verdict == "regression"
                    else:  # an uninjected case of the same session: one more A/A sample
                        count_aa(run)
                print(f"  +{level:.0%} {i + 1}/{args.sessions}: {_verdicts(injected)} "
                      f"({seconds:.0f} s)", flush=True)
        print("\nA/A (unchanged code against a history of the same code):")
        for case_id in sorted(aa):
            print(f"  {case_id}: {alarms[case_id]} false alarms in {aa[case_id]} sessions "
                  f"({flagged[case_id]} flagged and re-run)")
        print("Injected slowdowns (confirmed regressions of the injected case):")
        for level in levels:
            print(f"  +{level:.0%} step time (-{level / (1 + level):.1%} throughput): caught in "
                  f"{caught[level]} of {args.sessions} sessions")
        enough = [lv for lv in levels if caught[lv] >= 0.95 * args.sessions]
        print(f"Smallest injected level caught in 95% of sessions: "
              f"{f'+{min(enough):.0%}' if enough else 'none of those measured'}")


if __name__ == "__main__":
    main()
