"""How much each gated figure moves from one session to the next on this machine, quiet or
beside a busy neighbour: the measurement the gate's CPU floors and its history length rest on
(docs/gate.md, "Short histories").

`run` measures: --sessions sessions of the smoke tier (or -k's cases), one after the other, each
a fresh `pytest perf/` process with gating off and a history folder of its own; with
--neighbour busy a process spins on one core for the whole time (the load another job's worker
puts on a 2-core runner). Every case's figures of every session are appended to a JSON-lines
file, one line a run, so that sessions spread over several days add to one record:

    python benchmarks/gate_spreads.py run --sessions 10 --neighbour quiet
    python benchmarks/gate_spreads.py run --sessions 10 --neighbour busy

`report` reads such files (gzip too) and prints, per figure, how far runs of one case move
between sessions (robust spread, the largest ratio between two sessions, compile time's largest
gap in seconds), and what the short-history rule would say of unchanged code: every session
taken in turn as tonight's, against each window of the k sessions before it, for k = 1 to 12,
the share of nights that a threshold of z times the history's spread (never below the floor)
would flag, and the share beyond the gross factor:

    python benchmarks/gate_spreads.py report benchmarks/data/gate_spreads/*.jsonl.gz

`newcomers` replays issue 52's newcomer sequence (a fresh history, then five more nights) on
every 6 consecutive kept sessions, judged by the gate's own rule at the floors the gate takes
(baselines/gate.toml's, or another folder's with --baselines), and counts the sequences that
would have flagged unchanged code, with a 95% binomial interval:

    python benchmarks/gate_spreads.py newcomers benchmarks/data/gate_spreads/*.jsonl.gz
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from lab import ROOT, records, sessions

from tfperf.cases import catalog
from tfperf.gate import rules, statistics
from tfperf.ground.machine import detect

DATA = records.DATA / "gate_spreads"
FIGURES = [m.name for m in statistics.METRICS]


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def _case_key(row: dict[str, Any]) -> str:
    """A case's series: its id, and its workload's version where that is not 1. A workload
    whose version changed trains something else (issue 52 item 5): its runs before and after
    are two series, never pooled. Rows kept before versions were recorded are version 1."""
    version = row.get("workload_version", 1)
    return row["case_id"] if version == 1 else f"{row['case_id']} (workload version {version})"


def _session(number: int, pytest_args: Sequence[str], folder: Path,
             versions: dict[str, int]) -> list[dict[str, Any]]:
    """One smoke session with gating off and a history of its own: its runs' figures."""
    done = sessions.run(["perf/", "--perf-gate=off", *pytest_args],
                        history=folder / f"history{number}")
    if done.code not in (0, 1):
        print(done.tail(2000, 2000), file=sys.stderr)
    runs = done.runs()
    return [{"case_id": r.case_id, "session": r.session, "when": r.when,
             "workload_version": versions.get(r.case_id.split("-")[0], 1),
             "round_examples_per_sec": list(r.round_examples_per_sec),
             **{name: r.value(name) for name in FIGURES}} for r in runs]


def run(args: argparse.Namespace) -> int:
    machine = detect()
    # gzip: appended member by member, read back whole (the raw data is committed compressed).
    out = args.out or DATA / f"{machine.key()}-{args.neighbour}.jsonl.gz"
    neighbour = None
    if args.neighbour == "busy":
        neighbour = multiprocessing.Process(target=_spin, args=(7 * 24 * 3600.0,), daemon=True)
        neighbour.start()
    folder = Path(tempfile.mkdtemp(prefix="gate-spreads-"))
    versions = {name: info.version for name, info in
                catalog.read(ROOT / "workloads", folder / "catalog.log").items()}
    try:
        for number in range(1, args.sessions + 1):
            started = time.monotonic()
            rows = _session(number, args.pytest_args, folder, versions)
            records.append(out, *({**row, "machine_key": machine.key(),
                                   "neighbour": args.neighbour} for row in rows))
            print(f"session {number} of {args.sessions}: {len(rows)} runs, "
                  f"{time.monotonic() - started:.0f} s -> {out}", flush=True)
    finally:
        if neighbour is not None:
            neighbour.terminate()
        shutil.rmtree(folder, ignore_errors=True)
    return 0


