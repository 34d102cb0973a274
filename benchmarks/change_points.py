"""Night by night (issue 78, item 2): how today's history gate and a change-point detector
(Apache Otava) find a step in a case's series across nightly builds, on simulated series at a
GPU fleet's noise, judged side by side in one command on one committed corpus.

The corpus (`corpus`): a case-year of nightly builds a series (365), each build measured by R
runs, each run the case's level times exp(N(0, CV)) (run-to-run noise), 1 run in 100 an outlier
1.5x slower, a host change every 60 builds on average (the level moves by N(0, 0.5%)) and a slow
drift (a random walk of 1% a year); a series has no step, or one slowdown of 2, 3, 5 or 10% at a
build drawn from 120-300. Each build's figure is the median of its R runs. Written to
benchmarks/data/change_points/corpus.<key>.jsonl.gz, the labels with the values and levels,
under the key of the machine that drew it (the draws do not depend on it).

The detectors (`judge`), replayed night by night, one build appended a night from build 30:
- **the gate** (tfperf.gate.statistics.judge, its defaults: robust z 4 over the last 30 builds
  and a 5% floor, or `--gate-floor`): an alarm is a flagged build; it is placed at that build.
- **Otava** 0.8.0 (the Hunter algorithm: E-divisive means over sliding windows, merged by
  Student's t; deterministic) at `--max-pvalue` and `--min-magnitude` on every build so far
  (or the latest `--history`), run in an environment of its own (change_points_otava.py): an
  alarm is a change point the first night it is reported, placed where it was last reported.

Figures, per detector, runs per build and step, with counts and 95% intervals: alarms per
case-year in series without a step (Poisson); steps caught (an alarm within +-3 builds of the
step, within 30 builds of it), caught within 3 builds, builds to detect (median, 90th
percentile; 1: the step's own night), and placed at the exact build (Clopper-Pearson).

    python benchmarks/change_points.py corpus --series 40 --runs 1 3 5 --seed 78
    python benchmarks/change_points.py judge --out benchmarks/data/change_points/judged.<key>.jsonl.gz
"""

from __future__ import annotations

import argparse
import functools
import json
import subprocess
import sys
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from lab import ROOT, records
from scipy.stats import beta, chi2

from tfperf.gate.statistics import FLAGGED, THROUGHPUT, GateSettings, judge
from tfperf.ground.machine import detect

DATA = records.DATA / "change_points"
OTAVA = "apache-otava==0.8.0"
OTAVA_ENV = ROOT / ".perf-results" / "cache" / "otava-0.8.0"
BUILDS, FIRST, NEAR, LATE = 365, 30, 3, 30
STEPS = (0.0, 0.02, 0.03, 0.05, 0.10)


def series(draw: np.random.Generator, cv: float, runs: int, step: float,
           host_sd: float = 0.005, pool: np.ndarray | None = None) -> dict[str, Any]:
    """One labelled case-year: each build's median of `runs` runs, and where its step is; a
    run's noise drawn from `pool` (real runs' log deviations) where given, else lognormal at
    `cv` with 1 run in 100 1.5x slower."""
    host = np.cumsum(draw.random(BUILDS) < 1 / 60)
    levels = draw.normal(0.0, host_sd, host.max() + 1)[host]
    drift = np.cumsum(draw.normal(0.0, 0.01 / np.sqrt(BUILDS), BUILDS))
    at = int(draw.integers(120, 301)) if step else None
    level = np.exp(levels + drift) * np.where(np.arange(BUILDS) >= (at or BUILDS), 1 - step, 1)
    noise = (_medians(draw, cv, runs) if pool is None else
             np.median(np.exp(draw.choice(pool, (BUILDS, runs))), axis=1))
    values = 1000.0 * level * noise
    return {"cv": cv, "runs": runs, "step": step, "at": at, "host_sd": host_sd,
            "levels": [round(float(v), 3) for v in 1000.0 * level],
            "values": [round(float(v), 3) for v in values]}


def _medians(draw: np.random.Generator, cv: float, runs: int, builds: int = BUILDS
             ) -> np.ndarray:
    """Each build's median of `runs` runs' noise: lognormal at `cv`, 1 run in 100 1.5x slower."""
    noise = np.exp(draw.normal(0.0, cv, (builds, runs)))
    noise /= np.where(draw.random((builds, runs)) < 0.01, 1.5, 1.0)
    found: np.ndarray = np.median(noise, axis=1)
    return found


def real_noise(files: list[Path]) -> np.ndarray:
    """Real runs' noise: each kept session's examples/s as a log deviation from its case's
    median on its host (benchmarks/data/gate_spreads/: sessions of each smoke case, run
    after run, nothing changed between them)."""
    by_case: dict[tuple[str, str], list[float]] = {}
    for row in records.rows(files):
        by_case.setdefault((row["machine_key"], row["case_id"]), []).append(
            float(row["examples_per_sec"]))
    found: np.ndarray = np.concatenate([np.log(np.array(v) / np.median(v))
                                        for v in by_case.values() if len(v) >= 10])
    return found


