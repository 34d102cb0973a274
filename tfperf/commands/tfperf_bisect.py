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
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from tfperf.bisect import after_ab, bisection, followed, github_issue, search
from tfperf.bisect.step_sessions import StepError
from tfperf.commands import arguments, bisect_changes
from tfperf.ground import project, vocabulary
from tfperf.options import declared
from tfperf.options.ab_settings import ABSettings
from tfperf.storage import database

# What each step sets itself: a user's pytest arguments may not.
STEP_OPTIONS = ("--perf-ab-pairs", "--perf-ab-floor", "--perf-ab-confidence", "--perf-tensorflow",
                "--perf-ab-side-a", "--perf-baseline", "--perf-ab-cost-floors")


def _parser() -> argparse.ArgumentParser:
    before, after = arguments.before_or_after(
        lambda p: arguments.add_store(p, "where the report is kept"))
    parser = argparse.ArgumentParser(
        prog="tfperf-bisect", description=__doc__.split("\n\n")[0], parents=[before],
        usage="tfperf-bisect {releases,nightlies,specs,commits,after-ab,issue} ... [options] "
              "-- PYTEST_ARGS")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--finding", type=arguments.typed("--finding", followed.finding),
                        default="slower",
                        metavar="|".join(vocabulary.FOLLOWED),
                        help="what to place: slower (default), a cost that grew (compile, "
                             "first-step, memory, host-memory), numerics that differ, or a "
                             "build that fails as configured")
    common.add_argument("--floor", type=arguments.percent("--floor", 10), metavar="PERCENT",
                        help="the confirmation's floor: the least slowdown (or growth of the "
                             "followed cost) of the bad end that counts (default: the A/B "
                             f"floor, {ABSettings().floor * 100:g}%%, or the cost's, "
                             f"{ABSettings().time_cost_floor * 100:g}%% for time and "
                             f"{ABSettings().memory_cost_floor * 100:g}%% for memory)")
    common.add_argument("--step-floor", type=arguments.percent("--step-floor", 0.5), metavar="PERCENT",
                        help="every later step's floor (default: half the least slowdown the "
                             "confirmation admits, at least --floor)")
    defaults = ABSettings()
    common.add_argument("--pairs", type=arguments.pairs("--pairs", 8),
                        default=(defaults.min_pairs, defaults.max_pairs), metavar="MIN:MAX",
                        help="each step's A/B looks: from MIN pairs to MAX (default: "
                             f"{defaults.min_pairs}:{defaults.max_pairs}, the A/B default)")
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
    kinds = parser.add_subparsers(dest="kind", required=True,
                                  metavar="releases|nightlies|specs|commits|changes|after-ab|"
                                          "issue")
    releases = kinds.add_parser("releases", parents=[common, after],
                                help="a package's releases, from the package index")
    releases.add_argument("package", help="e.g. tensorflow-cpu or tensorflow[and-cuda]")
    releases.add_argument("range", help="LOW..HIGH: the good and the bad release")
    nightlies = kinds.add_parser("nightlies", parents=[common, after],
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
    specs = kinds.add_parser("specs", parents=[common, after],
                             help="TensorFlow specs in order: the good end first, the bad last")
    specs.add_argument("specs", nargs="+", metavar="SPEC")
    commits = kinds.add_parser("commits", parents=[common, after],
                               help="the commits of a workloads folder in a git repository")
    commits.add_argument("repo", type=Path, help="the repository")
    commits.add_argument("range", help="GOOD..BAD")
    commits.add_argument("--folder", default="workloads",
                         help="the workloads folder, relative to the repository's root "
                              "(default: workloads)")
    commits.add_argument("--tensorflow", default="current", metavar="SPEC",
                         help="the TensorFlow both sides run (default: current)")
    bisect_changes.add(kinds, [common, after])
    after_ab_kind = kinds.add_parser("after-ab", parents=[after],
                                     help="bisect each case a kept A/B session called slower, "
                                          "between its two TensorFlows (the nightly)")
    after_ab_kind.add_argument("ab_file", type=Path, help="the A/B session file")
    after_ab_kind.add_argument("--days", type=int, default=14,
                       help="a nightly candidate: bisect over the nightlies of this many days "
                            "before its own (default: 14)")
    after_ab_kind.add_argument("--budget", type=arguments.duration("--budget"), metavar="DURATION",
                       help="for all the bisections together")
    after_ab_kind.add_argument("--dry-run", action="store_true", help="say what would run, run nothing")
    issue = kinds.add_parser("issue", help="open or update the GitHub issue of each report's "
                                           "culprit (gh, a token with issues write)")
    issue.add_argument("reports", nargs="+", type=Path, help="bisect.json files")
    issue.add_argument("--repo", required=True, metavar="OWNER/NAME")
    return parser


def _range(args: argparse.Namespace) -> bisection.Range:
    if args.kind == "changes":  # each change point's own (tfperf.bisect.changes)
        return bisection.Range("specs")
    if args.kind == "specs":
        return bisection.Range("specs", specs=tuple(args.specs))
    if args.kind == "commits":
        return bisection.Range("commits", span=args.range, repo=args.repo, folder=args.folder,
                               tensorflow=args.tensorflow)
    return bisection.Range(args.kind, args.package, args.range, args.good, args.bad, args.beside)


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
        if args.store:  # its bisections read the store from the environment, as steps do
            os.environ[database.URL_ENV] = args.store
        return after_ab.run(args.ab_file, args.days, args.budget, args.dry_run, pytest_args, main)
    if args.kind == "issue":
        return github_issue.run(args.reports, args.repo)
    try:
        taken = [name for name in declared.given(pytest_args) if name in STEP_OPTIONS]
    except ValueError as error:
        parser.error(f"the pytest arguments after --: {error}")
    if taken:
        parser.error(f"{taken[0]} is set by each step: give tfperf-bisect's "
                     "--pairs, --floor, --finding and candidates instead")
    if args.floor is not None and args.finding == "slower" and args.floor >= 0.5:
        parser.error(f"--floor: {args.floor * 100:g}% is not a slowdown's floor; give a "
                     "percentage above 0 and below 50 (above 50 only for a cost)")
    if args.floor is not None and args.finding in ("numerics", "configuration"):
        parser.error(f"--floor: a bisection of {args.finding} has no floor (its steps' "
                     "verdicts are not a ratio); give it only with slower or a cost")
    floor = args.floor if args.floor is not None else followed.floor_of(args.finding,
                                                                        ABSettings())
    layout, _ = arguments.fill_folders(args, parser, "tests")
    arguments.store_url(args, layout.history, parser)  # $TFPERF_STORE_URL too, before any step
    request = bisection.Request(
        _range(args), tuple(pytest_args), args.tests, floor, args.step_floor, args.pairs,
        args.confirm_pairs, args.each, args.budget, args.step_timeout, args.reports, args.store,
        args.finding)
    try:
        if args.kind == "changes":
            return bisect_changes.run(args, parser, layout, request)
        return bisection.run(request, layout, lambda line: print(line, flush=True))
    except (bisection.BadRequest, StepError) as error:
        print(f"tfperf-bisect: {error}", file=sys.stderr)
        return 2
    except bisection.Stopped as stop:
        print(f"tfperf-bisect: {stop}", file=sys.stderr)
        return stop.status


if __name__ == "__main__":
    sys.exit(main())
