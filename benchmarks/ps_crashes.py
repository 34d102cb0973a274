"""How often a parameter-server case's processes crash (issue 52 item 6): the chief died of
SIGSEGV inside ClusterCoordinator's `copy_tensor` in one of four whole self-test runs.

`run` runs the case --runs times, each a fresh `pytest perf/` process with gating off and a
history folder of its own, and appends one line a run to a JSON-lines file: how it ended
(passed, crash, another failure), the failure's line, the signal, and the settings. By default
the case is the self-tests' own (tinycnn, a 2-worker ParameterServerStrategy cluster, the
millisecond steps that crashed), run for --rounds measured rounds of --steps steps, so that each
run copies many more steps' losses back to the chief (`copy_tensor`, in the coordinator's
threads as each step ends) than a self-test's three rounds. --label names what is measured
(before or after a change); with --neighbours N, N processes spin on the cores the whole
time (a whole self-test run keeps both cores of a 2-core machine busy beside the case, which is
where it crashed):

    python benchmarks/ps_crashes.py run --runs 40 --label before
    python benchmarks/ps_crashes.py run --runs 40 --label before --neighbours 2
    python benchmarks/ps_crashes.py run --runs 150 --label before --neighbours 2 --cores

With --cores a crashed process dumps core in the run's folder, and the record keeps the crashing
thread's native backtrace (gdb), which goes on into TensorFlow's C++ where faulthandler's stack
stops; the core is removed once read.

`report` counts crashes per label and settings, with a 95% Clopper-Pearson interval; runs
made at different settings are never pooled:

    python benchmarks/ps_crashes.py report benchmarks/data/ps_crashes/*.jsonl.gz
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lab import ROOT, records, sessions
from scipy import stats

from tfperf.ground.machine import detect

DATA = records.DATA / "ps_crashes"
CASE = ("--perf-only=device_kind=cpu", "--perf-only=device_count=1", "--perf-only=xla=off",
        "--perf-only=data_format=NHWC", "--perf-only=input=synthetic",
        "--perf-only=precision=fp32", "--perf-only=placement=default",
        "--perf-only=workers=2", "--perf-only=strategy=parameter_server")
# A failure's line in the terminal: "<case id>: <cause>: <message>".
FAILURE = re.compile(r"^\S+-workers2-\S+: (\w+): (.*)$", re.MULTILINE)
SIGNAL = re.compile(r"killed by (SIG\w+)")
LOG = re.compile(r"\(log: (\S+\.log)\)")
KEPT = ROOT / ".perf-results" / "ps-crashes"  # failed tasks' logs: generated, not committed


def _suite(folder: Path, workload: str) -> None:
    """The suite (ini, conftest, perf/) and the one workload, in a folder of its own: the
    self-tests' workloads folder also holds workloads that crash on purpose."""
    shutil.copy(ROOT / "pytest.ini", folder / "pytest.ini")
    shutil.copy(ROOT / "conftest.py", folder / "conftest.py")
    shutil.copytree(ROOT / "perf", folder / "perf", ignore=shutil.ignore_patterns("__pycache__"))
    kept = folder / "workloads"
    kept.mkdir()
    for helper in [*(ROOT / "workloads").glob("_*.py"), ROOT / "tests" / "workloads" / "_tiny.py"]:
        shutil.copy(helper, kept)
    source = ROOT / "tests" / "workloads" / f"{workload}.py"
    shutil.copy(source if source.exists() else ROOT / "workloads" / f"{workload}.py", kept)


def _one(number: int, folder: Path, args: argparse.Namespace, commit: str
         ) -> dict[str, Any]:
    done = sessions.run(["perf/", "-p", "no:randomly", "--perf-gate=off", "--perf-tier=smoke",
                         *CASE, f"--perf-rounds={args.rounds}", f"--perf-steps-per-round={args.steps}",
                         "--perf-warmup-rounds=1", *args.pytest_args],
                        cwd=folder, history=folder / f"history{number}", env=args.env)
    failure = FAILURE.search(done.stdout)
    signal = SIGNAL.search(failure.group(2)) if failure else None
    log = LOG.search(failure.group(2)) if failure else None
    stack = _keep(Path(log.group(1)), f"{args.label}-{number}") if log else []
    native = _native_stacks(folder) if args.cores else []
    ran = re.search(r"\b1 passed\b", done.stdout.splitlines()[-1] if done.stdout else "")
    ended = ("passed" if done.code == 0 and ran and not failure
             else "crash" if failure and failure.group(1) == "crash"
             else "failed")  # another failure, or the case did not run
    if ended != "passed":
        print(done.stdout[-3000:], file=sys.stderr)
    return {"label": args.label, "run": number, "ended": ended,
            "cause": failure.group(1) if failure else None,
            "message": failure.group(2) if failure else None,
            "signal": signal.group(1) if signal else None, "stack": stack,
            "native_stack": native,
            "exit_code": done.code,
            "seconds": round(done.seconds, 1), "workload": args.workload,
            "rounds": args.rounds, "steps": args.steps, "neighbours": args.neighbours,
            "cpus": sorted(os.sched_getaffinity(0)),
            "env": args.env,
            "pytest_args": list(args.pytest_args),
            "commit": commit}


