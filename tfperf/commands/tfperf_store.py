"""The results store: import kept files into it, say what it holds, bring its schema forward,
export it, load an export, prune what nothing reads any more.

    tfperf-store import .perf-results/history .perf-results/ab perf-history/   # once
    tfperf-store info
    tfperf-store upgrade
    tfperf-store export --format jsonl --out store-export/     # or csv: one file per table
    tfperf-store load store-export/                            # into an empty store
    tfperf-store prune --older-than 180d [--write]             # a dry run without --write
    tfperf-store series CASE [--machine KIND]                  # its builds, in build order
    tfperf-store changes CASE [--machine KIND] [--figure NAME]  # where its series moved

The store is the one named by --store, else $TFPERF_STORE_URL, else store.sqlite3 in the
project's history folder (.perf-results/history). Exit 0: done; 1: an import left something
out; 2: bad input or a store that cannot be used.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from collections.abc import Sequence
from pathlib import Path

from tfperf.changes import detect
from tfperf.changes.otava_env import OtavaUnavailable
from tfperf.commands import arguments, store_changes, store_series
from tfperf.commands import store_import as importer
from tfperf.gate.statistics import GateSettings
from tfperf.storage import database, exports, pruning
from tfperf.storage.errors import StorageError
from tfperf.storage.exports import FORMATS
from tfperf.storage.results_store import ResultsStore


def _parser() -> argparse.ArgumentParser:
    before, after = arguments.before_or_after(
        lambda p: arguments.add_store(p, "where to import to, or what to show"))
    parser = argparse.ArgumentParser(prog="tfperf-store", description=__doc__.split("\n\n")[0],
                                     parents=[before])
    verbs = parser.add_subparsers(dest="verb", required=True,
                                  metavar="import|info|upgrade|export|load|prune|series|changes")
    imports = verbs.add_parser("import", parents=[after],
                               help="add kept session files (files or folders, searched for "
                                    "*.json) to the store")
    imports.add_argument("paths", nargs="+", type=Path)
    verbs.add_parser("info", parents=[after],
                     help="the store's schema revision and what it holds")
    verbs.add_parser("upgrade", parents=[after],
                     help="bring the store's schema to this tfperf's newest")
    exporting = verbs.add_parser("export", parents=[after],
                                 help="write every table to a folder of its own")
    exporting.add_argument("--format", choices=FORMATS, default="jsonl",
                           help="JSON lines (default) or CSV, one file per table")
    exporting.add_argument("--out", type=Path, required=True,
                           help="the folder (new files only)")
    loads = verbs.add_parser("load", parents=[after], help="add an export's rows to an empty store")
    loads.add_argument("folder", type=Path)
    prunes = verbs.add_parser("prune", parents=[after],
                              help="delete rows older than a date that nothing reads any more "
                                   "(a dry run unless --write)")
    when = prunes.add_mutually_exclusive_group(required=True)
    when.add_argument("--before", type=arguments.typed("--before", _date),
                      help="rows before this date (YYYY-MM-DD) may go")
    when.add_argument("--older-than", type=arguments.days_ago("--older-than"),
                      help="rows older than this many days (e.g. 180d) may go")
    prunes.add_argument("--keep-runs", type=arguments.positive_int("--keep-runs"),
                        default=GateSettings().history_limit,
                        help="each case's newest runs kept per machine and build, whatever "
                             "their age (default: the gate's history, %(default)s)")
    prunes.add_argument("--write", action="store_true", help="delete (default: only say what)")
    series = verbs.add_parser("series", parents=[after],
                              help="a case's runs under every TensorFlow build, in build order, "
                                   "per kind of machine")
    series.add_argument("case", help="the case id, as the reports name it")
    series.add_argument("--machine", metavar="KIND",
                        help="one kind of machine: a machine key without its TensorFlow "
                             "(default: every kind)")
    changes = verbs.add_parser("changes", parents=[after],
                               help="where a case's series across builds moved (Apache Otava), "
                                    "each a question for an A/B")
    changes.add_argument("case", help="the case id, as the reports name it")
    changes.add_argument("--machine", metavar="KIND",
                         help="one kind of machine (default: every kind)")
    changes.add_argument("--figure", action="append", default=[], metavar="NAME",
                         help="a figure to look at, again for more (default: "
                              f"{', '.join(detect.BY_NAME)})")
    changes.add_argument("--max-pvalue", type=arguments.positive_float("--max-pvalue"),
                         default=detect.MAX_PVALUE,
                         help="Otava's false-alarm setting (default: %(default)s)")
    return parser


def _date(text: str) -> str:
    try:
        return datetime.date.fromisoformat(text).isoformat()
    except ValueError:
        raise ValueError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def _prune(store: ResultsStore, args: argparse.Namespace) -> int:
    chosen = pruning.plan(store.engine, args.before or args.older_than, args.keep_runs)
    said = ", ".join(f"{n} {name}" for name, n in chosen.counts().items())
    if not args.write:
        print(f"{store.where}: would delete {said} from before {chosen.before} (a dry run: "
              "add --write; tfperf-store export keeps a copy first)")
        return 0
    pruning.apply(store.engine, chosen)
    print(f"{store.where}: deleted {said} from before {chosen.before}")
    return 0


def _import(store: ResultsStore, paths: Sequence[Path]) -> int:
    found = importer.read(paths)  # all checked before anything is written
    added = 0
    for kept in found.kept:
        added += importer.write(store, kept)
    left = {str(k.path): importer.missing(store, k) for k in found.kept}
    print(f"imported {len(found.kept)} kept files into {store.where}: {added} rows added "
          f"(the rest were there already)")
    if found.other:
        print(f"passed over {len(found.other)} JSON files of other formats (e.g. "
              f"{found.other[0]})")
    lost = {path: cases for path, cases in left.items() if cases}
    for path, cases in lost.items():
        print(f"not in the store after the import: {path}: {', '.join(cases[:5])}",
              file=sys.stderr)
    return 1 if lost else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.verb == "changes":
        try:
            chosen = store_changes.figures(args.figure)
        except ValueError as error:
            parser.error(str(error))
    layout, _ = arguments.fill_folders(args, parser)
    # Only what adds to a store may make one; info, export and prune read.
    store = arguments.open_store(args, layout.history, parser,
                                 create=args.verb in ("import", "upgrade", "load"))
    try:
        if args.verb == "import":
            return _import(store, args.paths)
        if args.verb == "export":
            counts = exports.export(store.engine, args.out, args.format)
            print(f"exported {store.where} to {args.out}: " + ", ".join(
                f"{n} {name}" for name, n in counts.items()))
            return 0
        if args.verb == "load":
            form, found = exports.read(args.folder)
            counts = exports.load(store.engine, found)
            print(f"loaded {args.folder} ({form}) into {store.where}: " + ", ".join(
                f"{n} {name}" for name, n in counts.items()))
            return 0
        if args.verb == "prune":
            return _prune(store, args)
        if args.verb == "series":
            print("\n\n".join(store_series.table(s)
                               for s in store_series.chosen(store, args.case, args.machine)))
            return 0
        if args.verb == "changes":
            print("\n".join(store_changes.lines(store, args.case, args.machine, chosen,
                                                layout.results / "cache", args.max_pvalue)))
            return 0
        if args.verb == "info":
            held = ", ".join(f"{n} {name}" for name, n in store.counts().items())
            print(f"{store.where}: schema {database.head()}; {held}")
        else:
            print(f"{store.where}: schema at {database.head()}")
        return 0
    except (StorageError, OtavaUnavailable) as error:
        print(f"tfperf-store: {error}", file=sys.stderr)
        return 2
    finally:
        store.close()


if __name__ == "__main__":
    sys.exit(main())
