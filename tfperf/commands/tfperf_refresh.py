"""Refresh the shared baselines: measure fresh sessions, show what would change, write a new
versioned entry only when asked, with a reason.

    tfperf-refresh -k resnet20                   # 5 sessions, then a dry-run diff
    tfperf-refresh --sessions-from .perf-results/refresh/<stamp> --write --reason "TF 2.21.1"
    tfperf-refresh -k resnet20 --write --reason "TF 2.21.1"
    tfperf-refresh -k resnet20 --write --mark-change --reason "new input pipeline"
    tfperf-refresh --list
    tfperf-refresh --rollback 3 --write --reason "entry 4 was measured on a throttled GPU"

Sessions run `pytest` on the project's tests (perf/ unless `[tool.tfperf]` says otherwise) with
gating off. The refresh refuses (exit 1) when a case did not
run in every session, when its runs' fingerprints differ, or when the spread of its per-session
medians is over --max-spread. Nothing stored is changed or removed: each write is a new entry.
The measured sessions are kept under .perf-results/refresh/, so that the entry a dry run showed
can be written from them (--sessions-from) without measuring for another hour.
"""

from __future__ import annotations

import argparse
import getpass
import shlex
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from tfperf.commands import arguments
from tfperf.gate.baseline_entry import diff, refreshed
from tfperf.gate.statistics import GateSettings, relative_sigma
from tfperf.ground.machine import detect
from tfperf.storage import database, session_files
from tfperf.storage.baselines import BaselineEntries, CaseBaseline, Entry
from tfperf.storage.errors import StorageError
from tfperf.storage.results_store import ResultsStore
from tfperf.storage.session_files import Run
from tfperf.storage.stored_runs import StoredRuns

DEFAULT_SESSIONS = 5


class Refused(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tfperf-refresh", description=__doc__.split("\n\n")[0],
        epilog="Arguments after -- go to every session's pytest.")
    parser.add_argument("-k", dest="selection", default="", help="pytest -k expression")
    parser.add_argument("--tier", choices=("smoke", "nightly", "full"),
                        help="the tier to measure (default: the machine's)")
    parser.add_argument("--workload", action="append", default=[],
                        help="only this workload (repeat for several)")
    parser.add_argument("--sessions", type=int,
                        help=f"fresh sessions (default: {DEFAULT_SESSIONS})")
    parser.add_argument("--sessions-from", type=Path, metavar="DIR",
                        help="write from the sessions an earlier refresh kept in DIR (its "
                             "dry run names it) instead of measuring new ones")
    parser.add_argument("--max-spread", type=float, default=5.0, metavar="PERCENT",
                        help="refuse a case whose per-session medians spread more than this "
                             "(robust relative sigma; default: 5)")
    parser.add_argument("--write", action="store_true", help="write the entry (default: dry run)")
    parser.add_argument("--reason", default="", help="why: required to write")
    parser.add_argument("--mark-change", action="store_true",
                        help="a distribution change: the cases' history restarts with these "
                             "sessions (their earlier spread is kept)")
    parser.add_argument("--rollback", type=int, metavar="N",
                        help="make entry N's content the active baseline again")
    parser.add_argument("--list", action="store_true", help="list the entries and exit")
    arguments.add_folders(
        parser, tests="the suite's tests, run by each session", baselines="the shared baselines",
        history="the kept nightly sessions and their store")
    arguments.add_store(parser, "the nightly runs, for the spread a marked change keeps")
    parser.add_argument("pytest_args", nargs="*", help=argparse.SUPPRESS)
    return parser


