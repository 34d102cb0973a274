"""Measure the A/B comparison itself on this machine: false verdicts, detection power, time.

Every session is a real `pytest perf/` A/B session (`--perf-ab-side-a=SPEC`, default current:
an A/A run) of the selected cases, in a fresh process. Sessions of the levels (--levels: the
fraction of a round's time added as extra work to side B's rounds; 0 is none) are interleaved
round-robin, so the machine's drift over the hour falls on every level alike; so are the arms
(--arm: settings to compare, each a string of pytest options such as a turn's length). Per
level, arm and case it counts the verdicts
(slower, faster, same, undecided, failed) and gives the median ratio, pairs, and seconds to the
verdict (the whole case, start to end, its measured pairs, and the relays among them), and
what sets them: the
spread of the per-pair ratios, seconds per pair, and the CPU the idle workers burned. An
injected fraction f lengthens B's rounds by f: B/A is then about 1/(1+f).

    python benchmarks/ab_power.py --sessions 20 --levels 0,0.05          # (a) and (b)
    python benchmarks/ab_power.py --sessions 20 --levels 0.01,0.02,0.03 \\
        -k "resnet20-cpu1-workers1-xla_off-NHWC-default-single-fp32-synthetic"   # (c)
    python benchmarks/ab_power.py --sessions 1 --baseline tensorflow-cpu==2.20.0 \\
        -k "cpu" --out ab-2.20-vs-2.21.json                                         # (e)
    python benchmarks/ab_power.py --sessions 5 --levels 0 --arm=--perf-ab-turn=0.5 \\
        --arm=--perf-ab-turn=1 --arm=--perf-ab-turn=2 -k "resnet20 and cpu1 and ..." \\
        -- --perf-ab-pairs=32:32                                   # the turn's length

Run it from a clone (`PYTHONPATH=<clone> python <clone>/benchmarks/ab_power.py`), since the
sessions write .perf-results/ there.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import shlex
import sys
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from lab import sessions
from scipy.stats import binomtest

from tfperf.ab import session_report
from tfperf.ab.verdict import judge
from tfperf.options.ab_settings import DUET_RULES, ABSettings

DEFAULT_K = ("(resnet20 or transformer or deepconn) and cpu1 and workers1 and xla_off and NHWC "
             "and default and single and fp32 and synthetic")


def session(args: argparse.Namespace, level: float, arm: str
            ) -> tuple[dict[str, Any] | None, float]:
    """One A/B session; its session file's contents (None if it wrote none), and its time."""
    done = sessions.run(["perf/test_training.py", "-k", args.k, f"--perf-ab-side-a={args.baseline}",
                         *([f"--perf-inject-slowdown={level}"] if level else []),
                         *shlex.split(arm), *args.pytest])
    return done.ab(), done.seconds


def pair_noise(pairs: list[dict[str, Any]]) -> dict[str, float | None]:
    """What sets a case's interval width and time: the spread of its per-pair log ratios (a
    robust SD, from the median absolute deviation), seconds per pair, and the CPU cores the
    idle workers kept busy while one side trained (the side training: active); and the
    standard error that sampling alone gives the gap in log B/A between the duets that started
    B first and those that started A first, to hold the measured start-order gaps against."""
    if len(pairs) < 2:
        return dict.fromkeys(("sd", "s_per_pair", "idle_cores", "active_cores",
                              "rounds_per_turn", "order_gap_se"))
    logs = np.log([p["b_rate"] / p["a_rate"] for p in pairs])
    sd = float(1.4826 * np.median(np.abs(logs - np.median(logs))))
    per_order = [sum(p["duet"] % 2 == parity for p in pairs) for parity in (1, 0)]

    def median(key: str) -> float | None:
        values = [p[key] for p in pairs if p.get(key) is not None]
        return float(np.median(values)) if values else None

    return {"sd": sd,
            "s_per_pair": float(np.median(np.diff([p["at_s"] for p in pairs]))),
            "idle_cores": median("idle_cores"), "active_cores": median("active_cores"),
            "rounds_per_turn": median("rounds"),
            # A Hodges-Lehmann estimate's error is about sqrt(pi/3) sd/sqrt(n) (normal noise).
            "order_gap_se": sd * math.sqrt(math.pi / 3 * sum(1 / n for n in per_order))
            if min(per_order) else None}


