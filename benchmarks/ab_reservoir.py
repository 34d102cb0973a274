"""The A/B reservoir: real pairs, kept, to judge any verdict rule on (issue 53).

A verdict takes minutes of a real machine, so proving its error rates on real sessions one
verdict at a time would take days. Instead, `collect` runs fixed-length A/A sessions that keep
every pair (512 pairs: 32 duets of 16 on 4 duets alive at once, no early stop; numerics off),
each a fresh `pytest perf/` process alone on the machine, and appends each case to a JSON-lines
file (gzip), one line a session: the pairs in their real order with their real turn orders,
rates, yardsticks and times, and the session's start, relay and pair seconds.

`judge` draws pseudo-sessions from it: whole relay generations (the duets alive together, in
their real order and with their real orders), drawn without replacement, each generation's
duets cut to the design's relay (their first pairs); a known change applied to side B's rates;
judged by the verdict code itself (verdict.sequential) at a design of benchmarks/ab_designs.py.
It reports each level's verdicts, wrong-verdict rates with Clopper-Pearson 95% intervals over
the pseudo-sessions and a bootstrap interval over the real sessions (the pool redrawn from
resampled sessions), power, and seconds to a verdict by the sessions' own measured costs.

`describe` says what the real pairs look like beyond the model: per session the per-pair SD
within duets, the duets' SD, the second-turn effect and B/A; how far duets alive together move
together (an intraclass correlation over generations) and a session-level component.

    python benchmarks/ab_reservoir.py collect --workload resnet20 --sessions 4
    python benchmarks/ab_reservoir.py collect --workload resnet20 --sessions 2 --slowdown 0.03
    python benchmarks/ab_reservoir.py describe benchmarks/data/ab_reservoir/*.jsonl.gz
    python benchmarks/ab_reservoir.py judge benchmarks/data/ab_reservoir/*.jsonl.gz \\
        --workload resnet20 --design today --design "duets-t 90% relay 8"

Run `collect` from a clone (its sessions write .perf-results/ there); --out names the file.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from ab_designs import DESIGNS, Design  # a sibling study (its folder is on the path)
from lab import records, sessions
from scipy.stats import binomtest, f_oneway, ks_2samp
from scipy.stats import f as f_dist

from tfperf.ab import random_effects, signed_rank, verdict
from tfperf.ab.random_effects import Pairs
from tfperf.ground.machine import detect

DATA = records.DATA / "ab_reservoir"
CASE = "cpu1 and workers1 and xla_off and NHWC and default and single and fp32 and synthetic"
PAIRS, DUETS, RELAY = 512, 4, 16
CHANGES = (0.0, -0.0075, -0.014, -0.016, -0.02, -0.03, -0.05)


def collect(args: argparse.Namespace) -> int:
    out = args.out or DATA / f"{detect().key()}.jsonl.gz"
    for number in range(1, args.sessions + 1):
        done = sessions.run(["perf/test_training.py", "-k", f"{args.workload} and {CASE}",
                             "--perf-ab-side-a=current", f"--perf-ab-pairs={PAIRS}:{PAIRS}",
                             f"--perf-ab-duets={DUETS}", f"--perf-ab-relay={RELAY}",
                             "--perf-ab-numerics=off",
                             *([f"--perf-inject-slowdown={args.slowdown}"] if args.slowdown
                               else [])])
        data = done.ab()
        if data is None:
            print(f"session {number}: no session file", file=sys.stderr)
            continue
        records.append(out, *({
            "workload": args.workload, "slowdown": args.slowdown,
            "machine_key": data["machine_key"], "when": data["when"],
            "session": data["session"], "settings": data["settings"],
            "case_id": case["case_id"], "pairs": case["pairs"],
            "wall_s": case["wall_s"], "rounds_s": case["rounds_s"],
            "relay_s": case["relay_s"], "failure": case["failure"]} for case in data["cases"]))
        print(f"session {number} of {args.sessions}: {len(data['cases'])} case(s), "
              f"{done.seconds:.0f} s", flush=True)
    return 0


def load(paths: list[Path]) -> Iterator[dict[str, Any]]:
    for kept in records.rows(paths):
        # A case that ended `slower` ran every pair: its verdict, not a fault.
        if (kept["failure"] is None or kept["failure"].get("cause") == "slower") \
                and len(kept["pairs"]) == PAIRS:
            yield kept


def pairs_of(kept: dict[str, Any], change: float = 0.0) -> Pairs:
    return Pairs.of([p["b_rate"] * (1 + change) / p["a_rate"] for p in kept["pairs"]],
                    [p["duet"] for p in kept["pairs"]], [p["order"] for p in kept["pairs"]])


def generations(kept: dict[str, Any]) -> list[Pairs]:
    """The session's relay generations: each the duets alive together, their pairs in order."""
    pairs, size = pairs_of(kept), DUETS * RELAY
    return [Pairs(pairs.log_ratios[i:i + size], pairs.duets[i:i + size] - pairs.duets[i] + 1,
                  pairs.b_second[i:i + size]) for i in range(0, PAIRS, size)]


