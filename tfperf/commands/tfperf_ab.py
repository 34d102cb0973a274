"""Judge a kept A/B session again without re-running anything.

    tfperf-ab .perf-results/ab/<session>.json [--floor PERCENT] [--reports DIR]

Every case's kept pairs are judged with the session's own stopping rule (the verdict at each
look, up to the first decided one), with the session's floor or the one given, and the reports
are written again: the table, ab.md, the plots and both sides' pytest-benchmark JSON.
Exit 0: no case slower; 1: some case slower, or failed; 2: bad input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from tfperf.ab import differences, session_file, session_report
from tfperf.ab.verdict import SLOWER
from tfperf.commands import arguments
from tfperf.ground import project
from tfperf.ground.vocabulary import AB_CASE_FAILURES
from tfperf.storage.errors import StorageError
from tfperf.storage.files import read_json


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tfperf-ab", description=__doc__.split("\n\n")[0])
    parser.add_argument("session", type=Path, help="an A/B session file written by pytest perf/")
    parser.add_argument("--floor", metavar="PERCENT", type=arguments.percent("--floor", 0.5),
                        help="the least change called slower or faster (default: the session's)")
    parser.add_argument("--reports", type=Path,
                        help="where ab.md, A.json, B.json and the plots go (default: "
                             f"RESULTS/reports/ab, the project's results folder; {project.LAYOUT})")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    layout, _ = arguments.fill_folders(args, parser)
    args.reports = args.reports or layout.reports / "ab"
    try:
        data = read_json(args.session)
        session_file.validate(data, args.session)
    except StorageError as error:
        print(f"tfperf-ab: {error}", file=sys.stderr)
        return 2
    settings = session_report.settings_of(data, args.floor)
    print(differences.describe_sides(data))
    for line in differences.lines(session_report.differences_of(data)):
        print(line)
    for line in session_report.table(data, settings) + session_report.write(data, settings, args.reports):
        print(line)
    outcomes = [session_report.outcome(case, settings) for case in data["cases"]]
    return 1 if any(o == SLOWER or o in AB_CASE_FAILURES for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