def _series(rows: Sequence[dict[str, Any]]) -> dict[tuple[str, str, str], list[float]]:
    """(machine key and neighbour, case, figure) -> the figure's values in session order."""
    found: dict[tuple[str, str, str], list[tuple[str, float]]] = defaultdict(list)
    for row in rows:
        group = f"{row['machine_key']} ({row['neighbour']})"
        for name in FIGURES:
            if row.get(name) is not None:
                found[group, _case_key(row), name].append((row["when"], float(row[name])))
    return {key: [v for _, v in sorted(values)] for key, values in found.items()}


def _worse(name: str, now: float, baseline: float) -> float:
    """Relative worsening of `now` against `baseline` (positive: worse)."""
    higher_is_better = name in ("examples_per_sec", "scaling_efficiency")
    change = now / baseline - 1
    return -change if higher_is_better else change


def flag_rates(values: Sequence[float], name: str, k: int, z: float, floor: float,
               gross: float) -> tuple[int, int, int]:
    """(nights judged, nights flagged, nights beyond `gross`) for unchanged code: each value
    after the first k, against the k before it, by the short-history rule."""
    judged = flagged = beyond = 0
    for tonight in range(k, len(values)):
        history = values[tonight - k:tonight]
        baseline = float(np.median(history))
        if baseline <= 0:
            continue
        spread = max(statistics.relative_sigma(history), statistics.MIN_RELATIVE_SIGMA)
        worse = _worse(name, values[tonight], baseline)
        judged += 1
        flagged += worse > max(floor, z * spread)
        beyond += worse > gross - 1
    return judged, flagged, beyond


def report(args: argparse.Namespace) -> int:
    series = _series(list(records.rows(args.files)))
    groups = sorted({group for group, _, _ in series})
    for group in groups:
        print(f"\n## {group}\n")
        print("| figure | cases | sessions (median) | robust spread: median, max | largest ratio "
              "between two sessions | largest gap |")
        print("| --- | --- | --- | --- | --- | --- |")
        for name in FIGURES:
            found = {case: v for (g, case, n), v in series.items() if g == group and n == name
                     and len(v) >= 2}
            if not found:
                continue
            spreads = [statistics.relative_sigma(v) for v in found.values()]
            ratios = [max(v) / min(v) for v in found.values() if min(v) > 0]
            gaps = [max(v) - min(v) for v in found.values()]
            unit = " s" if name == "compile_cpu_s" else ""
            print(f"| {name} | {len(found)} | {int(np.median([len(v) for v in found.values()]))} "
                  f"| {np.median(spreads):.1%}, {max(spreads):.1%} | {max(ratios):.2f} "
                  f"| {max(gaps):.3g}{unit} |")
        print(f"\nUnchanged code judged by the short-history rule (z={args.z}), nights flagged "
              "of nights judged, over every case:\n")
        print("| figure | floor | " + " | ".join(f"k={k}" for k in args.k) + " |")
        print("| --- | --- | " + " | ".join("---" for _ in args.k) + " |")
        for name in FIGURES:
            floor = args.floors[FIGURES.index(name)]
            cells = []
            for k in args.k:
                judged = flagged = 0
                for (g, _, n), values in series.items():
                    if g == group and n == name:
                        counts = flag_rates(values, name, k, args.z, floor, args.gross)
                        judged, flagged = judged + counts[0], flagged + counts[1]
                cells.append(f"{flagged}/{judged}" if judged else "-")
            print(f"| {name} | {floor:.0%} | " + " | ".join(cells) + " |")
    return 0