@functools.cache
def _pool(files: tuple[str, ...]) -> np.ndarray:
    return real_noise([ROOT / f for f in files])


def corpus(args: argparse.Namespace) -> int:
    draw, key = np.random.default_rng(args.seed), detect().key()
    pool = real_noise(args.real) if args.real else None
    cv = args.cv if pool is None else round(float(1.4826 * np.median(np.abs(pool))), 4)
    name = f"cv{cv}" if pool is None else f"real{cv}"
    lines = [dict(id=f"{name}-h{args.host_sd}-r{runs}-s{step}-{n}", seed=args.seed,
                  machine_key=key,
                  real=[str(f.resolve().relative_to(ROOT)) for f in args.real or []],
                  **series(draw, cv, runs, step, args.host_sd, pool))
             for runs in args.runs for step in STEPS for n in range(args.series)]
    args.out = args.out or DATA / f"corpus.{key}.jsonl.gz"
    if args.out.exists():
        raise SystemExit(f"{args.out} exists: a corpus is never overwritten; give --out")
    records.append(args.out, *lines)
    print(f"{len(lines)} series to {args.out}")
    return 0


def gate_alarms(line: dict[str, Any], floor: float, confirmed: bool) -> list[list[int]]:
    """Each build the gate flags, against the builds before it: [night, build, build]. With
    `confirmed`, only those whose re-run (the build measured again: its level, fresh noise, a
    draw seeded by the series) is flagged too, as the gate confirms a flag before it fails."""
    settings, found = GateSettings(), []
    values = line["values"]
    rng = np.random.default_rng([line["seed"], zlib.crc32(line["id"].encode())])
    again = np.array(line["levels"]) * (
        np.median(np.exp(rng.choice(_pool(tuple(line["real"])), (BUILDS, line["runs"]))),
                  axis=1) if line.get("real") else _medians(rng, line["cv"], line["runs"]))
    for night in range(FIRST, len(values) + 1):
        history = values[max(0, night - 1 - settings.history_limit):night - 1]
        flagged = [judge(THROUGHPUT, now, history, settings, floor).status == FLAGGED
                   for now in (values[night - 1], again[night - 1])]
        if flagged[0] and (flagged[1] or not confirmed):
            found.append([night, night - 1, night - 1])
    return found


def _python(folder: Path) -> Path:
    return folder / "bin" / "python"


def otava_env() -> Path:
    """Otava's own environment (uv, cached under .perf-results/cache)."""
    if not _python(OTAVA_ENV).exists():
        uv = Path(sys.executable).parent / "uv"
        subprocess.run([str(uv), "venv", "--quiet", "--python", "3.11", str(OTAVA_ENV)],
                       check=True)
        subprocess.run([str(uv), "pip", "install", "--quiet", "--python",
                        str(_python(OTAVA_ENV)), OTAVA], check=True)
    return _python(OTAVA_ENV)


def otava_alarms(lines: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, list[Any]]:
    done = subprocess.run(
        [str(otava_env()), str(Path(__file__).with_name("change_points_otava.py")),
         "--first", str(FIRST), "--history", str(args.history), "--window", str(args.window),
         "--max-pvalue", str(args.max_pvalue), "--min-magnitude", str(args.min_magnitude),
         "--same-within", str(NEAR), "--settle", str(args.settle)],
        input="".join(json.dumps({"id": s["id"], "values": s["values"]}) + "\n" for s in lines),
        capture_output=True, text=True, check=True)
    return {row["id"]: row["raised"] for row in map(json.loads, done.stdout.splitlines())}


def _cp(k: int, n: int) -> str:
    low = beta.ppf(0.025, k, n - k + 1) if k else 0.0
    high = beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return f"{k}/{n}, {k / n:.1%} [{low:.1%}, {high:.1%}]" if n else "-"


def _poisson(k: int, years: float) -> str:
    low = chi2.ppf(0.025, 2 * k) / 2 if k else 0.0
    high = chi2.ppf(0.975, 2 * k + 2) / 2
    return f"{k / years:.2f} [{low / years:.2f}, {high / years:.2f}] ({k} in {years:g})"


