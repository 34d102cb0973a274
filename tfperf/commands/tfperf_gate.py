"""Gate stored results without re-running anything.

    tfperf-gate .perf-results/history/results/<session>.json [--history DIR | --store URL] [--baselines DIR]

Every run of the session file is judged against its history (the active baseline entry and the
other sessions in the results store) exactly as `pytest perf/` judges it, except that a flagged figure is
confirmed with the run's own rounds, not a re-run. Exit 0: no confirmed regression; 1: some;
2: bad input.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from collections.abc import Sequence
from pathlib import Path

from tfperf.commands import arguments
from tfperf.gate import case_verdict, summary_and_trends
from tfperf.gate import rules as gate_rules
from tfperf.gate.case_verdict import Sources
from tfperf.gate.statistics import GateSettings
from tfperf.storage import database, session_files
from tfperf.storage.errors import StorageError
from tfperf.storage.files import read_json
from tfperf.storage.results_store import ResultsStore
from tfperf.storage.stored_runs import StoredRuns


def _parser() -> argparse.ArgumentParser:
    defaults = GateSettings()
    parser = argparse.ArgumentParser(prog="tfperf-gate", description=__doc__.split("\n\n")[0])
    parser.add_argument("session", type=Path, help="a session file written by pytest perf/")
    arguments.add_store(parser, "the other sessions' runs")
    arguments.add_folders(parser, history="the kept sessions and their store",
                                 baselines="the shared baselines",
                                 reports="where summary.md and the trend plots go")
    parser.add_argument("--z", type=arguments.positive_float("--z"), default=defaults.z)
    parser.add_argument("--effect-floor", type=arguments.percent("--effect-floor"),
                        default=defaults.floor, metavar="PERCENT")
    parser.add_argument("--min-history", type=arguments.positive_int("--min-history"),
                        default=defaults.min_history)
    return parser


def _settings(args: argparse.Namespace) -> GateSettings:
    return GateSettings(z=args.z, floor=args.effect_floor, min_history=args.min_history)


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    settings = _settings(args)
    arguments.fill_folders(args, parser, "history", "baselines", "reports")
    url = arguments.store_url(args, args.history, parser)
    store = None
    try:
        data = read_json(args.session)
        runs = session_files.read_session(args.session, data)
        key = data.get("machine_key")
        if not isinstance(key, str) or not key or "/" in key or key.startswith("."):
            raise StorageError(f"{args.session} has no valid machine_key")
        rules = gate_rules.load(args.baselines)
        if database.never_made(url, args.history):  # the baselines alone are the history
            print(f"tfperf-gate: results store: there is none at {database.shown(url)}: "
                  "judged against the baseline entries alone", file=sys.stderr)
        else:
            store = ResultsStore.open(url, create=False)
        sources = Sources.load(args.baselines, key, StoredRuns(store, key, str(data["session"]))
                               if store else None)
    except (StorageError, gate_rules.RulesError) as error:
        print(f"tfperf-gate: {error}", file=sys.stderr)
        if store is not None:
            store.close()
        return 2
    today = datetime.date.today()
    # Each run confirmed by its kept re-run, as in its session: judged again, the same reason.
    gates = [case_verdict.conclude(case_verdict.assess(run, sources, rules, settings), run.again(),
                                   rules, settings, today) for run in runs]
    if store is not None:
        store.close()
    text = summary_and_trends.markdown(gates, f"{args.session.name} on {key}")
    print(text)
    for line in summary_and_trends.write_reports(gates, args.reports, f"{args.session.name} on {key}"):
        print(line)
    return 1 if any(g.failed for g in gates) else 0


if __name__ == "__main__":
    sys.exit(main())
