"""Run by path in Apache Otava's own environment (otava_env.py), never imported by tfperf:
Otava pins numpy 2.2 and scipy below 1.17, the suite 2.4 and 1.17. Reads a JSON line a series
from stdin (its id and one value per build, in build order) and writes a JSON line a series:
each change point Otava's detector finds in the whole series (otava.analysis.
compute_change_points: E-divisive split over sliding windows, merged by Student's t) as
[its index, the forward change in %, the p-value]. Arguments: window, max p-value, min
magnitude (a fraction)."""

from __future__ import annotations

import json
import sys

from otava.analysis import compute_change_points  # type: ignore[import-not-found]


def main() -> int:
    window, max_pvalue, min_magnitude = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    for line in sys.stdin:
        series = json.loads(line)
        points, _ = compute_change_points(series["values"], window_len=window,
                                          max_pvalue=max_pvalue, min_magnitude=min_magnitude)
        found = [[int(p.index), float(p.stats.forward_change_percent()), float(p.stats.pvalue)]
                 for p in points]
        print(json.dumps({"id": series["id"], "points": found}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
