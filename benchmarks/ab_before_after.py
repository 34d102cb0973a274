"""Issue 53's before and after on real sessions: seconds to an A/B verdict of the design at one
commit (today's: issue 33's defaults) against another's (the shipped one), in one interleaved
run on one host.

Each arm is a clone of this repository at its commit with its own environment, so each runs
exactly the code, defaults and verdict rule of its commit. `prepare` makes them under
.perf-results/before-after/ (git ignores it). `run` then runs rounds: in each, every arm at
every level (A/A, and side B slowed by --perf-inject-slowdown) in an order drawn afresh per
round (seeded, kept), each a fresh `pytest perf/` process of resnet20 tiny's default CPU case
at its commit's A/B defaults, with numerics off (the speed verdict's own time; the numerics
check costs both arms the same). Nothing else should run on the machine. One line a session is
appended to a JSON-lines file (gzip): arm, commit, level, the verdict and its interval, the
pairs, the case's seconds (workers' start to end, and the measured pairs with their relays),
the process's seconds.

    python benchmarks/ab_before_after.py prepare --arm today=c7f67da --arm shipped=HEAD
    python benchmarks/ab_before_after.py run --rounds 3 --slowdown 0.03
    python benchmarks/ab_before_after.py run --rounds 2 --slowdown 0.02 0.03 \
        --tensorflow tensorflow-cpu==2.22.0rc0
    python benchmarks/ab_before_after.py report benchmarks/data/ab_before_after/*.jsonl.gz

`report` prints, per arm and level, the verdicts, and the median and 90th-percentile seconds to
a verdict, and each arm's median over the reference arm's (--reference, default today) with a
bootstrap interval over sessions.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from lab import ROOT, records, sessions

from tfperf.ground.machine import detect

ARMS = ROOT / ".perf-results" / "before-after"
DATA = records.DATA / "ab_before_after"
CASE = ("resnet20 and cpu1 and workers1 and xla_off and NHWC and default and single and fp32 "
        "and synthetic")


def _arm(text: str) -> tuple[str, str]:
    name, _, commit = text.partition("=")
    if not name or not commit:
        raise argparse.ArgumentTypeError(f"an arm is NAME=COMMIT (today=c7f67da), not {text!r}")
    return name, commit


def prepare(args: argparse.Namespace) -> int:
    for name, commit in args.arm:
        sha = subprocess.run(["git", "rev-parse", "--verify", f"{commit}^{{commit}}"], cwd=ROOT,
                             capture_output=True, text=True, check=False)
        if sha.returncode:
            print(f"ab_before_after: no commit {commit!r} in {ROOT}", file=sys.stderr)
            return 2
        folder = ARMS / name
        if not folder.exists():
            subprocess.run(["git", "clone", "--quiet", str(ROOT), str(folder)], check=True)
        subprocess.run(["git", "checkout", "--quiet", sha.stdout.strip()], cwd=folder, check=True)
        # The arm's own install step, and no test: collecting the fast lane installs it.
        subprocess.run(["./run", "fast", "--collect-only", "-q"], cwd=folder, check=True,
                       stdout=subprocess.DEVNULL)
        print(f"{name}: {folder} at {sha.stdout.strip()[:12]}")
    return 0


def _session(folder: Path, slowdown: float, tensorflow: str | None = None
             ) -> tuple[dict[str, Any] | None, float]:
    # --perf-baseline: the spelling every arm's commit knows (later ones take it for
    # --perf-ab-side-a, with a line that names the new one).
    done = sessions.run(["perf/test_training.py", "-k", CASE, "--perf-baseline=current",
                         "--perf-ab-numerics=off",
                         *([f"--perf-inject-slowdown={slowdown}"] if slowdown else []),
                         *([f"--perf-tensorflow={tensorflow}"] if tensorflow else [])],
                        cwd=folder, python=folder / ".venv" / "bin" / "python")
    return done.ab(), done.seconds


def _level(line: dict[str, Any]) -> str:
    """A session's level as the report names it: side B's TensorFlow, or its injected
    slowdown (none: an A/A session)."""
    if line.get("tensorflow"):
        return str(line["tensorflow"])
    return f"{-line['slowdown']:+.1%}" if line["slowdown"] else "none"


def run(args: argparse.Namespace) -> int:
    arms = sorted(p for p in ARMS.iterdir() if (p / ".venv" / "bin" / "python").exists()) \
        if ARMS.exists() else []
    if len(arms) < 2:
        print("ab_before_after: fewer than two prepared arms in .perf-results/before-after/: "
              "run `prepare` first", file=sys.stderr)
        return 2
    key = detect().key()
    out = args.out or DATA / f"{key}.jsonl.gz"
    commits = {arm: subprocess.run(["git", "rev-parse", "HEAD"], cwd=arm, capture_output=True,
                                   text=True, check=True).stdout.strip() for arm in arms}
    seed = args.seed if args.seed is not None else int(time.time())
    for number in range(args.rounds):
        draw = np.random.default_rng([seed, number])
        levels: list[tuple[float, str | None]] = [(0.0, None), *((s, None) for s in args.slowdown),
                                                  *((0.0, t) for t in args.tensorflow)]
        plan = [(arm, level) for arm in arms for level in levels]
        for index in draw.permutation(len(plan)):
            arm, (level, tensorflow) = plan[index]
            data, seconds = _session(arm, level, tensorflow)
            line = {"arm": arm.name, "commit": commits[arm], "slowdown": level, "seed": seed,
                    "round": number, "process_s": seconds, "machine_key": key,
                    "tensorflow": tensorflow}
            if data and data["cases"]:
                case = data["cases"][0]
                last = case["looks"][-1] if case["looks"] else {}
                line.update({"when": data["when"], "settings": data["settings"],
                             "case_id": case["case_id"], "verdict": last.get("status"),
                             "ratio": last.get("ratio"), "low": last.get("low"),
                             "high": last.get("high"), "pairs": last.get("pairs"),
                             "looks": [(k.get("pairs"), k.get("status")) for k in case["looks"]],
                             "wall_s": case["wall_s"], "rounds_s": case["rounds_s"],
                             "relay_s": case["relay_s"], "failure": case["failure"]})
            else:
                line["failure"] = {"cause": "no_session_file", "message": ""}
            records.append(out, line)
            print(f"round {number + 1}/{args.rounds} {arm.name} {_level(line)}: "
                  f"{line.get('verdict')} at {line.get('pairs')} pairs, case "
                  f"{line.get('wall_s') or 0:.0f} s, process {seconds:.0f} s", flush=True)
    return 0


def _bootstrap_ratio(first: np.ndarray, other: np.ndarray, draw: np.random.Generator
                     ) -> tuple[float, float]:
    ratios = [np.median(draw.choice(other, other.size)) / np.median(draw.choice(first, first.size))
              for _ in range(4000)]
    low, high = np.percentile(ratios, [2.5, 97.5])
    return float(low), float(high)


def report(args: argparse.Namespace) -> int:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    order = [args.reference]
    for line in records.rows(args.files):
        groups[(line["arm"], _level(line))].append(line)
        if line["arm"] not in order:
            order.append(line["arm"])
    draw = np.random.default_rng(53)
    print("| arm | change | sessions | verdicts | case s: median, 90th pct | process s: median | "
          "median over the reference's (95% bootstrap) |")
    print("| --- | --- | ---: | --- | --- | --- | --- |")
    for level in sorted({lv for _, lv in groups}, key=lambda lv: (lv != "none", lv)):
        first = None
        for arm in order:
            lines = groups.get((arm, level), [])
            ok = [ln for ln in lines if ln.get("wall_s")]
            if not ok:
                continue
            wall = np.array([ln["wall_s"] for ln in ok])
            process = np.array([ln["process_s"] for ln in ok])
            verdicts: dict[str, int] = defaultdict(int)
            for ln in lines:
                verdicts[ln.get("verdict") or (ln.get("failure") or {}).get("cause", "?")] += 1
            said = ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items()))
            versus = ""
            if first is None:
                first = wall
            else:
                low, high = _bootstrap_ratio(first, wall, draw)
                versus = f"{np.median(wall) / np.median(first):.2f} [{low:.2f}, {high:.2f}]"
            print(f"| {arm} | {level} | {len(lines)} | {said} | {np.median(wall):.0f}, "
                  f"{np.percentile(wall, 90):.0f} | {np.median(process):.0f} | {versus} |")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    make = verbs.add_parser("prepare", help="clone each arm at its commit and install it")
    make.add_argument("--arm", type=_arm, action="append", required=True,
                      help="NAME=COMMIT, e.g. today=c7f67da (repeat for each arm)")
    go = verbs.add_parser("run", help="interleaved rounds of every arm at every level")
    go.add_argument("--rounds", type=int, default=3)
    go.add_argument("--slowdown", type=float, nargs="+", default=[0.03],
                    help="side B's injected slowdowns, a level each (and always none)")
    go.add_argument("--tensorflow", nargs="*", default=[], metavar="SPEC",
                    help="side B's TensorFlow, a level each (side A the arm's own)")
    go.add_argument("--seed", type=int, help="the rounds' orders (default: the time, kept)")
    go.add_argument("--out", type=Path)
    show = verbs.add_parser("report", help="seconds to a verdict per arm and level")
    show.add_argument("files", type=Path, nargs="+")
    show.add_argument("--reference", default="today", help="the arm the others are set against")
    args = parser.parse_args(argv)
    return {"prepare": prepare, "run": run, "report": report}[args.verb](args)


if __name__ == "__main__":
    sys.exit(main())