Outcomes = dict[tuple[float, str, str], list[dict[str, Any]]]


def yardstick_narrowing(case: dict[str, Any], settings: ABSettings) -> float | None:
    """The width of the interval of all the case's pairs with the yardstick as a covariate,
    over its width without (below 1: the adjustment pays), on the same pairs at the same look."""
    if not case["pairs"] or settings.look_rule not in DUET_RULES:
        return None
    widths = []
    for adjust in (True, False):
        found = judge(session_report.pairs_of(case), replace(settings, adjust_yardstick=adjust))
        widths.append(math.log(found.high / found.low))
    return widths[0] / widths[1] if widths[1] > 0 else None


def case_row(case: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """One case of a session file, as this benchmark counts it."""
    settings = session_report.settings_of(data)
    verdict = session_report.final(case, settings)
    return {"outcome": session_report.outcome(case, settings),
            "ratio": verdict.ratio if verdict else None,
            "low": verdict.low if verdict else None,
            "high": verdict.high if verdict else None,
            "pairs": len(case["pairs"]), **pair_noise(case["pairs"]),
            "wall_s": case.get("wall_s"),
            "rounds_s": case.get("rounds_s"), "relay_s": case.get("relay_s"),
            "duet_offset": session_report.duet_offset(case),
            "second_turn": session_report.second_turn_effect(case),
            "yardstick_share": session_report.yardstick_share(case),
            "yardstick_narrowing": yardstick_narrowing(case, settings),
            "order_effect": case["order_effect"],
            "sides": {n: {"tensorflow": data["sides"][n]["tensorflow"],
                          "examples_per_sec": case["sides"].get(n, {}).get("examples_per_sec")}
                      for n in "AB"}}


def binomial(count: int, total: int) -> str:
    """A count with its exact (Clopper-Pearson) 95% interval."""
    ci = binomtest(count, total).proportion_ci(0.95, "exact")
    return f"{count}/{total} [{ci.low:.1%}, {ci.high:.1%}]"


def verdict_counts(outcomes: Outcomes) -> list[str]:
    """Each level's, arm's and case's verdicts, each with its 95% binomial interval, and the
    seconds to a verdict (median, worst)."""
    lines = []
    for (level, arm, case_id), rows in sorted(outcomes.items()):
        counts = Counter(row["outcome"] for row in rows)
        walls = [r["wall_s"] for r in rows if r.get("wall_s") is not None]
        sds = [r["sd"] for r in rows if r.get("sd") is not None]
        told = "; ".join(f"{name} {binomial(counts[name], len(rows))}"
                         for name in ("slower", "faster", "same", "undecided")) + \
            "".join(f"; {name} {n}" for name, n in counts.items()
                    if name not in ("slower", "faster", "same", "undecided"))
        lines.append(f"{level:<5g}  {arm or '-'}  {case_id.removesuffix('-prep_host')}  {told}  "
                     f"|  s to a verdict: median {np.median(walls):.0f}, worst {max(walls):.0f}"
                     f"  |  per-pair SD median {np.median(sds):.3f} ({min(sds):.3f}-{max(sds):.3f})"
                     if walls and sds else f"{level:<5g}  {arm or '-'}  {case_id}  {told}")
    return lines


def summary(outcomes: Outcomes) -> list[str]:
    lines = [*verdict_counts(outcomes), "",
             "level  arm  case  verdicts  median B/A [interval]  median pairs  "
             "median s (case / pairs / relays)  start-order effect  |  per pair: SD of log B/A, s, "
             "SD^2 x s;  cores busy: idle workers, active one  |  B-first duets - A-first duets in "
             "log B/A: "
             "mean, SD, SD from sampling alone  |  a duet's own offset (SD of log B/A)  |  "
             "second turn over first  |  variance the yardstick explains, interval width with "
             "it over without"]
    for (level, arm, case_id), rows in sorted(outcomes.items()):
        counts = Counter(row["outcome"] for row in rows)
        decided = [r for r in rows if r["ratio"] is not None]

        def median(key: str, rows: list[dict[str, Any]] = decided) -> float:
            values = [r[key] for r in rows if r.get(key) is not None]
            return float(np.median(values)) if values else float("nan")

        effects = [e for e in map(session_report.start_order_effect, rows) if e is not None]
        gaps = np.log(effects) if effects else np.array([np.nan])
        lines.append(
            f"{level:<5g}  {arm or '-'}  {case_id.removesuffix('-prep_host')}  {dict(counts)}  "
            f"{median('ratio'):.3f} [{median('low'):.3f}, {median('high'):.3f}]  "
            f"{median('pairs'):.0f}  {median('wall_s'):.0f} / {median('rounds_s'):.0f} / "
            f"{median('relay_s'):.0f}  "
            f"{np.median(effects) if effects else float('nan'):.3f}  |  "
            f"{median('sd', rows):.4f} {median('s_per_pair', rows):.2f} "
            f"{median('sd', rows) ** 2 * median('s_per_pair', rows):.2e};  "
            f"{median('idle_cores', rows):.3f} {median('active_cores', rows):.2f}  |  "
            f"{np.mean(gaps):+.4f} {np.std(gaps, ddof=1) if len(gaps) > 1 else np.nan:.4f} "
            f"{median('order_gap_se', rows):.4f}  |  {median('duet_offset', rows):.4f}  |  "
            f"{median('second_turn', rows):.4f}  |  {median('yardstick_share', rows):.3f} "
            f"{median('yardstick_narrowing', rows):.3f}")
    return lines


def load(paths: list[Path]) -> Outcomes:
    """--out files of earlier runs, merged (a file without arms has the default's: '')."""
    outcomes: Outcomes = defaultdict(list)
    for path in paths:
        for key, rows in json.loads(path.read_text()).items():
            level, *arm, case_id = key.split("|")
            outcomes[float(level), arm[0] if arm else "", case_id].extend(rows)
    return outcomes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--levels", default="0,0.05",
                        help="comma-separated fractions injected into side B (0: none)")
    parser.add_argument("--arm", action="append", dest="arms", metavar="OPTIONS",
                        help="settings to compare, repeatable: pytest options in one string "
                        "(--arm='--perf-ab-turn=1'), interleaved like the levels (default: one "
                        "arm, the defaults)")
    parser.add_argument("--baseline", default="current", help="side A's spec")
    parser.add_argument("-k", default=DEFAULT_K, help="the cases (pytest -k)")
    parser.add_argument("--out", type=Path, help="also write every case's outcome here (JSON)")
    parser.add_argument("--summarize", type=Path, nargs="+", metavar="OUT",
                        help="run nothing: the summary of earlier runs' --out files together")
    parser.add_argument("pytest", nargs="*", help="more pytest arguments, after --")
    args = parser.parse_args()
    if args.summarize:
        print("\n".join(summary(load(args.summarize))))
        return 0
    levels = [float(text) for text in args.levels.split(",")]
    outcomes: Outcomes = defaultdict(list)
    for number in range(args.sessions):
        for level, arm in itertools.product(levels, args.arms or [""]):
            data, seconds = session(args, level, arm)
            cases = data["cases"] if data else []
            for case in cases:
                assert data is not None
                outcomes[level, arm, case["case_id"]].append(
                    case_row(case, data))
            if args.out:  # after every session: a run stopped early keeps what it measured
                args.out.write_text(json.dumps({f"{lv}|{t}|{case}": rows
                                                for (lv, t, case), rows in outcomes.items()}))
            print(f"session {number + 1}/{args.sessions} level {level:g} {arm}: "
                  f"{len(cases)} cases in {seconds:.0f} s: " + ", ".join(
                      outcomes[level, arm, c["case_id"]][-1]["outcome"] for c in cases),
                  flush=True)
    print("\n" + "\n".join(summary(outcomes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
