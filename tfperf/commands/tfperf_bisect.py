"""Since when? Bisect a slowdown of one case to the TensorFlow or the commit that caused it,
each step an interleaved A/B session of the suite.

    tfperf-bisect releases tensorflow-cpu 2.16.2..2.21.0 -- -k "resnet20 and xla_jit and cpu1"
    tfperf-bisect releases keras 3.10.0..3.15.1 [--beside tensorflow-cpu==2.21.0] -- -k ...
    tfperf-bisect nightlies tf-nightly 2026-11-01..2026-11-24 --good current -- -k ...
    tfperf-bisect specs tensorflow-cpu==2.19.1 ./wheels/tf-a.whl tensorflow-cpu==2.20.0 -- -k ...
    tfperf-bisect commits ../models v1.4..main --folder workloads -- -k "mymodel and xla_off"
    tfperf-bisect after-ab .perf-results/ab/<session>.json --budget 2h -- --perf-tier=nightly
    tfperf-bisect issue .perf-results/reports/bisect/*/bisect.json --repo OWNER/NAME

The arguments after `--` are a run's (`-k` and `--perf-*` options): they must select one
training case. The first step confirms the ends (the bad end against the good must say
`slower`); each next step is an A/B of the midpoint against the good end. --each compares
every candidate with the one before it instead. Exit 0: a culprit named (or --each done);
1: stopped without one (the report says why and where); 2: bad input, or an end that fails.
"""

from __future__ import annotations

import argparse
import datetime
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tfperf.bisect import after_ab, git_commits, github_issue, report, search, step_sessions
from tfperf.bisect import candidates as candidate_lists
from tfperf.bisect.candidates import BadRange, Candidate
from tfperf.bisect.levels import Level
from tfperf.bisect.step_sessions import StepError, StepSessions
from tfperf.commands import arguments
from tfperf.ground import project
from tfperf.options import declared
from tfperf.options.ab_settings import ABSettings
from tfperf.storage import database, timestamps
from tfperf.storage.errors import StoreUnavailable
from tfperf.storage.results_store import BisectRow, ResultsStore

# What each step sets itself: a user's pytest arguments may not.
STEP_OPTIONS = ("--perf-ab-pairs", "--perf-ab-floor", "--perf-ab-confidence", "--perf-tensorflow",
                "--perf-baseline")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tfperf-bisect", description=__doc__.split("\n\n")[0],
        usage="tfperf-bisect {releases,nightlies,specs,commits,after-ab,issue} ... [options] "
              "-- PYTEST_ARGS")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--floor", type=arguments.percent("--floor", 0.5),
                        default=ABSettings().floor, metavar="PERCENT",
                        help="the confirmation's floor: the least slowdown of the bad end "
                             f"that counts (default: the A/B floor, {ABSettings().floor * 100:g}%%)")
    common.add_argument("--step-floor", type=arguments.percent("--step-floor", 0.5), metavar="PERCENT",
                        help="every later step's floor (default: half the least slowdown the "
                             "confirmation admits, at least --floor)")
    common.add_argument("--pairs", type=arguments.pairs("--pairs", 8), default=(16, 256), metavar="MIN:MAX",
                        help="each step's A/B looks: at MIN pairs, then each time they double, "
                             "and at MAX (default: 16:256, the A/B default)")
    common.add_argument("--confirm-pairs", type=int, default=search.CONFIRM_PAIRS,
                        metavar="N",
                        help="the confirmation's first look (default: "
                             f"{search.CONFIRM_PAIRS}): the steps' floor is half the slowdown "
                             "its interval admits, so it measures more")
    common.add_argument("--each", action="store_true",
                        help="compare every candidate with the one before it, not bisect")
    common.add_argument("--budget", type=arguments.duration("--budget"), metavar="DURATION",
                        help="start no step after this long (e.g. 3h); the report gives the "
                             "range so far")
    common.add_argument("--step-timeout", type=arguments.duration("--step-timeout"), metavar="DURATION",
                        help="a step that runs longer is stopped and its candidate skipped")
    common.add_argument("--reports", type=Path, metavar="DIR",
                        help="where the report goes (default: RESULTS/reports/bisect/<id>)")
    common.add_argument("--tests", type=Path, metavar="DIR",
                        help=f"the suite's tests (default: the project's; {project.LAYOUT})")
    arguments.add_store(common, "where the report is kept")
    kinds = parser.add_subparsers(dest="kind", required=True,
                                  metavar="releases|nightlies|specs|commits|after-ab|issue")
    releases = kinds.add_parser("releases", parents=[common],
                                help="a package's releases, from the package index")
    releases.add_argument("package", help="e.g. tensorflow-cpu or tensorflow[and-cuda]")
    releases.add_argument("range", help="LOW..HIGH: the good and the bad release")
    nightlies = kinds.add_parser("nightlies", parents=[common],
                                 help="a package's nightlies by date, from the package index")
    nightlies.add_argument("package", help="e.g. tf-nightly or tf-nightly-cpu")
    nightlies.add_argument("range", help="YYYY-MM-DD..YYYY-MM-DD")
    for sub in (releases, nightlies):
        sub.add_argument("--good", metavar="SPEC",
                         help="the good end instead of the range's first (e.g. current)")
        sub.add_argument("--bad", metavar="SPEC",
                         help="the bad end instead of the range's last")
        sub.add_argument("--beside", metavar="REQUIREMENT",
                         help="a package other than TensorFlow (keras, numpy) runs beside this "
                              "TensorFlow, every other package held equal (default: this "
                              "environment's)")
    specs = kinds.add_parser("specs", parents=[common],
                             help="TensorFlow specs in order: the good end first, the bad last")
    specs.add_argument("specs", nargs="+", metavar="SPEC")
    commits = kinds.add_parser("commits", parents=[common],
                               help="the commits of a workloads folder in a git repository")
    commits.add_argument("repo", type=Path, help="the repository")
    commits.add_argument("range", help="GOOD..BAD")
    commits.add_argument("--folder", default="workloads",
                         help="the workloads folder, relative to the repository's root "
                              "(default: workloads)")
    commits.add_argument("--tensorflow", default="current", metavar="SPEC",
                         help="the TensorFlow both sides run (default: current)")
    after = kinds.add_parser("after-ab", help="bisect each case a kept A/B session called "
                                              "slower, between its two TensorFlows (the nightly)")
    after.add_argument("ab_file", type=Path, help="the A/B session file")
    after.add_argument("--days", type=int, default=14,
                       help="a nightly candidate: bisect over the nightlies of this many days "
                            "before its own (default: 14)")
    after.add_argument("--budget", type=arguments.duration("--budget"), metavar="DURATION",
                       help="for all the bisections together")
    after.add_argument("--dry-run", action="store_true", help="say what would run, run nothing")
    issue = kinds.add_parser("issue", help="open or update the GitHub issue of each report's "
                                           "culprit (gh, a token with issues write)")
    issue.add_argument("reports", nargs="+", type=Path, help="bisect.json files")
    issue.add_argument("--repo", required=True, metavar="OWNER/NAME")
    return parser