def figures(lines: Iterable[dict[str, Any]], alarms: dict[str, list[Any]]) -> dict[str, Any]:
    """A group's figures (one detector, runs per build and step size)."""
    lines = list(lines)
    if not lines[0]["step"]:
        count = sum(len(alarms[s["id"]]) for s in lines)
        return {"series": len(lines), "alarms": count,
                "alarms_per_year": _poisson(count, len(lines) * BUILDS / 365)}
    delays, exact, within = [], 0, 0
    for s in lines:
        hits = [a for a in alarms[s["id"]] if abs(a[1] - s["at"]) <= NEAR
                and a[0] - s["at"] <= LATE]
        if hits:
            first = min(hits, key=lambda a: a[0])
            delays.append(first[0] - s["at"])
            exact += first[2] == s["at"]
            within += first[0] - s["at"] <= 3
    return {"series": len(lines), "caught": _cp(len(delays), len(lines)),
            "within_3": _cp(within, len(lines)), "exact": _cp(exact, len(lines)),
            "builds_to_detect": (f"{np.median(delays):.0f}/{np.percentile(delays, 90):.0f}"
                                 if delays else "-")}


def judge_corpus(args: argparse.Namespace) -> int:
    lines = [s for s in records.rows([args.corpus]) if not args.runs or s["runs"] in args.runs]
    found = {"gate": {s["id"]: gate_alarms(s, args.gate_floor, False) for s in lines},
             "gate, re-run confirmed": {s["id"]: gate_alarms(s, args.gate_floor, True)
                                        for s in lines},
             "otava": otava_alarms(lines, args)}
    gate = {"floor": args.gate_floor, **GateSettings().__dict__}
    settings = {"gate": gate, "gate, re-run confirmed": gate,
                "otava": {"package": OTAVA, "max_pvalue": args.max_pvalue,
                          "min_magnitude": args.min_magnitude, "window": args.window,
                          "history": args.history, "settle": args.settle}}
    print("| detector | runs a build | step | series | alarms a case-year (no step) | caught "
          "| within 3 builds | builds to detect, median/p90 | at the exact build |")
    print("| --- | ---: | ---: | ---: | --- | --- | --- | --- | --- |")
    for detector, alarms in found.items():
        for runs in sorted({s["runs"] for s in lines}):
            for step in sorted({s["step"] for s in lines}):
                group = [s for s in lines if s["runs"] == runs and s["step"] == step]
                got = figures(group, alarms)
                print(f"| {detector} | {runs} | {step:.0%} | {got['series']} | "
                      f"{got.get('alarms_per_year', '')} | {got.get('caught', '')} | "
                      f"{got.get('within_3', '')} | {got.get('builds_to_detect', '')} | "
                      f"{got.get('exact', '')} |")
                if args.out:
                    records.append(args.out, {"detector": detector, "runs": runs, "step": step,
                                              "machine_key": detect().key(),
                                              "cv": group[0]["cv"],
                                              "host_sd": group[0].get("host_sd", 0.005),
                                              "corpus": str(args.corpus),
                                              "settings": settings[detector], **got})
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    make = verbs.add_parser("corpus", help="write a labelled corpus of simulated series")
    make.add_argument("--series", type=int, default=40, help="series a runs-and-step level")
    make.add_argument("--runs", type=int, nargs="+", default=[1, 3, 5])
    make.add_argument("--cv", type=float, default=0.02, help="run-to-run coefficient of variation")
    make.add_argument("--real", type=Path, nargs="+",
                      help="draw each run's noise from these kept sessions' (gate_spreads "
                           "files) instead of the lognormal; --cv is then their robust SD")
    make.add_argument("--host-sd", type=float, default=0.005,
                      help="how far the level moves at a host change (SD, relative)")
    make.add_argument("--seed", type=int, default=78)
    make.add_argument("--out", type=Path, help="default: data/change_points/corpus.<key>.jsonl.gz")
    rate = verbs.add_parser("judge", help="the gate and Otava on the corpus, side by side")
    rate.add_argument("--corpus", type=Path, default=max(DATA.glob("corpus.*.jsonl.gz"),
                                                         default=None),
                      help="default: the corpus kept in data/change_points/")
    rate.add_argument("--gate-floor", type=float, default=GateSettings().floor)
    rate.add_argument("--max-pvalue", type=float, default=0.001)
    rate.add_argument("--min-magnitude", type=float, default=0.0)
    rate.add_argument("--window", type=int, default=30, help="Otava's window_len, builds")
    rate.add_argument("--history", type=int, default=BUILDS,
                      help="builds Otava reads a night (default: all so far; a trailing window "
                           "of 120 raised 2-3x the alarms at its left edge)")
    rate.add_argument("--settle", type=int, default=0,
                      help="Otava reports a point only once this many builds follow it")
    rate.add_argument("--runs", type=int, nargs="+", help="only these runs a build (default: all)")
    rate.add_argument("--out", type=Path, help="append each group's figures (JSON lines)")
    args = parser.parse_args()
    return corpus(args) if args.verb == "corpus" else judge_corpus(args)


if __name__ == "__main__":
    sys.exit(main())