def _check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Every mistake in the command line, before any session runs."""
    if args.sessions_from is not None:
        if args.sessions is not None or args.selection or args.workload or args.tier \
                or args.pytest_args or args.rollback is not None:
            parser.error("--sessions-from takes the sessions as they were measured: no -k, "
                         "--tier, --workload, --sessions, --rollback or pytest arguments")
        found = len(session_files.History(args.sessions_from).sessions())
        if found < 2:
            parser.error(f"--sessions-from: {args.sessions_from} holds {found} refresh "
                         "session(s); a refresh's dry run keeps at least 2 there")
    args.sessions = DEFAULT_SESSIONS if args.sessions is None else args.sessions
    if args.sessions < 2:
        parser.error(f"--sessions: {args.sessions} is too few to measure a spread; at least 2")
    if not 0 < args.max_spread < 100:
        parser.error(f"--max-spread: {args.max_spread} is not a percentage between 0 and 100")
    if args.write and not args.reason.strip():
        parser.error("--write needs --reason \"why the baselines change\"")
    if args.rollback is not None and (args.mark_change or args.selection or args.workload):
        parser.error("--rollback takes a whole entry: no -k, --workload or --mark-change")


def _who() -> str:
    try:
        name = subprocess.run(["git", "config", "user.name"], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        name = ""
    return name or getpass.getuser()


def _same_judgement(args: argparse.Namespace, given: set[str]) -> str:
    """The options a dry run was judged with that differ from the defaults, or were given:
    the write it suggests must judge the same way, or it could refuse what the dry run showed."""
    defaults = _parser().parse_args([])
    extra = [f"--{name.replace('_', '-')} {shlex.quote(str(getattr(args, name)))}"
             for name in ("max_spread", "baselines", "history", "store")
             if name in given or (name == "max_spread" and args.max_spread != defaults.max_spread)]
    return "".join(f" {e}" for e in extra) + (" --mark-change" if args.mark_change else "")


def kept_folder(results: Path) -> Path:
    """A new folder for one refresh's sessions (generated data: the results folder is not
    kept in git)."""
    folder = results / "refresh" / session_files.session_id()
    folder.mkdir(parents=True)
    return folder


def kept_sessions(folder: Path) -> list[list[Run]]:
    return [session_files.read_session(path) for path in session_files.History(folder).sessions()]


def run_sessions(args: argparse.Namespace, folder: Path) -> list[list[Run]]:
    """N real `pytest perf/` sessions, each keeping its runs under `folder`."""
    # Its own history folder and store: a refresh's sessions are not nightly runs.
    command = [sys.executable, "-m", "pytest", str(args.tests), "-p", "no:cacheprovider",
               "--perf-gate=off", f"--perf-history={folder}",
               f"--perf-store={database.default_url(folder)}"]
    if args.tier:
        command.append(f"--perf-tier={args.tier}")
    if args.workload:
        command.append(f"--perf-only=workload={','.join(args.workload)}")
    if args.selection:
        command += ["-k", args.selection]
    command += args.pytest_args
    sessions = []
    history = session_files.History(folder)
    for i in range(args.sessions):
        print(f"refresh: session {i + 1} of {args.sessions}: {shlex.join(command)}", flush=True)
        before = set(history.sessions())
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
        new = sorted(set(history.sessions()) - before)
        if not new:
            tail = "\n".join(done.stdout.splitlines()[-15:])
            raise Refused(f"session {i + 1} kept no runs (pytest exit {done.returncode}):\n{tail}")
        sessions.append(session_files.read_session(new[0]))
    return sessions


def collect(sessions: Sequence[Sequence[Run]], max_spread: float) -> dict[str, list[Run]]:
    """The runs per case; refuses a case missing from a session, with differing fingerprints,
    or spread over `max_spread` (a fraction)."""
    cases: dict[str, list[Run]] = {}
    for runs in sessions:
        for run in runs:
            cases.setdefault(run.case_id, []).append(run)
    if not cases:
        raise Refused("no case ran: check the selection")
    problems = []
    for case_id, runs in sorted(cases.items()):
        if len(runs) != len(sessions):
            problems.append(f"{case_id}: ran in {len(runs)} of {len(sessions)} sessions (it "
                            "failed in the others; see .perf-results/logs)")
            continue
        differences = [d for r in runs[1:] for d in r.fingerprint.hard_differences(runs[0].fingerprint)]
        if differences:
            problems.append(f"{case_id}: fingerprints differ between sessions: {differences[0]}")
            continue
        spread = relative_sigma([r.examples_per_sec for r in runs])
        if spread > max_spread:
            problems.append(f"{case_id}: sessions spread {spread:.1%} (over {max_spread:.1%}): "
                            "too noisy to be a baseline")
    if problems:
        raise Refused("refused:\n  " + "\n  ".join(problems))
    return cases


def _nightly(url: str, key: str, history: Path) -> list[Run]:
    """The nightly runs of this machine key in the store; none where the history folder's own
    store was never made. A store named by --store or $TFPERF_STORE_URL must be there."""
    if database.never_made(url, history):
        return []
    store = ResultsStore.open(url, create=False)
    try:
        return StoredRuns(store, key).all()
    finally:
        store.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    _check(parser, args)
    layout, given = arguments.fill_folders(args, parser, "tests", "baselines", "history")
    # Checked before any session is measured, not when the nightly's runs are read after.
    url = arguments.store_url(args, args.history, parser)
    if url != database.default_url(args.history):  # a store named: it must be there
        arguments.open_store(args, args.history, parser, create=False).close()
    if args.store is not None:
        given.add("store")
    key = detect().key()
    folder = args.baselines / key / "entries"
    entries = BaselineEntries(folder)
    kept: Path | None = args.sessions_from
    try:
        if args.list:
            for e in entries.entries():
                extra = f" (rollback of {e.rollback_of})" if e.rollback_of else ""
                marked = f", marked change for {len(e.marked)}" if e.marked else ""
                print(f"{e.version:4d}  {e.when[:19]}  {e.who}  {e.kind}{extra}: {e.reason} "
                      f"[{len(e.cases)} cases{marked}, commit {e.commit[:12] or '?'}]")
            return 0
        active = entries.active()
        target = entries.entry(args.rollback) if args.rollback is not None else None
        measured: dict[str, list[Run]] = {}
        if kept is not None:
            measured = collect(kept_sessions(kept), args.max_spread / 100)
        elif target is None:
            kept = kept_folder(layout.results)
            measured = collect(run_sessions(args, kept), args.max_spread / 100)
        nightly = _nightly(url, key, args.history)
        limit = GateSettings().history_limit

        def cases_over(current: Entry | None) -> dict[str, CaseBaseline]:
            if target is not None:
                return dict(target.cases)
            return refreshed(current, measured, args.mark_change, nightly, limit)

        print("\n".join(diff(active, cases_over(active))))
        if not args.write:
            again = (f"tfperf-refresh --sessions-from {kept}" if kept else
                     f"tfperf-refresh --rollback {args.rollback}")
            print(f"dry run: nothing written; to write this entry: {again}"
                  f"{_same_judgement(args, given)} --write --reason \"...\"")
            return 0

        def make(current: Entry | None, version: int) -> Entry:
            # Under the store's lock, built on whatever is active now: another refresh may
            # have written an entry while this one measured, and its cases are kept.
            return Entry(version, _who(), session_files.now(), session_files.commit(), args.reason.strip(),
                         "refresh" if target is None else "rollback", cases_over(current),
                         tuple(sorted(measured)) if args.mark_change else (), args.rollback)

        entry = entries.append(make)
        print(f"wrote {folder / f'{entry.version:04d}.json'}: review it, then commit it")
        return 0
    except Refused as refusal:
        print(f"tfperf-refresh: {refusal}", file=sys.stderr)
        if kept is not None and session_files.History(kept).sessions():
            # A refusal for spread may be judged again with another --max-spread, unmeasured.
            print(f"tfperf-refresh: the sessions are kept in {kept} (--sessions-from)",
                  file=sys.stderr)
        return 1
    except StorageError as error:
        print(f"tfperf-refresh: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
