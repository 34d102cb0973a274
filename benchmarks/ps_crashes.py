"""How often a parameter-server case's processes crash, before and after a change (issues 52
item 6 and 76 item 8): the chief died of SIGSEGV inside ClusterCoordinator's `copy_tensor`.

`run` runs a pytest session again and again, each a fresh process, and appends one line a run to
a JSON-lines file: how it ended (passed, crash, another failure), the failure's line, the signal,
the crashing thread's stack, the commit and the settings. What runs is the suite's parameter-
server case (tinycnn, a 2-worker cluster, the millisecond steps that crashed) for --rounds
measured rounds of --steps steps, gating off and a history of its own; or, with --selftests
FILE, that self-test file whole (where the crash was seen: 2 whole runs of
tests/real/test_multiprocess.py in 46 on a 2-vCPU Xeon). With --neighbours N, N processes spin
on the cores the whole time.

One arm is this checkout, named by --label. Two or more arms are other checkouts (e.g. `git
worktree add --detach /tmp/ps-before COMMIT`), --arm LABEL=DIR each, run in turn run by run
(A B, B A, A B, ...) so that the host's drift falls on every arm alike; each run imports its
arm's tfperf (PYTHONPATH), in pytest and in every worker. --runs is each arm's count for its
commit and settings in the file: a campaign stopped part-way is resumed by the same command.

    python benchmarks/ps_crashes.py run --runs 40 --label before --neighbours 2
    python benchmarks/ps_crashes.py run --runs 150 --arm before=/tmp/ps-before \
        --arm after=/tmp/ps-after --selftests tests/real/test_multiprocess.py -- -n 0

With --cores a crashed process dumps core in its working directory, and the record keeps the
crashing thread's native backtrace (gdb), which goes on into TensorFlow's C++ where
faulthandler's stack stops; the core is removed once read.

`report` counts crashes per label and settings, with a 95% Clopper-Pearson interval, and within
one setting Fisher's exact test of the first label against each other; runs made at different
settings are never pooled:

    python benchmarks/ps_crashes.py report benchmarks/data/ps_crashes/*.jsonl.gz
"""

from __future__ import annotations

import argparse
import itertools
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
from typing import Any, NamedTuple

from lab import ROOT, records, sessions
from scipy import stats

from tfperf.ground.machine import detect

DATA = records.DATA / "ps_crashes"
CASE = ("--perf-only=device_kind=cpu", "--perf-only=device_count=1", "--perf-only=xla=off",
        "--perf-only=data_format=NHWC", "--perf-only=input=synthetic",
        "--perf-only=precision=fp32", "--perf-only=placement=default",
        "--perf-only=workers=2", "--perf-only=strategy=parameter_server")
# A failure's line: "<case id>: <cause>: <message>", at a line's start in the suite's output,
# inside a failed self-test's assertion message (after pytest's "E") in a self-test's.
FAILURE = re.compile(r"(?:^|^E\s+)(\S+-workers\d+-\S+): (\w+): (.*)$", re.MULTILINE)
FAILED_TEST = re.compile(r"^FAILED (\S+)", re.MULTILINE)
SIGNAL = re.compile(r"killed by (SIG\w+)")
LOG = re.compile(r"\(log: (\S+\.log)\)")
KEPT = ROOT / ".perf-results" / "ps-crashes"  # failed tasks' logs: generated, not committed


class Arm(NamedTuple):
    label: str
    checkout: Path
    commit: str  # its HEAD, "-dirty" added where its tracked files differ from it


def _suite(folder: Path, checkout: Path, workload: str) -> None:
    """The suite (ini, conftest, perf/) of a checkout and the one workload, in a folder of its
    own: the self-tests' workloads folder also holds workloads that crash on purpose."""
    folder.mkdir(parents=True)
    shutil.copy(checkout / "pytest.ini", folder / "pytest.ini")
    shutil.copy(checkout / "conftest.py", folder / "conftest.py")
    shutil.copytree(checkout / "perf", folder / "perf",
                    ignore=shutil.ignore_patterns("__pycache__"))
    kept = folder / "workloads"
    kept.mkdir()
    tests = checkout / "tests" / "workloads"
    for helper in [*(checkout / "workloads").glob("_*.py"), tests / "_tiny.py"]:
        shutil.copy(helper, kept)
    source = tests / f"{workload}.py"
    shutil.copy(source if source.exists() else checkout / "workloads" / f"{workload}.py", kept)


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """What a run's line records of how it ran (besides its arm): runs are pooled only where
    these are equal."""
    case = args.selftests is None
    return {"selftests": args.selftests, "workload": args.workload if case else None,
            "rounds": args.rounds if case else None, "steps": args.steps if case else None,
            "neighbours": args.neighbours, "cpus": sorted(os.sched_getaffinity(0)),
            "env": args.env, "pytest_args": list(args.pytest_args)}