def costs(sessions: list[dict[str, Any]]) -> tuple[float, float, float]:
    """Start, a relay and a pair, seconds, medians over the sessions (a case's measuring time,
    rounds_s, holds its relays)."""
    relays = PAIRS // RELAY - DUETS
    pair = [(kept["rounds_s"] - kept["relay_s"]) / PAIRS for kept in sessions]
    relay = [kept["relay_s"] / relays for kept in sessions]
    start = [kept["wall_s"] - kept["rounds_s"] for kept in sessions]
    return float(np.median(start)), float(np.median(relay)), float(np.median(pair))


def pseudo(pool: list[Pairs], design: Design, change: float, draw: np.random.Generator
           ) -> Pairs:
    """One pseudo-session: whole generations, cut to the design's relay, without replacement."""
    settings = design.settings
    relay = settings.relay or RELAY
    count = -(-settings.max_pairs // (settings.duets * relay))
    chosen = draw.choice(len(pool), size=count, replace=False)
    parts = [pool[i].head(settings.duets * relay) for i in chosen]
    y = np.concatenate([p.log_ratios for p in parts]) + np.log1p(change)
    duets = np.concatenate([p.duets + settings.duets * k for k, p in enumerate(parts)])
    b_second = np.concatenate([p.b_second for p in parts])
    n = settings.max_pairs
    return Pairs(y[:n], duets[:n], b_second[:n])


def outcomes(pool: list[Pairs], design: Design, change: float, n: int, seed: int,
             seconds: tuple[float, float, float]) -> tuple[list[str], list[float]]:
    draw = np.random.default_rng(seed)
    start, relay, pair = seconds
    statuses: list[str] = []
    times: list[float] = []
    for _ in range(n):
        last = verdict.sequential(pseudo(pool, design, change, draw), design.settings)[-1]
        statuses.append(last.status)
        times.append(start + relay * design.settings.relays(last.pairs) + pair * last.pairs)
    return statuses, times


def wrong(change: float, floor: float, statuses: list[str]) -> int:
    right = "same" if abs(change) < floor else ("slower" if change < 0 else "faster")
    return sum(s not in (right, "undecided") for s in statuses)


def judge(args: argparse.Namespace) -> int:
    sessions = [k for k in load(args.files) if k["workload"] == args.workload and
                not k["slowdown"]]
    if len(sessions) < 2:
        print(f"{len(sessions)} A/A session(s) of {args.workload}: need 2 or more",
              file=sys.stderr)
        return 2
    seconds = costs(sessions)
    print(f"{args.workload}: {len(sessions)} A/A sessions, {len(sessions) * PAIRS // RELAY} "
          f"duets; start {seconds[0]:.0f} s, relay {seconds[1]:.1f} s, pair {seconds[2]:.2f} s")
    print("| design | true change | n | slower | faster | same | undecided | wrong (95% CP) | "
          "wrong (bootstrap over sessions) | seconds median/p90 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |")
    draw = np.random.default_rng(args.seed)
    by_session = [generations(kept) for kept in sessions]
    pool = [g for found in by_session for g in found]
    for name in args.design:
        design = DESIGNS[name]
        for k, change in enumerate(CHANGES):
            statuses, times = outcomes(pool, design, change, args.n, args.seed + k, seconds)
            bad = wrong(change, design.settings.floor, statuses)
            low, high = binomtest(bad, args.n).proportion_ci(0.95, "exact")
            boot = []
            for b in range(args.bootstrap):
                redrawn = draw.choice(len(sessions), size=len(sessions), replace=True)
                again = [g for i in redrawn for g in by_session[i]]
                found, _ = outcomes(again, design, change, args.n // 4, b, seconds)
                boot.append(wrong(change, design.settings.floor, found) / len(found))
            interval = (f"[{np.percentile(boot, 2.5):.3f}, {np.percentile(boot, 97.5):.3f}]"
                        if boot else "-")
            counts = [statuses.count(s) for s in ("slower", "faster", "same", "undecided")]
            print(f"| {name} | {change:+.2%} | {args.n} | {' | '.join(map(str, counts))} | "
                  f"{bad / args.n:.3f} [{low:.3f}, {high:.3f}] | {interval} | "
                  f"{np.median(times):.0f}/{np.percentile(times, 90):.0f} |", flush=True)
    return 0


def adjusted_generations(kept: dict[str, Any], m: int = RELAY
                         ) -> Iterator[tuple[Pairs, random_effects.Fit, np.ndarray]]:
    """Each relay generation with its duets cut to their first m pairs, its fit, and its
    log B/A after the second turn, as the verdict takes them."""
    for g in generations(kept):
        head = g.head(DUETS * m)
        fit = random_effects.fit(head, 0.0, False)
        yield head, fit, head.log_ratios - fit.order_effect * head.b_second


def duet_centres(kept: dict[str, Any], m: int = RELAY) -> np.ndarray:
    """Each duet's centre over its first m pairs as the verdict takes it (the Hodges-Lehmann
    estimate of its log B/A after the second turn), as generations x duets."""
    found = []
    for head, _, adjusted in adjusted_generations(kept, m):
        _, index, sizes = np.unique(head.duets, return_inverse=True, return_counts=True)
        found.append(signed_rank.centres(adjusted, index, sizes))
    return np.array(found)


def _centred(kept: dict[str, Any]) -> np.ndarray:
    """The session's log B/A less their median, over their robust SD (1.4826 MAD): their
    shape, not their place or their spread (which moves from session to session with the
    machine's noise, A/A or not)."""
    y = np.log([p["b_rate"] / p["a_rate"] for p in kept["pairs"]])
    y = y - np.median(y)
    found: np.ndarray = y / (1.4826 * np.median(np.abs(y)))
    return found


def _kurtosis(kept: dict[str, Any]) -> float:
    """The pairs' tails: the kurtosis of log B/A about each duet's median (3 if normal)."""
    pairs = pairs_of(kept)
    residuals = np.concatenate([pairs.log_ratios[pairs.duets == d]
                                - np.median(pairs.log_ratios[pairs.duets == d])
                                for d in np.unique(pairs.duets)])
    return float(np.mean(residuals ** 4) / np.mean(residuals ** 2) ** 2)


def _centres_over_model(centres: np.ndarray, within_sd: float) -> float:
    """The duets' centres' real spread over what the verdict's model says of it,
    (pi / 3) sigma_e^2 / m, with no offsets (A/A): below 1 where the Hodges-Lehmann centre
    beats its normal-noise variance (heavy tails), so the interval errs wide."""
    return float(np.var(centres, ddof=1) / (random_effects.HL_VARIANCE * within_sd ** 2 / RELAY))


def describe(args: argparse.Namespace) -> int:
    print("| workload | injected | session | pairs | per-pair SD | duet SD | second turn | B/A | "
          "expected B/A | shape as A/A's (KS p) | kurtosis | duets' centres / model |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    by_workload: dict[str, list[np.ndarray]] = {}
    kept_all = list(load(args.files))
    # Does a real slowdown behave as a scaled one? Its B/A against 1 / (1 + injected), and the
    # shape of its pairs about their centre against the A/A sessions' (a two-sample
    # Kolmogorov-Smirnov test of the standardised log ratios: a scaled change moves them all
    # alike, and leaves their tails as they were).
    same = {w: np.concatenate([_centred(k) for k in kept_all if k["workload"] == w
                               and not k["slowdown"]] or [np.zeros(0)])
            for w in {k["workload"] for k in kept_all}}
    for kept in kept_all:
        fit = random_effects.fit(pairs_of(kept), 0.0, False)
        centres = duet_centres(kept)
        expected = 1 / (1 + (kept["slowdown"] or 0))
        shape = (f"{ks_2samp(_centred(kept), same[kept['workload']]).pvalue:.2f}"
                 if kept["slowdown"] and same[kept["workload"]].size else "")
        print(f"| {kept['workload']} | {kept['slowdown'] or 0:.1%} | {kept['session']} | "
              f"{len(kept['pairs'])} | {fit.within_sd:.2%} | {fit.duet_sd:.2%} | "
              f"{np.expm1(fit.order_effect):+.2%} | {np.exp(fit.centre):.4f} | "
              f"{expected:.4f} | {shape} | {_kurtosis(kept):.1f} | "
              f"{_centres_over_model(centres.ravel(), fit.within_sd):.2f} |")
        if not kept["slowdown"]:
            by_workload.setdefault(kept["workload"], []).append(centres)
    for workload, found in by_workload.items():
        # One-way analyses of variance of the duets' centres: by generation within sessions
        # (what duets alive together share: an intraclass correlation), and by session.
        df_within = sum(c.shape[0] * (DUETS - 1) for c in found)
        df_between = sum(c.shape[0] - 1 for c in found)
        within = np.concatenate([(c - c.mean(axis=1, keepdims=True)).ravel() for c in found])
        between = np.concatenate([c.mean(axis=1) - c.mean() for c in found])
        ms_within = float(np.sum(within ** 2)) / df_within
        ms_between = DUETS * float(np.sum(between ** 2)) / df_between
        icc = (ms_between - ms_within) / (ms_between + (DUETS - 1) * ms_within)
        icc_p = float(f_dist.sf(ms_between / ms_within, df_between, df_within))
        means = np.array([c.mean() for c in found])
        session_p = session_var = float("nan")
        if len(found) > 1:
            session_p = float(f_oneway(*[c.ravel() for c in found]).pvalue)
            session_var = float(np.var(means, ddof=1)) - float(
                np.mean([np.var(c, ddof=1) for c in found])) / found[0].size
        print(f"\n{workload}: {len(found)} A/A sessions, {sum(c.size for c in found)} duets: "
              f"duets alive together correlate {icc:+.2f} (intraclass, over generations within "
              f"sessions, F-test p {icc_p:.2f}); session means {', '.join(f'{m:+.2%}' for m in means)}: a "
              f"session-level component of SD {np.sqrt(max(0.0, session_var)):.2%} (F-test p "
              f"{session_p:.2f})")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("collect", help="run fixed-length A/A (or injected) sessions")
    run.add_argument("--workload", default="resnet20")
    run.add_argument("--sessions", type=int, default=1)
    run.add_argument("--slowdown", type=float, default=0.0,
                     help="side B's rounds made this fraction longer (0: an A/A session)")
    run.add_argument("--out", type=Path)
    said = sub.add_parser("describe", help="what the kept pairs look like")
    said.add_argument("files", type=Path, nargs="+")
    judged = sub.add_parser("judge", help="pseudo-sessions judged by a design")
    judged.add_argument("files", type=Path, nargs="+")
    judged.add_argument("--workload", default="resnet20")
    judged.add_argument("--design", action="append", choices=list(DESIGNS), required=True)
    judged.add_argument("-n", type=int, default=1000, help="pseudo-sessions per level")
    judged.add_argument("--bootstrap", type=int, default=0,
                        help="resamples of the real sessions (each with n / 4 pseudo-sessions)")
    judged.add_argument("--seed", type=int, default=53)
    args = parser.parse_args()
    return {"collect": collect, "describe": describe, "judge": judge}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
