"""Run inside Apache Otava's own environment by change_points.py (Otava pins numpy 2.2 and scipy
below 1.17, the suite 2.4 and 1.17, so it cannot share the suite's): for each series read from
stdin (a JSON line: id and one value per build), replays the nights, one build appended a night
from the first judged one, and runs Otava's detector (otava.analysis.compute_change_points, the
Hunter algorithm: E-divisive split over sliding windows, merged by Student's t) on the builds
so far (the latest `--history` of them). Writes a JSON line per series: each change point as
[the night it was first reported, its build then, its build last reported, the forward change
in % and the p-value last reported]; a point reported within `--same-within` builds of one
before is that one, moved (the detector refines a point's place as builds come)."""

from __future__ import annotations

import argparse
import json
import sys

# Otava is installed in its own environment only (see the docstring), not in the suite's.
from otava.analysis import compute_change_points  # type: ignore[import-not-found]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--first", type=int, required=True, help="the first night judged")
    parser.add_argument("--history", type=int, required=True, help="builds a night reads")
    parser.add_argument("--window", type=int, required=True, help="Otava's window_len")
    parser.add_argument("--max-pvalue", type=float, required=True)
    parser.add_argument("--min-magnitude", type=float, required=True)
    parser.add_argument("--same-within", type=int, required=True,
                        help="a point this near one reported before is that one, moved")
    parser.add_argument("--settle", type=int, default=0,
                        help="report a point only once this many builds follow it")
    args = parser.parse_args()
    for line in sys.stdin:
        series = json.loads(line)
        values = series["values"]
        raised: list[list[float]] = []  # [night first reported, its build, its build now, %, p]
        for night in range(args.first, len(values) + 1):
            start = max(0, night - args.history)
            points, _ = compute_change_points(values[start:night], window_len=args.window,
                                              max_pvalue=args.max_pvalue,
                                              min_magnitude=args.min_magnitude)
            for point in points:
                index = start + int(point.index)
                if night - index < args.settle:
                    continue
                change = float(point.stats.forward_change_percent())
                near = [r for r in raised if abs(r[2] - index) <= args.same_within]
                if near:
                    near[0][2:] = [index, change, float(point.stats.pvalue)]
                else:
                    raised.append([night, index, index, change, float(point.stats.pvalue)])
        print(json.dumps({"id": series["id"], "raised": raised}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