def _one(arm: Arm, number: int, folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    # The arm's tfperf, not the one installed (an editable install of another checkout), in
    # pytest and in every process it starts.
    env = {**args.env, "PYTHONPATH": str(arm.checkout)}
    scene = folder / f"{arm.label}-{number}"  # where its processes run (and dump core)
    if args.selftests is not None:
        done = sessions.run([args.selftests, "-p", "no:randomly", f"--basetemp={scene}",
                             *args.pytest_args], cwd=arm.checkout, env=env)
    else:
        _suite(scene, arm.checkout, args.workload)
        done = sessions.run(["perf/", "-p", "no:randomly", "--perf-gate=off", "--perf-tier=smoke",
                             *CASE, f"--perf-rounds={args.rounds}",
                             f"--perf-steps-per-round={args.steps}", "--perf-warmup-rounds=1",
                             *args.pytest_args], cwd=scene, history=scene / "history", env=env)
    failures = FAILURE.findall(done.stdout)
    _, cause, message = next((f for f in failures if f[1] == "crash"),
                             failures[0] if failures else (None, None, None))
    signal = SIGNAL.search(message) if message else None
    log = LOG.search(message) if message else None
    stack = _keep(Path(log.group(1)), f"{arm.label}-{arm.commit}-{number}") if log else []
    native = _native_stacks(scene) if args.cores else []
    shutil.rmtree(scene, ignore_errors=True)
    ran = args.selftests is not None or re.search(
        r"\b1 passed\b", done.stdout.splitlines()[-1] if done.stdout else "")
    ended = ("passed" if done.code == 0 and ran and not failures
             else "crash" if cause == "crash" and (signal or args.selftests is None)
             else "failed")  # another failure, or the case did not run (see crashed())
    if ended != "passed":
        print(done.tail(), file=sys.stderr)
    return {"label": arm.label, "commit": arm.commit, "run": number, "ended": ended,
            "cause": cause, "message": message,
            "signal": signal.group(1) if signal else None, "stack": stack,
            "native_stack": native, "failed_tests": FAILED_TEST.findall(done.stdout),
            "exit_code": done.code, "seconds": round(done.seconds, 1), **_settings(args)}


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
    # Anywhere below it: a self-test's processes run in its pytester folders.
    for core in sorted(p for p in folder.rglob("core*") if re.fullmatch(r"core(\.\d+)?", p.name)):
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


def _commit(checkout: Path) -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(checkout), *args], capture_output=True,
                              text=True, check=False).stdout.strip()

    dirty = git("status", "--porcelain", "--untracked-files=no")
    return git("rev-parse", "--short=10", "HEAD") + ("-dirty" if dirty else "")


def _imports_its_own(arm: Arm) -> None:
    """Refuse an arm whose processes would import another checkout's tfperf (an editable
    install's finder comes after PYTHONPATH, so this holds unless something else intervenes)."""
    found = subprocess.run([sys.executable, "-c", "import tfperf.processes.zygote as z; "
                            "print(z.__file__)"], cwd=tempfile.gettempdir(), capture_output=True,
                           text=True, check=False, env={**os.environ, "PYTHONPATH": str(arm.checkout)})
    if not found.stdout.strip().startswith(str(arm.checkout) + os.sep):
        raise SystemExit(f"arm {arm.label}: its processes would import tfperf from "
                         f"{found.stdout.strip() or found.stderr.strip()}, not {arm.checkout}")


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def _same(row: dict[str, Any], settings: dict[str, Any]) -> bool:
    return all(row.get(name) == value for name, value in settings.items() if name != "cpus") \
        and len(row.get("cpus", [0, 1])) == len(settings["cpus"])


