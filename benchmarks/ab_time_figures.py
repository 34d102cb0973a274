"""Would a CPU case's A/B be quieter timed by CPU seconds, or by its steps' median, than by wall
time? (issue 77 item 4)

Each kept pair holds, for each side's turn, its rounds' wall seconds and the CPU seconds its
worker process spent on them (all its threads; tfperf/worker/case/serve.py). Three figures of
the same turns, so of the same seconds:

- `wall`: B/A of examples per wall second (what the verdict judges);
- `cpu`: B/A of examples per CPU second (A's CPU seconds over B's, both turns running the same
  rounds);
- `step median`: A's median round over B's (the same as `wall` where a turn is one round).

For each session, each figure's per-pair spread (1.4826 x the MAD of log B/A, the pairs'
noise as the trimmed mean sees it) and the trimmed rule's own SE of its estimate at all the
session's pairs (tfperf.ab.trimmed: the sandwich over duets). Each figure's variance over wall
time's, the median over sessions with a 95% bootstrap over sessions: below 1, that figure
would reach an interval of a given width in fewer pairs, so in less time. A GPU case keeps
timing the device; this asks only about CPU cases.

    python benchmarks/ab_time_figures.py SESSION.json[.gz] ...
    python benchmarks/ab_time_figures.py benchmarks/data/ab_time_figures/*.json.gz
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
from lab import records

from tfperf.ab import trimmed

FIGURES = ("wall", "cpu", "step median")


def figures(pairs: list[dict[str, Any]]) -> dict[str, np.ndarray] | None:
    """Each figure's log B/A a pair; None where the pairs kept no CPU seconds."""
    if not pairs or any(p.get("a_cpu_s") is None or p.get("b_cpu_s") is None for p in pairs):
        return None
    return {"wall": np.log([p["b_rate"] / p["a_rate"] for p in pairs]),
            "cpu": np.log([p["a_cpu_s"] / p["b_cpu_s"] for p in pairs]),
            "step median": np.log([np.median(p["a_round_s"]) / np.median(p["b_round_s"])
                                   for p in pairs])}


def spreads(case: dict[str, Any]) -> dict[str, tuple[float, float, float]] | None:
    """Each figure's (robust SD a pair, the trimmed rule's SE at all the pairs, its B/A)."""
    found = figures(case["pairs"])
    if found is None:
        return None
    duets = np.array([p["duet"] for p in case["pairs"]])
    out = {}
    for name, y in found.items():
        centre, influence = trimmed.trimmed_mean(y[None, :], 0.25)
        variance, _ = trimmed.sandwich(influence, duets)
        out[name] = (trimmed.robust_sd(y), float(math.sqrt(variance[0])),
                     float(math.exp(centre[0])))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", type=Path, nargs="+", help="kept A/B session files")
    args = parser.parse_args(argv)
    rows = []
    sides: dict[str, str] = {}
    for path in args.files:
        data = records.session(path)
        sides[path.name] = data["sides"]["B"]["spec"]
        for case in data["cases"]:
            found = spreads(case)
            if found is None:
                print(f"{path.name}: {case['case_id']}: no CPU seconds kept: left out",
                      file=sys.stderr)
                continue
            rows.append((path.name, case, found))
    if not rows:
        print("ab_time_figures: no session with CPU seconds", file=sys.stderr)
        return 2
    print("| session | side B | pairs | wall: SD a pair, SE, B/A | cpu: SD a pair, SE, B/A | "
          "step median: SD a pair, SE, B/A |")
    print("| --- | --- | ---: | --- | --- | --- |")
    for name, case, found in rows:
        cells = " | ".join(f"{found[f][0]:.2%}, {found[f][1]:.3%}, {found[f][2]:.4f}"
                           for f in FIGURES)
        print(f"| {name} | {sides[name]} | {len(case['pairs'])} | {cells} |")
    draw = np.random.default_rng(77)
    print()
    print(f"Variance over wall time's, median over {len(rows)} sessions (95% bootstrap over "
          "sessions):")
    for figure in FIGURES[1:]:
        for which, label in ((0, "a pair (robust)"), (1, "of the estimate (trimmed rule's SE)")):
            ratio = np.array([(f[figure][which] / f["wall"][which]) ** 2 for _, _, f in rows])
            boot = [np.median(draw.choice(ratio, ratio.size)) for _ in range(4000)]
            low, high = np.percentile(boot, [2.5, 97.5])
            print(f"- {figure}, {label}: {np.median(ratio):.2f} [{low:.2f}, {high:.2f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
