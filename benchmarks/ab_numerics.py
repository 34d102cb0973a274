"""How often does the A/B numerics verdict say `differ`? A/A sessions, and sessions whose side B
changes its numbers on purpose.

Every session is a real `pytest perf/` A/B session (--perf-ab-side-a, default current: an A/A)
of the selected cases, in a fresh process, with few pairs (the speed verdict is not what is
measured here). Each session draws its own seed, so each trains from new initial weights on
new batches. With --inject T, side B's loss is multiplied by 1 + T loss tolerances
(--perf-inject-numerics). Per case it counts `same`, `differ` and failures, gives the rate of
`differ` with its 95% binomial interval, and the largest difference seen of each kind as a
fraction of its tolerance.

    python benchmarks/ab_numerics.py --sessions 20 --out numerics-aa.json
    python benchmarks/ab_numerics.py --sessions 20 --inject 1.1 --out numerics-1.1.json
    python benchmarks/ab_numerics.py --sessions 1 --baseline tensorflow-cpu==2.20.0 -k cpu
    python benchmarks/ab_numerics.py --direct --sessions 20 --inject 1.1

--direct runs the numerics check alone, as an A/B session's runner calls it after a case's
pairs (tfperf.ab.numerics_check.NumericsCheck.compare, both sides the current TensorFlow):
each "session" starts its own two arm workers, draws a seed of its own and checks every
workload of --workloads (fp32, NHWC, XLA off, one CPU); no speed is measured. Minutes where
the sessions take hours on a busy machine.

Run it from a clone (`PYTHONPATH=<clone> python <clone>/benchmarks/ab_numerics.py`), since the
sessions write .perf-results/ there.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from lab import ROOT, sessions

from tfperf.ab.numerics_check import NumericsCheck
from tfperf.bisect.simulated_bisections import binomial_interval
from tfperf.cases.matrix import Case
from tfperf.ground.failures import CaseFailure
from tfperf.processes.runtime import CURRENT

DEFAULT_K = ("(resnet20 or transformer or deepconn) and cpu1 and workers1 and xla_off and NHWC "
             "and default and single and fp32 and synthetic")
# Enough rounds per worker that every workload's loss falls; the speed verdict is not read.
QUICK = ("--perf-ab-pairs=16:16", "--perf-ab-duets=2", "--perf-ab-relay=0", "--perf-ab-floor=40")


def session(args: argparse.Namespace) -> tuple[dict[str, Any] | None, float]:
    done = sessions.run(["perf/test_training.py", "-k", args.k, f"--perf-ab-side-a={args.baseline}",
                         *QUICK, *([f"--perf-inject-numerics={args.inject:g}"] if args.inject else []),
                         *args.pytest_args])
    return done.ab(), done.seconds


def direct(args: argparse.Namespace) -> dict[str, Any]:
    """One "session" of the numerics check alone: fresh arm workers, a fresh seed."""
    with tempfile.TemporaryDirectory(prefix="ab-numerics-") as folder:
        check = NumericsCheck({"A": CURRENT, "B": CURRENT}, Path(folder), Path(folder), 900)
        seed = secrets.randbits(32)
        cases: list[dict[str, Any]] = []
        try:
            for name in args.workloads.split(","):
                case = Case(name, "cpu", 1, "off", "NHWC", "default", "single", "fp32")
                path = ROOT / "workloads" / f"{name}.py"
                try:
                    verdict = check.compare(case, {"A": path, "B": path}, seed, args.inject)
                    cases.append({"case_id": case.id, "numerics": verdict.to_json()})
                except CaseFailure as failure:
                    cases.append({"case_id": case.id, "numerics": None,
                                  "failure": {"cause": failure.cause}})
        finally:
            check.close()
    return {"cases": cases}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--inject", type=float, default=0.0,
                        help="side B's loss up by this many loss tolerances")
    parser.add_argument("--baseline", default="current")
    parser.add_argument("-k", default=DEFAULT_K)
    parser.add_argument("--direct", action="store_true",
                        help="the numerics check alone, without sessions (see above)")
    parser.add_argument("--workloads", default="resnet20,transformer,deepconn",
                        help="--direct's workloads (files of workloads/)")
    parser.add_argument("--out", type=Path, default=Path("ab-numerics.json"))
    parser.add_argument("pytest_args", nargs="*", help="more pytest options, after --")
    args = parser.parse_args()
    kept: list[dict[str, Any]] = []
    for number in range(args.sessions):
        started = time.monotonic()
        data, seconds = (direct(args), 0.0) if args.direct else session(args)
        seconds = seconds or time.monotonic() - started
        for case in (data or {}).get("cases", []):
            numerics = case.get("numerics") or {}
            kept.append({"session": number, "case": case["case_id"],
                         "status": numerics.get("status") or f"failed: "
                         f"{(case.get('failure') or {}).get('cause', 'before numerics')}",
                         "seed": numerics.get("seed"),
                         **{kind: numerics.get(kind) for kind in ("loss", "gradients",
                                                                  "weights")},
                         "tolerance": numerics.get("tolerance"),
                         "problems": numerics.get("problems"), "seconds": round(seconds)})
        print(f"session {number}: {[(k['case'].split('-')[0], k['status']) for k in kept[-3:]]}"
              f" in {seconds:.0f} s", flush=True)
        args.out.write_text(json.dumps(kept, indent=1))
    by_case: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in kept:
        by_case[row["case"]].append(row)
    how = "the numerics check alone (--direct)" if args.direct else \
        f"--perf-ab-side-a={args.baseline}, {' '.join(QUICK)} {' '.join(args.pytest_args)}"
    print(f"\n{args.sessions} sessions, inject {args.inject:g} tolerances, {how}")
    for case_id, rows in sorted(by_case.items()):
        judged = [r for r in rows if r["status"] in ("same", "differ")]
        differ = sum(r["status"] == "differ" for r in judged)
        low, high = binomial_interval(differ, len(judged)) if judged else (0.0, 1.0)
        largest = {kind: max((r[kind] / r["tolerance"][kind] for r in judged), default=None)
                   for kind in ("loss", "gradients", "weights")}
        print(f"{case_id}: differ {differ} of {len(judged)} (95% interval [{low:.2f}, "
              f"{high:.2f}]), failed {len(rows) - len(judged)}; largest difference / tolerance:"
              + "".join(f" {kind} {value:.3g}" for kind, value in largest.items()
                        if value is not None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