def _turns(arms: list[Arm], done: dict[Arm, int], runs: int) -> list[tuple[Arm, int]]:
    """The runs still to make, each arm's numbered on from what the file holds: in turn, the
    order reversed every other round (A B, B A, ...), an arm that has its count left out."""
    turns: list[tuple[Arm, int]] = []
    count = dict(done)
    for round_ in itertools.count():
        due = [arm for arm in (arms if round_ % 2 == 0 else arms[::-1]) if count[arm] < runs]
        if not due:
            return turns
        for arm in due:
            count[arm] += 1
            turns.append((arm, count[arm]))
    raise AssertionError("unreachable")


def run(args: argparse.Namespace) -> int:
    machine = detect()
    out = args.out or DATA / f"{machine.key()}.jsonl.gz"
    if args.cores:
        _allow_cores()
    if args.cpus:
        # Everything this run starts (the neighbours, pytest, the cluster's tasks) inherits it:
        # the tasks' threads and the spinners then interleave on fewer cores than they expect.
        os.sched_setaffinity(0, args.cpus)
    arms = [Arm(label, checkout, _commit(checkout)) for label, checkout in args.arms]
    for arm in arms:
        _imports_its_own(arm)
    settings = {**_settings(args), "machine_key": machine.key()}
    kept = list(records.rows([out])) if out.exists() else []
    done = {arm: sum(r["label"] == arm.label and r["commit"] == arm.commit and _same(r, settings)
                     for r in kept) for arm in arms}
    turns = _turns(arms, done, args.runs)
    print(f"{', '.join(f'{a.label} ({a.commit}): {done[a]} kept' for a in arms)}; "
          f"{len(turns)} runs to make -> {out}", flush=True)
    folder = Path(tempfile.mkdtemp(prefix="ps-crashes-"))
    neighbours = [multiprocessing.Process(target=_spin, args=(7 * 24 * 3600.0,), daemon=True)
                  for _ in range(args.neighbours)]
    for neighbour in neighbours:
        neighbour.start()
    try:
        for arm, number in turns:
            row = _one(arm, number, folder, args)
            records.append(out, {**row, "machine_key": machine.key()})
            print(f"{arm.label} run {number} of {args.runs}: {row['ended']}"
                  f"{' (' + str(row['message']) + ')' if row['message'] else ''}, "
                  f"{row['seconds']:.0f} s", flush=True)
    finally:
        for neighbour in neighbours:
            neighbour.terminate()
        shutil.rmtree(folder, ignore_errors=True)
    return 0


def _setting_of(row: dict[str, Any]) -> tuple[Any, ...]:
    what = row.get("selftests") or f"{row['workload']} {row['rounds']} x {row['steps']}"
    return (row["machine_key"], what, row.get("neighbours", 0), len(row.get("cpus", [0, 1])),
            " ".join([*(f"{k}={v}" for k, v in row.get("env", {}).items()),
                      *row["pytest_args"]]) or "-")


def crashed(row: dict[str, Any]) -> bool:
    """A crash as this study counts it. In a whole self-test run a failed test's output also
    quotes the crashes its workloads make on purpose (a worker that exits with code 3, in
    test_multiprocess.py): there only a process killed by a signal counts, as the chief's
    SIGSEGV was; another failure of the run is counted as such."""
    return row["ended"] == "crash" and (row.get("selftests") is None or bool(row.get("signal")))