def _candidates(args: argparse.Namespace) -> list[Candidate]:
    if args.kind == "specs":
        return candidate_lists.specs(args.specs)
    if args.kind == "commits":
        return git_commits.commits(args.repo, args.range, args.folder, args.tensorflow)
    name = candidate_lists.package(args.package)
    tensorflow = None
    if not candidate_lists.is_tensorflow(name.name):
        tensorflow = args.beside or candidate_lists.installed_tensorflow()
        candidate_lists.beside([], tensorflow)  # checked before the index is asked
    elif args.beside:
        raise BadRange(f"--beside: {name.name} is TensorFlow itself; --beside names the "
                       "TensorFlow that another package runs beside")
    listed = candidate_lists.index_versions(name.name)
    found = (candidate_lists.releases if args.kind == "releases"
             else candidate_lists.nightlies)(name, args.range, listed)
    if tensorflow is not None:
        found = candidate_lists.beside(found, tensorflow)
    ends = candidate_lists.specs([args.good or found[0].tensorflow,
                                  args.bad or found[-1].tensorflow])
    return [ends[0], *found[1:-1], ends[1]]


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    """Bisect; a job's timeout or cancel (SIGTERM) ends it at once, the running step's A/B
    session too: as SystemExit it makes subprocess.run kill its child, whose workers then read
    the end of their input and exit. Left to SIGTERM's default, the session would run on."""
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        return _bisect(argv)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _bisect(argv: Sequence[str] | None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    split = given.index("--") if "--" in given else len(given)
    parser = _parser()
    args = parser.parse_args(given[:split])
    pytest_args = given[split + 1:]
    if args.kind == "after-ab":
        return after_ab.run(args.ab_file, args.days, args.budget, args.dry_run, pytest_args, main)
    if args.kind == "issue":
        return github_issue.run(args.reports, args.repo)
    try:
        taken = [name for name in declared.given(pytest_args) if name in STEP_OPTIONS]
    except ValueError as error:
        parser.error(f"the pytest arguments after --: {error}")
    if taken:
        parser.error(f"{taken[0]} is set by each step: give tfperf-bisect's "
                     "--pairs, --floor and candidates instead")
    layout, _ = arguments.fill_folders(args, parser, "tests")
    if args.store:  # the steps' A/B sessions are kept where the report is: told through
        # the environment the steps inherit, never their command lines, which the step logs
        # keep (with the password); the steps' workers never see it (processes.runtime).
        os.environ[database.URL_ENV] = args.store
    bisect_id = datetime.datetime.now(datetime.UTC).strftime("bisect-%Y%m%dT%H%M%SZ") + \
        f"-{os.getpid()}"
    try:
        found_candidates = _candidates(args)
        worktrees = layout.results / "cache" / "bisect-worktrees"

        def workloads_of(candidate: Candidate) -> Path | None:
            if candidate.commit is None:
                return None
            try:
                return git_commits.checkout(args.repo.resolve(), candidate, worktrees)
            except BadRange as error:
                raise ValueError(str(error)) from None

        selection = step_sessions.select(layout.root, args.tests, pytest_args,
                                       workloads_of(found_candidates[-1]))
    except (BadRange, ValueError) as error:
        print(f"tfperf-bisect: {error}", file=sys.stderr)
        return 2
    print(f"tfperf-bisect {bisect_id}: {selection.case_id}, {len(found_candidates)} candidates "
          f"from {found_candidates[0].label} (good) to {found_candidates[-1].label} (bad)")
    logs = layout.results / "logs" / "bisect" / bisect_id
    runner = StepSessions(layout.root, layout.results, logs, selection, bisect_id, workloads_of,
                        args.step_timeout, args.pairs)

    def judge(candidate: int, good: int, level: Level) -> search.Result:
        b, a = found_candidates[candidate], found_candidates[good]
        print(f"  step {runner.number + 1}: {b.label} against {a.label} (floor "
              f"{level.floor:.1%}, {level.confidence:.2%})", flush=True)
        result = runner(b, a, level)
        if isinstance(result, search.Judged):
            print(f"    {result.verdict}: B/A {result.ratio:.3f} [{result.low:.3f}, "
                  f"{result.high:.3f}], {result.pairs} pairs, {result.seconds:.0f} s", flush=True)
        else:
            print(f"    skipped: {result.reason}", flush=True)
        return result

    try:
        if args.each:
            found = search.each(len(found_candidates), judge, args.step_floor or args.floor,
                                budget_s=args.budget)
        else:
            found = search.run(len(found_candidates), judge, args.floor, floor=args.step_floor,
                               confirm_pairs=args.confirm_pairs, budget_s=args.budget)
    except StepError as error:
        print(f"tfperf-bisect: {error}", file=sys.stderr)
        return 2
    kind = "commits" if args.kind == "commits" else "tensorflow"
    doc = report.document(found, found_candidates, selection.case_id, kind, bisect_id,
                          runner.machine_key, args.floor)
    written = report.write(doc, args.reports or layout.reports / "bisect" / bisect_id)
    kept = _keep(doc, args.store, layout.history)
    if found.outcome in (search.NOT_APART, search.END_FAILED):
        print(f"tfperf-bisect: {stopped(doc)}", file=sys.stderr)
        return 1 if found.outcome == search.NOT_APART else 2
    for line in [*report.table(doc), *written, kept]:
        print(line)
    return 0 if found.outcome in (search.FOUND, search.SCANNED) else 1


def stopped(doc: dict[str, Any]) -> str:
    """Why the confirmation stopped the bisection, in one line."""
    step = doc["steps"][0]
    bad, good = (doc["candidates"][step[k]]["label"] for k in ("candidate", "against"))
    if step["verdict"] == "skipped":
        return f"the bad end {bad} cannot be measured: {step['reason']}"
    told = (f"B/A {step['ratio']:.3f} [{step['low']:.3f}, {step['high']:.3f}] over "
            f"{step['pairs']} pairs, floor {step['floor']:.1%}")
    if step["verdict"] == "faster":
        return (f"nothing to bisect: the good end {good} is not good, it is slower than the "
                f"bad end {bad} ({told})")
    if step["verdict"] == "same":
        return (f"nothing to bisect: the bad end {bad} is not slower than the good end {good} "
                f"({told}); either the good end has the slowdown already or the bad end does "
                "not have it")
    return (f"nothing to bisect: the bad end {bad} against the good end {good} is undecided "
            f"({told}); give more --pairs")


def _keep(doc: dict[str, Any], store_url: str | None, history: Path) -> str:
    """Keep the report in the results store if it can be reached: a line saying where."""
    url = database.chosen_url(store_url, history)
    try:
        store = ResultsStore.open(url)
    except StoreUnavailable as error:
        return f"not kept in the results store ({error}); the report's files are"
    try:
        culprit, good = doc["culprit"], doc["good"]
        labels = [str(c["label"]) for c in doc["candidates"]]
        store.add_bisect(BisectRow(
            str(doc["id"]), timestamps.utc(str(doc["when"])), str(doc["machine_key"]), str(doc["case_id"]),
            "commits" if doc["kind"] == "commits" else "tensorflow", str(doc["outcome"]),
            labels[culprit] if isinstance(culprit, int) else None,
            labels[good] if doc["outcome"] == search.FOUND and isinstance(good, int) else None,
            doc))
    finally:
        store.close()
    return f"kept in the results store {store.where}"


if __name__ == "__main__":
    sys.exit(main())