def _newcomer_flags(runs: Sequence[dict[str, Any]], settings: statistics.GateSettings,
                    floors: rules.GateRules) -> list[str]:
    """Each later night of one case's fresh history judged against the nights before it, at
    the floors the gate takes for the case (gate.toml's, else the defaults): what the gate
    would have flagged."""
    flags = []
    case_id = runs[0]["case_id"]
    for night in range(1, len(runs)):
        for metric in statistics.METRICS:
            now = runs[night][metric.name]
            past = [r[metric.name] for r in runs[:night] if r[metric.name] is not None]
            if now is None or not past:
                continue
            within = statistics.within_run_spread(
                [r.get("round_examples_per_sec") or [] for r in runs[:night]]) \
                if metric == statistics.THROUGHPUT else 0.0
            floor = floors.floor(case_id, settings.default_floor(metric), metric.floors)
            verdict = statistics.judge(metric, now, past, settings, floor, within)
            if verdict.status == statistics.FLAGGED:
                flags.append(f"night {night + 1}: {metric.label} {verdict.change:+.1%}")
    return flags


def newcomers(args: argparse.Namespace) -> int:
    """Issue 52's newcomer sequence replayed on the kept sessions: each run of `nights`
    consecutive sessions (disjoint) is a fresh history, night 1 unjudged, each later night
    judged by the gate's own rule (statistics.judge, shipped settings and floors) against the
    nights before it. Without re-runs, a flag counts as a false failure: an upper bound."""
    from scipy.stats import binomtest

    rows = list(records.rows(args.files))
    settings = statistics.GateSettings()
    floors = rules.load(args.baselines)
    print(f"floors: {args.baselines / rules.FILE_NAME} (throughput and scaling efficiency "
          f"{dict(floors.floors) or 'defaults'}; {dict(floors.other_floors) or 'defaults'})")
    for group in sorted({f"{r['machine_key']} ({r['neighbour']})" for r in rows}):
        mine = [r for r in rows if f"{r['machine_key']} ({r['neighbour']})" == group]
        sessions = sorted({r["session"] for r in mine}, key=lambda s: min(
            r["when"] for r in mine if r["session"] == s))
        windows = [sessions[i:i + args.nights]
                   for i in range(0, len(sessions) - args.nights + 1, args.nights)]
        sequences = failed = 0
        said = []
        for window in windows:
            for case in sorted({_case_key(r) for r in mine}):
                found = [next((r for r in mine if r["session"] == s and _case_key(r) == case),
                              None) for s in window]
                runs = [r for r in found if r is not None]
                if len(runs) < len(window):
                    continue
                sequences += 1
                flags = _newcomer_flags(runs, settings, floors)
                if flags:
                    failed += 1
                    said.append(f"  {case}: {'; '.join(flags)}")
        if sequences:
            low, high = binomtest(failed, sequences).proportion_ci(0.95)
            print(f"{group}: {failed} of {sequences} newcomer sequences ({len(windows)} windows "
                  f"of {args.nights} sessions x cases) flagged unchanged code; 95% interval "
                  f"[{low:.1%}, {high:.1%}]")
            print("\n".join(said))
    return 0


def needed_floors(runs: Sequence[dict[str, Any]], settings: statistics.GateSettings,
                  ks: Sequence[int]) -> dict[str, list[float]]:
    """Per figure, for every night of one case judged against each window of k sessions before
    it (k in `ks`, at least the gate's `settle`), by the gate's own rule: the least floor at
    which the night is gated and passes (neither flagged nor, its window spreading beyond the
    floor, unstable), to 0.1%; 0 where nothing flags at no floor."""
    found: dict[str, list[float]] = {m.name: [] for m in statistics.METRICS}
    for k in ks:
        for night in range(k, len(runs)):
            window = runs[night - k:night]
            for metric in statistics.METRICS:
                now = runs[night][metric.name]
                past = [r[metric.name] for r in window if r[metric.name] is not None]
                if now is None or len(past) < settings.settle:
                    continue
                within = statistics.within_run_spread(
                    [r.get("round_examples_per_sec") or [] for r in window]) \
                    if metric == statistics.THROUGHPUT else 0.0
                found[metric.name].append(_least_floor(metric, now, past, settings, within))
    return found