def _keep(log: Path, name: str) -> list[str]:
    """The failed task's log, kept in .perf-results/ps-crashes/ (the run's folder is removed),
    and the crashing thread's stack from it, innermost frame first (faulthandler's
    "Current thread" block): what the JSON line carries of the cause."""
    if not log.is_file():
        return []
    KEPT.mkdir(parents=True, exist_ok=True)
    shutil.copy(log, KEPT / f"{name}.log")
    lines = log.read_text(errors="replace").splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Current thread")), None)
    if start is None:
        return []
    frames = []
    for line in lines[start + 1:]:
        if not line.startswith("  File "):
            break
        frames.append(line.strip())
    return frames


def _native_stacks(folder: Path) -> list[str]:
    """The native stack of the thread that crashed, from each core file a crashed process left
    in the run's folder (its working directory), read by gdb: faulthandler's stack stops at
    the Python frame that called into TensorFlow, the core goes on into TensorFlow's C++.
    The cores (hundreds of MB each) are removed once read."""
    frames: list[str] = []
    for core in sorted(folder.glob("core*")):
        done = subprocess.run(["gdb", "-batch", "-ex", "bt 40", sys.executable, str(core)],
                              capture_output=True, text=True, check=False)
        # gdb names the crashing frame once as it loads the core, then again in the backtrace.
        lines = list(dict.fromkeys(line.strip() for line in done.stdout.splitlines()
                                   if line.startswith("#")))
        frames += [f"{core.name}: {line}" for line in lines]
        core.unlink()
    return frames


def _allow_cores() -> None:
    """Crashed processes dump core in their working directory, the run's folder (one line and
    exit 2 where they cannot, before any run)."""
    if shutil.which("gdb") is None:
        raise SystemExit("--cores reads the cores with gdb, which is not on PATH; install gdb "
                         "or leave --cores out")
    pattern = Path("/proc/sys/kernel/core_pattern").read_text().strip()
    if pattern.startswith("|") or "/" in pattern:
        raise SystemExit(f"--cores needs cores written as plain files in the process's folder; "
                         f"this host's kernel.core_pattern is {pattern!r} (set it to 'core', "
                         "or leave --cores out)")
    _, hard = resource.getrlimit(resource.RLIMIT_CORE)
    if hard == 0:
        raise SystemExit("--cores: this shell's hard limit on core files is 0 (ulimit -Hc)")
    # Inherited by pytest, its zygote and every task forked from it.
    resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))


def _commit() -> str:
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=10", "HEAD"],
                          capture_output=True, text=True, check=False).stdout.strip()


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def run(args: argparse.Namespace) -> int:
    machine = detect()
    out = args.out or DATA / f"{machine.key()}.jsonl.gz"
    if args.cores:
        _allow_cores()
    if args.cpus:
        # Everything this run starts (the neighbours, pytest, the cluster's tasks) inherits it:
        # the tasks' threads and the spinners then interleave on fewer cores than they expect.
        os.sched_setaffinity(0, args.cpus)
    folder = Path(tempfile.mkdtemp(prefix="ps-crashes-"))
    commit = _commit()
    neighbours = [multiprocessing.Process(target=_spin, args=(7 * 24 * 3600.0,), daemon=True)
                  for _ in range(args.neighbours)]
    for neighbour in neighbours:
        neighbour.start()
    try:
        _suite(folder, args.workload)
        for number in range(1, args.runs + 1):
            row = _one(number, folder, args, commit)
            records.append(out, {**row, "machine_key": machine.key()})
            print(f"run {number} of {args.runs}: {row['ended']}"
                  f"{' (' + str(row['message']) + ')' if row['message'] else ''}, "
                  f"{row['seconds']:.0f} s -> {out}", flush=True)
    finally:
        for neighbour in neighbours:
            neighbour.terminate()
        shutil.rmtree(folder, ignore_errors=True)
    return 0


