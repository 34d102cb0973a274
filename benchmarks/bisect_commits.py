"""Does tfperf-bisect name the right commit? Real bisections over a generated history.

Each run makes a fresh repository of --commits commits of one workload (tests/helpers/bisect_repo.py:
a residual stack of 50 convolution blocks), where commit --big adds 5 blocks (10% more work
per step) and commit --small adds 1 (2%), and runs `tfperf-bisect commits` over it at the
shipped defaults, in a process of its own. It counts how often the named culprit is the 10%
commit, what the bisection said of the 2% one (a change it did not split, below the steps'
floor), the steps and the time, and gives the rate with its 95% binomial interval.

    python benchmarks/bisect_commits.py --runs 20 --out bisect-commits.json

Run it from a clone (`PYTHONPATH=<clone> python <clone>/benchmarks/bisect_commits.py`), since
the bisections write .perf-results/ in a project under --work.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import lab  # noqa: F401 (this checkout first on the path: its tests.helpers and tfperf)

from tests.helpers import bisect_repo
from tfperf.bisect import simulated_bisections as simulate


def one(work: Path, number: int, args: argparse.Namespace) -> dict[str, Any]:
    folder = work / f"run{number:02d}"
    project = bisect_repo.make_project(folder / "project")
    history = bisect_repo.History(args.commits, {args.small: 1, args.big: 5})
    shas = bisect_repo.make_repository(folder / "repo", history)
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "tfperf.commands.tfperf_bisect", "commits",
                           "../repo", f"{shas[0]}..{shas[-1]}", *args.bisect_args, "--",
                           *bisect_repo.SELECT], cwd=project, capture_output=True, text=True,
                          check=False)
    seconds = time.monotonic() - started
    (folder / "out.txt").write_text(done.stdout + done.stderr)
    reports = sorted((project / ".perf-results" / "reports" / "bisect").glob("*/bisect.json"))
    doc = json.loads(reports[-1].read_text()) if reports else {}

    def over_small(listed: str) -> bool:
        return any(i in doc.get(listed, []) and s["against"] < args.small <= s["candidate"]
                   for i, s in enumerate(doc.get("steps", [])))

    return {"run": number, "exit": done.returncode, "outcome": doc.get("outcome"),
            "culprit": doc.get("culprit"), "right": doc.get("culprit") == args.big,
            "small_named_below_floor": over_small("below_floor"),
            "small_not_excluded": over_small("not_excluded"), "floor": doc.get("floor"),
            "steps": len(doc.get("steps", [])), "pairs": sum(s.get("pairs", 0)
                                                             for s in doc.get("steps", [])),
            "seconds": round(seconds), "verdicts": [s["verdict"] for s in doc.get("steps", [])],
            "confirm": {k: doc["steps"][0].get(k) for k in ("ratio", "low", "high", "pairs")}
            if doc.get("steps") else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--commits", type=int, default=16)
    parser.add_argument("--small", type=int, default=4, help="the commit that adds 2%%")
    parser.add_argument("--big", type=int, default=11, help="the commit that adds 10%%")
    parser.add_argument("--work", type=Path, default=Path("/tmp/tfperf-bisect-commits"))
    parser.add_argument("--out", type=Path, default=Path("bisect-commits.json"))
    parser.add_argument("bisect_args", nargs="*", help="more tfperf-bisect options, after --")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    found = []
    for number in range(args.runs):
        found.append(one(args.work, number, args))
        print(json.dumps(found[-1]), flush=True)
        args.out.write_text(json.dumps(found, indent=1))
    right = sum(bool(r["right"]) for r in found)
    low, high = simulate.binomial_interval(right, len(found))
    print(f"10% commit named in {right} of {len(found)} runs (95% interval [{low:.2f}, "
          f"{high:.2f}]); outcomes {[r['outcome'] for r in found]}")
    print(f"the 2% commit reported as a change below the floor in "
          f"{sum(bool(r['small_named_below_floor']) for r in found)} of {len(found)}, as lying "
          f"where a slowdown below the floor is not excluded in "
          f"{sum(bool(r['small_not_excluded']) for r in found)}; median "
          f"{statistics.median(r['seconds'] for r in found):.0f} s and "
          f"{statistics.median(r['steps'] for r in found)} steps a run")
    return 0


if __name__ == "__main__":
    sys.exit(main())