def _least_floor(metric: statistics.Metric, now: float, past: Sequence[float],
                 settings: statistics.GateSettings, within: float) -> float:
    """The least floor (to 0.1%, up to 10) at which the gate judges `now` and passes it."""
    def passes(floor: float) -> bool:
        said = statistics.judge(metric, now, past, settings, floor, within).status
        return said not in (statistics.FLAGGED, statistics.UNSTABLE)

    if passes(0.0) or not passes(10.0):  # nothing flags, or a gross change only a floor of
        return 0.0                        # 10x would pass: no floor is the answer there
    low, high = 0.0, 10.0
    while high - low > 0.0005:
        middle = (low + high) / 2
        low, high = (low, middle) if passes(middle) else (middle, high)
    return round(high, 3)


def floors(args: argparse.Namespace) -> int:
    """The least floor per figure that keeps every unchanged night of the kept sessions from
    being flagged by the gate's rule once the history has settled, quiet and busy apart and
    together: what the CPU floors of baselines/gate.toml rest on."""
    rows = list(records.rows(args.files))
    settings = statistics.GateSettings()
    ks = range(settings.settle, args.longest + 1)
    pooled: dict[str, list[float]] = defaultdict(list)
    print(f"nights judged against every window of {settings.settle}-{args.longest} sessions "
          "before them, by the gate's rule with no floor: the least floor that passes them\n")
    print("| neighbour | figure | nights judged | flagged at no floor | 99th percentile | "
          "largest |")
    print("| --- | --- | --- | --- | --- | --- |")
    for group in sorted({f"{r['machine_key']} ({r['neighbour']})" for r in rows}):
        mine = [r for r in rows if f"{r['machine_key']} ({r['neighbour']})" == group]
        needed: dict[str, list[float]] = defaultdict(list)
        for case in sorted({_case_key(r) for r in mine}):
            runs = sorted((r for r in mine if _case_key(r) == case), key=lambda r: r["when"])
            for name, values in needed_floors(runs, settings, ks).items():
                needed[name] += values
                pooled[name] += values
        for name, values in needed.items():
            if values:
                print(f"| {group} | {name} | {len(values)} | {np.count_nonzero(values)} | "
                      f"{np.percentile(values, 99):.1%} | {max(values):.1%} |")
    for name, values in pooled.items():
        if values:
            print(f"| all | {name} | {len(values)} | {np.count_nonzero(values)} | "
                  f"{np.percentile(values, 99):.1%} | {max(values):.1%} |")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    measure = commands.add_parser("run", help="measure sessions and append their runs")
    measure.add_argument("--sessions", type=int, default=10)
    measure.add_argument("--neighbour", choices=("quiet", "busy"), default="quiet")
    measure.add_argument("--out", type=Path, help="the JSON-lines file to append to")
    measure.add_argument("pytest_args", nargs="*", help="after --: passed to pytest")
    judge = commands.add_parser("report", help="the spreads and the short-history rule's "
                                               "flags in kept files")
    judge.add_argument("files", nargs="+", type=Path)
    judge.add_argument("--z", type=float, default=statistics.GateSettings().z)
    judge.add_argument("--floors", type=lambda s: [float(x) for x in s.split(",")],
                       default=[0.05, 0.05, 0.10, 0.25],
                       help="per figure, in the order " + ", ".join(FIGURES))
    judge.add_argument("--k", type=lambda s: [int(x) for x in s.split(",")],
                       default=[1, 2, 3, 4, 5, 6, 8, 10, 12])
    judge.add_argument("--gross", type=float, default=2.0)
    replay = commands.add_parser("newcomers", help="issue 52's newcomer sequences replayed on "
                                                   "kept sessions")
    replay.add_argument("files", nargs="+", type=Path)
    replay.add_argument("--nights", type=int, default=6)
    replay.add_argument("--baselines", type=Path, default=ROOT / "baselines",
                        help="the folder whose gate.toml sets the floors (the shipped one)")
    least = commands.add_parser("floors", help="the least floor per figure that passes every "
                                               "unchanged night once the history has settled")
    least.add_argument("files", nargs="+", type=Path)
    least.add_argument("--longest", type=int, default=12,
                       help="the longest history window judged against (sessions)")
    args = parser.parse_args(argv)
    return {"run": run, "report": report, "newcomers": newcomers, "floors": floors}[
        args.command](args)


if __name__ == "__main__":
    sys.exit(main())