def report(args: argparse.Namespace) -> int:
    # Setting -> label -> its runs; labels in the order they first appear (the first arm first).
    groups: dict[tuple[Any, ...], dict[str, list[dict[str, Any]]]] = defaultdict(dict)
    for row in records.rows(args.files):
        groups[_setting_of(row)].setdefault(row["label"], []).append(row)
    print("machine | what ran | neighbours | cpus | args | label (commits) | runs | crashes | "
          "other failures | crash rate [95% Clopper-Pearson] | median s")
    for setting, labels in sorted(groups.items()):
        for label, rows in labels.items():
            crashes = sum(crashed(r) for r in rows)
            other = sum(r["ended"] != "passed" and not crashed(r) for r in rows)
            low, high = stats.binomtest(crashes, len(rows)).proportion_ci(method="exact")
            seconds = sorted(r["seconds"] for r in rows)[len(rows) // 2]
            commits = ", ".join(dict.fromkeys(r["commit"] for r in rows))
            print(f"{' | '.join(map(str, setting))} | {label} ({commits}) | {len(rows)} | "
                  f"{crashes} | {other} | {crashes / len(rows):.1%} [{low:.1%}, {high:.1%}] | "
                  f"{seconds:.0f}")
            for row in rows:
                if row["ended"] != "passed":
                    print(f"    run {row['run']} ({row['commit']}): {row['cause']}: "
                          f"{row['message']} {' '.join(row.get('failed_tests', []))}")
                    for frame in [*row.get("stack", [])[:args.frames],
                                  *row.get("native_stack", [])[:args.frames]]:
                        print(f"        {frame}")
        first, *others = labels
        for other_label in others:
            print("    " + _fisher(first, labels[first], other_label, labels[other_label]))
    return 0


def _fisher(a: str, rows_a: list[dict[str, Any]], b: str, rows_b: list[dict[str, Any]]) -> str:
    """Fisher's exact test of two labels' crash counts: one-sided (a crashes more often than
    b), and two-sided."""
    table = [[sum(crashed(r) for r in rows) for rows in (rows_a, rows_b)]]
    table.append([len(rows_a) - table[0][0], len(rows_b) - table[0][1]])
    greater = stats.fisher_exact(table, alternative="greater").pvalue
    either = stats.fisher_exact(table).pvalue
    return (f"Fisher's exact test, {a} against {b}: crashes {table[0][0]}/{len(rows_a)} against "
            f"{table[0][1]}/{len(rows_b)}; p = {greater:.3g} that {a} crashes more often, "
            f"{either:.3g} two-sided")


def _cpus(text: str) -> set[int]:
    try:
        cpus = {int(c) for c in text.split(",")}
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected CPU numbers, e.g. 0 or 0,1") from None
    if not cpus <= os.sched_getaffinity(0):
        raise argparse.ArgumentTypeError(
            f"{text!r}: this process may run on CPUs {sorted(os.sched_getaffinity(0))} only")
    return cpus


def _variable(text: str) -> tuple[str, str]:
    name, equals, value = text.partition("=")
    if not name or not equals:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=VALUE")
    return name, value


def _arm(text: str) -> tuple[str, Path]:
    label, folder = _variable(text)
    checkout = Path(folder).resolve()
    if not (checkout / "tfperf").is_dir():
        raise argparse.ArgumentTypeError(f"{text!r}: {checkout} is not a checkout of tfperf "
                                         "(git worktree add --detach DIR COMMIT makes one)")
    return label, checkout


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    measure = commands.add_parser("run", help="run the case and append how each run ended")
    measure.add_argument("--runs", type=int, default=40,
                         help="each arm's runs, those the file holds for its commit and "
                              "settings included")
    arm = measure.add_mutually_exclusive_group(required=True)
    arm.add_argument("--label", help="what this checkout is: before, after, ...")
    arm.add_argument("--arm", action="append", type=_arm, metavar="LABEL=DIR",
                     help="a checkout to run, named; two or more run in turn")
    measure.add_argument("--selftests", metavar="FILE",
                         help="run this self-test file of each checkout whole, not the case")
    measure.add_argument("--workload", default="tinycnn")
    measure.add_argument("--rounds", type=int, default=40)
    measure.add_argument("--steps", type=int, default=10)
    measure.add_argument("--neighbours", type=int, default=0,
                         help="processes that spin on the cores the whole time")
    measure.add_argument("--cpus", type=_cpus,
                         help="the CPUs (e.g. 0) the whole run is held to; default all")
    # ONEDNN_MAX_CPU_ISA=AVX2 on an AVX-512 host runs oneDNN's kernels as the AVX2-only host
    # does (the crash was seen only there): another timing for whatever races.
    measure.add_argument("--env", action="append", type=_variable, default=[], metavar="NAME=VALUE",
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
        args.arms = args.arm or [(args.label, ROOT)]
        if len({label for label, _ in args.arms}) < len(args.arms):
            parser.error("each --arm needs a label of its own")
    if args.command == "run" and (min(args.runs, args.rounds, args.steps) < 1
                                  or args.neighbours < 0):
        parser.error("--runs, --rounds and --steps are whole numbers from 1, --neighbours from 0")
    return {"run": run, "report": report}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