def report(args: argparse.Namespace) -> int:
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for row in records.rows(args.files):
        groups[(row["machine_key"], row["label"], row["workload"], row["rounds"],
                row["steps"], row.get("neighbours", 0), len(row.get("cpus", [0, 1])),
                " ".join([*(f"{k}={v}" for k, v in row.get("env", {}).items()),
                          *row["pytest_args"]]))].append(row)
    print("machine | label | workload | rounds x steps | neighbours | cpus | args | runs | "
          "crashes | other failures | crash rate [95% Clopper-Pearson] | median s")
    for (key, label, workload, rounds, steps, busy, cpus, extra), rows in sorted(groups.items()):
        crashes = sum(r["ended"] == "crash" for r in rows)
        other = sum(r["ended"] == "failed" for r in rows)
        low, high = stats.binomtest(crashes, len(rows)).proportion_ci(method="exact")
        seconds = sorted(r["seconds"] for r in rows)[len(rows) // 2]
        print(f"{key} | {label} | {workload} | {rounds} x {steps} | {busy} | {cpus} | "
              f"{extra or '-'} | "
              f"{len(rows)} | {crashes} | {other} | {crashes / len(rows):.1%} "
              f"[{low:.1%}, {high:.1%}] | {seconds:.0f}")
        for row in rows:
            if row["ended"] != "passed":
                print(f"    run {row['run']} ({row['commit']}): {row['cause']}: {row['message']}")
                for frame in row.get("stack", [])[:args.frames]:
                    print(f"        {frame}")
                for frame in row.get("native_stack", [])[:args.frames]:
                    print(f"        {frame}")
    return 0


def _cpus(text: str) -> set[int]:
    try:
        cpus = {int(c) for c in text.split(",")}
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected CPU numbers, e.g. 0 or 0,1") from None
    if not cpus <= os.sched_getaffinity(0):
        raise argparse.ArgumentTypeError(
            f"{text!r}: this process may run on CPUs {sorted(os.sched_getaffinity(0))} only")
    return cpus


def _setting(text: str) -> tuple[str, str]:
    name, equals, value = text.partition("=")
    if not name or not equals:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=VALUE")
    return name, value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    measure = commands.add_parser("run", help="run the case and append how each run ended")
    measure.add_argument("--runs", type=int, default=40)
    measure.add_argument("--label", required=True, help="what is measured: before, after, ...")
    measure.add_argument("--workload", default="tinycnn")
    measure.add_argument("--rounds", type=int, default=40)
    measure.add_argument("--steps", type=int, default=10)
    measure.add_argument("--neighbours", type=int, default=0,
                         help="processes that spin on the cores the whole time")
    measure.add_argument("--cpus", type=_cpus,
                         help="the CPUs (e.g. 0) the whole run is held to; default all")
    # ONEDNN_MAX_CPU_ISA=AVX2 on an AVX-512 host runs oneDNN's kernels as the AVX2-only host
    # does (the crash was seen only there): another timing for whatever races.
    measure.add_argument("--env", action="append", type=_setting, default=[], metavar="NAME=VALUE",
                         help="set in the run's environment (e.g. ONEDNN_MAX_CPU_ISA=AVX2)")
    measure.add_argument("--out", type=Path, help="the JSON-lines file to append to")
    measure.add_argument("--cores", action="store_true",
                         help="let crashed processes dump core and keep each one's native stack "
                              "(gdb); the host's core_pattern must write plain files")
    measure.add_argument("pytest_args", nargs="*", help="after --: passed to pytest")
    judge = commands.add_parser("report", help="crash counts per label, with intervals")
    judge.add_argument("files", nargs="+", type=Path)
    judge.add_argument("--frames", type=int, default=12,
                       help="of each crash's stack, the innermost frames to print")
    args = parser.parse_args(argv)
    if args.command == "run":
        args.env = dict(args.env)
    if args.command == "run" and (min(args.runs, args.rounds, args.steps) < 1
                                  or args.neighbours < 0):
        parser.error("--runs, --rounds and --steps are whole numbers from 1, --neighbours from 0")
    return {"run": run, "report": report}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
