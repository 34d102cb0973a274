"""Do the kept files judge again as they did? Every committed file a verdict rests on (the A/B
session files of benchmarks/data/rc_2.22.0rc0, the A/B reservoir, the newcomer soak, the gate's
spread campaign, the before/after and pair-cost campaigns) is judged again by the commands that
read it, in this checkout and in a git worktree of another commit, and their outputs compared
byte for byte. A change that means to alter no verdict (a refactoring, a renaming) must leave
every output as it was; one that does shows which.

    python benchmarks/rejudge.py --against 7d3f1a9      # exit 1 if any output differs
    python benchmarks/rejudge.py --against 7d3f1a9 --keep /tmp/rejudged   # keep both outputs

Both checkouts run with this checkout's interpreter and its installed packages; each imports
its own tfperf and studies (their folder first on the path). Reports that commands write go to
a scratch folder named alike for both, so that no path differs.
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from lab import ROOT

DATA = Path("benchmarks/data")
SEED = ("--seed", "1")


def commands(root: Path) -> list[tuple[str, list[str]]]:
    """Each judging command over the committed data, named, as arguments to python. The files
    are this checkout's, by their full paths, whichever checkout's code judges them: a file
    kept since the other commit is judged by both, not missed by it."""
    def files(folder: str) -> list[str]:
        return sorted(str(p) for p in (root / DATA / folder).glob("*.gz"))

    found: list[tuple[str, list[str]]] = []
    for kept in files("rc_2.22.0rc0"):  # tfperf-ab reads the file as a session keeps it: plain
        found.append((f"tfperf-ab {Path(kept).name}",
                      ["-m", "tfperf.commands.tfperf_ab", "{plain}" + kept, "--reports",
                       "{reports}"]))
    reservoir = files("ab_reservoir")
    found.append(("ab_reservoir describe", ["benchmarks/ab_reservoir.py", "describe", *reservoir]))
    for workload in ("resnet20", "transformer"):
        found.append((f"ab_reservoir judge {workload}",
                      ["benchmarks/ab_reservoir.py", "judge", *reservoir, "--workload", workload,
                       "--design", "today", "-n", "200", "--bootstrap", "0", *SEED]))
    found.append(("newcomer_soak report",
                  ["benchmarks/newcomer_soak.py", "report", *files("newcomer_soak")]))
    spreads = files("gate_spreads")
    for verb in ("report", "newcomers", "floors"):
        found.append((f"gate_spreads {verb}", ["benchmarks/gate_spreads.py", verb, *spreads]))
    for study in ("ab_before_after", "ab_pair_cost"):
        found.append((f"{study} report", [f"benchmarks/{study}.py", "report", *files(study)]))
    return found


def run(root: Path, arguments: Sequence[str], scratch: Path, roots: Sequence[Path]) -> str:
    """The command's exit status, its output and its errors, as one text, with either
    checkout's folder (`roots`: a kept file may name the one it was measured in) as one."""
    reports = scratch / "reports"
    shutil.rmtree(reports, ignore_errors=True)
    args = [a.replace("{reports}", str(reports)) for a in arguments]
    for i, arg in enumerate(args):
        if arg.startswith("{plain}"):  # decompressed to the same name for either checkout
            kept = root / arg.removeprefix("{plain}")
            args[i] = str(scratch / "plain" / kept.name.removesuffix(".gz"))
            Path(args[i]).parent.mkdir(parents=True, exist_ok=True)
            Path(args[i]).write_bytes(gzip.decompress(kept.read_bytes()))
    env = {**os.environ, "PYTHONPATH": str(root), "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True,
                          text=True, timeout=1800)
    said = f"exit {done.returncode}\n{done.stdout}\n--- stderr ---\n{done.stderr}"
    for folder in roots:  # a path is not a verdict
        said = said.replace(str(folder), "<checkout>")
    return said


def _worktree(commit: str, into: Path) -> Path:
    found = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", f"{commit}^{{commit}}"],
                           capture_output=True, text=True)
    if found.returncode != 0:
        raise SystemExit(f"rejudge: {commit!r} is not a commit of this repository ({ROOT})")
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(into),
                    found.stdout.strip()], check=True, capture_output=True)
    return into


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", required=True, metavar="COMMIT",
                        help="the commit whose judging this checkout's must equal")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="write each command's two outputs here (new files only)")
    args = parser.parse_args(argv)
    if args.keep is not None and args.keep.exists():
        parser.error(f"--keep: {args.keep} exists; give a new folder")
    scratch = Path(tempfile.mkdtemp(prefix="tfperf-rejudge-"))
    other = _worktree(args.against, scratch / "other")
    differ = 0
    try:
        named = commands(ROOT)
        for name, arguments in named:
            outputs = {"this": run(ROOT, arguments, scratch, (ROOT, other)),
                       args.against: run(other, arguments, scratch, (other, ROOT))}
            same = outputs["this"] == outputs[args.against]
            differ += not same
            print(f"{'same' if same else 'DIFFERS'}: {name}", flush=True)
            if not same:
                sys.stdout.writelines(list(difflib.unified_diff(
                    outputs[args.against].splitlines(True), outputs["this"].splitlines(True),
                    args.against, "this", n=1))[:40])
            if args.keep is not None:
                for side, text in outputs.items():
                    path = args.keep / f"{name.replace(' ', '_')}.{side}.txt"
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(text)
        print(f"{len(named) - differ} of {len(named)} judged again the same as at {args.against}")
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(other)],
                       capture_output=True)
        shutil.rmtree(scratch, ignore_errors=True)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
